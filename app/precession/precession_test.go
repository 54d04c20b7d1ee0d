package precession

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/method"
)

// The J-frame initial vectors of the §C.7 fixture, to 1e-12 (the
// fixture's 13 printed digits).
func TestInitialVectorsFixture(t *testing.T) {
	L, S1, S2 := InitialVectors(1, 2, 0.5, 100, 0.8, 0.5, 0.9)
	want := [][3]float64{
		{0.1132678822955, 0, 0.9935644854967},
		{-0.7427932197091, 0.2308012310394, 0.6284815228031},
		{-0.9283792508844, -0.2003482908328, -0.3130056371499},
	}
	for k, got := range [][3]float64{L, S1, S2} {
		for d := range 3 {
			if math.Abs(got[d]-want[k][d]) > 1e-12 {
				t.Errorf("vector %d component %d = %.13f, fixture %.13f", k, d, got[d], want[k][d])
			}
		}
	}
	_, _, eta, s1, s2 := Masses(0.8, 0.5, 0.9)
	if math.Abs(eta-0.246913580247) > 1e-12 || math.Abs(s1-0.154320987654) > 1e-12 || math.Abs(s2-0.177777777778) > 1e-12 {
		t.Errorf("η = %.12f, S1 = %.12f, S2 = %.12f", eta, s1, s2)
	}
	th1, th2, dphi := Angles(append(append(append([]float64{}, L[:]...), S1[:]...), append(S2[:], 0)...))
	if math.Abs(th1-1) > 1e-12 || math.Abs(th2-2) > 1e-12 || math.Abs(dphi-0.5) > 1e-12 {
		t.Errorf("angles back: %.15f %.15f %.15f", th1, th2, dphi)
	}
}

// dv/dt at v = 0.1 with the fixture's initial vectors: 1.5546323328e-9
// (applications.md §C.7; 11 printed digits), against the quadrupole-only
// 1.5802469136e-9. dt/dv is the model's last component.
func TestDvDtSpotCheck(t *testing.T) {
	pr, err := Problem()
	if err != nil {
		t.Fatal(err)
	}
	L, S1, S2 := InitialVectors(1, 2, 0.5, 100, 0.8, 0.5, 0.9)
	y := append(append(append(append([]float64{}, L[:]...), S1[:]...), S2[:]...), 0)
	dy := make([]float64, 10)
	pr.F(0.1, y, []float64{0.8, 0.5, 0.9}, dy)
	if got := 1 / dy[9]; math.Abs(got-1.5546323328e-9) > 1e-10*1.5546323328e-9*10 {
		t.Errorf("dv/dt = %.10e, fixture 1.5546323328e-9", got)
	}
}

// The fixture of applications.md §C.7: angles at r = 50, 20, 10 to 1e-7
// (the bound; the fixture is converged to its printed 10
// digits) and the time t to 1e-9 relative, with DP8 at rtol = atol =
// 1e-12.
func TestFixture(t *testing.T) {
	angle, time, err := FixtureErrors(context.Background(), method.DP8, 1e-12, 1e-12)
	if err != nil {
		t.Fatal(err)
	}
	if angle > 1e-7 || time > 1e-9 {
		t.Errorf("fixture: angle error %.2g rad (bound 1e-7), time error %.2g relative (bound 1e-9)", angle, time)
	}
}

