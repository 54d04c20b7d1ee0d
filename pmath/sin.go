package pmath

import "math"

// The argument reduction of Sin, Cos and Tan, after fdlibm's
// e_rem_pio2.c and k_rem_pio2.c (Sun Microsystems, 1993, as in FreeBSD's
// msun): x = n·π/2 + r with |r| ≲ π/4, r as a head and a tail (y0 + y1),
// and n mod 4 chooses the kernel and the sign.
//
// For |x| < trigHuge, Cody–Waite with π/2 in three parts of 33 bits and
// a tail: n·pio2_k is exact for |n| ≤ 2²⁰, and fdlibm's three rounds
// (each with its rounding error carried on) give π/2 to about 151 bits,
// enough for every double of that range. fdlibm stops after the first or
// second round where little cancels; here all three always run, with
// the second round's error carried into the third.
const (
	trigInvPio2 = 6.36619772367581382433e-01 // 0x3FE45F306DC9C883, 2/π
	trigPio2x1  = 1.57079632673412561417e+00 // 0x3FF921FB54400000, pio2_1: the first 33 bits of π/2
	trigPio2x2  = 6.07710050630396597660e-11 // 0x3DD0B4611A600000, pio2_2: the next 33 bits
	trigPio2x3  = 2.02226624871116645580e-21 // 0x3BA3198A2E000000, pio2_3: the next 33 bits
	trigPio2x3t = 8.47842766036889956997e-32 // 0x397B839A252049C1, pio2_3t: π/2 − pio2_1 − pio2_2 − pio2_3

	// trigHuge is fdlibm's bound of the medium reduction (high word
	// 0x413921FB, about 2²⁰·π/2): from there on x goes to the
	// Payne–Hanek reduction, trigReduceHuge.
	trigHuge = 0x1.921fbp+20 // 1647099
)

// The constants of trigReduceHuge.
const (
	// (v + trigM76) − trigM76 is v rounded to a multiple of 2²⁴ for
	// |v| < 2⁷⁵, (v + trigM8) − trigM8 to a multiple of 8 for |v| < 2⁵⁴.
	trigM76 = 0x1.8p76
	trigM8  = 0x1.8p55

	// π/2 as a double-double, and its head split in 26 and 27 bits for
	// an exact product.
	trigPio2Hi  = 0x1.921fb54442d18p+0  // 0x3FF921FB54442D18
	trigPio2Lo  = 0x1.1a62633145c07p-54 // 0x3C91A62633145C07, π/2 − trigPio2Hi
	trigPio2HiH = 0x1.921fb5p+0         // trigPio2Hi's first 26 bits
	trigPio2HiL = 0x1.110b46p-26        // trigPio2Hi − trigPio2HiH

	trigExpMask   = 0x7FF0000000000000
	trigSignBit   = 0x8000000000000000
	trigAbsMask   = 0x7FFFFFFFFFFFFFFF
	trigLowWord   = 0xFFFFFFFF
	trigMagicBits = 0x4338000000000000 // the bits of roundMagic
)

// trigTwoOverPi holds 2/π in chunks of 24 bits, c_j = ⌊2/π·2^(24(j+1))⌋
// mod 2²⁴, after three zeros: trigTwoOverPi[j+3] = c_j. The digits are
// those of fdlibm's ipio2 table (k_rem_pio2.c), whose first 49 chunks
// (1176 bits) are what a double needs; TestTrigTwoOverPi checks them
// against 2/π computed with math/big.
var trigTwoOverPi = [...]float64{
	0, 0, 0,
	0xA2F983, 0x6E4E44, 0x1529FC, 0x2757D1, 0xF534DD, 0xC0DB62,
	0x95993C, 0x439041, 0xFE5163, 0xABDEBB, 0xC561B7, 0x246E3A,
	0x424DD2, 0xE00649, 0x2EEA09, 0xD1921C, 0xFE1DEB, 0x1CB129,
	0xA73EE8, 0x8235F5, 0x2EBB44, 0x84E99C, 0x7026B4, 0x5F7E41,
	0x3991D6, 0x398353, 0x39F49C, 0x845F8B, 0xBDF928, 0x3B1FF8,
	0x97FFDE, 0x05980F, 0xEF2F11, 0x8B5A0A, 0x6D1F6D, 0x367ECF,
	0x27CB09, 0xB74F46, 0x3F669E, 0x5FEA2D, 0x7527BA, 0xC7EBE5,
	0xF17B3D, 0x0739F7, 0x8A5292, 0xEA6BFB, 0x5FB11F, 0x8D5D08,
	0x560330,
}

