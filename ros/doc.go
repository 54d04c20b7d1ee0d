// Package ros integrates one trajectory at a time with a linearly
// implicit Rosenbrock method (package method: Rosenbrock23, Rodas5P)
// under the same adaptive step-size control as the explicit engine
// (package control), for stiff problems.
//
// A step of size h from (t, y) solves, with J = ∂f/∂y(t, y) and
// f_t = ∂f/∂t(t, y) taken once per step,
//
//	(I − h·γ·J)·K_i = h·f(t + c_i·h, y + Σ_{j<i} α_ij·K_j) + h·J·Σ_{j<i} Γ_ij·K_j + h²·d_i·f_t
//	y_new = y + Σ m_i·K_i,   error = Σ e_i·K_i
//
// with one LU factorisation of W = I − h·γ·J (partial pivoting, no
// allocation) shared by all stages. A step whose W is singular, or whose
// result is not finite, is rejected and retried smaller; if the step
// size underflows the trajectory gets its status. J and f_t come from
// the problem's derivative programs (ode.Programs.JacY and DfDt), which
// every problem compiled from formulas has.
//
// Save times are computed like the explicit engine's: one step of the
// method from the start of the accepted step that contains them, which
// never alters the accepted mesh (or, with DenseSave, the continuous
// extension). The adaptive loop and the replay walks are package ivp's,
// shared with the explicit engine.
package ros
