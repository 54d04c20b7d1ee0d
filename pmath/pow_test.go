package pmath

import (
	"math"
	"math/big"
	"math/rand/v2"
	"sync"
	"testing"
)

// powRefPrec is the precision of Pow's references: x**y = e^(y·log x)
// with |y·log x| up to about 745 loses log₂ 745 ≈ 10 bits of the
// logarithm's relative precision, and more than 300 remain.
const powRefPrec = 320

func newPowBig(x float64) *big.Float { return new(big.Float).SetPrec(powRefPrec).SetFloat64(x) }

// powBigAtanh2 returns 2·atanh(s) = 2·(s + s³/3 + s⁵/5 + …) for
// |s| ≤ ⅓, summed until the terms fall below 2⁻³⁴⁰ of the sum.
func powBigAtanh2(s *big.Float) *big.Float {
	sum := new(big.Float).SetPrec(powRefPrec).Set(s)
	s2 := new(big.Float).SetPrec(powRefPrec).Mul(s, s)
	pow := new(big.Float).SetPrec(powRefPrec).Set(s)
	term := new(big.Float).SetPrec(powRefPrec)
	for n := int64(3); n < 4000; n += 2 {
		pow.Mul(pow, s2)
		term.Quo(pow, new(big.Float).SetInt64(n))
		sum.Add(sum, term)
		if term.Sign() == 0 || term.MantExp(nil)-sum.MantExp(nil) < -340 {
			break
		}
	}
	return sum.Mul(sum, newPowBig(2))
}

// powBigLn2 is log 2 = 2·atanh(⅓).
var powBigLn2 = powBigAtanh2(new(big.Float).SetPrec(powRefPrec).Quo(newPowBig(1), newPowBig(3)))

// powBigLog returns log a for finite a > 0: a = m·2^e with m in
// [√½, √2), log m = 2·atanh((m − 1)/(m + 1)).
func powBigLog(a float64) *big.Float {
	m, e := math.Frexp(a)
	if m < math.Sqrt2/2 {
		m, e = 2*m, e-1
	}
	num := new(big.Float).SetPrec(powRefPrec).Sub(newPowBig(m), newPowBig(1))
	den := new(big.Float).SetPrec(powRefPrec).Add(newPowBig(m), newPowBig(1))
	r := powBigAtanh2(num.Quo(num, den))
	return r.Add(r, new(big.Float).SetPrec(powRefPrec).Mul(powBigLn2, new(big.Float).SetInt64(int64(e))))
}

// powBigExp returns e^v for |v| below about 10⁵: k = round(v/log 2),
// r = v − k·log 2 in 320 bits, e^r by its Taylor series, times 2^k.
func powBigExp(v *big.Float) *big.Float {
	vf, _ := v.Float64()
	k := math.Round(vf / math.Ln2)
	r := new(big.Float).SetPrec(powRefPrec).Mul(powBigLn2, newPowBig(k))
	r.Sub(v, r)
	sum := newPowBig(1)
	term := newPowBig(1)
	for n := int64(1); n < 4000; n++ {
		term.Mul(term, r)
		term.Quo(term, new(big.Float).SetInt64(n))
		sum.Add(sum, term)
		if term.Sign() == 0 || term.MantExp(nil)-sum.MantExp(nil) < -340 {
			break
		}
	}
	return sum.SetMantExp(sum, int(k))
}

// powOdd reports whether y is an odd integer.
func powOdd(y float64) bool {
	return math.Abs(y) < 1<<53 && y == math.Trunc(y) && math.Mod(y, 2) != 0
}

// bigPow returns the reference x**y = ±e^(y·log|x|) for finite nonzero
// x and finite y (an integer y where x < 0), or nil for other arguments
// and where |y·log|x|| is so large that the result is far beyond the
// float64 range.
func bigPow(x, y float64) *big.Float {
	if x == 0 || math.IsInf(x, 0) || math.IsInf(y, 0) || x != x || y != y {
		return nil
	}
	v := powBigLog(math.Abs(x))
	v.Mul(v, newPowBig(y))
	if f, _ := v.Float64(); math.Abs(f) > 800 {
		return nil
	}
	r := powBigExp(v)
	if x < 0 && powOdd(y) {
		r.Neg(r)
	}
	return r
}

