package erk

import (
	"testing"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/method"
)

// TestReverseCodeShared: two lane replayers of the same tableau,
// dimensions and programs share one copy of each reverse code (the
// fused step and the cotangent sums), and replayers of another problem
// or tableau get their own. The codes' bits are checked by the lane
// replay tests, which build a replayer per case and so run on cached
// codes from the second on.
func TestReverseCodeShared(t *testing.T) {
	if !jit.HasAVX2() {
		t.Skip("no AVX2: the reverse runs on Go loops, with no code to share")
	}
	cases := laneCases(t)
	mk := func(ci int, tb *method.Tableau) *LaneReplayer {
		t.Helper()
		pr := cases[ci].pr
		pg := pr.Programs()
		if pg.Kernel == nil || pg.VJPKernel == nil {
			t.Skipf("%s has no lane kernels", pr.Name)
		}
		cfg := Config{Tableau: tb, F: pg.F, Dim: pr.Dim, RTol: fill(1e-7, pr.Dim), ATol: fill(1e-9, pr.Dim),
			MaxSteps: 400, Controller: control.DefaultPI(tb.Order, tb.QMin, tb.QMax)}
		lr, err := NewLaneReplayer(cfg, 8, pr.NumParams, pg.VJP, pg.FLanes, pg.VJPLanes, pg.Kernel, pg.VJPKernel())
		if err != nil {
			t.Fatal(err)
		}
		if lr.fused == nil || lr.rev == nil {
			t.Fatalf("%s: no fused reverse code (fused %v, sums %v)", pr.Name, lr.fused != nil, lr.rev != nil)
		}
		return lr
	}
	a, b := mk(0, method.Tsit5), mk(0, method.Tsit5)
	if a.fused != b.fused || a.rev != b.rev {
		t.Errorf("two replayers of one problem and tableau: fused %p, %p; sums %p, %p; want one of each", a.fused, b.fused, a.rev, b.rev)
	}
	if c := mk(0, method.DP5); c.fused == a.fused || c.rev == a.rev {
		t.Error("DP5's replayer shares Tsit5's code")
	}
	if len(cases) > 1 && cases[1].pr.Name != cases[0].pr.Name {
		if d := mk(1, method.Tsit5); d.fused == a.fused {
			t.Errorf("%s's replayer shares %s's fused code", cases[1].pr.Name, cases[0].pr.Name)
		}
	}
}
