package gradsolve_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/internal/engine/cpu"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
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
		ch, err := gradsolve.ChooseEngine(pr, ens.N, &c.opts)
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
		d, err := gradsolve.GradientDecision(pr, ens.N, &c.opts)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		_, g, rec, err := gradsolve.LossGradient(ctx, pr, ens, &c.opts, gradsolve.SumSquares())
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		// The forward route runs where a solve with sensitivities does
		// (for two trajectories a scalar engine: cpu-ros-lanes solves
		// them without sensitivities); the reverse route where its
		// recording ran (for two trajectories, a lane engine where one
		// can run: a recording is replayed).
		so := c.opts
		so.Sens = &gradsolve.Sensitivity{Wrt: []gradsolve.Wrt{gradsolve.Param(0)}}
		chS, err := gradsolve.ChooseEngine(pr, ens.N, &so)
		if err != nil {
			t.Fatalf("%s: with sensitivities: %v", c.name, err)
		}
		ran := chS.Engine
		if rec != nil {
			ran = rec.Result.Engine
		}
		if d != g.Decision || d.Engine != ran || (rec != nil) != (d.Mode == router.Reverse) {
			t.Errorf("%s: GradientDecision %+v, LossGradient decided %+v, ran on %s", c.name, d, g.Decision, ran)
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
		_, err := gradsolve.ChooseEngine(c.prob, 1, &c.opts)
		_, serr := gradsolve.Solve(ctx, c.prob, &gradsolve.Ensemble{N: 1}, &c.opts)
		if !errors.Is(err, gradsolve.ErrInput) || serr == nil || err.Error() != serr.Error() {
			t.Errorf("%s: ChooseEngine: %v; Solve: %v", c.name, err, serr)
		}
	}
	if _, err := gradsolve.GradientDecision(systems.Lorenz(), 1, &gradsolve.Options{GradientWrt: []gradsolve.Wrt{gradsolve.Param(7)}}); !errors.Is(err, gradsolve.ErrInput) {
		t.Errorf("a column out of range: %v", err)
	}
}

// Naming an engine: its default method when none is named, and the
// reasons say why the method and why the engine; the router's own pick
// says which engine and why too. A Rodas5P gradient of two
// trajectories reports the engine each route runs on.
func TestEngineNamed(t *testing.T) {
	ctx := context.Background()
	lorenz, rober := exampleProblem(t, "lorenz"), exampleProblem(t, "robertson")
	ens := &gradsolve.Ensemble{N: 2, T0: []float64{0}, T1: []float64{0.5}}
	for _, c := range []struct {
		name         string
		prob         *gradsolve.Problem
		opts         gradsolve.Options
		engine, meth string
		reason       string
		engineReason string
	}{
		{"cpu-ros named", lorenz, gradsolve.Options{Engine: "cpu-ros"}, "cpu-ros", "Rodas5P", "the default method of engine cpu-ros", "named by Options.Engine"},
		{"cpu-erk named on a stiff problem", rober, gradsolve.Options{Engine: "cpu-erk"}, "cpu-erk", "Tsit5", "the default method of engine cpu-erk", "named by Options.Engine"},
		{"router's pick", rober, gradsolve.Options{}, "cpu-ros", "Rodas5P", "marked stiff", "the registered engine for Rosenbrock methods"},
		{"router's pick, explicit", rober, gradsolve.Options{Method: method.DP5}, "cpu-erk", "DP5", "DP5 requested", "the registered engine for explicit Runge–Kutta methods"},
	} {
		if c.name == "router's pick" && cpu.LanesAvailable() == nil {
			// Two trajectories of a stiff problem: cpu-ros-lanes (on
			// four lanes) solves them.
			c.engine, c.engineReason = "cpu-ros-lanes", ""
		}
		res, err := gradsolve.Solve(ctx, c.prob, ens, &c.opts)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		// The router's reason goes on to name the engines it passed
		// over (cpu-lanes, for two trajectories).
		if res.Engine != c.engine || res.Method != c.meth || !strings.Contains(res.Reason, c.reason) || !strings.HasPrefix(res.EngineReason, c.engineReason) {
			t.Errorf("%s: ran %s on %s (%q; %q)", c.name, res.Method, res.Engine, res.Reason, res.EngineReason)
		}
	}
	// Two trajectories: their sensitivities run on cpu-ros, their
	// recording on cpu-ros-lanes where it can run (it is replayed in
	// lanes), else on cpu-ros.
	for _, mode := range []router.Mode{router.Forward, router.Reverse} {
		o := &gradsolve.Options{Method: method.Rodas5P, Mode: mode}
		_, g, _, err := gradsolve.LossGradient(ctx, rober, ens, o, gradsolve.SumSquares())
		if err != nil {
			t.Fatal(err)
		}
		want := "cpu-ros"
		if mode == router.Reverse && cpu.LanesAvailable() == nil {
			want = "cpu-ros-lanes"
		}
		if g.Decision.Engine != want || !strings.Contains(g.Decision.Reason, "engine "+want) || g.Decision.EngineReason == "" {
			t.Errorf("Rodas5P gradient, %v mode: %+v, want engine %s", mode, g.Decision, want)
		}
	}
}

