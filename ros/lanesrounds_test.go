package ros

import (
	"fmt"
	"testing"

	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/internal/lanetest"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/method"
)

// The reverse walk with whole rounds in machine code gives every job
// the scalar replayer's gradient bit for bit, as the Go walk does: save
// times inside steps and at their ends, with and without cotangents,
// meshes of different lengths in one batch, a mesh of one step, and the
// meshes of solves that stopped short (the step budget), for both
// methods, with and without dense saves (whose walk keeps Go's loop),
// four and eight lanes, twice over (the second walk finds the first's
// block). The rounds are taken wherever the step is fused, and not
// where UseRounds is off; a walk in rounds allocates nothing.
func TestLaneReverseRounds(t *testing.T) {
	if !jit.HasAVX2() {
		t.Skip("no AVX2: the lane reverse replay does not run here")
	}
	roundRuns := 0
	for _, c := range rosCases(t) {
		pr := c.pr
		pg := pr.Programs()
		trs := withOneStep(c.trs)
		for _, tb := range method.AllRosenbrock() {
			for _, dense := range []bool{false, true} {
				cfg := caseConfig(&c, tb, dense)
				sv, err := New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				rec := lanetest.NewQueue(trs, pr.Dim, 1, true)
				var jobs []ivp.ReverseJob
				short, ones := 0, 0
				for i := range trs {
					out := &rec.Outs[i]
					sv.Solve(&rec.Trs[i], out, nil)
					if out.Mesh == nil || len(out.Mesh.H) == 0 {
						continue
					}
					if !out.Status.OK() {
						short++
					}
					if len(out.Mesh.H) == 1 {
						ones++
					}
					job := ivp.ReverseJob{Mesh: out.Mesh, P: trs[i].P, Save: trs[i].Save, CotY: out.Y}
					if i%2 == 0 && len(trs[i].Save) > 0 && out.Status.OK() {
						job.CotSaved = out.Saved
					}
					jobs = append(jobs, job)
				}
				if c.name == "robertson" && (short == 0 || ones == 0) {
					t.Fatalf("%s %s: %d meshes stopped short, %d of one step: want both", c.name, tb.Name, short, ones)
				}
				rp, err := NewReplayer(cfg, pr.NumParams, pg)
				if err != nil {
					t.Fatal(err)
				}
				want := make([][2][]float64, len(jobs))
				for i, j := range jobs {
					want[i] = [2][]float64{make([]float64, pr.Dim), make([]float64, pr.NumParams)}
					rp.Reverse(j.Mesh, j.P, j.Save, j.CotY, j.CotSaved, want[i][0], want[i][1])
				}
				fwant := rec.FwdJobs(pr.Dim)
				for _, j := range fwant {
					rp.Forward(j.Mesh, j.Y0, j.P, j.Save, j.YOut, j.Saved)
				}
				lp := LanePrograms{F: pg.FLanes, Kernel: pg.Kernel, JacY: pg.JacYLanes, DfDt: pg.DfDtLanes}
				for _, L := range []int{4, 8} {
					for _, route := range []string{"rounds", "go"} {
						was := ivp.UseRounds(route == "rounds")
						lr, err := NewLaneReplayer(cfg, L, pr.NumParams, pg, lp)
						ivp.UseRounds(was)
						if err != nil {
							t.Fatal(err)
						}
						what := fmt.Sprintf("%s %s dense=%v L=%d %s", c.name, tb.Name, dense, L, route)
						for _, again := range []string{"", " (again)"} {
							q := lanetest.NewRevQueue(jobs, L, pr.Dim, pr.NumParams)
							lr.ReverseLanes(q, nil)
							q.Check(t, what+again, want)
						}
						wantRounds := route == "rounds" && !dense && lr.Fused() && lr.ls.code.fused && !lr.ls.fsal
						if lr.Rounds() != wantRounds {
							t.Errorf("%s: whole rounds %v, want %v", what, lr.Rounds(), wantRounds)
						}
						if lr.Rounds() {
							roundRuns++
							// Once the lanes' arrays have grown, a walk
							// in rounds allocates nothing.
							q := lanetest.NewRevQueue(jobs, L, pr.Dim, pr.NumParams)
							if allocs := testing.AllocsPerRun(2, func() {
								q.Reset()
								lr.ReverseLanes(q, nil)
							}); allocs != 0 {
								t.Errorf("%s: %v allocations per walk", what, allocs)
							}
							// The lanes the rounds leave behind give the
							// next forward replay Forward's bits (a fit
							// alternates the two).
							fq := &lanetest.FwdQueue{Jobs: rec.FwdJobs(pr.Dim)}
							lr.ForwardLanes(fq, nil)
							fq.Check(t, what+" then forward", fwant)
						}
					}
				}
			}
		}
	}
	if roundRuns == 0 {
		t.Error("no case ran the reverse walk in whole rounds")
	}
}

