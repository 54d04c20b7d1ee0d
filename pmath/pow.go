package pmath

import "math"

// The constants of Pow, from fdlibm's e_pow.c (Sun Microsystems, 1993,
// as distributed with FreeBSD's msun), with the bits its comments give.
//
// log₂ of the mantissa m in [√(3/4), √3) comes from s = (m − b)/(m + b),
// b = 1 (for m below √(3/2)) or 1.5, as log₂ m = log₂ b + (2/(3·ln 2))·
// (3s + s³ + s⁵·R(s²)): powL1…powL6 are the coefficients of the Remez
// polynomial R (fdlibm's "poly coefs for (3/2)*(log(x)-2s-2/3*s**3"),
// powDpH + powDpL is log₂ 1.5 (a head with its low 29 bits zero and a
// tail), powCp is 2/(3·ln 2) and powCpH + powCpL the same in a 24-bit
// head and a tail. 2^r is e^(r·ln 2) with ln 2 = powLg2 or, split,
// powLg2H (21 significant bits) + powLg2L, and e^z comes from the
// polynomial of Exp (expP1…expP5: the same coefficients in e_pow.c).
const (
	powL1 = 5.99999999999994648725e-01 // 0x3FE3333333333303
	powL2 = 4.28571428578550184252e-01 // 0x3FDB6DB6DB6FABFF
	powL3 = 3.33333329818377432918e-01 // 0x3FD55555518F264D
	powL4 = 2.72728123808534006489e-01 // 0x3FD17460A91D4101
	powL5 = 2.30660745775561754067e-01 // 0x3FCD864A93C9DB65
	powL6 = 2.06975017800338417784e-01 // 0x3FCA7E284A454EEF

	powDpH = 5.84962487220764160156e-01  // 0x3FE2B80340000000
	powDpL = 1.35003920212974897128e-08  // 0x3E4CFDEB43CFD006
	powCp  = 9.61796693925975554329e-01  // 0x3FEEC709DC3A03FD
	powCpH = 9.61796700954437255859e-01  // 0x3FEEC709E0000000
	powCpL = -7.02846165095275826516e-09 // 0xBE3E2FE0145B01F5

	powLg2  = 6.93147180559945286227e-01  // 0x3FE62E42FEFA39EF
	powLg2H = 6.93147182464599609375e-01  // 0x3FE62E4300000000
	powLg2L = -1.90465429995776804525e-09 // 0xBE205C610CA86C39

	// The mantissa's intervals, as fdlibm tests its high word: b = 1.5
	// for powT1 ≤ m < powT2 (0x3FF3988F00000000, just above √(3/2), and
	// 0x3FFBB67A00000000, just below √3), and m ≥ powT2 is halved.
	powT1 = 0x1.3988fp0
	powT2 = 0x1.bb67ap0

	// powYMax bounds |y|: beyond 2⁶⁴, y·log₂|x| is beyond ±1100 for
	// every |x| ≠ 1 (|log₂|x|| ≥ 2⁻⁵³), and y is an even integer either
	// way. powZMax bounds y·log₂|x| (its head; its tail is below 1 in
	// magnitude): 2^±1100 overflows and underflows as well as 2^±∞, and
	// its factors 2^±550 are normal.
	powYMax = 0x1p64
	powZMax = 1100

	powTwo53   = 9007199254740992.0 // 2⁵³, which scales a subnormal |x| into the normals
	powHiMask  = 0xFFFFFFFF00000000 // the bits fdlibm keeps where it clears the low word
	powAbsMask = 1<<63 - 1
	powSign    = 1 << 63
)

// Pow returns x**y, the base-x exponential of y, faithfully rounded
// (error below one ulp) where the result is finite and nonzero, also
// where it is subnormal.
//
// Special cases are those of math.Pow (in order, the first that applies):
//
//	Pow(x, ±0) = 1 for any x
//	Pow(1, y) = 1 for any y
//	Pow(x, 1) = x for any x
//	Pow(NaN, y) = NaN
//	Pow(x, NaN) = NaN
//	Pow(±0, y) = ±Inf for y an odd integer < 0
//	Pow(±0, -Inf) = +Inf
//	Pow(±0, +Inf) = +0
//	Pow(±0, y) = +Inf for finite y < 0 and not an odd integer
//	Pow(±0, y) = ±0 for y an odd integer > 0
//	Pow(±0, y) = +0 for finite y > 0 and not an odd integer
//	Pow(-1, ±Inf) = 1
//	Pow(x, +Inf) = +Inf for |x| > 1
//	Pow(x, -Inf) = +0 for |x| > 1
//	Pow(x, +Inf) = +0 for |x| < 1
//	Pow(x, -Inf) = +Inf for |x| < 1
//	Pow(+Inf, y) = +Inf for y > 0
//	Pow(+Inf, y) = +0 for y < 0
//	Pow(-Inf, y) = Pow(-0, -y)
//	Pow(x, y) = NaN for finite x < 0 and finite non-integer y
//
// The NaN it returns is math.NaN()'s, one fixed NaN, except that
// Pow(x, 1) is x itself; math.Pow gives the same bits in all these
// cases but one, x < 0 with y = ±½, where its NaN comes from math.Sqrt.
//
// The algorithm is fdlibm's (e_pow.c): log₂|x| in extra precision as
// t1 + t2 (t1 with its low 32 bits zero), y·log₂|x| as an exact head
// p_h = y₁·t1 (y₁ is y with its low 32 bits zero) and a tail p_l, then
// 2^(p_h+p_l) = 2^n · 2^r with n = round(p_h + p_l) and 2^r = e^(r·ln 2)
// computed as Exp computes e^r. The power of two is applied as Exp
// applies it, as two factors 2^⌊n/2⌋·2^⌈n/2⌉, so that a subnormal
// result is rounded once; results beyond the range (p_h beyond ±1100)
// overflow or underflow through the same products. For x < 0 and an
// integer y, the result is |x|**y with the sign of x**y.
func Pow(x, y float64) float64 {
	switch {
	case y == 0 || x == 1:
		return 1
	case y == 1:
		return x
	case x != x || y != y:
		return math.Float64frombits(nanBits)
	}
	xb := math.Float64bits(x)
	ax := math.Float64frombits(xb & powAbsMask)
	isInt := math.Trunc(y) == y
	h := y * 0.5
	odd := isInt && math.Trunc(h) != h
	var r float64
	switch {
	case ax == 0 || ax > math.MaxFloat64:
		// ±0 and ±Inf: +Inf where log|x| and y have one sign, else +0.
		if (ax-1)*y > 0 {
			r = math.Inf(1)
		}
	case xb>>63 != 0 && !isInt:
		return math.Float64frombits(nanBits)
	default:
		r = powAbs(ax, y)
	}
	if odd && xb>>63 != 0 {
		r = -r
	}
	return r
}