// The defaults meet the requirement (99% of binaries within 2e-7 rad)
// with a margin, on 200 binaries.
func TestDefaultsMeetRequirement(t *testing.T) {
	n := 200
	if testing.Short() {
		n = 50
	}
	r, err := Run(context.Background(), Config{N: n, Seed: 2, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("p99 %.2g rad; %.0f steps per binary", r.P99, float64(r.Solve.Total().Accepted)/float64(n))
	if !r.Pass || r.P99 > Requirement/3 {
		t.Errorf("p99 %.2g rad: the defaults should meet 2e-7 with a margin", r.P99)
	}
}

// A run in chunks gives Run's binaries, solves, angles, errors and 99th
// percentile bit for bit, for any chunk and worker count.
func TestRunChunksBitwise(t *testing.T) {
	n := 9
	whole, err := Run(context.Background(), Config{N: n, Seed: 3, Check: true, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	drawn := Draw(n, 3)
	if !testutil.IdenticalBits(whole.Population.Y0, drawn.Y0) || !testutil.IdenticalBits(whole.Population.P, drawn.P) {
		t.Error("Run's binaries are not Draw's")
	}
	for _, chunk := range []int{1, 4, n} {
		for _, workers := range []int{1, 2} {
			var p, y, ref, th, e []float64
			sum, err := RunChunks(context.Background(), Config{N: n, Seed: 3, Check: true, Workers: workers, Chunk: chunk}, func(c *Chunk) error {
				p, y, ref = append(p, c.Population.P...), append(y, c.Solve.Y...), append(ref, c.Ref.Y...)
				th = append(append(append(th, c.Theta1...), c.Theta2...), c.DPhi...)
				e = append(e, c.Err...)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			var wth []float64
			for lo := 0; lo < n; lo += chunk {
				hi := min(n, lo+chunk)
				wth = append(append(append(wth, whole.Theta1[lo:hi]...), whole.Theta2[lo:hi]...), whole.DPhi[lo:hi]...)
			}
			if !testutil.IdenticalBits(p, whole.Population.P) || !testutil.IdenticalBits(y, whole.Solve.Y) || !testutil.IdenticalBits(ref, whole.Ref.Y) || !testutil.IdenticalBits(th, wth) || !testutil.IdenticalBits(e, whole.Err) ||
				!testutil.IdenticalBits([]float64{sum.P99, sum.FixtureErr}, []float64{whole.P99, whole.FixtureErr}) || sum.Pass != whole.Pass {
				t.Errorf("chunk %d, %d workers: the run differs from Run's", chunk, workers)
			}
			if want := (n + chunk - 1) / chunk; sum.Chunks != want {
				t.Errorf("chunk %d: %d chunks, want %d", chunk, sum.Chunks, want)
			}
		}
	}
}

// The pilot of an accuracy target measures each binary's angle error:
// its chosen point's quantile is what AngleError gives the pilot's
// binaries (drawn as in the run) at the chosen options against the
// pilot's reference, and the whole run at the choice meets the target.
func TestChooseAccuracy(t *testing.T) {
	if testing.Short() {
		t.Skip("a pilot of 12 binaries over the grid, and a run of 48 with its reference")
	}
	const eps = 1e-6
	cfg, rep, err := ChooseAccuracy(context.Background(), Config{N: 48, Seed: 4}, gradsolve.AccuracyTarget{Eps: eps, Pilot: 12})
	if err != nil {
		t.Fatal(err)
	}
	ch := rep.Points[rep.Chosen]
	for _, pt := range rep.Points {
		t.Logf("%-6s rtol %-8.3g quantile %-10.3g cost %d", pt.Method, pt.RTol, pt.Quantile, pt.Cost)
		if pt.Passes && pt.Cost < ch.Cost {
			t.Errorf("%s at rtol %g passes at cost %d, below the chosen %d", pt.Method, pt.RTol, pt.Cost, ch.Cost)
		}
	}
	if cfg.Method.MethodName() != ch.Method || cfg.RTol != ch.RTol || cfg.ATol != ch.ATol || len(rep.Trajectories) != 12 || rep.Trajectories[11] != 44 {
		t.Fatalf("cfg %s %g %g, chosen %+v; pilot %v", cfg.Method.MethodName(), cfg.RTol, cfg.ATol, ch, rep.Trajectories)
	}
	// The chosen point again by hand.
	all := Draw(48, 4)
	var y0, p []float64
	for _, i := range rep.Trajectories {
		y0, p = append(y0, all.Y0[10*i:10*i+10]...), append(p, all.P[3*i:3*i+3]...)
	}
	pr, _ := Problem()
	ens := &gradsolve.Ensemble{N: 12, Y0: y0, P: p, T0: []float64{V(RStart)}, T1: []float64{V(REnd)}}
	res, err1 := gradsolve.Solve(context.Background(), pr, ens, &gradsolve.Options{Method: cfg.Method, RTol: cfg.RTol, ATol: cfg.ATol})
	ref, err2 := gradsolve.Solve(context.Background(), pr, ens, &gradsolve.Options{Method: method.DP8, RTol: 1e-13, ATol: 1e-15, MaxSteps: 1_000_000})
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	errs := make([]float64, 12)
	for i := range errs {
		errs[i] = AngleError(res.Row(i), ref.Row(i))
	}
	slices.Sort(errs)
	if q := errs[int(math.Ceil(0.99*12))-1]; q != ch.Quantile {
		t.Errorf("the chosen point's quantile %g; by hand %g", ch.Quantile, q)
	}
	cfg.Check = true
	r, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the run at the choice: p99 %.3g rad (target %g)", r.P99, eps)
	if r.P99 > eps {
		t.Errorf("the run at the pilot's choice: p99 %.3g rad, above the target %g", r.P99, eps)
	}
}
