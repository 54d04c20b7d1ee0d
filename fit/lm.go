package fit

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/mat"
)

// lmState is one group's Levenberg–Marquardt state at its accepted
// point.
type lmState struct {
	l          *LevenbergMarquardt
	a, grad    []float64 // Σ JᵀWJ and Σ JᵀWr at the accepted point
	diag       []float64 // D: the largest diagonal of A so far
	mu, nu     float64
	h          []float64 // the step being tried
	rejections int
}

func (l *LevenbergMarquardt) newState(np int) groupOptimizer {
	return &lmState{l: l, diag: make([]float64, np)}
}

func (s *lmState) tell(g *group, e *groupEval) {
	if g.z == nil {
		if e.err != nil {
			g.fail(e.err)
			return
		}
		g.accept(g.trial, e.loss)
		s.take(e)
		s.mu, s.nu = s.l.InitialDamping, 2
		if e.loss == 0 || g.startConverged(e.grad) {
			if g.status == Running {
				g.finish(Converged, nil)
			}
			return
		}
		s.propose(g)
		return
	}
	if e.err == nil {
		pred := -dot(s.grad, s.h) - 0.5*quad(s.a, s.h)
		if actual := g.loss - e.loss; pred > 0 && actual > 0 {
			rho := actual / pred
			lossOld := g.loss
			g.accept(g.trial, e.loss)
			s.take(e)
			s.mu *= math.Max(1.0/3, 1-math.Pow(2*rho-1, 3))
			s.nu, s.rejections = 2, 0
			if e.loss == 0 {
				g.finish(Converged, nil)
				return
			}
			if g.converged(s.h, lossOld, e.grad) {
				return
			}
			s.propose(g)
			return
		}
	}
	// Rejected.
	if infNorm(s.h) <= g.tol.Step {
		g.finish(Converged, nil)
		return
	}
	s.rejections++
	if s.rejections > s.l.MaxRejections {
		g.finish(Stalled, nil)
		return
	}
	s.mu *= s.nu
	s.nu *= 2
	s.propose(g)
}

// take keeps the accepted evaluation's A and g and updates D.
func (s *lmState) take(e *groupEval) {
	s.a, s.grad = e.a, e.grad
	np := len(s.diag)
	var top float64
	for c := range np {
		s.diag[c] = math.Max(s.diag[c], s.a[c*np+c])
		top = math.Max(top, s.diag[c])
	}
	if top == 0 || math.IsNaN(top) {
		top = 1
	}
	for c := range np {
		s.diag[c] = math.Max(s.diag[c], 1e-12*top)
	}
}

// propose solves (A + μD)h = −g and proposes z + h, raising μ while
// the damped matrix is not numerically positive definite.
func (s *lmState) propose(g *group) {
	np := len(s.diag)
	m := mat.NewSymDense(np, nil)
	rhs := mat.NewVecDense(np, nil)
	for c := range np {
		rhs.SetVec(c, -s.grad[c])
	}
	var ch mat.Cholesky
	for range 64 {
		for i := range np {
			for j := i; j < np; j++ {
				v := 0.5 * (s.a[i*np+j] + s.a[j*np+i])
				if i == j {
					v += s.mu * s.diag[i]
				}
				m.SetSym(i, j, v)
			}
		}
		if ch.Factorize(m) {
			var h mat.VecDense
			// A Condition error (near-singular, e.g. a quantity the data
			// barely constrain) still leaves the solution in h.
			var cond mat.Condition
			if err := ch.SolveVecTo(&h, rhs); err == nil || errors.As(err, &cond) {
				s.h = make([]float64, np)
				for c := range np {
					s.h[c] = h.AtVec(c)
				}
				if allFinite(s.h) {
					next := make([]float64, np)
					for c := range next {
						next[c] = g.z[c] + s.h[c]
					}
					g.propose(next)
					return
				}
			}
		}
		s.mu *= s.nu
		s.nu *= 2
		if math.IsInf(s.mu, 0) {
			break
		}
	}
	g.finish(Stalled, errorf("the damped normal equations could not be solved (μ = %g)", s.mu))
}

// quad returns hᵀAh for row-major A.
func quad(a, h []float64) float64 {
	np := len(h)
	var s float64
	for i := range np {
		for j := range np {
			s += h[i] * a[i*np+j] * h[j]
		}
	}
	return s
}
