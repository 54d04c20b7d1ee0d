package gradsolve_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/router"
)

// SolveChunks gives every trajectory the bits of one Solve of the whole
// ensemble — final and saved states, sensitivities, times, statuses,
// statistics — for chunk sizes from 1 (the scalar engine) to more than
// n, and for one and two workers: an explicit problem in lanes with
// per-trajectory spans and save times and a budget stop, with
// sensitivities, and a stiff one.
func TestSolveChunksBits(t *testing.T) {
	lorenz, rob := exampleProblem(t, "lorenz"), exampleProblem(t, "robertson")
	const n = 37
	lp, lt1, ls := make([]float64, 0, 3*n), make([]float64, n), make([]float64, 0, 2*n)
	rp := make([]float64, 0, 3*n)
	for i := range n {
		x := float64(i)
		lp = append(lp, 10+0.4*x, 10, 8.0/3)
		lt1[i] = 1 + 0.05*x
		ls = append(ls, 0.25+0.01*x, 0.9)
		rp = append(rp, 0.04*(1+0.01*x), 3e7, 1e4)
	}
	lt1[5] = 40 // stopped by the budget
	cases := []struct {
		name string
		pr   *gradsolve.Problem
		ens  *gradsolve.Ensemble
		o    gradsolve.Options
	}{
		{"lorenz", lorenz, &gradsolve.Ensemble{N: n, P: lp, T0: []float64{0}, T1: lt1, Save: ls, SavePerTrajectory: true},
			gradsolve.Options{Method: method.Tsit5, MaxSteps: 300}},
		{"lorenz-sens", lorenz, &gradsolve.Ensemble{N: n, P: lp, T0: []float64{0}, T1: lt1},
			gradsolve.Options{Method: method.DP8, Sens: &gradsolve.Sensitivity{Wrt: []gradsolve.Wrt{gradsolve.Param(0), gradsolve.InitialValue(1)}}, MaxSteps: 3000}},
		{"robertson", rob, &gradsolve.Ensemble{N: n, P: rp, Save: []float64{1, 100}}, gradsolve.Options{Method: method.Rodas5P}},
	}
	for _, c := range cases {
		want, err := gradsolve.Solve(context.Background(), c.pr, c.ens, &c.o) // (a failed trajectory is in its status)
		if err != nil {
			t.Fatal(err)
		}
		for _, workers := range []int{1, 2} {
			for _, chunk := range []int{1, 5, 8, 16, n, 100, 0} {
				o := c.o
				o.Workers = workers
				got := &gradsolve.Result{}
				next := 0
				err := gradsolve.SolveChunks(context.Background(), c.pr, n, chunk, c.ens.Parts(c.pr), &o, func(lo int, r *gradsolve.Result) error {
					if lo != next {
						return fmt.Errorf("chunk at %d, want %d", lo, next)
					}
					next = lo + r.N
					got.Y, got.T, got.Saved = append(got.Y, r.Y...), append(got.T, r.T...), append(got.Saved, r.Saved...)
					got.S, got.SavedS = append(got.S, r.S...), append(got.SavedS, r.SavedS...)
					got.Status, got.Stats = append(got.Status, r.Status...), append(got.Stats, r.Stats...)
					return nil
				})
				name := fmt.Sprintf("%s workers=%d chunk=%d", c.name, workers, chunk)
				if err != nil || next != n {
					t.Fatalf("%s: %v (%d trajectories)", name, err, next)
				}
				for _, a := range []struct {
					what      string
					got, want []float64
				}{{"Y", got.Y, want.Y}, {"T", got.T, want.T}, {"Saved", got.Saved, want.Saved}, {"S", got.S, want.S}, {"SavedS", got.SavedS, want.SavedS}} {
					testutil.CheckBits(t, name+": "+a.what, a.got, a.want)
				}
				if !reflect.DeepEqual(got.Status, want.Status) || !reflect.DeepEqual(got.Stats, want.Stats) {
					t.Errorf("%s: statuses or statistics differ", name)
				}
			}
		}
		if c.name == "lorenz" && want.Status[5] != gradsolve.MaxStepsReached {
			t.Errorf("lorenz: trajectory 5 %v: want a budget stop", want.Status[5])
		}
	}
}

