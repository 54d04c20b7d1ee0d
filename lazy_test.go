package gradsolve_test

import (
	"context"
	"slices"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/router"
	"github.com/gradsolve/gradsolve/sym/parse"
	"github.com/gradsolve/gradsolve/sym/tape"
)

// A solve builds only the derivative programs its engine uses: none for
// an explicit method (also where the router probes for a Jacobian),
// J_y and ∂f/∂t for a Rosenbrock method, the second derivatives only
// for Rosenbrock sensitivities, and uᵀJ for a reverse-mode gradient.
func TestSolveBuildsWhatItUses(t *testing.T) {
	for _, c := range []struct {
		name, file string
		opts       gradsolve.Options
		sens, grad bool
		want       []string
	}{
		{"auto explicit", "lorenz", gradsolve.Options{}, false, false, nil},
		{"tsit5", "robertson", gradsolve.Options{Method: method.Tsit5}, false, false, nil},
		{"tsit5 sens", "robertson", gradsolve.Options{Method: method.Tsit5}, true, false, nil},
		{"tsit5 gradient", "robertson", gradsolve.Options{Method: method.Tsit5, Mode: router.Reverse}, false, true, []string{"vjp"}},
		{"tsit5 forward gradient", "robertson", gradsolve.Options{Method: method.Tsit5, Mode: router.Forward}, false, true, nil},
		{"auto stiff", "robertson", gradsolve.Options{}, false, false, []string{"dfdt", "jac_y"}},
		{"rodas5p sens", "robertson", gradsolve.Options{Method: method.Rodas5P}, true, false,
			[]string{"jvp", "dfdt", "jac_y", "jvp_jac_y", "jvp_dfdt"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := parse.ParseFile("examples/" + c.file + ".ode")
			if err != nil {
				t.Fatal(err)
			}
			set, err := tape.Build(m)
			if err != nil {
				t.Fatal(err)
			}
			pr := set.Problem()
			o := c.opts
			o.RTol, o.ATol = 1e-6, 1e-10
			if c.sens {
				o.Sens = &gradsolve.Sensitivity{Wrt: []gradsolve.Wrt{gradsolve.Param(0)}}
			}
			ens := &gradsolve.Ensemble{N: 2, T0: []float64{0}, T1: []float64{1e-3}}
			if c.grad {
				if _, _, _, err := gradsolve.LossGradient(context.Background(), pr, ens, &o, gradsolve.SumSquares()); err != nil {
					t.Fatal(err)
				}
			} else if _, err := gradsolve.Solve(context.Background(), pr, ens, &o); err != nil {
				t.Fatal(err)
			}
			if got := set.Built(); !slices.Equal(got, c.want) {
				t.Errorf("built %v, want %v", got, c.want)
			}
		})
	}
}
