package systems

import "github.com/gradsolve/gradsolve/ode"

// HIRES returns the HIRES problem ("High Irradiance RESponse" of
// photomorphogenesis), a stiff system of 8 nonlinear equations with no
// parameters:
//
//	y1' = −1.71·y1 + 0.43·y2 + 8.32·y3 + 0.0007
//	y2' =  1.71·y1 − 8.75·y2
//	y3' = −10.03·y3 + 0.43·y4 + 0.035·y5
//	y4' =  8.32·y2 + 1.71·y3 − 1.12·y4
//	y5' = −1.745·y5 + 0.43·(y6 + y7)
//	y6' = −280·y6·y8 + 0.69·y4 + 1.71·y5 − 0.43·y6 + 0.69·y7
//	y7' =  280·y6·y8 − 1.81·y7
//	y8' = −y7'
//
// The states are, in order, the concentrations of the phytochrome forms
// Pr, Pfr, PrX, PfrX, PrX2, PfrX2, PfrX2E and of the enzyme E (the names
// of the R package deTestSet's version). The coefficients are sums of ten
// rate constants (k1 = 1.71, k2 = 0.43, k3 = 8.32, k4 = 0.69, k5 = 0.035,
// k6 = 8.32, k7 = 280, k8 = 0.69, k9 = 0.69 and the source term 0.0007;
// e.g. 8.75 = k2 + k3, 1.81 = k2 + k8 + k9); they and the time are used
// as plain numbers, with no units, as in the test set's hires.f. The
// equations are those of the test set's hires.f (subroutine feval),
// written the same way here: y5' factors 0.43 out of y6 + y7, and y8' is
// the negation of y7', so y7 + y8 is conserved exactly (F's last two
// components are exact negatives of each other).
//
// The eigenvalues of J_y have negative or zero real parts (one is 0:
// y7 + y8 is conserved). The fastest is about −10.5 at the initial state and about
// −280·y6 ≈ −210 when y6 peaks near 0.75 (t ≈ 10.7), against a span of
// 321.8, so explicit methods take steps set by stability: the problem
// is stiff (Stiff is true).
//
// Default initial state (1, 0, 0, 0, 0, 0, 0, 0.0057); default span
// [0, 321.8122], the test set's; HIRESReference is the published state
// at its end. The problem is named "hires".
//
// F performs the same float64 operations, in the same order, as
// examples/hires.ode, so the two agree bitwise on architectures that do
// not fuse multiply-adds.
//
// Sources: E. Schäfer, "A new approach to explain the 'high irradiance
// responses' of photomorphogenesis on the basis of phytochrome",
// J. Math. Biology 2 (1975) 41–56; E. Hairer & G. Wanner, Solving
// Ordinary Differential Equations II, 2nd ed., Springer 1996, §IV.10
// (problem HIRES), doi:10.1007/978-3-642-05221-7;
// F. Mazzia & C. Magherini, Test Set for Initial Value Problem Solvers,
// release 2.4, Department of Mathematics, University of Bari and INdAM,
// Research Unit of Bari, February 2008, problem HIRES, file hires.f
// (revision "hires.F,v 1.2 2006/10/02"), https://archimede.uniba.it/~testset/.
func HIRES() *ode.Problem {
	return &ode.Problem{
		Name:       "hires",
		Dim:        8,
		NumParams:  0,
		F:          hiresF,
		StateNames: []string{"y1", "y2", "y3", "y4", "y5", "y6", "y7", "y8"},
		Y0:         []float64{1, 0, 0, 0, 0, 0, 0, 0.0057},
		T0:         0,
		T1:         321.8122,
		Stiff:      true,
		Programs:   func() *ode.Programs { return hiresLanes.add(hiresPrograms()) },
		Offers:     hiresLanes.offers(),
	}
}

