package enginetest

import (
	"math"
	"math/cmplx"
	"sync"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/sym/parse"
	"github.com/gradsolve/gradsolve/sym/tape"
)

// source is the suite's problem: a forced linear decay and a logistic
// growth,
//
//	u' = −a·u + b·sin t,   v' = r·v·(1 − v),   u(t0) = u0, v(t0) = v0,
//
// non-autonomous (so the ∂f/∂t programs and their derivatives take
// part), with an initial value computed from a parameter (v0, so that
// ∂y0/∂p takes part), and a closed form (exact below). It is compiled
// from formulas, so it offers every derivative program and every
// engine can serve every job on it unless the engine itself says why
// not.
const source = `name conformance
param a = 1.5, b = 0.7, r = 2, v0 = 0.1
state u = 1, v = v0
span 0 2
u' = -a*u + b*sin(t)
v' = r*v*(1 - v)
`

// numParams and dim are the problem's sizes.
const (
	numParams = 4
	dim       = 2
)

var (
	probOnce sync.Once
	prob     *gradsolve.Problem
	probErr  error
)

// problem returns the suite's problem (one compiled Set shared by
// every check: a Set is safe for concurrent use).
func problem() (*gradsolve.Problem, error) {
	probOnce.Do(func() {
		m, err := parse.Parse("conformance.ode", []byte(source))
		if err != nil {
			probErr = err
			return
		}
		set, err := tape.Build(m)
		if err != nil {
			probErr = err
			return
		}
		prob = set.Problem()
	})
	return prob, probErr
}

// exactC is the closed form in complex arithmetic, for complex-step
// derivatives: with θ = (a, b, r, u0, v0),
//
//	u(t) = (u0 − g(t0))·e^{−a(t−t0)} + g(t),   g(t) = b·(a·sin t − cos t)/(a² + 1),
//	v(t) = 1 / (1 + (1/v0 − 1)·e^{−r(t−t0)}).
func exactC(t0, t float64, th [5]complex128) (u, v complex128) {
	a, b, r, u0, v0 := th[0], th[1], th[2], th[3], th[4]
	g := func(s float64) complex128 {
		return b * (a*complex(math.Sin(s), 0) - complex(math.Cos(s), 0)) / (a*a + 1)
	}
	dt := complex(t-t0, 0)
	u = (u0-g(t0))*cmplx.Exp(-a*dt) + g(t)
	v = 1 / (1 + (1/v0-1)*cmplx.Exp(-r*dt))
	return u, v
}

// exact returns the state at t of the trajectory that starts at
// (u0, v0) at t0 with parameters p = (a, b, r, v0), and its derivatives
// with respect to θ = (a, b, r, u0, v0) by complex steps (Squire &
// Trapp, SIAM Review 40 (1998) 110, doi:10.1137/S003614459631241X):
// f'(x) = Im f(x + iη)/η, with no subtraction, so exact to rounding
// for any η small enough that η² vanishes next to x (η = 1e−30).
// d[k] holds (∂u/∂θ_k, ∂v/∂θ_k).
func exact(t0, t float64, p []float64, u0, v0 float64) (y [2]float64, d [5][2]float64) {
	th := [5]complex128{complex(p[0], 0), complex(p[1], 0), complex(p[2], 0), complex(u0, 0), complex(v0, 0)}
	u, v := exactC(t0, t, th)
	y = [2]float64{real(u), real(v)}
	const eta = 1e-30
	for k := range th {
		thk := th
		thk[k] += complex(0, eta)
		u, v := exactC(t0, t, thk)
		d[k] = [2]float64{imag(u) / eta, imag(v) / eta}
	}
	return y, d
}
