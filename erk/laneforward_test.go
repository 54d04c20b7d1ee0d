package erk

import (
	"fmt"
	"math"
	"testing"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/internal/lanetest"
	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
)

// The forward replay in lanes gives each trajectory the scalar
// replayer's Forward bit for bit — the mesh's states and kept stages,
// the final state and the saved states — at a point other than the
// recording's, for every explicit method, with and without kept stages,
// on 1, 3, 4 and 8 lanes, with f in lanes (fused attempts) and lane by
// lane, over trajectories of different lengths, directions and save
// times.
func TestLaneForwardMatchesScalar(t *testing.T) {
	for _, c := range laneCases(t)[:2] {
		pr := c.pr
		pg := pr.Programs()
		for _, tb := range method.All() {
			for _, keep := range []bool{false, true} {
				cfg := Config{Tableau: tb, F: pg.F, Dim: pr.Dim, RTol: fill(1e-7, pr.Dim), ATol: fill(1e-9, pr.Dim),
					MaxSteps: 400, Controller: control.DefaultPI(tb.Order, tb.QMin, tb.QMax)}
				sv, err := New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				rec := lanetest.NewQueue(c.trs, pr.Dim, 1, true)
				for i := range c.trs {
					rec.Meshes[i].KeepStages = keep
					sv.Solve(&rec.Trs[i], &rec.Outs[i], nil)
				}
				// Save times that fall on steps' ends exactly, inside the
				// mesh (the recording's never do), in every third job.
				jobs := func() []ivp.ForwardJob {
					js := rec.FwdJobs(pr.Dim)
					for i := range js {
						if j := &js[i]; i%3 == 0 && len(j.Mesh.H) > 4 {
							j.Save = []float64{j.Mesh.T[2], 0.5 * (j.Mesh.T[2] + j.Mesh.T[3]), j.Mesh.T[4]}
							j.Saved = make([]float64, len(j.Save)*pr.Dim)
						}
					}
					return js
				}
				want := jobs()
				if len(want) < 4 {
					t.Fatalf("%s %s: %d successful trajectories: too few to fill the lanes", c.name, tb.Name, len(want))
				}
				rp, err := NewReplayer(cfg, pr.NumParams, pg.VJP)
				if err != nil {
					t.Fatal(err)
				}
				for _, j := range want {
					rp.Forward(j.Mesh, j.Y0, j.P, j.Save, j.YOut, j.Saved)
				}
				for _, L := range []int{1, 3, 4, 8} {
					for _, route := range []string{"rounds", "fused", "lane by lane"} {
						inLanes := route != "lane by lane"
						var fl ode.LaneFunc
						var vl func(t, y, p, u, gy, gp []float64)
						var fk, vk *ode.LaneKernel
						if inLanes {
							fl, vl, fk, vk = pg.FLanes, pg.VJPLanes, pg.Kernel, pg.VJPKernel()
						}
						lr, err := NewLaneReplayer(cfg, L, pr.NumParams, pg.VJP, fl, vl, fk, vk)
						if err != nil {
							t.Fatal(err)
						}
						q := &lanetest.FwdQueue{Jobs: jobs()}
						// "rounds": whole replay rounds in machine code
						// where the attempt is fused; "fused": the fused
						// attempt under LaneForward's Go loop.
						was := ivp.UseRounds(route == "rounds")
						lr.ForwardLanes(q, nil)
						ivp.UseRounds(was)
						what := fmt.Sprintf("%s %s keep=%v L=%d %s", c.name, tb.Name, keep, L, route)
						q.Check(t, what, want)
						if inLanes && L == 8 && lr.fls.fused == nil && lr.ls.jit != nil {
							t.Errorf("%s: the forward replay's attempts are not the fused code", what)
						}
						if rounds := lr.fls.replay != nil; rounds != (route == "rounds" && lr.fls.fused != nil) {
							t.Errorf("%s: whole replay rounds %v, fused attempt %v", what, rounds, lr.fls.fused != nil)
						}
						// A second walk on the same replayer (its block
						// holds the first's last state).
						q = &lanetest.FwdQueue{Jobs: jobs()}
						lr.ForwardLanes(q, nil)
						q.Check(t, what+" (again)", want)
					}
				}
			}
		}
	}
}

