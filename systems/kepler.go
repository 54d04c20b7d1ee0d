package systems

import (
	"fmt"
	"math"

	"github.com/gradsolve/gradsolve/ode"
)

const keplerDefaultE = 0.5

// Kepler returns the planar two-body (Kepler) problem in relative
// coordinates,
//
//	r'' = −μ·r / |r|³,   r = (x, y),
//
// written first order with states (x, y, vx, vy) and one parameter
// mu = μ = G·(m₁ + m₂) > 0. Units are dimensionless (any length unit L
// and time unit T with μ in L³/T²).
//
//	mu  gravitational parameter G·M, default 1
//
// Default initial state: the orbit of eccentricity e = 0.5 and semimajor
// axis a = 1 started at pericentre,
//
//	x = 1 − e,  y = 0,  vx = 0,  vy = sqrt(μ·(1 + e)/(1 − e)) = √3,
//
// and default span [0, 2π], one period 2π·sqrt(a³/μ). The energy
// KeplerEnergy = −μ/(2a) = −0.5 and the angular momentum
// KeplerAngularMomentum = sqrt(μ·a·(1 − e²)) = √0.75 are conserved;
// KeplerExact gives the exact solution.
//
// Sources: E. Hairer, C. Lubich & G. Wanner, Geometric Numerical
// Integration, 2nd ed., Springer 2006, §I.2.3, doi:10.1007/3-540-30666-8
// (the same initial values with e = 0.6); E. Hairer, S. P. Nørsett &
// G. Wanner, Solving Ordinary Differential Equations I, 2nd ed.,
// Springer 1993, doi:10.1007/978-3-540-78862-1.
func Kepler() *ode.Problem {
	const e, mu = keplerDefaultE, 1.0
	return &ode.Problem{
		Name:       "kepler",
		Dim:        4,
		NumParams:  1,
		F:          keplerF,
		StateNames: []string{"x", "y", "vx", "vy"},
		ParamNames: []string{"mu"},
		Y0:         []float64{1 - e, 0, 0, math.Sqrt(mu * (1 + e) / (1 - e))},
		P:          []float64{mu},
		T0:         0,
		T1:         2 * math.Pi,
		Programs:   keplerPrograms,
		Offers:     builtinPrograms,
	}
}

// keplerPrograms returns the hand-written derivative programs of Kepler.
// They keep no state, so one set serves every goroutine.
func keplerPrograms() *ode.Programs {
	return &ode.Programs{F: keplerF, JVP: keplerJVP, VJP: keplerVJP, JacY: keplerJacY, DfDt: zeroDfDt}
}

func keplerF(_ float64, y, p, dy []float64) {
	x, yy, vx, vy := y[0], y[1], y[2], y[3]
	mu := p[0]
	r2 := float64(x*x) + float64(yy*yy) // rounded products: no FMA on any architecture
	f := -mu / (r2 * math.Sqrt(r2))
	dy[0] = vx
	dy[1] = vy
	dy[2] = f * x
	dy[3] = f * yy
}

// keplerJVP writes J_y·v + J_p·w of Kepler into out. With r = (x, y),
// r² = x² + y², a = 1/|r|³ and b = 3/|r|⁵ = 3·a/r², the acceleration
// −μ·a·r has the symmetric 2×2 Jacobian
//
//	K = −μ·(a·I − b·r·rᵀ) = μ·⎡ b·x² − a    b·x·y  ⎤
//	                          ⎣  b·x·y    b·y² − a ⎦
//
// so J_y = [[0, I], [K, 0]] and J_p = (0, 0, −a·x, −a·y)ᵀ (column μ).
// With d = (v₀, v₁) the position part of v and r·d = x·v₀ + y·v₁,
//
//	out = (v₂, v₃, μ·(b·x·(r·d) − a·v₀) − a·x·w₀, μ·(b·y·(r·d) − a·v₁) − a·y·w₀).
func keplerJVP(_ float64, y, p, v, w, out []float64) {
	x, yy := y[0], y[1]
	mu := p[0]
	r2 := float64(x*x) + float64(yy*yy) // rounded products: no FMA on any architecture
	a := 1 / (r2 * math.Sqrt(r2))
	b := 3 * a / r2
	rd := float64(x*v[0]) + float64(yy*v[1])
	brd := b * rd
	aw := a * w[0]
	out[0] = v[2]
	out[1] = v[3]
	out[2] = float64(mu*(float64(brd*x)-float64(a*v[0]))) - float64(aw*x)
	out[3] = float64(mu*(float64(brd*yy)-float64(a*v[1]))) - float64(aw*yy)
}

