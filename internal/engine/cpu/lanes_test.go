package cpu

import (
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve/internal/engine"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
)

// cpu-lanes serves what cpu-erk serves where it can run, says why it
// cannot where it cannot, and tells the router which requests to leave
// to cpu-erk and why.
func TestLanesServesAndPrefers(t *testing.T) {
	f := func(float64, []float64, []float64, []float64) {}
	withLanes := &ode.Problem{Name: "m", Dim: 2, F: f, SensF: func([]int) (func() ode.Func, error) { return nil, nil },
		SensLanes: func([]int) (func() ode.LaneProgram, error) { return nil, nil }}
	goOnly := &ode.Problem{Name: "g", Dim: 2, F: f}
	// Sensitivities of fewer trajectories than lanes stay on cpu-erk
	// (asked of Prefers alone: withLanes has no tangent program to
	// serve them).
	sens := engine.Request{Problem: withLanes, Offers: ode.HasFLanes, Method: method.Tsit5, Job: engine.Sensitivities, NumSens: 1, N: 7}
	if why := NewLanes("l", 8, 1, true).Prefers(&sens); why == nil || !strings.Contains(why.Error(), "an ensemble of 7 trajectories leaves lanes of 8 idle") {
		t.Errorf("sensitivities of 7 trajectories: Prefers %v, want the lanes idle", why)
	}
	for _, c := range []struct {
		name      string
		e         Lanes
		req       engine.Request
		serves    string // "" for served, else a part of the refusal
		prefersOK bool
		prefers   string
	}{
		{"forced, a lane f, 8 trajectories", NewLanes("l", 8, 1, true),
			engine.Request{Problem: withLanes, Offers: ode.HasFLanes, Method: method.Tsit5, Job: engine.Forward, N: 8}, "", true, ""},
		{"a solve of 3 trajectories (on four lanes)", NewLanes("l", 8, 1, true),
			engine.Request{Problem: withLanes, Offers: ode.HasFLanes, Method: method.Tsit5, Job: engine.Forward, N: 3}, "", true, ""},
		{"a solve of 2 trajectories", NewLanes("l", 8, 1, true),
			engine.Request{Problem: withLanes, Offers: ode.HasFLanes, Method: method.Tsit5, Job: engine.Forward, N: 2}, "", false, "an ensemble of 2 trajectories leaves lanes of 8 idle"},
		{"a recording of 2 trajectories (replayed in lanes)", NewLanes("l", 8, 1, true),
			engine.Request{Problem: withLanes, Offers: ode.HasFLanes | ode.HasVJP, Method: method.Tsit5, Job: engine.Record, N: 2}, "cotangent program", true, ""},
		{"a recording of 1 trajectory (replayed in lanes)", NewLanes("l", 8, 1, true),
			engine.Request{Problem: withLanes, Offers: ode.HasFLanes | ode.HasVJP, Method: method.Tsit5, Job: engine.Record, N: 1}, "cotangent program", true, ""},
		{"a Go problem without a lane f", NewLanes("l", 8, 1, true),
			engine.Request{Problem: goOnly, Method: method.Tsit5, Job: engine.Forward, N: 100}, "", false, "g has no lane right-hand side"},
		{"sensitivities without a lane form", NewLanes("l", 8, 1, true),
			engine.Request{Problem: goOnly, Offers: ode.HasFLanes, Method: method.Tsit5, Job: engine.Sensitivities, N: 100}, "tangent program", false, "no lane form of its sensitivity system"},
		{"continuous extension asked", NewLanes("l", 8, 1, true),
			engine.Request{Problem: withLanes, Offers: ode.HasFLanes, Method: method.DP5, Job: engine.Forward, DenseSave: true, N: 100}, "DenseSave", true, ""},
	} {
		err := c.e.Serves(&c.req)
		switch {
		case c.serves == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.serves != "" && (err == nil || !strings.Contains(err.Error(), c.serves)):
			t.Errorf("%s: Serves %v, want a refusal naming %q", c.name, err, c.serves)
		}
		why := c.e.Prefers(&c.req)
		if (why == nil) != c.prefersOK || why != nil && !strings.Contains(why.Error(), c.prefers) {
			t.Errorf("%s: Prefers %v, want %q", c.name, why, c.prefers)
		}
	}
	// Not forced, the registered engine is unavailable exactly where
	// LanesAvailable says why, and Serves says it.
	e := NewLanes("cpu-lanes", 8, 1, false)
	req := &engine.Request{Problem: withLanes, Offers: ode.HasFLanes, Method: method.Tsit5, Job: engine.Forward, N: 8}
	if why := LanesAvailable(); why != nil {
		if err := e.Serves(req); err == nil || !strings.Contains(err.Error(), "cpu-lanes is unavailable here: "+why.Error()) {
			t.Errorf("unavailable (%v), but Serves says %v", why, err)
		}
	} else if err := e.Serves(req); err != nil {
		t.Errorf("available, but Serves says %v", err)
	}
	if e.Reference() != "cpu-erk" || !e.Runs(method.Vern7) || e.Runs(method.Rodas5P) {
		t.Errorf("cpu-lanes: reference %q, runs Vern7 %v, Rodas5P %v", e.Reference(), e.Runs(method.Vern7), e.Runs(method.Rodas5P))
	}
}