// The forward replay at the recording point reproduces the recording
// itself: every state of the mesh, bit for bit.
func TestLaneForwardAtRecordingPoint(t *testing.T) {
	c := laneCases(t)[0]
	pr := c.pr
	pg := pr.Programs()
	tb := method.Tsit5
	cfg := Config{Tableau: tb, F: pg.F, Dim: pr.Dim, RTol: fill(1e-7, pr.Dim), ATol: fill(1e-9, pr.Dim),
		MaxSteps: 400, Controller: control.DefaultPI(tb.Order, tb.QMin, tb.QMax)}
	sv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec := lanetest.NewQueue(c.trs, pr.Dim, 1, true)
	for i := range c.trs {
		sv.Solve(&rec.Trs[i], &rec.Outs[i], nil)
	}
	var q lanetest.FwdQueue
	var orig []*ivp.Mesh
	for i := range rec.Outs {
		if rec.Outs[i].Status == ode.Success {
			tr := &rec.Trs[i]
			orig = append(orig, rec.Outs[i].Mesh.Clone())
			// Scribble over the states: the replay must write them all.
			ms := rec.Outs[i].Mesh.Clone()
			for k := range ms.Y {
				ms.Y[k] = math.NaN()
			}
			q.Jobs = append(q.Jobs, ivp.ForwardJob{Mesh: ms, Y0: tr.Y0, P: tr.P, Save: tr.Save,
				YOut: make([]float64, pr.Dim), Saved: make([]float64, len(tr.Save)*pr.Dim)})
		}
	}
	lr, err := NewLaneReplayer(cfg, 8, pr.NumParams, pg.VJP, pg.FLanes, pg.VJPLanes, pg.Kernel, pg.VJPKernel())
	if err != nil {
		t.Fatal(err)
	}
	lr.ForwardLanes(&q, nil)
	for i, j := range q.Jobs {
		testutil.CheckBits(t, fmt.Sprintf("job %d", i), j.Mesh.Y, orig[i].Y)
	}
}

// flaky is a lane solver whose attempts the forward replay must take
// lane by lane now and then: it marks every third lane's attempt, in
// turn, not usable.
type flaky struct {
	*LaneSolver
	round int
}

func (f *flaky) Attempt(a *ivp.LaneAttempt) {
	f.LaneSolver.Attempt(a)
	f.round++
	for l := range a.OK {
		if (l+f.round)%3 == 0 {
			a.OK[l] = false
		}
	}
}

// A lane whose attempt is not usable takes the scalar replay's step and
// is loaded again at its end: the results are still Forward's, bit for
// bit, kept stages and save times included.
func TestLaneForwardScalarSteps(t *testing.T) {
	c := laneCases(t)[0]
	pr := c.pr
	pg := pr.Programs()
	for _, tb := range []*method.Tableau{method.Tsit5, method.Vern7} {
		for _, keep := range []bool{false, true} {
			cfg := Config{Tableau: tb, F: pg.F, Dim: pr.Dim, RTol: fill(1e-7, pr.Dim), ATol: fill(1e-9, pr.Dim),
				MaxSteps: 400, Controller: control.DefaultPI(tb.Order, tb.QMin, tb.QMax)}
			sv, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			rec := lanetest.NewQueue(c.trs, pr.Dim, 1, true)
			for i := range c.trs {
				rec.Meshes[i].KeepStages = keep
				sv.Solve(&rec.Trs[i], &rec.Outs[i], nil)
			}
			want := rec.FwdJobs(pr.Dim)
			rp, err := NewReplayer(cfg, pr.NumParams, pg.VJP)
			if err != nil {
				t.Fatal(err)
			}
			for _, j := range want {
				rp.Forward(j.Mesh, j.Y0, j.P, j.Save, j.YOut, j.Saved)
			}
			ls, err := NewLanes(cfg, 8, pr.NumParams, pg.FLanes, pg.Kernel)
			if err != nil {
				t.Fatal(err)
			}
			fb, err := NewReplayer(cfg, pr.NumParams, pg.VJP)
			if err != nil {
				t.Fatal(err)
			}
			q := &lanetest.FwdQueue{Jobs: rec.FwdJobs(pr.Dim)}
			ivp.NewLaneForward(&flaky{LaneSolver: ls}, cfg.F, pr.Dim, replayStep{fb}).Run(q, nil)
			q.Check(t, fmt.Sprintf("%s keep=%v", tb.Name, keep), want)
		}
	}
}

// The forward replay in lanes allocates nothing once its replayer has
// made its lane solver: no allocation per step or per trajectory.
func TestLaneForwardDoesNotAllocate(t *testing.T) {
	c := laneCases(t)[0]
	pr := c.pr
	pg := pr.Programs()
	tb := method.Vern7
	cfg := Config{Tableau: tb, F: pg.F, Dim: pr.Dim, RTol: fill(1e-7, pr.Dim), ATol: fill(1e-9, pr.Dim),
		MaxSteps: 400, Controller: control.DefaultPI(tb.Order, tb.QMin, tb.QMax)}
	sv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec := lanetest.NewQueue(c.trs, pr.Dim, 1, true)
	for i := range c.trs {
		sv.Solve(&rec.Trs[i], &rec.Outs[i], nil)
	}
	lr, err := NewLaneReplayer(cfg, 8, pr.NumParams, pg.VJP, pg.FLanes, pg.VJPLanes, pg.Kernel, pg.VJPKernel())
	if err != nil {
		t.Fatal(err)
	}
	q := &lanetest.FwdQueue{Jobs: rec.FwdJobs(pr.Dim)}
	lr.ForwardLanes(q, nil) // the lane solver is made on first use
	if n := testing.AllocsPerRun(5, func() {
		q.Reset()
		lr.ForwardLanes(q, nil)
	}); n != 0 {
		t.Errorf("%v allocations per forward replay of %d trajectories in lanes", n, len(q.Jobs))
	}
}
