package pmath

import "math"

// SinSteps returns Sin in straight-line form. The Program is shared: do
// not modify it.
func SinSteps() *Program { return sinSteps }

// CosSteps returns Cos in straight-line form. The Program is shared: do
// not modify it.
func CosSteps() *Program { return cosSteps }

// TanSteps returns Tan in straight-line form. The Program is shared: do
// not modify it.
func TanSteps() *Program { return tanSteps }

var (
	sinSteps = buildSinCos(false)
	cosSteps = buildSinCos(true)
	tanSteps = buildTan()
)

// The registers of the reduction's results (trigReduceSteps).
const (
	trigRegT, trigRegY0, trigRegY1 = 1, 6, 8
)

// trigReduceSteps writes the reduction of sinCos and Tan (t = n +
// roundMagic, and y0 + y1): trigReduceHuge's in a StepIfAny block under
// |x| ≥ trigHuge (its results in registers 2, 3 and 4), the medium one
// in the other registers, then the blends of the huge one's results.
// The results are in trigRegT, trigRegY0 and trigRegY1; registers 2, 3,
// 4, 5, 7 and 9 are free after it. The gather table must be the
// Program's first constants (trigTable).
func trigReduceSteps(b *builder) {
	const x, m = 0, 1
	b.op(StepAnd, m, x, b.k(trigAbsMask))
	b.op(StepGE, m, m, b.f(trigHuge))
	b.ifAny(m)
	hy0, hy1, ht := trigReduceHugeSteps(b)
	b.end()
	// The medium reduction, in the registers the block's results leave.
	const t, fn, r1, w, r2, r3 = trigRegT, 5, trigRegY0, 7, trigRegY1, 9
	b.op(StepMul, t, x, b.f(trigInvPio2))
	b.op(StepAdd, t, t, b.f(roundMagic))
	b.op(StepSub, fn, t, b.f(roundMagic))
	b.op(StepMul, w, fn, b.f(trigPio2x1))
	b.op(StepSub, r1, x, w)
	b.op(StepMul, w, fn, b.f(trigPio2x2))
	b.op(StepSub, r2, r1, w)
	b.op(StepSub, r1, r1, r2)
	b.op(StepSub, r1, r1, w) // d, r2's rounding error
	b.op(StepMul, w, fn, b.f(trigPio2x3))
	b.op(StepSub, r3, r2, w)
	b.op(StepSub, r2, r2, r3)
	b.op(StepSub, r2, r2, w) // e, r3's
	b.op(StepMul, w, fn, b.f(trigPio2x3t))
	b.op(StepSub, w, w, r1)
	b.op(StepSub, w, w, r2)
	const y0, y1 = trigRegY0, trigRegY1
	b.op(StepSub, y0, r3, w)
	b.op(StepSub, y1, r3, y0)
	b.op(StepSub, y1, y1, w)
	// The huge results where |x| ≥ trigHuge.
	b.op(StepAnd, fn, x, b.k(trigAbsMask))
	b.op(StepGE, fn, fn, b.f(trigHuge))
	b.blend(y0, y0, hy0, fn)
	b.blend(y1, y1, hy1, fn)
	b.blend(t, t, ht, fn)
}

// trigTable is the gather table of trigReduceHugeSteps, the bits of
// trigTwoOverPi.
func trigTable() []uint64 {
	bits := make([]uint64, len(trigTwoOverPi))
	for i, c := range trigTwoOverPi {
		bits[i] = math.Float64bits(c)
	}
	return bits
}

