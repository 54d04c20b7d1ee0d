package pmath

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// trigRedPrec is the precision of the references' argument reduction:
// x·2/π and x − n·π/2 for |x| up to 2¹⁰²⁴ keep 2600 − 1024 bits after
// the point, far beyond the 2⁻⁶¹ of the smallest remainder of a double.
const trigRedPrec = 2600

// trigSeriesPrec is the precision of the references' series on the
// remainder: 2⁻¹⁹² relative, some 2⁻¹³⁹ ulp.
const trigSeriesPrec = 192

var (
	trigBigPi        = bigPiMachin(trigRedPrec + 64)
	trigBigPio2      = new(big.Float).SetPrec(trigRedPrec).Quo(trigBigPi, big.NewFloat(2))
	trigBigTwoOverPi = new(big.Float).SetPrec(trigRedPrec).Quo(big.NewFloat(2), trigBigPi)
)

// bigAtanInv returns atan(1/k) = Σ (−1)ⁿ/((2n+1)·k^(2n+1)) in prec bits.
func bigAtanInv(k int64, prec uint) *big.Float {
	kk := new(big.Float).SetPrec(prec).SetInt64(k * k)
	p := new(big.Float).SetPrec(prec).Quo(big.NewFloat(1), new(big.Float).SetPrec(prec).SetInt64(k))
	sum := new(big.Float).SetPrec(prec).Set(p)
	for n := int64(1); ; n++ {
		p.Quo(p, kk)
		if p.MantExp(nil) < -int(prec)-8 {
			return sum
		}
		term := new(big.Float).SetPrec(prec).Quo(p, new(big.Float).SetPrec(prec).SetInt64(2*n+1))
		if n%2 == 1 {
			sum.Sub(sum, term)
		} else {
			sum.Add(sum, term)
		}
	}
}

// bigPiMachin returns π = 16·atan(1/5) − 4·atan(1/239) (Machin) in prec
// bits.
func bigPiMachin(prec uint) *big.Float {
	a := bigAtanInv(5, prec)
	a.Mul(a, new(big.Float).SetPrec(prec).SetInt64(16))
	b := bigAtanInv(239, prec)
	b.Mul(b, new(big.Float).SetPrec(prec).SetInt64(4))
	return a.Sub(a, b)
}

// bigTrigReduce returns n mod 4 and r = x − n·π/2 (trigSeriesPrec bits)
// with n the integer nearest x·2/π. The reduction runs in e + 320 bits
// for x below 2^e (at least 320): r is off by at most 2^(−320) of x·2/π,
// 2⁻²⁵⁸ relative to the smallest remainder of a double.
func bigTrigReduce(x float64) (int, *big.Float) {
	_, e := math.Frexp(x)
	prec := uint(320 + max(e, 0))
	xb := new(big.Float).SetPrec(prec).SetFloat64(x)
	q := new(big.Float).SetPrec(prec).Mul(xb, trigBigTwoOverPi)
	half := big.NewFloat(0.5)
	var n *big.Int
	if q.Sign() >= 0 {
		n, _ = q.Add(q, half).Int(nil)
	} else {
		n, _ = q.Neg(q).Add(q, half).Int(nil)
		n.Neg(n)
	}
	np := new(big.Float).SetPrec(prec).SetInt(n)
	np.Mul(np, trigBigPio2)
	r := new(big.Float).SetPrec(prec).Sub(xb, np)
	m := new(big.Int).Mod(n, big.NewInt(4))
	return int(m.Int64()), new(big.Float).SetPrec(trigSeriesPrec).Set(r)
}