// bigPowInt returns x**n by repeated squaring in 320 bits: a reference
// for integer exponents independent of the logarithm and the
// exponential (n multiplications lose log₂ n bits at most).
func bigPowInt(x float64, n int64) *big.Float {
	neg := n < 0
	if neg {
		n = -n
	}
	r, s := newPowBig(1), newPowBig(x)
	for ; n != 0; n >>= 1 {
		if n&1 != 0 {
			r.Mul(r, s)
		}
		s.Mul(s, s)
	}
	if neg {
		r.Quo(newPowBig(1), r)
	}
	return r
}

// powUlpErr returns |got − ref| in units of the last place of ref's
// binade (2^(e−52) for |ref| in [2^e, 2^(e+1)), at least the smallest
// subnormal's 2⁻¹⁰⁷⁴), +Inf for a NaN got.
func powUlpErr(got float64, ref *big.Float) float64 {
	if got != got {
		return math.Inf(1)
	}
	ulp := new(big.Float).SetMantExp(newPowBig(1), max(ref.MantExp(nil)-53, -1074))
	d := new(big.Float).SetPrec(powRefPrec).Sub(newPowBig(got), ref)
	q, _ := d.Quo(d, ulp).Float64()
	return math.Abs(q)
}

// powCase is a pair of arguments with its reference.
type powCase struct {
	x, y float64
	ref  *big.Float
}

// powAccuracyCases returns the accuracy tests' pairs, by kind, with
// references that are finite as float64s (at most MaxFloat64 in
// magnitude; the thresholds beyond are TestPowOverflow's). They are
// computed once, for TestPowAccuracy and TestPowStepsMatchFunction.
var powAccuracyCases = sync.OnceValue(makePowAccuracyCases)

