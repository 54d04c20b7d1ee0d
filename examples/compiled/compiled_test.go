package compiled_test

import (
	"context"
	"math"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/examples/compiled"
	"github.com/gradsolve/gradsolve/internal/gencheck"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/sym/parse"
	"github.com/gradsolve/gradsolve/sym/tape"
)

// Each generated file is what gradsolve gen writes from its problem file
// now.
func TestUpToDate(t *testing.T) {
	for _, name := range []string{"lorenz", "halo", "robertson"} {
		gencheck.UpToDate(t, name+"_gen.go", "run", "../../cmd/gradsolve", "gen", "../"+name+".ode", "-package", "compiled")
	}
}

// The generated problems solve to the tape's numbers bit for bit, with
// sensitivities to every parameter (and Robertson with Rodas5P, which
// uses the generated Jacobian).
func TestSolvesMatchTape(t *testing.T) {
	for _, c := range []struct {
		name string
		pr   *ode.Problem
		opts gradsolve.Options
	}{
		{"lorenz", compiled.LorenzProblem(), gradsolve.Options{Method: method.Vern7, RTol: 1e-8, ATol: 1e-10}},
		{"halo", compiled.HaloProblem(), gradsolve.Options{Method: method.DP8, RTol: 1e-8, ATol: 1e-8}},
		{"robertson", compiled.RobertsonProblem(), gradsolve.Options{Method: method.Rodas5P, RTol: 1e-6, ATol: 1e-10}},
	} {
		m, err := parse.ParseFile("../" + c.name + ".ode")
		if err != nil {
			t.Fatal(err)
		}
		set, err := tape.Build(m)
		if err != nil {
			t.Fatal(err)
		}
		o := c.opts
		o.Sens = &gradsolve.Sensitivity{}
		for j := range c.pr.NumParams {
			o.Sens.Wrt = append(o.Sens.Wrt, gradsolve.Param(j))
		}
		ens := &gradsolve.Ensemble{N: 3, Save: []float64{c.pr.T1 / 3}}
		a, err := gradsolve.Solve(context.Background(), c.pr, ens, &o)
		if err != nil {
			t.Fatal(err)
		}
		b, err := gradsolve.Solve(context.Background(), set.Problem(), ens, &o)
		if err != nil {
			t.Fatal(err)
		}
		if a.Errs() != nil || b.Errs() != nil {
			t.Fatalf("%s: %v / %v", c.name, a.Errs(), b.Errs())
		}
		for _, v := range [][2][]float64{{a.Y, b.Y}, {a.S, b.S}, {a.Saved, b.Saved}, {a.SavedS, b.SavedS}} {
			for i := range v[0] {
				if math.Float64bits(v[0][i]) != math.Float64bits(v[1][i]) {
					t.Fatalf("%s: generated %v, tape %v at %d", c.name, v[0][i], v[1][i], i)
				}
			}
		}
	}
}