// The kernels' coefficients, from fdlibm's k_sin.c and k_cos.c: on
// |x| ≤ π/4, sin x ≈ x + x³·(S1 + x²·S2 + … + x¹⁰·S6) and
// cos x ≈ 1 − x²/2 + x⁴·(C1 + x²·C2 + … + x¹⁰·C6).
const (
	sinS1 = -1.66666666666666324348e-01 // 0xBFC5555555555549
	sinS2 = 8.33333333332248946124e-03  // 0x3F8111111110F8A6
	sinS3 = -1.98412698298579493134e-04 // 0xBF2A01A019C161D5
	sinS4 = 2.75573137070700676789e-06  // 0x3EC71DE357B1FE7D
	sinS5 = -2.50507602534068634195e-08 // 0xBE5AE5E68A2B9CEB
	sinS6 = 1.58969099521155010221e-10  // 0x3DE5D93A5ACFD57C

	cosC1 = 4.16666666666666019037e-02  // 0x3FA555555555554C
	cosC2 = -1.38888888888741095749e-03 // 0xBF56C16C16C15177
	cosC3 = 2.48015872894767294178e-05  // 0x3EFA01A019CB1590
	cosC4 = -2.75573143513906633035e-07 // 0xBE927E4F809C52AD
	cosC5 = 2.08757232129817482790e-09  // 0x3E21EE9EBDB4B1C4
	cosC6 = -1.13596475577881948265e-11 // 0xBDA8FAE9BE8838D4
)

// The coefficients of the tangent kernel, from fdlibm's k_tan.c:
// tan x ≈ x + T0·x³ + T1·x⁵ + … + T12·x²⁷ on |x| ≤ 0.6744; beyond,
// tan x = tan(π/4 − y)'s transform, with π/4 in two parts.
const (
	tanT0  = 3.33333333333334091986e-01  // 0x3FD5555555555563
	tanT1  = 1.33333333333201242699e-01  // 0x3FC111111110FE7A
	tanT2  = 5.39682539762260521377e-02  // 0x3FABA1BA1BB341FE
	tanT3  = 2.18694882948595424599e-02  // 0x3F9664F48406D637
	tanT4  = 8.86323982359930005737e-03  // 0x3F8226E3E96E8493
	tanT5  = 3.59207910759131235356e-03  // 0x3F6D6D22C9560328
	tanT6  = 1.45620945432529025516e-03  // 0x3F57DBC8FEE08315
	tanT7  = 5.88041240820264096874e-04  // 0x3F4344D8F2F26501
	tanT8  = 2.46463134818469906812e-04  // 0x3F3026F71A8D1068
	tanT9  = 7.81794442939557092300e-05  // 0x3F147E88A03792A6
	tanT10 = 7.14072491382608190305e-05  // 0x3F12B80F32F0A7E9
	tanT11 = -1.85586374855275456654e-05 // 0xBEF375CBDB605373
	tanT12 = 2.59073051863633712884e-05  // 0x3EFB2A7074BF7AD4

	trigPio4   = 7.85398163397448278999e-01 // 0x3FE921FB54442D18
	trigPio4Lo = 3.06161699786838301793e-17 // 0x3C81A62633145C07
	trigTanBig = 0x1.59428p-1               // 0.67433…: high word 0x3FE59428
)

// Sin returns the sine of x (radians), faithfully rounded (error below
// one ulp) for every finite x.
//
//	Sin(±0) = ±0
//	Sin(±Inf) = NaN, Sin(NaN) = NaN (one fixed NaN)
//
// x = n·π/2 + r (see trigReduceHuge and sinCos), and sin x is ±sin r or
// ±cos r by n mod 4, with fdlibm's kernels (k_sin.c, k_cos.c) on r's
// head and tail.
func Sin(x float64) float64 { return sinCos(x, 0) }

// Cos returns the cosine of x (radians), faithfully rounded (error
// below one ulp) for every finite x.
//
//	Cos(±Inf) = NaN, Cos(NaN) = NaN (one fixed NaN)
//
// As Sin, a quarter turn on: cos x = sin(x + π/2), the quadrant n + 1.
func Cos(x float64) float64 { return sinCos(x, 1) }

