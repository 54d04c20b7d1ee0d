package pmath

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// bigAtan returns atan x in 256 bits: the argument halved,
// atan t = 2·atan(t/(1 + √(1 + t²))), until |t| ≤ 2⁻⁶, then the
// Taylor series t − t³/3 + t⁵/5 − …, summed until the terms fall below
// 2⁻³⁰⁰ of the sum.
func bigAtan(x *big.Float) *big.Float {
	t := new(big.Float).SetPrec(refPrec).Abs(x)
	one := newBig(1)
	small := newBig(0x1p-6)
	halvings := 0
	for t.Cmp(small) > 0 {
		s := new(big.Float).SetPrec(refPrec).Mul(t, t)
		s.Add(s, one)
		s.Sqrt(s)
		s.Add(s, one)
		t.Quo(t, s)
		halvings++
	}
	sum := new(big.Float).SetPrec(refPrec).Set(t)
	t2 := new(big.Float).SetPrec(refPrec).Mul(t, t)
	t2.Neg(t2)
	pow := new(big.Float).SetPrec(refPrec).Set(t)
	for n := int64(3); n < 2000 && t.Sign() != 0; n += 2 {
		pow.Mul(pow, t2)
		term := new(big.Float).SetPrec(refPrec).Quo(pow, new(big.Float).SetInt64(n))
		sum.Add(sum, term)
		if term.Sign() == 0 || term.MantExp(nil)-sum.MantExp(nil) < -300 {
			break
		}
	}
	sum.SetMantExp(sum, halvings)
	if x.Sign() < 0 {
		sum.Neg(sum)
	}
	return sum
}

// bigPiAtan is π in 256 bits, 4·atan 1.
var bigPiAtan = new(big.Float).SetPrec(refPrec).Mul(bigAtan(newBig(1)), newBig(4))

// bigAtan2 returns the angle of (x, y) for finite x and y, not both
// zero: atan|y/x| (π/2 for x = 0), taken from π where x < 0 (x = −0
// included), with y's sign.
func bigAtan2(y, x float64) *big.Float {
	var z *big.Float
	if x == 0 {
		z = new(big.Float).SetPrec(refPrec).Quo(bigPiAtan, newBig(2))
	} else {
		q := new(big.Float).SetPrec(refPrec).Quo(newBig(math.Abs(y)), newBig(math.Abs(x)))
		z = bigAtan(q)
	}
	if math.Signbit(x) {
		z.Sub(bigPiAtan, z)
	}
	if math.Signbit(y) {
		z.Neg(z)
	}
	return z
}

// bigTanh returns tanh x in 256 bits for finite x with |x| ≤ 700: the
// Taylor series x − x³/3 + 2x⁵/15 − 17x⁷/315 + 62x⁹/2835 for |x| < 2⁻²⁰
// (the next term is below 2⁻²⁰⁰ of the sum), else (1 − u)/(1 + u) with
// u = e^(−2|x|) from bigExp (the cancellation in 1 − u costs at most 21
// of the 256 bits).
func bigTanh(x float64) *big.Float {
	if math.Abs(x) < 0x1p-20 {
		bx := newBig(x)
		x2 := new(big.Float).SetPrec(refPrec).Mul(bx, bx)
		sum := newBig(0)
		for _, c := range [][2]int64{{62, 2835}, {-17, 315}, {2, 15}, {-1, 3}, {1, 1}} {
			sum.Mul(sum, x2)
			term := new(big.Float).SetPrec(refPrec).Quo(new(big.Float).SetInt64(c[0]), new(big.Float).SetInt64(c[1]))
			sum.Add(sum, term)
		}
		return sum.Mul(sum, bx)
	}
	u := bigExp(-2 * math.Abs(x))
	num := new(big.Float).SetPrec(refPrec).Sub(newBig(1), u)
	den := new(big.Float).SetPrec(refPrec).Add(newBig(1), u)
	z := num.Quo(num, den)
	if x < 0 {
		z.Neg(z)
	}
	return z
}

