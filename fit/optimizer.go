package fit

import (
	"fmt"
	"math"
)

// Optimizer is an optimiser and its settings: *Adam, *LBFGS or
// *LevenbergMarquardt. Each group of a fit runs its own copy of the
// optimiser's state; all groups advance in lock-step, one evaluation of
// the whole ensemble serving every group's next point.
type Optimizer interface {
	// Name returns the optimiser's name.
	Name() string
	// resolved returns the settings with defaults filled in, or an
	// error naming a bad setting.
	resolved() (Optimizer, error)
	defaultMaxIter() int
	// jacobian says whether the optimiser needs the residuals' Jacobian
	// (forward sensitivities) rather than the gradient.
	jacobian() bool
	newState(np int) groupOptimizer
}

// Adam is the Adam optimiser (Kingma & Ba, "Adam: a method for
// stochastic optimization", ICLR 2015, arXiv:1412.6980) on the working
// coordinates z, with the bias-corrected moments
//
//	m ← β1·m + (1 − β1)·g,   v ← β2·v + (1 − β2)·g²,
//	z ← z − α_t · (m/(1 − β1^t)) / (√(v/(1 − β2^t)) + ε),
//
// g = ∂L/∂z at the current point, t = 1, 2, … the update, α_t =
// LearningRate·Schedule(t). Each update costs one evaluation (a replay
// and a reverse sweep on the reverse route). Adam takes every step: an
// update at which a trajectory of the group fails ends the group as
// Failed, with the estimate of the update before. Its steps carry
// momentum, slowing where the path turns, so it converges when a
// tolerance test has passed on 10 consecutive updates; without a
// decaying Schedule it typically ends at MaxIterations, within about α
// of the minimum.
type Adam struct {
	// LearningRate is α, roughly the largest move of a working
	// coordinate per update — with Log or Logit, or Identity scaled by
	// Param.Scale, a relative move; 0 means 1e-3 (the paper's default:
	// a 0.1% move). Negative is an error.
	LearningRate float64
	// Beta1 and Beta2 are the moments' decay rates, in [0, 1); 0 means
	// 0.9 and 0.999 (the paper's).
	Beta1, Beta2 float64
	// Epsilon is ε; 0 means 1e-8 (the paper's). Negative is an error.
	Epsilon float64
	// Schedule, if not nil, multiplies the learning rate at update t
	// (1, 2, …); nil keeps it constant. Its values must be finite and
	// ≥ 0 (a group whose schedule gives anything else fails).
	Schedule Schedule
}

// Schedule gives the learning rate's factor at update t = 1, 2, ….
type Schedule func(t int) float64

// ExponentialDecay returns the schedule γ^(t−1): the first update takes
// the full learning rate, each later one γ times the one before.
func ExponentialDecay(gamma float64) Schedule {
	return func(t int) float64 { return math.Pow(gamma, float64(t-1)) }
}

// Name returns "adam".
func (*Adam) Name() string { return "adam" }

func (a *Adam) resolved() (Optimizer, error) {
	r := *a
	if r.LearningRate == 0 {
		r.LearningRate = 1e-3
	}
	if r.Beta1 == 0 {
		r.Beta1 = 0.9
	}
	if r.Beta2 == 0 {
		r.Beta2 = 0.999
	}
	if r.Epsilon == 0 {
		r.Epsilon = 1e-8
	}
	switch {
	case !(r.LearningRate > 0) || math.IsInf(r.LearningRate, 0):
		return nil, fmt.Errorf("Adam.LearningRate = %g: must be finite and > 0 (0 means 1e-3)", a.LearningRate)
	case !(r.Beta1 >= 0 && r.Beta1 < 1):
		return nil, fmt.Errorf("Adam.Beta1 = %g: must be in [0, 1) (0 means 0.9)", a.Beta1)
	case !(r.Beta2 >= 0 && r.Beta2 < 1):
		return nil, fmt.Errorf("Adam.Beta2 = %g: must be in [0, 1) (0 means 0.999)", a.Beta2)
	case !(r.Epsilon > 0) || math.IsInf(r.Epsilon, 0):
		return nil, fmt.Errorf("Adam.Epsilon = %g: must be finite and > 0 (0 means 1e-8)", a.Epsilon)
	}
	return &r, nil
}

func (*Adam) defaultMaxIter() int { return 1000 }
func (*Adam) jacobian() bool      { return false }

// LBFGS is the limited-memory BFGS method (Nocedal, "Updating
// quasi-Newton matrices with limited storage", Math. Comp. 35 (1980)
// 773, doi:10.1090/S0025-5718-1980-0572855-7; Nocedal & Wright,
// Numerical Optimization, 2nd ed., Alg. 7.4 and 7.5) on the working
// coordinates, written here rather than taken from gonum/optimize so
// that every group's line search runs in lock-step on one evaluation of
// the whole ensemble: a trial of the line search is one point per
// group, all evaluated together.
//
// The direction d = −H·g comes from the two-loop recursion over the
// last Memory pairs (s, y) with H0 = (sᵀy/yᵀy)·I; the first direction,
// and any that is not a descent direction, is −g, with a first step of
// at most InitialStep in any working coordinate. A trial step α·d is
// accepted under the Armijo condition
//
//	L(z + α·d) ≤ L(z) + c1·α·gᵀd,   c1 = 1e-4,
//
// and otherwise α shrinks to the minimiser of the quadratic through
// L(z), gᵀd and L(z + α·d), kept within [α/10, α/2] (α/10 where the
// trial failed or its loss was not finite). A pair with sᵀy ≤ 1e-12·|s||y|
// (no positive curvature) is not stored. No trial moves a working
// coordinate by more than 10.
type LBFGS struct {
	// Memory is the number of (s, y) pairs kept; 0 means 10. Negative
	// is an error.
	Memory int
	// InitialStep bounds the first step's largest move in a working
	// coordinate; 0 means 0.1. Negative is an error.
	InitialStep float64
	// MaxBacktracks bounds the trials of one line search; 0 means 30.
	// Negative is an error.
	MaxBacktracks int
}

