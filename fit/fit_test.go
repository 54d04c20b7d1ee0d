package fit

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/router"
	"github.com/gradsolve/gradsolve/sym"
)

// recoverTol is the relative accuracy to which a fit on exact data
// recovers the truth: the least-squares minimum of the discrete
// solution lies within the solve's error (about 1e-11 relative at
// tight's rtol 1e-12) of the truth, and the optimisers stop within
// their step tolerance (1e-10 in working coordinates); 1e-8 leaves a
// margin of 100. Adam, which ends on a decaying learning rate rather
// than on a Newton-like step, is held to adamTol.
const (
	recoverTol = 1e-8
	adamTol    = 1e-6
)

// adam is the Adam setting of the recovery tests: 5% moves at first,
// decaying by 1% an update (Σ α_t = 5, ample for the distances here),
// so that the steps fall below the step tolerance after some 2000
// updates at most.
func adam() *Adam { return &Adam{LearningRate: 0.05, Schedule: ExponentialDecay(0.995)} }

// Each optimiser recovers known decay rates from exact final and saved
// states: one rate shared by the ensemble, one per trajectory (four
// concurrent fits with different truths), and one per group.
func TestRecoverDecayRates(t *testing.T) {
	pr := decayProblem(t)
	const n = 6
	shared := []float64{0.7}
	perTraj := []float64{0.3, 0.5, 0.7, 0.9, 1.1, 1.3}
	grouped := []float64{0.4, 0.4, 0.4, 1.2, 1.2, 1.2}
	optimizers := []struct {
		name string
		opt  func() Optimizer
		mode router.Mode
		tol  float64
	}{
		{"lm", func() Optimizer { return &LevenbergMarquardt{} }, router.Auto, recoverTol},
		{"lbfgs-forward", func() Optimizer { return &LBFGS{} }, router.Auto, recoverTol},
		{"lbfgs-reverse", func() Optimizer { return &LBFGS{} }, router.Reverse, recoverTol},
		{"adam-reverse", func() Optimizer { return adam() }, router.Reverse, adamTol},
	}
	owners := []struct {
		name  string
		owner Ownership
		group []int
		truth []float64 // per trajectory (or one)
		start []float64
	}{
		{"shared", Shared, nil, shared, []float64{1.5}},
		{"per-trajectory", PerTrajectory, nil, perTraj, []float64{0.6}},
		{"grouped", Grouped, []int{0, 0, 0, 1, 1, 1}, grouped, []float64{0.8, 0.8}},
	}
	for _, o := range optimizers {
		for _, w := range owners {
			if o.name == "adam-reverse" && w.owner == PerTrajectory && testing.Short() {
				continue
			}
			t.Run(o.name+"/"+w.name, func(t *testing.T) {
				dc := newDecayCase(n, w.truth)
				spec := &Spec{Problem: pr, Ensemble: dc.ens, Options: tight,
					Data:   &gradsolve.FitData{Final: dc.final, Saved: dc.saved},
					Params: []Param{{Wrt: gradsolve.Param(0), Transform: Log()}},
					Owner:  w.owner, Group: w.group, Start: w.start, Optimizer: o.opt(), Mode: o.mode, MaxIter: 3000}
				rep, err := Run(context.Background(), spec)
				if err != nil {
					t.Fatal(err)
				}
				if want := o.mode; want != router.Auto && rep.Mode != want {
					t.Errorf("mode %v, want %v", rep.Mode, want)
				}
				var worst float64
				defer func() { t.Logf("largest relative error %.1e in %d evaluations", worst, rep.Evaluations) }()
				for g, gr := range rep.Groups {
					truth := w.truth[0]
					if len(w.truth) == n {
						truth = w.truth[gr.Trajectories[0]]
					}
					worst = math.Max(worst, relErr(gr.Estimate[0], truth))
					if !gr.Converged || gr.Status != Converged {
						t.Errorf("group %d: status %v after %d iterations", g, gr.Status, gr.Iterations)
					}
					if e := relErr(gr.Estimate[0], truth); e > o.tol {
						t.Errorf("group %d: k = %.12g, truth %g: relative error %.2e > %.0e", g, gr.Estimate[0], truth, e, o.tol)
					}
				}
			})
		}
	}
}

