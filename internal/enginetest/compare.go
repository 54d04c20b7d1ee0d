package enginetest

import (
	"errors"
	"math"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/testutil"
)

// sameResult checks that got and want hold the same numbers bit for
// bit: final and saved states, sensitivities, times reached, last step
// sizes tried, statuses and every counter — the same steps.
func sameResult(t T, what string, got, want *gradsolve.Result) {
	t.Helper()
	testutil.CheckBits(t, what+": Y", got.Y, want.Y)
	testutil.CheckBits(t, what+": Saved", got.Saved, want.Saved)
	testutil.CheckBits(t, what+": S", got.S, want.S)
	testutil.CheckBits(t, what+": SavedS", got.SavedS, want.SavedS)
	testutil.CheckBits(t, what+": T", got.T, want.T)
	testutil.CheckBits(t, what+": last step sizes", lastSteps(got), lastSteps(want))
	if len(got.Status) != len(want.Status) {
		t.Errorf("%s: %d statuses, want %d", what, len(got.Status), len(want.Status))
		return
	}
	for i := range got.Status {
		if got.Status[i] != want.Status[i] || got.Stats[i] != want.Stats[i] {
			t.Errorf("%s: trajectory %d: %v %+v, want %v %+v", what, i, got.Status[i], got.Stats[i], want.Status[i], want.Stats[i])
		}
	}
}

// lastSteps returns the last step size each failed trajectory tried
// (its TrajectoryError's H), 0 for the others.
func lastSteps(r *gradsolve.Result) []float64 {
	h := make([]float64, r.N)
	for i := range h {
		var te *gradsolve.TrajectoryError
		if errors.As(r.Err(i), &te) {
			h[i] = te.H
		}
	}
	return h
}

// sameGradient checks two gradients bit for bit.
func sameGradient(t T, what string, got, want *gradsolve.Gradient) {
	t.Helper()
	testutil.CheckBits(t, what+": ∂L/∂p", got.P, want.P)
	testutil.CheckBits(t, what+": ∂L/∂y0", got.Y0, want.Y0)
}

// maxAbs returns the largest |v_i| (0 for none).
func maxAbs(v []float64) float64 {
	var m float64
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}

// relErr returns the largest |got_i − want_i| / scale over i, with
// scale the largest |want_i| (at least floor): the error relative to
// the size of the quantity, so that an entry near zero is not measured
// against itself.
func relErr(got, want []float64, floor float64) float64 {
	e, _ := testutil.MaxRelErr(got, want, math.Max(maxAbs(want), floor))
	return e
}
