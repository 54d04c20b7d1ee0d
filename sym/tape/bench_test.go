package tape

import (
	"testing"

	"github.com/gradsolve/gradsolve/sym"
	"github.com/gradsolve/gradsolve/systems"
)

// lorenzModel builds the Lorenz system with the parameter order of
// systems.Lorenz (σ, ρ, β) and the same expression trees as its Go code.
func lorenzModel() *sym.Model {
	m := sym.NewModel("lorenz")
	x, y, z := m.State("x", 1), m.State("y", 0), m.State("z", 0)
	sigma, rho, beta := m.Param("sigma", 10), m.Param("rho", 28), m.Param("beta", 8.0/3)
	m.Deriv(x, sigma.Mul(y.Sub(x)))
	m.Deriv(y, x.Mul(rho.Sub(z)).Sub(y))
	m.Deriv(z, x.Mul(y).Sub(beta.Mul(z)))
	m.T0, m.T1 = 0, 1
	return m
}

// Lorenz right-hand side, in one run (compare ns/op): the hand-written
// Go function, the tape as the engines call it (machine code where the
// platform has it, see jit.go), and the tape on the interpreter.
func BenchmarkLorenzF(b *testing.B) {
	s, err := Build(lorenzModel())
	if err != nil {
		b.Fatal(err)
	}
	yv, p, dy := []float64{1, 2, 3}, []float64{10, 28, 8.0 / 3}, make([]float64, 3)
	for _, c := range []struct {
		name string
		f    func(t float64, y, p, dy []float64)
	}{
		{"handwritten", systems.Lorenz().F},
		{"tape", s.Programs().F},
		{"interpreter", interpreted(s.F()).NewFunc()},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				c.f(0, yv, p, dy)
			}
		})
	}
}
