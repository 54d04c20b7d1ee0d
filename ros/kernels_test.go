package ros

import (
	"math"
	"testing"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/internal/gencheck"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/systems"
)

// Every Rosenbrock method of package method has a generated kernel, and
// a solve through it gives the generic loops' numbers to the bit: the
// same final state, save values (re-stepped and dense), mesh and
// statistics, on autonomous stiff systems and on a non-autonomous one
// (where the h²·d_i·f_t terms act).
func TestKernelsMatchGeneric(t *testing.T) {
	type problem struct {
		name string
		f    ode.Func
		jac  func(t float64, y, p, j []float64)
		dfdt func(t float64, y, p, o []float64)
		dim  int
		tr   ivp.Trajectory
	}
	var cases []problem
	for _, pr := range []*ode.Problem{systems.Robertson(), systems.HIRES(), systems.VanDerPolStiff(1e3)} {
		pg := pr.Programs()
		mid := pr.T0 + (pr.T1-pr.T0)/3
		cases = append(cases, problem{pr.Name, pg.F, pg.JacY, pg.DfDt, pr.Dim,
			ivp.Trajectory{T0: pr.T0, T1: pr.T1, Y0: pr.Y0, P: pr.P, Save: []float64{mid, pr.T1}}})
	}
	// y' = −50·(y − cos t): stiff, forced, with f_t = −50·sin t.
	cases = append(cases, problem{"forced",
		func(tt float64, y, _, dy []float64) { dy[0] = -50 * (y[0] - math.Cos(tt)) },
		func(_ float64, _, _, j []float64) { j[0] = -50 },
		func(tt float64, _, _, o []float64) { o[0] = -50 * math.Sin(tt) },
		1, ivp.Trajectory{T0: 0, T1: 3, Y0: []float64{0}, Save: []float64{1.3}}})
	for _, rt := range method.AllRosenbrock() {
		for _, c := range cases {
			for _, dense := range []bool{false, true} {
				run := func(generic bool) *ivp.Output {
					sv, err := New(Config{Tableau: rt, F: c.f, JacY: c.jac, DfDt: c.dfdt, Dim: c.dim,
						RTol: fill(1e-7, c.dim), ATol: fill(1e-10, c.dim), MaxSteps: 100000, DenseSave: dense,
						Controller: control.DefaultPI(rt.EstimateOrder(), rt.QMin, rt.QMax)})
					if err != nil {
						t.Fatal(err)
					}
					if sv.stages == nil {
						t.Fatalf("%s: no generated kernel", rt.Name)
					}
					sv.generic = generic
					out := &ivp.Output{Y: make([]float64, c.dim), Saved: make([]float64, len(c.tr.Save)*c.dim), Mesh: &ivp.Mesh{}}
					sv.Solve(&c.tr, out, nil)
					return out
				}
				gen, ker := run(true), run(false)
				if gen.Status != ode.Success || gen.Status != ker.Status || gen.Stats != ker.Stats || gen.T != ker.T || gen.H != ker.H {
					t.Errorf("%s %s dense=%v: generic %v %+v, kernel %v %+v", rt.Name, c.name, dense, gen.Status, gen.Stats, ker.Status, ker.Stats)
					continue
				}
				for what, pair := range map[string][2][]float64{"Y": {gen.Y, ker.Y}, "Saved": {gen.Saved, ker.Saved},
					"mesh T": {gen.Mesh.T, ker.Mesh.T}, "mesh Y": {gen.Mesh.Y, ker.Mesh.Y}} {
					for i := range pair[0] {
						if math.Float64bits(pair[0][i]) != math.Float64bits(pair[1][i]) {
							t.Errorf("%s %s dense=%v: %s[%d]: generic %v, kernel %v", rt.Name, c.name, dense, what, i, pair[0][i], pair[1][i])
							break
						}
					}
				}
			}
		}
	}
}

// A method that differs from a generated one in any coefficient, or
// only shares its name, runs on the generic loops.
func TestKernelNeedsIdenticalCoefficients(t *testing.T) {
	for _, rt := range method.AllRosenbrock() {
		if kernelFor(rt) == nil {
			t.Errorf("%s: no kernel", rt.Name)
		}
		c := *rt
		c.M = append([]float64(nil), rt.M...)
		c.M[0] = math.Nextafter(c.M[0], 1)
		if kernelFor(&c) != nil {
			t.Errorf("%s with m₁ one ulp off: got the generated kernel", rt.Name)
		}
		c = *rt
		c.Name = rt.Name + "-copy"
		if kernelFor(&c) != nil {
			t.Errorf("%s under another name: got a kernel", rt.Name)
		}
	}
}

// kernels_gen.go is what gen_kernels.go writes from the current methods.
func TestKernelsUpToDate(t *testing.T) {
	gencheck.UpToDate(t, "kernels_gen.go", "run", "gen_kernels.go")
}
