package ros

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/internal/lanetest"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
)

// pivots is stiff and rotating: W = I − hγJ has off-diagonal entries
// larger than its diagonal once hγc > 1, so the LU exchanges rows, and
// which rows depends on each lane's h and c. Its forcing depends on t,
// so f_t is not zero.
const pivots = `name pivots
param c = 50, k = 1000
state u = 1, v = 0, w = 0.5, z = 0
span 0 1
u' = -c*v - u
v' = c*u - 2*v + w
w' = -k*(w - cos(10*t)) + 3*z
z' = 0.5*u - 20*z + v*w
`

// singular is y' = λ·y: with H0 = 0.1, λ = 1/(γ·H0) makes the first W
// singular (TestSingularWRecovers), which the lane's attempt must
// reject as the scalar one does.
const singular = `name singular
param lam = -1
state y = 1, x = 0
span 0 0.05
y' = lam*y
x' = y - x
`

// rosCase is a problem and the trajectories the lane tests run on it.
type rosCase struct {
	name string
	pr   *ode.Problem
	trs  []ivp.Trajectory
	h0   float64
	// steps is the step budget (0: 300).
	steps int
	// want lists statuses and events the scalar solver must show on
	// these trajectories, so that the lanes are tested on them.
	want func(outs []ivp.Output) string
}

func rosCases(t testing.TB) []rosCase {
	rob := lanetest.Compiled(t, "../examples/robertson.ode", "")
	var trs []ivp.Trajectory
	for i := range 11 {
		x := float64(i)
		tr := ivp.Trajectory{T0: 0, T1: 1 + 40*x*x, Y0: []float64{1, 0, 0}, P: []float64{0.02 + 0.004*x, 3e7, 1e4}}
		switch i % 4 {
		case 1:
			tr.Save = []float64{0, 0.5, 3 + x, tr.T1}
		case 2:
			tr.T0, tr.T1 = 1e3, 1e3+5+x // a span far from t = 0
			tr.Y0 = []float64{0.9, 1e-5, 0.1 - 1e-5}
			tr.Save = []float64{1e3 + 1, 1e3 + 2.5}
		case 3:
			tr.T1 = 1e5 // stopped by the step budget
		}
		trs = append(trs, tr)
	}
	cs := []rosCase{{name: "robertson", pr: rob, trs: trs, steps: 60, want: func(outs []ivp.Output) string {
		return needStatuses(outs, ode.Success, ode.MaxStepsReached)
	}}}
	piv := lanetest.Compiled(t, "pivots.ode", pivots)
	trs = nil
	for i := range 9 {
		x := float64(i)
		tr := ivp.Trajectory{T0: 0, T1: 0.3 + 0.1*x, Y0: []float64{1, 0.1 * x, 0.5, 0}, P: []float64{5 + 20*x, 100 + 300*x}}
		if i%2 == 0 {
			tr.Save = []float64{0.05, 0.2}
		}
		if i == 4 {
			tr.T0, tr.T1 = 1, 0.5 // backwards
			tr.Save = []float64{0.9}
		}
		trs = append(trs, tr)
	}
	cs = append(cs, rosCase{name: "pivots", pr: piv, trs: trs, want: func(outs []ivp.Output) string {
		return needStatuses(outs, ode.Success)
	}})
	// The same with a forcing polynomial in t: f is lane code of one
	// piece (the attempt fused) and depends on t.
	poly := lanetest.Compiled(t, "pivots-poly.ode", strings.Replace(pivots, "cos(10*t)", "(1 - 3*t*t)", 1))
	cs = append(cs, rosCase{name: "pivots-poly", pr: poly, trs: trs})
	hires := lanetest.Compiled(t, "../examples/hires.ode", "")
	trs = nil
	for i := range 5 {
		y0 := append([]float64(nil), hires.Y0...)
		y0[0] -= 0.01 * float64(i)
		y0[1] += 0.01 * float64(i)
		trs = append(trs, ivp.Trajectory{T0: 0, T1: 5 + 10*float64(i), Y0: y0, Save: []float64{2}})
	}
	cs = append(cs, rosCase{name: "hires", pr: hires, trs: trs, want: func(outs []ivp.Output) string {
		return needStatuses(outs, ode.Success)
	}})
	sg := lanetest.Compiled(t, "singular.ode", singular)
	trs = nil
	for i := range 6 {
		lam := -1 - float64(i)
		if i == 2 || i == 5 {
			lam = 1 / (method.Rodas5P.Gamma * 0.1)
		}
		trs = append(trs, ivp.Trajectory{T0: 0, T1: 0.05, Y0: []float64{1, 0}, P: []float64{lam}})
	}
	cs = append(cs, rosCase{name: "singular", pr: sg, trs: trs, h0: 0.1, want: func(outs []ivp.Output) string {
		if outs[2].Stats.Rejected == 0 {
			return "no rejection where W is singular"
		}
		return needStatuses(outs, ode.Success)
	}})
	vdp := lanetest.Compiled(t, "../examples/vanderpol.ode", "")
	trs = nil
	for i := range 7 {
		trs = append(trs, ivp.Trajectory{T0: 0, T1: 2 + float64(i), Y0: []float64{2, 0}, P: []float64{1e3 * float64(1+i)}, Save: []float64{1}})
	}
	cs = append(cs, rosCase{name: "vanderpol", pr: vdp, trs: trs})
	return cs
}