func makePowAccuracyCases() map[string][]powCase {
	rng := rand.New(rand.NewPCG(11, 12))
	maxF := newPowBig(math.MaxFloat64)
	cases := map[string][]powCase{}
	add := func(kind string, x, y float64, ref *big.Float) {
		if ref != nil && new(big.Float).Abs(ref).Cmp(maxF) <= 0 {
			cases[kind] = append(cases[kind], powCase{x, y, ref})
		}
	}
	addPow := func(kind string, x, y float64) { add(kind, x, y, bigPow(x, y)) }
	// randSign returns ±v.
	randSign := func(v float64) float64 {
		if rng.IntN(2) == 0 {
			return -v
		}
		return v
	}
	for range 5000 {
		addPow("x in (0, 10), y in (-50, 50)", 10*rng.Float64(), 100*rng.Float64()-50)
	}
	// x = 1 ± 2^−k·u, y = L/log x with L anywhere in the finite range:
	// y up to 10¹⁸, the tail of log₂ x decides the result's low bits.
	for range 3000 {
		x := 1 + randSign(math.Ldexp(1+rng.Float64(), -10-rng.IntN(43)))
		y := (1450*rng.Float64() - 740) / math.Log(x)
		addPow("x near 1, huge y", x, y)
	}
	for range 300 {
		x := 1 + randSign(math.Ldexp(float64(1+rng.IntN(1<<20)), -52-rng.IntN(2)))
		y := math.Ldexp(1, 52+rng.IntN(12)) // huge even integers
		addPow("x near 1, huge y", x, y)
		addPow("x near 1, huge y", -x, y)
	}
	for range 3000 {
		x := -(0.1 + 9.9*rng.Float64())
		n := int64(rng.IntN(601) - 300)
		add("x < 0, integer y", x, float64(n), bigPowInt(x, n))
	}
	for range 500 {
		x := -(1 + randSign(math.Ldexp(rng.Float64(), -20-rng.IntN(30))))
		y := math.Trunc(600 / math.Abs(math.Log(-x)) * rng.Float64())
		addPow("x < 0, integer y", x, y)
		addPow("x < 0, integer y", x, y+1)
	}
	for range 3000 {
		x := math.Exp(8 * (rng.Float64() - 0.5))
		if math.Abs(x-1) < 1e-3 {
			continue
		}
		l := math.Log2(x)
		addPow("results near overflow", x, (1020+4*rng.Float64())/l)
		addPow("results near underflow (subnormal)", x, (-1076+56*rng.Float64())/l)
	}
	for range 500 {
		// Integers near the thresholds, with a sign.
		x := -math.Exp(2 * (rng.Float64() - 0.5))
		if math.Abs(x+1) < 1e-2 {
			continue
		}
		n := math.Round(-1074 / math.Log2(-x))
		for _, y := range []float64{n - 1, n, n + 1, -n - 1, -n, -n + 1} {
			addPow("results near underflow (subnormal)", x, y)
			addPow("results near overflow", x, math.Round(y*1024/1074))
		}
	}
	for range 10000 {
		x := math.Float64frombits(rng.Uint64() >> 1) // positive, any exponent
		y := math.Float64frombits(rng.Uint64())
		if x == 0 || x > math.MaxFloat64 || y != y || math.Abs(y*math.Log2(x)) > 1100 {
			continue
		}
		addPow("random bit patterns", x, y)
		if math.Trunc(y) == y {
			addPow("random bit patterns", -x, y)
		}
	}
	for range 2000 {
		x := math.Float64frombits(rng.Uint64() >> 12) // subnormal
		if x == 0 {
			continue
		}
		addPow("x subnormal", x, 2*rng.Float64()-1)
	}
	for range 300 {
		x := math.Float64frombits(rng.Uint64() >> 12)
		n := int64(rng.IntN(3)) - 1
		if x != 0 && n != 0 {
			add("x subnormal", x, float64(n), bigPowInt(x, n))
		}
	}
	for range 2000 {
		x := math.Float64frombits(rng.Uint64() >> 1)
		y := randSign(math.Ldexp(rng.Float64(), -20-rng.IntN(1050)))
		if x == 0 || x > math.MaxFloat64 {
			continue
		}
		addPow("y tiny", x, y)
	}
	return cases
}

// TestPowAccuracy checks that Pow is faithfully rounded (error below
// one ulp) against 320-bit references (e^(y·log x), or repeated
// squaring for integer y): x in (0, 10) with y in (−50, 50), x near 1
// with huge y, negative x with odd and even integer y, results near
// the overflow threshold and subnormal results, random bit patterns,
// subnormal x and tiny y.
func TestPowAccuracy(t *testing.T) {
	worst := 0.0
	for kind, cs := range powAccuracyCases() {
		w, at := 0.0, powCase{}
		over := 0
		for _, c := range cs {
			e := powUlpErr(Pow(c.x, c.y), c.ref)
			if e > w {
				w, at = e, c
			}
			if e > 0.5 {
				over++
			}
		}
		worst = max(worst, w)
		t.Logf("%s: largest error %.4f ulp at Pow(%v, %v); %d of %d above ½ ulp", kind, w, at.x, at.y, over, len(cs))
		if w >= 1 {
			t.Errorf("%s: Pow(%v, %v) = %v: error %.3f ulp, want below 1", kind, at.x, at.y, Pow(at.x, at.y), w)
		}
	}
	t.Logf("largest error %.4f ulp", worst)
}

// TestPowReferences checks the test's two references against each
// other: e^(y·log x) and repeated squaring agree to far below an ulp
// for integer y, across the range.
func TestPowReferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for range 200 {
		x := -(0.1 + 9.9*rng.Float64())
		n := int64(rng.IntN(601) - 300)
		a, b := bigPow(x, float64(n)), bigPowInt(x, n)
		if d := new(big.Float).Sub(a, b); d.Sign() != 0 && d.MantExp(nil)-b.MantExp(nil) > -290 {
			t.Errorf("references for Pow(%v, %d) differ: %v and %v", x, n, a, b)
		}
	}
}

