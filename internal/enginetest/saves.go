package enginetest

import (
	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/engine"
	"github.com/gradsolve/gradsolve/internal/testutil"
)

// SaveTimes checks save times: they never change the mesh (the final
// state and the step counts are those of a solve without them, bit for
// bit); a save time repeated gives the same state twice, bit for bit;
// save times at t0, inside and at t1, per trajectory, and on backward
// spans, match the closed form; and DenseSave (where served) as well.
func SaveTimes(t T, e engine.Engine) {
	for _, m := range Methods(e) {
		name := m.MethodName()
		bare := &gradsolve.Ensemble{N: n, P: params(n), T0: []float64{0}, T1: []float64{2}}
		plain := solveOK(t, bare, options(e, m))

		// Per-trajectory save times: t0, a time repeated, t1.
		const k = 5
		save := make([]float64, 0, n*k)
		for i := range n {
			x := 0.1 * float64(i)
			save = append(save, 0, 0.4+x, 0.4+x, 1.3+x, 2)
		}
		ens := &gradsolve.Ensemble{N: n, P: params(n), T0: []float64{0}, T1: []float64{2}, Save: save, SavePerTrajectory: true}
		res := solveOK(t, ens, options(e, m))
		testutil.CheckBits(t, name+": final states with save times against without", res.Y, plain.Y)
		for i := range n {
			if g, w := res.Stats[i], plain.Stats[i]; g.Accepted != w.Accepted || g.Rejected != w.Rejected {
				t.Errorf("%s: trajectory %d: %d accepted, %d rejected with save times; %d, %d without", name, i, g.Accepted, g.Rejected, w.Accepted, w.Rejected)
			}
			testutil.CheckBits(t, name+": a save time repeated", res.SavedRow(i, 2), res.SavedRow(i, 1))
		}
		checkSavedExact(t, name, res, ens, accuracy(m))

		// Backward spans: from t0 = 2 down to t1 = 0, starting where the
		// forward trajectories end.
		back := &gradsolve.Ensemble{N: n, Y0: plain.Y, P: params(n), T0: []float64{2}, T1: []float64{0}, Save: []float64{1.9, 1, 0.2}}
		checkSavedExact(t, name+" backwards", solveOK(t, back, options(e, m)), back, accuracy(m))

		o := options(e, m)
		o.DenseSave = true
		if !serves(t, e, m, engine.Forward, o) {
			continue
		}
		dense := solveOK(t, ens, o)
		testutil.CheckBits(t, name+": final states with DenseSave against without save times", dense.Y, plain.Y)
		checkSavedExact(t, name+" DenseSave", dense, ens, accuracy(m))
	}
}

// checkSavedExact checks res's saved states against the closed form
// of ens (per-trajectory save times, spans and initial states shared or
// per trajectory).
func checkSavedExact(t T, name string, res *gradsolve.Result, ens *gradsolve.Ensemble, bound float64) {
	t.Helper()
	K := res.K
	var got, want []float64
	for i := range ens.N {
		p := ens.P[i*numParams : (i+1)*numParams]
		u0, v0 := 1.0, p[3]
		if ens.Y0 != nil {
			u0, v0 = ens.Y0[i*dim], ens.Y0[i*dim+1]
		}
		for k := range K {
			ts := ens.Save[k]
			if ens.SavePerTrajectory {
				ts = ens.Save[i*K+k]
			}
			y, _ := exact(ens.T0[0], ts, p, u0, v0)
			want = append(want, y[:]...)
			got = append(got, res.SavedRow(i, k)...)
		}
	}
	err := relErr(got, want, 0)
	if err > bound {
		t.Errorf("%s: saved states: error %.2g relative to the closed form, bound %.2g", name, err, bound)
	}
	measured(t, "saved "+name+": error / rtol^{q/(q+1)}", 10*err/bound)
}
