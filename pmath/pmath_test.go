package pmath

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// refPrec is the precision of the references: far beyond the 53 bits
// whose rounding is judged.
const refPrec = 256

var (
	bigLn2 = bigLog1p(newBig(1)) // computed once: log 2 = log(1+1)
)

func newBig(x float64) *big.Float { return new(big.Float).SetPrec(refPrec).SetFloat64(x) }

// bigAtanhSeries returns 2·atanh(s) = 2·(s + s³/3 + s⁵/5 + …) for |s| ≤ ⅓,
// summed until the terms fall below 2⁻³⁰⁰ of the sum.
func bigAtanhSeries(s *big.Float) *big.Float {
	sum := new(big.Float).SetPrec(refPrec).Set(s)
	s2 := new(big.Float).SetPrec(refPrec).Mul(s, s)
	pow := new(big.Float).SetPrec(refPrec).Set(s)
	for n := int64(3); n < 2000; n += 2 {
		pow.Mul(pow, s2)
		term := new(big.Float).SetPrec(refPrec).Quo(pow, new(big.Float).SetInt64(n))
		sum.Add(sum, term)
		if term.Sign() == 0 || term.MantExp(nil)-sum.MantExp(nil) < -300 {
			break
		}
	}
	return sum.Mul(sum, newBig(2))
}

// bigLog1p returns log(1+f) for f in [−0.3, 1] as 2·atanh(f/(2+f)).
func bigLog1p(f *big.Float) *big.Float {
	den := new(big.Float).SetPrec(refPrec).Add(f, newBig(2))
	return bigAtanhSeries(new(big.Float).SetPrec(refPrec).Quo(f, den))
}

// bigLog returns log x for finite x > 0: x = m·2^e, m in [0.5, 1).
func bigLog(x float64) *big.Float {
	m, e := math.Frexp(x)
	r := bigLog1p(newBig(m - 1)) // m − 1 is exact
	return r.Add(r, new(big.Float).SetPrec(refPrec).Mul(bigLn2, new(big.Float).SetInt64(int64(e))))
}

// bigExp returns e^x: k = round(x/ln 2), r = x − k·ln 2 in 256 bits,
// e^r by its Taylor series, times 2^k.
func bigExp(x float64) *big.Float {
	k := math.Round(x / math.Ln2)
	r := new(big.Float).SetPrec(refPrec).Mul(bigLn2, newBig(k))
	r.Sub(newBig(x), r)
	sum := newBig(1)
	term := newBig(1)
	for n := int64(1); n < 2000; n++ {
		term.Mul(term, r)
		term.Quo(term, new(big.Float).SetInt64(n))
		sum.Add(sum, term)
		if term.Sign() == 0 || term.MantExp(nil)-sum.MantExp(nil) < -300 {
			break
		}
	}
	return sum.SetMantExp(sum, int(k))
}

// ulpErr returns |got − ref| in units of the last place of the float64
// nearest ref (the spacing of float64s at |ref|, at least the smallest
// subnormal's).
func ulpErr(got float64, ref *big.Float) float64 {
	r, _ := ref.Float64()
	ulp := math.Nextafter(math.Abs(r), math.Inf(1)) - math.Abs(r)
	if math.IsInf(ulp, 0) {
		ulp = math.Abs(r) - math.Nextafter(math.Abs(r), 0)
	}
	// The quotient in 256 bits: a difference below the smallest
	// subnormal would round to a multiple of it as a float64.
	d := new(big.Float).SetPrec(refPrec).Sub(newBig(got), ref)
	q, _ := d.Quo(d, newBig(ulp)).Float64()
	return math.Abs(q)
}

// TestExpAccuracy checks that Exp is faithfully rounded, against the
// 256-bit reference: the error is below one ulp everywhere fdlibm
// guarantees it (which includes the subnormal results, rounded once),
// measured over arguments spread over the whole finite range, near
// zero, near the thresholds and at the reduction's midpoints (x near
// (k+½)·ln 2, where |r| is largest).
func TestExpAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var xs []float64
	for range 20000 {
		xs = append(xs, ExpUnderflow+(ExpOverflow-ExpUnderflow)*rng.Float64())
	}
	for range 5000 {
		xs = append(xs, (rng.Float64()-0.5)*math.Ldexp(1, -rng.IntN(60)))
	}
	for k := -1074; k <= 1023; k += 7 {
		mid := (float64(k) + 0.5) * math.Ln2
		xs = append(xs, mid, math.Nextafter(mid, 0), math.Nextafter(mid, math.Inf(1)))
	}
	xs = append(xs, ExpOverflow, ExpUnderflow, -708.39, -708.4, -709.1, -744, 709, 1, -1, 0.5, 1e-300, -1e-300)
	worst, at := 0.0, 0.0
	for _, x := range xs {
		if e := ulpErr(Exp(x), bigExp(x)); e > worst {
			worst, at = e, x
		}
	}
	t.Logf("largest error %.3f ulp at x = %v (%d arguments)", worst, at, len(xs))
	if worst >= 1 {
		t.Errorf("Exp(%v): error %.3f ulp, want below 1", at, worst)
	}
}