// bigSinCos returns sin r and cos r for |r| ≤ 1: their Taylor series on
// r/2⁶, then six doublings (sin 2a = 2·sin a·cos a, cos 2a = 1 − 2·sin² a,
// which lose a bit each at most).
func bigSinCos(r *big.Float) (s, c *big.Float) {
	prec := r.Prec()
	a := new(big.Float).SetPrec(prec).SetMantExp(r, -6)
	a2 := new(big.Float).SetPrec(prec).Mul(a, a)
	s = new(big.Float).SetPrec(prec).Set(a)
	c = new(big.Float).SetPrec(prec).SetInt64(1)
	ts := new(big.Float).SetPrec(prec).Set(a)
	tc := new(big.Float).SetPrec(prec).SetInt64(1)
	d := new(big.Float).SetPrec(prec)
	for k := int64(1); k < 100; k++ {
		// ts = (−1)ᵏ a^(2k+1)/(2k+1)!, tc = (−1)ᵏ a^(2k)/(2k)!
		tc.Mul(tc, a2)
		tc.Quo(tc, d.SetInt64(-(2*k-1)*(2*k)))
		ts.Mul(ts, a2)
		ts.Quo(ts, d.SetInt64(-(2*k)*(2*k+1)))
		c.Add(c, tc)
		s.Add(s, ts)
		if tc.Sign() == 0 || tc.MantExp(nil) < -int(prec)-8 {
			break
		}
	}
	for range 6 {
		d.Mul(s, s)
		s.Mul(s, c)
		s.SetMantExp(s, 1)
		c.Sub(c.SetInt64(1), d.SetMantExp(d, 1))
	}
	return s, c
}

// bigTrig returns sin x, cos x and tan x, in refPrec bits.
func bigTrig(x float64) (sin, cos, tan *big.Float) {
	q, r := bigTrigReduce(x)
	s, c := bigSinCos(r)
	ns, nc := new(big.Float).Neg(s), new(big.Float).Neg(c)
	switch q {
	case 0:
		sin, cos = s, c
	case 1:
		sin, cos = c, ns
	case 2:
		sin, cos = ns, nc
	default:
		sin, cos = nc, s
	}
	tan = new(big.Float).SetPrec(s.Prec()).Quo(sin, cos)
	return new(big.Float).SetPrec(refPrec).Set(sin), new(big.Float).SetPrec(refPrec).Set(cos),
		new(big.Float).SetPrec(refPrec).Set(tan)
}

// trigCase is a class of arguments of the accuracy tests.
type trigCase struct {
	name string
	xs   []float64
}

// trigBigMultiple returns the double nearest k·π/4.
func trigBigMultiple(k int64) float64 {
	m := new(big.Float).SetPrec(trigRedPrec).SetInt64(k)
	m.Mul(m, trigBigPio2)
	x, _ := m.SetMantExp(m, -1).Float64()
	return x
}

// trigNeighbours returns x and its n nearest doubles on either side.
func trigNeighbours(x float64, n int) []float64 {
	xs := []float64{x}
	lo, hi := x, x
	for range n {
		lo, hi = math.Nextafter(lo, math.Inf(-1)), math.Nextafter(hi, math.Inf(1))
		xs = append(xs, lo, hi)
	}
	return xs
}

// trigHardCase is the double whose remainder modulo π/2 is the smallest
// relative to it (Muller, Elementary Functions: r ≈ 4.7·10⁻¹⁹, 2⁻⁶¹).
var trigHardCase = 6381956970095103 * math.Ldexp(1, 797)

