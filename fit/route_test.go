package fit

import (
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/router"
	"github.com/gradsolve/gradsolve/sym/parse"
)

// A gradient optimiser takes the route the cost model of the engine its
// solves run on says is cheaper: on cpu-lanes forward sensitivities up
// to two fitted quantities and the reverse replay beyond, elsewhere
// forward up to ten; LevenbergMarquardt always forward. The reason
// names the engine and both estimates.
func TestRouteByEngine(t *testing.T) {
	m, err := parse.ParseFile("../examples/lorenz.ode")
	if err != nil {
		t.Fatal(err)
	}
	pr := build(t, m)
	const n = 64
	p := make([]float64, 0, 3*n)
	for i := range n {
		p = append(p, 10+float64(i)/8, 10, 8.0/3)
	}
	ens := gradsolve.Ensemble{N: n, P: p, Y0: []float64{1, 0.5, 0.5}}
	o := gradsolve.Options{RTol: 1e-8, ATol: 1e-11}
	ch, err := gradsolve.ChooseEngine(pr, n, &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the solves run on %s", ch.Engine)
	all := []Param{{Wrt: gradsolve.Param(0)}, {Wrt: gradsolve.Param(1)}, {Wrt: gradsolve.Param(2)},
		{Wrt: gradsolve.InitialValue(0)}, {Wrt: gradsolve.InitialValue(1)}, {Wrt: gradsolve.InitialValue(2)}}
	data := &gradsolve.FitData{Final: make([]float64, 3*n)}
	for _, c := range []struct {
		k   int
		opt Optimizer
	}{{1, &Adam{}}, {2, &Adam{}}, {3, &Adam{}}, {4, &Adam{}}, {6, &LBFGS{}}, {6, &LevenbergMarquardt{}}} {
		s, err := newSetup(&Spec{Problem: pr, Ensemble: ens, Options: o, Data: data, Params: all[:c.k], Owner: PerTrajectory, Optimizer: c.opt})
		if err != nil {
			t.Fatal(err)
		}
		want := router.Forward
		if _, lm := c.opt.(*LevenbergMarquardt); !lm && (ch.Engine == "cpu-lanes" && c.k > 2 || c.k > 10) {
			want = router.Reverse
		}
		if s.mode != want {
			t.Errorf("%s, %d fitted, on %s: route %v, want %v (%s)", c.opt.Name(), c.k, ch.Engine, s.mode, want, s.modeReason)
		}
		if _, lm := c.opt.(*LevenbergMarquardt); !lm && !strings.Contains(s.modeReason, "on "+ch.Engine) {
			t.Errorf("%s, %d fitted: the reason does not name the engine %s: %s", c.opt.Name(), c.k, ch.Engine, s.modeReason)
		}
	}
}

// On the Rosenbrock lanes the cost model is cpu-ros-lanes's own (1 +
// 0.7 solves per forward column against 2.5 for the replay and its
// reverse sweep, measured by BenchmarkAdamUpdate/robertson): a gradient
// optimiser fitting Robertson's rates takes forward sensitivities up to
// two fitted quantities and the reverse replay beyond; on another
// engine (cpu-ros, with the lanes off) forward up to ten.
func TestRouteByEngineStiff(t *testing.T) {
	m, err := parse.ParseFile("../examples/robertson.ode")
	if err != nil {
		t.Fatal(err)
	}
	pr := build(t, m)
	const n = 64
	p := make([]float64, 0, 3*n)
	for i := range n {
		p = append(p, 0.02+0.04*float64(i)/float64(n-1), 3e7, 1e4)
	}
	ens := gradsolve.Ensemble{N: n, P: p, T0: []float64{0}, T1: []float64{1e4}}
	o := gradsolve.Options{RTol: 1e-8, ATol: 1e-12}
	ch, err := gradsolve.ChooseEngine(pr, n, &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the solves run on %s", ch.Engine)
	all := []Param{{Wrt: gradsolve.Param(0), Transform: Log()}, {Wrt: gradsolve.Param(2), Transform: Log()}, {Wrt: gradsolve.Param(1), Transform: Log()},
		{Wrt: gradsolve.InitialValue(0)}, {Wrt: gradsolve.InitialValue(1)}, {Wrt: gradsolve.InitialValue(2)}}
	data := &gradsolve.FitData{Final: make([]float64, 3*n)}
	for _, c := range []struct {
		k    int
		opt  Optimizer
		want router.Mode // on cpu-ros-lanes
	}{{1, &Adam{}, router.Forward}, {2, &Adam{}, router.Forward}, {3, &LBFGS{}, router.Reverse},
		{4, &Adam{}, router.Reverse}, {6, &Adam{}, router.Reverse}, {6, &LevenbergMarquardt{}, router.Forward}} {
		s, err := newSetup(&Spec{Problem: pr, Ensemble: ens, Options: o, Data: data, Params: all[:c.k], Owner: PerTrajectory, Optimizer: c.opt})
		if err != nil {
			t.Fatal(err)
		}
		want := c.want
		if ch.Engine != "cpu-ros-lanes" {
			want = router.Forward
		}
		if s.mode != want {
			t.Errorf("%s, %d fitted, on %s: route %v, want %v (%s)", c.opt.Name(), c.k, ch.Engine, s.mode, want, s.modeReason)
		}
		if _, lm := c.opt.(*LevenbergMarquardt); !lm && !strings.Contains(s.modeReason, "on "+ch.Engine) {
			t.Errorf("%s, %d fitted: the reason does not name the engine %s: %s", c.opt.Name(), c.k, ch.Engine, s.modeReason)
		}
	}
}