// needStatuses reports which of the statuses no output has.
func needStatuses(outs []ivp.Output, want ...ode.Status) string {
	seen := map[ode.Status]bool{}
	for _, o := range outs {
		seen[o.Status] = true
	}
	for _, s := range want {
		if !seen[s] {
			return fmt.Sprintf("no trajectory ends with %v", s)
		}
	}
	return ""
}

func caseConfig(c *rosCase, tb *method.Rosenbrock, dense bool) Config {
	pg := c.pr.Programs()
	n := c.pr.Dim
	steps := c.steps
	if steps == 0 {
		steps = 300
	}
	return Config{Tableau: tb, F: pg.F, JacY: pg.JacY, DfDt: pg.DfDt, Dim: n, RTol: fill(1e-6, n), ATol: fill(1e-9, n),
		H0: c.h0, MaxSteps: steps, DenseSave: dense, Controller: control.DefaultPI(tb.EstimateOrder(), tb.QMin, tb.QMax)}
}

// Every lane gets the bits the scalar solver gives its trajectory alone
// — outputs, save times (re-stepped and dense), statistics, status,
// mesh — for both methods, every lane count, with f for all lanes at
// once (the tape's lane code) or lane by lane, with the attempts as
// machine code (the stages in registers, or from memory as for large
// systems) or on the scalar solvers.
func TestLanesMatchScalar(t *testing.T) {
	for _, c := range rosCases(t) {
		for _, tb := range method.AllRosenbrock() {
			for _, dense := range []bool{false, true} {
				cfg := caseConfig(&c, tb, dense)
				sv, err := New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				want := lanetest.NewQueue(c.trs, c.pr.Dim, 1, true)
				for i := range c.trs {
					sv.Solve(&want.Trs[i], &want.Outs[i], nil)
				}
				if c.want != nil && tb == method.Rodas5P {
					if d := c.want(want.Outs); d != "" {
						t.Errorf("%s %s: the scalar solves do not test what they should: %s", c.name, tb.Name, d)
					}
				}
				for _, L := range []int{1, 3, 4, 8} {
					for _, form := range []string{"fused", "registers", "memory", "no lane f"} {
						memoryStages = form == "memory"
						name := fmt.Sprintf("%s %s dense=%v L=%d %s", c.name, tb.Name, dense, L, form)
						pg := c.pr.Programs()
						var lp LanePrograms
						switch form {
						case "fused":
							lp = LanePrograms{F: pg.FLanes, Kernel: pg.Kernel, JacY: pg.JacYLanes, DfDt: pg.DfDtLanes}
						case "registers", "memory":
							lp = LanePrograms{F: pg.FLanes}
						}
						ls, err := NewLanes(cfg, L, c.pr.NumParams, lp)
						memoryStages = false
						if err != nil {
							t.Fatal(err)
						}
						wantCode := L%ode.LaneWidth == 0 && jit.HasAVX2()
						wantFused := wantCode && form == "fused" && pg.Kernel != nil
						if code, fused := ls.MachineCode(); code != wantCode || fused != wantFused {
							t.Fatalf("%s: machine code %v, fused %v; want %v, %v", name, code, fused, wantCode, wantFused)
						}
						if form == "fused" && wantCode && (ls.lp.JacY == nil || c.pr.Programs().DfDt != nil && ls.lp.DfDt == nil) {
							t.Errorf("%s: J and f_t lane by lane", name)
						}
						got := lanetest.NewQueue(c.trs, c.pr.Dim, L, true)
						ls.SolveLanes(got, nil)
						got.Check(t, name, want)
					}
				}
			}
		}
	}
}