// neighbours appends c and its n neighbours on each side.
func neighbours(xs []float64, c float64, n int) []float64 {
	xs = append(xs, c)
	lo, hi := c, c
	for range n {
		lo, hi = math.Nextafter(lo, math.Inf(-1)), math.Nextafter(hi, math.Inf(1))
		xs = append(xs, lo, hi)
	}
	return xs
}

// randomFinite returns a float64 of random bits, any exponent and
// sign, NaNs and infinities excluded.
func randomFinite(rng *rand.Rand) float64 {
	for {
		x := math.Float64frombits(rng.Uint64())
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			return x
		}
	}
}

// atanArgs are the arguments Atan is checked on: random over the
// ordinary range and over every binade, tiny values and subnormals, the
// bounds of the reduction intervals (7/16, 11/16, 19/16, 39/16) and
// their neighbours, and the region beyond 2⁶⁶ where fdlibm stops
// computing.
func atanArgs() []float64 {
	rng := rand.New(rand.NewPCG(11, 12))
	var xs []float64
	for range 20000 {
		xs = append(xs, (rng.Float64()-0.5)*8)
		xs = append(xs, randomFinite(rng))
	}
	for range 3000 {
		xs = append(xs, (rng.Float64()-0.5)*math.Ldexp(1, 2-rng.IntN(60)))
		xs = append(xs, math.Float64frombits(rng.Uint64N(1<<52))) // subnormal
	}
	for _, c := range []float64{atanB0, atanB1, atanB2, atanB3, -atanB0, -atanB1, -atanB2, -atanB3,
		0.5, 1, 1.5, 0x1p66, 0x1p-27, 0x1p-28, minNormal} {
		xs = neighbours(xs, c, 30)
	}
	xs = append(xs, math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 1e300, 1e-300, 3, 10, 100)
	return xs
}

// atan2Args are the argument pairs (y, x) Atan2 is checked on: random
// points in all four quadrants, random bit patterns (every exponent of
// both), points on the axes and near them, quotients |y/x| huge and tiny
// (2^±k for k to 1100, around fdlibm's bound 2⁶⁰), both arguments
// subnormal, both huge, and x = ±1 (fdlibm's shortcut); all finite.
func atan2Args() [][2]float64 {
	rng := rand.New(rand.NewPCG(13, 14))
	var ps [][2]float64
	for range 12000 {
		ps = append(ps, [2]float64{(rng.Float64() - 0.5) * 20, (rng.Float64() - 0.5) * 20})
		ps = append(ps, [2]float64{randomFinite(rng), randomFinite(rng)})
	}
	sgn := func() float64 { return float64(1 - 2*rng.IntN(2)) }
	for range 3000 {
		x := sgn() * (0.5 + rng.Float64())
		k := rng.IntN(2200) - 1100
		y := sgn() * math.Ldexp(0.5+rng.Float64(), k)
		ps = append(ps, [2]float64{y, x}, [2]float64{x, y})
		k = rng.IntN(40) + 40 // around 2⁶⁰
		y = sgn() * math.Ldexp(1+rng.Float64(), k)
		ps = append(ps, [2]float64{y, x}, [2]float64{x, y})
		sub := func() float64 { return sgn() * math.Float64frombits(rng.Uint64N(1<<52)) }
		ps = append(ps, [2]float64{sub(), sub()})
		huge := func() float64 { return sgn() * math.Ldexp(1+rng.Float64(), 1000+rng.IntN(24)) }
		ps = append(ps, [2]float64{huge(), huge()}, [2]float64{huge(), sub()}, [2]float64{sub(), huge()})
		ps = append(ps, [2]float64{(rng.Float64() - 0.5) * 8, sgn()})
	}
	for _, v := range []float64{1, -1, 0x1p-1074, -0x1p-1074, math.MaxFloat64, -math.MaxFloat64, 0.3, -7} {
		ps = append(ps, [2]float64{v, 0}, [2]float64{v, math.Copysign(0, -1)},
			[2]float64{0, v}, [2]float64{math.Copysign(0, -1), v}, [2]float64{v, v}, [2]float64{v, -v})
	}
	finite := ps[:0]
	for _, p := range ps { // scaled ones may have overflowed
		if !math.IsInf(p[0], 0) && !math.IsInf(p[1], 0) {
			finite = append(finite, p)
		}
	}
	return finite
}

