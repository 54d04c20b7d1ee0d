package pmath

import "math"

// Straight-line forms of Tanh, Atan and Atan2 (see steps.go).

// TanhSteps returns Tanh in straight-line form. The Program is shared:
// do not modify it.
func TanhSteps() *Program { return tanhSteps }

// AtanSteps returns Atan in straight-line form. The Program is shared:
// do not modify it.
func AtanSteps() *Program { return atanSteps }

// Atan2Steps returns Atan2 in straight-line form, a Program of two
// arguments: y in register 0 and x in register 1, so that
// Atan2Steps().Run2(y, x) is Atan2(y, x). The Program is shared: do not
// modify it.
func Atan2Steps() *Program { return atan2Steps }

var (
	tanhSteps  = buildTanh()
	atanSteps  = buildAtan()
	atan2Steps = buildAtan2()
)

// atanSelect appends the choice of atan's interval: four masks, each
// emitted into m by mask(m, bound), each choosing by blends the c, hi
// and lo of the intervals from there on (nested: beyond 39/16 implies
// the three others). m is left holding the last mask, beyond 39/16,
// where u = 0.
func (b *builder) atanSelect(mask func(m int8, bound float64), m, c, hi, lo int8) {
	mask(m, atanB0)
	b.op(StepAnd, c, m, b.f(0.5))
	b.op(StepAnd, hi, m, b.f(atanHi0))
	b.op(StepAnd, lo, m, b.f(atanLo0))
	for _, iv := range []struct{ bound, c, hi, lo float64 }{
		{atanB1, 1, atanHi1, atanLo1},
		{atanB2, 1.5, atanHi2, atanLo2},
		{atanB3, 1, atanHi3, atanLo3},
	} {
		mask(m, iv.bound)
		b.blend(c, c, b.f(iv.c), m)
		b.blend(hi, hi, b.f(iv.hi), m)
		b.blend(lo, lo, b.f(iv.lo), m)
	}
}

// atanTail appends hi − ((t·S − lo) − t), S = s1 + s2 (atanS1 and
// atanS2), leaving the result in hi; z, w, s1 and s2 are scratch.
func (b *builder) atanTail(t, hi, lo, z, w, s1, s2 int8) {
	b.op(StepMul, z, t, t)
	b.op(StepMul, w, z, z)
	b.atanTailZW(t, hi, lo, z, w, s1, s2)
}

// atanTailZW is atanTail with z = t² and w = t⁴ given.
func (b *builder) atanTailZW(t, hi, lo, z, w, s1, s2 int8) {
	b.op(StepMul, s1, w, b.f(aT10))
	for _, k := range []float64{aT8, aT6, aT4, aT2} {
		b.op(StepAdd, s1, s1, b.f(k))
		b.op(StepMul, s1, s1, w)
	}
	b.op(StepAdd, s1, s1, b.f(aT0))
	b.op(StepMul, s1, s1, z)
	b.op(StepMul, s2, w, b.f(aT9))
	for _, k := range []float64{aT7, aT5, aT3, aT1} {
		b.op(StepAdd, s2, s2, b.f(k))
		b.op(StepMul, s2, s2, w)
	}
	b.op(StepAdd, s1, s1, s2) // S
	b.op(StepMul, s1, t, s1)
	b.op(StepSub, s1, s1, lo)
	b.op(StepSub, s1, s1, t)
	b.op(StepSub, hi, hi, s1)
}

// buildAtan writes Atan's operations on |x| (the interval, t =
// (u·|x| − c)/(u + c·|x|) with u cleared by the last mask, the tail),
// x's sign, and x itself where it is NaN.
func buildAtan() *Program {
	var b builder
	const x, a, m, c, hi, lo, n, d = 0, 1, 2, 3, 4, 5, 6, 7
	b.op(StepAnd, a, x, b.k(atanAbsBits))
	b.atanSelect(func(m int8, bound float64) { b.op(StepGE, m, a, b.f(bound)) }, m, c, hi, lo)
	b.op(StepAndNot, n, m, a)
	b.op(StepSub, n, n, c) // u·a − c
	b.op(StepAndNot, d, m, b.f(1))
	b.op(StepMul, m, c, a)
	b.op(StepAdd, d, d, m) // u + c·a
	const t = a
	b.op(StepDiv, t, n, d)
	b.atanTail(t, hi, lo, m, c, n, d)
	const s = m
	b.op(StepAnd, s, x, b.k(atanSignBit))
	b.op(StepOr, hi, hi, s)
	b.op(StepUnord, s, x, x)
	b.blend(hi, hi, x, s)
	b.p.Result = hi
	b.p.Args = 1
	return &b.p
}

