package method

// √2 to 66 significant digits; the coefficients of Rosenbrock23 below are
// exact expressions in it, evaluated by the compiler's exact constant
// arithmetic and rounded to float64 once.
const sqrt2 = 1.41421356237309504880168872420969807856967187537694807317667973799

// Coefficients of ode23s in closed form. With d = 1/(2+√2) = 1 − √2/2 and
// e32 = 6 + √2 (Shampine & Reichelt's constants):
//
//	d·(e32 − 2) = (4+√2)/(2+√2) = 3 − √2,
//	e32·d       = (6+√2)/(2+√2) = 5 − 2√2,
//	1/(1 − 2d)  = 1/(√2 − 1)    = 1 + √2.
const (
	ros23D     = 1 - sqrt2/2
	ros23G31   = 3 - sqrt2
	ros23G32   = -(5 - 2*sqrt2)
	ros23Dense = 1 + sqrt2
)

// Rosenbrock23 is the modified Rosenbrock pair of Shampine & Reichelt's
// ode23s: 3 stages, a 2nd-order solution that is L-stable (R(∞) = 0), and
// an error estimate from a 3rd-order companion. With W = I − h·d·J,
// T = ∂f/∂t, F0 = f(t, y), the paper's step is
//
//	k1 = W⁻¹·(F0 + h·d·T)
//	F1 = f(t + h/2, y + h/2·k1);      k2 = W⁻¹·(F1 − k1) + k1
//	y_new = y + h·k2
//	F2 = f(t + h, y_new);             k3 = W⁻¹·(F2 − e32·(k2 − F1) − 2·(k1 − F0) + h·d·T)
//	error = h/6·(k1 − 2·k2 + k3).
//
// In the increment form of Rosenbrock (K_i = h·k_i) this is, exactly:
// eliminating F0 = W·k1 − h·d·T and F1 = W·k2 + h·d·J·k1 from the k2 and
// k3 equations gives W·K2 = h·F1 − h·d·J·K1 and
// W·K3 = h·F2 + h·J·(d·(e32−2)·K1 − e32·d·K2) − h²·d·T, so
//
//	γ = d,  c = (0, 1/2, 1),  α21 = 1/2, α31 = 0, α32 = 1,
//	Γ21 = −d,  Γ31 = d·(e32 − 2) = 3 − √2,  Γ32 = −e32·d = −(5 − 2√2),
//	d_i = (d, 0, −d),  m = (0, 1, 0),  e = (−1/6, 1/3, −1/6).
//
// The 3rd-order companion is ŷ = y + h·(k1 + 4·k2 + k3)/6 (m̂ = (1, 4,
// 1)/6, of order 3 with the exact Jacobian), so E = m − m̂ is the
// negative of ode23s's error vector; the norm is the same. The error
// estimate is O(h³) (EstimateOrder 3, controller exponent 1/3).
//
// The last stage is evaluated at (t + h, y_new) (c₃ = 1, α₃ = (m₁, m₂),
// m₃ = 0): the method is FSAL, and F2 of an accepted step is F0 of the
// next. Without error control the third stage could be skipped.
//
// Dense holds the paper's free interpolant,
// y(t + θh) = y + h·(θ(1−θ)/(1−2d)·k1 + θ(θ−2d)/(1−2d)·k2), which in the
// form of Rosenbrock.Dense is D_1 = (K1 − K2)/(1 − 2d) = (1 + √2)·(K1 − K2),
// D_2 = D_3 = 0.
//
// Source: L. F. Shampine and M. W. Reichelt, The MATLAB ODE Suite, SIAM J.
// Sci. Comput. 18 (1997) 1–22, doi:10.1137/S1064827594276424 (the
// ode23s formulas and interpolant; the same constants as OrdinaryDiffEq.jl's
// Rosenbrock23Tableau and the JAX gradsolve reference §2.4).
var Rosenbrock23 = &Rosenbrock{
	Name:     "Rosenbrock23",
	Source:   "Shampine & Reichelt, The MATLAB ODE Suite, SIAM J. Sci. Comput. 18 (1997) 1–22, doi:10.1137/S1064827594276424",
	Order:    2,
	ErrOrder: 3,
	Gamma:    ros23D,
	C:        []float64{0, 1.0 / 2, 1},
	Alpha:    [][]float64{{}, {1.0 / 2}, {0, 1}},
	GammaOff: [][]float64{{}, {-ros23D}, {ros23G31, ros23G32}},
	D:        []float64{ros23D, 0, -ros23D},
	M:        []float64{0, 1, 0},
	E:        []float64{-1.0 / 6, 1.0 / 3, -1.0 / 6},
	Dense: [][]float64{
		{ros23Dense, -ros23Dense, 0},
		{0, 0, 0},
		{0, 0, 0},
	},
}
