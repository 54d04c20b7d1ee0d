package main

import (
	"math"
	"testing"
)

func TestAtError(t *testing.T) {
	// A curve with time ∝ error^(-1/5) (a fifth-order method): log–log
	// interpolation between its points is exact.
	c := []point{{Err: 1e-8, Seconds: 1e-8 * math.Pow(1e-8, -0.2)}, {Err: 1e-6, Seconds: 1e-8 * math.Pow(1e-6, -0.2)}}
	for _, tc := range []struct {
		e      float64
		ok     bool
		inside bool
	}{
		{1e-7, true, true},
		{1e-8, true, true},
		{1e-6, true, true},
		{1e-9, false, false}, // below the sweep: no extrapolation
		{1e-5, false, false},
	} {
		s, ok := atError(c, tc.e)
		if ok != tc.ok {
			t.Errorf("error %g: ok = %v, want %v", tc.e, ok, tc.ok)
			continue
		}
		// 1e-14: rounding of a log, an exp and a pow.
		if want := 1e-8 * math.Pow(tc.e, -0.2); ok && math.Abs(s-want) > 1e-14*want {
			t.Errorf("error %g: %g s, want %g s", tc.e, s, want)
		}
	}
}

func TestMedianError(t *testing.T) {
	ref := []float64{1, 0, 0, 0, 2, 0, 0, 0, 4}
	y := []float64{1 + 1e-6, 0, 0, 0, 2 + 4e-6, 0, 0, 0, 4 + 1e-5}
	got, err := medianError(y, ref, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Relative errors 1e-6, 2e-6, 2.5e-6: the median is 2e-6.
	if math.Abs(got-2e-6) > 1e-15 {
		t.Errorf("median error %g, want 2e-6", got)
	}
	if _, err := medianError(y[:6], ref, 3, 0); err == nil {
		t.Error("mismatched lengths: no error")
	}
	y[4] = math.NaN()
	if _, err := medianError(y, ref, 3, 0); err == nil {
		t.Error("NaN state: no error")
	}
}

// The peer drivers put trajectory i of n at i/(n−1) of each parameter's
// range (ρ = 10 + 14·i/(n−1) for Lorenz, k1 = 0.02 + 0.04·i/(n−1) for
// Robertson), and at its start for n = 1.
func TestParamsMatchPeers(t *testing.T) {
	lorenz, robertson := problems[0], problems[1]
	for _, tc := range []struct {
		pb   *problem
		name string
		i, n int
		want float64
	}{
		{lorenz, "rho", 0, 5, 10}, {lorenz, "rho", 4, 5, 24}, {lorenz, "rho", 2, 5, 17}, {lorenz, "rho", 0, 1, 10},
		{robertson, "k1", 0, 3, 0.02}, {robertson, "k1", 1, 3, 0.04}, {robertson, "k1", 2, 3, 0.06},
	} {
		if got := tc.pb.params(tc.i, tc.n)[tc.name]; math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("%s: %s of trajectory %d of %d = %g, want %g", tc.pb.name, tc.name, tc.i, tc.n, got, tc.want)
		}
	}
}

// With sensitivities the error is that of the values after the state.
func TestMedianErrorFrom(t *testing.T) {
	ref := []float64{1, 2, 3, 4, 10, 20, 30, 40}
	y := []float64{9, 9, 3, 4 + 5e-6, 9, 9, 30, 40}
	// Row 1: ‖(0, 5e-6)‖/‖(3, 4)‖ = 1e-6; row 2: 0. Median of two: the upper, 1e-6.
	got, err := medianError(y, ref, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	// 4 + 5e-6 is stored to an ulp of 4 (8.9e-16), 2e-10 of the 5e-6
	// difference: allow 1e-9 relative.
	if math.Abs(got-1e-6) > 1e-15 {
		t.Errorf("median error %g, want 1e-6", got)
	}
}

// Each peer tool's best at an error is its fastest configuration there,
// gradsolve is not a peer, and a configuration that does not reach the
// error takes no part.
func TestPeerBests(t *testing.T) {
	// Two points a curve, at errors 1e-8 and 1e-6, so 1e-7 interpolates
	// to the geometric mean of the times.
	curve := func(tool string, slow, fast float64) []point {
		return []point{{Tool: tool, Err: 1e-8, Seconds: slow}, {Tool: tool, Err: 1e-6, Seconds: fast}}
	}
	var pts []point
	pts = append(pts, curve("gradsolve DP8", 1, 1)...)
	pts = append(pts, curve("odeint dopri5", 8, 2)...)
	pts = append(pts, curve("odeint rkf78", 4, 1)...)
	pts = append(pts, curve("CVODES Adams", 9, 4)...)
	pts = append(pts, point{Tool: "odeint dopri5 controlled", Err: 1e-4, Seconds: 1e-3}) // never reaches 1e-7
	got := peerBests(pts, 1e-7)
	want := []peerBest{{"odeint", "odeint rkf78", 2}, {"CVODES", "CVODES Adams", 6}}
	if len(got) != len(want) {
		t.Fatalf("peerBests = %+v, want %+v", got, want)
	}
	for i := range want {
		// 1e-14: the log–log interpolation's rounding.
		if got[i].family != want[i].family || got[i].tool != want[i].tool || math.Abs(got[i].seconds-want[i].seconds) > 1e-14*want[i].seconds {
			t.Errorf("peerBests[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
}
