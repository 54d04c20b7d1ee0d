package gradsolve

import (
	"testing"

	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/systems"
)

// The sizes of a job follow the method ChooseEngine picks: a problem
// marked stiff without a Jacobian program runs the explicit engine and
// holds no Jacobians; kept stages are those of the explicit method, and
// a Rosenbrock recording keeps none.
func TestEnsembleSizesFollowTheEngine(t *testing.T) {
	noJac := systems.Robertson()
	noJac.Programs, noJac.SensF = nil, nil
	cases := []struct {
		name     string
		prob     *Problem
		opts     Options
		implicit bool
		stages   int
	}{
		{"stiff without a Jacobian program", noJac, Options{KeepStages: true}, false, method.Tsit5.Stages()},
		{"stiff", systems.Robertson(), Options{KeepStages: true}, true, 0},
		{"explicit named on a stiff problem", systems.Robertson(), Options{Method: method.DP8, KeepStages: true}, false, method.DP8.Stages()},
		{"Rosenbrock named", systems.Lorenz(), Options{Method: method.Rodas5P}, true, 0},
	}
	for _, c := range cases {
		s, ok := ensembleSizes(c.prob, &Ensemble{N: 3}, &c.opts, true, c.prob.ProgramSet())
		if !ok || s.Implicit != c.implicit || s.KeepStages != c.stages {
			t.Errorf("%s: sizes %+v (ok %v), want Implicit %v, KeepStages %d", c.name, s, ok, c.implicit, c.stages)
		}
	}
}
