package pmath

import "math"

// The constants of Atan, from fdlibm's s_atan.c: atan(½), atan(1),
// atan(3/2) and atan(∞) = π/2, each split in a head (the nearest
// double) and a tail, and the coefficients of the polynomial in t² with
// atan(t) ≈ t − t·(aT₀·t² + aT₁·t⁴ + … + aT₁₀·t²²) on |t| ≤ 7/16, split
// into its odd and even powers of t⁴ so that the two halves evaluate
// side by side. The hexadecimal words are fdlibm's (TestAtanConstants
// checks the decimals against them).
const (
	atanHi0 = 4.63647609000806093515e-01 // 0x3FDDAC67 0561BB4F
	atanHi1 = 7.85398163397448278999e-01 // 0x3FE921FB 54442D18
	atanHi2 = 9.82793723247329054082e-01 // 0x3FEF730B D281F69B
	atanHi3 = 1.57079632679489655800e+00 // 0x3FF921FB 54442D18

	atanLo0 = 2.26987774529616870924e-17 // 0x3C7A2B7F 222F65E2
	atanLo1 = 3.06161699786838301793e-17 // 0x3C81A626 33145C07
	atanLo2 = 1.39033110312309984516e-17 // 0x3C700788 7AF0CBBD
	atanLo3 = 6.12323399573676603587e-17 // 0x3C91A626 33145C07

	aT0  = 3.33333333333329318027e-01  // 0x3FD55555 5555550D
	aT1  = -1.99999999998764832476e-01 // 0xBFC99999 9998EBC4
	aT2  = 1.42857142725034663711e-01  // 0x3FC24924 920083FF
	aT3  = -1.11111104054623557880e-01 // 0xBFBC71C6 FE231671
	aT4  = 9.09088713343650656196e-02  // 0x3FB745CD C54C206E
	aT5  = -7.69187620504482999495e-02 // 0xBFB3B0F2 AF749A6D
	aT6  = 6.66107313738753120669e-02  // 0x3FB10D66 A0D03D51
	aT7  = -5.83357013379057348645e-02 // 0xBFADDE2D 52DEFD9A
	aT8  = 4.97687799461593236017e-02  // 0x3FA97B4B 24760DEB
	aT9  = -3.65315727442169155270e-02 // 0xBFA2B444 2C6A6C2F
	aT10 = 1.62858201153657823623e-02  // 0x3F90AD3A E322DA11

	// The bounds of atan's reduction intervals.
	atanB0 = 7.0 / 16
	atanB1 = 11.0 / 16
	atanB2 = 19.0 / 16
	atanB3 = 39.0 / 16
)

// The constants of Atan2, from fdlibm's e_atan2.c: π, the nearest
// double, and its tail π − pi.
const (
	atan2Pi   = 3.1415926535897931160e+00 // 0x400921FB 54442D18
	atan2PiLo = 1.2246467991473531772e-16 // 0x3CA1A626 33145C07

	// Atan2 scales x and y by 2⁻⁸ where the larger exceeds atan2Big,
	// and by 2⁶⁰⁰ where the smaller is below atan2Small.
	atan2Big   = 0x1p1000
	atan2Small = 0x1p-960
)

// atanSignBit and atanAbsBits select a float64's sign bit and the
// rest (in the straight-line forms of Atan, Atan2 and Tanh).
const (
	atanSignBit = 1 << 63
	atanAbsBits = 1<<63 - 1
)