// TestPowOverflow checks the thresholds: a result whose reference is
// beyond MaxFloat64 by half an ulp or more is +Inf (or −Inf), one
// between MaxFloat64 and that is MaxFloat64 or Inf, and one below half
// the smallest subnormal is ±0 (faithfully, the smallest subnormal).
func TestPowOverflow(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	maxF := newPowBig(math.MaxFloat64)
	half := new(big.Float).SetMantExp(newPowBig(1), 1024) // 2^1024 − ½ulp(MaxFloat64) rounds to 2^1024
	half.Sub(half, new(big.Float).SetMantExp(newPowBig(1), 1024-54))
	tiny := new(big.Float).SetMantExp(newPowBig(1), -1075)
	n := 0
	for range 4000 {
		x := math.Exp(8 * (rng.Float64() - 0.5))
		if math.Abs(x-1) < 1e-3 {
			continue
		}
		l := math.Log2(x)
		for _, y := range []float64{(1023.9 + 0.2*rng.Float64()) / l, (-1074.9 - 0.2*rng.Float64()) / l, 1024 / l, -1075 / l} {
			ref := bigPow(x, y)
			got := Pow(x, y)
			a := new(big.Float).Abs(ref)
			switch {
			case a.Cmp(half) >= 0:
				n++
				if !math.IsInf(got, 1) {
					t.Errorf("Pow(%v, %v) = %v, want +Inf (reference %v)", x, y, got, ref)
				}
			case a.Cmp(maxF) > 0:
				n++
				if got != math.MaxFloat64 && !math.IsInf(got, 1) {
					t.Errorf("Pow(%v, %v) = %v, want MaxFloat64 or +Inf (reference %v)", x, y, got, ref)
				}
			case a.Cmp(tiny) < 0:
				n++
				if got != 0 && got != math.SmallestNonzeroFloat64 {
					t.Errorf("Pow(%v, %v) = %v, want 0 or the smallest subnormal (reference %v)", x, y, got, ref)
				}
			}
		}
	}
	for _, c := range []struct{ x, y, want float64 }{
		{2, 1024, math.Inf(1)}, {-2, 1025, math.Inf(-1)}, {2, -1075, 0}, {-2, -1075, math.Copysign(0, -1)},
		{2, -1074, math.SmallestNonzeroFloat64}, {0.5, 1074, math.SmallestNonzeroFloat64}, {0.5, 1075, 0},
		{2, 1023, 0x1p1023}, {2, -1022, 0x1p-1022}, {10, 309, math.Inf(1)}, {10, -324, 0},
		{math.MaxFloat64, 2, math.Inf(1)}, {math.MaxFloat64, -2, 0}, {math.SmallestNonzeroFloat64, -1, math.Inf(1)},
		{1 + 0x1p-52, 0x1p62, math.Inf(1)}, {1 - 0x1p-53, 0x1p63, 0}, {1 + 0x1p-52, -0x1p62, 0},
		{-(1 + 0x1p-52), 0x1p62, math.Inf(1)}, {3, 1e300, math.Inf(1)}, {3, -1e300, 0},
	} {
		if got := Pow(c.x, c.y); math.Float64bits(got) != math.Float64bits(c.want) {
			t.Errorf("Pow(%v, %v) = %v, want %v", c.x, c.y, got, c.want)
		}
	}
	t.Logf("%d arguments beyond the range", n)
}