// The options a result reports are those that ran: the method, the
// engine and the controller of the method's family (the Rosenbrock
// controller for Rodas5P, whose error estimate is of order 5).
func TestResolvedOptions(t *testing.T) {
	res := mustSolve(t, exampleProblem(t, "robertson"), &gradsolve.Ensemble{N: 1, T0: []float64{0}, T1: []float64{1}}, nil)
	o := res.Options
	want := control.DefaultPI(method.Rodas5P.EstimateOrder(), method.Rodas5P.QMin, method.Rodas5P.QMax)
	eng := "cpu-ros" // one trajectory's solve: the lanes are left idle
	if o.Method != method.Rodas5P || o.Engine != eng || o.Controller == nil || *o.Controller != want {
		t.Errorf("resolved options: method %v, engine %q, controller %+v; want Rodas5P, %s, %+v", o.Method, o.Engine, o.Controller, eng, want)
	}
}

// Asking what a problem can do builds nothing: a problem that declares
// its programs (Problem.Offers: every problem compiled from formulas,
// every built-in) has Programs called once per worker and never as a
// probe; one that does not is asked once more, to look.
func TestCapabilityQueryBuildsNothing(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name     string
		prob     *gradsolve.Problem
		declared bool
	}{
		{"problem file", exampleProblem(t, "robertson"), true},
		{"built-in", systems.Robertson(), true},
		{"undeclared", systems.Robertson(), false},
	} {
		pr := *c.prob
		if got := pr.Programs().Set(); c.declared && got != pr.Offers {
			t.Errorf("%s: Programs sets %v, Offers says %v", c.name, got, pr.Offers)
		}
		if !c.declared {
			pr.Offers = 0
		}
		inner := pr.Programs
		calls := 0
		pr.Programs = func() *gradsolve.Programs { calls++; return inner() }
		const workers = 2
		// (Enough trajectories for both workers: a lane engine starts
		// no more workers than its lanes need.)
		ens := &gradsolve.Ensemble{N: 64, T0: []float64{0}, T1: []float64{1e-3}}
		for _, o := range []gradsolve.Options{{Workers: workers}, {Workers: workers, Method: method.Tsit5}} {
			calls = 0
			if _, err := gradsolve.Solve(ctx, &pr, ens, &o); err != nil {
				t.Fatal(err)
			}
			want := workers
			if !c.declared {
				want++
			}
			if calls != want {
				t.Errorf("%s, %v: Programs called %d times for %d workers, want %d", c.name, o.Method, calls, workers, want)
			}
		}
	}
}

// The router picks the mode among those the engines can serve: a
// problem with a cotangent program and no tangent program is
// differentiated by the reverse replay, even where the cost model
// prefers forward sensitivities, and the reason says why; named, the
// forward mode is the engine's refusal.
func TestModeFollowsCapabilities(t *testing.T) {
	pr := systems.Lorenz()
	inner := pr.Programs
	pr.Programs = func() *gradsolve.Programs { pg := inner(); pg.JVP, pg.JVPLanes = nil, nil; return pg }
	pr.Offers &^= ode.HasJVP
	ens := &gradsolve.Ensemble{N: 2, T0: []float64{0}, T1: []float64{0.3}}
	o := &gradsolve.Options{} // 3 parameters and 3 initial values: forward is cheaper on cpu-erk (2.2 against 4.4 solves)
	if d, err := gradsolve.GradientDecision(systems.Lorenz(), 2, o); err != nil || d.Mode != router.Forward {
		t.Fatalf("the cost model's choice with both programs: %+v, %v; want forward", d, err)
	}
	_, g, rec, err := gradsolve.LossGradient(context.Background(), pr, ens, o, gradsolve.SumSquares())
	if err != nil {
		t.Fatal(err)
	}
	if g.Decision.Mode != router.Reverse || rec == nil || !strings.Contains(g.Decision.Reason, "forward mode cannot run") {
		t.Errorf("decision %+v", g.Decision)
	}
	o.Mode = router.Forward
	if _, err := gradsolve.GradientDecision(pr, 1, o); !errors.Is(err, gradsolve.ErrInput) || !strings.Contains(err.Error(), "JVP") {
		t.Errorf("reverse named without a cotangent program: %v", err)
	}
}
