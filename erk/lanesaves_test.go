package erk

import (
	"fmt"
	"math"
	"testing"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
)

// The lane solver puts off the saves inside accepted steps for the
// driver (ivp.SaveQueuer).
var _ ivp.SaveQueuer = (*LaneSolver)(nil)

// Saves put off (QueueSave, then FlushSaves) have Save's bits and
// evaluation count, lane by lane, for every explicit method and for
// lanes in groups of four and not: a full queue (which flushes itself),
// a partial one (flushed by FlushSaves), and a lane whose state is not
// finite, whose attempt the lanes cannot use, so that restep itself
// computes its save.
func TestQueuedSavesMatchSave(t *testing.T) {
	c := laneCases(t)[0] // Lorenz, f as lane code of one piece
	pr := c.pr
	pg := pr.Programs()
	for _, tb := range method.All() {
		cfg := Config{Tableau: tb, F: pr.WorkerF(), Dim: pr.Dim, RTol: fill(1e-7, pr.Dim), ATol: fill(1e-9, pr.Dim),
			MaxSteps: 400, Controller: control.DefaultPI(tb.Order, tb.QMin, tb.QMax)}
		for _, L := range []int{3, 4, 8} {
			ls, err := NewLanes(cfg, L, pr.NumParams, pg.FLanes, pg.Kernel)
			if err != nil {
				t.Fatal(err)
			}
			ref, err := NewLanes(cfg, L, pr.NumParams, pg.FLanes, pg.Kernel)
			if err != nil {
				t.Fatal(err)
			}
			for round, n := range []int{L, L - 1, L} {
				want, got := make([][]float64, n), make([][]float64, n)
				var stW, stG ode.Stats
				for l := range n {
					x := float64(l + round)
					y := []float64{1 + 0.1*x, -0.5 + 0.05*x, 0.3 * x}
					if round == 2 && l == 1 {
						y[0] = math.Inf(1)
					}
					p := []float64{10 + x, 10, 8.0 / 3}
					t0, h := 0.1*x, 0.02+0.001*x
					f0 := make([]float64, pr.Dim)
					cfg.F(t0, y, p, f0)
					ls.Load(l, y, f0, p)
					ref.Load(l, y, f0, p)
					ts := t0 + h*(0.25+0.1*x)
					want[l], got[l] = make([]float64, pr.Dim), make([]float64, pr.Dim)
					ref.Save(l, want[l], t0, h, ts, p, &stW)
					ls.QueueSave(l, got[l], t0, h, ts, p, &stG)
				}
				ls.FlushSaves()
				what := fmt.Sprintf("%s L=%d round %d", tb.Name, L, round)
				if stG != stW {
					t.Errorf("%s: stats %+v, want Save's %+v", what, stG, stW)
				}
				for l := range n {
					for d := range want[l] {
						if math.Float64bits(got[l][d]) != math.Float64bits(want[l][d]) {
							t.Errorf("%s lane %d: save %v, want Save's %v", what, l, got[l], want[l])
							break
						}
					}
				}
				if round == 2 && !math.IsInf(want[1][0], 0) && !math.IsNaN(want[1][0]) {
					t.Errorf("%s: the save from a state with +Inf is %v: want it not finite", what, want[1])
				}
			}
		}
	}
}
