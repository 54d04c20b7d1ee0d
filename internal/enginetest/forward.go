package enginetest

import (
	"context"
	"fmt"
	"math"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/engine"
	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/method"
)

// accuracy bounds the error of method m against the closed form,
// relative to the largest entry of the quantity compared. An adaptive
// solve keeps each step's error estimate, of order q + 1 in h (q the
// lower of the method's two orders), below the tolerance, so its steps
// are h ∝ rtol^{1/(q+1)}, their number ∝ rtol^{−1/(q+1)}, and the
// global error ≲ (steps)·rtol ∝ rtol^{q/(q+1)} (tolerance
// proportionality: Hairer, Nørsett & Wanner I, §II.4;
// doi:10.1007/978-3-540-78862-1). The factor 10 covers what this
// problem does to errors over [0, 2] — a decay and a logistic growth,
// which amplify little: the measured error is at most 1.3 of
// rtol^{q/(q+1)} (Rosenbrock23, backwards; the higher orders far
// below, since their solutions are more accurate than the estimate
// they control; go test -v -run TestConformance ./internal/enginetest
// prints every one). It holds for the states, the saved states (by a
// re-step or a continuous extension of at least order q) and the
// sensitivities, which are the derivative of the discrete solution and
// err like the state (they are not in the error norm, so their error
// is not controlled, only inherited).
func accuracy(m method.Method) float64 {
	q := 0
	switch m := m.(type) {
	case *method.Tableau:
		q = min(m.Order, m.ErrOrder)
	case *method.Rosenbrock:
		q = m.EstimateOrder() - 1
	}
	return 10 * math.Pow(rtol, float64(q)/float64(q+1))
}

// solveOK solves and fails the test on an error or on any trajectory
// that did not succeed.
func solveOK(t T, ens *gradsolve.Ensemble, o *gradsolve.Options) *gradsolve.Result {
	t.Helper()
	res, err := gradsolve.Solve(context.Background(), mustProblem(t), ens, o)
	if err != nil {
		t.Fatalf("Solve: %v", err)
	}
	if err := res.Errs(); err != nil {
		t.Fatalf("Solve: %v", err)
	}
	return res
}

// ensemble returns the checks' usual ensemble: n trajectories on [0, 2]
// with their own parameters, initial states y0(p) = (1, v0), saved at
// saves.
func ensemble(n int) *gradsolve.Ensemble {
	return &gradsolve.Ensemble{N: n, P: params(n), T0: []float64{0}, T1: []float64{2}, Save: saves}
}

// exactRows returns the closed form's final and saved states of ens
// (spans and save times shared, initial states y0(p) unless ens.Y0
// gives them), row-major as Result.Y and Result.Saved, and the
// derivatives of each with respect to the columns of allColumns, as
// Result.S and Result.SavedS.
func exactRows(ens *gradsolve.Ensemble) (y, saved, s, savedS []float64) {
	t0, t1 := ens.T0[0], ens.T1[0]
	nc := len(allColumns)
	for i := range ens.N {
		p := ens.P[i*numParams : (i+1)*numParams]
		u0, v0 := 1.0, p[3]
		if ens.Y0 != nil {
			u0, v0 = ens.Y0[i*dim], ens.Y0[i*dim+1]
		}
		add := func(t float64, ys, ss *[]float64) {
			yt, d := exact(t0, t, p, u0, v0)
			*ys = append(*ys, yt[:]...)
			for c := range dim {
				for col := range nc {
					*ss = append(*ss, d[columnTheta[col]][c])
				}
			}
		}
		add(t1, &y, &s)
		for _, ts := range ens.Save {
			add(ts, &saved, &savedS)
		}
	}
	return y, saved, s, savedS
}

