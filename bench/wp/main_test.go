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
	got, err := medianError(y, ref)
	if err != nil {
		t.Fatal(err)
	}
	// Relative errors 1e-6, 2e-6, 2.5e-6: the median is 2e-6.
	if math.Abs(got-2e-6) > 1e-15 {
		t.Errorf("median error %g, want 2e-6", got)
	}
	if _, err := medianError(y[:6], ref); err == nil {
		t.Error("mismatched lengths: no error")
	}
	y[4] = math.NaN()
	if _, err := medianError(y, ref); err == nil {
		t.Error("NaN state: no error")
	}
}

func TestRhoMatchesPeers(t *testing.T) {
	// The peer drivers use ρ = 10 + 14·i/(n−1), and 10 for n = 1.
	if rho(0, 5) != 10 || rho(4, 5) != 24 || rho(2, 5) != 17 || rho(0, 1) != 10 {
		t.Errorf("rho grid: %g %g %g %g", rho(0, 5), rho(4, 5), rho(2, 5), rho(0, 1))
	}
}
