package systems

import "github.com/gradsolve/gradsolve/ode"

// zeroDfDt is the DfDt program of every built-in system: all of them are
// autonomous, so ∂f/∂t = 0. It writes zeros into out.
func zeroDfDt(_ float64, _, _, out []float64) {
	clear(out)
}

// builtinPrograms is what every built-in system's Programs sets (its
// Problem.Offers): the tangent, the cotangent, the dense Jacobian and
// ∂f/∂t, and none of the second derivatives that Rosenbrock
// sensitivities and the Rosenbrock reverse replay need.
const builtinPrograms = ode.HasJVP | ode.HasVJP | ode.HasJacY | ode.HasDfDt