// TestLogAccuracy is TestExpAccuracy for Log: arguments with random
// bits over every binade, subnormals included, near 1 (where the result
// is small and relative accuracy is hardest) and near the reduction's
// boundary √2.
func TestLogAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var xs []float64
	for range 20000 {
		x := math.Float64frombits(rng.Uint64() >> 1) // positive, any exponent
		if x > 0 && x <= math.MaxFloat64 {
			xs = append(xs, x)
		}
	}
	for range 5000 {
		xs = append(xs, 1+(rng.Float64()-0.5)*math.Ldexp(1, -rng.IntN(50)))
	}
	for _, c := range []float64{math.Sqrt2, math.Sqrt2 / 2, 1, 2, 0.5, math.E} {
		x := c
		for range 20 {
			xs = append(xs, x)
			x = math.Nextafter(x, 0)
		}
		x = c
		for range 20 {
			x = math.Nextafter(x, math.Inf(1))
			xs = append(xs, x)
		}
	}
	xs = append(xs, math.SmallestNonzeroFloat64, minNormal, math.MaxFloat64, 3e-310)
	worst, at := 0.0, 0.0
	for _, x := range xs {
		if x == 1 {
			if Log(x) != 0 {
				t.Errorf("Log(1) = %v, want 0", Log(x))
			}
			continue
		}
		if e := ulpErr(Log(x), bigLog(x)); e > worst {
			worst, at = e, x
		}
	}
	t.Logf("largest error %.3f ulp at x = %v (%d arguments)", worst, at, len(xs))
	if worst >= 1 {
		t.Errorf("Log(%v): error %.3f ulp, want below 1", at, worst)
	}
}

// TestSpecialValues checks the documented results at the edges, bit for
// bit where the bits are fixed.
func TestSpecialValues(t *testing.T) {
	nan := math.NaN()
	inf := math.Inf(1)
	for _, c := range []struct {
		name    string
		got     float64
		want    float64
		wantNaN bool
	}{
		{"Exp(+Inf)", Exp(inf), inf, false},
		{"Exp(-Inf)", Exp(-inf), 0, false},
		{"Exp(NaN)", Exp(nan), 0, true},
		{"Exp(0)", Exp(0), 1, false},
		{"Exp(-0)", Exp(math.Copysign(0, -1)), 1, false},
		{"Exp(710)", Exp(710), inf, false},
		{"Exp(-746)", Exp(-746), 0, false},
		{"Exp(ExpUnderflow)", Exp(ExpUnderflow), math.SmallestNonzeroFloat64, false},
		{"Log(+Inf)", Log(inf), inf, false},
		{"Log(0)", Log(0), -inf, false},
		{"Log(-0)", Log(math.Copysign(0, -1)), -inf, false},
		{"Log(-1)", Log(-1), 0, true},
		{"Log(-Inf)", Log(-inf), 0, true},
		{"Log(NaN)", Log(nan), 0, true},
		{"Log(1)", Log(1), 0, false},
		{"Log(E)", Log(math.E), 1, false},
		{"Log(2)", Log(2), math.Ln2, false},
	} {
		switch {
		case c.wantNaN && !math.IsNaN(c.got):
			t.Errorf("%s = %v, want NaN", c.name, c.got)
		case !c.wantNaN && math.Float64bits(c.got) != math.Float64bits(c.want):
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if b := math.Float64bits(Log(-1)); b != nanBits {
		t.Errorf("Log(-1) has bits %#x, want the fixed NaN %#x", b, uint64(nanBits))
	}
	if b := math.Float64bits(Exp(nan)); b != math.Float64bits(nan) {
		t.Errorf("Exp(NaN) has bits %#x, want its argument's %#x", b, math.Float64bits(nan))
	}
}

// TestExpMonotone checks monotonicity across the reduction's boundaries,
// which a faithfully rounded function need not have but these do where
// tested: e^x never decreases between neighbouring arguments.
func TestExpMonotone(t *testing.T) {
	for k := -1070; k <= 1020; k += 3 {
		x := (float64(k) + 0.5) * math.Ln2
		lo := math.Nextafter(x, math.Inf(-1))
		for range 8 {
			hi := math.Nextafter(lo, math.Inf(1))
			if Exp(hi) < Exp(lo) {
				t.Fatalf("Exp(%v) = %v < Exp(%v) = %v", hi, Exp(hi), lo, Exp(lo))
			}
			lo = hi
		}
	}
}

func BenchmarkExp(b *testing.B) {
	x, s := 0.1, 0.0
	for b.Loop() {
		s += Exp(x)
		x += 1e-9
	}
	sink = s
}

func BenchmarkMathExp(b *testing.B) {
	x, s := 0.1, 0.0
	for b.Loop() {
		s += math.Exp(x)
		x += 1e-9
	}
	sink = s
}

func BenchmarkLog(b *testing.B) {
	x, s := 1.5, 0.0
	for b.Loop() {
		s += Log(x)
		x += 1e-9
	}
	sink = s
}

func BenchmarkMathLog(b *testing.B) {
	x, s := 1.5, 0.0
	for b.Loop() {
		s += math.Log(x)
		x += 1e-9
	}
	sink = s
}

var sink float64
