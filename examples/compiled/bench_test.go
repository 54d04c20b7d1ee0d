package compiled_test

import (
	"testing"

	"github.com/gradsolve/gradsolve/examples/compiled"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/sym/parse"
	"github.com/gradsolve/gradsolve/sym/tape"
)

// BenchmarkHaloSensF evaluates the halo's right-hand side with two
// sensitivity columns (vc, q), 18 values, through Problem.SensF: the
// generated Go code (HaloSensF) and the tape of examples/halo.ode, in
// one run (compare ns/op).
func BenchmarkHaloSensF(b *testing.B) {
	m, err := parse.ParseFile("../halo.ode")
	if err != nil {
		b.Fatal(err)
	}
	set, err := tape.Build(m)
	if err != nil {
		b.Fatal(err)
	}
	y := make([]float64, 18)
	for i := range y {
		y[i] = 0.1 * float64(i+1)
	}
	p, dy := []float64{1, 0.7, 0.2}, make([]float64, 18)
	for _, c := range []struct {
		name string
		pr   *ode.Problem
	}{{"generated", compiled.HaloProblem()}, {"tape", set.Problem()}} {
		src, err := c.pr.SensF([]int{0, 1})
		if err != nil {
			b.Fatal(err)
		}
		f := src()
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				f(0, y, p, dy)
			}
		})
	}
}
