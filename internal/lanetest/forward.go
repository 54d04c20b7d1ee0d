package lanetest

import (
	"fmt"
	"testing"

	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/ode"
)

// FwdQueue hands out forward replay jobs in order (an
// ivp.ForwardSource) and counts those reported done.
type FwdQueue struct {
	Jobs       []ivp.ForwardJob
	next, done int
}

// Next returns the next job.
func (q *FwdQueue) Next(int) (*ivp.ForwardJob, bool) {
	if q.next == len(q.Jobs) {
		return nil, false
	}
	q.next++
	return &q.Jobs[q.next-1], true
}

// Done counts a job done.
func (q *FwdQueue) Done(int) { q.done++ }

// Reset hands out the same jobs again.
func (q *FwdQueue) Reset() { q.next, q.done = 0, 0 }

// FwdJobs returns a forward job for each successful recording of q, on
// its own copy of the mesh, at a point moved from the recording's (the
// parameters by 1%, initial value d by 1e-4·(d+1) of itself), with
// fresh outputs.
func (q *Queue) FwdJobs(dim int) []ivp.ForwardJob {
	var js []ivp.ForwardJob
	for i := range q.Outs {
		if q.Outs[i].Status != ode.Success {
			continue
		}
		tr := &q.Trs[i]
		y0, p := append([]float64(nil), tr.Y0...), append([]float64(nil), tr.P...)
		for d := range y0 {
			y0[d] *= 1 + 1e-4*float64(d+1)
		}
		for j := range p {
			p[j] *= 1.01
		}
		js = append(js, ivp.ForwardJob{Mesh: q.Outs[i].Mesh.Clone(), Y0: y0, P: p, Save: tr.Save,
			YOut: make([]float64, dim), Saved: make([]float64, len(tr.Save)*dim)})
	}
	return js
}

// Check requires every job of q done and its mesh states and stages,
// final state and saved states to have the bits of want's (the same
// jobs, replayed by the scalar replayer).
func (q *FwdQueue) Check(t testing.TB, name string, want []ivp.ForwardJob) {
	t.Helper()
	if q.done != len(q.Jobs) || len(want) != len(q.Jobs) {
		t.Fatalf("%s: %d of %d jobs done (%d wanted)", name, q.done, len(q.Jobs), len(want))
	}
	for i, j := range q.Jobs {
		w := want[i]
		for _, a := range []struct {
			name      string
			got, want []float64
		}{{"mesh states", j.Mesh.Y, w.Mesh.Y}, {"mesh stages", j.Mesh.K, w.Mesh.K},
			{"final state", j.YOut, w.YOut}, {"saved states", j.Saved, w.Saved}} {
			if !testutil.CheckBits(t, fmt.Sprintf("%s job %d %s", name, i, a.name), a.got, a.want) {
				t.FailNow()
			}
		}
	}
}