// Atan returns the arc tangent of x, in radians, in [−π/2, π/2],
// faithfully rounded (error below one ulp).
//
//	Atan(±0) = ±0
//	Atan(±Inf) = ±π/2
//	Atan(NaN) = NaN (x itself)
//
// Atan is odd: atan(x) = sign(x)·atan(|x|), and atan(|x|) is computed as
// in fdlibm's s_atan.c. With c = 0, ½, 1, 3/2 or ∞ as |x| lies below
// 7/16, below 11/16, below 19/16, below 39/16 or beyond, atan|x| =
// atan c + atan t where t = (|x| − c)/(1 + c·|x|) (t = −1/|x| for
// c = ∞), |t| ≤ 7/16, and atan t = t − t·P(t²). The heads and tails of
// atan c are added to t so that the result is rounded once in effect.
func Atan(x float64) float64 {
	// The interval's formula is written in the one form the
	// straight-line code computes for all of them,
	// t = (u·a − c)/(u + c·a) with u = 1 (u = 0 for c = ∞, where c
	// stands for 1): for c = ½ this is fdlibm's (2a − 1)/(2 + a) scaled
	// by ½, which gives the same bits, and for c = 0 it is a itself.
	// The result hi − ((t·S − lo) − t) is fdlibm's; for c = 0
	// (hi = lo = 0) it gives the bits of fdlibm's t − t·S.
	a := math.Abs(x)
	var t, hi, lo float64
	switch {
	case a < atanB0:
		t = a
	case a < atanB1:
		t = (a - 0.5) / (1 + float64(0.5*a))
		hi, lo = atanHi0, atanLo0
	case a < atanB2:
		t = (a - 1) / (1 + a)
		hi, lo = atanHi1, atanLo1
	case a < atanB3:
		t = (a - 1.5) / (1 + float64(1.5*a))
		hi, lo = atanHi2, atanLo2
	default:
		t = -1 / a
		hi, lo = atanHi3, atanLo3
	}
	z := float64(t * t)
	w := float64(z * z)
	z = hi - ((float64(t*(atanS1(z, w)+atanS2(w))) - lo) - t)
	if x != x {
		return x
	}
	return math.Copysign(z, x)
}

// atanS1 and atanS2 return fdlibm's s1 and s2, the odd and even halves
// (in powers of t⁴) of S with atan t ≈ t − t·S for |t| ≤ 7/16, from
// z = t² and w = t⁴.
func atanS1(z, w float64) float64 {
	s1 := float64(w*aT10) + aT8
	s1 = float64(s1*w) + aT6
	s1 = float64(s1*w) + aT4
	s1 = float64(s1*w) + aT2
	s1 = float64(s1*w) + aT0
	return float64(s1 * z)
}

func atanS2(w float64) float64 {
	s2 := float64(w*aT9) + aT7
	s2 = float64(s2*w) + aT5
	s2 = float64(s2*w) + aT3
	s2 = float64(s2*w) + aT1
	return float64(s2 * w)
}

