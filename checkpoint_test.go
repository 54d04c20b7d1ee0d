package gradsolve_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/router"
)

// A checkpointed recording (Options.Checkpoint = c) keeps the state
// and time at every c-th step and the reverse sweep recomputes the
// others from the checkpoint before them, with the recorded step sizes
// (the times as the solve's sums). The recomputed states and times are
// the recorded ones bit for bit (the forward replay's step is
// the recording's arithmetic), and the reversed steps and every sum are
// those of the walk over a full mesh, in its order — so every bit of the
// results, the statuses, ∂L/∂p and ∂L/∂y0 equals the full recording's:
// for c = 1, 2, 3, 7 and c beyond the number of steps (one segment), one
// and two workers, explicit and Rosenbrock methods (re-stepped and dense
// save times), save-time cotangents at t0, inside segments and at t1, a
// trajectory that fails, the lane engines (which reverse a checkpointed
// recording on their scalar replayers) and after a Replay at a new point.
func TestCheckpointSameBits(t *testing.T) {
	lorenz, halo, kepler := exampleProblem(t, "lorenz"), exampleProblem(t, "halo"), exampleProblem(t, "kepler")
	rob, hires, pend := exampleProblem(t, "robertson"), exampleProblem(t, "hires"), exampleProblem(t, "pendulum")
	span := func(t0, t1 float64, k int) []float64 { // k save times from t0 to t1
		s := make([]float64, k)
		for i := range s {
			s[i] = t0 + (t1-t0)*float64(i)/float64(k-1)
		}
		return s
	}
	// Lorenz: 10 trajectories (the lanes' ensemble), the last sent to
	// t = 100 so that it runs out of budget (MaxStepsReached).
	lt1 := []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 100}
	haloP := []float64{1, 0.7, 0.2, 1, 0.8, 0.2, 1.1, 0.9, 0.25}
	cases := []struct {
		name   string
		prob   *gradsolve.Problem
		ens    *gradsolve.Ensemble
		opts   gradsolve.Options
		failed int // trajectories expected to fail
		move   []float64
	}{
		{"lorenz Tsit5, a failure", lorenz, &gradsolve.Ensemble{N: 10, P: lorenzFileParams(10), T0: []float64{0}, T1: lt1, Save: span(0, 1, 23)},
			gradsolve.Options{Method: method.Tsit5, RTol: 1e-8, ATol: 1e-10, MaxSteps: 3000}, 1, []float64{9.5, 10.2, 2.7}},
		{"lorenz Tsit5 on cpu-erk", lorenz, &gradsolve.Ensemble{N: 10, P: lorenzFileParams(10), Save: []float64{0.3, 0.5, 1}},
			gradsolve.Options{Method: method.Tsit5, Engine: "cpu-erk", RTol: 1e-8, ATol: 1e-10}, 0, []float64{9.5, 10.2, 2.7}},
		{"halo Vern7", halo, &gradsolve.Ensemble{N: 3, P: haloP, Save: []float64{0, 2, 3.5, 7}},
			gradsolve.Options{Method: method.Vern7, RTol: 1e-8, ATol: 1e-8}, 0, []float64{1.01, 0.72, 0.2}},
		{"kepler DP8", kepler, &gradsolve.Ensemble{N: 2, Save: span(kepler.T0, kepler.T1, 9)},
			gradsolve.Options{Method: method.DP8, RTol: 1e-9, ATol: 1e-12}, 0, nil},
		{"robertson Rodas5P", rob, &gradsolve.Ensemble{N: 2, T0: []float64{0}, T1: []float64{100}, Save: []float64{0, 1, 30, 100}},
			gradsolve.Options{Method: method.Rodas5P, RTol: 1e-7, ATol: 1e-11}, 0, []float64{0.041, 3e7, 1e4}},
		{"robertson Rodas5P dense saves", rob, &gradsolve.Ensemble{N: 2, T0: []float64{0}, T1: []float64{100}, Save: span(0, 100, 11)},
			gradsolve.Options{Method: method.Rodas5P, RTol: 1e-7, ATol: 1e-11, DenseSave: true}, 0, nil},
		{"robertson Rodas5P, 8 trajectories", rob, &gradsolve.Ensemble{N: 8, P: robParams(8), T0: []float64{0}, T1: []float64{30}, Save: []float64{0.5, 30}},
			gradsolve.Options{Method: method.Rodas5P, RTol: 1e-7, ATol: 1e-11}, 0, nil},
		{"driven pendulum (non-autonomous) DP5", pend, &gradsolve.Ensemble{N: 9, Save: span(pend.T0, pend.T1, 6)},
			gradsolve.Options{Method: method.DP5, RTol: 1e-8, ATol: 1e-10}, 0, nil},
		{"driven pendulum (non-autonomous) Rodas5P", pend, &gradsolve.Ensemble{N: 2, Save: span(pend.T0, pend.T1, 6)},
			gradsolve.Options{Method: method.Rodas5P, RTol: 1e-7, ATol: 1e-9}, 0, nil},
		{"hires Rosenbrock23 on cpu-ros", hires, &gradsolve.Ensemble{N: 1, T0: []float64{0}, T1: []float64{321.8122}, Save: []float64{100, 321.8122}},
			gradsolve.Options{Method: method.Rosenbrock23, Engine: "cpu-ros", RTol: 1e-6, ATol: 1e-10}, 0, nil},
	}
	ctx := context.Background()
	for _, c := range cases {
		n, dim, K := c.ens.N, c.prob.Dim, len(c.ens.Save)
		rng := rand.New(rand.NewPCG(5, 6))
		cot := gradsolve.Cotangents{Y: randVec(rng, n*dim), Saved: randVec(rng, n*K*dim)}
		var pt *gradsolve.Point
		if c.move != nil {
			pt = &gradsolve.Point{P: c.move}
		}
		for _, workers := range []int{1, 2} {
			name := func(k int) string { return fmt.Sprintf("%s, workers %d, Checkpoint %d", c.name, workers, k) }
			record := func(k int) (*gradsolve.Recording, *gradsolve.Gradient, *gradsolve.Result, *gradsolve.Gradient) {
				o := c.opts
				o.Workers, o.Checkpoint = workers, k
				rec, err := gradsolve.Record(ctx, c.prob, c.ens, &o)
				if err != nil {
					t.Fatalf("%s: %v", name(k), err)
				}
				if f := len(rec.Result.Failed()); f != c.failed {
					t.Fatalf("%s: %d trajectories failed, want %d: %v", name(k), f, c.failed, rec.Result.Errs())
				}
				g, err := rec.Gradient(ctx, cot)
				if err != nil {
					t.Fatalf("%s: %v", name(k), err)
				}
				rep, err := rec.Replay(ctx, pt)
				if err != nil {
					t.Fatalf("%s: %v", name(k), err)
				}
				g2, err := rec.Gradient(ctx, cot)
				if err != nil {
					t.Fatalf("%s: %v", name(k), err)
				}
				return rec, g, rep, g2
			}
			full, fg, frep, fg2 := record(0)
			steps := 0
			for i, st := range full.Result.Stats {
				if full.Result.Status[i] == gradsolve.Success {
					steps = max(steps, st.Accepted)
				}
			}
			for _, k := range []int{1, 2, 3, 7, 1 << 20} {
				rec, g, rep, g2 := record(k)
				what := name(k)
				for _, a := range []struct {
					part      string
					got, want []float64
				}{
					{"Result.Y", rec.Result.Y, full.Result.Y}, {"Result.Saved", rec.Result.Saved, full.Result.Saved},
					{"Gradient.P", g.P, fg.P}, {"Gradient.Y0", g.Y0, fg.Y0},
					{"Replay Y", rep.Y, frep.Y}, {"Replay Saved", rep.Saved, frep.Saved},
					{"Gradient.P after the replay", g2.P, fg2.P}, {"Gradient.Y0 after the replay", g2.Y0, fg2.Y0},
				} {
					testutil.CheckBits(t, what+": "+a.part, a.got, a.want)
				}
				for i := range n {
					if rec.Result.Status[i] != full.Result.Status[i] || rec.Result.Stats[i] != full.Result.Stats[i] {
						t.Errorf("%s: trajectory %d: status %v %+v, want %v %+v", what, i, rec.Result.Status[i], rec.Result.Stats[i], full.Result.Status[i], full.Result.Stats[i])
					}
				}
				// The meshes hold H for every step, and the times and
				// states at every k-th (t0 included; every one for k ≤ 1).
				var want uint64
				for _, st := range rec.Result.Stats {
					s := st.Accepted
					want += 8 * uint64(s+(1+dim)*(s/max(k, 1)+1))
				}
				if got := rec.MeshBytes(); got != want {
					t.Errorf("%s: MeshBytes %d, want %d", what, got, want)
				}
				if k >= 2 && k <= steps && rec.MeshBytes() >= full.MeshBytes() {
					t.Errorf("%s: MeshBytes %d, not below the full recording's %d", what, rec.MeshBytes(), full.MeshBytes())
				}
				if lanes := strings.HasSuffix(rec.Result.Engine, "-lanes"); k >= 2 && lanes != strings.Contains(rec.Result.EngineReason, "Options.Checkpoint") {
					t.Errorf("%s: engine %s, reason %q: a lane engine's reason names the checkpointed replay's scalar walk, another's does not", what, rec.Result.Engine, rec.Result.EngineReason)
				}
			}
			t.Logf("%s, workers %d: engine %s, up to %d steps", c.name, workers, full.Result.Engine, steps)
		}
	}
}

