package tape_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gradsolve/gradsolve/sym"
	"github.com/gradsolve/gradsolve/sym/tape"
	"github.com/gradsolve/gradsolve/systems"
)

// lorenzModel builds the Lorenz system (tape.LorenzModel, from the
// package's own tests).
func lorenzModel() *sym.Model { return tape.LorenzModel() }

func mustBuild(t testing.TB, m *sym.Model) *tape.Set {
	t.Helper()
	s, err := tape.Build(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The tape of the Lorenz model computes the same operations as the Go
// function systems.Lorenz, so the results are bitwise equal; its
// derivative programs equal the hand-derived Jacobian exactly.
func TestLorenzAgainstHandWritten(t *testing.T) {
	s := mustBuild(t, lorenzModel())
	pg := s.Programs()
	ref := systems.Lorenz()
	rng := rand.New(rand.NewPCG(3, 4))
	got, want := make([]float64, 3), make([]float64, 3)
	jac := make([]float64, 9)
	for range 1000 {
		y := []float64{rng.NormFloat64() * 10, rng.NormFloat64() * 10, rng.NormFloat64() * 30}
		p := []float64{10 * rng.Float64(), 30 * rng.Float64(), 3 * rng.Float64()}
		pg.F(0, y, p, got)
		ref.F(0, y, p, want)
		for i := range 3 {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("f(%v, %v)[%d] = %v, hand-written %v", y, p, i, got[i], want[i])
			}
		}
		pg.JacY(0, y, p, jac)
		sigma, rho, beta := p[0], p[1], p[2]
		hand := []float64{
			-sigma, sigma, 0,
			rho - y[2], -1, -y[0],
			y[1], y[0], -beta,
		}
		for i := range 9 {
			if jac[i] != hand[i] {
				t.Fatalf("J_y[%d] = %v, hand-derived %v", i, jac[i], hand[i])
			}
		}
	}
}

// SensF refuses a column of a parameter the model does not have, and
// its functions write f followed by each column's tangent.
func TestSensFColumns(t *testing.T) {
	s := mustBuild(t, lorenzModel())
	if _, err := s.SensF([]int{3}); err == nil {
		t.Error("SensF with parameter 3 of 3: no error")
	}
	src, err := s.SensF([]int{1, -1})
	if err != nil {
		t.Fatal(err)
	}
	f := src()
	// y = (1, 2, 3); S_0 = 0 (so column 0 is ∂f/∂ρ = (0, x, 0)),
	// S_1 = e_x (column 1 is the first column of J_y: (−σ, ρ−z, y)).
	y := []float64{1, 2, 3, 0, 0, 0, 1, 0, 0}
	p := []float64{10, 28, 8.0 / 3}
	dy := make([]float64, 9)
	f(0, y, p, dy)
	want := []float64{10, 1*(28-3) - 2, 1*2 - 8.0/3*3, 0, 1, 0, -10, 28 - 3, 2}
	for i := range want {
		if dy[i] != want[i] {
			t.Errorf("dy[%d] = %v, want %v", i, dy[i], want[i])
		}
	}
}
