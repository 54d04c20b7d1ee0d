package control

import (
	"math"

	"github.com/gradsolve/gradsolve/ode"
)

// MinStep returns the smallest step size |h| that may be tried from time
// t: a step below it no longer changes t meaningfully, and the engines
// stop with ode.StepUnderflow. It is
//
//	MinStep(t) = max(4ε·|t|, 2^−1022),  ε = 2^−52,
//
// that is 4 to 8 units in the last place of t, measured where the
// solution is rather than at the largest time of the span (Hairer's
// dop853 and radau5 stop when 0.1·|h| ≤ uround·|t|, a bound of the same
// kind). At and near t = 0 there is no time resolution to lose: the
// representable times are dense down to the subnormals, so there the
// floor is the smallest normal float64 (2^−1022 ≈ 2.2e-308). Below it h
// itself is subnormal and carries fewer than 53 significant bits, so h·k
// and the error estimate lose precision, and a loop of rejections cannot
// creep on through the subnormals (where h·0.9 rounds back to h) to the
// end of the budget. Since a non-finite trial shrinks |h| by QMin, a
// trajectory at t = 0 whose every trial is non-finite stops after a
// bounded number of attempts: about 430 from h = 1e-6 at QMin = 0.2. (A
// rejection with a finite error shrinks |h| by at least the controller's
// Safety, which may be up to 1: there the budget bounds the attempts;
// see docs/numerics.md.)
//
// It is written as a comparison rather than math.Max, so that it
// inlines into the driver's loop, which asks it on every attempt; the
// value is math.Max's for every t (a NaN t gives NaN either way).
func MinStep(t float64) float64 {
	if m := 4 * 0x1p-52 * math.Abs(t); !(m < 0x1p-1022) {
		return m
	}
	return 0x1p-1022
}

// InitialStep returns a starting step size |h| for a method of the given
// order, by the algorithm of Hairer, Nørsett & Wanner I, §II.4
// ("Starting step size"), with RMS norms as in OrdinaryDiffEq.jl:
//
//	sc_i = atol_i + rtol_i·|y0_i|
//	d0 = ‖y0/sc‖,  d1 = ‖f0/sc‖
//	h0 = 0.01·d0/d1  (or 1e-6 if d0 or d1 < 1e-5), clipped to hmax
//	y1 = y0 + dir·h0·f0,  f1 = f(t0 + dir·h0, y1)
//	d2 = ‖(f1 − f0)/sc‖ / h0
//	h1 = (0.01 / max(d1, d2))^(1/order)  (or max(1e-6, 1e-3·h0) if both ≤ 1e-15)
//	h  = min(100·h0, h1, hmax),  raised to min(MinStep(t0), hmax)
//
// dir is +1 or −1, the direction of integration; f0 = f(t0, y0, p); hmax
// bounds the result and must be positive (pass |t1 − t0| or a smaller
// user maximum). y1 and f1 are caller-owned work slices of length
// len(y0). The norms run over the first len(atol) components (atol and
// rtol may be shorter than y0: an augmented state whose extra components
// do not take part in step-size control); the Euler probe moves all.
// It returns the step size and the number of right-hand-side
// evaluations it spent (1). If the probe evaluation is not finite it
// returns h0, the smaller probe step, and lets the caller's step
// rejection shrink it further.
//
// The result is never below MinStep(t0) (unless hmax is): the fixed
// constants of the rule (h0 = 1e-6, the cap 100·h0) are absolute, and far
// from t = 0 (t0 = 1e13, where one ulp is 2e-3) or on long spans they
// can name a step that does not move t. The raise is applied to the
// result only, never to the probe h0, so a result that was at or above
// the floor is bitwise the same as without it; a probe that does not
// move t (t0 + h0 == t0) still measures the y-dependence of f, and the
// first step's error test judges the rest.
func InitialStep(f ode.Func, p []float64, t0, dir float64, y0, f0 []float64, order int,
	atol, rtol []float64, hmax float64, y1, f1 []float64) (h float64, nevals int) {
	n := len(atol)
	var s0, s1 float64
	for i := range n {
		sc := atol[i] + float64(rtol[i]*math.Abs(y0[i]))
		s0 += sq(y0[i] / sc)
		s1 += sq(f0[i] / sc)
	}
	d0 := math.Sqrt(s0 / float64(n))
	d1 := math.Sqrt(s1 / float64(n))
	h0 := 1e-6
	if d0 >= 1e-5 && d1 >= 1e-5 {
		h0 = 0.01 * d0 / d1
	}
	h0 = math.Min(h0, hmax)
	for i := range y0 {
		y1[i] = y0[i] + float64(float64(dir*h0)*f0[i])
	}
	f(t0+float64(dir*h0), y1, p, f1)
	var s2 float64
	for i := range n {
		sc := atol[i] + float64(rtol[i]*math.Abs(y0[i]))
		s2 += sq((f1[i] - f0[i]) / sc)
	}
	d2 := math.Sqrt(s2/float64(n)) / h0
	hmin := math.Min(MinStep(t0), hmax)
	if math.IsNaN(d2) || math.IsInf(d2, 0) {
		return math.Max(h0, hmin), 1
	}
	dmax := math.Max(d1, d2)
	var h1 float64
	if dmax <= 1e-15 {
		h1 = math.Max(1e-6, h0*1e-3)
	} else {
		h1 = Pow(0.01/dmax, 1/float64(order))
	}
	return math.Max(math.Min(math.Min(100*h0, h1), hmax), hmin), 1
}

func sq(x float64) float64 { return float64(x * x) } // rounded: no FMA with a sum under any GOAMD64
