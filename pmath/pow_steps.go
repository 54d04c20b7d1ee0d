package pmath

import "math"

// PowSteps returns Pow in straight-line form: two arguments, x in
// register 0 and y in register 1, and Run2(x, y) gives Pow(x, y)'s
// bits for every pair. The Program is shared: do not modify it.
func PowSteps() *Program { return powSteps }

var powSteps = buildPow()

// buildPow writes Pow's operations: powAbs's for |x| (the subnormal
// scaling, the mantissa's interval and fdlibm's clearing of low words
// done with masks), then the selections of Pow's special cases in the
// reverse of their order, so that the first that applies is the last
// written: x < 0 with a non-integer y, x = ±0 or ±Inf, the sign for
// x < 0 and an odd y, NaNs, y = 1, and x = 1 or y = ±0.
//
// Registers 2 to 10 are reused as the values die (the comments name
// the value each step leaves); at most nine are live at once besides
// x and y.
func buildPow() *Program {
	var b builder
	const x, y = 0, 1
	hi := b.k(powHiMask)
	one := b.f(1)

	// log₂|x| = t1 + t2 (registers 3 and 6 at the end).
	b.op(StepAnd, 2, x, b.k(powAbsMask)) // ax
	b.op(StepLT, 3, 2, b.f(minNormal))
	b.op(StepMul, 4, 2, b.f(powTwo53))
	b.blend(4, 2, 4, 3)           // ax, scaled if subnormal
	b.op(StepAnd, 3, 3, b.f(-53)) // the exponent's adjustment
	b.shift(StepShr, 2, 4, 52)    //
	b.op(StepOr, 2, 2, b.k(two52Bit))
	b.op(StepSub, 2, 2, b.f(two52+1023))
	b.op(StepAdd, 2, 2, 3) // n
	b.op(StepAnd, 4, 4, b.k(mantMask))
	b.op(StepOr, 4, 4, b.k(oneBits)) // m in [1, 2)
	b.op(StepGE, 3, 4, b.f(powT2))
	b.op(StepMul, 5, 4, b.f(0.5))
	b.blend(4, 4, 5, 3) // m in [√(3/4), √3)
	b.op(StepAnd, 3, 3, one)
	b.op(StepAdd, 2, 2, 3)
	b.op(StepGE, 3, 4, b.f(powT1)) // mask: b = 1.5
	b.op(StepAnd, 5, 3, b.f(powDpH))
	b.op(StepAdd, 2, 2, 5) // n + dp_h
	b.op(StepAnd, 5, 3, b.f(0.5))
	b.op(StepAdd, 5, 5, one) // b
	b.op(StepSub, 6, 4, 5)   // u = m − b
	b.op(StepAdd, 7, 4, 5)   // m + b
	b.op(StepAnd, 8, 7, hi)  // th
	b.op(StepLoad, 9, 0, one)
	b.op(StepDiv, 7, 9, 7)   // v = 1/(m + b)
	b.op(StepMul, 9, 6, 7)   // ss
	b.op(StepAnd, 10, 9, hi) // sh
	b.op(StepSub, 5, 8, 5)
	b.op(StepSub, 5, 4, 5) // tl = m − (th − b)
	b.op(StepMul, 4, 10, 8)
	b.op(StepSub, 4, 6, 4)
	b.op(StepMul, 6, 10, 5)
	b.op(StepSub, 4, 4, 6)
	b.op(StepMul, 7, 7, 4) // sl
	b.op(StepMul, 4, 9, 9) // ss²
	b.op(StepMul, 5, 4, b.f(powL6))
	for _, c := range []float64{powL5, powL4, powL3, powL2} {
		b.op(StepAdd, 5, 5, b.f(c))
		b.op(StepMul, 5, 5, 4)
	}
	b.op(StepAdd, 5, 5, b.f(powL1))
	b.op(StepMul, 4, 4, 4)
	b.op(StepMul, 5, 4, 5) // r
	b.op(StepAdd, 4, 10, 9)
	b.op(StepMul, 4, 7, 4)
	b.op(StepAdd, 5, 5, 4)   // r + sl·(sh + ss)
	b.op(StepMul, 4, 10, 10) // sh²
	b.op(StepAdd, 6, 4, b.f(3))
	b.op(StepAdd, 6, 6, 5)
	b.op(StepAnd, 6, 6, hi) // th
	b.op(StepSub, 8, 6, b.f(3))
	b.op(StepSub, 8, 8, 4)
	b.op(StepSub, 8, 5, 8)  // tl
	b.op(StepMul, 4, 10, 6) // u
	b.op(StepMul, 5, 7, 6)
	b.op(StepMul, 6, 8, 9)
	b.op(StepAdd, 5, 5, 6) // v
	b.op(StepAdd, 6, 4, 5)
	b.op(StepAnd, 6, 6, hi) // ph
	b.op(StepSub, 8, 6, 4)
	b.op(StepSub, 8, 5, 8)           // pl
	b.op(StepMul, 4, 6, b.f(powCpH)) // zh
	b.op(StepMul, 5, 6, b.f(powCpL))
	b.op(StepMul, 6, 8, b.f(powCp))
	b.op(StepAdd, 5, 5, 6)
	b.op(StepAnd, 6, 3, b.f(powDpL))
	b.op(StepAdd, 5, 5, 6) // zl
	b.op(StepAdd, 3, 4, 5)
	b.op(StepAdd, 3, 3, 2)
	b.op(StepAnd, 3, 3, hi) // t1
	b.op(StepSub, 6, 3, 2)
	b.op(StepSub, 6, 6, 4)
	b.op(StepSub, 6, 5, 6) // t2

	// y·log₂|x| = ph + pl (registers 4 and 5).
	b.op(StepMax, 2, y, b.f(-powYMax))
	b.op(StepMin, 2, 2, b.f(powYMax)) // yc
	b.op(StepAnd, 4, 2, hi)           // y₁
	b.op(StepSub, 5, 2, 4)
	b.op(StepMul, 5, 5, 3)
	b.op(StepMul, 7, 2, 6)
	b.op(StepAdd, 5, 5, 7) // pl
	b.op(StepMul, 4, 4, 3) // ph
	b.op(StepMax, 4, 4, b.f(-powZMax))
	b.op(StepMin, 4, 4, b.f(powZMax))
	b.op(StepMax, 5, 5, b.f(-1))
	b.op(StepMin, 5, 5, one)

	// 2^(ph + pl) (register 3).
	b.op(StepAdd, 2, 5, 4)
	b.op(StepAdd, 2, 2, b.f(roundMagic)) // nf in the low bits
	b.op(StepSub, 3, 2, b.f(roundMagic)) // nf
	b.op(StepSub, 4, 4, 3)               // ph − nf
	b.op(StepAdd, 3, 5, 4)
	b.op(StepAnd, 3, 3, hi)           // t
	b.op(StepMul, 6, 3, b.f(powLg2H)) // u
	b.op(StepSub, 7, 3, 4)
	b.op(StepSub, 7, 5, 7)
	b.op(StepMul, 7, 7, b.f(powLg2))
	b.op(StepMul, 4, 3, b.f(powLg2L))
	b.op(StepAdd, 7, 7, 4) // v
	b.op(StepAdd, 3, 6, 7) // z
	b.op(StepSub, 4, 3, 6)
	b.op(StepSub, 4, 7, 4) // w
	b.op(StepMul, 6, 3, 3) // z²
	b.op(StepMul, 7, 6, b.f(expP5))
	for _, c := range []float64{expP4, expP3, expP2, expP1} {
		b.op(StepAdd, 7, 7, b.f(c))
		b.op(StepMul, 7, 7, 6)
	}
	b.op(StepSub, 7, 3, 7) // t1 = z − z²·P(z²)
	b.op(StepMul, 6, 3, 7)
	b.op(StepSub, 7, 7, b.f(2))
	b.op(StepDiv, 6, 6, 7)
	b.op(StepMul, 7, 3, 4)
	b.op(StepAdd, 7, 4, 7)
	b.op(StepSub, 6, 6, 7) // r
	b.op(StepSub, 6, 6, 3)
	b.op(StepLoad, 3, 0, one)
	b.op(StepSub, 3, 3, 6) // 2^(ph − nf + pl)
	b.op(StepIAdd, 4, 2, b.k(2046))
	b.shift(StepShr, 4, 4, 1)
	b.shift(StepShl, 4, 4, 52) // 2^⌊nf/2⌋
	b.op(StepMul, 3, 3, 4)
	b.op(StepIAdd, 4, 2, b.k(2047))
	b.shift(StepShr, 4, 4, 1)
	b.shift(StepShl, 4, 4, 52) // 2^⌈nf/2⌉
	b.op(StepMul, 3, 3, 4)

	// Special cases.
	b.round(4, y, 3)
	b.op(StepEQ, 4, 4, y) // mask: y is an integer (or infinite)
	b.op(StepMul, 5, y, b.f(0.5))
	b.round(6, 5, 3)
	b.op(StepEQ, 5, 6, 5)
	b.op(StepAndNot, 5, 5, 4) // mask: y is an odd integer
	b.op(StepAndNot, 4, 4, x) // sign bit: x < 0 and y is not an integer
	b.blend(3, 3, b.k(nanBits), 4)
	b.op(StepAnd, 4, x, b.k(powAbsMask))
	b.op(StepSub, 6, 4, one)
	b.op(StepMul, 6, 6, y)
	b.op(StepGT, 6, 6, b.f(0))
	b.op(StepAnd, 6, 6, b.f(math.Inf(1))) // for ±0 and ±Inf: +Inf or +0
	b.op(StepIAdd, 4, 4, b.k(1<<52))
	b.op(StepIGT, 4, 4, b.k(1<<52)) // mask: x is finite and not ±0 (or NaN)
	b.blend(3, 6, 3, 4)
	b.op(StepAnd, 5, 5, x)
	b.op(StepAnd, 5, 5, b.k(powSign))
	b.op(StepXor, 3, 3, 5) // the sign of x**y
	b.op(StepUnord, 4, x, y)
	b.blend(3, 3, b.k(nanBits), 4)
	b.op(StepEQ, 4, y, one)
	b.blend(3, 3, x, 4)
	b.op(StepEQ, 4, x, one)
	b.op(StepEQ, 5, y, b.f(0))
	b.op(StepOr, 4, 4, 5)
	b.blend(3, 3, one, 4)
	b.p.Result = 3
	b.p.Args = 2
	return &b.p
}
