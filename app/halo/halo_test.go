package halo

import (
	"context"
	"math"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/systems"
)

var defaultP = []float64{1, 0.7, 0.2}

// Draw is reproducible from its seed, follows the recipe's ranges, and
// its scales agree with the systems package.
func TestDraw(t *testing.T) {
	a, b, c := Draw(500, 7, defaultP), Draw(500, 7, defaultP), Draw(500, 8, defaultP)
	for i := range a.Y0 {
		if a.Y0[i] != b.Y0[i] {
			t.Fatal("the same seed gave different stars")
		}
	}
	if a.Y0[0] == c.Y0[0] {
		t.Error("different seeds gave the same first star")
	}
	for i := range 500 {
		y := a.Y0[6*i : 6*i+6]
		r := math.Hypot(y[0], y[1])
		if r < 0.5 || r > 1.5 {
			t.Errorf("star %d: R0 = %g outside [0.5, 1.5]", i, r)
		}
		vcirc := r / math.Sqrt(0.04+r*r)
		// In-plane speed ≤ v_c(R0) (v_t² + v_R² = v_c² exactly).
		if vp := math.Hypot(y[3], y[4]); math.Abs(vp-vcirc) > 1e-12 {
			t.Errorf("star %d: in-plane speed %g, want v_c(R0) = %g", i, vp, vcirc)
		}
		if e := systems.HaloEnergy(y, defaultP); e != a.E[i] || math.IsNaN(a.Period[i]) || !(a.RE[i] > 0) || !(a.VE[i] > 0) {
			t.Errorf("star %d: energy %g vs %g, period %g, rE %g, vE %g", i, e, a.E[i], a.Period[i], a.RE[i], a.VE[i])
		}
	}
}

// CircularRadius inverts the circular-orbit energy, and a circular orbit
// of that radius returns to its start after Period (to the solve's
// accuracy: rtol 1e-11 over one period).
func TestCircularOrbitPeriod(t *testing.T) {
	for _, r := range []float64{0.3, 1, 2.5} {
		vc := r / math.Sqrt(0.04+r*r)
		y0 := []float64{r, 0, 0, 0, vc, 0}
		e := systems.HaloEnergy(y0, defaultP)
		if rc := CircularRadius(e, defaultP); math.Abs(rc-r) > 1e-13*r {
			t.Errorf("CircularRadius(E(%g)) = %.17g", r, rc)
		}
		T := Period(e, defaultP)
		res, err := gradsolve.Solve(context.Background(), systems.Halo(), &gradsolve.Ensemble{N: 1, Y0: y0, P: defaultP,
			T0: []float64{0}, T1: []float64{T}}, &gradsolve.Options{Method: method.DP8, RTol: 1e-11, ATol: 1e-11})
		if err != nil {
			t.Fatal(err)
		}
		for d, v := range res.Row(0) {
			if math.Abs(v-y0[d]) > 1e-8 {
				t.Errorf("r = %g: after one period y[%d] = %.12g, started at %g", r, d, v, y0[d])
			}
		}
	}
	if !math.IsNaN(CircularRadius(-100, defaultP)) {
		t.Error("an energy below the centre's gave a radius")
	}
}

// The defaults meet the requirement on 2000 stars, and the end time is
// 3.7 median periods: ≈ 24.1 for this recipe as applications.md §A.5
// found with its own 2000 draws (numpy, seed 0); ours come from another
// generator, and the median of 2000 draws moves by a few percent from
// sample to sample (23.6 with seed 1), so within 5%.
func TestDefaultsMeetRequirement(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 300
	}
	r, err := Run(context.Background(), Config{N: n, Seed: 1, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("t1 %.3f; state p99 %.2g, sensitivity p99 %.2g", r.T1, r.StateP99, r.SensP99)
	if !r.Pass || r.StateP99 > StateRequirement/10 || r.SensP99 > SensRequirement/10 {
		t.Errorf("state p99 %.2g, sensitivity p99 %.2g: the defaults should meet the requirement tenfold", r.StateP99, r.SensP99)
	}
	if math.Abs(r.T1-24.1) > 0.05*24.1 {
		t.Errorf("t1 = %g, want ≈ 24.1", r.T1)
	}
	tracks, err := Tracks(context.Background(), r, 3, 50)
	if err != nil || len(tracks) != 3 || len(tracks[0]) != 150 {
		t.Fatalf("tracks: %v, %d", err, len(tracks))
	}
	if _, err := Run(context.Background(), Config{N: -1}); err == nil {
		t.Error("N = -1: no error")
	}
}

// Errors measures in the §A.3 units: a position offset of r_E/10 and
// no other difference gives a state error of 0.1.
func TestErrorsUnits(t *testing.T) {
	st := &Stars{RE: []float64{2}, VE: []float64{3}}
	mk := func(y, s []float64) *gradsolve.Result {
		return &gradsolve.Result{N: 1, Dim: 6, NS: 2, Y: y, S: s, Status: []gradsolve.Status{gradsolve.Success}}
	}
	s := make([]float64, 12)
	for i := range s {
		s[i] = 1
	}
	a := mk([]float64{0.2, 0, 0, 0, 0, 0}, s)
	b := mk([]float64{0, 0, 0, 0, 0, 0}, s)
	state, sens := Errors(a, b, st, defaultP)
	if math.Abs(state[0]-0.1) > 1e-15 || sens[0] != 0 {
		t.Errorf("state %g, sens %g", state[0], sens[0])
	}
}