// powSpecials are the arguments whose pairs the straight-line form and
// the special-value tests run through: zeros, infinities, NaNs with
// payloads, ±1 and its neighbours, integers odd and even (also where
// |y| ≥ 2⁵³ makes every float64 even), halves, the thresholds of the
// clamps, subnormals and the extremes.
func powSpecials() []float64 {
	negZero := math.Copysign(0, -1)
	vs := []float64{0, negZero, math.Inf(1), math.Inf(-1), math.NaN(),
		math.Float64frombits(0xFFF8000000000123), math.Float64frombits(0x7FF0000000000001),
		math.Float64frombits(0x7FF4000000000000), 1, 2, 3, 0.5, 1.5, 2.5, 0.25, 10, 1e300, 1e-300,
		1 + 0x1p-52, 1 - 0x1p-53, 1 + 0x1p-20, 1 - 0x1p-20, 0x1p52, 0x1p52 + 1, 0x1p53, 0x1p53 + 2,
		0x1p53 - 1, 0x1p63, 0x1p64, 0x1p64 + 0x1p12, 0x1p64 - 0x1p11, 0x1p65, 1024, 1023.5, 1074, 1075,
		1100, 1101, 1e5, math.SmallestNonzeroFloat64, 3 * math.SmallestNonzeroFloat64, minNormal,
		math.MaxFloat64, math.Sqrt2, math.Sqrt(1.5), math.Sqrt(3), powT1, powT2, 0.1, 7, 1.0 / 3}
	for _, v := range vs[:len(vs):len(vs)] {
		if v == v && v != 0 && !math.IsInf(v, 0) {
			vs = append(vs, -v)
		}
	}
	return vs
}

// powStepPairs returns the pairs the straight-line form is checked on:
// every pair of special arguments, the accuracy tests' pairs, the
// arguments of the one-argument forms with random exponents, and random
// bit patterns for both.
func powStepPairs() [][2]float64 {
	rng := rand.New(rand.NewPCG(17, 18))
	sp := powSpecials()
	var ps [][2]float64
	for _, x := range sp {
		for _, y := range sp {
			ps = append(ps, [2]float64{x, y})
		}
	}
	for _, cs := range powAccuracyCases() {
		for _, c := range cs {
			ps = append(ps, [2]float64{c.x, c.y})
		}
	}
	for _, x := range stepArgs() {
		ps = append(ps, [2]float64{x, sp[rng.IntN(len(sp))]}, [2]float64{sp[rng.IntN(len(sp))], x},
			[2]float64{x, 100 * (rng.Float64() - 0.5)}, [2]float64{x, math.Round(100 * (rng.Float64() - 0.5))})
	}
	for range 50000 {
		ps = append(ps, [2]float64{math.Float64frombits(rng.Uint64()), math.Float64frombits(rng.Uint64())},
			[2]float64{math.Float64frombits(rng.Uint64()), math.Ldexp(rng.Float64()-0.5, 12-rng.IntN(40))})
	}
	return ps
}

// TestPowStepsMatchFunction checks that PowSteps gives Pow's bits, NaNs
// and signed zeros included, on every pair of powStepPairs.
func TestPowStepsMatchFunction(t *testing.T) {
	p := PowSteps()
	bad := 0
	ps := powStepPairs()
	for _, a := range ps {
		got, want := p.Run2(a[0], a[1]), Pow(a[0], a[1])
		if math.Float64bits(got) != math.Float64bits(want) {
			if bad++; bad <= 10 {
				t.Errorf("Pow steps at (%v, %v) (%#x, %#x): %v (%#x), the function gives %v (%#x)", a[0], a[1],
					math.Float64bits(a[0]), math.Float64bits(a[1]), got, math.Float64bits(got), want, math.Float64bits(want))
			}
		}
	}
	if bad > 10 {
		t.Errorf("Pow: %d mismatches in all", bad)
	}
	t.Logf("%d pairs", len(ps))
}

// TestPowStepsWellFormed checks PowSteps against the contract code
// generators rely on (checkWellFormed), and that it fits in the 12
// vector registers AVX2 code has for it.
func TestPowStepsWellFormed(t *testing.T) {
	p := PowSteps()
	checkWellFormed(t, "Pow", p)
	if p.Args != 2 {
		t.Errorf("Pow: %d arguments, want 2", p.Args)
	}
	if p.Regs > 12 {
		t.Errorf("Pow: %d registers, want at most 12", p.Regs)
	}
	t.Logf("Pow: %d steps, %d registers, %d constants", len(p.Steps), p.Regs, len(p.Consts))
}

