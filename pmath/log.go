package pmath

import "math"

// The coefficients of Log, from fdlibm's e_log.c. With s = f/(2+f) and
// 1+f in [√½, √2), log(1+f) = 2·atanh(s) = f − (f²/2 − s·(f²/2 + R)),
// where R = Lg1·s² + Lg2·s⁴ + … + Lg7·s¹⁴ is the Remez polynomial of
// the tail of 2·atanh's series, split into its odd and even powers of s⁴
// so that the two halves evaluate side by side.
const (
	lg1 = 6.666666666666735130e-01
	lg2 = 3.999999999940941908e-01
	lg3 = 2.857142874366239149e-01
	lg4 = 2.222219843214978396e-01
	lg5 = 1.818357216161805012e-01
	lg6 = 1.531383769920937332e-01
	lg7 = 1.479819860511658591e-01

	// minNormal is the smallest normal float64, 2⁻¹⁰²²; two52 is 2⁵².
	minNormal = 2.2250738585072014e-308
	two52     = 4503599627370496.0

	mantMask = 1<<52 - 1
	oneBits  = 0x3FF0000000000000
	two52Bit = 0x4330000000000000
)

// nanBits is the NaN Log returns for arguments below zero and for NaN:
// one fixed NaN, so that every route gives the same bits.
const nanBits = 0x7FF8000000000001

// Log returns the natural logarithm of x, faithfully rounded (error
// below one ulp).
//
//	Log(+Inf) = +Inf
//	Log(±0) = −Inf
//	Log(x < 0) = NaN, Log(NaN) = NaN
//
// x = 2^k·m with m in [√½, √2) (a subnormal x is first multiplied by
// 2⁵²), f = m − 1, and log x = k·ln 2 + log(1+f), the logarithm of 2
// in two parts so that k·ln2Hi is exact.
func Log(x float64) float64 {
	switch {
	case !(x >= 0):
		return math.Float64frombits(nanBits)
	case x == 0:
		return math.Inf(-1)
	case x > math.MaxFloat64:
		return x
	}
	adj := 0.0
	if x < minNormal {
		x = float64(x * two52)
		adj = -52
	}
	b := math.Float64bits(x)
	// The biased exponent as a double: 2⁵² + e − (2⁵² + 1023), exact.
	k := math.Float64frombits(b>>52|two52Bit) - (two52 + 1023)
	k += adj
	m := math.Float64frombits(b&mantMask | oneBits) // in [1, 2)
	if m >= math.Sqrt2 {
		m = float64(m * 0.5)
		k++
	}
	f := m - 1
	s := f / (2 + f)
	z := float64(s * s)
	w := float64(z * z)
	t1 := float64(w*lg7) + lg5
	t1 = float64(t1*w) + lg3
	t1 = float64(t1*w) + lg1
	t1 = float64(t1 * z)
	t2 := float64(w*lg6) + lg4
	t2 = float64(t2*w) + lg2
	t2 = float64(t2 * w)
	r := t1 + t2
	hfsq := float64(float64(0.5*f) * f)
	return float64(k*ln2Hi) - ((hfsq - (float64(s*(hfsq+r)) + float64(k*ln2Lo))) - f)
}