// Name returns "lbfgs".
func (*LBFGS) Name() string { return "lbfgs" }

func (l *LBFGS) resolved() (Optimizer, error) {
	r := *l
	if r.Memory == 0 {
		r.Memory = 10
	}
	if r.InitialStep == 0 {
		r.InitialStep = 0.1
	}
	if r.MaxBacktracks == 0 {
		r.MaxBacktracks = 30
	}
	switch {
	case r.Memory < 0:
		return nil, fmt.Errorf("LBFGS.Memory = %d: must be ≥ 0 (0 means 10)", l.Memory)
	case !(r.InitialStep > 0) || math.IsInf(r.InitialStep, 0):
		return nil, fmt.Errorf("LBFGS.InitialStep = %g: must be finite and > 0 (0 means 0.1)", l.InitialStep)
	case r.MaxBacktracks < 0:
		return nil, fmt.Errorf("LBFGS.MaxBacktracks = %d: must be ≥ 0 (0 means 30)", l.MaxBacktracks)
	}
	return &r, nil
}

func (*LBFGS) defaultMaxIter() int { return 200 }
func (*LBFGS) jacobian() bool      { return false }

// LevenbergMarquardt is the Levenberg–Marquardt method for weighted
// least squares (Spec.Data) on forward sensitivities. Each group
// accumulates over its trajectories, in working coordinates,
//
//	A = Σ Jᵀ W J,   g = Σ Jᵀ W r,   L = ½ Σ rᵀ W r,
//
// r the residuals, W their weights and J = ∂r/∂z, and proposes the step
// h solving (A + μ·D)·h = −g by Cholesky (gonum/mat), with D the
// largest diagonal of A met so far (Marquardt's scaling, as MINPACK's
// lmder keeps it; floored at 1e-12 of its largest entry). The step is
// accepted when it lowers the loss, and μ follows Nielsen's rule
// (H. B. Nielsen, "Damping parameter in Marquardt's method", IMM-REP-
// 1999-05, DTU; Madsen, Nielsen & Tingleff, Methods for Non-Linear
// Least Squares Problems, 2004, §3.2): with the gain ratio
//
//	ρ = (L(z) − L(z + h)) / (−gᵀh − ½hᵀAh),
//
// μ ← μ·max(1/3, 1 − (2ρ − 1)³), ν ← 2 on acceptance, and μ ← μ·ν,
// ν ← 2ν on rejection (a trial whose trajectories fail is rejected).
type LevenbergMarquardt struct {
	// InitialDamping is μ's first value; 0 means 1e-3. Negative is an
	// error.
	InitialDamping float64
	// MaxRejections bounds consecutive rejected steps; 0 means 30.
	// Negative is an error.
	MaxRejections int
}

// Name returns "levenberg-marquardt".
func (*LevenbergMarquardt) Name() string { return "levenberg-marquardt" }

func (l *LevenbergMarquardt) resolved() (Optimizer, error) {
	r := *l
	if r.InitialDamping == 0 {
		r.InitialDamping = 1e-3
	}
	if r.MaxRejections == 0 {
		r.MaxRejections = 30
	}
	switch {
	case !(r.InitialDamping > 0) || math.IsInf(r.InitialDamping, 0):
		return nil, fmt.Errorf("LevenbergMarquardt.InitialDamping = %g: must be finite and > 0 (0 means 1e-3)", l.InitialDamping)
	case r.MaxRejections < 0:
		return nil, fmt.Errorf("LevenbergMarquardt.MaxRejections = %d: must be ≥ 0 (0 means 30)", l.MaxRejections)
	}
	return &r, nil
}

func (*LevenbergMarquardt) defaultMaxIter() int { return 100 }
func (*LevenbergMarquardt) jacobian() bool      { return true }

// groupOptimizer is one group's optimiser state. tell receives the
// evaluation at g.trial (the start first) and either sets g.trial to
// the next point to evaluate or ends the group (g.finish).
type groupOptimizer interface {
	tell(g *group, e *groupEval)
}

// groupEval is one evaluation as one group sees it, in working
// coordinates.
type groupEval struct {
	// err is not nil where a trajectory of the group failed or the
	// loss or gradient is not finite; the other fields are then unset.
	err  error
	loss float64
	grad []float64 // ∂L/∂z
	a    []float64 // np×np Σ JᵀWJ (LevenbergMarquardt only)
}

// maxMove bounds an LBFGS trial's move in any working coordinate.
const maxMove = 10

// infNorm returns max |v_i|.
func infNorm(v []float64) float64 {
	var m float64
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func allFinite(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}
