package ros

import (
	"fmt"
	"testing"

	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/internal/lanetest"
	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
)

// forwardQueue hands out forward jobs in order and counts those done.
type forwardQueue struct {
	jobs       []ivp.ForwardJob
	next, done int
}

func (q *forwardQueue) Next(int) (*ivp.ForwardJob, bool) {
	if q.next == len(q.jobs) {
		return nil, false
	}
	q.next++
	return &q.jobs[q.next-1], true
}

func (q *forwardQueue) Done(int) { q.done++ }

// forwardJobs returns a forward job for each successful recording, on
// its own copy of the mesh, at a point moved from the recording's (the
// parameters by 1%, the initial state by 1e-4 of its first component).
func forwardJobs(rec *lanetest.Queue, dim int) []ivp.ForwardJob {
	var js []ivp.ForwardJob
	for i := range rec.Outs {
		if rec.Outs[i].Status != ode.Success {
			continue
		}
		tr := &rec.Trs[i]
		y0, p := append([]float64(nil), tr.Y0...), append([]float64(nil), tr.P...)
		y0[0] *= 1 + 1e-4
		for j := range p {
			p[j] *= 1.01
		}
		js = append(js, ivp.ForwardJob{Mesh: rec.Outs[i].Mesh.Clone(), Y0: y0, P: p, Save: tr.Save,
			YOut: make([]float64, dim), Saved: make([]float64, len(tr.Save)*dim)})
	}
	return js
}

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
			cfg := caseConfig(&c, tb, false)
			cfg.MaxSteps = 20000
			sv, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			rec := lanetest.NewQueue(c.trs, pr.Dim, 1, true)
			for i := range c.trs {
				sv.Solve(&rec.Trs[i], &rec.Outs[i], nil)
			}
			want := forwardJobs(rec, pr.Dim)
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
					q := &forwardQueue{jobs: forwardJobs(rec, pr.Dim)}
					lr.ForwardLanes(q, nil)
					what := fmt.Sprintf("%s %s L=%d lanes=%v", c.name, tb.Name, L, inLanes)
					if q.done != len(q.jobs) {
						t.Fatalf("%s: %d of %d jobs done", what, q.done, len(q.jobs))
					}
					for i, j := range q.jobs {
						w := want[i]
						for _, a := range []struct {
							name      string
							got, want []float64
						}{{"mesh states", j.Mesh.Y, w.Mesh.Y}, {"final state", j.YOut, w.YOut}, {"saved states", j.Saved, w.Saved}} {
							if !testutil.CheckBits(t, fmt.Sprintf("%s job %d %s", what, i, a.name), a.got, a.want) {
								t.FailNow()
							}
						}
					}
				}
			}
		}
	}
}
