package erk

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

// Every explicit method of package method has a generated kernel, and
// a solve through it gives the generic loops' numbers to the bit: the
// same final state, save values, mesh, stages and statistics. The cases
// cover forward and backward spans, save times, an error norm over only
// the leading components (as sensitivities use it), and a failing
// trajectory.
func TestKernelsMatchGeneric(t *testing.T) {
	lor, halo := systems.Lorenz(), systems.Halo()
	// An augmented system whose trailing components stay out of the
	// norm: Lorenz twice, the copy integrated on the first one's mesh.
	twice := func(tt float64, y, p, dy []float64) { lor.F(tt, y[:3], p, dy[:3]); lor.F(tt, y[3:], p, dy[3:]) }
	blowUp := func(_ float64, y, _, dy []float64) { dy[0] = y[0] * y[0] } // y' = y², y(0)=1: infinite at t = 1
	cases := []struct {
		name         string
		f            ode.Func
		dim, normDim int
		tr           ivp.Trajectory
	}{
		{"lorenz", lor.F, 3, 0, ivp.Trajectory{T0: 0, T1: 2, Y0: []float64{1, 0, 0}, P: lor.P, Save: []float64{0, 0.5, 1.25, 2}}},
		{"lorenz backwards", lor.F, 3, 0, ivp.Trajectory{T0: 1, T1: -0.5, Y0: []float64{1, 2, 3}, P: lor.P, Save: []float64{0.3, -0.5}}},
		{"halo", halo.F, 6, 0, ivp.Trajectory{T0: 0, T1: 20, Y0: halo.Y0, P: halo.P, Save: []float64{7}}},
		{"norm over leading components", twice, 6, 3, ivp.Trajectory{T0: 0, T1: 1, Y0: []float64{1, 0, 0, 1.5, 0.5, 0}, P: lor.P}},
		{"blow-up", blowUp, 1, 0, ivp.Trajectory{T0: 0, T1: 2, Y0: []float64{1}, P: nil}},
	}
	for _, tb := range method.All() {
		for _, c := range cases {
			run := func(generic bool) (*ivp.Output, *Solver) {
				sv, err := New(Config{Tableau: tb, F: c.f, Dim: c.dim, NormDim: c.normDim, RTol: fill(1e-7, c.dim), ATol: fill(1e-9, c.dim),
					MaxSteps: 20000, Controller: control.DefaultPI(tb.Order, tb.QMin, tb.QMax)})
				if err != nil {
					t.Fatal(err)
				}
				if sv.stages == nil {
					t.Fatalf("%s: no generated kernel", tb.Name)
				}
				sv.generic = generic
				out := &ivp.Output{Y: make([]float64, c.dim), Saved: make([]float64, len(c.tr.Save)*c.dim), Mesh: &ivp.Mesh{KeepStages: true}}
				sv.Solve(&c.tr, out, nil)
				return out, sv
			}
			gen, _ := run(true)
			ker, _ := run(false)
			same := func(what string, a, b []float64) {
				for i := range a {
					if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
						t.Errorf("%s %s: %s[%d]: generic %v, kernel %v", tb.Name, c.name, what, i, a[i], b[i])
						return
					}
				}
			}
			if gen.Status != ker.Status || gen.Stats != ker.Stats || gen.T != ker.T || gen.H != ker.H || len(gen.Mesh.K) != len(ker.Mesh.K) {
				t.Errorf("%s %s: generic %v %+v t=%v, kernel %v %+v t=%v", tb.Name, c.name, gen.Status, gen.Stats, gen.T, ker.Status, ker.Stats, ker.T)
				continue
			}
			if c.name == "blow-up" && gen.Status == ode.Success {
				t.Errorf("%s: y' = y² through t = 2 succeeded", tb.Name)
			}
			same("Y", gen.Y, ker.Y)
			same("Saved", gen.Saved, ker.Saved)
			same("mesh T", gen.Mesh.T, ker.Mesh.T)
			same("mesh Y", gen.Mesh.Y, ker.Mesh.Y)
			same("mesh K", gen.Mesh.K, ker.Mesh.K)
		}
	}
}

// A tableau that differs from a generated one in any coefficient, or
// only shares its name, runs on the generic loops.
func TestKernelNeedsIdenticalCoefficients(t *testing.T) {
	for _, tb := range method.All() {
		if kernelFor(tb) == nil {
			t.Errorf("%s: no kernel", tb.Name)
		}
		c := *tb
		c.B = append([]float64(nil), tb.B...)
		c.B[0] = math.Nextafter(c.B[0], 1)
		if kernelFor(&c) != nil {
			t.Errorf("%s with b₁ one ulp off: got the generated kernel", tb.Name)
		}
		c = *tb
		c.Name = tb.Name + "-copy"
		if kernelFor(&c) != nil {
			t.Errorf("%s under another name: got a kernel", tb.Name)
		}
	}
}

// kernels_gen.go is what gen_kernels.go writes from the current tableaux.
func TestKernelsUpToDate(t *testing.T) {
	gencheck.UpToDate(t, "kernels_gen.go", "run", "gen_kernels.go")
}
