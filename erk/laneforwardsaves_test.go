package erk

import (
	"fmt"
	"testing"

	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/internal/lanetest"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/method"
)

// The scalar replay's step computes its saves without a Step before
// them, so whole replay rounds owe their saves (ivp.FreshSaver).
var _ ivp.FreshSaver = replayStep{}

// The forward replay's saves, which whole replay rounds owe and compute
// from the finished mesh, have the scalar replayer's bits: several save
// times inside one step, repeated ones, saves at t0 and at steps' ends
// (the mesh's states), on full meshes and on meshes cut short (a failed
// recording's), whose later save times stay unwritten as the scalar
// replay leaves them.
func TestLaneForwardOwedSaves(t *testing.T) {
	c := laneCases(t)[0]
	pr := c.pr
	pg := pr.Programs()
	for _, tb := range method.All() {
		for _, keep := range []bool{false, true} {
			cfg, rec := recordCase(t, c, tb, keep)
			jobs := func() []ivp.ForwardJob {
				js := rec.FwdJobs(pr.Dim)
				for i := range js {
					j := &js[i]
					T := j.Mesh.T
					n := len(j.Mesh.H)
					if n < 6 {
						continue
					}
					in := func(k int, f float64) float64 { return T[k] + f*(T[k+1]-T[k]) }
					j.Save = []float64{T[0], T[0], in(0, 0.5), T[1], in(2, 0.25), in(2, 0.5), in(2, 0.5), in(2, 0.75),
						T[3], T[3], in(4, 0.5), in(n-1, 0.5), T[n]}
					j.Saved = make([]float64, len(j.Save)*pr.Dim)
					if i%2 == 1 {
						// Cut short after half its steps.
						m, ms := n/2, j.Mesh
						if len(ms.K) > 0 {
							ms.K = ms.K[:len(ms.K)/n*m]
						}
						ms.H, ms.T, ms.Y = ms.H[:m], ms.T[:m+1], ms.Y[:(m+1)*pr.Dim]
						ms.End = ms.T[m]
					}
				}
				return js
			}
			want := jobs()
			rp, err := NewReplayer(cfg, pr.NumParams, pg.VJP)
			if err != nil {
				t.Fatal(err)
			}
			for _, j := range want {
				rp.Forward(j.Mesh, j.Y0, j.P, j.Save, j.YOut, j.Saved)
			}
			for _, L := range []int{4, 8} {
				for _, rounds := range []bool{true, false} {
					lr, err := NewLaneReplayer(cfg, L, pr.NumParams, pg.VJP, pg.FLanes, pg.VJPLanes, pg.Kernel, pg.VJPKernel())
					if err != nil {
						t.Fatal(err)
					}
					what := fmt.Sprintf("%s %s keep=%v L=%d rounds=%v", c.name, tb.Name, keep, L, rounds)
					q := &lanetest.FwdQueue{Jobs: jobs()}
					was := ivp.UseRounds(rounds)
					lr.ForwardLanes(q, nil)
					ivp.UseRounds(was)
					q.Check(t, what, want)
					if rounds && jit.HasAVX2() && lr.fls.fused != nil && lr.fls.replay == nil {
						t.Errorf("%s: no whole replay rounds", what)
					}
				}
			}
		}
	}
}