// fwdJobs returns a forward job for every recording of q with a mesh of
// at least one step (those of solves stopped short too), as
// lanetest.Queue.FwdJobs makes them: on a copy of the mesh, at a point
// moved from the recording's; the mesh asks for the stages where keep
// is set (a Rosenbrock replay keeps none, and Go completes each step).
func fwdJobs(q *lanetest.Queue, dim int, keep bool) []ivp.ForwardJob {
	var js []ivp.ForwardJob
	for i := range q.Outs {
		ms := q.Outs[i].Mesh
		if ms == nil || len(ms.H) == 0 {
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
		var save []float64
		for _, s := range tr.Save {
			if s <= ms.End {
				save = append(save, s)
			}
		}
		ms = ms.Clone()
		ms.KeepStages = keep
		js = append(js, ivp.ForwardJob{Mesh: ms, Y0: y0, P: p, Save: save,
			YOut: make([]float64, dim), Saved: make([]float64, len(save)*dim)})
	}
	return js
}

// The forward replay with whole rounds in machine code gives every job
// Forward's bits, as the Go loop does, on the same kinds of meshes as
// TestLaneReverseRounds (save times inside steps and at their ends,
// meshes of different lengths, one step, solves stopped short), both
// methods, with and without dense saves, four and eight lanes, twice
// over; the rounds are taken wherever the attempt is fused, not where
// UseRounds is off, and allocate nothing.
func TestLaneForwardRounds(t *testing.T) {
	if !jit.HasAVX2() {
		t.Skip("no AVX2: the lane replay does not run here")
	}
	roundRuns := 0
	for _, c := range rosCases(t) {
		pr := c.pr
		pg := pr.Programs()
		trs := withOneStep(c.trs)
		for _, tb := range method.AllRosenbrock() {
			for _, dense := range []bool{false, true} {
				cfg := caseConfig(&c, tb, dense)
				sv, err := New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				rec := lanetest.NewQueue(trs, pr.Dim, 1, true)
				for i := range trs {
					sv.Solve(&rec.Trs[i], &rec.Outs[i], nil)
				}
				rp, err := NewReplayer(cfg, pr.NumParams, pg)
				if err != nil {
					t.Fatal(err)
				}
				lp := LanePrograms{F: pg.FLanes, Kernel: pg.Kernel, JacY: pg.JacYLanes, DfDt: pg.DfDtLanes}
				for _, keep := range []bool{false, true} {
					want := fwdJobs(rec, pr.Dim, keep)
					for _, j := range want {
						rp.Forward(j.Mesh, j.Y0, j.P, j.Save, j.YOut, j.Saved)
					}
					for _, L := range []int{4, 8} {
						for _, route := range []string{"rounds", "go"} {
							lr, err := NewLaneReplayer(cfg, L, pr.NumParams, pg, lp)
							if err != nil {
								t.Fatal(err)
							}
							what := fmt.Sprintf("%s %s dense=%v keep=%v L=%d %s", c.name, tb.Name, dense, keep, L, route)
							for k, again := range []string{"", " (again)"} {
								q := &lanetest.FwdQueue{Jobs: fwdJobs(rec, pr.Dim, keep)}
								was := ivp.UseRounds(route == "rounds")
								lr.ForwardLanes(q, nil) // (the first call makes the walk)
								ivp.UseRounds(was)
								q.Check(t, what+again, want)
								if k == 1 && lr.ls.rblock != nil {
									if allocs := testing.AllocsPerRun(2, func() {
										q.Reset()
										lr.ForwardLanes(q, nil)
									}); allocs != 0 {
										t.Errorf("%s: %v allocations per replay", what, allocs)
									}
								}
							}
							wantRounds := route == "rounds" && lr.ls.code.fused && !lr.ls.fsal
							if rounds := lr.ls.rblock != nil; rounds != wantRounds {
								t.Errorf("%s: whole rounds %v, want %v", what, rounds, wantRounds)
							}
							if lr.ls.rblock != nil {
								roundRuns++
							}
						}
					}
				}
			}
		}
	}
	if roundRuns == 0 {
		t.Error("no case ran the forward replay in whole rounds")
	}
}

// withOneStep returns trs and, after them, a copy of the first whose
// span is one step long (no save times).
func withOneStep(trs []ivp.Trajectory) []ivp.Trajectory {
	out := append([]ivp.Trajectory(nil), trs...)
	one := out[0]
	one.T1, one.Save = one.T0+1e-9, nil
	return append(out, one)
}