// tanhArgs are the arguments Tanh is checked on: random over the range
// where the result is not ±1 and over every binade, tiny values and
// subnormals, random near 0.4 (the bound of its two paths, where the
// errors of both are largest) and the neighbours of 0.4, of 0.55 (where
// tanh passes ½), of 1 and 22 (fdlibm's bounds), and of the point
// where the result starts to round to 1.
func tanhArgs() []float64 {
	rng := rand.New(rand.NewPCG(15, 16))
	var xs []float64
	for range 20000 {
		xs = append(xs, (rng.Float64()-0.5)*50)
		xs = append(xs, (rng.Float64()-0.5)*3)
		if x := randomFinite(rng); math.Abs(x) <= 700 {
			xs = append(xs, x)
		}
	}
	for range 5000 {
		xs = append(xs, (rng.Float64()-0.5)*math.Ldexp(1, 1-rng.IntN(70)))
		xs = append(xs, math.Float64frombits(rng.Uint64N(1<<52)))
		xs = append(xs, 0.3+rng.Float64()*0.2, -(0.3 + rng.Float64()*0.2))
	}
	for _, c := range []float64{tanhSplit, -tanhSplit, 0.55, -0.55, 0.625, 1, -1, 0.5, 2, tanhClamp, -tanhClamp,
		19.06, 18.7, 0x1p-28, 0x1p-20, minNormal} {
		xs = neighbours(xs, c, 30)
	}
	xs = append(xs, 700, -700, 100, 0x1p-1074, 1e-300)
	return xs
}

// TestAtanAccuracy checks that Atan is faithfully rounded: its error
// against the 256-bit reference is below one ulp on atanArgs.
func TestAtanAccuracy(t *testing.T) {
	worst, at := 0.0, 0.0
	xs := atanArgs()
	for _, x := range xs {
		if e := ulpErr(Atan(x), bigAtan(newBig(x))); e > worst {
			worst, at = e, x
		}
	}
	t.Logf("largest error %.3f ulp at x = %v (%d arguments)", worst, at, len(xs))
	if worst >= 1 {
		t.Errorf("Atan(%v): error %.3f ulp, want below 1", at, worst)
	}
}

// TestAtan2Accuracy checks that Atan2 is faithfully rounded: its error
// against the 256-bit reference is below one ulp on atan2Args (the
// pairs with both arguments zero, whose results are special values,
// left to TestTanhAtanSpecialValues).
func TestAtan2Accuracy(t *testing.T) {
	worst, at := 0.0, [2]float64{}
	ps := atan2Args()
	for _, p := range ps {
		if p[0] == 0 && p[1] == 0 {
			continue
		}
		if e := ulpErr(Atan2(p[0], p[1]), bigAtan2(p[0], p[1])); e > worst {
			worst, at = e, p
		}
	}
	t.Logf("largest error %.3f ulp at (y, x) = %v (%d pairs)", worst, at, len(ps))
	if worst >= 1 {
		t.Errorf("Atan2%v: error %.3f ulp, want below 1", at, worst)
	}
}

// TestTanhAccuracy checks that Tanh is faithfully rounded: its error
// against the 256-bit reference is below one ulp on tanhArgs, and
// beyond 700 (where the reference is not computed) the result is ±1.
func TestTanhAccuracy(t *testing.T) {
	worst, at := 0.0, 0.0
	xs := tanhArgs()
	for _, x := range xs {
		if e := ulpErr(Tanh(x), bigTanh(x)); e > worst {
			worst, at = e, x
		}
	}
	t.Logf("largest error %.3f ulp at x = %v (%d arguments)", worst, at, len(xs))
	if worst >= 1 {
		t.Errorf("Tanh(%v): error %.3f ulp, want below 1", at, worst)
	}
	for _, x := range []float64{701, 1e10, 1e300, math.MaxFloat64} {
		if Tanh(x) != 1 || Tanh(-x) != -1 {
			t.Errorf("Tanh(±%v) = %v, %v, want ±1", x, Tanh(x), Tanh(-x))
		}
	}
}