// TestPowSpecialValues checks the special cases math.Pow documents, bit
// for bit: the signs of zeros and infinities, x itself for y = 1 (a
// NaN's payload included), and the one fixed NaN otherwise.
func TestPowSpecialValues(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	negZero := math.Copysign(0, -1)
	payload := math.Float64frombits(0x7FF8000000000123)
	fixedNaN := math.Float64frombits(nanBits)
	for _, c := range []struct{ x, y, want float64 }{
		{0, 0, 1}, {nan, 0, 1}, {nan, negZero, 1}, {inf, 0, 1}, {-inf, negZero, 1}, {-3, 0, 1},
		{1, nan, 1}, {1, inf, 1}, {1, -inf, 1}, {1, 1e300, 1}, {1, -0.5, 1},
		{payload, 1, payload}, {negZero, 1, negZero}, {-inf, 1, -inf}, {-3.7, 1, -3.7}, {5e-324, 1, 5e-324},
		{nan, 2, fixedNaN}, {payload, -1, fixedNaN}, {2, nan, fixedNaN}, {negZero, payload, fixedNaN}, {-1, nan, fixedNaN},
		{0, -3, inf}, {negZero, -3, -inf}, {negZero, -1, -inf}, {0, -1, inf},
		{0, -inf, inf}, {negZero, -inf, inf}, {0, inf, 0}, {negZero, inf, 0},
		{0, -2, inf}, {negZero, -2, inf}, {negZero, -0.5, inf}, {negZero, -1e300, inf}, {negZero, -0x1p53, inf}, {negZero, -5e-324, inf},
		{0, 3, 0}, {negZero, 3, negZero}, {negZero, 0x1p53 - 1, negZero}, {negZero, 2, 0}, {negZero, 0.5, 0}, {negZero, 1e300, 0}, {negZero, 5e-324, 0},
		{-1, inf, 1}, {-1, -inf, 1},
		{2, inf, inf}, {-2, inf, inf}, {1 + 0x1p-52, inf, inf}, {-math.MaxFloat64, inf, inf}, {2, -inf, 0}, {-2, -inf, 0},
		{0.5, inf, 0}, {-0.5, inf, 0}, {1 - 0x1p-53, inf, 0}, {5e-324, inf, 0}, {0.5, -inf, inf}, {-0.5, -inf, inf}, {-5e-324, -inf, inf},
		{inf, 0.5, inf}, {inf, 5e-324, inf}, {inf, 3, inf}, {inf, inf, inf}, {inf, -5e-324, 0}, {inf, -2, 0}, {inf, -inf, 0},
		{-inf, 3, -inf}, {-inf, 2, inf}, {-inf, 0.5, inf}, {-inf, inf, inf}, {-inf, 5e-324, inf},
		{-inf, -3, negZero}, {-inf, -1, negZero}, {-inf, -2, 0}, {-inf, -0.5, 0}, {-inf, -inf, 0},
		{-2, 0.5, fixedNaN}, {-2, -1.5, fixedNaN}, {-math.MaxFloat64, 0.5, fixedNaN}, {-5e-324, 1.5, fixedNaN},
		{-2, 5e-324, fixedNaN}, {-1, 0.5, fixedNaN}, {-1, 0x1p51 + 0.5, fixedNaN},
		{-2, 3, -8}, {-2, -3, -0.125}, {-2, 2, 4}, {-1, 3, -1}, {-1, -3, -1}, {-1, 0x1p53, 1}, {-1, 1e300, 1}, {-1, 0x1p53 - 1, -1},
		{4, 0.5, 2}, {2, 10, 1024}, {2, -1074, 5e-324},
	} {
		for _, f := range []struct {
			name string
			pow  func(x, y float64) float64
		}{{"Pow", Pow}, {"PowSteps", PowSteps().Run2}} {
			if got := f.pow(c.x, c.y); math.Float64bits(got) != math.Float64bits(c.want) {
				t.Errorf("%s(%v, %v) = %v (%#x), want %v (%#x)", f.name, c.x, c.y,
					got, math.Float64bits(got), c.want, math.Float64bits(c.want))
			}
		}
	}
}