// HIRESReference is the reference solution of HIRES at t = 321.8122 (the
// end of its default span) from the default initial state, as published
// in the IVP test set of Mazzia & Magherini: "computed using true double
// precision RADAU5 on Cray C90, uround = 1.01d-19, rtol = atol = h0 =
// 1.1d-18", 16 significant digits. Read from subroutine hiressol of
// src/Ex_hires.f in the CRAN package deTestSet 1.1.7.4 (GitHub mirror
// cran/deTestSet, commit d5c4cbe821920ad0a2ac36ec03c6175531316213, lines
// 111–118), which is adapted from the test set's hires.f and keeps its
// header (revision "hires.F,v 1.2 2006/10/02"); the same values are in
// that package's R/ex_reference.R, reference("hires"). They keep
// y7 + y8 = 0.0057, the conserved sum, to all 16 digits.
//
// It is a value to compare against; do not modify it.
var HIRESReference = [8]float64{
	0.7371312573325668e-3,
	0.1442485726316185e-3,
	0.5888729740967575e-4,
	0.1175651343283149e-2,
	0.2386356198831331e-2,
	0.6238968252742796e-2,
	0.2849998395185769e-2,
	0.2850001604814231e-2,
}

// hiresPrograms returns the hand-written derivative programs of HIRES.
// They keep no state, so one set serves every goroutine.
func hiresPrograms() *ode.Programs {
	return &ode.Programs{F: hiresF, JVP: hiresJVP, VJP: hiresVJP, JacY: hiresJacY, DfDt: zeroDfDt}
}

// hiresF is the HIRES right-hand side in the operation order of
// examples/hires.ode: sums left to right, r = (280·y6)·y8 formed once,
// y8' = −y7'. Every product is rounded before it is added.
func hiresF(_ float64, y, _, dy []float64) {
	y1, y2, y3, y4, y5, y6, y7, y8 := y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7]
	r := float64(float64(280*y6) * y8) // PfrX2 + E → PfrX2E
	dy[0] = float64(-1.71*y1) + float64(0.43*y2) + float64(8.32*y3) + 0.0007
	dy[1] = float64(1.71*y1) - float64(8.75*y2)
	dy[2] = float64(-10.03*y3) + float64(0.43*y4) + float64(0.035*y5)
	dy[3] = float64(8.32*y2) + float64(1.71*y3) - float64(1.12*y4)
	dy[4] = float64(-1.745*y5) + float64(0.43*(y6+y7))
	dy[5] = -r + float64(0.69*y4) + float64(1.71*y5) - float64(0.43*y6) + float64(0.69*y7)
	f7 := r - float64(1.81*y7)
	dy[6] = f7
	dy[7] = -f7
}

// hiresJVP writes J_y·v of HIRES into out (there are no parameters, so
// w is empty). J_y is constant except for the terms of r = 280·y6·y8,
// whose tangent is ṙ = 280·(y6·v₇ + y8·v₅) (0-based v):
//
//	out₀ = −1.71·v₀ + 0.43·v₁ + 8.32·v₂
//	out₁ =  1.71·v₀ − 8.75·v₁
//	out₂ = −10.03·v₂ + 0.43·v₃ + 0.035·v₄
//	out₃ =  8.32·v₁ + 1.71·v₂ − 1.12·v₃
//	out₄ = −1.745·v₄ + 0.43·(v₅ + v₆)
//	out₅ = −ṙ + 0.69·v₃ + 1.71·v₄ − 0.43·v₅ + 0.69·v₆
//	out₆ =  ṙ − 1.81·v₆
//	out₇ = −out₆.
func hiresJVP(_ float64, y, _, v, _, out []float64) {
	y6, y8 := y[5], y[7]
	rd := float64(280 * (float64(y6*v[7]) + float64(y8*v[5])))
	out[0] = float64(-1.71*v[0]) + float64(0.43*v[1]) + float64(8.32*v[2])
	out[1] = float64(1.71*v[0]) - float64(8.75*v[1])
	out[2] = float64(-10.03*v[2]) + float64(0.43*v[3]) + float64(0.035*v[4])
	out[3] = float64(8.32*v[1]) + float64(1.71*v[2]) - float64(1.12*v[3])
	out[4] = float64(-1.745*v[4]) + float64(0.43*(v[5]+v[6]))
	out[5] = -rd + float64(0.69*v[3]) + float64(1.71*v[4]) - float64(0.43*v[5]) + float64(0.69*v[6])
	g7 := rd - float64(1.81*v[6])
	out[6] = g7
	out[7] = -g7
}