// TestTanhAtanStepsMatchFunctions checks that the straight-line forms
// give the functions' bits, NaN payloads included: Tanh and Atan on
// stepArgs (random bit patterns, NaNs, infinities, …) and on their own
// accuracy arguments, Atan2 on the accuracy pairs, on random bit
// patterns (NaNs and infinities included), and on every pair of a set
// of special values.
func TestTanhAtanStepsMatchFunctions(t *testing.T) {
	one := append(stepArgs(), 0x1p66, -0x1p66, math.Float64frombits(0x7FF4000000000abc))
	for _, c := range []struct {
		name string
		p    *Program
		f    func(float64) float64
		xs   []float64
	}{
		{"Tanh", TanhSteps(), Tanh, append(tanhArgs(), one...)},
		{"Atan", AtanSteps(), Atan, append(atanArgs(), one...)},
	} {
		bad := 0
		for _, x := range c.xs {
			got, want := c.p.Run(x), c.f(x)
			if math.Float64bits(got) != math.Float64bits(want) {
				if bad++; bad <= 5 {
					t.Errorf("%s steps at %v (%#x): %v (%#x), the function gives %v (%#x)",
						c.name, x, math.Float64bits(x), got, math.Float64bits(got), want, math.Float64bits(want))
				}
			}
		}
		if bad > 5 {
			t.Errorf("%s: %d mismatches in all", c.name, bad)
		}
	}
	ps := atan2Args()
	rng := rand.New(rand.NewPCG(17, 18))
	for range 20000 {
		ps = append(ps, [2]float64{math.Float64frombits(rng.Uint64()), math.Float64frombits(rng.Uint64())})
	}
	sp := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), math.Float64frombits(0xFFF8000000000123),
		1, -1, 2, -0.5, math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, minNormal, math.MaxFloat64, -math.MaxFloat64,
		0x1p60, 0x1p-60, 0x1p61, 1e-300, 1e300}
	for _, y := range sp {
		for _, x := range sp {
			ps = append(ps, [2]float64{y, x})
		}
	}
	p := Atan2Steps()
	bad := 0
	for _, yx := range ps {
		y, x := yx[0], yx[1]
		got, want := p.Run2(y, x), Atan2(y, x)
		if math.Float64bits(got) != math.Float64bits(want) {
			if bad++; bad <= 5 {
				t.Errorf("Atan2 steps at (%v, %v) (%#x, %#x): %v (%#x), the function gives %v (%#x)",
					y, x, math.Float64bits(y), math.Float64bits(x), got, math.Float64bits(got), want, math.Float64bits(want))
			}
		}
	}
	if bad > 5 {
		t.Errorf("Atan2: %d mismatches in all", bad)
	}
}

// TestTanhAtanStepsWellFormed checks the contract of the straight-line
// forms (see TestStepsWellFormed) for Tanh, Atan and Atan2, and that
// Atan2's takes two arguments.
func TestTanhAtanStepsWellFormed(t *testing.T) {
	checkWellFormed(t, "Tanh", TanhSteps())
	checkWellFormed(t, "Atan", AtanSteps())
	checkWellFormed(t, "Atan2", Atan2Steps())
	for name, p := range map[string]*Program{"Tanh": TanhSteps(), "Atan": AtanSteps(), "Atan2": Atan2Steps()} {
		t.Logf("%s: %d steps, %d registers, %d constants", name, len(p.Steps), p.Regs, len(p.Consts))
	}
	if TanhSteps().Args != 1 || AtanSteps().Args != 1 || Atan2Steps().Args != 2 {
		t.Errorf("arguments: Tanh %d, Atan %d, Atan2 %d, want 1, 1, 2", TanhSteps().Args, AtanSteps().Args, Atan2Steps().Args)
	}
}

