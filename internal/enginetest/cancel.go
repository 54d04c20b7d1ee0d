package enginetest

import (
	"context"
	"errors"
	"math"
	"sync/atomic"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/engine"
	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/ode"
)

// cancelling returns the suite's problem with a right-hand side that
// calls cancel from its after-th evaluation on (counted in calls, over
// every worker; a lane evaluation counts as ode.LaneWidth), and
// otherwise evaluates the problem's own programs: the same arithmetic,
// so every trajectory that finishes has the bits of an uncancelled
// solve.
func cancelling(t T, cancel context.CancelFunc, after int64, calls *atomic.Int64) *gradsolve.Problem {
	pr := *mustProblem(t)
	inner := pr.Programs
	pr.Programs = func() *ode.Programs {
		pg := inner()
		f := pg.F
		pg.F = func(t float64, y, p, dy []float64) {
			if calls.Add(1) >= after {
				cancel() // idempotent
			}
			f(t, y, p, dy)
		}
		// The lane kernel, which the lane engines inline in place of
		// FLanes, would not count: leave it out.
		pg.Kernel = nil
		if fl := pg.FLanes; fl != nil {
			pg.FLanes = func(t, y, p, dy []float64) {
				if calls.Add(ode.LaneWidth) >= after {
					cancel()
				}
				fl(t, y, p, dy)
			}
		}
		return pg
	}
	pr.SensF = nil
	// Its f is no longer the formulas' alone: an engine that writes its
	// own code from them (the cuda engine) must not run it.
	pr.Symbolic = nil
	return &pr
}

// Cancellation checks that a cancelled solve leaves no corruption: with
// the context cancelled before the start every trajectory is NotRun;
// cancelled in the middle, every trajectory is Success with the bits of
// the uncancelled solve, or Cancelled or NotRun, and Solve returns the
// context's error; a cancelled Record returns no recording; and a
// Replay or Gradient cancelled leaves the recording where it was, so
// the next Gradient is the one before, bit for bit.
func Cancellation(t T, e engine.Engine) {
	const big = 40 // trajectories: enough that cancellation falls amid them
	for _, m := range Methods(e) {
		name := m.MethodName()
		ens := ensemble(big)
		o := options(e, m)
		o.Workers, o.Chunk = 2, 1
		full := solveOK(t, ens, o)

		gone, cancel := context.WithCancel(context.Background())
		cancel()
		res, err := gradsolve.Solve(gone, mustProblem(t), ens, o)
		if !errors.Is(err, context.Canceled) || res == nil {
			t.Fatalf("%s: Solve with a cancelled context: %v, %v", name, res, err)
		}
		for i, s := range res.Status {
			if s != gradsolve.NotRun {
				t.Errorf("%s: cancelled before the start: trajectory %d is %v", name, i, s)
			}
		}

		// Cancelled after a third of the evaluations of the full solve.
		ctx, cancel := context.WithCancel(context.Background())
		after := int64(full.Total().FEvals / 3)
		var calls atomic.Int64
		cp := cancelling(t, cancel, after, &calls)
		if why := e.Serves(&engine.Request{Problem: cp, Offers: cp.ProgramSet(), Method: m, Job: engine.Forward, N: big}); why != nil {
			// An engine that runs its own code from the problem's
			// formulas never calls the counting f: its cancellation
			// amid a run is its own package's test.
			cancel()
			t.Logf("%s: %s does not serve the counting problem of the midway cancellation (%v): only the cancellation before the start is checked here", name, e.Name(), why)
			continue
		}
		res, err = gradsolve.Solve(ctx, cp, ens, o)
		cancel()
		if !errors.Is(err, context.Canceled) || res == nil {
			t.Fatalf("%s: Solve cancelled midway: %v after %d of %d calls (%d evaluations)", name, err, after, calls.Load(), res.Total().FEvals)
		}
		unfinished := 0
		for i, s := range res.Status {
			switch s {
			case gradsolve.Success:
				testutil.CheckBits(t, name+": a trajectory finished before the cancellation", res.Row(i), full.Row(i))
			case gradsolve.Cancelled:
				unfinished++
				if y := res.Row(i); !(res.T[i] >= 0 && res.T[i] < 2) || math.IsNaN(y[0]) || math.IsNaN(y[1]) {
					t.Errorf("%s: trajectory %d cancelled at T = %g with state %v", name, i, res.T[i], y)
				}
			case gradsolve.NotRun:
				unfinished++
			default:
				t.Errorf("%s: trajectory %d is %v after a cancellation", name, i, s)
			}
		}
		if unfinished == 0 {
			t.Errorf("%s: the cancellation after %d evaluations left every trajectory finished", name, after)
		}

		if !serves(t, e, m, engine.Record, &gradsolve.Options{}) {
			continue
		}
		if rec, err := gradsolve.Record(gone, mustProblem(t), ens, o); !errors.Is(err, context.Canceled) || rec != nil {
			t.Errorf("%s: Record with a cancelled context: %v, %v", name, rec, err)
		}
		rec, err := gradsolve.Record(context.Background(), mustProblem(t), ens, o)
		if err != nil {
			t.Fatal(err)
		}
		cot := gradsolve.Cotangents{Y: full.Y, Saved: full.Saved}
		g0, err := rec.Gradient(context.Background(), cot)
		if err != nil {
			t.Fatal(err)
		}
		before := rec.Result
		if _, err := rec.Replay(gone, &gradsolve.Point{P: []float64{1.6, 0.7, 2, 0.1}}); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: Replay with a cancelled context: %v", name, err)
		}
		if _, err := rec.Gradient(gone, cot); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: Gradient with a cancelled context: %v", name, err)
		}
		if rec.Result != before {
			t.Errorf("%s: a cancelled Replay moved the recording", name)
		}
		g1, err := rec.Gradient(context.Background(), cot)
		if err != nil {
			t.Fatal(err)
		}
		sameGradient(t, name+": Gradient after cancelled calls against before", g1, g0)
	}
}