// keplerVJP writes uᵀJ_y into gy and uᵀJ_p into gp (J_y, J_p as in
// keplerJVP; K is symmetric). With c = (u₂, u₃) and r·c = x·u₂ + y·u₃,
//
//	gy = (μ·(b·x·(r·c) − a·u₂), μ·(b·y·(r·c) − a·u₃), u₀, u₁),   gp = (−a·(r·c)).
func keplerVJP(_ float64, y, p, u, gy, gp []float64) {
	x, yy := y[0], y[1]
	mu := p[0]
	r2 := float64(x*x) + float64(yy*yy)
	a := 1 / (r2 * math.Sqrt(r2))
	b := 3 * a / r2
	rc := float64(x*u[2]) + float64(yy*u[3])
	brc := b * rc
	gy[0] = float64(mu * (float64(brc*x) - float64(a*u[2])))
	gy[1] = float64(mu * (float64(brc*yy) - float64(a*u[3])))
	gy[2] = u[0]
	gy[3] = u[1]
	gp[0] = -float64(a * rc)
}

// keplerJacY writes J_y = [[0, I], [K, 0]] of Kepler (K as in keplerJVP)
// row-major into jac.
func keplerJacY(_ float64, y, p, jac []float64) {
	x, yy := y[0], y[1]
	mu := p[0]
	r2 := float64(x*x) + float64(yy*yy)
	a := 1 / (r2 * math.Sqrt(r2))
	b := 3 * a / r2
	kxy := float64(mu * b * x * yy)
	jac = jac[:16]
	clear(jac)
	jac[2], jac[7] = 1, 1
	jac[8], jac[9] = float64(mu*(float64(b*x*x)-a)), kxy
	jac[12], jac[13] = kxy, float64(mu*(float64(b*yy*yy)-a))
}

// KeplerEnergy returns the energy per unit reduced mass of the Kepler
// state y = (x, y, vx, vy) with p = (mu):
//
//	E = ½·(vx² + vy²) − μ / sqrt(x² + y²).
//
// It returns NaN if len(y) < 4 or len(p) < 1.
func KeplerEnergy(y, p []float64) float64 {
	if len(y) < 4 || len(p) < 1 {
		return math.NaN()
	}
	return 0.5*(y[2]*y[2]+y[3]*y[3]) - p[0]/math.Hypot(y[0], y[1])
}

// KeplerAngularMomentum returns the angular momentum per unit reduced
// mass of the Kepler state y = (x, y, vx, vy):
//
//	L = x·vy − y·vx.
//
// p is unused and may be nil. It returns NaN if len(y) < 4.
func KeplerAngularMomentum(y, _ []float64) float64 {
	if len(y) < 4 {
		return math.NaN()
	}
	return y[0]*y[3] - y[1]*y[2]
}

