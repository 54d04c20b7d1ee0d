package pmath

import "math"

// The constants of Exp, from fdlibm's e_exp.c: ln 2 split in a head
// with 32 significant bits (so that k·ln2Hi is exact for |k| < 2²¹) and
// a tail, and the coefficients of the Remez polynomial R(r²) with
// r·(e^r + 1)/(e^r − 1) ≈ 2 + r²·R(r²) on |r| ≤ ½ln 2.
const (
	ln2Hi  = 6.93147180369123816490e-01 // 0x3FE62E42FEE00000
	ln2Lo  = 1.90821492927058770002e-10 // 0x3DEA39EF35793C76
	invLn2 = 1.44269504088896338700e+00 // 0x3FF71547652B82FE

	expP1 = 1.66666666666666019037e-01
	expP2 = -2.77777777770155933842e-03
	expP3 = 6.61375632143793436117e-05
	expP4 = -1.65339022054652515390e-06
	expP5 = 4.13813679705723846039e-08

	// ExpOverflow is the largest x whose e^x is finite; ExpUnderflow
	// the smallest whose e^x does not round to zero.
	ExpOverflow  = 7.09782712893383973096e+02
	ExpUnderflow = -7.45133219101941108420e+02

	// roundMagic is 1.5·2⁵²: for |v| < 2⁵¹, (v + roundMagic) − roundMagic
	// is v rounded to the nearest integer (ties to even), and the low
	// bits of v + roundMagic hold that integer.
	roundMagic = 6755399441055744.0
)

// Exp returns e^x, faithfully rounded (error below one ulp).
//
//	Exp(+Inf) = +Inf, Exp(x > ExpOverflow) = +Inf
//	Exp(−Inf) = 0, Exp(x < ExpUnderflow) = 0
//	Exp(NaN) = NaN (x itself)
//
// With k = round(x/ln 2) and r = x − k·ln 2 (in two parts, hi − lo),
// e^x = 2^k · e^r and e^r = 1 + r + r·c/(2 − c), c = r − r²·R(r²). The
// power of two is applied as two factors 2^k₁·2^k₂ with k₁ = round(k/2),
// so that both are normal numbers: the first product is exact, and the
// second rounds once, also where the result is subnormal.
func Exp(x float64) float64 {
	switch {
	case x != x:
		return x
	case x > ExpOverflow:
		return math.Inf(1)
	case x < ExpUnderflow:
		return 0
	}
	t := float64(x*invLn2) + roundMagic
	k := t - roundMagic
	hi := x - float64(k*ln2Hi)
	lo := float64(k * ln2Lo)
	r := hi - lo
	rr := float64(r * r)
	p := float64(rr*expP5) + expP4
	p = float64(p*rr) + expP3
	p = float64(p*rr) + expP2
	p = float64(p*rr) + expP1
	p = float64(p * rr)
	c := r - p
	y := 1 - ((lo - float64(r*c)/(2-c)) - hi)
	k1 := (float64(k*0.5) + roundMagic) - roundMagic
	k2 := k - k1
	return float64(y*pow2(k1)) * pow2(k2)
}

// pow2 returns 2^k for an integral k with 2^k normal (|k| ≤ 1022).
func pow2(k float64) float64 {
	return math.Float64frombits(uint64(int64(k)+1023) << 52)
}