// Atan2 returns the arc tangent of y/x, in radians, in [−π, π], using
// the signs of the two to determine the quadrant: the angle of the
// point (x, y). It is faithfully rounded (error below one ulp), and its
// special values are those of math.Atan2:
//
//	Atan2(y, NaN) = NaN, Atan2(NaN, x) = NaN (the fixed NaN of Log)
//	Atan2(±0, x ≥ +0) = ±0
//	Atan2(±0, x ≤ −0) = ±π
//	Atan2(y > 0, ±0) = +π/2, Atan2(y < 0, ±0) = −π/2
//	Atan2(±Inf, +Inf) = ±π/4
//	Atan2(±Inf, −Inf) = ±3π/4
//	Atan2(±y, +Inf) = ±0 for finite y
//	Atan2(±y, −Inf) = ±π for finite y
//	Atan2(±Inf, x) = ±π/2 for finite x
//
// The result is ±atan|y/x| for x ≥ +0 and ±(π − atan|y/x|) for x ≤ −0,
// the sign that of y, as in fdlibm's e_atan2.c; but fdlibm's way is not
// faithful: the rounding of y/x passes through atan almost undamped
// where |y/x| < 7/16 (atan t ≈ t), and π − z is rounded twice, so that
// the errors reach 1.3 ulp (measured). Here:
//
// The reduction of atan works on y and x themselves: the interval is
// chosen by comparing |y| with (7/16)·|x|, (11/16)·|x|, … (rounded
// products: the choice need not be exact), and t = (u·|y| −
// c·|x|)/(u·|x| + c·|y|), u = 1 (u = 0 and c = 1 beyond 39/16:
// t = −|x|/|y|). The numerator is exact: c·|x| is computed with its
// rounding error (nonzero for c = 3/2 only: c·|x| − h = (|x| − h) +
// ½|x|), and the difference is exact by Sterbenz's lemma. The quotient
// t = n·(1/d) then comes with its remainder n − t·d, exact but for a
// rounding far below it: t and d are split into 26 leading bits and the
// rest, so that three of the four partial products are exact. The
// quotient's error ε = (n − t·d)/d is added, as ε/(1 + t²) ≈
// ε·(1 − t² + t⁴), to atan's tail lo: the result is then as accurate as
// if t were exact.
//
// For x ≤ −0 the constants of the interval become those of π − atan c,
// in two parts again (H = π − hi rounded, L = ((π − H) − hi) − (lo −
// πlo), the first difference exact), and t becomes −t: π − atan|y/x| =
// H + L + (−t) − (−t)·S, the form of atan itself, rounded once.
//
// To keep the products exact and finite, x and y are first scaled by
// 2⁻⁸ where the larger exceeds 2¹⁰⁰⁰, and by 2⁶⁰⁰ where the smaller is
// below 2⁻⁹⁶⁰: the numerator is then at least 2⁻⁹⁶⁰ wherever its
// remainder matters, and the partial products stay clear of underflow
// (a number that overflows in the scaling belongs to a quotient that
// rounds to 0 or to ∞ anyway). The special values follow from the same
// formulas: the comparisons are strict, and |x| = ∞ counts as MaxFloat64
// in them, so that 0/0 falls in the first interval and ∞/∞ in the
// third, with c = 1; t is then NaN (from 0/0, ∞/∞, 0·∞), and where t or
// ε is NaN both are replaced by 0 (giving atan 0 and atan 1); |y|/0 and
// ∞/|x| fall in the last interval, with t = 0, and |y|/∞ in the first,
// with t = 0, as fdlibm's answers require.
func Atan2(y, x float64) float64 {
	if x != x || y != y {
		return math.Float64frombits(nanBits)
	}
	ax, ay := math.Abs(x), math.Abs(y)
	// The scaling: by 2⁶⁰⁰ where the smaller is below atan2Small, else
	// by 2⁻⁸ where the larger exceeds atan2Big.
	xc := ax // for the choice of the interval, with ∞ as MaxFloat64
	if ax > atan2Big || ay > atan2Big || ax < atan2Small || ay < atan2Small {
		f := 0x1p-8
		if ax < atan2Small || ay < atan2Small {
			f = 0x1p600
		}
		ax, ay = float64(ax*f), float64(ay*f)
		xc = ax
		if !(ax < math.MaxFloat64) { // only where the larger is large
			xc = math.MaxFloat64
		}
	}
	// n = u·|y| − c·|x| and d = u·|x| + c·|y| for the interval, as the
	// straight-line form computes them for all intervals at once (with
	// h = c·|x| rounded and its error e = c·|x| − h, nonzero for c = 3/2
	// only); each case gives the same bits, or, where |x| = ∞ and the
	// straight-line n is NaN, a t and ε that are then replaced as well.
	var n, d, hi, lo float64
	switch {
	case !(ay > float64(atanB0*xc)): // c = 0
		n, d = ay, ax
	case !(ay > float64(atanB1*xc)): // c = ½
		n, d = ay-float64(0.5*ax), ax+float64(0.5*ay)
		hi, lo = atanHi0, atanLo0
	case !(ay > float64(atanB2*xc)): // c = 1
		n, d = ay-ax, ax+ay
		hi, lo = atanHi1, atanLo1
	case !(ay > float64(atanB3*xc)): // c = 3/2
		h := float64(1.5 * ax)
		e := (ax - h) + float64(0.5*ax)
		n, d = (ay-h)-e, ax+float64(1.5*ay)
		hi, lo = atanHi2, atanLo2
	default: // u = 0, c = 1
		n, d = 0-ax, ay
		hi, lo = atanHi3, atanLo3
	}
	inv := 1 / d
	t := float64(n * inv)
	th := math.Float64frombits(math.Float64bits(t) & tanhCut)
	tl := t - th
	dh := math.Float64frombits(math.Float64bits(d) & tanhCut)
	dl := d - dh
	rem := (((n - float64(th*dh)) - float64(th*dl)) - float64(tl*dh)) - float64(tl*dl)
	eps := float64(rem * inv)
	if t != t || eps != eps {
		t, eps = 0, 0
	}
	z := float64(t * t)
	w := float64(z * z)
	lo += eps - float64(eps*(z-w))
	if math.Signbit(x) {
		pHi := atan2Pi - hi
		pLo := ((atan2Pi - pHi) - hi) - (lo - atan2PiLo)
		hi, lo, t = pHi, pLo, -t
	}
	return math.Copysign(hi-((float64(t*(atanS1(z, w)+atanS2(w)))-lo)-t), y)
}