// trigCases returns the arguments of the accuracy tests, by class.
func trigCases() []trigCase {
	rng := rand.New(rand.NewPCG(21, 22))
	var small, medium, bits, mult, tiny, edge, hard []float64
	for range 20000 {
		small = append(small, (rng.Float64()-0.5)*20)
	}
	for range 10000 {
		medium = append(medium, (rng.Float64()-0.5)*2e6)
	}
	for len(bits) < 20000 {
		if x := math.Float64frombits(rng.Uint64()); math.Abs(x) <= math.MaxFloat64 {
			bits = append(bits, x)
		}
	}
	// Near multiples of π/4 (of π/2 for even k): every k up to 2000,
	// then k spread over the medium range and beyond the threshold.
	for k := int64(1); k <= 2000; k++ {
		mult = append(mult, trigNeighbours(trigBigMultiple(k), 2)...)
	}
	for range 2000 {
		k := rng.Int64N(1<<22) + 2000
		mult = append(mult, trigNeighbours(trigBigMultiple(k), 2)...)
	}
	for range 500 {
		mult = append(mult, trigBigMultiple(rng.Int64N(1<<62)))
	}
	for k := 1; k <= 1074; k++ {
		x := math.Ldexp(1+rng.Float64(), -k)
		tiny = append(tiny, x, -x, math.Ldexp(1, -k))
	}
	for _, c := range []float64{trigHuge, 0x1p20 * math.Pi / 2, trigTanBig, math.Pi/2 - trigTanBig, math.Pi / 4, 0x1p-26, 0x1p-27} {
		edge = append(edge, trigNeighbours(c, 8)...)
	}
	hard = append(hard, trigNeighbours(trigHardCase, 4)...)
	for x, i := math.MaxFloat64, 0; i < 5; i++ {
		hard = append(hard, x)
		x = math.Nextafter(x, 0)
	}
	for e := 20; e <= 1023; e++ {
		hard = append(hard, math.Ldexp(1, e), math.Ldexp(1<<53-1, e-52))
	}
	for _, xs := range [][]float64{tiny, edge, hard} {
		for _, x := range xs[:len(xs):len(xs)] {
			xs = append(xs, -x)
		}
	}
	return []trigCase{{"[-10, 10]", small}, {"[-1e6, 1e6]", medium}, {"random bits", bits},
		{"near k·π/4", mult}, {"tiny", tiny}, {"thresholds", edge}, {"hard", hard}}
}

// TestTrigAccuracy checks that Sin, Cos and Tan are faithfully rounded
// (error below one ulp) against references computed with math/big (π
// from Machin's formula, the exact remainder x − n·π/2, Taylor series):
// random arguments near zero, over the medium range and over every
// exponent, doubles nearest multiples of π/4 and π/2 (where the
// remainder is smallest and cancels most), tiny and subnormal
// arguments, the thresholds, the hardest argument of the reduction, and
// ±MaxFloat64.
func TestTrigAccuracy(t *testing.T) {
	funcs := []struct {
		name string
		f    func(float64) float64
	}{{"Sin", Sin}, {"Cos", Cos}, {"Tan", Tan}}
	var worst [3]float64
	var worstAt [3]float64
	for _, c := range trigCases() {
		var w [3]float64
		var at [3]float64
		for _, x := range c.xs {
			s, co, tn := bigTrig(x)
			for i, ref := range []*big.Float{s, co, tn} {
				if e := ulpErr(funcs[i].f(x), ref); e > w[i] {
					w[i], at[i] = e, x
				}
			}
		}
		t.Logf("%-12s (%5d arguments): Sin %.3f ulp, Cos %.3f ulp, Tan %.3f ulp", c.name, len(c.xs), w[0], w[1], w[2])
		for i := range w {
			if w[i] > worst[i] {
				worst[i], worstAt[i] = w[i], at[i]
			}
		}
	}
	s, c, tn := bigTrig(trigHardCase)
	t.Logf("at the hard case %v: Sin %.3f ulp, Cos %.3f ulp, Tan %.3f ulp", trigHardCase,
		ulpErr(Sin(trigHardCase), s), ulpErr(Cos(trigHardCase), c), ulpErr(Tan(trigHardCase), tn))
	for i, f := range funcs {
		t.Logf("%s: largest error %.4f ulp at x = %v", f.name, worst[i], worstAt[i])
		if worst[i] >= 1 {
			t.Errorf("%s(%v): error %.4f ulp, want below 1", f.name, worstAt[i], worst[i])
		}
	}
}

