// Package enginetest is the conformance suite of the engines, in the
// manner of gonum's blas/testblas: each check is a function that takes
// a registered engine (package internal/engine) and runs the same cases
// on it for every built-in method the engine runs and every job it
// serves — forward, sensitivities, record and the replay-adjoint on the
// recording — through the public API (gradsolve.Solve, Record,
// LossGradient with Options.Engine naming it). Run runs them all; the
// package's own test runs Run for every registered engine, so an engine
// that registers joins the suite in go test ./....
//
// The checks measure against the truth (the problem's closed form, and
// its derivatives by complex steps), against each other (forward
// sensitivities against the reverse gradient, the gradient against
// central differences of the replay on the same mesh) and against
// invariants that hold bit for bit: results do not depend on the worker
// count or the chunk size, sensitivities and save times do not change
// the mesh, a recording is the solve, and an engine gives the same
// bits as its reference engine (Engine.Reference; itself at one worker
// for the reference engines cpu-erk and cpu-ros), so a SIMD or GPU
// engine that claims cpu-erk's arithmetic is compared with cpu-erk.
//
// The comparisons are those of internal/testutil.
package enginetest

import (
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/engine"
	"github.com/gradsolve/gradsolve/method"
)

// T is the part of *testing.T the checks use, so that a check can also
// run on a recorder (the suite's own test runs the checks on engines
// that must fail them). Fatal and Fatalf end the check's goroutine, as
// testing.T's do.
type T interface {
	Helper()
	Errorf(format string, args ...any)
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
}

// Check is one check of the suite.
type Check struct {
	Name string
	Func func(t T, e engine.Engine)
}

// Checks are the checks Run runs, in order.
var Checks = []Check{
	{"Forward", Forward},
	{"Sensitivities", Sensitivities},
	{"Gradients", Gradients},
	{"SaveTimes", SaveTimes},
	{"Failures", Failures},
	{"Cancellation", Cancellation},
	{"Invariance", Invariance},
	{"Reference", Reference},
	{"Refusals", Refusals},
}

// Run runs every check on e, each as a subtest.
func Run(t *testing.T, e engine.Engine) {
	for _, c := range Checks {
		t.Run(c.Name, func(t *testing.T) { c.Func(t, e) })
	}
}

// Methods returns the built-in methods e runs (method.Every, in order).
func Methods(e engine.Engine) []method.Method {
	var out []method.Method
	for _, m := range method.Every() {
		if e.Runs(m) {
			out = append(out, m)
		}
	}
	return out
}

// The suite's tolerances: tight enough that every method's global
// error is far below the bounds the checks put on it, loose enough
// that Rosenbrock23 (order 2) takes a few hundred steps on [0, 2].
const (
	rtol = 1e-8
	atol = 1e-10
)

// n is the number of trajectories of most checks: each has its own
// parameters (params), so that rows cannot be mixed up unseen.
const n = 5

// params returns n rows of (a, b, r, v0).
func params(n int) []float64 {
	p := make([]float64, 0, n*numParams)
	for i := range n {
		x := float64(i)
		p = append(p, 1.5+0.2*x, 0.7-0.1*x, 2+0.3*x, 0.1+0.05*x)
	}
	return p
}

// saves are the shared save times of the checks, inside [0, 2].
var saves = []float64{0.3, 1.1, 1.7}

// options returns the options of a solve with method m on engine e.
func options(e engine.Engine, m method.Method) *gradsolve.Options {
	return &gradsolve.Options{Engine: e.Name(), Method: m, RTol: rtol, ATol: atol}
}

// allColumns are the sensitivity columns of the checks: every
// parameter, then both initial values.
var allColumns = []gradsolve.Wrt{gradsolve.Param(0), gradsolve.Param(1), gradsolve.Param(2), gradsolve.Param(3),
	gradsolve.InitialValue(0), gradsolve.InitialValue(1)}

// columnTheta maps a column of allColumns to its index in the closed
// form's θ = (a, b, r, u0, v0): v(t0) = v0 is both the parameter v0 and
// the initial value of v, so the two columns have the same derivative.
var columnTheta = []int{0, 1, 2, 4, 3, 4}

// serves reports whether e serves the job of opts (a Sens, a Record)
// with method m on the suite's problem, and if not logs why: a job an
// engine does not serve is skipped, never passed silently.
func serves(t T, e engine.Engine, m method.Method, job engine.Job, o *gradsolve.Options) bool {
	t.Helper()
	pr := mustProblem(t)
	req := &engine.Request{Problem: pr, Offers: pr.ProgramSet(), Method: m, Job: job, DenseSave: o.DenseSave, KeepStages: o.KeepStages}
	if o.Sens != nil {
		req.NumSens, req.ErrorTest = len(o.Sens.Wrt), o.Sens.ErrorTest
	}
	if err := e.Serves(req); err != nil {
		t.Logf("%s does not serve the %s job with %s: %v", e.Name(), job, m.MethodName(), err)
		return false
	}
	return true
}

func mustProblem(t T) *gradsolve.Problem {
	t.Helper()
	pr, err := problem()
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

// measured logs a measured error, for the record behind a bound (go
// test -v -run TestConformance ./internal/enginetest shows them).
func measured(t T, what string, v float64) {
	t.Helper()
	t.Logf("measured %s: %.2g", what, v)
}
