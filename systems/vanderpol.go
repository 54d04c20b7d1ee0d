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
	}
}

func vanDerPolF(_ float64, y, p, dy []float64) {
	x, v := y[0], y[1]
	mu := p[0]
	dy[0] = v
	dy[1] = mu * (float64((1-float64(x*x))*v) - x) // rounded products: no FMA on any architecture
}