// TestTrigReduceHuge checks the Payne–Hanek reduction itself against the
// exact remainder: n mod 4, and y0 + y1 = x − n·π/2 to 2⁻⁷⁰ relative
// (the bound it was designed for is some 2⁻⁸⁰ where the remainder is
// smallest and 2⁻¹⁰⁴ elsewhere), with |y1| ≤ ½ulp(y0).
func TestTrigReduceHuge(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	xs := append(trigNeighbours(trigHardCase, 4), trigNeighbours(trigHuge, 4)[1:]...)
	xs = append(xs, math.MaxFloat64, math.Ldexp(1, 1023), 0x1p21)
	for range 5000 {
		xs = append(xs, math.Ldexp(1+rng.Float64(), 21+rng.IntN(1002)))
	}
	worst, at := 0.0, 0.0
	for _, x := range xs {
		for _, x := range []float64{x, -x} {
			tt, y0, y1 := trigReduceHuge(x)
			q, r := bigTrigReduce(x)
			if n := int(math.Float64bits(tt) & 3); n != q {
				t.Errorf("trigReduceHuge(%v): n ≡ %d mod 4, want %d", x, n, q)
				continue
			}
			if y1 != 0 && math.Abs(y1) > (math.Nextafter(math.Abs(y0), math.Inf(1))-math.Abs(y0))/2 {
				t.Errorf("trigReduceHuge(%v): y0 + y1 = %v + %v not normalized", x, y0, y1)
			}
			d := new(big.Float).SetPrec(trigSeriesPrec).SetFloat64(y0)
			d.Add(d, new(big.Float).SetFloat64(y1))
			d.Sub(d, r)
			e, _ := d.Quo(d, r).Float64()
			if e = math.Abs(e); e > worst {
				worst, at = e, x
			}
		}
	}
	t.Logf("largest relative error 2^%.1f at x = %v (%d arguments)", math.Log2(worst), at, 2*len(xs))
	if worst > 0x1p-70 {
		t.Errorf("trigReduceHuge(%v): relative error 2^%.1f, want below 2^-70", at, math.Log2(worst))
	}
}

// trigStepArgs returns the arguments the straight-line forms are checked
// on: stepArgs' (random bit patterns, NaNs with payloads, infinities,
// subnormals, …) and the accuracy tests', and more random ones across
// the medium range, beyond it and over the exponents of the huge
// reduction.
func trigStepArgs() []float64 {
	xs := stepArgs()
	for _, c := range trigCases() {
		xs = append(xs, c.xs...)
	}
	rng := rand.New(rand.NewPCG(25, 26))
	for range 30000 {
		xs = append(xs, (rng.Float64()-0.5)*4e6, math.Ldexp(rng.Float64()-0.5, rng.IntN(1030)),
			math.Float64frombits(rng.Uint64()))
	}
	return xs
}

// trigPrograms are the straight-line forms with their functions.
var trigPrograms = []struct {
	name string
	p    *Program
	f    func(float64) float64
}{{"Sin", SinSteps(), Sin}, {"Cos", CosSteps(), Cos}, {"Tan", TanSteps(), Tan}}

// TestTrigStepsMatchFunctions checks that the straight-line forms give
// the functions' bits for every argument tried, NaNs included.
func TestTrigStepsMatchFunctions(t *testing.T) {
	xs := trigStepArgs()
	for _, c := range trigPrograms {
		bad := 0
		for _, x := range xs {
			got, want := c.p.Run(x), c.f(x)
			if math.Float64bits(got) != math.Float64bits(want) {
				if bad++; bad <= 5 {
					t.Errorf("%s steps at %v (%#x): %v (%#x), the function gives %v (%#x)",
						c.name, x, math.Float64bits(x), got, math.Float64bits(got), want, math.Float64bits(want))
				}
			}
		}
		if bad > 5 {
			t.Errorf("%s: %d mismatches of %d", c.name, bad, len(xs))
		}
	}
}

