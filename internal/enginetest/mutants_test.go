package enginetest

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/internal/engine"
	"github.com/gradsolve/gradsolve/internal/engine/cpu"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/method"
)

// Mutants are cpu-erk with one thing wrong, registered in this test
// binary alone (at a priority below every real engine, so the router
// never picks one), each claiming cpu-erk's arithmetic. The suite must
// fail each of them in the check that looks at what is wrong; this is
// the suite's own test. TestConformance leaves them out.
const mutantPrefix = "mutant-"

// mutant is cpu-erk with its plan wrapped.
type mutant struct {
	cpu.ERK
	name string
	wrap func(spec *engine.Spec, pl engine.Plan) engine.Plan
}

func (m mutant) Name() string      { return mutantPrefix + m.name }
func (m mutant) Priority() int     { return cpu.Priority - 100 }
func (m mutant) Reference() string { return "cpu-erk" }
func (m mutant) Prepare(spec *engine.Spec) (engine.Plan, error) {
	pl, err := m.ERK.Prepare(spec)
	if err != nil {
		return nil, err
	}
	return m.wrap(spec, pl), nil
}

// plan is a Plan with its methods replaceable.
type plan struct {
	engine.Plan
	newSolver   func() (engine.Solver, error)
	newReplayer func() (engine.Replayer, error)
}

func (p plan) NewSolver() (engine.Solver, error) {
	if p.newSolver != nil {
		return p.newSolver()
	}
	return p.Plan.NewSolver()
}

func (p plan) NewReplayer() (engine.Replayer, error) {
	if p.newReplayer != nil {
		return p.newReplayer()
	}
	return p.Plan.NewReplayer()
}

// nudged is the method's default controller with its safety factor one
// unit in the last place larger: a different step-size sequence.
func nudged(spec *engine.Spec) *control.PI {
	tb := spec.Method.(*method.Tableau)
	c := control.DefaultPI(tb.Order, tb.QMin, tb.QMax)
	c.Safety = math.Nextafter(c.Safety, 1)
	return &c
}

// scaledReplayer is a Replayer whose parameter gradient is 1e−7 off.
type scaledReplayer struct{ engine.Replayer }

func (r scaledReplayer) Reverse(ms *ivp.Mesh, p, save, cotY, cotSaved, gy0, gp []float64) {
	r.Replayer.Reverse(ms, p, save, cotY, cotSaved, gy0, gp)
	for j := range gp {
		gp[j] *= 1 + 1e-7
	}
}

// The mutants, and the check that must catch each.
var mutants = []struct {
	m     mutant
	check Check
}{
	// Another controller: other steps, so not cpu-erk's bits.
	{mutant{name: "controller", wrap: func(spec *engine.Spec, pl engine.Plan) engine.Plan {
		s := *spec
		s.Controller = nudged(spec)
		p, _ := cpu.ERK{}.Prepare(&s)
		return p
	}}, Check{"Reference", Reference}},
	// A reverse sweep a little wrong: the gradient checks.
	{mutant{name: "adjoint", wrap: func(spec *engine.Spec, pl engine.Plan) engine.Plan {
		return plan{Plan: pl, newReplayer: func() (engine.Replayer, error) {
			rp, err := pl.NewReplayer()
			return scaledReplayer{rp}, err
		}}
	}}, Check{"Gradients", Gradients}},
	// Workers after the first step differently: results depend on
	// which worker ran a trajectory.
	{mutant{name: "workers", wrap: func(spec *engine.Spec, pl engine.Plan) engine.Plan {
		s := *spec
		s.Controller = nudged(spec)
		other, _ := cpu.ERK{}.Prepare(&s)
		var mu sync.Mutex
		made := 0
		return plan{Plan: pl, newSolver: func() (engine.Solver, error) {
			mu.Lock()
			defer mu.Unlock()
			if made++; made > 1 {
				return other.NewSolver()
			}
			return pl.NewSolver()
		}}
	}}, Check{"Invariance", Invariance}},
}

func init() {
	for _, c := range mutants {
		engine.Register(c.m)
	}
}

// recorder is a T that keeps what a check reports.
type recorder struct {
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatal(args ...any) { r.Errorf("%s", fmt.Sprint(args...)); runtime.Goexit() }
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}
func (r *recorder) Logf(string, ...any) {}

// record runs check on e in a goroutine of its own (Fatal ends it) and
// returns what it reported.
func record(check Check, e engine.Engine) []string {
	r := &recorder{}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		check.Func(r, e)
	}()
	wg.Wait()
	return r.errs
}

// TestMutantsFail checks that the suite catches each mutant, and that
// the mutants are honest otherwise: the same check passes on cpu-erk.
func TestMutantsFail(t *testing.T) {
	for _, c := range mutants {
		e := engine.Lookup(c.m.Name())
		if errs := record(c.check, engine.Lookup("cpu-erk")); len(errs) > 0 {
			t.Fatalf("%s fails on cpu-erk itself: %s", c.check.Name, errs[0])
		}
		errs := record(c.check, e)
		if len(errs) == 0 {
			t.Errorf("%s passes %s", c.check.Name, e.Name())
			continue
		}
		t.Logf("%s fails %s (%d reports), first: %s", c.check.Name, e.Name(), len(errs), errs[0])
	}
}

func isMutant(e engine.Engine) bool { return strings.HasPrefix(e.Name(), mutantPrefix) }