// Bad arguments and parts are refused, naming what is wrong; an error
// of yield stops the solve and is returned.
func TestSolveChunksErrors(t *testing.T) {
	pr := exampleProblem(t, "lorenz")
	ens := &gradsolve.Ensemble{N: 10}
	ctx := context.Background()
	ok := func(int, *gradsolve.Result) error { return nil }
	for _, c := range []struct {
		name  string
		n, ch int
		part  gradsolve.EnsemblePart
		yield func(int, *gradsolve.Result) error
		want  string
	}{
		{"n", 0, 1, ens.Parts(pr), ok, "n = 0"},
		{"chunk", 10, -1, ens.Parts(pr), ok, "chunk = -1"},
		{"nil part", 10, 1, nil, ok, "nil part"},
		{"part too long", 12, 4, ens.Parts(pr), ok, "part [8, 12) of 10"},
		{"wrong N", 10, 4, func(lo, hi int) (*gradsolve.Ensemble, error) { return &gradsolve.Ensemble{N: 1}, nil }, ok, "N = 1, want 4"},
		{"bad input", 10, 4, func(lo, hi int) (*gradsolve.Ensemble, error) {
			return &gradsolve.Ensemble{N: hi - lo, P: []float64{1, 2}}, nil
		}, ok, "trajectories [0, 4)"},
	} {
		err := gradsolve.SolveChunks(ctx, pr, c.n, c.ch, c.part, nil, c.yield)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
	stop := errors.New("enough")
	calls := 0
	err := gradsolve.SolveChunks(ctx, pr, 10, 3, ens.Parts(pr), nil, func(int, *gradsolve.Result) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("yield's error: %v after %d calls", err, calls)
	}
	if c := gradsolve.ChunkSize(pr, 1e6, 0, nil); c < 1 || c > 1e6 {
		t.Errorf("ChunkSize = %d", c)
	}
}

// GradientChunks gives every trajectory the gradient row, result and
// status of one LossGradient of the whole ensemble, bit for bit, and
// the loss too: in both modes (reverse replay, forward sensitivities),
// with a least-squares loss on final and saved states whose targets come
// chunk by chunk, and with SumSquaresChunks, for chunk sizes from 1 to
// more than n and one and two workers.
func TestGradientChunksBits(t *testing.T) {
	lorenz := exampleProblem(t, "lorenz")
	const n, dim, k = 23, 3, 2
	p, t1 := make([]float64, 0, 3*n), make([]float64, n)
	final, saved := make([]float64, n*dim), make([]float64, n*k*dim)
	for i := range n {
		x := float64(i)
		p = append(p, 10+0.4*x, 10, 8.0/3)
		t1[i] = 0.6 + 0.01*x
		for d := range dim {
			final[i*dim+d] = math.Sin(x + float64(d))
			for q := range k {
				saved[(i*k+q)*dim+d] = math.Cos(x * float64(d+q))
			}
		}
	}
	ens := &gradsolve.Ensemble{N: n, P: p, T0: []float64{0}, T1: t1, Save: []float64{0.2, 0.4}}
	weights := []float64{1, 0.5, 2}
	fit := gradsolve.FitData{Final: final, FinalWeights: weights, Saved: saved}
	chunkFit := func(lo, hi int) (gradsolve.FitData, error) {
		return gradsolve.FitData{Final: final[lo*dim : hi*dim], FinalWeights: weights, Saved: saved[lo*k*dim : hi*k*dim]}, nil
	}
	cases := []struct {
		name  string
		whole gradsolve.Loss
		chunk gradsolve.ChunkLoss
		mode  router.Mode
	}{
		{"lsq reverse", gradsolve.LeastSquaresFit(fit), gradsolve.LeastSquaresChunks(chunkFit), router.Reverse},
		{"lsq forward", gradsolve.LeastSquaresFit(fit), gradsolve.LeastSquaresChunks(chunkFit), router.Forward},
		{"sumsq auto", gradsolve.SumSquares(), gradsolve.SumSquaresChunks(), router.Auto},
	}
	for _, c := range cases {
		o := gradsolve.Options{Method: method.Tsit5, Mode: c.mode}
		wantL, want, _, err := gradsolve.LossGradient(context.Background(), lorenz, ens, &o, c.whole)
		if err != nil {
			t.Fatal(err)
		}
		for _, workers := range []int{1, 2} {
			for _, chunk := range []int{1, 4, 8, n, 50, 0} {
				o := o
				o.Workers = workers
				var gp, gy []float64
				next := 0
				l, err := gradsolve.GradientChunks(context.Background(), lorenz, n, chunk, ens.Parts(lorenz), &o, c.chunk, func(lo int, r *gradsolve.Result, g *gradsolve.Gradient) error {
					if lo != next || r.N != len(g.P)/3 {
						return fmt.Errorf("chunk at %d, want %d", lo, next)
					}
					if g.Decision.Mode != want.Decision.Mode {
						return fmt.Errorf("chunk at %d differentiated by %v, the whole by %v", lo, g.Decision.Mode, want.Decision.Mode)
					}
					next = lo + r.N
					gp, gy = append(gp, g.P...), append(gy, g.Y0...)
					return nil
				})
				name := fmt.Sprintf("%s workers=%d chunk=%d", c.name, workers, chunk)
				if err != nil || next != n {
					t.Fatalf("%s: %v (%d trajectories)", name, err, next)
				}
				testutil.CheckBits(t, name+": P", gp, want.P)
				testutil.CheckBits(t, name+": Y0", gy, want.Y0)
				testutil.CheckBits(t, name+": loss", []float64{l}, []float64{wantL})
			}
		}
	}
	if _, err := gradsolve.GradientChunks(context.Background(), lorenz, n, 0, ens.Parts(lorenz), nil, nil, nil); err == nil || !strings.Contains(err.Error(), "nil part, loss or yield") {
		t.Errorf("nil loss: %v", err)
	}
}
