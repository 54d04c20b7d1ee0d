package erk

import (
	"testing"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/systems"
)

// A recording solve into a checkpointed mesh takes the steps of one
// into a full mesh and keeps their states at every c-th step; the
// replayer's reverse walk over it, which recomputes each segment and
// keeps its stage inputs (ivp.SegmentStepper), gives the full mesh's
// gradient bit for bit — with stages recomputed on the way back or read from the full
// mesh (KeepStages) alike — for every explicit method, with save times
// inside segments; and, once its scratch has grown, allocates nothing.
func TestCheckpointedReverseMatchesFull(t *testing.T) {
	pr := systems.Lorenz()
	pg := pr.Programs()
	dim := pr.Dim
	save := []float64{0, 0.7, 3.3, 3.31, 8}
	cotY, cotSaved := []float64{1, -2, 0.5}, make([]float64, len(save)*dim)
	for i := range cotSaved {
		cotSaved[i] = 0.25*float64(i%5) - 0.5
	}
	for _, tb := range method.All() {
		cfg := Config{Tableau: tb, F: pg.F, Dim: dim, RTol: fill(1e-9, dim), ATol: fill(1e-9, dim),
			MaxSteps: 100_000, Controller: control.DefaultPI(tb.Order, tb.QMin, tb.QMax)}
		sv, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		rp, err := NewReplayer(cfg, pr.NumParams, pg.VJP)
		if err != nil {
			t.Fatal(err)
		}
		tr := &ivp.Trajectory{T0: 0, T1: 8, Y0: pr.Y0, P: pr.P, Save: save}
		record := func(ms *ivp.Mesh) *ivp.Output {
			out := &ivp.Output{Y: make([]float64, dim), Saved: make([]float64, len(save)*dim), Mesh: ms}
			sv.Solve(tr, out, nil)
			if out.Status != ode.Success {
				t.Fatalf("%s: %v", tb.Name, out.Status)
			}
			return out
		}
		reverse := func(ms *ivp.Mesh) (gy0, gp []float64) {
			gy0, gp = make([]float64, dim), make([]float64, pr.NumParams)
			rp.Reverse(ms, pr.P, save, cotY, cotSaved, gy0, gp)
			return gy0, gp
		}
		full, kept := &ivp.Mesh{}, &ivp.Mesh{KeepStages: true}
		want := record(full)
		record(kept)
		wy0, wp := reverse(full)
		ky0, kp := reverse(kept)
		testutil.CheckBits(t, tb.Name+": ∂L/∂y0 with kept stages", ky0, wy0)
		testutil.CheckBits(t, tb.Name+": ∂L/∂p with kept stages", kp, wp)
		for _, c := range []int{2, 5, 64, 1 << 20} {
			ms := &ivp.Mesh{Checkpoint: c}
			got := record(ms)
			if got.Stats != want.Stats || !testutil.IdenticalBits(got.Y, want.Y) || !testutil.IdenticalBits(got.Saved, want.Saved) ||
				!testutil.IdenticalBits(ms.Times(0, full.Steps(), nil), full.T) || !testutil.IdenticalBits(ms.H, full.H) {
				t.Fatalf("%s, c = %d: the checkpointed recording changed the solve", tb.Name, c)
			}
			steps := ms.Steps()
			if len(ms.Y) != (steps/c+1)*dim {
				t.Errorf("%s, c = %d: %d states over %d steps", tb.Name, c, len(ms.Y)/dim, steps)
			}
			for k := 0; k <= steps; k += c {
				testutil.CheckBits(t, tb.Name+": checkpoint", ms.State(k, dim), full.Y[k*dim:(k+1)*dim])
			}
			gy0, gp := reverse(ms)
			testutil.CheckBits(t, tb.Name+": ∂L/∂y0, checkpointed", gy0, wy0)
			testutil.CheckBits(t, tb.Name+": ∂L/∂p, checkpointed", gp, wp)
			if a := testing.AllocsPerRun(3, func() { rp.Reverse(ms, pr.P, save, cotY, cotSaved, gy0, gp) }); a != 0 {
				t.Errorf("%s, c = %d: %v allocations per reverse walk", tb.Name, c, a)
			}
		}
	}
}
