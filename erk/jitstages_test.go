package erk

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/sym"
	"github.com/gradsolve/gradsolve/sym/tape"
	"github.com/gradsolve/gradsolve/systems"
)

// requireMachineCode skips the test where no AVX machine code can run:
// no AVX, another platform, GRADSOLVE_JIT=off, or a system that refuses
// executable memory (where the solvers fall back to the Go kernels).
func requireMachineCode(t *testing.T) {
	t.Helper()
	if !jit.HasAVX() {
		t.Skip("no AVX machine code here")
	}
	if _, err := jit.NewCode([]byte{0xC3}); err != nil {
		t.Skipf("no executable memory: %v", err)
	}
}

// The stage sums as machine code give the generic loops' numbers to the
// bit, for every explicit method, on systems of every width modulo four
// (four-, two- and one-lane code), with the error norm over the leading
// components only, backward spans, save times and a trajectory that
// fails.
func TestJITStagesMatchGeneric(t *testing.T) {
	requireMachineCode(t)
	blowUp := func(_ float64, y, _, dy []float64) {
		dy[0] = y[0] * y[0] // y' = y², y(0)=1: infinite at t = 1
		for i := 1; i < len(y); i++ {
			dy[i] = -y[i]
		}
	}
	type tcase struct {
		name         string
		f            ode.Func
		dim, normDim int
		tr           ivp.Trajectory
	}
	var cases []tcase
	for _, n := range []int{1, 2, 3, 5, 8, 9, 10, 11, 18, 19} {
		if n >= 4 {
			l96, err := systems.Lorenz96(n, 0)
			if err != nil {
				t.Fatal(err)
			}
			cases = append(cases,
				tcase{fmt.Sprint("lorenz96 n=", n), l96.F, n, 0, ivp.Trajectory{T0: 0, T1: 2, Y0: l96.Y0, P: l96.P, Save: []float64{0.5, 2}}},
				tcase{fmt.Sprint("lorenz96 backwards n=", n), l96.F, n, 0, ivp.Trajectory{T0: 1, T1: -0.5, Y0: l96.Y0, P: l96.P, Save: []float64{0.25}}},
				tcase{fmt.Sprint("lorenz96 leading norm n=", n), l96.F, n, 3, ivp.Trajectory{T0: 0, T1: 1, Y0: l96.Y0, P: l96.P}},
			)
		}
		y0 := make([]float64, n)
		for i := range y0 {
			y0[i] = 1
		}
		cases = append(cases, tcase{fmt.Sprint("blow-up n=", n), blowUp, n, 0, ivp.Trajectory{T0: 0, T1: 2, Y0: y0}})
	}
	for _, tb := range method.All() {
		for _, c := range cases {
			run := func(machine bool) *ivp.Output {
				sv, err := New(Config{Tableau: tb, F: c.f, Dim: c.dim, NormDim: c.normDim, RTol: fill(1e-7, c.dim), ATol: fill(1e-9, c.dim),
					MaxSteps: 20000, Controller: control.DefaultPI(tb.Order, tb.QMin, tb.QMax)})
				if err != nil {
					t.Fatal(err)
				}
				if machine {
					// Small systems too: the threshold is about speed.
					if sv.jit = buildJITStages(sv, tb, 1); sv.jit == nil {
						t.Fatal("no machine code")
					}
					sv.setJITArgs()
					sv.stages = (*Solver).stagesJIT
				} else {
					sv.generic = true
				}
				out := &ivp.Output{Y: make([]float64, c.dim), Saved: make([]float64, len(c.tr.Save)*c.dim), Mesh: &ivp.Mesh{KeepStages: true}}
				sv.Solve(&c.tr, out, nil)
				return out
			}
			gen, mc := run(false), run(true)
			if gen.Status != mc.Status || gen.Stats != mc.Stats || !testutil.SameBits(gen.T, mc.T) || !testutil.SameBits(gen.H, mc.H) || len(gen.Mesh.K) != len(mc.Mesh.K) {
				t.Errorf("%s %s: generic %v %+v t=%v, machine code %v %+v t=%v", tb.Name, c.name, gen.Status, gen.Stats, gen.T, mc.Status, mc.Stats, mc.T)
				continue
			}
			if c.name[:4] == "blow" && gen.Status == ode.Success {
				t.Errorf("%s %s: y' = y² through t = 2 succeeded", tb.Name, c.name)
			}
			for _, v := range []struct {
				what string
				a, b []float64
			}{{"Y", gen.Y, mc.Y}, {"Saved", gen.Saved, mc.Saved}, {"mesh T", gen.Mesh.T, mc.Mesh.T}, {"mesh Y", gen.Mesh.Y, mc.Mesh.Y}, {"mesh K", gen.Mesh.K, mc.Mesh.K}} {
				for i := range v.a {
					if !testutil.SameBits(v.a[i], v.b[i]) {
						t.Errorf("%s %s: %s[%d]: generic %v, machine code %v", tb.Name, c.name, v.what, i, v.a[i], v.b[i])
						break
					}
				}
			}
		}
	}
}

