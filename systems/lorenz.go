package systems

import "github.com/gradsolve/gradsolve/ode"

// Lorenz returns the Lorenz (1963) system
//
//	x' = σ·(y − x)
//	y' = x·(ρ − z) − y
//	z' = x·y − β·z
//
// with states (x, y, z) and parameters (sigma, rho, beta) = (σ, ρ, β).
// All quantities are dimensionless.
//
//	sigma  Prandtl number,               default 10
//	rho    scaled Rayleigh number,       default 28
//	beta   geometric factor,             default 8/3
//
// At the defaults the solutions approach the chaotic Lorenz attractor and
// nearby trajectories separate at the rate of the largest Lyapunov
// exponent, about 0.9. Default initial state (1, 0, 0), default span
// [0, 1].
//
// Source: E. N. Lorenz, "Deterministic nonperiodic flow", J. Atmos. Sci.
// 20 (1963) 130–141, doi:10.1175/1520-0469(1963)020<0130:DNF>2.0.CO;2.
func Lorenz() *ode.Problem {
	return &ode.Problem{
		Name:       "lorenz",
		Dim:        3,
		NumParams:  3,
		F:          lorenzF,
		StateNames: []string{"x", "y", "z"},
		ParamNames: []string{"sigma", "rho", "beta"},
		Y0:         []float64{1, 0, 0},
		P:          []float64{10, 28, 8.0 / 3.0},
		T0:         0,
		T1:         1,
	}
}

func lorenzF(_ float64, y, p, dy []float64) {
	x, yy, z := y[0], y[1], y[2]
	sigma, rho, beta := p[0], p[1], p[2]
	// Products are rounded before they are added (float64(…)), so no
	// architecture fuses them into an FMA: the same bits everywhere, and
	// the same as a compiled tape of the same formulas.
	dy[0] = sigma * (yy - x)
	dy[1] = float64(x*(rho-z)) - yy
	dy[2] = float64(x*yy) - float64(beta*z)
}