// sinCos returns sin(x + q·π/2) for q = 0 (Sin) or 1 (Cos).
//
// The reduction x = n·π/2 + y0 + y1, with t = n + roundMagic holding n's
// low bits: for |x| < trigHuge, Cody–Waite with pio2_1, pio2_2, pio2_3 and
// pio2_3t (fdlibm's e_rem_pio2.c), all three rounds, each rounding error
// carried on; beyond, trigReduceHuge. Tan has the same reduction,
// written out (as here: a call would cost a tenth of the time).
func sinCos(x float64, q uint64) float64 {
	if !(math.Abs(x) <= math.MaxFloat64) {
		return math.Float64frombits(nanBits)
	}
	var t, y0, y1 float64
	if math.Abs(x) >= trigHuge {
		t, y0, y1 = trigReduceHuge(x)
	} else {
		t = float64(x*trigInvPio2) + roundMagic
		fn := t - roundMagic // n = round(x·2/π), |n| ≤ 2²⁰
		if fn == 0 {
			// Exactly what the general case gives (every product is +0),
			// sooner.
			y0, y1 = x, 0
		} else {
			w := float64(fn * trigPio2x1)
			r1 := x - w // exact
			w = float64(fn * trigPio2x2)
			r2 := r1 - w
			d := (r1 - r2) - w // r2's rounding error, exactly
			w = float64(fn * trigPio2x3)
			r3 := r2 - w
			e := (r2 - r3) - w // r3's
			w = (float64(fn*trigPio2x3t) - d) - e
			y0 = r3 - w
			y1 = (r3 - y0) - w
		}
	}
	n := math.Float64bits(t) + q
	var s float64
	if n&1 == 0 {
		s = kernelSin(y0, y1)
	} else {
		s = kernelCos(y0, y1)
	}
	return math.Float64frombits(math.Float64bits(s) ^ (n&2)<<62)
}

// Tan returns the tangent of x (radians), faithfully rounded (error
// below one ulp) for every finite x.
//
//	Tan(±0) = ±0
//	Tan(±Inf) = NaN, Tan(NaN) = NaN (one fixed NaN)
//
// x = n·π/2 + r as in Sin, and tan x is tan r for even n, −1/tan r for
// odd n, by fdlibm's kernel (k_tan.c): for |r| ≥ 0.6744 on π/4 − |r|
// (π/4 in two parts), with tan(π/4 − u) = (1 − tan u)/(1 + tan u), and
// −1/tan r split for accuracy. fdlibm's two polynomials in r⁴ are one
// polynomial in r², P, evaluated here by Estrin's scheme (a shorter chain
// of dependent operations).
func Tan(x float64) float64 {
	switch {
	case !(math.Abs(x) <= math.MaxFloat64):
		return math.Float64frombits(nanBits)
	case x == 0:
		return x
	}
	var t, y float64
	if math.Abs(x) >= trigHuge {
		t, x, y = trigReduceHuge(x)
	} else {
		// sinCos' medium reduction, x and y for y0 and y1.
		t = float64(x*trigInvPio2) + roundMagic
		fn := t - roundMagic
		if fn == 0 {
			y = 0
		} else {
			w := float64(fn * trigPio2x1)
			r1 := x - w
			w = float64(fn * trigPio2x2)
			r2 := r1 - w
			d := (r1 - r2) - w
			w = float64(fn * trigPio2x3)
			r3 := r2 - w
			e := (r2 - r3) - w
			w = (float64(fn*trigPio2x3t) - d) - e
			x = r3 - w
			y = (r3 - x) - w
		}
	}
	odd := math.Float64bits(t)&1 != 0
	sgn := math.Float64bits(x) & trigSignBit
	big := math.Abs(x) >= trigTanBig
	if big {
		// x + y becomes π/4 − |x + y|; y is ±0 with x's sign, which the
		// steps keep there.
		ya := math.Float64frombits(math.Float64bits(y) ^ sgn)
		x = -((math.Abs(x) - trigPio4) + (ya - trigPio4Lo))
		y = math.Float64frombits(sgn)
	}
	z := float64(x * x)
	z2 := float64(z * z)
	// P(z) = T1 + T2·z + … + T12·z¹¹ = Q0 + z⁴·(Q1 + z⁴·Q2).
	q2 := (float64(z*tanT10) + tanT9) + float64(z2*(float64(z*tanT12)+tanT11))
	q1 := (float64(z*tanT6) + tanT5) + float64(z2*(float64(z*tanT8)+tanT7))
	q0 := (float64(z*tanT2) + tanT1) + float64(z2*(float64(z*tanT4)+tanT3))
	z4 := float64(z2 * z2)
	p := q1 + float64(z4*q2)
	p = q0 + float64(z4*p)
	s := float64(z * x)
	r := y + float64(z*(float64(s*p)+y)) // tan(x+y) ≈ x + r
	r += float64(s * tanT0)
	w := x + r
	if big {
		v := 1.0 // iy: tan or −1/tan
		if odd {
			v = -1
		}
		u := v - float64((x-(float64(w*w)/(w+v)-r))*2)
		return math.Float64frombits(math.Float64bits(u) ^ sgn)
	}
	if !odd {
		return w
	}
	// −1/w, accurately: w = zh + vv with zh w's high word, a = −1/w and
	// th its high word.
	zh := math.Float64frombits(math.Float64bits(w) &^ trigLowWord)
	vv := r - (zh - x)
	a := -1 / w
	th := math.Float64frombits(math.Float64bits(a) &^ trigLowWord)
	s = float64(th*zh) + 1
	return th + float64(a*(s+float64(th*vv)))
}