// lorenz96Tape builds Lorenz-96 with n components as formulas, through
// the tape: its f is machine code where the platform allows it.
func lorenz96Tape(t *testing.T, n int) ode.Func {
	t.Helper()
	m := sym.NewModel("l96")
	x := make([]sym.Expr, n)
	for i := range x {
		x[i] = m.State(fmt.Sprint("x", i), 8+0.01*float64(i))
	}
	forcing := m.Param("F", 8)
	for i := range x {
		dx := x[(i+1)%n].Sub(x[(i+n-2)%n]).Mul(x[(i+n-1)%n]).Sub(x[i]).Add(forcing)
		m.Deriv(x[i], dx.Add(m.Time().MulConst(0.01))) // non-autonomous: stage times count
	}
	s, err := tape.Build(m)
	if err != nil {
		t.Fatal(err)
	}
	return s.Programs().F
}

// With the tape's machine code as the right-hand side (called directly,
// see sym/tape's direct.go), every stage-sum strategy New chooses — the
// generated Go kernels below jitMinDim, the machine-code sums above —
// gives the bits of the generic loops: every method, widths 3 to 19,
// partial norms, backward spans and save times.
func TestTapeFuncMatchesGeneric(t *testing.T) {
	for _, n := range []int{3, 4, 5, 6, 7, 8, 11, 18, 19} {
		f := lorenz96Tape(t, n)
		y0 := make([]float64, n)
		for i := range y0 {
			y0[i] = 8 + 0.01*float64(i)
		}
		p := []float64{8}
		for _, tb := range method.All() {
			for _, tr := range []struct {
				normDim int
				tr      ivp.Trajectory
			}{
				{0, ivp.Trajectory{T0: 0, T1: 1.5, Y0: y0, P: p, Save: []float64{0.5, 1.5}}},
				{0, ivp.Trajectory{T0: 1, T1: -0.5, Y0: y0, P: p, Save: []float64{0.25}}},
				{3, ivp.Trajectory{T0: 0, T1: 1, Y0: y0, P: p}},
			} {
				run := func(generic bool) *ivp.Output {
					sv, err := New(Config{Tableau: tb, F: f, Dim: n, NormDim: tr.normDim, RTol: fill(1e-7, n), ATol: fill(1e-9, n),
						MaxSteps: 20000, Controller: control.DefaultPI(tb.Order, tb.QMin, tb.QMax)})
					if err != nil {
						t.Fatal(err)
					}
					if !generic && jit.HasAVX() && (sv.jit == nil) != (n < jitMinDim) {
						t.Fatalf("n = %d %s: machine-code sums %v", n, tb.Name, sv.jit != nil)
					}
					sv.generic = generic
					out := &ivp.Output{Y: make([]float64, n), Saved: make([]float64, len(tr.tr.Save)*n), Mesh: &ivp.Mesh{KeepStages: true}}
					sv.Solve(&tr.tr, out, nil)
					return out
				}
				gen, got := run(true), run(false)
				if gen.Status != got.Status || gen.Stats != got.Stats || !testutil.SameBits(gen.T, got.T) {
					t.Errorf("n = %d %s: generic %v %+v, chosen %v %+v", n, tb.Name, gen.Status, gen.Stats, got.Status, got.Stats)
					continue
				}
				testutil.CheckBits(t, fmt.Sprintf("n = %d %s: Y", n, tb.Name), got.Y, gen.Y)
				testutil.CheckBits(t, fmt.Sprintf("n = %d %s: Saved", n, tb.Name), got.Saved, gen.Saved)
				testutil.CheckBits(t, fmt.Sprintf("n = %d %s: mesh Y", n, tb.Name), got.Mesh.Y, gen.Mesh.Y)
				testutil.CheckBits(t, fmt.Sprintf("n = %d %s: mesh K", n, tb.Name), got.Mesh.K, gen.Mesh.K)
			}
		}
	}
}