// buildAtan2 writes Atan2's operations: the scaling of |x| and |y|,
// the interval chosen by comparing |y| with multiples of |x|, t =
// (u·|y| − c·|x|)/(u·|x| + c·|y|) with its remainder (both replaced by
// 0 where either is NaN), the remainder added to lo, the constants and
// t of π − atan where x ≤ −0, atan's tail, y's sign, and the fixed NaN
// where x or y is NaN.
func buildAtan2() *Program {
	var b builder
	const y, x, ay, ax, r, f, m = 0, 1, 2, 3, 4, 5, 6
	b.op(StepAnd, ay, y, b.k(atanAbsBits))
	b.op(StepAnd, ax, x, b.k(atanAbsBits))
	b.op(StepLoad, f, 0, b.f(1))
	b.op(StepMax, r, ax, ay)
	b.op(StepGT, m, r, b.f(atan2Big))
	b.blend(f, f, b.f(0x1p-8), m)
	b.op(StepMin, r, ax, ay)
	b.op(StepLT, m, r, b.f(atan2Small))
	b.blend(f, f, b.f(0x1p600), m)
	b.op(StepMul, ay, ay, f)
	b.op(StepMul, ax, ax, f)
	const xc = r
	b.op(StepMin, xc, ax, b.f(math.MaxFloat64))
	const mm, c, hi, lo, d = 5, 6, 7, 8, 9
	b.atanSelect(func(m int8, bound float64) {
		b.op(StepMul, m, xc, b.f(bound))
		b.op(StepLT, m, m, ay)
	}, mm, c, hi, lo)
	const tmp, n = r, mm
	b.op(StepAndNot, d, mm, ax)
	b.op(StepMul, tmp, c, ay)
	b.op(StepAdd, d, d, tmp) // u·|x| + c·|y|
	b.op(StepAndNot, n, mm, ay)
	const h, e, cl = ay, r, c
	b.op(StepMul, h, c, ax)
	b.op(StepMin, e, c, b.f(1))
	b.op(StepSub, cl, c, e)
	b.op(StepMul, e, e, ax)
	b.op(StepSub, e, e, h)
	b.op(StepMul, cl, cl, ax)
	b.op(StepAdd, e, e, cl) // c·|x| − h, exact
	b.op(StepSub, n, n, h)
	b.op(StepSub, n, n, e) // u·|y| − c·|x|
	// t = n·(1/d) and ε = (n − t·d)/d, t and d split at 26 bits; t's
	// register holds the partial products, t = th + tl is exact.
	const inv, t, th, tl, dh, dl, p = 2, 4, 6, 10, 3, d, 4
	b.op(StepLoad, inv, 0, b.f(1))
	b.op(StepDiv, inv, inv, d)
	b.op(StepMul, t, n, inv)
	b.op(StepAnd, th, t, b.k(tanhCut))
	b.op(StepSub, tl, t, th)
	b.op(StepAnd, dh, d, b.k(tanhCut))
	b.op(StepSub, dl, d, dh)
	for _, pq := range [][2]int8{{th, dh}, {th, dl}, {tl, dh}, {tl, dl}} {
		b.op(StepMul, p, pq[0], pq[1])
		b.op(StepSub, n, n, p)
	}
	b.op(StepAdd, t, th, tl)
	const eps, g = n, inv
	b.op(StepMul, eps, n, inv)
	b.op(StepUnord, g, t, eps)
	b.op(StepAndNot, t, g, t)
	b.op(StepAndNot, eps, g, eps)
	// lo += ε/(1 + t²) ≈ ε − ε·(t² − t⁴).
	const z, w, q = 3, 6, 9
	b.op(StepMul, z, t, t)
	b.op(StepMul, w, z, z)
	b.op(StepSub, q, z, w)
	b.op(StepMul, q, eps, q)
	b.op(StepSub, eps, eps, q)
	b.op(StepAdd, lo, lo, eps)
	// π − atan where x ≤ −0: H = π − hi, L = ((π − H) − hi) − (lo − πlo),
	// and −t.
	const pi, pHi, pLo = 2, 9, 10
	b.op(StepLoad, pi, 0, b.f(atan2Pi))
	b.op(StepSub, pHi, pi, hi)
	b.op(StepSub, pi, pi, pHi)
	b.op(StepSub, pi, pi, hi)
	b.op(StepSub, pLo, lo, b.f(atan2PiLo))
	b.op(StepSub, pLo, pi, pLo)
	b.blend(hi, hi, pHi, x)
	b.blend(lo, lo, pLo, x)
	b.op(StepXor, pLo, t, b.k(atanSignBit))
	b.blend(t, t, pLo, x)
	b.atanTailZW(t, hi, lo, z, w, 2, 9)
	const s = 3
	b.op(StepAnd, s, y, b.k(atanSignBit))
	b.op(StepOr, hi, hi, s)
	b.op(StepUnord, s, y, x)
	b.blend(hi, hi, b.k(nanBits), s)
	b.p.Result = hi
	b.p.Args = 2
	return &b.p
}

