package systems

import "github.com/gradsolve/gradsolve/ode"

// VanDerPol returns the van der Pol oscillator in its time-scaled form
//
//	x' = v
//	v' = μ·((1 − x²)·v − x)
//
// with states (x, v) and one parameter mu = μ > 0 (dimensionless).
//
//	mu  stiffness parameter, default 1
//
// This is the singular-perturbation form of Hairer & Wanner II, §IV.1,
// written ε·v' = (1 − x²)·v − x, with μ = 1/ε. It is the classical
// oscillator of van der Pol (1926)
//
//	d²z/dτ² − μ̃·(1 − z²)·dz/dτ + z = 0
//
// with μ̃ = √μ, after the change of time t = τ/μ̃ (x = z, v = dz/dt).
// At μ = 1 both forms coincide; the limit cycle then has period
// T ≈ 6.6633 and amplitude ≈ 2. For large μ the problem is stiff (Hairer
// & Wanner use ε = 1e-6); Stiff is left false at the default μ = 1.
//
// Default initial state (2, 0), close to the limit cycle; default span
// [0, 6.3], a little less than one period at μ = 1.
//
// Sources: B. van der Pol, "On relaxation-oscillations", Phil. Mag. 2
// (1926) 978–992, doi:10.1080/14786442608564127; E. Hairer & G. Wanner,
// Solving Ordinary Differential Equations II, 2nd ed., Springer 1996,
// §IV.1, doi:10.1007/978-3-642-05221-7.
func VanDerPol() *ode.Problem {
	return &ode.Problem{
		Name:       "vdp",
		Dim:        2,
		NumParams:  1,
		F:          vanDerPolF,
		StateNames: []string{"x", "v"},
		ParamNames: []string{"mu"},
		Y0:         []float64{2, 0},
		P:          []float64{1},
		T0:         0,
		T1:         6.3,
		Programs:   func() *ode.Programs { return vanDerPolLanes.add(vanDerPolPrograms()) },
		Offers:     vanDerPolLanes.offers(),
	}
}

// vanDerPolPrograms returns the hand-written derivative programs of
// VanDerPol. They keep no state, so one set serves every goroutine.
func vanDerPolPrograms() *ode.Programs {
	return &ode.Programs{F: vanDerPolF, JVP: vanDerPolJVP, VJP: vanDerPolVJP, JacY: vanDerPolJacY, DfDt: zeroDfDt}
}

func vanDerPolF(_ float64, y, p, dy []float64) {
	x, v := y[0], y[1]
	mu := p[0]
	dy[0] = v
	dy[1] = mu * (float64((1-float64(x*x))*v) - x) // rounded products: no FMA on any architecture
}

// vanDerPolJVP writes J_y·d + J_p·w of VanDerPol into out (d is the
// direction in the state, called v in ode.Programs), with
//
//	J_y = ⎡        0            1      ⎤,   J_p = ⎡          0          ⎤
//	      ⎣ −μ·(2·x·v + 1)   μ·(1 − x²) ⎦         ⎣ (1 − x²)·v − x  ⎦
//
// so out = (d₁, μ·((1 − x²)·d₁ − (2·x·v + 1)·d₀) + ((1 − x²)·v − x)·w₀).
func vanDerPolJVP(_ float64, y, p, d, w, out []float64) {
	x, v := y[0], y[1]
	mu := p[0]
	omx2 := 1 - float64(x*x)
	dxv := float64(float64(2*x)*v) + 1 // 2·x·v + 1
	out[0] = d[1]
	out[1] = float64(mu*(float64(omx2*d[1])-float64(dxv*d[0]))) + float64((float64(omx2*v)-x)*w[0])
}

