package enginetest

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/engine"
	"github.com/gradsolve/gradsolve/method"
)

// run is what one configuration (engine, workers, chunk) computed for
// one method: every job the engine serves, on the same inputs.
type run struct {
	forward, sens, budget *gradsolve.Result
	record, replay        *gradsolve.Result
	grad                  *gradsolve.Gradient
}

// runJobs runs every job e serves with m on nInv trajectories — a
// forward solve with save times, the same with sensitivities, one with
// a step budget that stops every trajectory, a recording, its
// gradient and a replay at other parameters — with the given workers
// and chunk size.
func runJobs(t T, e engine.Engine, m method.Method, workers, chunk int) run {
	t.Helper()
	const nInv = 9
	ctx := context.Background()
	pr := mustProblem(t)
	ens := ensemble(nInv)
	o := options(e, m)
	o.Workers, o.Chunk = workers, chunk
	var r run
	r.forward = solveOK(t, ens, o)
	so := *o
	so.Sens = &gradsolve.Sensitivity{Wrt: allColumns}
	if serves(t, e, m, engine.Sensitivities, &so) {
		r.sens = solveOK(t, ens, &so)
	}
	bo := *o
	bo.MaxSteps = 12
	var err error
	if r.budget, err = gradsolve.Solve(ctx, pr, ens, &bo); err != nil {
		t.Fatal(err)
	}
	if !serves(t, e, m, engine.Record, o) {
		return r
	}
	rec, err := gradsolve.Record(ctx, pr, ens, o)
	if err != nil {
		t.Fatal(err)
	}
	r.record = rec.Result
	if r.grad, err = rec.Gradient(ctx, gradsolve.Cotangents{Y: r.forward.Y, Saved: r.forward.Saved}); err != nil {
		t.Fatal(err)
	}
	p := params(nInv)
	for i := range p {
		p[i] *= 1.01
	}
	if r.replay, err = rec.Replay(ctx, &gradsolve.Point{P: p}); err != nil {
		t.Fatal(err)
	}
	return r
}

// sameRun checks that got and want computed the same bits in every job.
func sameRun(t T, what string, got, want run) {
	t.Helper()
	sameResult(t, what+": forward", got.forward, want.forward)
	sameResult(t, what+": step budget", got.budget, want.budget)
	if (got.sens == nil) != (want.sens == nil) || (got.record == nil) != (want.record == nil) {
		t.Errorf("%s: serves sensitivities %v, recordings %v; want %v, %v", what, got.sens != nil, got.record != nil, want.sens != nil, want.record != nil)
		return
	}
	if got.sens != nil {
		sameResult(t, what+": sensitivities", got.sens, want.sens)
	}
	if got.record != nil {
		sameResult(t, what+": record", got.record, want.record)
		sameGradient(t, what+": gradient", got.grad, want.grad)
		sameResult(t, what+": replay at other parameters", got.replay, want.replay)
	}
}

// Invariance checks that every job gives the same bits whatever the
// number of workers and the chunk size: each trajectory's solve is a
// pure function of its inputs.
func Invariance(t T, e engine.Engine) {
	for _, m := range Methods(e) {
		ref := runJobs(t, e, m, 1, 1)
		for _, c := range [][2]int{{2, 1}, {3, 2}, {4, 0}, {1, 0}} {
			sameRun(t, fmt.Sprintf("%s, %d workers, chunk %d", m.MethodName(), c[0], c[1]), runJobs(t, e, m, c[0], c[1]), ref)
		}
	}
}

// Reference checks that e gives the bits of its reference engine
// (Engine.Reference, or per method engine.FamilyReference) on every
// method both run, in every job: the same
// steps, statuses, outputs, sensitivities and gradients. An engine
// that is its own reference (cpu-erk, cpu-ros) is compared with itself
// at one worker. Where the reference serves a job e does not, e fails:
// an engine that claims another's arithmetic claims its jobs too.
func Reference(t T, e engine.Engine) {
	for _, m := range Methods(e) {
		// An engine.FamilyReference names a reference per family.
		ref := e
		if name := engine.ReferenceOf(e, m); name != "" {
			if ref = engine.Lookup(name); ref == nil {
				t.Fatalf("%s names %q as its reference for %s, which is not registered", e.Name(), name, m.MethodName())
			}
		}
		if !ref.Runs(m) {
			continue
		}
		want := runJobs(t, ref, m, 1, 1)
		if jobs := engine.ReferenceJobsOf(e, m); jobs != nil {
			// The engine claims the reference's bits on these jobs
			// alone (engine.PartialReference, or per method
			// engine.FamilyReferenceJobs): compare those.
			if !slices.Contains(jobs, engine.Sensitivities) {
				want.sens = nil
			}
			if !slices.Contains(jobs, engine.Record) {
				want.record, want.grad, want.replay = nil, nil, nil
			}
			t.Logf("%s claims %s's bits with %s on the jobs %v only", e.Name(), ref.Name(), m.MethodName(), jobs)
		}
		sameRun(t, fmt.Sprintf("%s on %s against %s", m.MethodName(), e.Name(), ref.Name()), runJobs(t, e, m, 3, 2), want)
	}
}

// Refusals checks that what e refuses is refused with its reason: a
// method it does not run, named with it, is an error naming the engine,
// and a job it does not serve is an error carrying Serves's words;
// what it serves, Solve runs.
func Refusals(t T, e engine.Engine) {
	ctx := context.Background()
	pr := mustProblem(t)
	ens := ensemble(1)
	for _, m := range method.Every() {
		o := options(e, m)
		if !e.Runs(m) {
			_, err := gradsolve.Solve(ctx, pr, ens, o)
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q does not run %s", e.Name(), m.MethodName())) {
				t.Errorf("%s named with %s, which it does not run: %v", e.Name(), m.MethodName(), err)
			}
			continue
		}
		for _, c := range []struct {
			job engine.Job
			o   gradsolve.Options
		}{
			{engine.Forward, *o},
			{engine.Forward, gradsolve.Options{Engine: e.Name(), Method: m, DenseSave: true}},
			{engine.Sensitivities, gradsolve.Options{Engine: e.Name(), Method: m, Sens: &gradsolve.Sensitivity{Wrt: allColumns}}},
			{engine.Sensitivities, gradsolve.Options{Engine: e.Name(), Method: m, Sens: &gradsolve.Sensitivity{Wrt: allColumns, ErrorTest: true}}},
			{engine.Record, *o},
		} {
			req := &engine.Request{Problem: pr, Offers: pr.ProgramSet(), Method: m, Job: c.job, DenseSave: c.o.DenseSave}
			if c.o.Sens != nil {
				req.NumSens, req.ErrorTest = len(c.o.Sens.Wrt), c.o.Sens.ErrorTest
			}
			why := e.Serves(req)
			var err error
			if c.job == engine.Record {
				_, err = gradsolve.Record(ctx, pr, ens, &c.o)
			} else {
				_, err = gradsolve.Solve(ctx, pr, ens, &c.o)
			}
			switch {
			case why == nil && err != nil:
				t.Errorf("%s %s (%+v): served, but the job fails: %v", m.MethodName(), c.job, req, err)
			case why != nil && (err == nil || !strings.Contains(err.Error(), why.Error()) || !strings.Contains(err.Error(), e.Name())):
				t.Errorf("%s %s: refused (%v), but the job's error is %v", m.MethodName(), c.job, why, err)
			}
		}
	}
}