// TestTrigStepsWellFormed checks the straight-line forms against the
// contract of code generators (checkWellFormed), and what lane code
// needs to hold them: at most 10 registers (sym/tape's 12 vector
// registers, two of them the gather's), and constants that B operands
// can name. It reports the step counts, in all and outside the huge
// reduction's block.
func TestTrigStepsWellFormed(t *testing.T) {
	for _, c := range trigPrograms {
		checkWellFormed(t, c.name, c.p)
		if c.p.Regs > 10 || len(c.p.Consts) > 128 {
			t.Errorf("%s: %d registers, %d constants", c.name, c.p.Regs, len(c.p.Consts))
		}
		in, block := 0, false
		for _, s := range c.p.Steps {
			switch s.Op {
			case StepIfAny:
				block = true
			case StepEnd:
				block = false
			default:
				if block {
					in++
				}
			}
		}
		t.Logf("%s: %d steps, %d outside the block (%d in it), %d registers, %d constants",
			c.name, len(c.p.Steps), len(c.p.Steps)-in, in, c.p.Regs, len(c.p.Consts))
	}
}

// TestTrigSpecialValues checks the documented results at ±0, ±Inf and
// NaN, bit for bit (the NaN is the package's fixed one).
func TestTrigSpecialValues(t *testing.T) {
	negZero := math.Copysign(0, -1)
	inf := math.Inf(1)
	nan := math.Float64frombits(nanBits)
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"Sin(0)", Sin(0), 0}, {"Sin(-0)", Sin(negZero), negZero},
		{"Sin(+Inf)", Sin(inf), nan}, {"Sin(-Inf)", Sin(-inf), nan}, {"Sin(NaN)", Sin(math.NaN()), nan},
		{"Cos(0)", Cos(0), 1}, {"Cos(-0)", Cos(negZero), 1},
		{"Cos(+Inf)", Cos(inf), nan}, {"Cos(-Inf)", Cos(-inf), nan}, {"Cos(NaN)", Cos(math.NaN()), nan},
		{"Tan(0)", Tan(0), 0}, {"Tan(-0)", Tan(negZero), negZero},
		{"Tan(+Inf)", Tan(inf), nan}, {"Tan(-Inf)", Tan(-inf), nan}, {"Tan(NaN)", Tan(math.NaN()), nan},
		{"Sin(tiny)", Sin(0x1p-30), 0x1p-30}, {"Sin(-subnormal)", Sin(-5e-324), -5e-324},
		{"Tan(subnormal)", Tan(5e-324), 5e-324}, {"Cos(tiny)", Cos(0x1p-30), 1},
		{"Sin(π/2)", Sin(math.Pi / 2), 1}, {"Cos(π)", Cos(math.Pi), -1},
	} {
		if math.Float64bits(c.got) != math.Float64bits(c.want) {
			t.Errorf("%s = %v (%#x), want %v (%#x)", c.name, c.got, math.Float64bits(c.got), c.want, math.Float64bits(c.want))
		}
	}
	for _, c := range trigPrograms {
		if b := math.Float64bits(c.p.Run(math.Float64frombits(0x7FF8000000000123))); b != nanBits {
			t.Errorf("%s steps at a NaN with a payload: %#x, want the fixed NaN", c.name, b)
		}
	}
}

// TestTrigIdentities checks sin² x + cos² x = 1 to within 2⁻⁵⁰ (what
// two faithfully rounded results allow) and the symmetries bit for bit:
// Sin and Tan odd, Cos even.
func TestTrigIdentities(t *testing.T) {
	one := big.NewFloat(1)
	for _, c := range trigCases() {
		for _, x := range c.xs {
			s, co := new(big.Float).SetFloat64(Sin(x)), new(big.Float).SetFloat64(Cos(x))
			d := new(big.Float).SetPrec(256).Mul(s, s)
			d.Add(d, new(big.Float).SetPrec(256).Mul(co, co))
			e, _ := d.Sub(d, one).Float64()
			if math.Abs(e) > 0x1p-50 {
				t.Errorf("%s: sin² + cos² − 1 = %g at x = %v", c.name, e, x)
			}
			bits := math.Float64bits
			if bits(Sin(-x)) != bits(-Sin(x)) || bits(Cos(-x)) != bits(Cos(x)) || bits(Tan(-x)) != bits(-Tan(x)) {
				t.Errorf("%s: a symmetry fails at x = %v", c.name, x)
			}
		}
	}
}