// robParams returns n rows of Robertson's rates, k1 varied.
func robParams(n int) []float64 {
	p := make([]float64, 0, 3*n)
	for i := range n {
		p = append(p, 0.04*(1+0.05*float64(i)), 3e7, 1e4)
	}
	return p
}

// A checkpointed LossGradient gives the loss and the gradient of the
// full recording, bit for bit.
func TestCheckpointLossGradient(t *testing.T) {
	pr := exampleProblem(t, "halo")
	ens := &gradsolve.Ensemble{N: 3, P: []float64{1, 0.7, 0.2, 1, 0.8, 0.2, 1.1, 0.9, 0.25}, Save: []float64{2, 7}}
	loss := gradsolve.LeastSquaresFit(gradsolve.FitData{Final: make([]float64, 6), Saved: make([]float64, 12)})
	var ls [2]float64
	var gs [2]*gradsolve.Gradient
	for i, k := range []int{0, 5} {
		o := &gradsolve.Options{Method: method.Tsit5, Mode: router.Reverse, Checkpoint: k}
		l, g, rec, err := gradsolve.LossGradient(context.Background(), pr, ens, o, loss)
		if err != nil {
			t.Fatal(err)
		}
		if rec == nil {
			t.Fatal("no recording: the reverse route did not run")
		}
		ls[i], gs[i] = l, g
	}
	if !testutil.SameBits(ls[0], ls[1]) {
		t.Errorf("loss %v with Checkpoint 5, %v without", ls[1], ls[0])
	}
	testutil.CheckBits(t, "Gradient.P", gs[1].P, gs[0].P)
	testutil.CheckBits(t, "Gradient.Y0", gs[1].Y0, gs[0].Y0)
}