// TestTanhAtanSpecialValues checks the special values math.Tanh,
// math.Atan and math.Atan2 document, and a few more (results that round
// to ±1, ±π/2, ±π/4, and tiny arguments), bit for bit (the signs of
// zeros included), for the functions and their straight-line forms; and
// that math's functions agree with the table on the documented ones
// (an argument ±0 or ±Inf, no NaN). NaN results must have the bits
// documented here: the argument itself for Tanh and Atan, the fixed NaN
// nanBits for Atan2.
func TestTanhAtanSpecialValues(t *testing.T) {
	nan := math.Float64frombits(0x7FF8000000000abc) // a NaN with a payload
	negNaN := math.Float64frombits(0xFFF0000000000001)
	fixed := math.Float64frombits(nanBits)
	inf, z, nz := math.Inf(1), 0.0, math.Copysign(0, -1)
	pi := math.Pi
	documented := func(v float64) bool { return v == 0 || math.IsInf(v, 0) }
	for _, c := range []struct {
		name string
		x    float64
		want float64
	}{
		{"Tanh", z, z}, {"Tanh", nz, nz}, {"Tanh", inf, 1}, {"Tanh", -inf, -1},
		{"Tanh", nan, nan}, {"Tanh", negNaN, negNaN}, {"Tanh", 22, 1}, {"Tanh", -22, -1}, {"Tanh", 19.1, 1},
		{"Tanh", math.MaxFloat64, 1}, {"Tanh", 0x1p-1074, 0x1p-1074}, {"Tanh", -1e-300, -1e-300},
		{"Atan", z, z}, {"Atan", nz, nz}, {"Atan", inf, pi / 2}, {"Atan", -inf, -pi / 2},
		{"Atan", nan, nan}, {"Atan", negNaN, negNaN}, {"Atan", 1, pi / 4}, {"Atan", -1, -pi / 4},
		{"Atan", 0x1p66, pi / 2}, {"Atan", -math.MaxFloat64, -pi / 2}, {"Atan", -0x1p-1074, -0x1p-1074},
		{"Atan", 1e-300, 1e-300},
	} {
		var got, steps, ref float64
		if c.name == "Tanh" {
			got, steps, ref = Tanh(c.x), TanhSteps().Run(c.x), math.Tanh(c.x)
		} else {
			got, steps, ref = Atan(c.x), AtanSteps().Run(c.x), math.Atan(c.x)
		}
		w := math.Float64bits(c.want)
		if math.Float64bits(got) != w || math.Float64bits(steps) != w {
			t.Errorf("%s(%v): %v (%#x), steps %v (%#x), want %v (%#x)", c.name, c.x, got, math.Float64bits(got),
				steps, math.Float64bits(steps), c.want, w)
		}
		if documented(c.x) && math.Float64bits(ref) != w {
			t.Errorf("math.%s(%v) = %v, the table says %v", c.name, c.x, ref, c.want)
		}
	}
	for _, c := range []struct{ y, x, want float64 }{
		{nan, 1, fixed}, {1, nan, fixed}, {nan, nan, fixed}, {negNaN, inf, fixed}, {z, negNaN, fixed},
		{z, 1, z}, {nz, 1, nz}, {z, z, z}, {nz, z, nz}, {z, inf, z}, {nz, inf, nz},
		{z, nz, pi}, {nz, nz, -pi}, {z, -1, pi}, {nz, -1, -pi}, {z, -inf, pi}, {nz, -inf, -pi},
		{1, z, pi / 2}, {1, nz, pi / 2}, {-1, z, -pi / 2}, {-1, nz, -pi / 2},
		{0x1p-1074, nz, pi / 2}, {-0x1p-1074, z, -pi / 2},
		{inf, inf, pi / 4}, {-inf, inf, -pi / 4}, {inf, -inf, 3 * pi / 4}, {-inf, -inf, -3 * pi / 4},
		{1, inf, z}, {-1, inf, nz}, {math.MaxFloat64, inf, z}, {1, -inf, pi}, {-1, -inf, -pi},
		{-math.MaxFloat64, -inf, -pi},
		{inf, 1, pi / 2}, {-inf, 1, -pi / 2}, {inf, -1, pi / 2}, {-inf, -math.MaxFloat64, -pi / 2},
		{inf, z, pi / 2}, {-inf, nz, -pi / 2},
		{1, 1, pi / 4}, {-1, -1, -3 * pi / 4}, {1, -1, 3 * pi / 4},
	} {
		got, steps, ref := Atan2(c.y, c.x), Atan2Steps().Run2(c.y, c.x), math.Atan2(c.y, c.x)
		w := math.Float64bits(c.want)
		if math.Float64bits(got) != w || math.Float64bits(steps) != w {
			t.Errorf("Atan2(%v, %v): %v (%#x), steps %v (%#x), want %v (%#x)", c.y, c.x, got, math.Float64bits(got),
				steps, math.Float64bits(steps), c.want, w)
		}
		if !math.IsNaN(c.want) && (documented(c.y) || documented(c.x)) && math.Float64bits(ref) != w {
			t.Errorf("math.Atan2(%v, %v) = %v, the table says %v", c.y, c.x, ref, c.want)
		}
	}
}

