package tape

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/sym"
)

// orbitModel starts on a circle of radius r0 at angle phi, with speed
// sqrt(mu/r0)·(1 + ecc): initial values that depend on three of its
// four parameters (k only in f), and one (z) that is a number.
func orbitModel() *sym.Model {
	m := sym.NewModel("orbit")
	r0, phi, ecc := m.Param("r0", 2), m.Param("phi", 0.5), m.Param("ecc", 0.3)
	k := m.Param("k", 1)
	v := sym.Sqrt(r0.Pow(m.Const(-1))).Mul(ecc.AddConst(1))
	x := m.StateExpr("x", r0.Mul(sym.Cos(phi)))
	y := m.StateExpr("y", r0.Mul(sym.Sin(phi)))
	vx := m.StateExpr("vx", v.Neg().Mul(sym.Sin(phi)))
	vy := m.StateExpr("vy", v.Mul(sym.Cos(phi)))
	z := m.State("z", 1)
	r3 := x.Mul(x).Add(y.Mul(y)).PowConst(1.5)
	m.Deriv(x, vx)
	m.Deriv(y, vy)
	m.Deriv(vx, x.Neg().Div(r3))
	m.Deriv(vy, y.Neg().Div(r3))
	m.Deriv(z, k.Mul(z))
	return m
}

// The initial-value program computes y0(p) bitwise as the graph's
// reference evaluator does, ∂y0/∂p as central differences of it, and
// the same bits on machine code and the interpreter; Problem.Initial
// serves it, and a model of numbers has none.
func TestInitialProgram(t *testing.T) {
	m := orbitModel()
	s, err := Build(m)
	if err != nil {
		t.Fatal(err)
	}
	pg, err := s.InitialProgram()
	if err != nil || pg == nil {
		t.Fatalf("InitialProgram = %v, %v", pg, err)
	}
	if again, _ := s.InitialProgram(); again != pg {
		t.Error("InitialProgram compiled twice")
	}
	pr := s.Problem()
	if pr.Initial == nil {
		t.Fatal("Problem.Initial is nil")
	}
	dim, np := m.Dim(), m.NumParams()
	ev := pr.Initial()
	rng := rand.New(rand.NewPCG(3, 4))
	y0, jac := make([]float64, dim), make([]float64, dim*np)
	for range 20 {
		p := []float64{1 + rng.Float64(), 3 * rng.NormFloat64(), rng.Float64(), rng.NormFloat64()}
		ev(p, y0, jac)
		if want := m.Graph().Evaluate(m.Initial(), 0, nil, p); !testutil.IdenticalBits(y0, want) {
			t.Fatalf("y0(%v) = %v, graph %v", p, y0, want)
		}
		// Central differences: truncation h²·|y0”'| ≈ 1e-10 and rounding
		// ε·|y0|/h ≈ 1e-11 at h = 1e-5 for these O(1) values.
		const h = 1e-5
		for j := range np {
			pp, pm := append([]float64(nil), p...), append([]float64(nil), p...)
			pp[j] += h
			pm[j] -= h
			yp := m.Graph().Evaluate(m.Initial(), 0, nil, pp)
			ym := m.Graph().Evaluate(m.Initial(), 0, nil, pm)
			for i := range dim {
				fd := (yp[i] - ym[i]) / (2 * h)
				if math.Abs(jac[i*np+j]-fd) > 1e-8*math.Max(1, math.Abs(fd)) {
					t.Errorf("∂y0_%d/∂p_%d = %v, difference %v", i, j, jac[i*np+j], fd)
				}
			}
		}
		// Without a Jacobian the state alone is written.
		y1 := make([]float64, dim)
		ev(p, y1, nil)
		if !testutil.IdenticalBits(y1, y0) {
			t.Errorf("y0 without the Jacobian %v, with %v", y1, y0)
		}
		if pg.jit != nil {
			ip := interpreted(pg)
			got, want := make([]float64, len(pg.outs)), make([]float64, len(pg.outs))
			pg.EvalF(pg.NewRegisters(), 0, nil, p, got)
			ip.EvalF(ip.NewRegisters(), 0, nil, p, want)
			testutil.CheckBits(t, "initial", got, want)
		}
	}
	if !testutil.IdenticalBits(m.Y0(), func() []float64 { ev(m.P(), y0, nil); return y0 }()) {
		t.Errorf("Model.Y0 = %v, Initial at the defaults %v", m.Y0(), y0)
	}
	if plain := mustBuildModel(t, lorenzLike()); plain.Problem().Initial != nil {
		t.Error("a model of constant initial values has Problem.Initial")
	}
}

func lorenzLike() *sym.Model {
	m := sym.NewModel("plain")
	x := m.State("x", 1)
	k := m.Param("k", 2)
	m.Deriv(x, k.Mul(x))
	return m
}

func mustBuildModel(t *testing.T, m *sym.Model) *Set {
	t.Helper()
	s, err := Build(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A forward solve from y0(p) derives nothing: Problem and its Initial
// evaluator without a jac add no node to the graph and build neither
// the first derivatives of f nor ∂y0/∂p; the first call with a jac
// builds them, and y0 is the same bits either way.
func TestInitialWithoutJacobianBuildsNothing(t *testing.T) {
	m := orbitModel()
	s := mustBuildModel(t, m)
	before := m.Graph().Len()
	ev := s.Problem().Initial()
	p := m.P()
	y0 := make([]float64, m.Dim())
	ev(p, y0, nil)
	if n := m.Graph().Len(); n != before || s.base != nil || s.initial != nil {
		t.Errorf("y0(p) alone: graph %d → %d nodes, base derived %v, ∂y0/∂p built %v", before, n, s.base != nil, s.initial != nil)
	}
	if want := m.Y0(); !testutil.IdenticalBits(y0, want) {
		t.Errorf("y0 = %v, Model.Y0 %v", y0, want)
	}
	y1, jac := make([]float64, m.Dim()), make([]float64, m.Dim()*m.NumParams())
	ev(p, y1, jac)
	if s.base == nil || s.initial == nil {
		t.Error("a call with jac built no ∂y0/∂p")
	}
	if !testutil.IdenticalBits(y1, y0) {
		t.Errorf("y0 with jac %v, without %v", y1, y0)
	}
	// ∂x0/∂r0 = cos(phi) (x0 = r0·cos(phi)), exactly: one multiplication by 1.
	if want := math.Cos(p[1]); jac[0] != want {
		t.Errorf("∂x0/∂r0 = %v, want %v", jac[0], want)
	}
}
