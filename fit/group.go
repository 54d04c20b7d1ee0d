package fit

import (
	"math"
)

// group is one group's fit in progress: its accepted point, its next
// trial, its counters and history, and its optimiser's state.
type group struct {
	index   int
	members []int
	tr      []Transform
	scale   []float64 // the identity transforms' units
	tol     Tolerances
	maxIter int

	z      []float64 // accepted point (working coordinates); nil before the start is evaluated
	loss   float64
	trial  []float64 // next point to evaluate
	status Status
	err    error
	iters  int
	evals  int // evaluations the group has taken part in
	evalNo int // the ensemble evaluation being told
	hist   []Iterate
	opt    groupOptimizer
}

// natural returns θ(z) and dθ/dz for the group.
func (g *group) natural(z []float64) (theta, dtheta []float64) {
	theta, dtheta = make([]float64, len(z)), make([]float64, len(z))
	for c, t := range g.tr {
		theta[c], dtheta[c] = t.natural(z[c], g.scale[c])
	}
	return theta, dtheta
}

// accept makes z the group's point, with its loss: the start when the
// group has none yet, else one more iteration.
func (g *group) accept(z []float64, loss float64) {
	if g.z != nil {
		g.iters++
	}
	g.z = append(g.z[:0:0], z...)
	g.loss = loss
	theta, _ := g.natural(g.z)
	g.hist = append(g.hist, Iterate{Iteration: g.iters, Evaluation: g.evalNo, Loss: loss, Params: theta})
}

// finish ends the group's fit.
func (g *group) finish(s Status, err error) {
	g.status, g.err = s, err
	g.trial = nil
}

// fail ends the group as Failed with the evaluation's error. Its point
// stays the last accepted one (if any).
func (g *group) fail(err error) { g.finish(Failed, err) }

// propose sets the next trial point.
func (g *group) propose(z []float64) { g.trial = z }

// converged applies the tolerance tests after an accepted update of
// the given step, from loss lossOld, with gradient grad at the new
// point; it ends the group when one passes or the iterations run out,
// and reports whether it did.
func (g *group) converged(step []float64, lossOld float64, grad []float64) bool {
	return g.end(g.passes(step, lossOld, grad))
}

// passes applies the tolerance tests after an accepted update.
func (g *group) passes(step []float64, lossOld float64, grad []float64) bool {
	return infNorm(step) <= g.tol.Step ||
		math.Abs(g.loss-lossOld) <= g.tol.Loss*math.Abs(g.loss) ||
		(g.tol.Grad > 0 && infNorm(grad) <= g.tol.Grad)
}

// end ends the group as Converged if ok, or as MaxIterations when the
// iterations have run out, and reports whether it did.
func (g *group) end(ok bool) bool {
	switch {
	case ok:
		g.finish(Converged, nil)
	case g.iters >= g.maxIter:
		g.finish(MaxIterations, nil)
	default:
		return false
	}
	return true
}

// startConverged applies the tests that need no update at the start:
// the gradient tolerance and a zero gradient.
func (g *group) startConverged(grad []float64) bool {
	if n := infNorm(grad); n == 0 || (g.tol.Grad > 0 && n <= g.tol.Grad) {
		g.finish(Converged, nil)
		return true
	}
	if g.maxIter == 0 {
		g.finish(MaxIterations, nil)
		return true
	}
	return false
}

// sub returns a − b.
func sub(a, b []float64) []float64 {
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	return d
}

// adamPatience is the number of consecutive updates on which Adam must
// pass a tolerance test to converge: its steps carry momentum, so a
// single short step (where the path turns) or an unchanged loss (where
// it swings across the minimum) says little.
const adamPatience = 10

// adamState is one group's Adam moments.
type adamState struct {
	a     *Adam
	m, v  []float64
	t     int
	quiet int // consecutive updates that passed a tolerance test
}

func (a *Adam) newState(np int) groupOptimizer {
	return &adamState{a: a, m: make([]float64, np), v: make([]float64, np)}
}

func (s *adamState) tell(g *group, e *groupEval) {
	if e.err != nil {
		g.fail(e.err)
		return
	}
	if g.z == nil {
		g.accept(g.trial, e.loss)
		if g.startConverged(e.grad) {
			return
		}
	} else {
		step, lossOld := sub(g.trial, g.z), g.loss
		g.accept(g.trial, e.loss)
		if g.passes(step, lossOld, e.grad) {
			s.quiet++
		} else {
			s.quiet = 0
		}
		if g.end(s.quiet >= adamPatience) {
			return
		}
	}
	s.t++
	lr := s.a.LearningRate
	if s.a.Schedule != nil {
		f := s.a.Schedule(s.t)
		if !(f >= 0) || math.IsInf(f, 0) {
			g.fail(errorf("Adam.Schedule(%d) = %g: must be finite and ≥ 0", s.t, f))
			return
		}
		lr *= f
	}
	b1, b2 := s.a.Beta1, s.a.Beta2
	c1, c2 := 1-math.Pow(b1, float64(s.t)), 1-math.Pow(b2, float64(s.t))
	next := make([]float64, len(g.z))
	for c, gc := range e.grad {
		s.m[c] = b1*s.m[c] + (1-b1)*gc
		s.v[c] = b2*s.v[c] + (1-b2)*gc*gc
		next[c] = g.z[c] - lr*(s.m[c]/c1)/(math.Sqrt(s.v[c]/c2)+s.a.Epsilon)
	}
	g.propose(next)
}