// buildTanh writes Tanh's operations: the second path (fdlibm's exp
// kept unrounded, and the corrected quotient) on |x| clamped to 22,
// then the first (the rational approximation) on |x|, the choice
// between them, x's sign, and x itself where it is NaN.
func buildTanh() *Program {
	var b builder
	const x, a = 0, 1
	b.op(StepAnd, a, x, b.k(atanAbsBits))
	// e^v, v = 2·min(|x|, 22), as in buildExp without the clamps and
	// the special values: k = round(v/ln 2), r = hi − lo.
	const v, t, k, hi, lo = 2, 3, 4, 5, 6
	b.op(StepMin, v, a, b.f(tanhClamp))
	b.op(StepAdd, v, v, v)
	b.op(StepMul, t, v, b.f(invLn2))
	b.op(StepAdd, t, t, b.f(roundMagic))
	b.op(StepSub, k, t, b.f(roundMagic))
	b.op(StepMul, hi, k, b.f(ln2Hi))
	b.op(StepSub, hi, v, hi)
	b.op(StepMul, lo, k, b.f(ln2Lo))
	const r, rr, p = k, v, 7
	b.op(StepSub, r, hi, lo)
	b.op(StepMul, rr, r, r)
	b.op(StepMul, p, rr, b.f(expP5))
	for _, c := range []float64{expP4, expP3, expP2, expP1} {
		b.op(StepAdd, p, p, b.f(c))
		b.op(StepMul, p, p, rr)
	}
	const c, rc, den, q = p, rr, r, lo
	b.op(StepSub, c, r, p)
	b.op(StepMul, rc, r, c)
	b.op(StepLoad, den, 0, b.f(2))
	b.op(StepSub, den, den, c)
	b.op(StepDiv, rc, rc, den)
	b.op(StepSub, q, lo, rc)
	// e^r = 1 − (wh + wl) = yh + yl.
	const wh, wl, one, yh, yl = 4, 6, 5, 7, 2
	b.op(StepSub, wh, q, hi)
	b.op(StepAdd, rc, wh, hi)
	b.op(StepSub, wl, q, rc)
	b.op(StepLoad, one, 0, b.f(1))
	b.op(StepSub, yh, one, wh)
	b.op(StepSub, yl, one, yh)
	b.op(StepSub, yl, yl, wh)
	b.op(StepSub, yl, yl, wl)
	const s = t
	b.op(StepIAdd, s, t, b.k(1023))
	b.shift(StepShl, s, s, 52) // 2^k
	const eh, el = yh, yl
	b.op(StepMul, eh, yh, s)
	b.op(StepMul, el, yl, s)
	// E − 1 = nh + nl, E + 1 = dh + dl.
	const nh, nl, dh, dl = 3, 4, 6, eh
	b.op(StepSub, nh, eh, b.f(1))
	b.op(StepAdd, dh, eh, b.f(1))
	b.op(StepSub, nl, eh, nh)
	b.op(StepSub, dl, eh, dh)
	b.op(StepSub, nl, nl, b.f(1))
	b.op(StepAdd, nl, nl, el)
	b.op(StepAdd, dl, dl, b.f(1))
	b.op(StepAdd, dl, dl, el)
	// The quotient, corrected by its remainder.
	const inv, qt, dt, dr = one, el, 8, dh
	b.op(StepDiv, inv, one, dh)
	b.op(StepMul, qt, nh, inv)
	b.op(StepAnd, qt, qt, b.k(tanhCut))
	b.op(StepAnd, dt, dh, b.k(tanhCut))
	b.op(StepSub, dr, dh, dt)
	b.op(StepAdd, dr, dr, dl)
	const qd, rem = dt, nh
	b.op(StepMul, qd, qt, dt)
	b.op(StepSub, rem, nh, qd)
	b.op(StepAdd, rem, rem, nl)
	b.op(StepMul, qd, qt, dr)
	b.op(StepSub, rem, rem, qd)
	b.op(StepMul, rem, rem, inv)
	const large = 2
	b.op(StepAdd, large, qt, rem)
	// The first path: a + a·s·P(s)/Q(s), s = a².
	const ss, pp, qq, num = 3, 4, 5, 6
	b.op(StepMul, ss, a, a)
	b.op(StepMul, pp, ss, b.f(tanhP0))
	b.op(StepAdd, pp, pp, b.f(tanhP1))
	b.op(StepMul, pp, pp, ss)
	b.op(StepAdd, pp, pp, b.f(tanhP2))
	b.op(StepAdd, qq, ss, b.f(tanhQ0))
	b.op(StepMul, qq, qq, ss)
	b.op(StepAdd, qq, qq, b.f(tanhQ1))
	b.op(StepMul, qq, qq, ss)
	b.op(StepAdd, qq, qq, b.f(tanhQ2))
	b.op(StepMul, num, a, ss)
	b.op(StepMul, num, num, pp)
	b.op(StepDiv, num, num, qq)
	b.op(StepAdd, num, a, num)
	const m = 3
	b.op(StepLT, m, a, b.f(tanhSplit))
	b.blend(large, large, num, m)
	b.op(StepXor, m, x, a) // x's sign bit
	b.op(StepOr, large, large, m)
	b.op(StepUnord, m, x, x)
	b.blend(large, large, x, m)
	b.p.Result = large
	b.p.Args = 1
	return &b.p
}