// trigReduceHugeSteps writes trigReduceHuge's operations, in registers
// 1 to 9, and returns the registers of y0, y1 and t. The table must be
// the Program's first constants, so that operand −1 − k names
// trigTwoOverPi[k] (the gathers read it at idx, idx+1 and idx+2: at
// tables starting 0, 1 and 2 entries in).
func trigReduceHugeSteps(b *builder) (y0, y1, t int8) {
	const x = 0
	const idx, xt, t0, t1, t2 = 1, 2, 3, 4, 5
	b.shift(StepShl, idx, x, 1)
	b.shift(StepShr, idx, idx, 53)
	b.op(StepOr, idx, idx, b.k(two52Bit))
	b.op(StepSub, idx, idx, b.f(two52+1049)) // e − 26
	b.op(StepDiv, idx, idx, b.f(24))
	b.round(idx, idx, 1)
	b.op(StepMax, idx, idx, b.f(-1)) // jv, clamped for every argument
	b.op(StepAdd, idx, idx, b.f(roundMagic))
	b.op(StepISub, idx, idx, b.k(trigMagicBits-8)) // jv + 8, an integer
	b.op(StepAnd, xt, x, b.k(trigExpMask))
	b.op(StepXor, xt, xt, b.k(trigExpMask))
	b.op(StepIAdd, xt, xt, b.k(22<<52))
	b.op(StepMul, xt, x, xt) // x·2^(23−e)
	b.op(StepAnd, t0, xt, b.k(^uint64(1<<29-1)))
	b.op(StepAnd, t1, xt, b.k(^uint64(1<<5-1)))
	b.op(StepSub, t2, xt, t1)
	b.op(StepMul, t2, t2, b.f(0x1p48))
	b.op(StepSub, t1, t1, t0)
	b.op(StepMul, t1, t1, b.f(0x1p24))
	// The levels, from 7 to 0: z accumulates, then splits in the digit
	// (left in z) and the carry (c, times 2⁻²⁴ the next level's z).
	// Registers change roles from level to level; lo and hi collect the
	// digits as in trigReduceHuge, d1 is digit 1.
	const tab = -1 // trigTwoOverPi[0]
	z, lo := int8(6), int8(-1)
	var hi, d1 int8
	free := []int8{7, xt, 8, 9}
	for i := 7; i >= 0; i-- {
		tmp := free[0]
		for k, ti := range []int8{t0, t1, t2} {
			b.gather(tmp, idx, tab-int8(2-k))
			if i == 7 && k == 0 {
				b.op(StepMul, z, tmp, ti)
				continue
			}
			b.op(StepMul, tmp, tmp, ti)
			b.op(StepAdd, z, z, tmp)
		}
		if i == 0 {
			break
		}
		b.op(StepIAdd, idx, idx, b.k(^uint64(0))) // idx − 1
		c := tmp
		b.op(StepAdd, c, z, b.f(trigM76))
		b.op(StepSub, c, c, b.f(trigM76))
		b.op(StepSub, z, z, c)
		switch {
		case i == 7:
			lo = z
		case i >= 4:
			b.op(StepMul, lo, lo, b.f(0x1p-24))
			b.op(StepAdd, lo, lo, z)
			free = append(free, z)
		case i == 3:
			hi = z
		case i == 2:
			b.op(StepMul, hi, hi, b.f(0x1p-24))
			b.op(StepAdd, hi, hi, z)
			free = append(free, z)
		default:
			d1 = z
		}
		b.op(StepMul, c, c, b.f(0x1p-24))
		z, free = c, free[1:]
	}
	// Here idx, z (level 0) = 8, lo = 6, hi = 9 and d1 = 2; t0, t1, t2
	// and 7 are free. The results go to 2, 3 and 4, which the medium
	// reduction leaves alone.
	if z != 8 || lo != 6 || hi != 9 || d1 != 2 {
		panic("pmath: trigReduceHugeSteps' registers")
	}
	const s, u = 4, 3
	// s = 2^q0, from idx = jv + 1: (biased e − 24·idx − 23) << 52.
	b.shift(StepShl, u, idx, 4)
	b.shift(StepShl, s, idx, 3)
	b.op(StepIAdd, u, u, s)
	b.op(StepIAdd, u, u, b.k(23))
	b.shift(StepShl, u, u, 52)
	b.op(StepAnd, s, x, b.k(trigExpMask))
	b.op(StepISub, s, s, u)
	b.op(StepMul, z, z, s)
	b.op(StepAdd, u, z, b.f(trigM8))
	b.op(StepSub, u, u, b.f(trigM8))
	b.op(StepSub, z, z, u) // level 0 mod 8
	b.op(StepMul, s, s, b.f(0x1p-24))
	b.op(StepMul, d1, d1, s)
	b.op(StepAdd, z, z, d1)
	const n, f = 2, 8
	b.round(n, z, 0)
	b.op(StepSub, f, z, n)
	b.op(StepAdd, n, n, b.f(roundMagic))
	b.op(StepMul, s, s, b.f(0x1p-24))
	b.op(StepMul, hi, hi, s)
	b.op(StepMul, s, s, b.f(0x1p-48))
	b.op(StepMul, lo, lo, s)
	// fh + fl = f + hi + lo.
	const fh, fl = 5, 4
	b.op(StepAdd, u, f, hi)
	b.op(StepSub, fl, u, f)
	b.op(StepSub, fl, hi, fl)
	b.op(StepAdd, fl, fl, lo)
	b.op(StepAdd, fh, u, fl)
	b.op(StepSub, u, fh, u)
	b.op(StepSub, fl, fl, u)
	// y0 + y1 = (fh + fl)·π/2.
	const ph, fhh, fhl, er, p, q = 1, 3, 6, 7, 8, 9
	b.op(StepMul, ph, fh, b.f(trigPio2Hi))
	b.op(StepAnd, fhh, fh, b.k(^uint64(1<<27-1)))
	b.op(StepSub, fhl, fh, fhh)
	b.op(StepMul, er, fhh, b.f(trigPio2HiH))
	b.op(StepSub, er, er, ph)
	b.op(StepMul, p, fhh, b.f(trigPio2HiL))
	b.op(StepAdd, er, er, p)
	b.op(StepMul, p, fhl, b.f(trigPio2HiH))
	b.op(StepAdd, er, er, p)
	b.op(StepMul, p, fhl, b.f(trigPio2HiL))
	b.op(StepAdd, er, er, p)
	b.op(StepMul, p, fh, b.f(trigPio2Lo))
	b.op(StepMul, q, fl, b.f(trigPio2Hi))
	b.op(StepAdd, p, p, q)
	b.op(StepAdd, er, er, p)
	b.op(StepAdd, 3, ph, er)
	b.op(StepSub, 4, 3, ph)
	b.op(StepSub, 4, er, 4)
	return 3, 4, n
}

