package router

import (
	"errors"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve/internal/engine"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
)

// fake is an engine of one family that refuses what refuse says.
type fake struct {
	name     string
	priority int
	family   method.Family
	refuse   error
}

func (f fake) Name() string                              { return f.name }
func (f fake) Priority() int                             { return f.priority }
func (f fake) Reference() string                         { return "" }
func (f fake) Runs(m method.Method) bool                 { return m.Family() == f.family }
func (f fake) DefaultMethod(*ode.Problem) method.Method  { return method.Tsit5 }
func (f fake) Serves(*engine.Request) error              { return f.refuse }
func (f fake) Prepare(*engine.Spec) (engine.Plan, error) { return nil, errors.New("fake") }

// Pick takes the first engine, in the order given, that runs the method
// and serves the request; its reason names the engines passed over.
func TestPick(t *testing.T) {
	prob := &ode.Problem{Name: "m", Dim: 1}
	req := &engine.Request{Problem: prob, Method: method.Tsit5, Job: engine.Forward}
	noAVX := errors.New("m: no AVX-512 on this processor")
	simd := fake{"simd-erk", 10, method.ExplicitFamily, noAVX}
	erk := fake{"cpu-erk", 0, method.ExplicitFamily, nil}
	ros := fake{"cpu-ros", 0, method.RosenbrockFamily, nil}

	e, r := Pick([]engine.Engine{simd, erk, ros}, req)
	if e == nil || r.Err != nil || r.Engine != "cpu-erk" || !strings.Contains(r.Reason, "passed over: simd-erk: m: no AVX-512") {
		t.Errorf("fallback past a refusing engine: %v, %+v", e, r)
	}
	simd.refuse = nil
	if _, r := Pick([]engine.Engine{simd, erk, ros}, req); r.Engine != "simd-erk" || strings.Contains(r.Reason, "passed over") {
		t.Errorf("first serving engine: %+v", r)
	}
	// One engine runs the method and refuses: its own words.
	erk.refuse = errors.New("m: DenseSave needs a Rosenbrock method")
	if _, r := Pick([]engine.Engine{erk, ros}, req); r.Err != erk.refuse {
		t.Errorf("the only engine refuses: %+v", r)
	}
	// Two refuse: both, named.
	simd.refuse = noAVX
	if _, r := Pick([]engine.Engine{simd, erk, ros}, req); r.Err == nil || !strings.Contains(r.Err.Error(), "simd-erk: m: no AVX-512") || !strings.Contains(r.Err.Error(), "cpu-erk: m: DenseSave") {
		t.Errorf("every engine refuses: %+v", r)
	}
	// Two refuse for the same reason (a lane engine and its reference):
	// that reason alone.
	same := fake{"lanes-erk", 5, method.ExplicitFamily, errors.New(erk.refuse.Error())}
	if _, r := Pick([]engine.Engine{same, erk, ros}, req); r.Err != same.refuse {
		t.Errorf("two engines refuse alike: %+v", r)
	}
	// An engine that cannot run here does not count against the
	// others' one reason.
	off := unavailable{fake{"off-erk", 5, method.ExplicitFamily, errors.New("off-erk is unavailable here")}}
	if _, r := Pick([]engine.Engine{off, same, erk, ros}, req); r.Err != same.refuse {
		t.Errorf("an unavailable engine and two alike: %+v", r)
	}
	// None runs the method.
	if _, r := Pick([]engine.Engine{ros}, req); !errors.Is(r.Err, ErrNoEngine) || !strings.Contains(r.Err.Error(), "Tsit5 (of the explicit Runge–Kutta family); the registered engines are cpu-ros") {
		t.Errorf("no engine runs the method: %+v", r)
	}
}

// unavailable is a fake that cannot run here (engine.Availability).
type unavailable struct{ fake }

func (u unavailable) Available() error { return u.refuse }

// picky is a fake that serves everything but prefers only what prefer
// allows (engine.Preferrer).
type picky struct {
	fake
	prefer func(*engine.Request) error
}

func (p picky) Prefers(req *engine.Request) error { return p.prefer(req) }

// An engine that serves a request but does not prefer it is passed
// over, with its reason, for the next engine that serves; where no other
// serves it, it runs after all.
func TestPickPreferrer(t *testing.T) {
	prob := &ode.Problem{Name: "m", Dim: 1}
	lanes := picky{fake{"cpu-lanes", 1, method.ExplicitFamily, nil}, func(r *engine.Request) error {
		if r.N < 4 {
			return errors.New("an ensemble of fewer than 4 trajectories leaves lanes idle")
		}
		return nil
	}}
	erk := fake{"cpu-erk", 0, method.ExplicitFamily, nil}
	for _, c := range []struct {
		n        int
		engines  []engine.Engine
		want     string
		reasonIn string
	}{
		{8, []engine.Engine{lanes, erk}, "cpu-lanes", "the registered engine"},
		{2, []engine.Engine{lanes, erk}, "cpu-erk", "passed over: cpu-lanes: an ensemble of fewer than 4"},
		{2, []engine.Engine{lanes}, "cpu-lanes", "the registered engine"},
	} {
		req := &engine.Request{Problem: prob, Method: method.Tsit5, Job: engine.Forward, N: c.n}
		e, r := Pick(c.engines, req)
		if e == nil || r.Err != nil || r.Engine != c.want || !strings.Contains(r.Reason, c.reasonIn) {
			t.Errorf("N = %d, %d engines: %v, %+v; want %s (%q)", c.n, len(c.engines), e, r, c.want, c.reasonIn)
		}
	}
	// A refusal still comes first: an unpreferred engine is no reason
	// to hide another engine's refusal when the unpreferred one runs.
	erk.refuse = errors.New("m: no")
	if _, r := Pick([]engine.Engine{lanes, erk}, &engine.Request{Problem: prob, Method: method.Tsit5, Job: engine.Forward, N: 2}); r.Engine != "cpu-lanes" || !strings.Contains(r.Reason, "cpu-erk: m: no") {
		t.Errorf("fallback to the unpreferred engine: %+v", r)
	}
}