// TestTrigConstants checks the constants against their published bit
// patterns and against π: pio2_1, pio2_2, pio2_3 are π/2's successive
// 33-bit pieces and pio2_3t the rest, the other splits are exact, and
// trigTwoOverPi holds 2/π's 24-bit chunks.
func TestTrigConstants(t *testing.T) {
	for _, c := range []struct {
		name string
		x    float64
		bits uint64
	}{
		{"invpio2", trigInvPio2, 0x3FE45F306DC9C883}, {"pio2_1", trigPio2x1, 0x3FF921FB54400000},
		{"pio2_2", trigPio2x2, 0x3DD0B4611A600000}, {"pio2_3", trigPio2x3, 0x3BA3198A2E000000},
		{"pio2_3t", trigPio2x3t, 0x397B839A252049C1}, {"pio4", trigPio4, 0x3FE921FB54442D18},
		{"pio4lo", trigPio4Lo, 0x3C81A62633145C07}, {"tanBig", trigTanBig, 0x3FE5942800000000},
		{"huge", trigHuge, 0x413921FB00000000}, {"pio2Hi", trigPio2Hi, 0x3FF921FB54442D18},
		{"pio2Lo", trigPio2Lo, 0x3C91A62633145C07},
		{"S1", sinS1, 0xBFC5555555555549}, {"S2", sinS2, 0x3F8111111110F8A6}, {"S3", sinS3, 0xBF2A01A019C161D5},
		{"S4", sinS4, 0x3EC71DE357B1FE7D}, {"S5", sinS5, 0xBE5AE5E68A2B9CEB}, {"S6", sinS6, 0x3DE5D93A5ACFD57C},
		{"C1", cosC1, 0x3FA555555555554C}, {"C2", cosC2, 0xBF56C16C16C15177}, {"C3", cosC3, 0x3EFA01A019CB1590},
		{"C4", cosC4, 0xBE927E4F809C52AD}, {"C5", cosC5, 0x3E21EE9EBDB4B1C4}, {"C6", cosC6, 0xBDA8FAE9BE8838D4},
		{"T0", tanT0, 0x3FD5555555555563}, {"T1", tanT1, 0x3FC111111110FE7A}, {"T2", tanT2, 0x3FABA1BA1BB341FE},
		{"T3", tanT3, 0x3F9664F48406D637}, {"T4", tanT4, 0x3F8226E3E96E8493}, {"T5", tanT5, 0x3F6D6D22C9560328},
		{"T6", tanT6, 0x3F57DBC8FEE08315}, {"T7", tanT7, 0x3F4344D8F2F26501}, {"T8", tanT8, 0x3F3026F71A8D1068},
		{"T9", tanT9, 0x3F147E88A03792A6}, {"T10", tanT10, 0x3F12B80F32F0A7E9}, {"T11", tanT11, 0xBEF375CBDB605373},
		{"T12", tanT12, 0x3EFB2A7074BF7AD4},
	} {
		if b := math.Float64bits(c.x); b != c.bits {
			t.Errorf("%s has bits %#x, want %#x", c.name, b, c.bits)
		}
	}
	const prec = 400
	pio2 := new(big.Float).SetPrec(prec).Set(trigBigPio2)
	rest := new(big.Float).SetPrec(prec).Set(pio2)
	for _, p := range []struct {
		name string
		x    float64
	}{{"pio2_1", trigPio2x1}, {"pio2_2", trigPio2x2}, {"pio2_3", trigPio2x3}} {
		// p is rest truncated to its first 33 bits.
		want, _ := new(big.Float).SetPrec(33).SetMode(big.ToZero).Set(rest).Float64()
		if p.x != want {
			t.Errorf("%s = %v, want π/2's next 33 bits %v", p.name, p.x, want)
		}
		rest.Sub(rest, new(big.Float).SetFloat64(p.x))
	}
	round := func(v *big.Float) float64 { f, _ := v.Float64(); return f }
	quarter := new(big.Float).SetPrec(prec).Quo(pio2, big.NewFloat(2))
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"pio2_3t", trigPio2x3t, round(rest)},
		{"invpio2", trigInvPio2, round(trigBigTwoOverPi)},
		{"pio2Hi", trigPio2Hi, round(pio2)},
		{"pio2Lo", trigPio2Lo, round(new(big.Float).SetPrec(prec).Sub(pio2, big.NewFloat(trigPio2Hi)))},
		{"pio4", trigPio4, round(quarter)},
		{"pio4lo", trigPio4Lo, round(new(big.Float).SetPrec(prec).Sub(quarter, big.NewFloat(trigPio4)))},
		{"pio2HiH+pio2HiL", trigPio2HiH + trigPio2HiL, trigPio2Hi},
		{"pio2HiH's low 27 bits", math.Float64frombits(math.Float64bits(trigPio2HiH) &^ (1<<27 - 1)), trigPio2HiH},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestTrigTwoOverPi checks trigTwoOverPi's chunks against 2/π computed