// TestPowMatchesMathPowSpecial checks Pow against math.Pow bit for bit
// on every pair of special arguments where math.Pow's result is one of
// its special cases (x ±0, ±Inf, NaN or ±1; y ±0, ±Inf, NaN or 1; x < 0
// with a non-integer y): there both are exact. The one difference
// allowed is the NaN of x < 0 with y = ±0.5, which math.Pow takes from
// math.Sqrt (the hardware's NaN).
func TestPowMatchesMathPowSpecial(t *testing.T) {
	specialX := func(v float64) bool { return v == 0 || math.IsInf(v, 0) || v != v || math.Abs(v) == 1 }
	specialY := func(v float64) bool { return v == 0 || math.IsInf(v, 0) || v != v || v == 1 }
	sp := powSpecials()
	n := 0
	for _, x := range sp {
		for _, y := range sp {
			if !specialX(x) && !specialY(y) && !(x < 0 && y != math.Trunc(y)) {
				continue
			}
			n++
			got, want := Pow(x, y), math.Pow(x, y)
			if math.Abs(y) == 0.5 && got != got && want != want {
				continue
			}
			if math.Float64bits(got) != math.Float64bits(want) {
				t.Errorf("Pow(%v, %v) = %v (%#x), math.Pow gives %v (%#x)", x, y, got, math.Float64bits(got), want, math.Float64bits(want))
			}
		}
	}
	t.Logf("%d pairs", n)
}

// TestPowExactIntegers checks that integer powers of small integers
// come out exact wherever the power is a float64 integer below 2⁵³
// (fdlibm's e_pow.c claims this of its algorithm), and that their
// reciprocal powers are faithful.
func TestPowExactIntegers(t *testing.T) {
	inexact, n := 0, 0
	for x := 2; x <= 30; x++ {
		p := 1.0
		for k := 1; ; k++ {
			p *= float64(x)
			if p >= 1<<53 {
				break
			}
			n++
			if got := Pow(float64(x), float64(k)); got != p {
				if inexact++; inexact <= 5 {
					t.Errorf("Pow(%d, %d) = %v, want %v", x, k, got, p)
				}
			}
			if got := Pow(-float64(x), float64(k)); got != p*float64(1-2*(k&1)) {
				t.Errorf("Pow(%d, %d) = %v, want %v", -x, k, got, p*float64(1-2*(k&1)))
			}
			ref := bigPowInt(float64(x), int64(-k))
			if e := powUlpErr(Pow(float64(x), float64(-k)), ref); e >= 1 {
				t.Errorf("Pow(%d, %d): error %.3f ulp", x, -k, e)
			}
		}
	}
	t.Logf("%d integer powers, %d inexact", n, inexact)
}

func BenchmarkPow(b *testing.B) {
	x, s := 1.5, 0.0
	for b.Loop() {
		s += Pow(x, 2.7)
		x += 1e-9
	}
	sink = s
}

func BenchmarkMathPow(b *testing.B) {
	x, s := 1.5, 0.0
	for b.Loop() {
		s += math.Pow(x, 2.7)
		x += 1e-9
	}
	sink = s
}

// BenchmarkPowVaried and BenchmarkMathPowVaried vary both arguments
// over ordinary ranges, exponents with large integer parts included
// (which math.Pow computes by repeated squaring).
func BenchmarkPowVaried(b *testing.B) {
	x, y, s := 0.5, -40.3, 0.0
	for b.Loop() {
		s += Pow(x, y)
		if x += 1e-3; x > 5 {
			x = 0.5
		}
		if y += 0.0137; y > 40 {
			y = -40.3
		}
	}
	sink = s
}

func BenchmarkMathPowVaried(b *testing.B) {
	x, y, s := 0.5, -40.3, 0.0
	for b.Loop() {
		s += math.Pow(x, y)
		if x += 1e-3; x > 5 {
			x = 0.5
		}
		if y += 0.0137; y > 40 {
			y = -40.3
		}
	}
	sink = s
}