// powAbs returns ax**y for finite ax > 0 and finite y, the main path of
// Pow (PowSteps performs the same operations).
func powAbs(ax, y float64) float64 {
	// log₂ ax = n + log₂ m, with m in [√(3/4), √3) (a subnormal ax is
	// first multiplied by 2⁵³), and log₂ m = log₂ b + log₂(m/b), where
	// b = 1 or 1.5: with s = (m − b)/(m + b), log₂(m/b) =
	// cp·(3s + s³ + s⁵·R(s²)), cp = 2/(3·ln 2), evaluated with s = s_h + s_l
	// (s_h with its low word zero) so that the leading terms are exact.
	adj := 0.0
	if ax < minNormal {
		ax = float64(ax * powTwo53)
		adj = -53
	}
	b := math.Float64bits(ax)
	n := (math.Float64frombits(b>>52|two52Bit) - (two52 + 1023)) + adj
	m := math.Float64frombits(b&mantMask | oneBits) // in [1, 2)
	halved := 0.0
	if m >= powT2 {
		m = float64(m * 0.5)
		halved = 1
	}
	n += halved
	bp, dph, dpl := 1.0, 0.0, 0.0
	if m >= powT1 {
		bp, dph, dpl = 1.5, powDpH, powDpL
	}
	n += dph // exact: n·1 + log₂ 1.5's 23-bit head
	u := m - bp
	d := m + bp
	th := powHi(d) // a head of m + b, so that th + (m − (th − b)) = m + b
	v := 1 / d
	ss := float64(u * v)
	sh := powHi(ss)
	tl := m - (th - bp)
	sl := float64(v * ((u - float64(sh*th)) - float64(sh*tl)))
	s2 := float64(ss * ss)
	p := float64(s2*powL6) + powL5
	p = float64(p*s2) + powL4
	p = float64(p*s2) + powL3
	p = float64(p*s2) + powL2
	p = float64(p*s2) + powL1
	r := float64(float64(s2*s2) * p)
	r += float64(sl * (sh + ss))
	s2 = float64(sh * sh)
	th = powHi((s2 + 3) + r)
	tl = r - ((th - 3) - s2)
	// s·(3 + s² + r) = u + v, then times cp: log₂(m/b) = zh + zl.
	u = float64(sh * th)
	v = float64(sl*th) + float64(tl*ss)
	ph := powHi(u + v)
	pl := v - (ph - u)
	zh := float64(ph * powCpH)
	zl := (float64(ph*powCpL) + float64(pl*powCp)) + dpl
	t1 := powHi((zh + zl) + n)
	t2 := zl - ((t1 - n) - zh)

	// y·log₂ ax = ph + pl, ph = y₁·t1 exact (21 by 21 significant bits).
	yc := powClamp(y, powYMax)
	y1 := powHi(yc)
	pl = float64((yc-y1)*t1) + float64(yc*t2)
	ph = float64(y1 * t1)
	ph = powClamp(ph, powZMax)
	pl = powClamp(pl, 1)

	// 2^(ph+pl) = 2^nf · e^((ph − nf + pl)·ln 2), as in Exp.
	nr := (pl + ph) + roundMagic // nf in its low bits
	nf := nr - roundMagic
	ph -= nf
	t := powHi(pl + ph)
	u = float64(t * powLg2H)
	v = float64((pl-(t-ph))*powLg2) + float64(t*powLg2L)
	z := u + v
	w := v - (z - u)
	tt := float64(z * z)
	p = float64(tt*expP5) + expP4
	p = float64(p*tt) + expP3
	p = float64(p*tt) + expP2
	p = float64(p*tt) + expP1
	t1 = z - float64(p*tt)
	r = float64(z*t1)/(t1-2) - (w + float64(z*w))
	z = 1 - (r - z)
	// 2^⌊nf/2⌋ and 2^⌈nf/2⌉ from nf's low bits: the biased exponents are
	// ⌊(nf + 2046)/2⌋ and ⌊(nf + 2047)/2⌋.
	nb := math.Float64bits(nr)
	return float64(z*math.Float64frombits((nb+2046)>>1<<52)) * math.Float64frombits((nb+2047)>>1<<52)
}

// powHi returns v with the low 32 bits of its bit pattern cleared.
func powHi(v float64) float64 { return math.Float64frombits(math.Float64bits(v) & powHiMask) }

// powClamp returns v limited to [−c, c] as the steps' StepMax and
// StepMin compute it (x86's maxpd and minpd: −c for a NaN v).
func powClamp(v, c float64) float64 {
	if !(v > -c) {
		v = -c
	}
	if !(v < c) {
		v = c
	}
	return v
}