// vanDerPolVJP writes uᵀJ_y into gy and uᵀJ_p into gp (J_y, J_p as in
// vanDerPolJVP):
//
//	gy = (−μ·(2·x·v + 1)·u₁,  u₀ + μ·(1 − x²)·u₁),   gp = (((1 − x²)·v − x)·u₁).
func vanDerPolVJP(_ float64, y, p, u, gy, gp []float64) {
	x, v := y[0], y[1]
	mu := p[0]
	omx2 := 1 - float64(x*x)
	dxv := float64(float64(2*x)*v) + 1
	gy[0] = -float64(mu * dxv * u[1])
	gy[1] = u[0] + float64(mu*omx2*u[1])
	gp[0] = float64((float64(omx2*v) - x) * u[1])
}

// vanDerPolJacY writes J_y of VanDerPol row-major into jac:
//
//	[[0, 1], [−μ·(2·x·v + 1), μ·(1 − x²)]].
func vanDerPolJacY(_ float64, y, p, jac []float64) {
	x, v := y[0], y[1]
	mu := p[0]
	jac = jac[:4]
	jac[0], jac[1] = 0, 1
	jac[2] = -float64(mu * (float64(float64(2*x)*v) + 1))
	jac[3] = float64(mu * (1 - float64(x*x)))
}

// vdpStiffDefaultMu is the μ VanDerPolStiff uses when mu == 0.
const vdpStiffDefaultMu = 1e3

// VanDerPolStiff returns the van der Pol oscillator of VanDerPol, the
// same equations in the same time scaling,
//
//	x' = v
//	v' = μ·((1 − x²)·v − x),
//
// at a large μ, where it is a relaxation oscillator and stiff (Stiff is
// true). mu is the parameter's default; mu == 0 selects 1e3. It should
// be positive and finite; it is stored as given (a non-finite one fails
// Problem.Validate). The problem is named "vdp_stiff"; its derivative
// programs are VanDerPol's.
//
// Default initial state (2, 0); default span [0, 2] for every μ. In this
// scaling the period does not grow with μ: with ε = 1/μ the slow motion
// follows the manifold (1 − x²)·v = x, where x' = v = x/(1 − x²), so
// each half period takes ∫ from 2 to 1 of (1 − x²)/x dx = 3/2 − ln 2
// and the period tends to 3 − 2·ln 2 ≈ 1.614 as μ → ∞. (The classical
// (3 − 2·ln 2)·μ̃ is the period in the time τ = √μ·t of
// d²z/dτ² − μ̃·(1 − z²)·dz/dτ + z = 0, μ̃ = √μ; dividing by √μ gives the
// same limit.)
// At μ = 1e3 the first correction of the classical expansion,
// 3·α·μ^(−2/3) with α ≈ 2.338 the first zero of Ai(−x), raises it to
// about 1.684, and a fine fixed-step integration gives 1.680; so [0, 2]
// holds about 1.2 periods and both fast transitions (near t = 0.83 and
// t = 1.67). In this scaling it is also the span of the vdpol problem of
// the R package deTestSet (the unscaled form with μ̃ = 1000 over
// τ ∈ [0, 2000], which is μ = 1e6 and t ∈ [0, 2] here).
//
// Sources: as VanDerPol. The correction term is the first of the
// classical asymptotic expansion of the period (A. A. Dorodnitsyn, 1947);
// the value 1.680 comes from classical RK4 with step 2e-6 (not a test).
func VanDerPolStiff(mu float64) *ode.Problem {
	if mu == 0 {
		mu = vdpStiffDefaultMu
	}
	return &ode.Problem{
		Name:       "vdp_stiff",
		Dim:        2,
		NumParams:  1,
		F:          vanDerPolF,
		StateNames: []string{"x", "v"},
		ParamNames: []string{"mu"},
		Y0:         []float64{2, 0},
		P:          []float64{mu},
		T0:         0,
		T1:         2,
		Stiff:      true,
		Programs:   func() *ode.Programs { return vanDerPolLanes.add(vanDerPolPrograms()) },
		Offers:     vanDerPolLanes.offers(),
	}
}