// Options.Checkpoint below 0, or with KeepStages, is refused with an
// error naming the field.
func TestCheckpointBadInput(t *testing.T) {
	pr := exampleProblem(t, "lorenz")
	ens := &gradsolve.Ensemble{N: 2}
	ctx := context.Background()
	if _, err := gradsolve.Record(ctx, pr, ens, &gradsolve.Options{Checkpoint: -1}); err == nil || !strings.Contains(err.Error(), "Options.Checkpoint = -1") {
		t.Errorf("Record with Checkpoint −1: %v", err)
	}
	if _, err := gradsolve.Solve(ctx, pr, ens, &gradsolve.Options{Checkpoint: -3}); err == nil || !strings.Contains(err.Error(), "Options.Checkpoint = -3") {
		t.Errorf("Solve with Checkpoint −3: %v", err)
	}
	if _, err := gradsolve.Record(ctx, pr, ens, &gradsolve.Options{Checkpoint: 4, KeepStages: true}); err == nil ||
		!strings.Contains(err.Error(), "Options.Checkpoint = 4 with Options.KeepStages") {
		t.Errorf("Record with Checkpoint and KeepStages: %v", err)
	}
	// Checkpoint 1 is every state, and KeepStages goes with it.
	if _, err := gradsolve.Record(ctx, pr, ens, &gradsolve.Options{Checkpoint: 1, KeepStages: true}); err != nil {
		t.Errorf("Record with Checkpoint 1 and KeepStages: %v", err)
	}
}

// Footprint counts a checkpointed recording's step sizes, a c-th of a
// state and its time per step (rounded up to whole bytes), and each
// worker's segment; with Checkpoint 0 or 1 it is what it was.
func TestCheckpointFootprint(t *testing.T) {
	base := gradsolve.Sizes{N: 1000, Dim: 6, NumParams: 3, Record: true, Workers: 2}
	f0, err := base.Footprint()
	if err != nil {
		t.Fatal(err)
	}
	if f0.PerStep != 8*(6+2) {
		t.Errorf("PerStep %d without checkpoints, want %d", f0.PerStep, 8*(6+2))
	}
	one := base
	one.Checkpoint = 1
	if f1, _ := one.Footprint(); f1.PerStep != f0.PerStep || f1.Bytes != f0.Bytes {
		t.Errorf("Checkpoint 1: %d, %d bytes; want those of 0: %d, %d", f1.PerStep, f1.Bytes, f0.PerStep, f0.Bytes)
	}
	for _, c := range []struct {
		k, stages, maxSteps int
		perStep, segment    uint64
	}{
		{4, 6, 0, 8 + 14, 2 * 5 * (1 + 6*7) * 8},           // 56 bytes of state and time, a 4th of them; Tsit5's 6 stage inputs after y
		{5, 6, 0, 8 + 12, 2 * 6 * (1 + 6*7) * 8},           // 56/5 rounded up
		{64, 0, 0, 8 + 1, 2 * 65 * (1 + 6) * 8},            // a Rosenbrock method keeps no stages
		{1 << 30, 6, 500, 8 + 1, 2 * 501 * (1 + 6*7) * 8},  // no segment is longer than the budget
		{1 << 30, 6, 0, 8 + 1, 2 * 100001 * (1 + 6*7) * 8}, // DefaultMaxSteps
	} {
		s := base
		s.Checkpoint, s.SegmentStages, s.MaxSteps = c.k, c.stages, c.maxSteps
		f, err := s.Footprint()
		if err != nil {
			t.Fatal(err)
		}
		var seg uint64
		for _, a := range f.Arrays {
			if a.Name == "checkpoint segments" {
				seg += a.Bytes
			}
		}
		if f.PerStep != c.perStep || seg != c.segment || f.Bytes != f0.Bytes+c.segment {
			t.Errorf("Checkpoint %d: PerStep %d, segments %d, Bytes %d; want %d, %d, %d", c.k, f.PerStep, seg, f.Bytes, c.perStep, c.segment, f0.Bytes+c.segment)
		}
	}
}
