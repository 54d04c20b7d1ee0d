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
		Programs:   func() *ode.Programs { return lorenzLanes.add(lorenzPrograms()) },
		Offers:     lorenzLanes.offers(),
	}
}

// lorenzPrograms returns the hand-written derivative programs of Lorenz.
// They keep no state, so one set serves every goroutine.
func lorenzPrograms() *ode.Programs {
	return &ode.Programs{F: lorenzF, JVP: lorenzJVP, VJP: lorenzVJP, JacY: lorenzJacY, DfDt: zeroDfDt}
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

// lorenzJVP writes J_y·v + J_p·w of Lorenz into out, with
//
//	      ⎡ −σ    σ    0 ⎤          ⎡ y − x  0   0 ⎤
//	J_y = ⎢ ρ−z  −1   −x ⎥,   J_p = ⎢   0    x   0 ⎥   (columns σ, ρ, β),
//	      ⎣  y    x   −β ⎦          ⎣   0    0  −z ⎦
//
// so out = (σ·(v₁ − v₀) + (y − x)·w₀,
// (ρ − z)·v₀ − v₁ + x·(w₁ − v₂),
// y·v₀ + x·v₁ − β·v₂ − z·w₂).
func lorenzJVP(_ float64, y, p, v, w, out []float64) {
	x, yy, z := y[0], y[1], y[2]
	sigma, rho, beta := p[0], p[1], p[2]
	// Every product rounded before it is added: no FMA on any architecture.
	out[0] = float64(sigma*(v[1]-v[0])) + float64((yy-x)*w[0])
	out[1] = float64((rho-z)*v[0]) - v[1] + float64(x*(w[1]-v[2]))
	out[2] = float64(yy*v[0]) + float64(x*v[1]) - float64(beta*v[2]) - float64(z*w[2])
}

// lorenzVJP writes uᵀJ_y into gy and uᵀJ_p into gp (J_y, J_p as in
// lorenzJVP):
//
//	gy = (−σ·u₀ + (ρ − z)·u₁ + y·u₂,  σ·u₀ − u₁ + x·u₂,  −x·u₁ − β·u₂)
//	gp = ((y − x)·u₀,  x·u₁,  −z·u₂).
func lorenzVJP(_ float64, y, p, u, gy, gp []float64) {
	x, yy, z := y[0], y[1], y[2]
	sigma, rho, beta := p[0], p[1], p[2]
	su0 := float64(sigma * u[0])
	gy[0] = float64((rho-z)*u[1]) - su0 + float64(yy*u[2])
	gy[1] = su0 - u[1] + float64(x*u[2])
	gy[2] = -float64(x*u[1]) - float64(beta*u[2])
	gp[0] = float64((yy - x) * u[0])
	gp[1] = float64(x * u[1])
	gp[2] = -float64(z * u[2])
}

// lorenzJacY writes J_y of Lorenz row-major into jac:
//
//	[[−σ, σ, 0], [ρ − z, −1, −x], [y, x, −β]].
func lorenzJacY(_ float64, y, p, jac []float64) {
	x, yy, z := y[0], y[1], y[2]
	sigma, rho, beta := p[0], p[1], p[2]
	jac = jac[:9]
	jac[0], jac[1], jac[2] = -sigma, sigma, 0
	jac[3], jac[4], jac[5] = rho-z, -1, -x
	jac[6], jac[7], jac[8] = yy, x, -beta
}
