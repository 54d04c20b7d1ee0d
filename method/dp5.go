package method

// DP5 is the Dormand–Prince 5(4) pair, the method of Hairer and Wanner's
// DOPRI5 and of MATLAB's ode45: 7 stages, order 5, embedded order 4
// (ErrOrder 4), FSAL (c₇ = 1, row 7 of A equals B, b₇ = 0), so a step
// costs 6 new function evaluations. The solution is the 5th-order one
// (local extrapolation); E = b − b̂ with e₇ = −1/40.
//
// Source: J. R. Dormand and P. J. Prince, A family of embedded Runge–Kutta
// formulae, J. Comput. Appl. Math. 6 (1980) 19–26,
// doi:10.1016/0771-050X(80)90013-3 (the pair RK5(4)7M).
//
// The coefficients are exact rationals, written as Go constant expressions
// so that each is rounded to float64 once. They were read from Hairer &
// Wanner's dopri5.f, subroutine CDOPRI ("RUNGE-KUTTA COEFFICIENTS OF DORMAND
// AND PRINCE (1980)"), as stored in github.com/cpmech/hwode, dopri5.f
// (commit 784b80fe5ed0); the error weights E1..E7 there are b − b̂.
var DP5 = &Tableau{
	Name:     "DP5",
	Source:   "Dormand & Prince, A family of embedded Runge–Kutta formulae, J. Comput. Appl. Math. 6 (1980) 19–26, doi:10.1016/0771-050X(80)90013-3",
	Order:    5,
	ErrOrder: 4,
	C:        []float64{0, 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9, 1, 1},
	A: [][]float64{
		{},
		{1.0 / 5},
		{3.0 / 40, 9.0 / 40},
		{44.0 / 45, -56.0 / 15, 32.0 / 9},
		{19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729},
		{9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656},
		{35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84},
	},
	B: []float64{35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84, 0},
	E: []float64{71.0 / 57600, 0, -71.0 / 16695, 71.0 / 1920, -17253.0 / 339200, 22.0 / 525, -1.0 / 40},
}