// buildSinCos writes Sin's operations, or Cos's (the quadrant one on):
// the reduction, both kernels on y0 + y1, the selection by n mod 4, and
// the NaN of Inf and NaN (the only arguments whose result is NaN before
// it).
func buildSinCos(cos bool) *Program {
	var b builder
	b.table(trigTable())
	trigReduceSteps(&b)
	const t, y0, y1 = trigRegT, trigRegY0, trigRegY1
	if cos {
		b.op(StepIAdd, t, t, b.k(1))
	}
	const z, w, p, r, s, h = 2, 3, 4, 5, 7, 9
	b.op(StepMul, z, y0, y0)
	b.op(StepMul, w, z, z)
	// The sine kernel.
	b.op(StepMul, p, z, b.f(sinS6))
	b.op(StepAdd, p, p, b.f(sinS5))
	b.op(StepMul, r, z, w)
	b.op(StepMul, p, r, p)
	b.op(StepMul, r, z, b.f(sinS4))
	b.op(StepAdd, r, r, b.f(sinS3))
	b.op(StepMul, r, r, z)
	b.op(StepAdd, r, r, b.f(sinS2))
	b.op(StepAdd, r, r, p)
	const v = p
	b.op(StepMul, v, z, y0)
	b.op(StepMul, s, y1, b.f(0.5))
	b.op(StepMul, r, v, r)
	b.op(StepSub, s, s, r)
	b.op(StepMul, s, z, s)
	b.op(StepSub, s, s, y1)
	b.op(StepMul, v, v, b.f(sinS1))
	b.op(StepSub, s, s, v)
	b.op(StepSub, s, y0, s) // sin(y0 + y1)
	// The cosine kernel.
	const c, nhz = r, h
	b.op(StepMul, p, z, b.f(cosC3))
	b.op(StepAdd, p, p, b.f(cosC2))
	b.op(StepMul, p, p, z)
	b.op(StepAdd, p, p, b.f(cosC1))
	b.op(StepMul, p, p, z)
	b.op(StepMul, r, z, b.f(cosC6))
	b.op(StepAdd, r, r, b.f(cosC5))
	b.op(StepMul, r, r, z)
	b.op(StepAdd, r, r, b.f(cosC4))
	b.op(StepMul, w, w, w)
	b.op(StepMul, r, w, r)
	b.op(StepAdd, p, p, r)
	b.op(StepMul, nhz, z, b.f(-0.5))
	b.op(StepAdd, c, nhz, b.f(1))
	b.op(StepSub, w, c, b.f(1))
	b.op(StepSub, nhz, w, nhz)
	b.op(StepMul, p, z, p)
	b.op(StepMul, w, y0, y1)
	b.op(StepSub, p, p, w)
	b.op(StepSub, nhz, nhz, p)
	b.op(StepSub, c, c, nhz) // cos(y0 + y1)
	// sin x is sin, cos, −sin, −cos for n mod 4 = 0, 1, 2, 3.
	const m = z
	b.shift(StepShl, m, t, 63)
	b.blend(s, s, c, m)
	b.shift(StepShl, m, t, 62)
	b.op(StepAnd, m, m, b.k(trigSignBit))
	b.op(StepXor, s, s, m)
	b.op(StepUnord, m, s, s)
	b.blend(s, s, b.k(nanBits), m)
	b.p.Result = s
	b.p.Args = 1
	return &b.p
}