// lbfgsState is one group's L-BFGS memory and line search.
type lbfgsState struct {
	l          *LBFGS
	grad       []float64 // at the accepted point
	d          []float64 // search direction
	alpha, gd  float64   // step and gᵀd
	backtracks int
	s, y       [][]float64 // pairs, oldest first
	rho        []float64
}

func (l *LBFGS) newState(int) groupOptimizer { return &lbfgsState{l: l} }

func (s *lbfgsState) tell(g *group, e *groupEval) {
	if g.z == nil {
		if e.err != nil {
			g.fail(e.err)
			return
		}
		g.accept(g.trial, e.loss)
		s.grad = e.grad
		if g.startConverged(e.grad) {
			return
		}
		s.direction(g)
		return
	}
	if e.err == nil && e.loss <= g.loss+1e-4*s.alpha*s.gd {
		step, lossOld := sub(g.trial, g.z), g.loss
		y := sub(e.grad, s.grad)
		g.accept(g.trial, e.loss)
		s.grad = e.grad
		if sy := dot(step, y); sy > 1e-12*math.Sqrt(dot(step, step)*dot(y, y)) {
			if len(s.s) == s.l.Memory {
				s.s, s.y, s.rho = s.s[1:], s.y[1:], s.rho[1:]
			}
			s.s, s.y, s.rho = append(s.s, step), append(s.y, y), append(s.rho, 1/sy)
		}
		if g.converged(step, lossOld, e.grad) {
			return
		}
		s.direction(g)
		return
	}
	// Rejected: backtrack.
	if s.alpha*infNorm(s.d) <= g.tol.Step {
		g.finish(Converged, nil)
		return
	}
	s.backtracks++
	if s.backtracks > s.l.MaxBacktracks {
		g.finish(Stalled, nil)
		return
	}
	next := s.alpha / 10
	if e.err == nil {
		// Minimiser of the quadratic through L(0), L'(0) = gᵀd and
		// L(α), within [α/10, α/2].
		den := 2 * (e.loss - g.loss - s.gd*s.alpha)
		if den > 0 {
			next = math.Min(math.Max(-s.gd*s.alpha*s.alpha/den, s.alpha/10), s.alpha/2)
		} else {
			next = s.alpha / 2
		}
	}
	s.alpha = next
	s.trialPoint(g)
}

// direction computes the next search direction at the accepted point
// and proposes its first trial.
func (s *lbfgsState) direction(g *group) {
	q := append([]float64(nil), s.grad...)
	k := len(s.s)
	a := make([]float64, k)
	for i := k - 1; i >= 0; i-- {
		a[i] = s.rho[i] * dot(s.s[i], q)
		for c := range q {
			q[c] -= a[i] * s.y[i][c]
		}
	}
	if k > 0 {
		gamma := dot(s.s[k-1], s.y[k-1]) / dot(s.y[k-1], s.y[k-1])
		for c := range q {
			q[c] *= gamma
		}
	}
	for i := range k {
		b := s.rho[i] * dot(s.y[i], q)
		for c := range q {
			q[c] += s.s[i][c] * (a[i] - b)
		}
	}
	for c := range q {
		q[c] = -q[c]
	}
	s.d, s.gd, s.alpha = q, dot(s.grad, q), 1
	if k == 0 || !(s.gd < 0) || !allFinite(q) {
		// Steepest descent, the first step bounded by InitialStep.
		s.s, s.y, s.rho = nil, nil, nil
		for c, gc := range s.grad {
			s.d[c] = -gc
		}
		s.gd = -dot(s.grad, s.grad)
		s.alpha = math.Min(1, s.l.InitialStep/infNorm(s.grad))
	}
	s.backtracks = 0
	s.trialPoint(g)
}

// trialPoint proposes z + α·d, α first cut so that no coordinate moves
// by more than maxMove.
func (s *lbfgsState) trialPoint(g *group) {
	if m := s.alpha * infNorm(s.d); m > maxMove {
		s.alpha *= maxMove / m
	}
	next := make([]float64, len(g.z))
	for c := range next {
		next[c] = g.z[c] + s.alpha*s.d[c]
	}
	g.propose(next)
}
