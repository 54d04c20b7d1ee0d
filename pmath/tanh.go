package pmath

import "math"

// Tanh is not fdlibm's. fdlibm's s_tanh.c takes tanh from expm1 as
// −t/(t+2) or 1 − 2/(t+2), and the roundings of t, of t + 2 and of the
// quotient add up: measured against the 256-bit reference, its error
// reaches 2.07 ulp (near |x| = 0.25). It is not faithful. Tanh here has
// two paths, split at |x| = 0.4, each faithful with a margin on its
// side:
//
// Below 0.4, tanh x = x + x·s·P(s)/Q(s), s = x², the rational
// approximation of the Cephes library (S. L. Moshier, tanh.c, as in Go's
// math/tanh.go), with its coefficients. The correction x·s·P/Q is below
// 6% of the result, so its few ulps of rounding count for a fraction of
// an ulp, and the sum is rounded once.
//
// From 0.4 on, tanh|x| = (E − 1)/(E + 1) with E = e^(2|x|) > 2, without
// a rounding that matters: e^(2|x|) = 2^k·e^r as in fdlibm's e_exp.c
// (Exp), but e^r = 1 − w is kept as a sum of doubles, yh + yl, with w
// itself a sum of two (the rounding of its last subtraction recovered
// by Fast2Sum), so that E's relative error is that of the polynomial
// term r·c/(2 − c), below ⅓·2⁻⁵³ (measured); 2^k·(yh + yl) is exact.
// E − 1 = nh + nl and E + 1 = dh + dl are exact sums of two doubles
// (Fast2Sum, E ≥ 1), and their quotient is q + (N − q·D)/D: q =
// nh·(1/dh) with the low 27 bits of its mantissa cleared, so that q and
// dt (dh cut the same way) have 26 significant bits and q·dt is exact;
// the remainder's other terms are small and summed in double. E's
// error reaches the result multiplied by 2E/(E² − 1) ≤ 1.13, which
// leaves the error below 0.3 ulp plus the final rounding.
//
// |x| is clamped to 22 on the second path (tanh x rounds to ±1 from
// |x| ≈ 19.06 on), so that 2^k stays a normal number there.
const (
	tanhP0 = -9.64399179425052238628e-1
	tanhP1 = -9.92877231001918586564e1
	tanhP2 = -1.61468768441708447952e3
	tanhQ0 = 1.12811678491632931402e2
	tanhQ1 = 2.23548839060100448583e3
	tanhQ2 = 4.84406305325125486048e3

	// tanhSplit is the bound between the two paths; tanhClamp the
	// largest |x| the second path sees.
	tanhSplit = 0.4
	tanhClamp = 22

	// tanhCut clears the low 27 bits of a double's mantissa, leaving
	// 26 significant bits.
	tanhCut = 0xFFFFFFFFF8000000
)

// Tanh returns the hyperbolic tangent of x, faithfully rounded (error
// below one ulp).
//
//	Tanh(±0) = ±0
//	Tanh(±Inf) = ±1
//	Tanh(NaN) = NaN (x itself)
//
// Tanh is odd: tanh x = sign(x)·tanh|x|. See the comment on the
// constants above for the method (the rational approximation of Cephes
// below |x| = 0.4, fdlibm's exp with a corrected quotient above).
func Tanh(x float64) float64 {
	if x != x {
		return x
	}
	a := math.Abs(x)
	var z float64
	if a < tanhSplit {
		z = tanhSmall(a)
	} else {
		z = tanhLarge(a)
	}
	return math.Copysign(z, x)
}

// tanhSmall returns tanh a for 0 ≤ a < 0.4: a + a·s·P(s)/Q(s).
func tanhSmall(a float64) float64 {
	s := float64(a * a)
	p := float64(s*tanhP0) + tanhP1
	p = float64(p*s) + tanhP2
	q := s + tanhQ0
	q = float64(q*s) + tanhQ1
	q = float64(q*s) + tanhQ2
	return a + float64(float64(a*s)*p)/q
}

// tanhLarge returns tanh a for a ≥ 0.4: (E − 1)/(E + 1), E = e^(2a),
// a clamped to 22.
func tanhLarge(a float64) float64 {
	if !(a < tanhClamp) {
		a = tanhClamp
	}
	v := a + a
	// e^v = 2^k·e^r as in Exp; here k ≤ 64, one factor 2^k.
	t := float64(v*invLn2) + roundMagic
	k := t - roundMagic
	hi := v - float64(k*ln2Hi)
	lo := float64(k * ln2Lo)
	r := hi - lo
	rr := float64(r * r)
	p := float64(rr*expP5) + expP4
	p = float64(p*rr) + expP3
	p = float64(p*rr) + expP2
	p = float64(p*rr) + expP1
	p = float64(p * rr)
	c := r - p
	q := lo - float64(r*c)/(2-c)
	wh := q - hi
	wl := q - (wh + hi) // e^r = 1 − (wh + wl); exact unless |q| > |hi|, where both are tiny
	yh := 1 - wh
	yl := ((1 - yh) - wh) - wl // e^r = yh + yl, |wh| < 1
	s := math.Float64frombits((math.Float64bits(t) + 1023) << 52)
	eh := float64(yh * s)
	el := float64(yl * s) // E = eh + el, both products exact
	nh := eh - 1
	dh := eh + 1
	nl := ((eh - nh) - 1) + el // E − 1 = nh + nl
	dl := ((eh - dh) + 1) + el // E + 1 = dh + dl
	inv := 1 / dh
	qt := math.Float64frombits(math.Float64bits(float64(nh*inv)) & tanhCut)
	dt := math.Float64frombits(math.Float64bits(dh) & tanhCut)
	dr := (dh - dt) + dl                                 // D = dt + dr
	rem := ((nh - float64(qt*dt)) + nl) - float64(qt*dr) // N − qt·D, qt·dt exact
	return qt + float64(rem*inv)
}