// chainCase is the ring of chainSrc with 16 states (above regMaxDim: its
// stages, and its sensitivity columns', run from memory) and trajectories
// with their own e, a, c, spans and save times.
func chainCase(t testing.TB) rosCase {
	const n = 16
	pr := lanetest.Compiled(t, "chain16.ode", lanetest.StiffRing(fmt.Sprintf("chain%d", n), n, 1))
	var trs []ivp.Trajectory
	for i := range 7 {
		x := float64(i)
		y0 := make([]float64, n)
		for d := range y0 {
			y0[d] = 1 - 0.03*float64(d) + 0.01*x
		}
		tr := ivp.Trajectory{T0: 0, T1: 0.1 + 0.03*x, Y0: y0, P: []float64{1 + 0.5*x, 300 + 200*x, 2 - 0.2*x}}
		if i%2 == 0 {
			tr.Save = []float64{0.01, 0.08}
		}
		if i == 3 {
			tr.T1 = 20 // stopped by the step budget
		}
		trs = append(trs, tr)
	}
	return rosCase{name: "chain16", pr: pr, trs: trs, steps: 400, want: func(outs []ivp.Output) string {
		return needStatuses(outs, ode.Success, ode.MaxStepsReached)
	}}
}

// With forward sensitivities (a parameter column and an initial-value
// column) every lane gets the scalar solver's bits too: the augmented
// state, its save times, statistics and status, with the tangents for
// all lanes at once (the tape's lane code) or lane by lane, with the
// stages (the state's and the columns') in registers or from memory —
// the form of systems above regMaxDim components, which chain16 is.
func TestLanesSensMatchScalar(t *testing.T) {
	// ∂f/∂c = 1/(2·sqrt(c)) is +Inf at c = 0: the state stays finite,
	// its sensitivity does not, and every attempt is rejected (the norm's
	// test covers the columns).
	sq := lanetest.Compiled(t, "sqrtp.ode", "name sqrtp\nparam c = 1\nstate y = 1, z = 0\nspan 0 1\ny' = -y + sqrt(c)\nz' = y - 2*z\n")
	var sqTrs []ivp.Trajectory
	for i := range 6 {
		sqTrs = append(sqTrs, ivp.Trajectory{T0: 0, T1: 1, Y0: []float64{1, 0}, P: []float64{float64(i % 3)}})
	}
	cases := append(rosCases(t), rosCase{name: "sqrtp", pr: sq, trs: sqTrs}, chainCase(t))
	fusedRuns := 0 // the cases whose attempt ran as one function
	defer func() {
		if jit.HasAVX2() && fusedRuns == 0 {
			t.Error("no case ran with the tangents in the attempt's code")
		}
	}()
	for _, c := range cases {
		pr := c.pr
		if pr.NumParams == 0 {
			continue
		}
		n := pr.Dim
		w := [][]float64{make([]float64, pr.NumParams), make([]float64, pr.NumParams)}
		w[0][0] = 1 // ∂/∂p_0; the second column is ∂/∂y0_{n-1} (w = 0)
		var trs []ivp.Trajectory
		for _, tr := range c.trs {
			y0 := append(append([]float64(nil), tr.Y0...), make([]float64, 2*n)...)
			y0[n+n+n-1] = 1
			tr.Y0 = y0
			trs = append(trs, tr)
		}
		big := n > regMaxDim
		Ls := []int{1, 3, 4, 8}
		if big {
			Ls = []int{4, 8} // (L = 1, 3: each lane on a scalar Solver, as for the small systems)
		}
		for _, tb := range method.AllRosenbrock() {
			for _, dense := range []bool{false, true} {
				cfg := caseConfig(&c, tb, dense)
				pg := pr.Programs()
				cfg.NS, cfg.SensW, cfg.JVP, cfg.JVPJacY, cfg.JVPDfDt = 2, w, pg.JVP, pg.JVPJacY, pg.JVPDfDt
				sv, err := New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				want := lanetest.NewQueue(trs, 3*n, 1, true)
				for i := range trs {
					sv.Solve(&want.Trs[i], &want.Outs[i], nil)
				}
				if c.name == "sqrtp" && (want.Outs[0].Status == ode.Success || want.Outs[1].Status != ode.Success) {
					t.Fatalf("sqrtp %s: statuses %v, %v: want a failure where the sensitivity is not finite", tb.Name, want.Outs[0].Status, want.Outs[1].Status)
				}
				if c.want != nil && tb == method.Rodas5P {
					if d := c.want(want.Outs); d != "" {
						t.Errorf("%s %s: the scalar solves do not test what they should: %s", c.name, tb.Name, d)
					}
				}
				for _, L := range Ls {
					code := L%ode.LaneWidth == 0 && jit.HasAVX2()
					forms := []string{"registers", "memory"}
					if big || !code {
						forms = forms[1:] // one form
					}
					for _, form := range forms {
						for _, progs := range []string{"kernels", "lanes", "none"} {
							inLanes := progs != "none"
							name := fmt.Sprintf("%s %s dense=%v L=%d %s programs %s", c.name, tb.Name, dense, L, form, progs)
							var lp LanePrograms
							if inLanes {
								lp = LanePrograms{F: pg.FLanes, JacY: pg.JacYLanes, DfDt: pg.DfDtLanes,
									JVP: pg.JVPLanes, JVPJacY: pg.JVPJacYLanes, JVPDfDt: pg.JVPDfDtLanes}
							}
							if progs == "kernels" {
								// f's and the tangent program's bodies in the attempt: one function.
								lp.Kernel, lp.JVPKernel = pg.Kernel, pg.JVPKernel()
							}
							memoryStages = form == "memory"
							ls, err := NewLanes(cfg, L, pr.NumParams, lp)
							memoryStages = false
							if err != nil {
								t.Fatal(err)
							}
							// (Unless f's and the tangents' bodies at every stage would
							// pass the bound: chain16's do.)
							wantFused := code && progs == "kernels" && lp.Kernel != nil && lp.JVPKernel != nil &&
								bodiesEstimate(tb, n, 2, L, lp.Kernel, lp.JVPKernel) <= laneMaxCode
							if got, fused := ls.MachineCode(); got != code || fused != wantFused {
								t.Fatalf("%s: machine code %v, fused %v: want %v, %v", name, got, fused, code, wantFused)
							}
							if wantFused {
								fusedRuns++
							}
							if inLanes && code && (ls.lp.JVP == nil || ls.lp.JVPJacY == nil || ls.lp.JVPDfDt == nil) {
								t.Errorf("%s: the tangents or M_c lane by lane", name)
							}
							got := lanetest.NewQueue(trs, 3*n, L, true)
							ls.SolveLanes(got, nil)
							got.Check(t, name, want)
						}
					}
				}
			}
		}
	}
}

