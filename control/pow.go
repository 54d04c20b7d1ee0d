package control

import "math"

// Pow returns x^a for finite x > 0 and finite a, as 2^(a·log₂x) with
// fixed polynomials. It exists for two reasons: it costs a fraction of
// math.Pow (which, with math.Exp and math.Log, costs 60–100 ns here and
// would dominate a step-size controller on small systems), and it is
// plain arithmetic with every product rounded before it is added, so it
// gives bitwise the same result on every platform, and an emitted
// engine (C, CUDA) can reproduce it exactly; math.Pow uses assembly on
// some architectures and pure Go on others.
//
// Its relative error is below (8 + |a·log₂x|)·ε (tested against
// math.Pow), about 1e-14 for the exponents a controller meets and far
// below what a step-size factor needs. For x ≤ 0, NaN,
// ±Inf or a non-finite a it returns NaN.
func Pow(x, a float64) float64 {
	if !(x > 0) || x > math.MaxFloat64 || math.IsNaN(a) || math.IsInf(a, 0) {
		return math.NaN()
	}
	return exp2(float64(a * log2(x)))
}

// The polynomials below are evaluated by Estrin's scheme: pairs, then
// pairs of pairs, so the dependency chain is four multiply–adds deep
// instead of a dozen, which is what makes them fast. Every product is
// rounded before it is added (explicit float64 conversions), so no
// platform fuses them. Coefficients are multiplied as rounded
// reciprocals (z·(1/7), not z/7): a division costs several
// multiplications' time, and the rounding of a reciprocal constant
// changes the result by less than an ulp of the whole.

// log2 returns log₂x for finite x > 0: x = m·2^e with m ∈ [√½, √2), and
// ln m = 2·atanh(s) = 2·s·(1 + s²/3 + s⁴/5 + … + s¹⁶/17), s = (m−1)/(m+1),
// |s| ≤ 0.1716, truncation error < 2·s¹⁹/19 ≈ 3e-16.
func log2(x float64) float64 {
	m, e := frexp(x) // m ∈ [0.5, 1)
	if m < math.Sqrt2/2 {
		m *= 2
		e--
	}
	s := (m - 1) / (m + 1)
	z := float64(s * s)
	z2 := float64(z * z)
	z4 := float64(z2 * z2)
	z8 := float64(z4 * z4)
	p01 := 1 + float64(z*(1.0/3))
	p23 := 1.0/5 + float64(z*(1.0/7))
	p45 := 1.0/9 + float64(z*(1.0/11))
	p67 := 1.0/13 + float64(z*(1.0/15))
	q0 := p01 + float64(z2*p23)
	q1 := p45 + float64(z2*p67)
	r0 := q0 + float64(z4*q1)
	p := r0 + float64(z8*(1.0/17))
	lnm := float64(2 * s * p)
	return float64(e) + float64(lnm*math.Log2E)
}

// exp2 returns 2^y: y = n + f with n = round(y), |f| ≤ ½, and
// 2^f = e^g, g = f·ln 2, |g| ≤ 0.347, by its Taylor polynomial of degree
// 13 (truncation error < g¹⁴/14! ≈ 4e-18).
func exp2(y float64) float64 {
	if y > 1024 {
		return math.Inf(1)
	}
	if y < -1075 {
		return 0
	}
	n := math.Round(y)
	g := float64((y - n) * math.Ln2)
	g2 := float64(g * g)
	g4 := float64(g2 * g2)
	g8 := float64(g4 * g4)
	p01 := 1 + g
	p23 := 0.5 + float64(g*(1.0/6))
	p45 := 1.0/24 + float64(g*(1.0/120))
	p67 := 1.0/720 + float64(g*(1.0/5040))
	p89 := 1.0/40320 + float64(g*(1.0/362880))
	p1011 := 1.0/3628800 + float64(g*(1.0/39916800))
	p1213 := 1.0/479001600 + float64(g*(1.0/6227020800))
	q0 := p01 + float64(g2*p23)
	q1 := p45 + float64(g2*p67)
	q2 := p89 + float64(g2*p1011)
	r0 := q0 + float64(g4*q1)
	r1 := q2 + float64(g4*p1213)
	p := r0 + float64(g8*r1)
	if n < -1021 || n > 1022 {
		return math.Ldexp(p, int(n)) // p·2^n may be subnormal or overflow
	}
	// p ∈ [0.7, 1.5] and 2^n normal: the product is exact.
	return p * math.Float64frombits(uint64(int64(n)+1023)<<52)
}

// frexp is math.Frexp for the finite x > 0 this package meets, with the
// exponent read from the bits for normal x (math.Frexp's general
// handling costs more than the polynomial here).
func frexp(x float64) (m float64, e int) {
	b := math.Float64bits(x)
	be := int(b>>52) & 0x7ff
	if be == 0 || be == 0x7ff {
		return math.Frexp(x) // subnormal, Inf or NaN
	}
	return math.Float64frombits(b&^(0x7ff<<52) | 1022<<52), be - 1022
}

// MaxAbs returns max(|x|, |y|), NaN if either is NaN, in a form the
// compiler inlines: math.Max is an assembly call on amd64, and the
// error norms of erk and ros take this maximum once per component and
// step. It gives math.Max(|x|, |y|)'s bits except when one argument is
// infinite and the other NaN (math.Max says +Inf, MaxAbs NaN); the
// norms reject such a step either way, because the proposal is not
// finite.
func MaxAbs(x, y float64) float64 {
	a, b := math.Abs(x), math.Abs(y)
	if b > a || b != b {
		return b
	}
	return a
}
