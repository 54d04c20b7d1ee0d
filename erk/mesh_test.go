package erk

import (
	"math/bits"
	"slices"
	"testing"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/systems"
)

// meshSolve solves Lorenz over [0, 20] with tb, recording into ms.
func meshSolve(t *testing.T, tb *method.Tableau, ms *ivp.Mesh) *ivp.Output {
	t.Helper()
	pr := systems.Lorenz()
	sv, err := New(Config{Tableau: tb, F: pr.F, Dim: pr.Dim, RTol: fill(1e-10, pr.Dim), ATol: fill(1e-10, pr.Dim),
		MaxSteps: 1_000_000, Controller: control.DefaultPI(tb.Order, tb.QMin, tb.QMax)})
	if err != nil {
		t.Fatal(err)
	}
	tr := &ivp.Trajectory{T0: 0, T1: 20, Y0: pr.Y0, P: pr.P}
	out := &ivp.Output{Y: make([]float64, pr.Dim), Mesh: ms}
	sv.Solve(tr, out, nil)
	return out
}

// The Grow hook is told of every allocation of mesh storage before it
// is made, rarely (capacities double), and not at all once a reused
// mesh has room; it changes nothing in the solve.
func TestMeshGrowHook(t *testing.T) {
	for _, tb := range []*method.Tableau{method.Tsit5, method.DP8} {
		for _, keep := range []bool{false, true} {
			plain := &ivp.Mesh{KeepStages: keep}
			want := meshSolve(t, tb, plain)
			var calls int
			var counted uint64
			ms := &ivp.Mesh{KeepStages: keep, Grow: func(b uint64) bool { calls++; counted += b; return true }}
			got := meshSolve(t, tb, ms)
			if got.Status != ode.Success || !slices.Equal(got.Y, want.Y) || got.Stats != want.Stats ||
				!slices.Equal(ms.T, plain.T) || !slices.Equal(ms.H, plain.H) || !slices.Equal(ms.Y, plain.Y) || !slices.Equal(ms.K, plain.K) {
				t.Errorf("%s keep=%v: the hook changed the solve or the mesh", tb.Name, keep)
				continue
			}
			// Every byte the mesh holds was counted (its first row came
			// from Reset, before any step).
			held := 8 * uint64(cap(ms.T)+cap(ms.H)+cap(ms.Y)+cap(ms.K))
			if counted < held-8*uint64(1+len(got.Y)) {
				t.Errorf("%s keep=%v: counted %d bytes, the mesh holds %d", tb.Name, keep, counted, held)
			}
			// Doubling from 64 values: at most log₂(len/64)+1 growths of
			// each of the four slices.
			steps := ms.Steps()
			limit := 4 * (bits.Len(uint(len(ms.Y)+len(ms.K))/64) + 1) // ivp.Mesh grows from 64 values
			if calls > limit || steps < 500 {
				t.Errorf("%s keep=%v: %d calls of Grow over %d steps, want ≤ %d", tb.Name, keep, calls, steps, limit)
			}
			calls = 0
			meshSolve(t, tb, ms)
			if calls != 0 {
				t.Errorf("%s keep=%v: a reused mesh grew %d times", tb.Name, keep, calls)
			}
		}
	}
}

// When Grow refuses, the step is not recorded and the solve ends
// Cancelled, the mesh holding the steps before it, bit for bit.
func TestMeshGrowRefused(t *testing.T) {
	for _, keep := range []bool{false, true} {
		plain := &ivp.Mesh{KeepStages: keep}
		meshSolve(t, method.Tsit5, plain)
		var counted uint64
		const budget = 16 << 10
		ms := &ivp.Mesh{KeepStages: keep, Grow: func(b uint64) bool {
			if counted+b > budget {
				return false
			}
			counted += b
			return true
		}}
		out := meshSolve(t, method.Tsit5, ms)
		n, dim := ms.Steps(), len(out.Y)
		if out.Status != ode.Cancelled || n == 0 || n >= plain.Steps() || out.Stats.Accepted != n+1 {
			t.Fatalf("keep=%v: status %v after %d recorded steps (%d accepted; %d in the full mesh)", keep, out.Status, n, out.Stats.Accepted, plain.Steps())
		}
		// The stages of the refused step are there when only Push
		// refused.
		perStep := len(plain.K) / plain.Steps()
		kn := len(ms.K) / max(perStep, 1)
		if len(ms.T) != n+1 || len(ms.Y) != (n+1)*dim || keep && (len(ms.K)%perStep != 0 || kn != n && kn != n+1) {
			t.Errorf("keep=%v: mesh lengths T %d, Y %d, K %d for %d steps", keep, len(ms.T), len(ms.Y), len(ms.K), n)
		}
		if !slices.Equal(ms.H, plain.H[:n]) || !slices.Equal(ms.T, plain.T[:n+1]) || !slices.Equal(ms.Y, plain.Y[:(n+1)*dim]) ||
			!slices.Equal(ms.K, plain.K[:len(ms.K)]) {
			t.Errorf("keep=%v: the recorded steps differ from the full recording's", keep)
		}
		if counted > budget {
			t.Errorf("keep=%v: %d bytes allowed past a budget of %d", keep, counted, budget)
		}
	}
}