// KeplerExact writes into dst the exact state at time t of the Kepler
// problem started from the state y0 = (x, y, vx, vy) at time 0, with
// p = (mu). t may be negative or span many periods.
//
// The orbit must be bound (E = KeplerEnergy(y0, p) < 0). With the
// semimajor axis a = −μ/(2E), mean motion n = sqrt(μ/a³), and
//
//	e·cos E₀ = 1 − r₀/a,   e·sin E₀ = (r₀·v₀) / sqrt(μ·a),
//
// the change of eccentric anomaly ΔE = E − E₀ solves Kepler's equation
// M = E − e·sin E written as a difference from the start,
//
//	n·t = ΔE − e·cos E₀·sin ΔE + e·sin E₀·(1 − cos ΔE),
//
// by safeguarded Newton iteration to full double precision (after
// reducing n·t modulo 2π). The state then follows from Lagrange's f and
// g functions,
//
//	r(t) = f·r₀ + g·v₀,             v(t) = ḟ·r₀ + ġ·v₀,
//	f = 1 − (a/r₀)(1 − cos ΔE),     g = t − (ΔE − sin ΔE)/n,
//	ḟ = −sqrt(μ·a)·sin ΔE/(r·r₀),   ġ = 1 − (a/r)(1 − cos ΔE),
//
// with r = a·(1 − e·cos E). This form needs no argument of pericentre, so
// it is accurate for circular orbits too. dst may alias y0.
//
// It returns an error wrapping ErrInvalid if len(y0) ≠ 4, len(p) ≠ 1,
// len(dst) ≠ 4, μ ≤ 0, an input is not finite, or r₀ = 0; and one
// wrapping ErrUnbound if E ≥ 0 (speed at or above the escape speed
// sqrt(2μ/r₀)). On error dst is not written.
//
// Source: J. M. A. Danby, Fundamentals of Celestial Mechanics, 2nd ed.,
// Willmann-Bell 1988, ch. 6 (f and g functions in the eccentric anomaly).
func KeplerExact(y0, p []float64, t float64, dst []float64) error {
	switch {
	case len(y0) != 4:
		return fmt.Errorf("%w: KeplerExact: len(y0) = %d: must be 4", ErrInvalid, len(y0))
	case len(p) != 1:
		return fmt.Errorf("%w: KeplerExact: len(p) = %d: must be 1", ErrInvalid, len(p))
	case len(dst) != 4:
		return fmt.Errorf("%w: KeplerExact: len(dst) = %d: must be 4", ErrInvalid, len(dst))
	}
	mu := p[0]
	if !(mu > 0) || math.IsInf(mu, 1) {
		return fmt.Errorf("%w: KeplerExact: mu = %g: must be finite and > 0", ErrInvalid, mu)
	}
	if !isFinite(t) {
		return fmt.Errorf("%w: KeplerExact: t = %g: must be finite", ErrInvalid, t)
	}
	for i, v := range y0 {
		if !isFinite(v) {
			return fmt.Errorf("%w: KeplerExact: y0[%d] = %g: must be finite", ErrInvalid, i, v)
		}
	}
	x, y, vx, vy := y0[0], y0[1], y0[2], y0[3]
	r0 := math.Hypot(x, y)
	if r0 == 0 {
		return fmt.Errorf("%w: KeplerExact: |r| = 0 at y0: the force is singular", ErrInvalid)
	}
	energy := 0.5*(vx*vx+vy*vy) - mu/r0
	if !(energy < 0) {
		return fmt.Errorf("%w: KeplerExact: energy = %g ≥ 0 (speed %g, escape speed %g): no elliptic closed form",
			ErrUnbound, energy, math.Hypot(vx, vy), math.Sqrt(2*mu/r0))
	}
	a := -mu / (2 * energy)
	sqmua := math.Sqrt(mu * a)
	n := sqmua / (a * a)       // sqrt(μ/a³)
	c := 1 - r0/a              // e·cos E₀
	s := (x*vx + y*vy) / sqmua // e·sin E₀
	ecc := math.Hypot(c, s)

	m := math.Remainder(n*t, 2*math.Pi) // in [−π, π]
	dE := keplerSolve(m, c, s, ecc)

	sinE := math.Sin(dE)
	h := math.Sin(0.5 * dE)
	omc := 2 * h * h           // 1 − cos ΔE, without cancellation
	r := r0 + a*(c*omc+s*sinE) // a·(1 − c·cos ΔE + s·sin ΔE)
	f := 1 - (a/r0)*omc
	g := (m - (dE - sinE)) / n // t − (ΔE − sin ΔE)/n, with the 2πk of ΔE and n·t cancelled
	fd := -sqmua * sinE / (r * r0)
	gd := 1 - (a/r)*omc
	dst[0], dst[1], dst[2], dst[3] = f*x+g*vx, f*y+g*vy, fd*x+gd*vx, fd*y+gd*vy
	return nil
}

// keplerSolve returns x with x − c·sin x + s·(1 − cos x) = m, where
// e = hypot(c, s) < 1. The left side minus x equals
// e·(sin(E₀ + x) − sin E₀) for some E₀, so it lies in [−2e, 2e] and the
// root lies in [m − 2e, m + 2e]; the derivative 1 − c·cos x + s·sin x = r/a
// is positive. Newton steps that leave the bracket are replaced by
// bisection.
func keplerSolve(m, c, s, e float64) float64 {
	// The pad covers rounding in e; the bracket only guards Newton.
	lo, hi := m-2*e-1e-12, m+2*e+1e-12
	x := m
	for range 200 {
		sinx, cosx := math.Sincos(x)
		h := math.Sin(0.5 * x)
		res := x - c*sinx + s*2*h*h - m
		switch {
		case res > 0:
			hi = x
		case res < 0:
			lo = x
		default:
			return x
		}
		d := 1 - c*cosx + s*sinx
		xn := x - res/d
		if !(xn > lo && xn < hi) {
			xn = 0.5 * (lo + hi)
		}
		if math.Abs(xn-x) <= 2*0x1p-52*math.Max(1, math.Abs(x)) || xn == x {
			return xn
		}
		x = xn
	}
	return x
}
