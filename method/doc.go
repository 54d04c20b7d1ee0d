// Package method holds explicit embedded Runge–Kutta methods as data.
//
// A method is a Butcher tableau
//
//	c | A
//	--+----
//	  | bᵀ      (the solution weights, order Order)
//	  | eᵀ      (the error weights, e = b − b̂, stored directly)
//
// with stages
//
//	k_i = f(t + c_i·h, y + h·Σ_{j<i} a_ij·k_j),   i = 1..s,
//
// the proposed solution y₁ = y + h·Σ b_i·k_i and the local error estimate
// err = h·Σ e_i·k_i, where b̂ = b − e are the weights of the embedded
// solution of order ErrOrder.
//
// The tableaus Tsit5, DP5, Vern7 and DP8 are package variables shared by
// every solve; treat them as read-only. Each states its published source.
// A user may build a Tableau of their own and check it with Validate.
//
// Linearly implicit Rosenbrock methods for stiff problems, Rosenbrock23
// and Rodas5P, are data too (type Rosenbrock, in the increment form the
// engine package ros uses; see its doc comment).
//
// Method is either kind (*Tableau or *Rosenbrock), with its Family: what
// gradsolve.Options.Method takes, and what an engine says it runs.
package method
