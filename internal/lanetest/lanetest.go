// Package lanetest holds what the lane engines' tests share: problems
// compiled from problem files, a source of trajectories that keeps
// their outputs, and a bitwise comparison of two outputs.
package lanetest

import (
	"fmt"
	"math"
	"os"
	"sync/atomic"
	"testing"

	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/sym/parse"
	"github.com/gradsolve/gradsolve/sym/tape"
)

// Queue hands out trajectories in order and keeps their outputs: an
// ivp.LaneSource that records which trajectory each lane holds and
// notes a trajectory ended twice.
type Queue struct {
	Trs    []ivp.Trajectory
	Outs   []ivp.Output
	Meshes []ivp.Mesh
	// Finished marks the trajectories whose end was reported (Done),
	// Errs what went wrong in the hand-out.
	Finished []bool
	Errs     []string
	next     int
	lane     []int
}

// NewQueue returns a queue of trs (states of dim values) for L lanes,
// with an output for each and, with mesh set, a mesh that keeps the
// stages.
func NewQueue(trs []ivp.Trajectory, dim, L int, mesh bool) *Queue {
	q := &Queue{Trs: trs, Outs: make([]ivp.Output, len(trs)), lane: make([]int, L), Finished: make([]bool, len(trs))}
	if mesh {
		q.Meshes = make([]ivp.Mesh, len(trs))
	}
	for i, tr := range trs {
		q.Outs[i] = ivp.Output{Y: make([]float64, dim), Saved: make([]float64, dim*len(tr.Save))}
		if mesh {
			q.Meshes[i].KeepStages = true
			q.Outs[i].Mesh = &q.Meshes[i]
		}
	}
	return q
}

// Next hands out the next trajectory to lane l.
func (q *Queue) Next(l int) (*ivp.Trajectory, *ivp.Output, bool) {
	if q.next == len(q.Trs) {
		return nil, nil, false
	}
	i := q.next
	q.next++
	q.lane[l] = i
	return &q.Trs[i], &q.Outs[i], true
}

// Done notes that lane l's trajectory ended.
func (q *Queue) Done(l int) {
	i := q.lane[l]
	if q.Finished[i] {
		q.Errs = append(q.Errs, fmt.Sprintf("trajectory %d done twice", i))
	}
	q.Finished[i] = true
}

// Reset hands the trajectories out again from the first.
func (q *Queue) Reset() {
	q.next = 0
	clear(q.Finished)
}

// Steps returns the step attempts of every output.
func (q *Queue) Steps() (n int) {
	for i := range q.Outs {
		n += q.Outs[i].Stats.Accepted + q.Outs[i].Stats.Rejected
	}
	return n
}

// SameOutput reports how got differs from want, bit for bit: status,
// statistics, the final time and step, the states, the save times and
// the mesh; "" where they agree.
func SameOutput(got, want *ivp.Output) string {
	bits := testutil.IdenticalBits
	switch {
	case got.Status != want.Status:
		return fmt.Sprintf("status %v, want %v", got.Status, want.Status)
	case got.Stats != want.Stats:
		return fmt.Sprintf("stats %+v, want %+v", got.Stats, want.Stats)
	case !bits([]float64{got.T, got.H}, []float64{want.T, want.H}):
		return fmt.Sprintf("t, h = %v, %v, want %v, %v", got.T, got.H, want.T, want.H)
	case !bits(got.Y, want.Y):
		return fmt.Sprintf("y = %v, want %v", got.Y, want.Y)
	case !bits(got.Saved, want.Saved):
		return fmt.Sprintf("saved = %v, want %v", got.Saved, want.Saved)
	}
	if (got.Mesh == nil) != (want.Mesh == nil) {
		return "mesh presence differs"
	}
	if got.Mesh != nil {
		g, w := got.Mesh, want.Mesh
		if !bits(g.T, w.T) || !bits(g.H, w.H) || !bits(g.Y, w.Y) || !bits(g.K, w.K) {
			return fmt.Sprintf("mesh differs: %d steps, want %d", g.Steps(), w.Steps())
		}
	}
	return ""
}

// Compiled returns the problem of the problem file at path compiled by
// the tape, or of src where it is not empty (path then names it).
func Compiled(t testing.TB, path, src string) *ode.Problem { return Set(t, path, src).Problem() }

