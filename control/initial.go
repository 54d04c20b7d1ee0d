package control

import (
	"math"

	"github.com/gradsolve/gradsolve/ode"
)

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
//	h  = min(100·h0, h1, hmax)
//
// dir is +1 or −1, the direction of integration; f0 = f(t0, y0, p); hmax
// bounds the result and must be positive (pass |t1 − t0| or a smaller
// user maximum). y1 and f1 are caller-owned work slices of length
// len(y0). The norms run over the first len(atol) components (atol and
// rtol may be shorter than y0: an augmented state whose extra components
// do not take part in step-size control); the Euler probe moves all. It returns the step size and the number of right-hand-side
// evaluations it spent (1). If the probe evaluation is not finite it
// returns h0, the smaller probe step, and lets the caller's step
// rejection shrink it further.
func InitialStep(f ode.Func, p []float64, t0, dir float64, y0, f0 []float64, order int,
	atol, rtol []float64, hmax float64, y1, f1 []float64) (h float64, nevals int) {
	n := len(atol)
	var s0, s1 float64
	for i := range n {
		sc := atol[i] + rtol[i]*math.Abs(y0[i])
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
		y1[i] = y0[i] + float64(dir*h0)*f0[i]
	}
	f(t0+dir*h0, y1, p, f1)
	var s2 float64
	for i := range n {
		sc := atol[i] + rtol[i]*math.Abs(y0[i])
		s2 += sq((f1[i] - f0[i]) / sc)
	}
	d2 := math.Sqrt(s2/float64(n)) / h0
	if math.IsNaN(d2) || math.IsInf(d2, 0) {
		return h0, 1
	}
	dmax := math.Max(d1, d2)
	var h1 float64
	if dmax <= 1e-15 {
		h1 = math.Max(1e-6, h0*1e-3)
	} else {
		h1 = Pow(0.01/dmax, 1/float64(order))
	}
	return math.Min(math.Min(100*h0, h1), hmax), 1
}

func sq(x float64) float64 { return x * x }
