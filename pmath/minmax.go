package pmath

import "math"

// MinSteps returns math.Min in straight-line form (two arguments): its
// bits for every pair of arguments, a NaN where it gives a NaN. math.Min
// and math.Max are exact, and so portable already; these forms let code
// generators compute them with the special cases Go documents: −0 below
// +0, NaN over everything except the infinity that wins
// (Min(x, −Inf) = −Inf even for a NaN x). The Program is shared: do not
// modify it.
func MinSteps() *Program { return minSteps }

// MaxSteps returns math.Max in straight-line form, as MinSteps does
// math.Min: +0 above −0, and Max(x, +Inf) = +Inf even for a NaN x.
func MaxSteps() *Program { return maxSteps }

var (
	minSteps = buildMinMax(false)
	maxSteps = buildMinMax(true)
)

// buildMinMax writes math.Min's or math.Max's operations: x86's minpd
// or maxpd (the second argument where they are equal or either is NaN),
// then the two arguments' bits or-ed (Min: −0 wins) or and-ed (Max: +0
// wins) where they are equal, a NaN where either is NaN, and the
// winning infinity where either argument is it.
func buildMinMax(isMax bool) *Program {
	var b builder
	const x, y, d, m, t = 0, 1, 2, 3, 4
	op, merge, inf := StepMin, StepOr, math.Inf(-1)
	if isMax {
		op, merge, inf = StepMax, StepAnd, math.Inf(1)
	}
	b.op(op, d, x, y)
	b.op(StepEQ, m, x, y)
	b.op(merge, t, x, y)
	b.blend(d, d, t, m)
	b.op(StepUnord, m, x, y)
	b.blend(d, d, b.k(nanBits), m)
	b.op(StepEQ, m, x, b.f(inf))
	b.op(StepEQ, t, y, b.f(inf))
	b.op(StepOr, m, m, t)
	b.blend(d, d, b.f(inf), m)
	b.p.Args, b.p.Result = 2, d
	return &b.p
}