// trigReduceHuge is the reduction of Sin, Cos and Tan (see sinCos) for
// |x| ≥ trigHuge, t = n + roundMagic and x = n·π/2 + y0 + y1: a
// Payne–Hanek reduction, fdlibm's __kernel_rem_pio2 rewritten without
// branches and with a fixed number of terms, in exact integer arithmetic
// on doubles until the last steps.
//
// x = (t0 + t1·2⁻²⁴ + t2·2⁻⁴⁸)·2^(e−23) with integers |tᵢ| < 2²⁴ (e the
// exponent of x), and 2/π = Σ c_j·2^(−24(j+1)) (trigTwoOverPi). Of the
// sum x·2/π = Σ_m q_m·2^(e−23−24(m+1)), q_m = Σᵢ tᵢ·c_(m−i), the levels
// m < jv = ⌊(e−26)/24⌋ are multiples of 8 and drop out; levels jv…jv+7
// (q_i below, i = m − jv, weight 2^(q0−24i) with q0 = e − 23 − 24(jv+1)
// in [−21, 2]) hold x·2/π mod 8 to within 2⁻¹⁴⁰. Each q_i is an exact
// integer below 3·2⁴⁸. From the lowest level up, the carries make them
// balanced digits dᵢ in [−2²³, 2²³] (exact), so that what follows a
// digit is at most half a unit of it: the fraction f = x·2/π − n
// (n = round(x·2/π)) then sums without cancellation, even where f is as
// small as 2⁻⁶¹ (trigHardCase in the tests). r = f·π/2 in
// double-double.
func trigReduceHuge(x float64) (t, y0, y1 float64) {
	b := math.Float64bits(x)
	a := math.Float64frombits(b<<1>>53|two52Bit) - (two52 + 1049) // e − 26
	// jv = max(⌊(e−26)/24⌋, −1), in −1 … 41, as StepMax has it (not
	// Go's max: on s390x that is WFMAXDB, which TestNoFusedMultiplyAdd
	// of sym/emitgo takes for a fused multiply–add).
	jv := math.Floor(a / 24)
	if !(jv > -1) {
		jv = -1
	}
	// xt = x·2^(23−e) (exact): the exponent field 2069 − biased e.
	xt := float64(x * math.Float64frombits((b&trigExpMask^trigExpMask)+22<<52))
	xb := math.Float64bits(xt)
	t0 := math.Float64frombits(xb &^ (1<<29 - 1))
	tm := math.Float64frombits(xb &^ (1<<5 - 1))
	t2 := float64((xt - tm) * 0x1p48)
	t1 := float64((tm - t0) * 0x1p24)
	// Level i reads c_(jv+i), c_(jv+i−1), c_(jv+i−2): trigTwoOverPi
	// at idx+2, idx+1, idx with idx = jv + i + 1.
	idx := int(jv) + 8
	var z, lo, hi, d1 float64
	for i := 7; ; i-- {
		if i == 7 {
			z = float64(t0 * trigTwoOverPi[idx+2])
		} else {
			z += float64(t0 * trigTwoOverPi[idx+2])
		}
		z += float64(t1 * trigTwoOverPi[idx+1])
		z += float64(t2 * trigTwoOverPi[idx])
		if i == 0 {
			break
		}
		idx--
		c := (z + trigM76) - trigM76 // the carry, times 2²⁴
		d := z - c                   // the digit
		switch {
		case i == 7:
			lo = d
		case i >= 4: // lo = d₄ + d₅·2⁻²⁴ + d₆·2⁻⁴⁸ + d₇·2⁻⁷² (rounded)
			lo = float64(lo*0x1p-24) + d
		case i == 3:
			hi = d
		case i == 2: // hi = d₂ + d₃·2⁻²⁴ (exact)
			hi = float64(hi*0x1p-24) + d
		default:
			d1 = d
		}
		z = float64(c * 0x1p-24)
	}
	// s = 2^q0, from the biased exponent and idx = jv + 1.
	s := math.Float64frombits(b&trigExpMask - uint64(24*idx+23)<<52)
	z = float64(z * s)
	w := z - ((z + trigM8) - trigM8) // level 0 mod 8, in [−4, 4]
	s = float64(s * 0x1p-24)
	w += float64(d1 * s) // exact
	n := math.RoundToEven(w)
	f := w - n // in [−½, ½], exact
	s = float64(s * 0x1p-24)
	hi = float64(hi * s)
	s = float64(s * 0x1p-48)
	lo = float64(lo * s)
	// fh + fl = f + hi + lo: |f| ≥ 2|hi + lo| where f ≠ 0.
	u := f + hi
	e := hi - (u - f)
	e += lo
	fh := u + e
	fl := e - (fh - u)
	// y0 + y1 = (fh + fl)·π/2, fh·trigPio2Hi exactly (Dekker).
	ph := float64(fh * trigPio2Hi)
	fhh := math.Float64frombits(math.Float64bits(fh) &^ (1<<27 - 1))
	fhl := fh - fhh
	er := float64(fhh*trigPio2HiH) - ph
	er += float64(fhh * trigPio2HiL)
	er += float64(fhl * trigPio2HiH)
	er += float64(fhl * trigPio2HiL)
	er += float64(fh*trigPio2Lo) + float64(fl*trigPio2Hi)
	y0 = ph + er
	y1 = er - (y0 - ph)
	return n + roundMagic, y0, y1
}

