package fit

import (
	"math"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/sym"
	"github.com/gradsolve/gradsolve/sym/tape"
)

// The test problems, compiled from formulas (package sym/tape), and
// their exact solutions.

func build(t testing.TB, m *sym.Model) *gradsolve.Problem {
	t.Helper()
	if err := m.Err(); err != nil {
		t.Fatal(err)
	}
	set, err := tape.Build(m)
	if err != nil {
		t.Fatal(err)
	}
	return set.Problem()
}

// decayProblem is y' = −k·y·√a + z·√(k − c): with a = 1 and z = 0 the
// linear decay y(t) = y0·e^(−k·t), whose every derivative is known in
// closed form. a < 0 makes the right-hand side NaN (a trajectory that
// fails); z = 0 and k < c make it NaN too (0·NaN), so that c is a
// barrier the fit must not cross. Parameters (k, a, z, c).
func decayProblem(t testing.TB) *gradsolve.Problem {
	m := sym.NewModel("decay")
	y := m.State("y", 1)
	k, a, z, c := m.Param("k", 1), m.Param("a", 1), m.Param("z", 0), m.Param("c", 0)
	m.Deriv(y, k.Mul(y).Mul(sym.Sqrt(a)).Neg().Add(z.Mul(sym.Sqrt(k.Sub(c)))))
	return build(t, m)
}

// oscillatorProblem is the damped oscillator x' = v, v' = −ω²x − 2ζωv.
// Parameters (ω, ζ).
func oscillatorProblem(t testing.TB) *gradsolve.Problem {
	m := sym.NewModel("oscillator")
	x, v := m.State("x", 1), m.State("v", 0)
	w, z := m.Param("omega", 1), m.Param("zeta", 0.1)
	m.Deriv(x, v)
	m.Deriv(v, w.Mul(w).Mul(x).Neg().Sub(z.Mul(w).Mul(v).MulConst(2)))
	return build(t, m)
}

// oscillatorExact returns (x, v) at t of the underdamped oscillator
// (ζ < 1) from (x0, v0): with a = ζω, b = ω√(1 − ζ²),
//
//	x = e^(−at)·(A cos bt + B sin bt),   A = x0, B = (v0 + a·x0)/b.
func oscillatorExact(w, z, x0, v0, t float64) (x, v float64) {
	a, b := z*w, w*math.Sqrt(1-z*z)
	A, B := x0, (v0+a*x0)/b
	e, c, s := math.Exp(-a*t), math.Cos(b*t), math.Sin(b*t)
	return e * (A*c + B*s), e * ((-a*A+b*B)*c + (-a*B-b*A)*s)
}

// tight are the options of the recovery tests: DP8 at rtol 1e-12, so
// the discrete solution matches the exact one to about 1e-11 relative
// and the least-squares minimum on exact data lies within that of the
// truth.
var tight = gradsolve.Options{Method: method.DP8, RTol: 1e-12, ATol: 1e-14}

// decayCase is n decay trajectories, y0_i = 1 + i/2, t1_i = 1 + i/4, with
// the decay rates k (one shared, or one per trajectory), and their
// exact final states and states at the save times 0.25 and 0.5.
type decayCase struct {
	ens          gradsolve.Ensemble
	final, saved []float64
}

func newDecayCase(n int, k []float64) decayCase {
	dc := decayCase{ens: gradsolve.Ensemble{N: n, Y0: make([]float64, n), P: make([]float64, 0, 4*n),
		T0: []float64{0}, T1: make([]float64, n), Save: []float64{0.25, 0.5}}}
	for i := range n {
		ki := k[0]
		if len(k) == n {
			ki = k[i]
		}
		y0, t1 := 1+0.5*float64(i), 1+0.25*float64(i)
		dc.ens.Y0[i], dc.ens.T1[i] = y0, t1
		dc.ens.P = append(dc.ens.P, 1, 1, 0, 0) // k's template value 1: fitted
		dc.final = append(dc.final, y0*math.Exp(-ki*t1))
		for _, s := range dc.ens.Save {
			dc.saved = append(dc.saved, y0*math.Exp(-ki*s))
		}
	}
	return dc
}

// relErr returns |got − want|/|want|.
func relErr(got, want float64) float64 { return math.Abs(got-want) / math.Abs(want) }