// TestTanhAtanOdd checks the symmetries bit for bit: Tanh and Atan are
// odd, and Atan2(−y, x) = −Atan2(y, x), on random arguments of every
// magnitude.
func TestTanhAtanOdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	for range 20000 {
		x := randomFinite(rng)
		s := (rng.Float64() - 0.5) * 10
		for _, v := range []float64{x, s} {
			if math.Float64bits(Tanh(-v)) != math.Float64bits(-Tanh(v)) {
				t.Fatalf("Tanh(−%v) = %v, −Tanh(%v) = %v", v, Tanh(-v), v, -Tanh(v))
			}
			if math.Float64bits(Atan(-v)) != math.Float64bits(-Atan(v)) {
				t.Fatalf("Atan(−%v) = %v, −Atan(%v) = %v", v, Atan(-v), v, -Atan(v))
			}
			if math.Float64bits(Atan2(-v, s)) != math.Float64bits(-Atan2(v, s)) {
				t.Fatalf("Atan2(−%v, %v) = %v, −Atan2 = %v", v, s, Atan2(-v, s), -Atan2(v, s))
			}
		}
	}
}

// TestTanhAtanMonotone checks monotonicity across the bounds where
// the methods change, which a faithfully rounded function need not have
// but these do where tested: over 4000 neighbouring arguments around
// Tanh's 0.4 and 22 and atan's 7/16, 11/16, 19/16 and 39/16 (as |x| for
// Atan, as |y/x| for Atan2 with y or x varying, x > 0 and x < 0).
func TestTanhAtanMonotone(t *testing.T) {
	check := func(name string, f func(float64) float64, c float64) {
		t.Helper()
		x := c
		for range 2000 {
			x = math.Nextafter(x, 0)
		}
		prev := f(x)
		for range 4000 {
			x = math.Nextafter(x, math.Inf(1))
			v := f(x)
			if v < prev {
				t.Errorf("%s decreases at %v: %v after %v", name, x, v, prev)
				return
			}
			prev = v
		}
	}
	check("Tanh", Tanh, tanhSplit)
	check("Tanh", Tanh, tanhClamp)
	for _, c := range []float64{atanB0, atanB1, atanB2, atanB3} {
		check("Atan", Atan, c)
		check("Atan2(y, 1.7)", func(y float64) float64 { return Atan2(y, 1.7) }, c*1.7)
		check("−Atan2(y, −1.7)", func(y float64) float64 { return -Atan2(y, -1.7) }, c*1.7)
		check("−Atan2(1.3, x)", func(x float64) float64 { return -Atan2(1.3, x) }, 1.3/c)
	}
}