// with math/big: c_j = ⌊2/π·2^(24(j+1))⌋ mod 2²⁴, after three zeros.
func TestTrigTwoOverPi(t *testing.T) {
	for i := range 3 {
		if trigTwoOverPi[i] != 0 {
			t.Errorf("trigTwoOverPi[%d] = %v, want 0", i, trigTwoOverPi[i])
		}
	}
	f := new(big.Float).SetPrec(trigRedPrec).Set(trigBigTwoOverPi)
	for j := 0; j+3 < len(trigTwoOverPi); j++ {
		f.SetMantExp(f, 24)
		c, _ := f.Int(nil)
		f.Sub(f, new(big.Float).SetInt(c))
		if got := trigTwoOverPi[j+3]; got != float64(c.Int64()) {
			t.Errorf("chunk %d of 2/π: %#x, want %#x", j, int64(got), c.Int64())
		}
	}
}

// trigBenchArgs are ordinary arguments for the benchmarks, in [−100, 100].
var trigBenchArgs = func() []float64 {
	rng := rand.New(rand.NewPCG(27, 28))
	xs := make([]float64, 1024)
	for i := range xs {
		xs[i] = (rng.Float64() - 0.5) * 200
	}
	return xs
}()

func benchTrig(b *testing.B, f func(float64) float64, scale float64) {
	s := 0.0
	i := 0
	for b.Loop() {
		s += f(trigBenchArgs[i&1023] * scale)
		i++
	}
	sink = s
}

func BenchmarkSin(b *testing.B)         { benchTrig(b, Sin, 1) }
func BenchmarkMathSin(b *testing.B)     { benchTrig(b, math.Sin, 1) }
func BenchmarkCos(b *testing.B)         { benchTrig(b, Cos, 1) }
func BenchmarkMathCos(b *testing.B)     { benchTrig(b, math.Cos, 1) }
func BenchmarkTan(b *testing.B)         { benchTrig(b, Tan, 1) }
func BenchmarkMathTan(b *testing.B)     { benchTrig(b, math.Tan, 1) }
func BenchmarkSinHuge(b *testing.B)     { benchTrig(b, Sin, 1e200) }
func BenchmarkMathSinHuge(b *testing.B) { benchTrig(b, math.Sin, 1e200) }