// A solver of a large enough system gets the machine code where there
// is AVX, and one of a small system the generated Go kernel.
func TestJITStagesChosen(t *testing.T) {
	requireMachineCode(t)
	for _, n := range []int{4, jitMinDim, 18} {
		l96, _ := systems.Lorenz96(n, 0)
		sv, err := New(Config{Tableau: method.Vern7, F: l96.F, Dim: n, RTol: fill(1e-6, n), ATol: fill(1e-6, n), MaxSteps: 10,
			Controller: control.DefaultPI(7, method.Vern7.QMin, method.Vern7.QMax)})
		if err != nil {
			t.Fatal(err)
		}
		if want := n >= jitMinDim; (sv.jit != nil) != want {
			t.Errorf("n = %d: machine code %v, want %v", n, sv.jit != nil, want)
		}
	}
}

// Systems whose unrolled code would pass jitMaxCode run on the Go
// kernels, and the estimate the choice rests on is within 10% of the
// code's real size for every method.
func TestJITCodeEstimate(t *testing.T) {
	requireMachineCode(t)
	for _, tb := range method.All() {
		for _, n := range []int{1000, 20000} {
			l96, _ := systems.Lorenz96(n, 0)
			sv, err := New(Config{Tableau: tb, F: l96.F, Dim: n, RTol: fill(1e-6, n), ATol: fill(1e-6, n), MaxSteps: 10,
				Controller: control.DefaultPI(tb.Order, tb.QMin, tb.QMax)})
			if err != nil {
				t.Fatal(err)
			}
			est := jitCodeEstimate(sv)
			if want := est <= jitMaxCode; (sv.jit != nil) != want {
				t.Errorf("%s n = %d: estimate %d bytes, machine code %v", tb.Name, n, est, sv.jit != nil)
			}
			if sv.jit == nil {
				continue
			}
			if d := float64(est-sv.jit.size) / float64(sv.jit.size); math.Abs(d) > 0.1 {
				t.Errorf("%s n = %d: estimate %d bytes, code %d", tb.Name, n, est, sv.jit.size)
			}
		}
	}
}