// TestAtanConstants checks the decimal constants of Atan and Atan2
// against the bits fdlibm gives for them (s_atan.c, e_atan2.c).
func TestAtanConstants(t *testing.T) {
	for _, c := range []struct {
		name string
		v    float64
		bits uint64
	}{
		{"atanHi0", atanHi0, 0x3FDDAC670561BB4F}, {"atanHi1", atanHi1, 0x3FE921FB54442D18},
		{"atanHi2", atanHi2, 0x3FEF730BD281F69B}, {"atanHi3", atanHi3, 0x3FF921FB54442D18},
		{"atanLo0", atanLo0, 0x3C7A2B7F222F65E2}, {"atanLo1", atanLo1, 0x3C81A62633145C07},
		{"atanLo2", atanLo2, 0x3C7007887AF0CBBD}, {"atanLo3", atanLo3, 0x3C91A62633145C07},
		{"aT0", aT0, 0x3FD555555555550D}, {"aT1", aT1, 0xBFC999999998EBC4},
		{"aT2", aT2, 0x3FC24924920083FF}, {"aT3", aT3, 0xBFBC71C6FE231671},
		{"aT4", aT4, 0x3FB745CDC54C206E}, {"aT5", aT5, 0xBFB3B0F2AF749A6D},
		{"aT6", aT6, 0x3FB10D66A0D03D51}, {"aT7", aT7, 0xBFADDE2D52DEFD9A},
		{"aT8", aT8, 0x3FA97B4B24760DEB}, {"aT9", aT9, 0xBFA2B4442C6A6C2F},
		{"aT10", aT10, 0x3F90AD3AE322DA11},
		{"atan2Pi", atan2Pi, 0x400921FB54442D18}, {"atan2PiLo", atan2PiLo, 0x3CA1A62633145C07},
	} {
		if b := math.Float64bits(c.v); b != c.bits {
			t.Errorf("%s = %v has bits %#x, fdlibm's are %#x", c.name, c.v, b, c.bits)
		}
	}
}

func BenchmarkTanh(b *testing.B) {
	x, s := 0.3, 0.0
	for b.Loop() {
		s += Tanh(x)
		x += 1e-9
	}
	sink = s
}

func BenchmarkMathTanh(b *testing.B) {
	x, s := 0.3, 0.0
	for b.Loop() {
		s += math.Tanh(x)
		x += 1e-9
	}
	sink = s
}

// BenchmarkTanhLarge is BenchmarkTanh on Tanh's second path (|x| ≥
// 0.4), BenchmarkMathTanhLarge math.Tanh's on its exp path.
func BenchmarkTanhLarge(b *testing.B) {
	x, s := 1.5, 0.0
	for b.Loop() {
		s += Tanh(x)
		x += 1e-9
	}
	sink = s
}

func BenchmarkMathTanhLarge(b *testing.B) {
	x, s := 1.5, 0.0
	for b.Loop() {
		s += math.Tanh(x)
		x += 1e-9
	}
	sink = s
}

func BenchmarkAtan(b *testing.B) {
	x, s := 0.8, 0.0
	for b.Loop() {
		s += Atan(x)
		x += 1e-9
	}
	sink = s
}

func BenchmarkMathAtan(b *testing.B) {
	x, s := 0.8, 0.0
	for b.Loop() {
		s += math.Atan(x)
		x += 1e-9
	}
	sink = s
}

func BenchmarkAtan2(b *testing.B) {
	y, s := 0.8, 0.0
	for b.Loop() {
		s += Atan2(y, -1.3)
		y += 1e-9
	}
	sink = s
}

func BenchmarkMathAtan2(b *testing.B) {
	y, s := 0.8, 0.0
	for b.Loop() {
		s += math.Atan2(y, -1.3)
		y += 1e-9
	}
	sink = s
}