// kernelSin returns sin(x + y) for |x| ≲ π/4, |y| ≤ ½ulp(x): fdlibm's
// k_sin.c (iy = 1), sin(x+y) ≈ x − ((z·(y/2 − v·r) − y) − v·S1) with
// z = x², v = z·x and r = S2 + z·S3 + … + z⁴·S6.
func kernelSin(x, y float64) float64 {
	z := float64(x * x)
	w := float64(z * z)
	p := float64(z*sinS6) + sinS5
	p = float64(float64(z*w) * p)
	r := float64(z*sinS4) + sinS3
	r = float64(r*z) + sinS2
	r += p
	v := float64(z * x)
	h := float64(y*0.5) - float64(v*r)
	h = float64(z*h) - y
	h -= float64(v * sinS1)
	return x - h
}

// kernelCos returns cos(x + y) for |x| ≲ π/4, |y| ≤ ½ulp(x): fdlibm's
// k_cos.c (FreeBSD), cos(x+y) ≈ w + (((1 − w) − z/2) + (z·r − x·y)) with
// z = x², w = 1 − z/2 and r = z·C1 + … + z⁶·C6, written with −z/2 so that
// no constant is the first operand of a subtraction.
func kernelCos(x, y float64) float64 {
	z := float64(x * x)
	w := float64(z * z)
	r := float64(z*cosC3) + cosC2
	r = float64(r*z) + cosC1
	r = float64(r * z)
	p := float64(z*cosC6) + cosC5
	p = float64(p*z) + cosC4
	p = float64(float64(w*w) * p)
	r += p
	nhz := float64(z * -0.5)
	hw := nhz + 1       // 1 − z/2
	a := (hw - 1) - nhz // −((1 − hw) − z/2)
	a -= float64(z*r) - float64(x*y)
	return hw - a
}