// Forward checks the forward job of every method against the closed
// form, that the result names the engine and the method, and that a
// recording is the solve bit for bit and replays to it at its own
// point.
func Forward(t T, e engine.Engine) {
	ens := ensemble(n)
	wantY, wantSaved, _, _ := exactRows(ens)
	for _, m := range Methods(e) {
		res := solveOK(t, ens, options(e, m))
		if res.Engine != e.Name() || res.Method != m.MethodName() || res.EngineReason == "" || res.Reason == "" {
			t.Errorf("%s: ran %s on %s (%q; %q)", m.MethodName(), res.Method, res.Engine, res.Reason, res.EngineReason)
		}
		bound := accuracy(m)
		for _, c := range []struct {
			name      string
			got, want []float64
		}{{"final states", res.Y, wantY}, {"saved states", res.Saved, wantSaved}} {
			err := relErr(c.got, c.want, 0)
			if err > bound {
				t.Errorf("%s: %s: error %.2g relative to the closed form, bound %.2g", m.MethodName(), c.name, err, bound)
			}
			measured(t, fmt.Sprintf("%s %s: error / rtol^{q/(q+1)}", m.MethodName(), c.name), 10*err/bound)
		}
		if !serves(t, e, m, engine.Record, &gradsolve.Options{}) {
			continue
		}
		rec, err := gradsolve.Record(context.Background(), mustProblem(t), ens, options(e, m))
		if err != nil {
			t.Fatalf("%s: Record: %v", m.MethodName(), err)
		}
		sameResult(t, m.MethodName()+": Record against Solve", rec.Result, res)
		rp, err := rec.Replay(context.Background(), nil)
		if err != nil {
			t.Fatalf("%s: Replay: %v", m.MethodName(), err)
		}
		rp.Stats = res.Stats // a replay counts no steps of its own
		sameResult(t, m.MethodName()+": Replay at the recording point against Solve", rp, res)
	}
}

// Sensitivities checks the sensitivity job of every method: the state,
// the mesh and the statuses are those of the forward job bit for bit
// (the columns are not in the error norm), and the sensitivities match
// the complex-step derivatives of the closed form; with
// Sensitivity.ErrorTest (where served) too, on a mesh of at least as
// many steps.
func Sensitivities(t T, e engine.Engine) {
	ens := ensemble(n)
	_, _, wantS, wantSavedS := exactRows(ens)
	for _, m := range Methods(e) {
		o := options(e, m)
		o.Sens = &gradsolve.Sensitivity{Wrt: allColumns}
		if !serves(t, e, m, engine.Sensitivities, o) {
			continue
		}
		plain := solveOK(t, ens, options(e, m))
		res := solveOK(t, ens, o)
		for _, c := range []struct {
			name      string
			got, want []float64
		}{{"Y", res.Y, plain.Y}, {"Saved", res.Saved, plain.Saved}, {"T", res.T, plain.T}} {
			if !testutil.EqualBits(c.got, c.want) {
				t.Errorf("%s: %s with sensitivities differs from the forward solve's", m.MethodName(), c.name)
			}
		}
		for i := range res.Stats {
			if g, w := res.Stats[i], plain.Stats[i]; g.Accepted != w.Accepted || g.Rejected != w.Rejected {
				t.Errorf("%s: trajectory %d: %d accepted, %d rejected with sensitivities; %d, %d without", m.MethodName(), i, g.Accepted, g.Rejected, w.Accepted, w.Rejected)
			}
		}
		bound := accuracy(m)
		for _, c := range []struct {
			name      string
			got, want []float64
		}{{"sensitivities at t1", res.S, wantS}, {"saved sensitivities", res.SavedS, wantSavedS}} {
			err := relErr(c.got, c.want, 0)
			if err > bound {
				t.Errorf("%s: %s: error %.2g relative to the closed form's, bound %.2g", m.MethodName(), c.name, err, bound)
			}
			measured(t, fmt.Sprintf("%s %s: error / rtol^{q/(q+1)}", m.MethodName(), c.name), 10*err/bound)
		}
		o.Sens = &gradsolve.Sensitivity{Wrt: allColumns, ErrorTest: true}
		if !serves(t, e, m, engine.Sensitivities, o) {
			continue
		}
		tested := solveOK(t, ens, o)
		if err := relErr(tested.S, wantS, 0); err > bound {
			t.Errorf("%s: ErrorTest: sensitivities: error %.2g relative, bound %.2g", m.MethodName(), err, bound)
		}
		if a, b := tested.Total().Accepted, plain.Total().Accepted; a < b {
			t.Errorf("%s: ErrorTest: %d accepted steps, fewer than the %d of the state alone", m.MethodName(), a, b)
		}
	}
}