// hiresVJP writes uᵀJ_y of HIRES into gy, column by column (0-based u);
// gp has length 0:
//
//	gy₀ = 1.71·(u₁ − u₀)
//	gy₁ = 0.43·u₀ − 8.75·u₁ + 8.32·u₃
//	gy₂ = 8.32·u₀ − 10.03·u₂ + 1.71·u₃
//	gy₃ = 0.43·u₂ − 1.12·u₃ + 0.69·u₅
//	gy₄ = 0.035·u₂ − 1.745·u₄ + 1.71·u₅
//	gy₅ = 0.43·(u₄ − u₅) + 280·y8·(u₆ − u₅ − u₇)
//	gy₆ = 0.43·u₄ + 0.69·u₅ + 1.81·(u₇ − u₆)
//	gy₇ = 280·y6·(u₆ − u₅ − u₇).
func hiresVJP(_ float64, y, _, u, gy, _ []float64) {
	y6, y8 := y[5], y[7]
	d := u[6] - u[5] - u[7] // r moves mass from y6 and y8 to y7
	gy[0] = float64(1.71 * (u[1] - u[0]))
	gy[1] = float64(0.43*u[0]) - float64(8.75*u[1]) + float64(8.32*u[3])
	gy[2] = float64(8.32*u[0]) - float64(10.03*u[2]) + float64(1.71*u[3])
	gy[3] = float64(0.43*u[2]) - float64(1.12*u[3]) + float64(0.69*u[5])
	gy[4] = float64(0.035*u[2]) - float64(1.745*u[4]) + float64(1.71*u[5])
	gy[5] = float64(0.43*(u[4]-u[5])) + float64(float64(280*y8)*d)
	gy[6] = float64(0.43*u[4]) + float64(0.69*u[5]) + float64(1.81*(u[7]-u[6]))
	gy[7] = float64(float64(280*y6) * d)
}

// hiresJacY writes J_y of HIRES row-major into jac (the rows of
// hiresJVP; 0-based):
//
//	row 5: (0, 0, 0, 0.69, 1.71, −280·y8 − 0.43, 0.69, −280·y6)
//	row 6: (0, 0, 0, 0, 0, 280·y8, −1.81, 280·y6)
//	row 7: −row 6
//
// and the constant rows 0–4 as in the equations.
func hiresJacY(_ float64, y, _, jac []float64) {
	y6, y8 := y[5], y[7]
	jac = jac[:64]
	clear(jac)
	a, b := float64(280*y8), float64(280*y6)
	jac[0*8+0], jac[0*8+1], jac[0*8+2] = -1.71, 0.43, 8.32
	jac[1*8+0], jac[1*8+1] = 1.71, -8.75
	jac[2*8+2], jac[2*8+3], jac[2*8+4] = -10.03, 0.43, 0.035
	jac[3*8+1], jac[3*8+2], jac[3*8+3] = 8.32, 1.71, -1.12
	jac[4*8+4], jac[4*8+5], jac[4*8+6] = -1.745, 0.43, 0.43
	jac[5*8+3], jac[5*8+4], jac[5*8+5], jac[5*8+6], jac[5*8+7] = 0.69, 1.71, -a-0.43, 0.69, -b
	jac[6*8+5], jac[6*8+6], jac[6*8+7] = a, -1.81, b
	jac[7*8+5], jac[7*8+6], jac[7*8+7] = -a, 1.81, -b
}