// buildTan writes Tan's operations: the reduction, then Tan's kernel
// with both of its transforms (|y0| ≥ 0.6744, and −1/tan for odd n)
// computed and selected, then ±0 and the NaN of Inf and NaN. For the
// registers, y0's sign rides in y1 (±0 there) where |y0| ≥ 0.6744, and
// n's parity in the sign bit of that mask (flipped where it is set).
func buildTan() *Program {
	var b builder
	b.table(trigTable())
	trigReduceSteps(&b)
	const x = 0
	const odd, y0, y1 = trigRegT, trigRegY0, trigRegY1
	const xa, big, sgn, ya = 2, 3, 4, 5
	b.shift(StepShl, odd, odd, 63) // n odd: the sign bit
	b.op(StepAnd, xa, y0, b.k(trigAbsMask))
	b.op(StepGE, big, xa, b.f(trigTanBig))
	b.op(StepXor, sgn, y0, xa) // ±0
	b.op(StepXor, ya, y1, sgn)
	b.op(StepSub, xa, xa, b.f(trigPio4))
	b.op(StepSub, ya, ya, b.f(trigPio4Lo))
	b.op(StepAdd, xa, xa, ya)
	b.op(StepXor, xa, xa, b.k(trigSignBit)) // π/4 − |y0 + y1|
	const xk, yk, bo = y0, y1, big
	b.blend(xk, y0, xa, big)
	b.blend(yk, y1, sgn, big)
	b.op(StepXor, bo, big, odd)
	// P(z) = Q0 + z⁴·(Q1 + z⁴·Q2), as Tan.
	const z, z2, a, p, q, z4 = 1, 2, 4, 5, 7, 9
	b.op(StepMul, z, xk, xk)
	b.op(StepMul, z2, z, z)
	quartic := func(dst int8, c0, c1, c2, c3 float64) { // (c0 + c1·z) + z²·(c2 + c3·z)
		b.op(StepMul, a, z, b.f(c3))
		b.op(StepAdd, a, a, b.f(c2))
		b.op(StepMul, a, z2, a)
		b.op(StepMul, dst, z, b.f(c1))
		b.op(StepAdd, dst, dst, b.f(c0))
		b.op(StepAdd, dst, dst, a)
	}
	quartic(p, tanT9, tanT10, tanT11, tanT12)
	quartic(q, tanT5, tanT6, tanT7, tanT8)
	b.op(StepMul, z4, z2, z2)
	b.op(StepMul, p, z4, p)
	b.op(StepAdd, p, q, p)
	quartic(q, tanT1, tanT2, tanT3, tanT4)
	b.op(StepMul, p, z4, p)
	b.op(StepAdd, p, q, p)
	const s, r, tw = z2, p, q
	b.op(StepMul, s, z, xk)
	b.op(StepMul, r, s, p)
	b.op(StepAdd, r, r, yk)
	b.op(StepMul, r, z, r)
	b.op(StepAdd, r, yk, r)
	b.op(StepMul, a, s, b.f(tanT0))
	b.op(StepAdd, r, r, a)
	b.op(StepAdd, tw, xk, r) // w = x + r
	// |y0| ≥ 0.6744: ±(iy − 2(x − (w²/(w + iy) − r))), iy = ±1.
	const iy, bg, d = 1, 2, 4
	b.op(StepAndNot, iy, bo, b.k(trigSignBit))
	b.op(StepOr, iy, iy, b.f(1))
	b.op(StepMul, bg, tw, tw)
	b.op(StepAdd, d, tw, iy)
	b.op(StepDiv, bg, bg, d)
	b.op(StepSub, bg, bg, r)
	b.op(StepSub, bg, xk, bg)
	b.op(StepMul, bg, bg, b.f(2))
	b.op(StepSub, bg, iy, bg)
	b.op(StepAnd, d, yk, b.k(trigSignBit))
	b.op(StepXor, bg, bg, d)
	// Odd n: −1/w, accurately.
	const zh, vv, ia, th, o = 1, 4, 5, 6, 8
	b.op(StepAnd, zh, tw, b.k(^uint64(trigLowWord)))
	b.op(StepSub, vv, zh, xk)
	b.op(StepSub, vv, r, vv)
	b.op(StepLoad, ia, 0, b.f(-1))
	b.op(StepDiv, ia, ia, tw)
	b.op(StepAnd, th, ia, b.k(^uint64(trigLowWord)))
	b.op(StepMul, o, th, zh)
	b.op(StepAdd, o, o, b.f(1))
	b.op(StepMul, vv, th, vv)
	b.op(StepAdd, o, o, vv)
	b.op(StepMul, o, ia, o)
	b.op(StepAdd, o, th, o)
	// Select (bo's sign bit is n's parity where |y0| < 0.6744, its
	// next bit the mask), then tan ±0 = ±0 and the NaN.
	const m = 1
	b.blend(tw, tw, o, bo)
	b.shift(StepShl, m, bo, 1)
	b.blend(tw, tw, bg, m)
	b.op(StepEQ, m, x, b.f(0))
	b.blend(tw, tw, x, m)
	b.op(StepUnord, m, tw, tw)
	b.blend(tw, tw, b.k(nanBits), m)
	b.p.Result = tw
	b.p.Args = 1
	return &b.p
}