// Set returns the tape's Set of the problem file at path, or of src
// where it is not empty (path then names it).
func Set(t testing.TB, path, src string) *tape.Set {
	t.Helper()
	if src == "" {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		src = string(b)
	}
	m, err := parse.Parse(path, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	set, err := tape.Build(m)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// Check reports on t, under name, what went wrong in the hand-out, the
// trajectories never reported done, and every output that differs from
// want's in any bit.
func (q *Queue) Check(t testing.TB, name string, want *Queue) {
	t.Helper()
	if len(q.Errs) > 0 {
		t.Fatalf("%s: %v", name, q.Errs)
	}
	for i := range q.Trs {
		if !q.Finished[i] {
			t.Errorf("%s: trajectory %d never done", name, i)
		} else if d := SameOutput(&q.Outs[i], &want.Outs[i]); d != "" {
			t.Errorf("%s: trajectory %d: %s", name, i, d)
		}
	}
}

// RevQueue hands out reverse jobs in order (an ivp.ReverseSource) and
// counts how often each was reported done.
type RevQueue struct {
	Jobs  []ivp.ReverseJob
	Times []int
	next  int
	lane  []int
}

// NewRevQueue returns a queue of copies of jobs for L lanes, each with
// its own gradient slices (dim and m values).
func NewRevQueue(jobs []ivp.ReverseJob, L, dim, m int) *RevQueue {
	q := &RevQueue{Jobs: append([]ivp.ReverseJob(nil), jobs...), Times: make([]int, len(jobs)), lane: make([]int, L)}
	for i := range q.Jobs {
		q.Jobs[i].GY0, q.Jobs[i].GP = make([]float64, dim), make([]float64, m)
	}
	return q
}

// Next hands out the next job to lane l.
func (q *RevQueue) Next(l int) (*ivp.ReverseJob, bool) {
	if q.next == len(q.Jobs) {
		return nil, false
	}
	q.lane[l] = q.next
	q.next++
	return &q.Jobs[q.lane[l]], true
}

// Done counts lane l's job done.
func (q *RevQueue) Done(l int) { q.Times[q.lane[l]]++ }

// Reset hands the jobs out again from the first.
func (q *RevQueue) Reset() { q.next = 0 }

// Check reports on t, under name, every job not done exactly once and
// every gradient that differs from want's (∂/∂y0, ∂/∂p per job) in any
// bit.
func (q *RevQueue) Check(t testing.TB, name string, want [][2][]float64) {
	t.Helper()
	for i, j := range q.Jobs {
		if q.Times[i] != 1 {
			t.Fatalf("%s: job %d done %d times", name, i, q.Times[i])
		}
		for k, v := range [][2][]float64{{j.GY0, want[i][0]}, {j.GP, want[i][1]}} {
			for e := range v[0] {
				if math.Float64bits(v[0][e]) != math.Float64bits(v[1][e]) {
					t.Fatalf("%s: job %d: %s[%d] = %v, want %v", name, i, []string{"gy0", "gp"}[k], e, v[0][e], v[1][e])
				}
			}
		}
	}
}

// Jobs returns the reverse jobs of the queue's successful trajectories
// once their solves are done: each one's mesh, parameters and save
// times, with the cotangent ȳ(t1) = y(t1) (of ½‖y(t1)‖²) and, for every
// other trajectory with save times, the saved states as their
// cotangents; gradients of dim and m values.
func (q *Queue) Jobs(dim, m int) []ivp.ReverseJob {
	var jobs []ivp.ReverseJob
	for i := range q.Trs {
		out, tr := &q.Outs[i], &q.Trs[i]
		if out.Status != ode.Success {
			continue
		}
		job := ivp.ReverseJob{Mesh: out.Mesh, P: tr.P, Save: tr.Save, CotY: out.Y, GY0: make([]float64, dim), GP: make([]float64, m)}
		if i%2 == 0 && len(tr.Save) > 0 {
			job.CotSaved = out.Saved
		}
		jobs = append(jobs, job)
	}
	return jobs
}

// ReportPerStep reports b's time per step attempt of the queue's
// outputs (after its last run) as the metric ns/step.
func (q *Queue) ReportPerStep(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*q.Steps()), "ns/step")
}

// BenchScalar measures solve, a scalar solver's Solve, on every
// trajectory of q in turn, one at a time, and reports ns/step.
func (q *Queue) BenchScalar(b *testing.B, solve func(*ivp.Trajectory, *ivp.Output, *atomic.Bool)) {
	for b.Loop() {
		for i := range q.Trs {
			solve(&q.Trs[i], &q.Outs[i], nil)
		}
	}
	q.ReportPerStep(b)
}
