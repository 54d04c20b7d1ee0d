package erk

import (
	"fmt"
	"math"
	"testing"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/internal/lanetest"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
)

// partialJobs returns reverse jobs on the halo's recorded meshes whose
// save times make the walks take partial steps in every arrangement:
// several inside one step, inside consecutive steps, inside the first
// and the last, together with saves at a step's end and at t0, the same
// save time twice (at a step's end and inside a step); with
// cotangents (some rows −0 or +0, so that a partial step that cleared
// ȳ instead of adding to it shows in the sign of a zero) and without;
// on the full meshes, on meshes cut short (a trajectory that failed
// part way: save times past the end reach nothing), one of a single
// step, and one of none.
func partialJobs(meshes []*ivp.Mesh, ps [][]float64, dim, m int) []ivp.ReverseJob {
	var jobs []ivp.ReverseJob
	for i, full := range meshes {
		n := len(full.H)
		for v := range 6 {
			ms := full
			if v >= 3 { // cut short after a third, one step or none
				c := []int{n / 3, 1, 0}[v-3]
				ms = &ivp.Mesh{T: full.T[:c+1], H: full.H[:c], Y: full.Y[:(c+1)*dim], End: full.T[c], K: full.K, KeepStages: full.KeepStages}
			}
			T := full.T
			in := func(k int, f float64) float64 { return T[k] + f*(T[k+1]-T[k]) }
			save := []float64{T[0], in(0, 0.5), in(1, 0.25), in(1, 0.5), in(1, 0.75), T[2], in(2, 0.5), in(3, 0.3),
				in(n/3, 0.2), in(n/3, 0.6), T[n/3+1], in(n/2, 0.5), in(n-1, 0.1), in(n-1, 0.9), T[n]}
			if v%3 == 1 { // the same save time twice: at a step's end (Go adds the two there), inside a step
				save = append(save[:6:6], append([]float64{T[2]}, save[5:]...)...)
				save = append(save[:10:10], append([]float64{save[9]}, save[9:]...)...)
			}
			job := ivp.ReverseJob{Mesh: ms, P: ps[i], Save: save, CotY: make([]float64, dim)}
			for d := range job.CotY {
				job.CotY[d] = 0.3 - 0.1*float64(d)
			}
			job.CotY[1] = math.Copysign(0, -1)
			if v%3 != 2 { // with cotangents
				job.CotSaved = make([]float64, len(save)*dim)
				for e := range job.CotSaved {
					switch {
					case e%7 == 3:
						job.CotSaved[e] = math.Copysign(0, -1)
					case e%11 == 5:
						job.CotSaved[e] = 0
					default:
						job.CotSaved[e] = 0.05*float64(e%13) - 0.2
					}
				}
				if v%3 == 1 { // a save time with a cotangent of −0 throughout, inside step 1
					for d := range dim {
						job.CotSaved[3*dim+d] = math.Copysign(0, -1)
					}
				}
			}
			jobs = append(jobs, job)
		}
	}
	for i := range jobs {
		jobs[i].GY0, jobs[i].GP = make([]float64, dim), make([]float64, m)
	}
	return jobs
}

// The partial steps of the save times inside a step, taken in the
// lanes (as round items in the code of whole rounds, and in LaneWalk's
// Go loop), give every job the scalar walk's gradient bit for bit, in
// every arrangement of partialJobs, for each method and lane count.
func TestLanePartialsMatchScalar(t *testing.T) {
	c := laneCases(t)[1] // halo
	pr := c.pr
	pg := pr.Programs()
	for _, tb := range []*method.Tableau{method.Tsit5, method.DP5, method.Vern7, method.DP8} {
		cfg := Config{Tableau: tb, F: pg.F, Dim: pr.Dim, RTol: fill(1e-6, pr.Dim), ATol: fill(1e-8, pr.Dim),
			MaxSteps: 400, Controller: control.DefaultPI(tb.Order, tb.QMin, tb.QMax)}
		sv, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		rec := lanetest.NewQueue(c.trs, pr.Dim, 1, true)
		var meshes []*ivp.Mesh
		var ps [][]float64
		for i := range c.trs {
			sv.Solve(&rec.Trs[i], &rec.Outs[i], nil)
			if rec.Outs[i].Status == ode.Success && len(rec.Outs[i].Mesh.H) >= 15 {
				meshes, ps = append(meshes, rec.Outs[i].Mesh), append(ps, rec.Trs[i].P)
			}
		}
		if len(meshes) < 4 {
			t.Fatalf("%s: %d meshes of 15 steps or more", tb.Name, len(meshes))
		}
		jobs := partialJobs(meshes, ps, pr.Dim, pr.NumParams)
		rp, err := NewReplayer(cfg, pr.NumParams, pg.VJP)
		if err != nil {
			t.Fatal(err)
		}
		want := make([][2][]float64, len(jobs))
		for i, j := range jobs {
			want[i] = [2][]float64{make([]float64, pr.Dim), make([]float64, pr.NumParams)}
			rp.Reverse(j.Mesh, j.P, j.Save, j.CotY, j.CotSaved, want[i][0], want[i][1])
		}
		for _, L := range []int{4, 8} {
			for _, route := range []string{"rounds", "fused"} {
				was := ivp.UseRounds(route == "rounds")
				lr, err := NewLaneReplayer(cfg, L, pr.NumParams, pg.VJP, pg.FLanes, pg.VJPLanes, pg.Kernel, pg.VJPKernel())
				ivp.UseRounds(was)
				if err != nil {
					t.Fatal(err)
				}
				what := fmt.Sprintf("%s L=%d %s", tb.Name, L, route)
				for _, again := range []string{"", " (again)"} {
					q := lanetest.NewRevQueue(jobs, L, pr.Dim, pr.NumParams)
					lr.ReverseLanes(q, nil)
					q.Check(t, what+again, want)
				}
				if jit.HasAVX2() && route == "rounds" && (lr.rfused == nil || lr.acc == nil) {
					t.Errorf("%s: the partial steps are not round items (whole rounds %v)", what, lr.rfused != nil)
				}
			}
		}
	}
}
