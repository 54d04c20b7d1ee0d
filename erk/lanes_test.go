package erk

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/internal/lanecheck"
	"github.com/gradsolve/gradsolve/internal/lanetest"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
)

// laneCase is a problem compiled from formulas and the trajectories the
// lane tests run on it.
type laneCase struct {
	name string
	pr   *ode.Problem
	trs  []ivp.Trajectory
	nd   int // Config.NormDim (0: all)
	// cols, where set, is the sensitivity system's machine code by
	// columns (of nd states), with f's kernel as the Programs' Kernel.
	cols *ode.LaneColumns
}

// blowup has a finite escape time at t = 1/(c·y0): the step size
// collapses (StepUnderflow) or the attempts overflow (NonFinite).
const blowup = `name blowup
param c = 1
state y = 1, z = 0
span 0 2
y' = c*y*y
z' = sqrt(y) - z
`

// laneCases are trajectories that end at different times and in
// different ways: forward and backward spans, spans far from t = 0,
// save times at the ends and inside, a trajectory the step budget stops
// and ones that blow up.
// recordCase records c's trajectories with tb (rtol 1e-7, atol 1e-9,
// at most 400 steps) on the scalar solver, their meshes keeping the
// stages or not, and returns the solver's configuration and the queue
// that holds the recordings.
func recordCase(t testing.TB, c laneCase, tb *method.Tableau, keep bool) (Config, *lanetest.Queue) {
	t.Helper()
	pr := c.pr
	cfg := Config{Tableau: tb, F: pr.Programs().F, Dim: pr.Dim, RTol: fill(1e-7, pr.Dim), ATol: fill(1e-9, pr.Dim),
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
	return cfg, rec
}

func laneCases(t testing.TB) []laneCase {
	lor := lanetest.Compiled(t, "../examples/lorenz.ode", "")
	halo := lanetest.Compiled(t, "../examples/halo.ode", "")
	bl := lanetest.Compiled(t, "blowup.ode", blowup)
	var cs []laneCase
	var trs []ivp.Trajectory
	for i := range 11 {
		x := float64(i)
		tr := ivp.Trajectory{T0: 0, T1: 0.5 + 0.3*x, Y0: []float64{1 + 0.1*x, -0.2 * x, 0.3}, P: []float64{10 + 1.3*x, 10, 8.0 / 3}}
		switch i % 4 {
		case 1:
			tr.Save = []float64{0, 0.1, 0.2 + 0.01*x, tr.T1}
		case 2:
			tr.T0, tr.T1 = 1e3, 1e3-0.4-0.2*x // backwards, far from 0
			tr.Save = []float64{tr.T0 - 0.1, tr.T0 - 0.3}
		case 3:
			tr.T1 = 40 // stopped by the budget
		}
		trs = append(trs, tr)
	}
	cs = append(cs, laneCase{"lorenz", lor, trs, 0, nil})
	trs = nil
	for i := range 6 {
		x := float64(i)
		tr := ivp.Trajectory{T0: 0, T1: 3 + x, Y0: append([]float64(nil), halo.Y0...), P: append([]float64(nil), halo.P...)}
		tr.Y0[0] += 0.05 * x
		tr.P[0] *= 1 + 0.02*x
		if i%2 == 1 {
			tr.Save = []float64{1, 2.5}
		}
		trs = append(trs, tr)
	}
	cs = append(cs, laneCase{"halo", halo, trs, 0, nil})
	// The halo's fused sensitivity system to (vc, q) in lanes
	// (SensLanes): 18 components, the 6 of the state in the norm.
	sensF, err := halo.SensF([]int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	sensL, err := halo.SensLanes([]int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	sens := &ode.Problem{Name: "halo-sens", Dim: 18, NumParams: 3, F: sensF(), Programs: func() *ode.Programs {
		lp := sensL()
		return &ode.Programs{F: sensF(), FLanes: lp.F, Kernel: lp.Kernel}
	}}
	var strs []ivp.Trajectory
	for _, tr := range trs {
		tr.Y0 = append(append([]float64(nil), tr.Y0...), make([]float64, 12)...)
		strs = append(strs, tr)
	}
	cs = append(cs, laneCase{"halo-sens", sens, strs, 6, nil})
	// The same system with its machine code by columns, as the code
	// gradsolve gen writes gives it: f's body, then the body of the
	// tangent program J_y·v + J_p·w for each column.
	if hs := lanetest.Set(t, "../examples/halo.ode", ""); hs != nil {
		fj, err := hs.JVP()
		if err != nil {
			t.Fatal(err)
		}
		if fk, ck := hs.F().LaneKernel(), fj.SeededLaneKernel(); fk != nil && ck != nil {
			cols := &ode.LaneColumns{Kernel: ck, W: [][]float64{{1, 0, 0}, {0, 1, 0}}}
			byCols := &ode.Problem{Name: "halo-sens-columns", Dim: 18, NumParams: 3, F: sensF(), Programs: func() *ode.Programs {
				return &ode.Programs{F: sensF(), FLanes: sensL().F, Kernel: fk}
			}}
			cs = append(cs, laneCase{"halo-sens-columns", byCols, strs, 6, cols})
		}
	}
	trs = nil
	for i := range 7 {
		x := float64(i)
		trs = append(trs, ivp.Trajectory{T0: 0, T1: 0.5 + 0.3*x, Y0: []float64{1, 0}, P: []float64{0.7 + 0.25*x}, Save: []float64{0.4}})
	}
	// sqrt(y) of y0 < 0: f(t0, y0) is not finite, and the lane's
	// trajectory ends at its start (NonFinite).
	trs = append(trs[:3], append([]ivp.Trajectory{{T0: 0, T1: 1, Y0: []float64{-1, 0}, P: []float64{1}}}, trs[3:]...)...)
	cs = append(cs, laneCase{"blowup", bl, trs, 0, nil})
	// Lorenz-96 of 40 states, with a time-dependent forcing (sin t: f
	// calls Go between pieces of lane code, so no fused attempt): a
	// system whose stage code is large.
	var src strings.Builder
	const n96 = 40
	src.WriteString("name lorenz96\nparam F = 8\n")
	for i := range n96 {
		fmt.Fprintf(&src, "state x%d = %g\n", i, 1+0.01*float64(i))
	}
	src.WriteString("span 0 1\n")
	for i := range n96 {
		fmt.Fprintf(&src, "x%d' = (x%d - x%d)*x%d - x%d + F + 0.1*sin(t)\n", i, (i+1)%n96, (i+n96-2)%n96, (i+n96-1)%n96, i)
	}
	l96 := lanetest.Compiled(t, "lorenz96.ode", src.String())
	trs = nil
	for i := range 9 {
		y0 := make([]float64, n96)
		for d := range y0 {
			y0[d] = 1 + 0.01*float64(d) + 0.02*float64(i)
		}
		trs = append(trs, ivp.Trajectory{T0: 0, T1: 0.3 + 0.05*float64(i), Y0: y0, P: []float64{8 + 0.1*float64(i)}, Save: []float64{0.1}})
	}
	cs = append(cs, laneCase{"lorenz96", l96, trs, 0, nil})
	return cs
}

// wideCase is a chain of 10 states whose f is lane code of one piece:
// a state wider than the eight vector registers the fused reversed
// step sums in at a time (its sums then run in pieces).
func wideCase(t testing.TB) laneCase {
	const n = 10
	var src strings.Builder
	src.WriteString("name chain\nparam a = 1, b = 0.5\n")
	for i := range n {
		fmt.Fprintf(&src, "state x%d = %g\n", i, 1-0.05*float64(i))
	}
	src.WriteString("span 0 1\n")
	src.WriteString("x0' = -a*x0 + 0.1*x9*x1\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&src, "x%d' = a*x%d - b*x%d*x%d - 0.1*x%d\n", i, i-1, i, i, i)
	}
	pr := lanetest.Compiled(t, "chain.ode", src.String())
	var trs []ivp.Trajectory
	for i := range 9 {
		x := float64(i)
		y0 := make([]float64, n)
		for d := range y0 {
			y0[d] = 1 - 0.05*float64(d) + 0.01*x
		}
		tr := ivp.Trajectory{T0: 0, T1: 0.4 + 0.1*x, Y0: y0, P: []float64{1 + 0.05*x, 0.5}}
		if i%3 == 1 {
			tr.Save = []float64{0.1, 0.2 + 0.01*x}
		}
		trs = append(trs, tr)
	}
	return laneCase{"chain", pr, trs, 0, nil}
}

// Every lane gets the bits the scalar solver gives its trajectory
// alone — outputs, save times, statistics, status, the mesh with its
// stages — for every method, lane count, with f for all lanes at once
// (the tape's lane code) or lane by lane, and with the stage sums as
// machine code or as Go loops.
func TestLanesMatchScalar(t *testing.T) {
	for _, c := range laneCases(t) {
		pr := c.pr
		for _, tb := range method.All() {
			cfg := Config{Tableau: tb, F: pr.WorkerF(), Dim: pr.Dim, RTol: fill(1e-7, pr.Dim), ATol: fill(1e-9, pr.Dim),
				NormDim: c.nd, MaxSteps: 400, Controller: control.DefaultPI(tb.Order, tb.QMin, tb.QMax)}
			sv, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			// With meshes every accepted step is the driver's own; without,
			// the common path of whole rounds takes most of them.
			wants := map[bool]*lanetest.Queue{}
			statuses := map[ode.Status]int{}
			for _, mesh := range []bool{true, false} {
				want := lanetest.NewQueue(c.trs, pr.Dim, 1, mesh)
				for i := range c.trs {
					sv.Solve(&want.Trs[i], &want.Outs[i], nil)
					statuses[want.Outs[i].Status]++
				}
				wants[mesh] = want
			}
			for _, L := range []int{1, 3, 4, 8} {
				for _, lanesF := range []bool{true, false} {
					for _, sums := range []string{"rounds", "fused", "machine code", "Go"} {
						name := fmt.Sprintf("%s %s L=%d lanesF=%v sums %s", c.name, tb.Name, L, lanesF, sums)
						var fl ode.LaneFunc
						var kernel *ode.LaneKernel
						if lanesF {
							pg := pr.Programs()
							fl, kernel = pg.FLanes, pg.Kernel
						}
						// "rounds": whole rounds in machine code where the
						// attempt is fused; "fused": the fused attempt
						// under the Go loop of the driver.
						was := ivp.UseRounds(sums == "rounds")
						ls, err := NewLanes(cfg, L, pr.NumParams, fl, kernel)
						if c.cols != nil {
							ls, err = NewSensLanes(cfg, L, pr.NumParams, ode.LaneProgram{F: fl, Kernel: kernel, Columns: c.cols}, c.nd)
						}
						ivp.UseRounds(was)
						if err != nil {
							t.Fatal(err)
						}
						if L%ode.LaneWidth == 0 && jit.HasAVX2() && (ls.jit == nil || lanesF && ls.fused == nil && c.name != "lorenz96") {
							t.Fatalf("%s: no machine code (stage sums %v, fused attempt %v), where f is lane code of one piece", name, ls.jit != nil, ls.fused != nil)
						}
						switch sums {
						case "machine code":
							ls.fused = nil
						case "Go":
							ls.fused, ls.jit = nil, nil
						}
						for _, mesh := range []bool{true, false} {
							got := lanetest.NewQueue(c.trs, pr.Dim, L, mesh)
							ls.SolveLanes(got, nil)
							got.Check(t, fmt.Sprintf("%s mesh %v", name, mesh), wants[mesh])
						}
						if rounds := ls.rounds != nil; rounds != (sums == "rounds" && ls.fused != nil) {
							t.Errorf("%s: whole rounds in machine code %v, with a fused attempt %v", name, rounds, ls.fused != nil)
						}
					}
				}
			}
			if c.name == "lorenz" && (statuses[ode.Success] == 0 || statuses[ode.MaxStepsReached] == 0) {
				t.Errorf("%s %s: statuses %v: want successes and budget stops", c.name, tb.Name, statuses)
			}
			if c.name == "blowup" && (statuses[ode.StepUnderflow] == 0 || statuses[ode.NonFinite] == 0) {
				t.Errorf("%s %s: statuses %v: want failures", c.name, tb.Name, statuses)
			}
		}
	}
}

// lorenzLanesEnsemble is the Lorenz problem file and 1024 trajectories,
// t to 10, ρ from 10 to 24.
func lorenzLanesEnsemble(b *testing.B) (*ode.Problem, []ivp.Trajectory) {
	pr := lanetest.Compiled(b, "../examples/lorenz.ode", "")
	const n = 1024
	trs := make([]ivp.Trajectory, n)
	for i := range trs {
		trs[i] = ivp.Trajectory{T0: 0, T1: 10, Y0: []float64{1, 0, 0}, P: []float64{10 + 14*float64(i)/n, 10, 8.0 / 3}}
	}
	return pr, trs
}

// BenchmarkLanesLorenz measures Tsit5 on 1024 Lorenz trajectories (t to
// 10, ρ from 10 to 24, the tape's f), one trajectory at a time and in
// four lanes: ns per trajectory step.
func BenchmarkLanesLorenz(b *testing.B) {
	pr, trs := lorenzLanesEnsemble(b)
	tb := method.Tsit5
	cfg := Config{Tableau: tb, F: pr.WorkerF(), Dim: 3, RTol: fill(1e-6, 3), ATol: fill(1e-6, 3),
		MaxSteps: 1 << 20, Controller: control.DefaultPI(tb.Order, tb.QMin, tb.QMax)}
	b.Run("scalar", func(b *testing.B) {
		sv, _ := New(cfg)
		lanetest.NewQueue(trs, 3, 1, false).BenchScalar(b, sv.Solve)
	})
	b.Run("lanes", func(b *testing.B) {
		pg := pr.Programs()
		ls, _ := NewLanes(cfg, ode.LaneWidth, 3, pg.FLanes, pg.Kernel)
		var q *lanetest.Queue
		for b.Loop() {
			q = lanetest.NewQueue(trs, 3, ode.LaneWidth, false)
			ls.SolveLanes(q, nil)
		}
		q.ReportPerStep(b)
	})
}

// BenchmarkLanesWidth compares four and eight lanes (two groups of four,
// their chains interleaved) on the Lorenz ensemble of
// BenchmarkLanesLorenz, for Tsit5 and DP8: ns per trajectory step.
func BenchmarkLanesWidth(b *testing.B) {
	pr, trs := lorenzLanesEnsemble(b)
	for _, tb := range []*method.Tableau{method.Tsit5, method.DP8} {
		cfg := Config{Tableau: tb, F: pr.WorkerF(), Dim: 3, RTol: fill(1e-6, 3), ATol: fill(1e-6, 3),
			MaxSteps: 1 << 20, Controller: control.DefaultPI(tb.Order, tb.QMin, tb.QMax)}
		for _, L := range []int{4, 8} {
			b.Run(fmt.Sprintf("%s/L=%d", tb.Name, L), func(b *testing.B) {
				pg := pr.Programs()
				ls, _ := NewLanes(cfg, L, 3, pg.FLanes, pg.Kernel)
				var q *lanetest.Queue
				for b.Loop() {
					q = lanetest.NewQueue(trs, 3, L, false)
					ls.SolveLanes(q, nil)
				}
				q.ReportPerStep(b)
			})
		}
	}
}

// The reverse replay in lanes gives every trajectory the scalar
// replayer's gradient bit for bit — with the mesh's stages or without,
// with cotangents of save times (at step ends, inside steps, at t0) or
// without, for every method and lane count, with f and the cotangent
// program in lanes or lane by lane.
func TestLaneReverseMatchesScalar(t *testing.T) {
	// lorenz and halo, where every trajectory succeeds or stops on the
	// budget, and a state wider than the fused sums' registers.
	for _, c := range append(laneCases(t)[:2], wideCase(t)) {
		pr := c.pr
		pg := pr.Programs()
		for _, tb := range method.All() {
			for _, keep := range []bool{false, true} {
				cfg, rec := recordCase(t, c, tb, keep)
				jobs := rec.Jobs(pr.Dim, pr.NumParams)
				// Save times with cotangents exactly at steps' ends inside
				// the mesh (a recording's never are) and inside a step, in
				// every third job.
				for i := range jobs {
					if j := &jobs[i]; i%3 == 1 && len(j.Mesh.H) > 5 {
						j.Save = []float64{j.Mesh.T[1], j.Mesh.T[2], 0.5 * (j.Mesh.T[3] + j.Mesh.T[4]), j.Mesh.T[5]}
						j.CotSaved = make([]float64, len(j.Save)*pr.Dim)
						for d := range j.CotSaved {
							j.CotSaved[d] = 0.1 * float64(d+1)
						}
					}
				}
				rp, err := NewReplayer(cfg, pr.NumParams, pg.VJP)
				if err != nil {
					t.Fatal(err)
				}
				want := make([][2][]float64, len(jobs))
				for i, j := range jobs {
					want[i] = [2][]float64{make([]float64, pr.Dim), make([]float64, pr.NumParams)}
					rp.Reverse(j.Mesh, j.P, j.Save, j.CotY, j.CotSaved, want[i][0], want[i][1])
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
						// "rounds": whole rounds of the walk in machine code
						// where the reversed step is fused; "fused": the
						// fused step under LaneWalk's Go loop.
						was := ivp.UseRounds(route == "rounds")
						lr, err := NewLaneReplayer(cfg, L, pr.NumParams, pg.VJP, fl, vl, fk, vk)
						ivp.UseRounds(was)
						if err != nil {
							t.Fatal(err)
						}
						if inLanes && L%ode.LaneWidth == 0 && jit.HasAVX2() && lr.fused == nil {
							t.Fatalf("L=%d: no fused reversed step, where f and the cotangent program are lane code of one piece", L)
						}
						what := fmt.Sprintf("%s %s keep=%v L=%d %s", c.name, tb.Name, keep, L, route)
						for _, again := range []string{"", " (again)"} { // the second walk finds the first's block
							q := lanetest.NewRevQueue(jobs, L, pr.Dim, pr.NumParams)
							lr.ReverseLanes(q, nil)
							q.Check(t, what+again, want)
						}
						if rounds := lr.rfused != nil; rounds != (route == "rounds" && lr.fused != nil) {
							t.Errorf("%s: whole rounds %v, fused step %v", what, rounds, lr.fused != nil)
						}
					}
				}
				if len(jobs) < 4 {
					t.Fatalf("%s %s: %d successful trajectories: too few to fill the lanes", c.name, tb.Name, len(jobs))
				}
			}
		}
	}
}

// A lane solve and a lane reverse walk allocate nothing once their
// arrays have grown: no allocation per step or per trajectory.
func TestLanesDoNotAllocate(t *testing.T) {
	for _, c := range laneCases(t)[:2] {
		pr := c.pr
		pg := pr.Programs()
		tb := method.Vern7
		cfg := Config{Tableau: tb, F: pg.F, Dim: pr.Dim, RTol: fill(1e-7, pr.Dim), ATol: fill(1e-9, pr.Dim),
			MaxSteps: 400, Controller: control.DefaultPI(tb.Order, tb.QMin, tb.QMax)}
		ls, err := NewLanes(cfg, 8, pr.NumParams, pg.FLanes, pg.Kernel)
		if err != nil {
			t.Fatal(err)
		}
		q := lanetest.NewQueue(c.trs, pr.Dim, 8, true)
		ls.SolveLanes(q, nil) // the meshes grow to their size
		if n := testing.AllocsPerRun(5, func() {
			q.Reset()
			ls.SolveLanes(q, nil)
		}); n != 0 {
			t.Errorf("%s: %v allocations per lane solve of %d trajectories", c.name, n, len(c.trs))
		}
		var jobs []ivp.ReverseJob
		for i := range q.Outs {
			if q.Outs[i].Status == ode.Success {
				jobs = append(jobs, ivp.ReverseJob{Mesh: q.Outs[i].Mesh, P: q.Trs[i].P, Save: q.Trs[i].Save, CotY: q.Outs[i].Y,
					CotSaved: q.Outs[i].Saved, GY0: make([]float64, pr.Dim), GP: make([]float64, pr.NumParams)})
			}
		}
		lr, err := NewLaneReplayer(cfg, 8, pr.NumParams, pg.VJP, pg.FLanes, pg.VJPLanes, pg.Kernel, pg.VJPKernel())
		if err != nil {
			t.Fatal(err)
		}
		rq := lanetest.NewRevQueue(jobs, 8, pr.Dim, pr.NumParams)
		lr.ReverseLanes(rq, nil)
		if n := testing.AllocsPerRun(5, func() {
			rq.Reset()
			lr.ReverseLanes(rq, nil)
		}); n != 0 {
			t.Errorf("%s: %v allocations per lane reverse walk of %d jobs", c.name, n, len(jobs))
		}
	}
}

// A lane form that does not give f's bits (hand-written wrongly, say) is
// not used: the lanes run f lane by lane, without the kernel, and still
// give the scalar solver's bits; the same for the cotangent program.
func TestLaneFormsChecked(t *testing.T) {
	c := laneCases(t)[0] // lorenz
	pr := c.pr
	pg := pr.Programs()
	off := func(t, y, p, dy []float64) {
		pg.FLanes(t, y, p, dy)
		dy[0] = math.Nextafter(dy[0], math.Inf(1)) // one lane's one value, one ulp
	}
	cfg := Config{Tableau: method.Tsit5, F: pg.F, Dim: pr.Dim, RTol: fill(1e-7, pr.Dim), ATol: fill(1e-9, pr.Dim),
		MaxSteps: 400, Controller: control.DefaultPI(5, 0, 0)}
	ls, err := NewLanes(cfg, 8, pr.NumParams, off, pg.Kernel)
	if err != nil {
		t.Fatal(err)
	}
	if ls.flanes != nil || ls.fused != nil {
		t.Fatal("a lane form with other bits than f's was used")
	}
	sv, _ := New(cfg)
	want := lanetest.NewQueue(c.trs, pr.Dim, 1, false)
	for i := range c.trs {
		sv.Solve(&want.Trs[i], &want.Outs[i], nil)
	}
	got := lanetest.NewQueue(c.trs, pr.Dim, 8, false)
	ls.SolveLanes(got, nil)
	for i := range c.trs {
		if d := lanetest.SameOutput(&got.Outs[i], &want.Outs[i]); d != "" {
			t.Fatalf("trajectory %d: %s", i, d)
		}
	}
	if !lanecheck.FuncAgrees(pg.F, pg.FLanes, pr.Dim, pr.NumParams) || !lanecheck.VJPAgrees(pg.VJP, pg.VJPLanes, pr.Dim, pr.NumParams) {
		t.Error("the tape's lane forms do not pass the check")
	}
	badVJP := func(t, y, p, u, gy, gp []float64) {
		pg.VJPLanes(t, y, p, u, gy, gp)
		gp[len(gp)-1] = 0
	}
	if lanecheck.VJPAgrees(pg.VJP, badVJP, pr.Dim, pr.NumParams) {
		t.Error("a cotangent lane form with other bits passes the check")
	}
}

// BenchmarkLanesSmall measures a small ensemble — 16 Lorenz
// trajectories to t = 1, as a fit's update solves them — with the lane
// solver built for each solve, as an engine's worker is: the cost of
// building the machine code (the fused attempt, and the code of whole
// rounds) against the solve itself.
func BenchmarkLanesSmall(b *testing.B) {
	pr, trs := lorenzLanesEnsemble(b)
	trs = trs[:16]
	for i := range trs {
		trs[i].T1 = 1
	}
	tb := method.Tsit5
	cfg := Config{Tableau: tb, F: pr.WorkerF(), Dim: 3, RTol: fill(1e-6, 3), ATol: fill(1e-6, 3),
		MaxSteps: 1 << 20, Controller: control.DefaultPI(tb.Order, tb.QMin, tb.QMax)}
	for _, rounds := range []bool{false, true} {
		b.Run(fmt.Sprintf("rounds=%v", rounds), func(b *testing.B) {
			was := ivp.UseRounds(rounds)
			defer ivp.UseRounds(was)
			pg := pr.Programs()
			for b.Loop() {
				ls, _ := NewLanes(cfg, 2*ode.LaneWidth, 3, pg.FLanes, pg.Kernel)
				ls.SolveLanes(lanetest.NewQueue(trs, 3, 2*ode.LaneWidth, false), nil)
			}
		})
	}
}