// cpu-ros-lanes serves what cpu-ros serves where it can run, and
// leaves to cpu-ros small ensembles, the sensitivities of systems too
// large for their lanes and problems without a lane right-hand side.
func TestROSLanesServesAndPrefers(t *testing.T) {
	f := func(float64, []float64, []float64, []float64) {}
	pr := &ode.Problem{Name: "s", Dim: 2, F: f, Programs: func() *ode.Programs { return &ode.Programs{F: f} }}
	big := &ode.Problem{Name: "b", Dim: 40, F: f, Programs: pr.Programs}
	mid := &ode.Problem{Name: "m", Dim: 16, F: f, Programs: pr.Programs}
	all := ode.HasFLanes | ode.HasJacY | ode.HasJVP | ode.HasJVPJacY
	e := NewROSLanes("rl", 8, 1, true)
	for _, c := range []struct {
		name      string
		req       engine.Request
		serves    string
		prefersOK bool
		prefers   string
	}{
		{"a lane f, 8 trajectories", engine.Request{Problem: pr, Offers: all, Method: method.Rodas5P, Job: engine.Forward, N: 8}, "", true, ""},
		{"one trajectory", engine.Request{Problem: pr, Offers: all, Method: method.Rodas5P, Job: engine.Forward, N: 1}, "", false, "an ensemble of 1 trajectory leaves lanes of 8 idle"},
		{"two trajectories (solved on four lanes)", engine.Request{Problem: pr, Offers: all, Method: method.Rodas5P, Job: engine.Forward, N: 2}, "", true, ""},
		{"sensitivities of one trajectory", engine.Request{Problem: pr, Offers: all, Method: method.Rodas5P, Job: engine.Sensitivities, NumSens: 1, N: 1}, "", false, "an ensemble of 1 trajectory leaves lanes of 8 idle"},
		{"a recording of 3 trajectories (replayed in lanes)", engine.Request{Problem: pr, Offers: all | ode.HasVJP | ode.HasJVPVJP | ode.HasDfDt | ode.HasDfDtVJP, Method: method.Rodas5P, Job: engine.Record, N: 3}, "", true, ""},
		{"a recording of 1 trajectory (replayed in lanes)", engine.Request{Problem: pr, Offers: all | ode.HasVJP | ode.HasJVPVJP | ode.HasDfDt | ode.HasDfDtVJP, Method: method.Rodas5P, Job: engine.Record, N: 1}, "", true, ""},
		{"sensitivities", engine.Request{Problem: pr, Offers: all, Method: method.Rodas5P, Job: engine.Sensitivities, NumSens: 1, N: 100}, "", true, ""},
		{"sensitivities of 16 components", engine.Request{Problem: mid, Offers: all, Method: method.Rodas5P, Job: engine.Sensitivities, NumSens: 2, N: 100}, "", true, ""},
		{"sensitivities of a large system", engine.Request{Problem: big, Offers: all, Method: method.Rodas5P, Job: engine.Sensitivities, NumSens: 1, N: 100}, "", false, "b has 40 components and 1 sensitivity column: the lane attempt of Rodas5P on 8 lanes would pass its bound on machine code"},
		{"a forward solve of a large system", engine.Request{Problem: big, Offers: all, Method: method.Rodas5P, Job: engine.Forward, N: 100}, "", false, "b has 40 components: the lane attempt of Rodas5P on 8 lanes would pass its bound on machine code"},
		{"a forward solve of 16 components", engine.Request{Problem: mid, Offers: all, Method: method.Rodas5P, Job: engine.Forward, N: 100}, "", true, ""},
		{"no lane f", engine.Request{Problem: pr, Offers: all &^ ode.HasFLanes, Method: method.Rosenbrock23, Job: engine.Forward, N: 100}, "", false, "no lane right-hand side"},
		{"no Jacobian", engine.Request{Problem: pr, Offers: ode.HasFLanes, Method: method.Rodas5P, Job: engine.Forward, N: 100}, "Jacobian program", false, ""},
	} {
		err := e.Serves(&c.req)
		switch {
		case c.serves == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.serves != "" && (err == nil || !strings.Contains(err.Error(), c.serves)):
			t.Errorf("%s: Serves %v, want a refusal naming %q", c.name, err, c.serves)
		}
		if c.serves != "" {
			continue
		}
		why := e.Prefers(&c.req)
		if (why == nil) != c.prefersOK || why != nil && !strings.Contains(why.Error(), c.prefers) {
			t.Errorf("%s: Prefers %v, want %q", c.name, why, c.prefers)
		}
	}
	if e.Reference() != "cpu-ros" || !e.Runs(method.Rodas5P) || e.Runs(method.Tsit5) {
		t.Errorf("cpu-ros-lanes: reference %q, runs Rodas5P %v, Tsit5 %v", e.Reference(), e.Runs(method.Rodas5P), e.Runs(method.Tsit5))
	}
}

// TestLaneCount: an ensemble that fits in one group of four runs on
// four lanes; a larger one, an unknown size and an engine of one group
// or of a count that is no multiple of four keep the engine's lanes.
func TestLaneCount(t *testing.T) {
	for _, c := range []struct{ L, n, want int }{
		{8, 1, 4}, {8, 4, 4}, {8, 5, 8}, {8, 100, 8}, {8, 0, 8},
		{16, 3, 4}, {4, 1, 4}, {6, 1, 6}, {3, 1, 3}, {1, 1, 1},
	} {
		if got := laneCount(c.L, c.n); got != c.want {
			t.Errorf("laneCount(%d, %d) = %d, want %d", c.L, c.n, got, c.want)
		}
	}
}
