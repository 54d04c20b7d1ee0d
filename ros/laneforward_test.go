package ros

import (
	"fmt"
	"testing"

	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/internal/lanetest"
	"github.com/gradsolve/gradsolve/method"
)

// The forward replay in lanes gives each trajectory the scalar
// replayer's Forward bit for bit — the mesh's states, the final state
// and the saved states — at a point moved from the recording's, for
// both methods, on 4 and 8 lanes, with the programs in lanes or lane by
// lane.
func TestLaneForwardMatchesScalar(t *testing.T) {
	if !jit.HasAVX2() {
		t.Skip("no AVX2: the lane replay does not run here")
	}
	for _, c := range rosCases(t) {
		pr := c.pr
		pg := pr.Programs()
		for _, tb := range method.AllRosenbrock() {
			for _, dense := range []bool{false, true} {
				cfg := caseConfig(&c, tb, dense)
				cfg.MaxSteps = 20000
				sv, err := New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				rec := lanetest.NewQueue(c.trs, pr.Dim, 1, true)
				for i := range c.trs {
					sv.Solve(&rec.Trs[i], &rec.Outs[i], nil)
				}
				want := rec.FwdJobs(pr.Dim)
				if len(want) < 4 {
					t.Fatalf("%s %s: %d successful trajectories: too few to fill the lanes", c.name, tb.Name, len(want))
				}
				rp, err := NewReplayer(cfg, pr.NumParams, pg)
				if err != nil {
					t.Fatal(err)
				}
				for _, j := range want {
					rp.Forward(j.Mesh, j.Y0, j.P, j.Save, j.YOut, j.Saved)
				}
				for _, L := range []int{4, 8} {
					for _, inLanes := range []bool{true, false} {
						var lp LanePrograms
						if inLanes {
							lp = LanePrograms{F: pg.FLanes, Kernel: pg.Kernel, JacY: pg.JacYLanes, DfDt: pg.DfDtLanes}
						}
						lr, err := NewLaneReplayer(cfg, L, pr.NumParams, pg, lp)
						if err != nil {
							t.Fatal(err)
						}
						q := &lanetest.FwdQueue{Jobs: rec.FwdJobs(pr.Dim)}
						lr.ForwardLanes(q, nil)
						q.Check(t, fmt.Sprintf("%s %s dense=%v L=%d lanes=%v", c.name, tb.Name, dense, L, inLanes), want)
					}
				}
			}
		}
	}
}