// Each optimiser recovers the frequencies and damping ratios of damped
// oscillators in three groups of three trajectories (different initial
// states per trajectory) from exact states at six save times; ζ is
// bounded to (0, 1) by Logit, ω kept positive by Log.
func TestRecoverOscillatorGroups(t *testing.T) {
	pr := oscillatorProblem(t)
	omegas, zetas := []float64{1.0, 1.5, 2.2}, []float64{0.1, 0.25, 0.05}
	const n = 9
	save := []float64{0.5, 1, 1.5, 2, 2.5, 3}
	ens := gradsolve.Ensemble{N: n, T0: []float64{0}, T1: []float64{3}, Save: save}
	var saved []float64
	group := make([]int, n)
	for i := range n {
		g := i / 3
		group[i] = g
		x0, v0 := 1-0.3*float64(i%3), 0.2*float64(i%3)
		ens.Y0 = append(ens.Y0, x0, v0)
		ens.P = append(ens.P, 1, 0.5)
		for _, s := range save {
			x, v := oscillatorExact(omegas[g], zetas[g], x0, v0, s)
			saved = append(saved, x, v)
		}
	}
	// Starts 10% off in ω and from ζ = 0.2.
	start := []float64{1.1, 0.2, 1.65, 0.2, 2.42, 0.2}
	for _, o := range []struct {
		name string
		opt  Optimizer
		mode router.Mode
		tol  float64
	}{
		{"lm", &LevenbergMarquardt{}, router.Auto, recoverTol},
		{"lbfgs", &LBFGS{}, router.Reverse, recoverTol},
		{"adam", adam(), router.Auto, adamTol},
	} {
		t.Run(o.name, func(t *testing.T) {
			spec := &Spec{Problem: pr, Ensemble: ens, Options: tight, Data: &gradsolve.FitData{Saved: saved},
				Params: []Param{{Wrt: gradsolve.Param(0), Transform: Log()}, {Wrt: gradsolve.Param(1), Transform: Logit(0, 1)}},
				Owner:  Grouped, Group: group, Start: start, Optimizer: o.opt, Mode: o.mode, MaxIter: 3000}
			rep, err := Run(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			if want := map[string]router.Mode{"lbfgs": router.Reverse}[o.name]; want == router.Auto && rep.Mode != router.Forward {
				t.Errorf("two fitted quantities: mode %v, want forward (%s)", rep.Mode, rep.ModeReason)
			}
			if len(rep.Groups) != 3 {
				t.Fatalf("%d groups, want 3", len(rep.Groups))
			}
			// Lock-step: one evaluation of the whole ensemble serves every
			// group still fitting, so the run takes as many as its
			// longest group, not their sum.
			longest := 0
			for _, gr := range rep.Groups {
				longest = max(longest, gr.Evaluations)
			}
			if rep.Evaluations != longest {
				t.Errorf("%d evaluations for groups of at most %d", rep.Evaluations, longest)
			}
			var worst float64
			defer func() { t.Logf("largest relative error %.1e in %d evaluations (%v)", worst, rep.Evaluations, rep.Mode) }()
			for g, gr := range rep.Groups {
				worst = math.Max(worst, math.Max(relErr(gr.Estimate[0], omegas[g]), relErr(gr.Estimate[1], zetas[g])))
				if !reflect.DeepEqual(gr.Trajectories, []int{3 * g, 3*g + 1, 3*g + 2}) {
					t.Errorf("group %d: trajectories %v", g, gr.Trajectories)
				}
				if gr.Status != Converged {
					t.Errorf("group %d: %v after %d iterations", g, gr.Status, gr.Iterations)
				}
				if e := relErr(gr.Estimate[0], omegas[g]); e > o.tol {
					t.Errorf("group %d: ω = %.12g, truth %g: relative error %.2e", g, gr.Estimate[0], omegas[g], e)
				}
				if e := relErr(gr.Estimate[1], zetas[g]); e > o.tol {
					t.Errorf("group %d: ζ = %.12g, truth %g: relative error %.2e", g, gr.Estimate[1], zetas[g], e)
				}
			}
		})
	}
}

// A group whose trajectories fail (a = −1 makes the right-hand side
// NaN) stops as Failed, with the trajectory's error, while the other
// group converges; the failure does not stop the run.
func TestFailedGroupDoesNotStopOthers(t *testing.T) {
	pr := decayProblem(t)
	dc := newDecayCase(4, []float64{0.7})
	for i := 2; i < 4; i++ {
		dc.ens.P[4*i+1] = -1 // a
	}
	for _, o := range []struct {
		name string
		opt  Optimizer
		mode router.Mode
	}{{"lm", &LevenbergMarquardt{}, router.Auto}, {"lbfgs", &LBFGS{}, router.Reverse}, {"adam", adam(), router.Forward}} {
		t.Run(o.name, func(t *testing.T) {
			rep, err := Run(context.Background(), &Spec{Problem: pr, Ensemble: dc.ens, Options: tight,
				Data: &gradsolve.FitData{Final: dc.final}, Params: []Param{{Wrt: gradsolve.Param(0), Transform: Log()}},
				Owner: Grouped, Group: []int{0, 0, 1, 1}, Start: []float64{1}, Optimizer: o.opt, Mode: o.mode, MaxIter: 3000,
				Rerecord: Rerecord{Mode: RerecordNever}})
			if err != nil {
				t.Fatal(err)
			}
			ok, bad := rep.Groups[0], rep.Groups[1]
			if ok.Status != Converged || relErr(ok.Estimate[0], 0.7) > adamTol {
				t.Errorf("good group: %v, k = %g", ok.Status, ok.Estimate[0])
			}
			var te *gradsolve.TrajectoryError
			if bad.Status != Failed || bad.Converged || !errors.As(bad.Err, &te) || te.Index != 2 {
				t.Errorf("bad group: status %v, err %v", bad.Status, bad.Err)
			}
			if bad.Iterations != 0 || len(bad.History) != 0 || !math.IsNaN(bad.Loss) || bad.Estimate[0] != 1 {
				t.Errorf("bad group: %d iterations, history %v, loss %g, estimate %v: want none, NaN and the start",
					bad.Iterations, bad.History, bad.Loss, bad.Estimate)
			}
			if rep.Records > 1 {
				t.Errorf("%d records: a group that failed at the start must not force recording again", rep.Records)
			}
		})
	}
}

// Adam does not step back: the update that crosses the barrier k = c
// (where the right-hand side turns NaN) ends its group as Failed, with
// the estimate of the update before (still above the barrier); the
// group without a barrier converges. LBFGS, whose line search steps
// back from a failed trial, converges on the barrier side.
func TestFailureMidFit(t *testing.T) {
	pr := decayProblem(t)
	dc := newDecayCase(4, []float64{0.5})
	for i := range 2 {
		dc.ens.P[4*i+3] = 1 // c: a barrier at k = 1, above the truth
	}
	spec := func(opt Optimizer) *Spec {
		return &Spec{Problem: pr, Ensemble: dc.ens, Options: tight, Data: &gradsolve.FitData{Final: dc.final},
			Params: []Param{{Wrt: gradsolve.Param(0), Transform: Log()}}, Owner: Grouped, Group: []int{0, 0, 1, 1},
			Start: []float64{2}, Optimizer: opt, Mode: router.Reverse, MaxIter: 3000}
	}
	rep, err := Run(context.Background(), spec(adam()))
	if err != nil {
		t.Fatal(err)
	}
	barrier, free := rep.Groups[0], rep.Groups[1]
	if barrier.Status != Failed || barrier.Err == nil || !(barrier.Estimate[0] > 1) || barrier.Iterations == 0 {
		t.Errorf("Adam, barrier group: %v (%v), k = %g after %d iterations: want Failed above k = 1",
			barrier.Status, barrier.Err, barrier.Estimate[0], barrier.Iterations)
	}
	if free.Status != Converged || relErr(free.Estimate[0], 0.5) > adamTol {
		t.Errorf("Adam, free group: %v, k = %g", free.Status, free.Estimate[0])
	}
	rep, err = Run(context.Background(), spec(&LBFGS{}))
	if err != nil {
		t.Fatal(err)
	}
	if g := rep.Groups[0]; g.Status == Failed || !(g.Estimate[0] > 1) {
		t.Errorf("LBFGS, barrier group: %v, k = %g: want it to stop above the barrier without failing", g.Status, g.Estimate[0])
	}
	if g := rep.Groups[1]; g.Status != Converged || relErr(g.Estimate[0], 0.5) > recoverTol {
		t.Errorf("LBFGS, free group: %v, k = %g", g.Status, g.Estimate[0])
	}
}

// Log keeps a rate positive on its way from 3 to a small truth, 0.02,
// by steps that take the identity below zero (where the right-hand
// side turns NaN: the identity fit fails); Logit keeps a rate inside
// (0.5, 2) whose best value, 3, lies outside: the fit ends at the
// bound.
func TestTransformsKeepDomains(t *testing.T) {
	pr := decayProblem(t)
	run := func(truth, start float64, tr Transform, opt Optimizer) *Report {
		t.Helper()
		dc := newDecayCase(4, []float64{truth})
		rep, err := Run(context.Background(), &Spec{Problem: pr, Ensemble: dc.ens, Options: tight,
			Data: &gradsolve.FitData{Final: dc.final}, Params: []Param{{Wrt: gradsolve.Param(0), Transform: tr}},
			Start: []float64{start}, Optimizer: opt, Mode: router.Reverse, MaxIter: 400})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	// 30% moves at first (Adam's steps are α whatever the gradient),
	// decaying by 1% an update.
	big := func() Optimizer { return &Adam{LearningRate: 0.3, Beta2: 0.9, Schedule: ExponentialDecay(0.99)} }
	rep := run(0.02, 3, Log(), big())
	for _, it := range rep.Groups[0].History {
		if !(it.Params[0] > 0) {
			t.Fatalf("Log: k = %g at iteration %d", it.Params[0], it.Iteration)
		}
	}
	if k := rep.Groups[0].Estimate[0]; relErr(k, 0.02) > 1e-3 {
		t.Errorf("Log: k = %g, truth 0.02", k)
	}
	rep = run(0.02, 3, Identity(), big())
	if g := rep.Groups[0]; g.Status != Failed || !(g.Estimate[0] > 0) {
		t.Errorf("Identity: %v, k = %g: want a failure below zero, from the last positive k", g.Status, g.Estimate[0])
	}
	rep = run(3, 1, Logit(0.5, 2), &LBFGS{})
	for _, it := range rep.Groups[0].History {
		if !(it.Params[0] >= 0.5 && it.Params[0] <= 2) {
			t.Fatalf("Logit: k = %g at iteration %d", it.Params[0], it.Iteration)
		}
	}
	if k := rep.Groups[0].Estimate[0]; !(k > 1.99) {
		t.Errorf("Logit: k = %g: want it at the bound 2 (truth 3 outside)", k)
	}
}

// The chain rule: the gradient an evaluation gives in working
// coordinates matches central differences of the replayed loss (the
// mesh held fixed, so the loss is smooth) for each transform, for a
// parameter and an initial value. The step h = 1e-5 gives a truncation
// error h²·|L⁽³⁾|/6 ≈ 1e-11 and a rounding error ε·L/h ≈ 1e-11 relative;
// 1e-7 is the bound.
func TestChainRule(t *testing.T) {
	pr := decayProblem(t)
	dc := newDecayCase(3, []float64{0.7})
	for _, tr := range []struct {
		name string
		k    Param
		y0   Param
	}{
		{"identity", Param{Wrt: gradsolve.Param(0), Scale: 2}, Param{Wrt: gradsolve.InitialValue(0)}},
		{"log", Param{Wrt: gradsolve.Param(0), Transform: Log()}, Param{Wrt: gradsolve.InitialValue(0), Transform: Log()}},
		{"logit", Param{Wrt: gradsolve.Param(0), Transform: Logit(0.2, 3)}, Param{Wrt: gradsolve.InitialValue(0), Transform: Logit(-1, 5)}},
	} {
		for _, mode := range []router.Mode{router.Reverse, router.Forward} {
			t.Run(tr.name+"/"+mode.String(), func(t *testing.T) {
				s, err := newSetup(&Spec{Problem: pr, Ensemble: dc.ens, Options: tight,
					Data: &gradsolve.FitData{Final: dc.final, Saved: dc.saved}, Params: []Param{tr.k, tr.y0},
					Start: []float64{1.1, 1.7}, Mode: mode, Optimizer: &LBFGS{}, Rerecord: Rerecord{Mode: RerecordNever}})
				if err != nil {
					t.Fatal(err)
				}
				ev := &evaluator{s: s}
				g := &group{tr: []Transform{tr.k.Transform, tr.y0.Transform}, scale: s.scale[0]}
				z0 := []float64{tr.k.Transform.toWorking(1.1, s.scale[0][0]), tr.y0.Transform.toWorking(1.7, s.scale[0][1])}
				at := func(z []float64) groupEval {
					th, dth := g.natural(z)
					e, err := ev.eval(context.Background(), [][]float64{th}, [][]float64{dth}, []bool{true})
					if err != nil {
						t.Fatal(err)
					}
					if e.groups[0].err != nil {
						t.Fatal(e.groups[0].err)
					}
					return e.groups[0]
				}
				e0 := at(z0)
				const h = 1e-5
				for c := range z0 {
					zp, zm := append([]float64(nil), z0...), append([]float64(nil), z0...)
					zp[c] += h
					zm[c] -= h
					fd := (at(zp).loss - at(zm).loss) / (2 * h)
					tol := 1e-7 * math.Max(math.Abs(fd), 1e-3)
					if mode == router.Forward {
						// A fresh adaptive solve per point: its mesh, and so
						// its loss, jumps by the solve's error (≈1e-12
						// relative), which a difference over h = 1e-5 turns
						// into 1e-7.
						tol = 1e-5 * math.Max(math.Abs(fd), 1e-3)
					}
					if math.Abs(e0.grad[c]-fd) > tol {
						t.Errorf("∂L/∂z_%d = %.12g, central difference %.12g", c, e0.grad[c], fd)
					}
				}
				if mode == router.Reverse && ev.records != 1 {
					t.Errorf("%d records with RerecordNever", ev.records)
				}
			})
		}
	}
}

// The re-record policy: Never records once; Every N records at
// evaluations 0, N, 2N, …; Auto records again only when a rate moves by
// more than the threshold (2%): a fit that halves the rate records
// many times, one that moves it by 1% once.
func TestRerecordPolicy(t *testing.T) {
	pr := decayProblem(t)
	dc := newDecayCase(3, []float64{0.5})
	run := func(start float64, r Rerecord, maxIter int) *Report {
		t.Helper()
		opt := adam()
		if start < 0.51 {
			opt.LearningRate = 0.002 // moves of 0.2% at most: Adam's first steps are α whatever the distance
		}
		rep, err := Run(context.Background(), &Spec{Problem: pr, Ensemble: dc.ens, Options: tight,
			Data: &gradsolve.FitData{Final: dc.final}, Params: []Param{{Wrt: gradsolve.Param(0), Transform: Log()}},
			Start: []float64{start}, Optimizer: opt, Mode: router.Reverse, Rerecord: r, MaxIter: maxIter})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	if rep := run(1, Rerecord{Mode: RerecordNever}, 50); rep.Records != 1 || rep.Evaluations != 51 {
		t.Errorf("never: %d records in %d evaluations, want 1 in 51", rep.Records, rep.Evaluations)
	}
	for _, every := range []int{1, 7, 50} {
		rep := run(1, Rerecord{Mode: RerecordEvery, Every: every}, 50)
		if want := (rep.Evaluations + every - 1) / every; rep.Records != want {
			t.Errorf("every %d: %d records in %d evaluations, want ⌈E/N⌉ = %d", every, rep.Records, rep.Evaluations, want)
		}
	}
	large := run(1, Rerecord{}, 60)
	small := run(0.505, Rerecord{}, 60)
	// The rate moves by ln 2 ≈ 0.69 in log terms, at most 5% an update:
	// each recording covers a 2% move, so about ln 2 / ln 1.02 ≈ 35
	// recordings on the way (fewer where a 5% update jumps past several
	// thresholds at once).
	if large.Records < 20 {
		t.Errorf("auto, a large move (k from 1 to 0.5): %d records in %d evaluations, want ≥ 20", large.Records, large.Evaluations)
	}
	if small.Records != 1 {
		t.Errorf("auto, a 1%% move (k from 0.505 to 0.5): %d records in %d evaluations, want 1", small.Records, small.Evaluations)
	}
	loose := run(1, Rerecord{Threshold: 0.2}, 60)
	if !(loose.Records < large.Records) {
		t.Errorf("auto, threshold 20%%: %d records, not fewer than at 2%% (%d)", loose.Records, large.Records)
	}
}

// Drift checks compare the replay with a fresh recording at the same
// point. Replaying an old mesh far away (RerecordNever, k halved)
// drifts more than replaying one within 2% (RerecordAuto), and the
// gradients (of k and y0) stay close in angle.
func TestDriftChecks(t *testing.T) {
	pr := decayProblem(t)
	dc := decayData(newDecayCase(3, []float64{0.5}), 0.5, 2)
	loose := gradsolve.Options{RTol: 1e-6, ATol: 1e-9} // a coarse mesh, so that replaying it elsewhere shows
	run := func(r Rerecord) *Report {
		t.Helper()
		rep, err := Run(context.Background(), &Spec{Problem: pr, Ensemble: dc.ens, Options: loose,
			Data:   &gradsolve.FitData{Final: dc.final, Saved: dc.saved},
			Params: []Param{{Wrt: gradsolve.Param(0), Transform: Log()}, {Wrt: gradsolve.InitialValue(0)}},
			Start:  []float64{1, 1.5}, Optimizer: adam(), Mode: router.Reverse, Rerecord: r, MaxIter: 40, DriftEvery: 5})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	never, auto := run(Rerecord{Mode: RerecordNever}), run(Rerecord{})
	if want := (never.Evaluations - never.Records) / 5; len(never.Drift) != want {
		t.Errorf("never: %d drift checks in %d replays, want every 5th: %d", len(never.Drift), never.Evaluations-never.Records, want)
	}
	if len(auto.Drift) == 0 {
		t.Fatal("auto: no drift checks")
	}
	worst := func(ds []Drift) (state, ang float64) {
		for _, d := range ds {
			if math.IsNaN(d.StateDrift) || math.IsNaN(d.Angle) || d.Angle > d.WorstGroupAngle+1e-12 {
				t.Errorf("drift %+v", d)
			}
			state, ang = math.Max(state, d.StateDrift), math.Max(ang, d.Angle)
		}
		return state, ang
	}
	ns, na := worst(never.Drift)
	as, aa := worst(auto.Drift)
	t.Logf("never: state drift ≤ %.2e, angle ≤ %.2e°; auto: %.2e, %.2e°", ns, na, as, aa)
	if !(ns > as) || !(na > aa) {
		t.Errorf("drift: never %.3g, %.3g°; auto %.3g, %.3g°: want never's larger", ns, na, as, aa)
	}
	// The replayed gradient is that of a map within the solve's
	// tolerance (1e-6) of the adaptive one: far below a degree.
	if na > 0.1 || aa > 0.1 {
		t.Errorf("gradient angles %.3g° (never), %.3g° (auto): want below 0.1°", na, aa)
	}
	if last := never.Drift[len(never.Drift)-1]; !(last.Shift > 0.2) {
		t.Errorf("never: the last check's shift %g: want the move from k = 1", last.Shift)
	}
}

// Cancelling the context stops the fit at once: the report so far,
// every fitting group Cancelled, and an error wrapping context.Canceled.
// Progress is called once per evaluation, with counts of every group
// (here on the forward route: no recordings).
func TestCancel(t *testing.T) {
	pr := decayProblem(t)
	dc := newDecayCase(4, []float64{0.5})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	spec := &Spec{Problem: pr, Ensemble: dc.ens, Options: tight, Data: &gradsolve.FitData{Final: dc.final},
		Params: []Param{{Wrt: gradsolve.Param(0), Transform: Log()}}, Owner: PerTrajectory, Start: []float64{1},
		Optimizer: adam(), MaxIter: 100000,
		Progress: func(p Progress) {
			calls++
			if p.Evaluation != calls || p.Active+p.Converged+p.Stopped != 4 || p.Records != 0 || !(p.Loss > 0) {
				t.Errorf("progress %+v at call %d", p, calls)
			}
			if p.Evaluation == 3 {
				cancel()
			}
		}}
	begin := time.Now()
	rep, err := Run(ctx, spec)
	if !errors.Is(err, context.Canceled) || rep == nil {
		t.Fatalf("err %v, report %v: want context.Canceled and the report so far", err, rep)
	}
	if took := time.Since(begin); took > 5*time.Second {
		t.Errorf("took %v after the cancel", took)
	}
	if rep.Evaluations != 3 {
		t.Errorf("%d evaluations, want 3 (cancelled after the third)", rep.Evaluations)
	}
	for g, gr := range rep.Groups {
		if gr.Status != Cancelled || gr.Iterations != 2 {
			t.Errorf("group %d: %v after %d iterations, want Cancelled after 2", g, gr.Status, gr.Iterations)
		}
	}
	// A deadline that passes inside a solve: Run returns within the
	// solve's own reaction time, not after the remaining updates.
	big := newDecayCase(2000, []float64{0.5})
	dctx, dcancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer dcancel()
	begin = time.Now()
	_, err = Run(dctx, &Spec{Problem: pr, Ensemble: big.ens, Options: tight, Data: &gradsolve.FitData{Final: big.final},
		Params: []Param{{Wrt: gradsolve.Param(0), Transform: Log()}}, Owner: PerTrajectory, Start: []float64{1},
		Optimizer: adam(), MaxIter: 100000})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("deadline: err %v", err)
	}
	if took := time.Since(begin); took > 2*time.Second {
		t.Errorf("deadline of 30 ms: returned after %v", took)
	}
	// A context cancelled before the start: nothing evaluated.
	rep, err = Run(ctx, spec)
	if !errors.Is(err, context.Canceled) || rep.Evaluations != 0 || rep.Groups[0].Status != Cancelled || !math.IsNaN(rep.Groups[0].Loss) {
		t.Errorf("cancelled before the start: %v, %+v", err, rep)
	}
}

// The same spec gives the same report, bit for bit.
func TestDeterministic(t *testing.T) {
	pr := oscillatorProblem(t)
	ens := gradsolve.Ensemble{N: 4, Y0: []float64{1, 0}, P: []float64{1.3, 0.1}, T0: []float64{0}, T1: []float64{2}, Save: []float64{1, 2}}
	saved := []float64{}
	for _, s := range ens.Save {
		x, v := oscillatorExact(1.3, 0.1, 1, 0, s)
		saved = append(saved, x, v)
	}
	spec := &Spec{Problem: pr, Ensemble: ens, Data: &gradsolve.FitData{Saved: saved},
		Params: []Param{{Wrt: gradsolve.Param(0)}, {Wrt: gradsolve.Param(1)}}, Owner: PerTrajectory,
		Start: []float64{1.2, 0.2}, Optimizer: &LBFGS{}, Mode: router.Reverse}
	a, err := Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	spec.Options.Workers = 1
	b, err := Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	a.Elapsed, b.Elapsed = 0, 0
	if !reflect.DeepEqual(a, b) {
		t.Errorf("two runs differ:\n%+v\n%+v", a.Groups[0], b.Groups[0])
	}
}

// The per-group loss on Data is gradsolve.LeastSquaresFit's; a user
// loss (here that very function) with groups gives each group its own
// share, and so the same fit.
func TestUserLossMatchesData(t *testing.T) {
	pr := decayProblem(t)
	dc := newDecayCase(4, []float64{0.4, 0.4, 0.9, 0.9})
	data := gradsolve.FitData{Final: dc.final, Saved: dc.saved, FinalWeights: []float64{2}, SavedWeights: []float64{1, 0.5}}
	res, err := gradsolve.Solve(context.Background(), pr, &dc.ens, &tight)
	if err != nil {
		t.Fatal(err)
	}
	want, wcot, err := gradsolve.LeastSquaresFit(data)(res)
	if err != nil {
		t.Fatal(err)
	}
	l, err := newLSQ(data, 4, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	per, cot := l.eval(res)
	var got float64
	for _, v := range per {
		got += v
	}
	// The same terms summed in another grouping: a few ulps.
	if relErr(got, want) > 1e-14 || !reflect.DeepEqual(cot, wcot) {
		t.Errorf("loss %.17g, LeastSquaresFit %.17g; cotangents equal: %v", got, want, reflect.DeepEqual(cot, wcot))
	}
	for _, mode := range []router.Mode{router.Reverse, router.Forward} {
		spec := &Spec{Problem: pr, Ensemble: dc.ens, Options: tight, Data: &data,
			Params: []Param{{Wrt: gradsolve.Param(0), Transform: Log()}}, Owner: Grouped, Group: []int{0, 0, 1, 1},
			Start: []float64{0.6}, Optimizer: &LBFGS{}, Mode: mode}
		a, err := Run(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		spec.Data, spec.Loss = nil, gradsolve.LeastSquaresFit(data)
		b, err := Run(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		for g := range a.Groups {
			ga, gb := a.Groups[g], b.Groups[g]
			if ga.Status != Converged || gb.Status != Converged || relErr(ga.Estimate[0], gb.Estimate[0]) > recoverTol ||
				relErr(gb.Estimate[0], []float64{0.4, 0.9}[g]) > recoverTol {
				t.Errorf("%v, group %d: Data %v k = %.12g, Loss %v k = %.12g", mode, g, ga.Status, ga.Estimate[0], gb.Status, gb.Estimate[0])
			}
			// The shares of the user's loss are the groups' own losses.
			if relErr(gb.History[0].Loss, ga.History[0].Loss) > 1e-14 {
				t.Errorf("%v, group %d: starting loss %.17g from the user's loss, %.17g from Data", mode, g, gb.History[0].Loss, ga.History[0].Loss)
			}
		}
	}
}

// The history is written as CSV: a header naming the fitted quantities
// and one row per iterate of each group.
func TestWriteHistory(t *testing.T) {
	pr := decayProblem(t)
	dc := newDecayCase(2, []float64{0.6})
	rep, err := Run(context.Background(), &Spec{Problem: pr, Ensemble: dc.ens, Options: tight,
		Data: &gradsolve.FitData{Final: dc.final}, Params: []Param{{Wrt: gradsolve.Param(0), Transform: Log()}, {Wrt: gradsolve.InitialValue(0)}},
		Owner: PerTrajectory, Start: []float64{1, 1}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := rep.WriteHistory(&buf); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"group", "iteration", "evaluation", "loss", "k", "y0.y"}; !reflect.DeepEqual(rows[0], want) {
		t.Errorf("header %v, want %v", rows[0], want)
	}
	if want := 1 + len(rep.Groups[0].History) + len(rep.Groups[1].History); len(rows) != want {
		t.Errorf("%d rows, want %d", len(rows), want)
	}
	if last := rows[len(rows)-1]; last[0] != "1" || last[4] != fmtG(rep.Groups[1].Estimate[0]) {
		t.Errorf("last row %v: want group 1 at its estimate %v", last, rep.Groups[1].Estimate)
	}
}

// The route: LM takes forward sensitivities; a gradient optimiser
// takes the cheaper one by the cost model, forward up to ten fitted
// quantities and reverse beyond, and Spec.Mode overrides it.
func TestModeChoice(t *testing.T) {
	pr := decayProblem(t)
	dc := newDecayCase(2, []float64{0.6})
	// y' = −(p0 + … + p11)·y: twelve parameters to fit.
	m := sym.NewModel("many")
	y := m.State("y", 1)
	var terms []sym.Expr
	for j := range 12 {
		terms = append(terms, m.Param("p"+strconv.Itoa(j), 0.1))
	}
	m.Deriv(y, sym.Sum(terms...).Mul(y).Neg())
	many := build(t, m)
	var twelve []Param
	for j := range 12 {
		twelve = append(twelve, Param{Wrt: gradsolve.Param(j)})
	}
	one := []Param{{Wrt: gradsolve.Param(0)}}
	two := []Param{{Wrt: gradsolve.Param(0)}, {Wrt: gradsolve.InitialValue(0)}}
	for _, c := range []struct {
		prob   *gradsolve.Problem
		opt    Optimizer
		params []Param
		mode   router.Mode
		want   router.Mode
		reason string
	}{
		{pr, &LevenbergMarquardt{}, two, router.Auto, router.Forward, "Jacobian"},
		{pr, &LBFGS{}, one, router.Auto, router.Forward, "forward sensitivities are cheaper"},
		{pr, &Adam{}, two, router.Auto, router.Forward, "forward sensitivities are cheaper"},
		{many, &Adam{}, twelve, router.Auto, router.Reverse, "reverse replay is cheaper"},
		{pr, &Adam{}, one, router.Reverse, router.Reverse, "named by the user"},
	} {
		ens := dc.ens
		if c.prob == many {
			ens.P = nil
		}
		s, err := newSetup(&Spec{Problem: c.prob, Ensemble: ens, Data: &gradsolve.FitData{Final: dc.final}, Params: c.params,
			Optimizer: c.opt, Mode: c.mode})
		if err != nil {
			t.Fatal(err)
		}
		if s.mode != c.want || !strings.Contains(s.modeReason, c.reason) {
			t.Errorf("%s, %d quantities, %v: %v (%s), want %v (%q)", c.opt.Name(), len(c.params), c.mode, s.mode, s.modeReason, c.want, c.reason)
		}
	}
}

func fmtG(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// A trial beyond the floating-point range (an Adam step of 1000 in
// log k, up from k = 0.1 towards the truth 0.7: exp overflows) is that
// group's failure, not the run's: the solve runs the group's last
// point instead.
func TestTrialOutOfRange(t *testing.T) {
	pr := decayProblem(t)
	dc := newDecayCase(2, []float64{0.7})
	rep, err := Run(context.Background(), &Spec{Problem: pr, Ensemble: dc.ens, Options: tight,
		Data: &gradsolve.FitData{Final: dc.final}, Params: []Param{{Wrt: gradsolve.Param(0), Transform: Log()}},
		Owner: PerTrajectory, Start: []float64{0.1, 0.1}, Optimizer: &Adam{LearningRate: 1000}, MaxIter: 3})
	if err != nil {
		t.Fatal(err)
	}
	for g, gr := range rep.Groups {
		if gr.Status != Failed || gr.Err == nil || !strings.Contains(gr.Err.Error(), "not finite") || relErr(gr.Estimate[0], 0.1) > 1e-15 || gr.Iterations != 0 {
			t.Errorf("group %d: %v (%v), k = %g: want Failed on a non-finite trial, at the start", g, gr.Status, gr.Err, gr.Estimate[0])
		}
	}
}
