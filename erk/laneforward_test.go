package erk

import (
	"fmt"
	"math"
	"testing"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/internal/jit"
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
	for _, c := range append(laneCases(t)[:2], wideCase(t)) {
		pr := c.pr
		pg := pr.Programs()
		for _, tb := range method.All() {
			for _, keep := range []bool{false, true} {
				cfg, rec := recordCase(t, c, tb, keep)
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
			cfg, rec := recordCase(t, c, tb, keep)
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

// pole has z' = 1/(y − q) with y = e^t independent of q: replayed at q
// = y at the end of one of the recorded steps, the step's proposal is
// finite (its stages' inputs lie before the pole) but f at it, the FSAL
// stage, is not.
const pole = `name pole
param q = 10
state y = 1, z = 0
span 0 1
y' = y
z' = 1/(y - q)
`

// Forward replays that become non-finite: blowup at points where the
// recorded steps overflow (its escape time 1/(c·y0) before the span's
// end), and pole where a step's FSAL stage is the first value that is
// not finite. Whole replay rounds leave to the scalar step exactly the
// steps whose proposal, or (FSAL methods) whose f(t+h, y1), is not
// finite (replayVerdict), and every trajectory gets the scalar replay's
// bits, the non-finite values too, on every route.
func TestLaneForwardNonFinite(t *testing.T) {
	for _, c := range []struct {
		name, src string
		y0        []float64
		p0        float64
		// point is the job's parameter at the replay of job i.
		point func(i int, ms *ivp.Mesh) float64
		// fsalOnly: some step's FSAL stage alone is not finite.
		fsalOnly bool
	}{
		{"blowup", blowup, []float64{1, 0}, 1, func(i int, _ *ivp.Mesh) float64 { return 1 + 0.5*float64(i) }, false},
		{"pole", pole, []float64{1, 0}, 10, func(i int, ms *ivp.Mesh) float64 { return ms.Y[2*(2+i%3)] }, true},
	} {
		pr := lanetest.Compiled(t, c.name+".ode", c.src)
		pg := pr.Programs()
		for _, tb := range method.All() {
			what := c.name + " " + tb.Name
			cfg := Config{Tableau: tb, F: pg.F, Dim: pr.Dim, RTol: fill(1e-7, pr.Dim), ATol: fill(1e-9, pr.Dim),
				MaxSteps: 400, Controller: control.DefaultPI(tb.Order, tb.QMin, tb.QMax)}
			sv, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var trs []ivp.Trajectory
			for i := range 9 {
				trs = append(trs, ivp.Trajectory{T0: 0, T1: 0.5 + 0.05*float64(i), Y0: c.y0, P: []float64{c.p0}, Save: []float64{0.3}})
			}
			rec := lanetest.NewQueue(trs, pr.Dim, 1, true)
			for i := range trs {
				sv.Solve(&rec.Trs[i], &rec.Outs[i], nil)
			}
			jobs := func() []ivp.ForwardJob {
				js := rec.FwdJobs(pr.Dim)
				for i := range js {
					js[i].Y0 = c.y0
					js[i].P = []float64{c.point(i, js[i].Mesh)}
				}
				return js
			}
			want := jobs()
			if len(want) != len(trs) {
				t.Fatalf("%s: %d of %d recordings succeeded", what, len(want), len(trs))
			}
			rp, err := NewReplayer(cfg, pr.NumParams, pg.VJP)
			if err != nil {
				t.Fatal(err)
			}
			fin := func(v []float64) bool {
				for _, x := range v {
					if math.IsNaN(x) || math.IsInf(x, 0) {
						return false
					}
				}
				return true
			}
			nonFinite := 0
			for _, j := range want {
				rp.Forward(j.Mesh, j.Y0, j.P, j.Save, j.YOut, j.Saved)
				if !fin(j.YOut) {
					nonFinite++
				}
			}
			if nonFinite == 0 {
				t.Fatalf("%s: every replay ends finite", what)
			}
			// The steps the verdict leaves to the scalar step.
			wantScalar, fsalOnly := 0, 0
			fy := make([]float64, pr.Dim)
			for _, j := range want {
				for k := range j.Mesh.H {
					yn := j.Mesh.Y[(k+1)*pr.Dim : (k+2)*pr.Dim]
					ok := fin(yn)
					if ok && sv.fsal && !sv.defer_ {
						pg.F(j.Mesh.T[k+1], yn, j.P, fy)
						if ok = fin(fy); !ok {
							fsalOnly++
						}
					}
					if !ok {
						wantScalar++
					}
				}
			}
			if c.fsalOnly && sv.fsal && !sv.defer_ && fsalOnly == 0 {
				t.Fatalf("%s: no step whose FSAL stage alone is not finite", what)
			}
			ls, err := NewLanes(cfg, 8, pr.NumParams, pg.FLanes, pg.Kernel)
			if err != nil {
				t.Fatal(err)
			}
			fb, err := NewReplayer(cfg, pr.NumParams, pg.VJP)
			if err != nil {
				t.Fatal(err)
			}
			cs := &countSteps{ForwardStepper: replayStep{fb}}
			q := &lanetest.FwdQueue{Jobs: jobs()}
			ivp.NewLaneForward(ls, cfg.F, pr.Dim, cs).Run(q, nil)
			q.Check(t, what+" counted", want)
			if jit.HasAVX2() && ls.replay == nil {
				t.Errorf("%s: no whole replay rounds", what)
			}
			if ls.replay != nil && cs.n != wantScalar {
				t.Errorf("%s: %d steps taken by the scalar step, want %d", what, cs.n, wantScalar)
			}
			for _, L := range []int{4, 8} {
				for _, rounds := range []bool{true, false} {
					lr, err := NewLaneReplayer(cfg, L, pr.NumParams, pg.VJP, pg.FLanes, pg.VJPLanes, pg.Kernel, pg.VJPKernel())
					if err != nil {
						t.Fatal(err)
					}
					q := &lanetest.FwdQueue{Jobs: jobs()}
					was := ivp.UseRounds(rounds)
					lr.ForwardLanes(q, nil)
					ivp.UseRounds(was)
					q.Check(t, fmt.Sprintf("%s L=%d rounds=%v", what, L, rounds), want)
				}
			}
		}
	}
}

// countSteps counts the steps of a ForwardStepper.
type countSteps struct {
	ivp.ForwardStepper
	n int
}

func (c *countSteps) Step(ms *ivp.Mesh, k int, t, h float64, y, yn, p []float64) {
	c.n++
	c.ForwardStepper.Step(ms, k, t, h, y, yn, p)
}