// The reverse replay in lanes gives every trajectory the scalar
// replayer's gradient bit for bit — with cotangents of save times (at
// step ends, inside steps) or without, for both methods and every lane
// count, with the programs in lanes or lane by lane.
func TestLaneReverseMatchesScalar(t *testing.T) {
	if !jit.HasAVX2() {
		t.Skip("no AVX2: the lane reverse replay does not run here")
	}
	fusedRuns := 0 // the cases whose sweep ran as one function
	defer func() {
		if fusedRuns == 0 {
			t.Error("no case ran with the cotangent programs in the sweep's code")
		}
	}()
	for _, c := range rosCases(t) {
		pr := c.pr
		pg := pr.Programs()
		for _, tb := range method.AllRosenbrock() {
			for _, dense := range []bool{false, true} {
				cfg := caseConfig(&c, tb, dense)
				cfg.MaxSteps = 20000 // every trajectory reaches its end: only those are reversed
				sv, err := New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				rec := lanetest.NewQueue(c.trs, pr.Dim, 1, true)
				for i := range c.trs {
					sv.Solve(&rec.Trs[i], &rec.Outs[i], nil)
				}
				jobs := rec.Jobs(pr.Dim, pr.NumParams)
				if len(jobs) < 4 {
					t.Fatalf("%s %s: %d successful trajectories: too few to fill the lanes", c.name, tb.Name, len(jobs))
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
				for _, L := range []int{4, 8} {
					// The programs' bodies in the sweep (one function), their
					// lane forms between its pieces, or lane by lane.
					for _, progs := range []string{"kernels", "lanes", "none"} {
						inLanes := progs != "none"
						lpg := *pg
						var lp LanePrograms
						if inLanes {
							lp = LanePrograms{F: pg.FLanes, Kernel: pg.Kernel, JacY: pg.JacYLanes, DfDt: pg.DfDtLanes}
						} else {
							lpg.VJPLanes, lpg.JVPVJPLanes, lpg.DfDtVJPLanes = nil, nil, nil
						}
						if progs != "kernels" {
							lpg.VJPKernel, lpg.JVPVJPKernel, lpg.DfDtVJPKernel = nil, nil, nil
						}
						lr, err := NewLaneReplayer(cfg, L, pr.NumParams, &lpg, lp)
						if err != nil {
							t.Fatal(err)
						}
						if inLanes && (lr.vjpL == nil || lr.jvpvjpL == nil || lr.dfdtvjpL == nil) {
							t.Errorf("%s %s: a cotangent program lane by lane", c.name, tb.Name)
						}
						kernels := progs == "kernels" && pg.VJPKernel() != nil && pg.JVPVJPKernel() != nil && pg.DfDtVJPKernel() != nil
						if lr.Fused() != kernels {
							t.Errorf("%s %s L=%d %s: fused %v, want %v", c.name, tb.Name, L, progs, lr.Fused(), kernels)
						}
						if lr.Fused() {
							fusedRuns++
						}
						q := lanetest.NewRevQueue(jobs, L, pr.Dim, pr.NumParams)
						lr.ReverseLanes(q, nil)
						q.Check(t, fmt.Sprintf("%s %s dense=%v L=%d programs %s", c.name, tb.Name, dense, L, progs), want)
					}
				}
			}
		}
	}
}

// A lane solve allocates nothing once its solver exists.
func TestLanesDoNotAllocate(t *testing.T) {
	c := rosCases(t)[0]
	cfg := caseConfig(&c, method.Rodas5P, false)
	pg := c.pr.Programs()
	ls, err := NewLanes(cfg, 8, c.pr.NumParams, LanePrograms{F: pg.FLanes, Kernel: pg.Kernel, JacY: pg.JacYLanes, DfDt: pg.DfDtLanes})
	if err != nil {
		t.Fatal(err)
	}
	q := lanetest.NewQueue(c.trs, c.pr.Dim, 8, false)
	allocs := testing.AllocsPerRun(3, func() {
		q.Reset()
		ls.SolveLanes(q, nil)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per lane solve", allocs)
	}
}

// robertsonLanes is Robertson's problem file and n trajectories, t to
// 1e5, k1 from 0.02 to 0.06 (bench/wp's ensemble).
func robertsonLanes(b *testing.B, n int) (*ode.Problem, []ivp.Trajectory) {
	pr := lanetest.Compiled(b, "../examples/robertson.ode", "")
	trs := make([]ivp.Trajectory, n)
	for i := range trs {
		trs[i] = ivp.Trajectory{T0: 0, T1: 1e5, Y0: []float64{1, 0, 0}, P: []float64{0.02 + 0.04*float64(i)/float64(n), 3e7, 1e4}}
	}
	return pr, trs
}

// BenchmarkLanesRobertson measures Rodas5P on 256 Robertson
// trajectories (rtol 1e-6, atol 1e-10) one at a time and in eight
// lanes: ns per trajectory step.
func BenchmarkLanesRobertson(b *testing.B) {
	pr, trs := robertsonLanes(b, 256)
	for _, tb := range method.AllRosenbrock() {
		c := rosCase{pr: pr}
		cfg := caseConfig(&c, tb, false)
		cfg.RTol, cfg.ATol, cfg.MaxSteps = fill(1e-6, 3), fill(1e-10, 3), 1<<20
		b.Run(tb.Name+"/scalar", func(b *testing.B) {
			sv, _ := New(cfg)
			lanetest.NewQueue(trs, 3, 8, false).BenchScalar(b, sv.Solve)
		})
		b.Run(tb.Name+"/lanes", func(b *testing.B) {
			pg := pr.Programs()
			ls, _ := NewLanes(cfg, 8, 3, LanePrograms{F: pg.FLanes, Kernel: pg.Kernel, JacY: pg.JacYLanes, DfDt: pg.DfDtLanes})
			q := lanetest.NewQueue(trs, 3, 8, false)
			for b.Loop() {
				q.Reset()
				ls.SolveLanes(q, nil)
			}
			q.ReportPerStep(b)
		})
	}
}

// BenchmarkLanesRobertsonSens measures Rodas5P with the sensitivities
// to (k1, k2, k3) on 256 Robertson trajectories (as
// BenchmarkLanesRobertson), one at a time and in eight lanes: ns per
// trajectory step.
func BenchmarkLanesRobertsonSens(b *testing.B) {
	pr, trs := robertsonLanes(b, 256)
	const ns = 3
	for i := range trs {
		trs[i].Y0 = append(trs[i].Y0, make([]float64, 3*ns)...)
	}
	tb := method.Rodas5P
	c := rosCase{pr: pr}
	cfg := caseConfig(&c, tb, false)
	cfg.RTol, cfg.ATol, cfg.MaxSteps = fill(1e-6, 3), fill(1e-10, 3), 1<<20
	pg := pr.Programs()
	cfg.NS, cfg.JVP, cfg.JVPJacY, cfg.JVPDfDt = ns, pg.JVP, pg.JVPJacY, pg.JVPDfDt
	for j := range ns {
		w := make([]float64, 3)
		w[j] = 1
		cfg.SensW = append(cfg.SensW, w)
	}
	b.Run("scalar", func(b *testing.B) {
		sv, _ := New(cfg)
		lanetest.NewQueue(trs, 3*(1+ns), 8, false).BenchScalar(b, sv.Solve)
	})
	b.Run("lanes", func(b *testing.B) {
		ls, _ := NewLanes(cfg, 8, 3, LanePrograms{F: pg.FLanes, JacY: pg.JacYLanes, DfDt: pg.DfDtLanes,
			JVP: pg.JVPLanes, JVPJacY: pg.JVPJacYLanes, JVPDfDt: pg.JVPDfDtLanes})
		q := lanetest.NewQueue(trs, 3*(1+ns), 8, false)
		for b.Loop() {
			q.Reset()
			ls.SolveLanes(q, nil)
		}
		q.ReportPerStep(b)
	})
}

// laneCodeEstimate bounds the generated attempt's size from above, and
// not by much where the bound matters (laneMaxCode, LaneCodeFits): for
// both tableaus and both forms of the stages, with and without
// sensitivity columns.
func TestLaneCodeEstimate(t *testing.T) {
	for _, tb := range method.AllRosenbrock() {
		for _, dim := range []int{1, 3, 8, 12, 13, 20, 28} {
			for _, ns := range []int{0, 2, 5} {
				for _, mem := range []bool{false, true} {
					memoryStages = mem
					c, err := buildLaneCode(tb, dim, 2, ode.LaneWidth, ns, nil, 0, nil, 0)
					memoryStages = false
					if err != nil {
						t.Fatal(err)
					}
					est := laneCodeEstimate(tb, dim, ns, ode.LaneWidth)
					if est < c.size || c.size > 100<<10 && est > 2*c.size {
						t.Errorf("%s Dim %d NS %d memory %v: %d bytes of code, estimated %d", tb.Name, dim, ns, mem, c.size, est)
					}
				}
			}
		}
	}
	// chain16's sensitivities run as machine code
	// (TestLanesSensMatchScalar); the LU of 100 components alone would
	// be some 76 MB on eight lanes.
	if !LaneCodeFits(method.Rodas5P, 16, 2, 8) || LaneCodeFits(method.Rodas5P, 100, 0, 8) || LaneCodeFits(method.Rodas5P, 3, 0, 6) {
		t.Errorf("LaneCodeFits: Rodas5P on 8 lanes: %v for Dim 16 with 2 columns, %v for Dim 100; %v on 6 lanes",
			LaneCodeFits(method.Rodas5P, 16, 2, 8), LaneCodeFits(method.Rodas5P, 100, 0, 8), LaneCodeFits(method.Rodas5P, 3, 0, 6))
	}
}

// BenchmarkLanesChainSens measures both methods with the sensitivities
// to e and to x_15(t0) on 64 trajectories of the 16-state ring
// (chainSrc; t to 0.1–0.3, rtol 1e-6, atol 1e-9): one at a time, and
// in 4 and 8 lanes (the stages and the columns from memory; before
// columnMemory these ran each lane on a scalar Solver): ns per
// trajectory step.
func BenchmarkLanesChainSens(b *testing.B) {
	c := chainCase(b)
	pr, n := c.pr, c.pr.Dim
	const ns = 2
	trs := make([]ivp.Trajectory, 64)
	for i := range trs {
		x := float64(i) / float64(len(trs))
		y0 := make([]float64, n*(1+ns))
		for d := range n {
			y0[d] = 1 - 0.03*float64(d) + 0.1*x
		}
		y0[n*(1+ns)-1] = 1
		trs[i] = ivp.Trajectory{T0: 0, T1: 0.1 + 0.2*x, Y0: y0, P: []float64{1 + x, 300 + 1000*x, 2}}
	}
	pg := pr.Programs()
	w := [][]float64{{1, 0, 0}, {0, 0, 0}}
	for _, tb := range method.AllRosenbrock() {
		cfg := caseConfig(&c, tb, false)
		cfg.MaxSteps = 1 << 20
		cfg.NS, cfg.SensW, cfg.JVP, cfg.JVPJacY, cfg.JVPDfDt = ns, w, pg.JVP, pg.JVPJacY, pg.JVPDfDt
		b.Run(tb.Name+"/scalar", func(b *testing.B) {
			sv, _ := New(cfg)
			lanetest.NewQueue(trs, n*(1+ns), 1, false).BenchScalar(b, sv.Solve)
		})
		for _, L := range []int{4, 8} {
			b.Run(fmt.Sprintf("%s/lanes%d", tb.Name, L), func(b *testing.B) {
				ls, err := NewLanes(cfg, L, pr.NumParams, LanePrograms{F: pg.FLanes, JacY: pg.JacYLanes, DfDt: pg.DfDtLanes,
					JVP: pg.JVPLanes, JVPJacY: pg.JVPJacYLanes, JVPDfDt: pg.JVPDfDtLanes})
				if err != nil {
					b.Fatal(err)
				}
				if code, _ := ls.MachineCode(); !code {
					b.Skip("no machine code here")
				}
				q := lanetest.NewQueue(trs, n*(1+ns), L, false)
				for b.Loop() {
					q.Reset()
					ls.SolveLanes(q, nil)
				}
				q.ReportPerStep(b)
			})
		}
	}
}
