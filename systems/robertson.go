package systems

import (
	"math"

	"github.com/gradsolve/gradsolve/ode"
)

// Robertson returns Robertson's chemical kinetics problem
//
//	y1' = −k1·y1 + k3·y2·y3
//	y2' =  k1·y1 − k3·y2·y3 − k2·y2²
//	y3' =  k2·y2²
//
// for the reactions A → B (rate k1), B + B → C + B (rate k2) and
// B + C → A + C (rate k3), with states (y1, y2, y3), the concentrations
// of A, B and C, and parameters
//
//	k1  rate of A → B,          default 0.04
//	k2  rate of B + B → C + B,  default 3e7
//	k3  rate of B + C → A + C,  default 1e4
//
// The concentrations are dimensionless; time is in the problem's own
// unit, k1 in 1/time, k2 and k3 in 1/(concentration·time). The rates
// span nine orders of magnitude, so the problem is stiff (Stiff is true):
// y2 stays of order 1e-5 after a fast transient while y1 and y3 evolve
// over the whole span.
//
// The right-hand side sums to zero, so the mass y1 + y2 + y3
// (RobertsonMass) is conserved: it stays 1 from the default initial
// state. In floating point F's three components cancel to within a few
// roundings of the largest term, not to exactly 0.
//
// Default initial state (1, 0, 0); default span [0, 1e5], the long-time
// run of Hairer & Wanner. The problem is named "robertson".
//
// F performs the same float64 operations, in the same order, as
// examples/robertson.ode (y2² is y2·y2, formed once), so the two agree
// bitwise on architectures that do not fuse multiply-adds.
//
// Sources: H. H. Robertson, "The solution of a set of reaction rate
// equations", in J. Walsh (ed.), Numerical Analysis: An Introduction,
// Academic Press 1966, 178–182; E. Hairer & G. Wanner, Solving Ordinary
// Differential Equations II, 2nd ed., Springer 1996, §IV.10 (problem
// ROBER), doi:10.1007/978-3-642-05221-7.
func Robertson() *ode.Problem {
	return &ode.Problem{
		Name:       "robertson",
		Dim:        3,
		NumParams:  3,
		F:          robertsonF,
		StateNames: []string{"y1", "y2", "y3"},
		ParamNames: []string{"k1", "k2", "k3"},
		Y0:         []float64{1, 0, 0},
		P:          []float64{0.04, 3e7, 1e4},
		T0:         0,
		T1:         1e5,
		Stiff:      true,
		Programs:   func() *ode.Programs { return robertsonLanes.add(robertsonPrograms()) },
		Offers:     robertsonLanes.offers(),
	}
}

// RobertsonMass returns y1 + y2 + y3, the total concentration that
// Robertson's equations conserve. It returns NaN if len(y) < 3.
func RobertsonMass(y []float64) float64 {
	if len(y) < 3 {
		return math.NaN()
	}
	return y[0] + y[1] + y[2]
}

// robertsonPrograms returns the hand-written derivative programs of
// Robertson. They keep no state, so one set serves every goroutine (the
// lane form robertsonLanes adds does: Programs makes one per call).
func robertsonPrograms() *ode.Programs {
	return &ode.Programs{F: robertsonF, JVP: robertsonJVP, VJP: robertsonVJP, JacY: robertsonJacY, DfDt: zeroDfDt}
}

// robertsonF is Robertson's right-hand side in the operation order of
// examples/robertson.ode: −k1*y1 is (−k1)·y1, k3*y2*y3 is (k3·y2)·y3 and
// k2*y2^2 is k2·(y2·y2). Every product is rounded before it is added.
func robertsonF(_ float64, y, p, dy []float64) {
	y1, y2, y3 := y[0], y[1], y[2]
	k1, k2, k3 := p[0], p[1], p[2]
	b := float64(float64(k3*y2) * y3) // B + C → A + C
	c := float64(k2 * float64(y2*y2)) // B + B → C + B
	dy[0] = float64(-k1*y1) + b
	dy[1] = float64(k1*y1) - b - c
	dy[2] = c
}

// robertsonJVP writes J_y·v + J_p·w of Robertson into out, with
//
//	      ⎡ −k1      k3·y3          k3·y2 ⎤         ⎡ −y1     0     y2·y3 ⎤
//	J_y = ⎢  k1  −k3·y3 − 2·k2·y2  −k3·y2 ⎥,  J_p = ⎢  y1   −y2²  −y2·y3 ⎥
//	      ⎣  0       2·k2·y2          0   ⎦         ⎣  0     y2²     0   ⎦
//
// (J_p columns for k1, k2, k3). With the tangents of the three reaction
// rates,
//
//	a = k1·v₀ + y1·w₀                       (of k1·y1)
//	b = k3·(y3·v₁ + y2·v₂) + y2·y3·w₂       (of k3·y2·y3)
//	c = 2·k2·y2·v₁ + y2²·w₁                 (of k2·y2²)
//
// out = (−a + b, a − b − c, c), the same combination as F.
func robertsonJVP(_ float64, y, p, v, w, out []float64) {
	y1, y2, y3 := y[0], y[1], y[2]
	k1, k2, k3 := p[0], p[1], p[2]
	a := float64(k1*v[0]) + float64(y1*w[0])
	b := float64(k3*(float64(y3*v[1])+float64(y2*v[2]))) + float64(float64(y2*y3)*w[2])
	c := float64(float64(float64(2*k2)*y2)*v[1]) + float64(float64(y2*y2)*w[1])
	out[0] = b - a
	out[1] = a - b - c
	out[2] = c
}

// robertsonVJP writes uᵀJ_y into gy and uᵀJ_p into gp (J_y, J_p as in
// robertsonJVP):
//
//	gy = (k1·(u₁ − u₀),  k3·y3·(u₀ − u₁) + 2·k2·y2·(u₂ − u₁),  k3·y2·(u₀ − u₁))
//	gp = (y1·(u₁ − u₀),  y2²·(u₂ − u₁),  y2·y3·(u₀ − u₁)).
func robertsonVJP(_ float64, y, p, u, gy, gp []float64) {
	y1, y2, y3 := y[0], y[1], y[2]
	k1, k2, k3 := p[0], p[1], p[2]
	d10 := u[1] - u[0] // A → B moves mass from y1 to y2
	d01 := u[0] - u[1] // B + C → A + C moves it back
	d21 := u[2] - u[1] // B + B → C + B moves it from y2 to y3
	gy[0] = float64(k1 * d10)
	gy[1] = float64(float64(k3*y3)*d01) + float64(float64(float64(2*k2)*y2)*d21)
	gy[2] = float64(float64(k3*y2) * d01)
	gp[0] = float64(y1 * d10)
	gp[1] = float64(float64(y2*y2) * d21)
	gp[2] = float64(float64(y2*y3) * d01)
}

// robertsonJacY writes J_y of Robertson (see robertsonJVP) row-major
// into jac.
func robertsonJacY(_ float64, y, p, jac []float64) {
	y2, y3 := y[1], y[2]
	k1, k2, k3 := p[0], p[1], p[2]
	jac = jac[:9]
	k3y3, k3y2, k2y2 := float64(k3*y3), float64(k3*y2), float64(float64(2*k2)*y2)
	jac[0], jac[1], jac[2] = -k1, k3y3, k3y2
	jac[3], jac[4], jac[5] = k1, -k3y3-k2y2, -k3y2
	jac[6], jac[7], jac[8] = 0, k2y2, 0
}
