package gradsolve_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/router"
	"github.com/gradsolve/gradsolve/systems"
)

// ChooseEngine and GradientDecision are the choices Solve and
// LossGradient make: the engine, method and reason a solve reports, and
// the Decision a gradient reports, for each kind of request — among
// them a problem marked stiff without a Jacobian program, which runs
// the explicit engine.
func TestChoicesAreTheSolvers(t *testing.T) {
	// Problem files have every derivative program; the built-in
	// Robertson without its programs has no Jacobian.
	lorenz, rober := exampleProblem(t, "lorenz"), exampleProblem(t, "robertson")
	noJac := systems.Robertson()
	noJac.Programs, noJac.SensF = nil, nil
	cases := []struct {
		name string
		prob *gradsolve.Problem
		opts gradsolve.Options
		grad bool // LossGradient can run (the problem has derivative programs)
	}{
		{"default", lorenz, gradsolve.Options{}, true},
		{"explicit named", lorenz, gradsolve.Options{Method: method.DP8}, true},
		{"Rosenbrock named", rober, gradsolve.Options{Method: method.Rosenbrock23}, true},
		{"Rosenbrock named on a problem not marked stiff", lorenz, gradsolve.Options{Method: method.Rodas5P}, true},
		{"engine named", rober, gradsolve.Options{Engine: "cpu-erk"}, true},
		{"engine and method named", lorenz, gradsolve.Options{Engine: "cpu-ros", Method: method.Rosenbrock23}, true},
		{"nil tableau", lorenz, gradsolve.Options{Method: (*method.Tableau)(nil)}, true},
		{"stiff", rober, gradsolve.Options{}, true},
		{"stiff, explicit named", rober, gradsolve.Options{Method: method.Vern7}, true},
		{"stiff without a Jacobian program", noJac, gradsolve.Options{}, false},
		{"two columns", rober, gradsolve.Options{GradientWrt: []gradsolve.Wrt{gradsolve.Param(0), gradsolve.InitialValue(1)}}, true},
		{"reverse named", lorenz, gradsolve.Options{Mode: router.Reverse}, true},
		{"forward named", rober, gradsolve.Options{Mode: router.Forward}, true},
	}
	ctx := context.Background()
	for _, c := range cases {
		pr := c.prob
		ens := &gradsolve.Ensemble{N: 2, T0: []float64{0}, T1: []float64{0.5}}
		ch, err := gradsolve.ChooseEngine(pr, &c.opts)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		res, err := gradsolve.Solve(ctx, pr, ens, &c.opts)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if ch.Engine != res.Engine || ch.Method.MethodName() != res.Method || ch.Reason != res.Reason || ch.EngineReason != res.EngineReason ||
			res.Options.Method != ch.Method || res.Options.Engine != ch.Engine {
			t.Errorf("%s: ChooseEngine %+v, Solve ran %s %s (%s; %s)", c.name, ch, res.Engine, res.Method, res.Reason, res.EngineReason)
		}
		if !c.grad {
			continue
		}
		d, err := gradsolve.GradientDecision(pr, &c.opts)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		_, g, _, err := gradsolve.LossGradient(ctx, pr, ens, &c.opts, gradsolve.SumSquares())
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if d != g.Decision || d.Engine != ch.Engine {
			t.Errorf("%s: GradientDecision %+v, LossGradient decided %+v", c.name, d, g.Decision)
		}
	}
	// What Solve refuses, they refuse with the same error.
	bad := []struct {
		name string
		prob *gradsolve.Problem
		opts gradsolve.Options
	}{
		{"Rosenbrock without a Jacobian program", noJac, gradsolve.Options{Method: method.Rodas5P}},
		{"unknown engine", lorenz, gradsolve.Options{Engine: "gpu"}},
		{"engine of the other family", lorenz, gradsolve.Options{Engine: "cpu-erk", Method: method.Rodas5P}},
		{"engine that cannot serve the job", rober, gradsolve.Options{Engine: "cpu-ros", DenseSave: false,
			Sens: &gradsolve.Sensitivity{Wrt: []gradsolve.Wrt{gradsolve.Param(0)}, ErrorTest: true}}},
	}
	for _, c := range bad {
		_, err := gradsolve.ChooseEngine(c.prob, &c.opts)
		_, serr := gradsolve.Solve(ctx, c.prob, &gradsolve.Ensemble{N: 1}, &c.opts)
		if !errors.Is(err, gradsolve.ErrInput) || serr == nil || err.Error() != serr.Error() {
			t.Errorf("%s: ChooseEngine: %v; Solve: %v", c.name, err, serr)
		}
	}
	if _, err := gradsolve.GradientDecision(systems.Lorenz(), &gradsolve.Options{GradientWrt: []gradsolve.Wrt{gradsolve.Param(7)}}); !errors.Is(err, gradsolve.ErrInput) {
		t.Errorf("a column out of range: %v", err)
	}
}