// BenchmarkJITStagesLarge runs Tsit5, Vern7 and DP8 on large Lorenz-96
// systems, on the Go kernels and on machine-code sums built even past
// jitMaxCode, for the choice of that bound (compare ns/attempt/comp).
func BenchmarkJITStagesLarge(b *testing.B) {
	if !jit.HasAVX() {
		b.Skip("no AVX machine code here")
	}
	for _, tb := range []*method.Tableau{method.Tsit5, method.Vern7, method.DP8} {
		for _, n := range []int{4096, 10000, 32768} {
			l96, _ := systems.Lorenz96(n, 0)
			for _, machine := range []bool{false, true} {
				name := fmt.Sprintf("%s/n=%d/go", tb.Name, n)
				if machine {
					name = fmt.Sprintf("%s/n=%d/jit", tb.Name, n)
				}
				b.Run(name, func(b *testing.B) {
					sv, err := New(Config{Tableau: tb, F: l96.F, Dim: n, RTol: fill(1e-8, n), ATol: fill(1e-8, n),
						MaxSteps: 100000, Controller: control.DefaultPI(tb.Order, tb.QMin, tb.QMax)})
					if err != nil {
						b.Fatal(err)
					}
					sv.jit, sv.stages = nil, kernelFor(tb)
					if machine {
						sv.jit = buildJITStages(sv, tb, 1)
						sv.setJITArgs()
						sv.stages = (*Solver).stagesJIT
						b.ReportMetric(float64(sv.jit.size), "code-bytes")
					}
					tr := &ivp.Trajectory{T0: 0, T1: 0.2, Y0: l96.Y0, P: l96.P}
					out := &ivp.Output{Y: make([]float64, n)}
					att := 0
					for range b.N {
						sv.Solve(tr, out, nil)
						att += out.Stats.Attempts()
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(att)/float64(n), "ns/attempt/comp")
				})
			}
		}
	}
}

// BenchmarkJITStages solves Lorenz-96 systems of several sizes with
// Vern7 on the generated Go kernels and on the machine-code sums, in one
// run (compare ns/op per size).
func BenchmarkJITStages(b *testing.B) {
	if !jit.HasAVX() {
		b.Skip("no AVX machine code here")
	}
	_ = context.Background
	for _, n := range []int{4, 6, 8, 12, 18, 36} {
		l96, _ := systems.Lorenz96(n, 0)
		for _, machine := range []bool{false, true} {
			name := fmt.Sprintf("n=%d/go", n)
			if machine {
				name = fmt.Sprintf("n=%d/jit", n)
			}
			b.Run(name, func(b *testing.B) {
				tb := method.Vern7
				sv, err := New(Config{Tableau: tb, F: l96.F, Dim: n, RTol: fill(1e-8, n), ATol: fill(1e-8, n),
					MaxSteps: 100000, Controller: control.DefaultPI(tb.Order, tb.QMin, tb.QMax)})
				if err != nil {
					b.Fatal(err)
				}
				sv.jit, sv.stages = nil, kernelFor(tb)
				if machine {
					sv.jit = buildJITStages(sv, tb, 1)
					sv.setJITArgs()
					sv.stages = (*Solver).stagesJIT
				}
				tr := &ivp.Trajectory{T0: 0, T1: 5, Y0: l96.Y0, P: l96.P}
				out := &ivp.Output{Y: make([]float64, n)}
				att := 0
				for range b.N {
					sv.Solve(tr, out, nil)
					att += out.Stats.Attempts()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(att), "ns/attempt")
			})
		}
	}
}

// Generated code is cached by the tableau's coefficients: a copy of a
// tableau shares its code, one with a coefficient changed gets its own.
func TestJITStagesCache(t *testing.T) {
	requireMachineCode(t)
	l96, _ := systems.Lorenz96(8, 0)
	build := func(tb *method.Tableau) *jitStages {
		sv, err := New(Config{Tableau: tb, F: l96.F, Dim: 8, RTol: fill(1e-6, 8), ATol: fill(1e-6, 8), MaxSteps: 10,
			Controller: control.DefaultPI(tb.Order, tb.QMin, tb.QMax)})
		if err != nil {
			t.Fatal(err)
		}
		return sv.jit
	}
	same := *method.Vern7
	changed := *method.Vern7
	changed.B = append([]float64(nil), method.Vern7.B...)
	changed.B[0] = math.Nextafter(changed.B[0], 1)
	a, b, c := build(method.Vern7), build(&same), build(&changed)
	if a == nil || a != b {
		t.Errorf("a copy of Vern7 got other code (%p, %p)", a, b)
	}
	if c == a {
		t.Error("Vern7 with b₁ one ulp off shares Vern7's code")
	}
}
