// Package systems holds gradsolve's built-in test systems: small
// ordinary differential equations
//
//	dy/dt = f(t, y, p),   y(T0) = Y0,   t ∈ [T0, T1],
//
// each returned as an *ode.Problem with its names, default parameters,
// default initial state and default time span filled in.
//
//	Lorenz      3 states, chaotic attractor (Lorenz 1963)
//	VanDerPol   2 states, limit cycle; stiff for large mu (van der Pol 1926)
//	Lorenz96    n states, cyclic chaotic model (Lorenz 1996)
//	Linear      n states, y' = A·y with a closed-form solution
//	Kepler      4 states, planar two-body problem with a closed form
//	Halo        6 states, a star in a flattened logarithmic halo
//
// and the stiff ones (Problem.Stiff set):
//
//	Robertson       3 states, chemical kinetics with rates over nine decades (Robertson 1966)
//	HIRES           8 states, plant photomorphogenesis, with a published reference solution (Schäfer 1975)
//	VanDerPolStiff  2 states, van der Pol at large mu (default 1e3), a relaxation oscillation
//	LinearStiff     n states, y' = A·y with chosen negative eigenvalues and an exact solution
//
// Every constructor returns a fresh Problem, so a caller may change its
// defaults without affecting other callers. Each right-hand side F
// follows the ode.Func contract: it writes every component of dy, does
// not allocate, and only reads state captured at construction (which is
// never written afterwards), so it is safe for concurrent use. F does not
// check slice lengths; the engines guarantee them (ode.Func).
//
// Every system also sets Problem.Programs to hand-written derivative
// programs (ode.Programs): J_y·v + J_p·w, uᵀJ_y and uᵀJ_p, the dense
// J_y, and ∂f/∂t (zero: all the systems are autonomous), so a Go problem
// can be differentiated without the symbolic front end. Their F is the
// problem's F. They keep no state and do not allocate, so one set may be
// shared by every goroutine; like F, every product is rounded before it
// is added (an explicit float64 conversion), so no architecture fuses an
// FMA. Each function's comment gives its formulas.
//
// Helpers that evaluate invariants (KeplerEnergy, HaloEnergy,
// RobertsonMass, …) return
// NaN rather than panic when a slice is too short. Constructors and
// KeplerExact return errors wrapping ErrInvalid (bad arguments) or
// ErrUnbound (an orbit with no closed elliptic form).
//
// All and ByName list the systems at their defaults.
package systems
