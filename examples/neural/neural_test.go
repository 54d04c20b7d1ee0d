package main

import (
	"context"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// TestWeightCount: the default network has at least 300 weights (353),
// named and laid out in blocks that cover the parameter vector.
func TestWeightCount(t *testing.T) {
	n := DefaultNet
	if got := n.NumWeights(); got < 300 || got != 3*16+16+16*16+16+16+1 {
		t.Fatalf("NumWeights = %d, want 353 (≥ 300)", got)
	}
	if got := len(n.Names()); got != n.NumWeights() {
		t.Fatalf("%d names for %d weights", got, n.NumWeights())
	}
	next := 0
	for _, b := range n.Blocks() {
		if b.Lo != next || b.Hi <= b.Lo {
			t.Fatalf("block %+v does not follow %d", b, next)
		}
		next = b.Hi
	}
	if next != n.NumWeights() {
		t.Fatalf("blocks cover %d of %d weights", next, n.NumWeights())
	}
	prob, err := n.Problem()
	if err != nil {
		t.Fatal(err)
	}
	if prob.NumParams != n.NumWeights() || prob.Dim != 3 {
		t.Fatalf("problem has Dim %d, %d parameters", prob.Dim, prob.NumParams)
	}
}

// TestModel: the compiled right-hand side is Robertson's with the
// network's rate in place of k2·y2² (checked against the float64
// network of Rate), and conserves y1 + y2 + y3.
func TestModel(t *testing.T) {
	n := DefaultNet
	prob, err := n.Problem()
	if err != nil {
		t.Fatal(err)
	}
	th := n.Init(7)
	r := rand.New(rand.NewPCG(1, 2))
	dy := make([]float64, 3)
	for range 20 {
		y := []float64{r.Float64(), 3 * Y2Scale * r.Float64(), r.Float64()}
		prob.F(0, y, th, dy)
		rate := n.Rate(th, y[0], y[1], y[2])
		want := []float64{-K1*y[0] + K3*y[1]*y[2], K1*y[0] - K3*y[1]*y[2] - rate, rate}
		for d := range 3 {
			if math.Abs(dy[d]-want[d]) > 1e-13*(math.Abs(want[d])+K1) {
				t.Fatalf("y = %v: dy[%d] = %.17g, want %.17g", y, d, dy[d], want[d])
			}
		}
		if s := dy[0] + dy[1] + dy[2]; math.Abs(s) > 1e-15 {
			t.Fatalf("y = %v: Σ dy = %g, want 0", y, s)
		}
	}
}

// TestGradientFD: the replay gradient at the starting weights agrees
// with central differences of the loss on the same recorded mesh to
// 1e-6 relative, on two weights of every block (the largest gradient
// component and a random one), both for the plain central difference
// and for its Richardson extrapolation.
func TestGradientFD(t *testing.T) {
	ctx := context.Background()
	s := DefaultSetup()
	tr, err := NewTrainer(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	fd, g, err := tr.FDCheck(ctx, s.Net.Init(1), func(g []float64) []int { return PickWeights(s.Net, g, rng) })
	if err != nil {
		t.Fatal(err)
	}
	if len(fd) < 10 {
		t.Fatalf("%d weights checked, want ≥ 10", len(fd))
	}
	for _, r := range fd {
		t.Logf("%-8s replay %+.12e  central %+.12e (rel %.1e)  Richardson %+.12e (rel %.1e)",
			r.Name, r.Adjoint, r.Central, r.RelCentral, r.Richardson, r.RelRichardson)
		if !(r.RelCentral < 1e-6) || !(r.RelRichardson < 1e-6) {
			t.Errorf("%s: replay gradient %.12e, central difference %.12e (rel %.2e), Richardson %.12e (rel %.2e): want 1e-6",
				r.Name, r.Adjoint, r.Central, r.RelCentral, r.Richardson, r.RelRichardson)
		}
	}
	for j, x := range g {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			t.Fatalf("gradient component %d = %g", j, x)
		}
	}
}

// TestShortTraining: ten Adam updates lower the loss, on the replayed
// meshes and in a fresh adaptive solve.
func TestShortTraining(t *testing.T) {
	ctx := context.Background()
	s := DefaultSetup()
	tr, err := NewTrainer(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	theta := s.Net.Init(1)
	hist, err := tr.Train(ctx, theta, 10, &Adam{LR: DefaultLR, Decay: DefaultDecay, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}, nil)
	if err != nil {
		t.Fatal(err)
	}
	l0, l1 := hist[0].Loss, hist[len(hist)-1].Loss
	t.Logf("loss %.4e -> %.4e over 10 updates (%d recordings, %d replays)", l0, l1, tr.Records, tr.Replays)
	if !(l1 < 0.5*l0) {
		t.Fatalf("loss %.4e -> %.4e: want at least halved", l0, l1)
	}
	f1, err := tr.FreshLoss(ctx, theta)
	if err != nil {
		t.Fatal(err)
	}
	if !(f1 < 0.5*l0) {
		t.Fatalf("fresh solve at the trained weights: loss %.4e, start %.4e", f1, l0)
	}
}

// TestRun runs the command for three updates and checks its files.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	dir := t.TempDir()
	if err := run(context.Background(), io.Discard, dir, 3, 1, DefaultLR, DefaultDecay, true); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"loss.png", "rate.png", "history.csv", "fd.csv"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}
