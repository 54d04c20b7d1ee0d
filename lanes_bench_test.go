package gradsolve_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/engine/cpu"
	"github.com/gradsolve/gradsolve/method"
)

// BenchmarkLanes compares the lane engine with the scalar engine it
// reproduces bit for bit, side by side in one run, one worker (and two,
// for the lanes' scaling): problem files (the tape's code, which the
// lanes inline), each explicit method.
//
//   - Lorenz from examples/lorenz.ode, ρ = linspace(10, 24, 1024),
//     t ∈ [0, 10], rtol = atol = 1e-6 (the held-out ensemble of the
//     lane issue);
//   - the halo orbit from examples/halo.ode, q = linspace(0.6, 1, 512),
//     t ∈ [0, 20], rtol = atol = 1e-8.
//
// ns/attempt is wall time per step attempt of one trajectory (with two
// workers: wall time × 2 / attempts).
func BenchmarkLanes(b *testing.B) {
	if err := cpu.LanesAvailable(); err != nil {
		b.Skipf("cpu-lanes cannot run here: %v", err)
	}
	lorenz := exampleProblem(b, "lorenz")
	const nl = 1024
	pl := make([]float64, 0, 3*nl)
	for _, rho := range linspace(10, 24, nl) {
		pl = append(pl, rho, 10, 8.0/3)
	}
	halo := exampleProblem(b, "halo")
	const nh = 512
	ph := make([]float64, 0, 3*nh)
	for _, q := range linspace(0.6, 1, nh) {
		ph = append(ph, 1, q, 0.2)
	}
	for _, c := range []struct {
		name string
		pr   *gradsolve.Problem
		ens  *gradsolve.Ensemble
		tol  float64
	}{
		{"Lorenz", lorenz, &gradsolve.Ensemble{N: nl, P: pl, T0: []float64{0}, T1: []float64{10}}, 1e-6},
		{"Halo", halo, &gradsolve.Ensemble{N: nh, P: ph}, 1e-8},
	} {
		for _, tb := range method.All() {
			for _, e := range []string{"cpu-erk", "cpu-lanes"} {
				b.Run(c.name+"/"+tb.Name+"/"+e, func(b *testing.B) {
					benchEnsemble(b, c.pr, c.ens, gradsolve.Options{Method: tb, RTol: c.tol, ATol: c.tol, Engine: e})
				})
			}
		}
	}
}

// BenchmarkLanesSens compares the engines on the halo with forward
// sensitivities to (vc, q) (the fused sensitivity system, in lanes
// through Problem.SensLanes), q = linspace(0.6, 1, 512), t ∈ [0, 20],
// rtol = atol = 1e-8, one worker.
func BenchmarkLanesSens(b *testing.B) {
	if err := cpu.LanesAvailable(); err != nil {
		b.Skipf("cpu-lanes cannot run here: %v", err)
	}
	halo := exampleProblem(b, "halo")
	const nh = 512
	ph := make([]float64, 0, 3*nh)
	for _, q := range linspace(0.6, 1, nh) {
		ph = append(ph, 1, q, 0.2)
	}
	ens := &gradsolve.Ensemble{N: nh, P: ph}
	sens := &gradsolve.Sensitivity{Wrt: []gradsolve.Wrt{gradsolve.Param(0), gradsolve.Param(1)}}
	for _, tb := range []*method.Tableau{method.Tsit5, method.Vern7, method.DP8} {
		for _, e := range []string{"cpu-erk", "cpu-lanes"} {
			b.Run(tb.Name+"/"+e, func(b *testing.B) {
				benchEnsemble(b, halo, ens, gradsolve.Options{Method: tb, RTol: 1e-8, ATol: 1e-8, Engine: e, Sens: sens})
			})
		}
	}
}

// BenchmarkLanesWorkers measures the lane engine's throughput on one and
// on two workers: 10⁵ Lorenz trajectories of BenchmarkLanes's ensemble
// (ρ from 10 to 24, t ∈ [0, 10], rtol = atol = 1e-6), Tsit5. Compare the
// ns/op of the two in one run (interleaved pairs: -count).
func BenchmarkLanesWorkers(b *testing.B) {
	if err := cpu.LanesAvailable(); err != nil {
		b.Skipf("cpu-lanes cannot run here: %v", err)
	}
	lorenz := exampleProblem(b, "lorenz")
	const n = 100000
	p := make([]float64, 0, 3*n)
	for _, rho := range linspace(10, 24, n) {
		p = append(p, rho, 10, 8.0/3)
	}
	ens := &gradsolve.Ensemble{N: n, P: p, T0: []float64{0}, T1: []float64{10}}
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			o := &gradsolve.Options{Method: method.Tsit5, RTol: 1e-6, ATol: 1e-6, Engine: "cpu-lanes", Workers: w}
			for b.Loop() {
				if _, err := gradsolve.Solve(context.Background(), lorenz, ens, o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLanesGradient measures the reverse gradient of ½Σ‖y(t1)‖²
// over 10⁴ halo orbits (q from 0.6 to 1, t ∈ [0, 20], DP8 at rtol =
// atol = 1e-8) against the lane engine's forward solve: the forward
// solve, the recording (in lanes), and the gradient from the recording
// (the record excluded), on the scalar engine and in lanes.
func BenchmarkLanesGradient(b *testing.B) {
	if err := cpu.LanesAvailable(); err != nil {
		b.Skipf("cpu-lanes cannot run here: %v", err)
	}
	halo := exampleProblem(b, "halo")
	const n = 10000
	p := make([]float64, 0, 3*n)
	for _, q := range linspace(0.6, 1, n) {
		p = append(p, 1, q, 0.2)
	}
	ens := &gradsolve.Ensemble{N: n, P: p}
	ctx := context.Background()
	for _, e := range []string{"cpu-erk", "cpu-lanes"} {
		o := &gradsolve.Options{Method: method.DP8, RTol: 1e-8, ATol: 1e-8, Engine: e, Workers: 1}
		b.Run(e+"/forward", func(b *testing.B) {
			for b.Loop() {
				if _, err := gradsolve.Solve(ctx, halo, ens, o); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(e+"/record", func(b *testing.B) {
			for b.Loop() {
				if _, err := gradsolve.Record(ctx, halo, ens, o); err != nil {
					b.Fatal(err)
				}
			}
		})
		rec, err := gradsolve.Record(ctx, halo, ens, o)
		if err != nil {
			b.Fatal(err)
		}
		cot := gradsolve.Cotangents{Y: rec.Result.Y} // ∂(½Σ‖y‖²)/∂y = y
		// The forward replay at the recording's own point (its bits are
		// the recording solve's), as a fit's update replays before its
		// gradient.
		b.Run(e+"/replay", func(b *testing.B) {
			for b.Loop() {
				if _, err := rec.Replay(ctx, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(e+"/gradient", func(b *testing.B) {
			for b.Loop() {
				if _, err := rec.Gradient(ctx, cot); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLanesMathFunction measures a right-hand side with a math
// function, which stays a Go call made lane by lane between pieces of
// lane code (and so runs without the fused attempt): DETEST F3
// (examples/detest_f3.ode, |sin πt| forcing), 1024 trajectories, Tsit5 at
// rtol = atol = 1e-6, one worker, on both engines.
func BenchmarkLanesMathFunction(b *testing.B) {
	if err := cpu.LanesAvailable(); err != nil {
		b.Skipf("cpu-lanes cannot run here: %v", err)
	}
	pr := exampleProblem(b, "detest_f3")
	const n = 1024
	y0 := make([]float64, 0, 2*n)
	for i := range n {
		y0 = append(y0, 1+0.001*float64(i), 0)
	}
	ens := &gradsolve.Ensemble{N: n, Y0: y0}
	for _, e := range []string{"cpu-erk", "cpu-lanes"} {
		b.Run(e, func(b *testing.B) {
			benchEnsemble(b, pr, ens, gradsolve.Options{Method: method.Tsit5, RTol: 1e-6, ATol: 1e-6, Engine: e})
		})
	}
}

// BenchmarkLanesStiff measures Rodas5P on 1000 Robertson trajectories
// (examples/robertson.ode, k1 from 0.02 to 0.06, t to 1e5, rtol 1e-6,
// atol 1e-10, one worker) on cpu-ros and cpu-ros-lanes: a forward solve,
// one with the sensitivities to (k1, k3), a recording, and the reverse
// gradient of ½Σ‖y(t1)‖² on the recording.
func BenchmarkLanesStiff(b *testing.B) {
	if err := cpu.LanesAvailable(); err != nil {
		b.Skipf("cpu-ros-lanes cannot run here: %v", err)
	}
	rob := exampleProblem(b, "robertson")
	const n = 1000
	p := make([]float64, 0, 3*n)
	for _, k1 := range linspace(0.02, 0.06, n) {
		p = append(p, k1, 3e7, 1e4)
	}
	ens := &gradsolve.Ensemble{N: n, P: p}
	ctx := context.Background()
	for _, e := range []string{"cpu-ros", "cpu-ros-lanes"} {
		o := &gradsolve.Options{Method: method.Rodas5P, RTol: 1e-6, ATol: 1e-10, Engine: e, Workers: 1}
		so := *o
		so.Sens = &gradsolve.Sensitivity{Wrt: []gradsolve.Wrt{gradsolve.Param(0), gradsolve.Param(2)}}
		b.Run(e+"/forward", func(b *testing.B) {
			for b.Loop() {
				if _, err := gradsolve.Solve(ctx, rob, ens, o); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(e+"/sensitivities", func(b *testing.B) {
			for b.Loop() {
				if _, err := gradsolve.Solve(ctx, rob, ens, &so); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(e+"/record", func(b *testing.B) {
			for b.Loop() {
				if _, err := gradsolve.Record(ctx, rob, ens, o); err != nil {
					b.Fatal(err)
				}
			}
		})
		rec, err := gradsolve.Record(ctx, rob, ens, o)
		if err != nil {
			b.Fatal(err)
		}
		cot := gradsolve.Cotangents{Y: rec.Result.Y}
		b.Run(e+"/replay", func(b *testing.B) { // as a fit's update replays before its gradient
			for b.Loop() {
				if _, err := rec.Replay(ctx, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(e+"/gradient", func(b *testing.B) {
			for b.Loop() {
				if _, err := rec.Gradient(ctx, cot); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLanesSaves measures a lane solve with save times inside its
// steps, whose saves the lane solver puts off and computes a batch of
// lanes at a time (ivp.SaveQueuer): 256 halo orbits (examples/halo.ode,
// q from 0.6 to 1, t ∈ [0, 10]), Tsit5 at rtol 1e-8, atol 1e-10, with 0,
// 10 and 100 save times evenly inside the span.
func BenchmarkLanesSaves(b *testing.B) {
	if err := cpu.LanesAvailable(); err != nil {
		b.Skipf("cpu-lanes cannot run here: %v", err)
	}
	halo := exampleProblem(b, "halo")
	const n = 256
	p := make([]float64, 0, 3*n)
	for _, q := range linspace(0.6, 1, n) {
		p = append(p, 1, q, 0.2)
	}
	o := &gradsolve.Options{Method: method.Tsit5, RTol: 1e-8, ATol: 1e-10, Engine: "cpu-lanes"}
	for _, k := range []int{0, 10, 100} {
		save := make([]float64, k)
		for j := range save {
			save[j] = 10 * float64(j+1) / float64(k+1)
		}
		ens := &gradsolve.Ensemble{N: n, P: p, T0: []float64{0}, T1: []float64{10}, Save: save}
		b.Run(fmt.Sprintf("saves=%d", k), func(b *testing.B) {
			for b.Loop() {
				if _, err := gradsolve.Solve(context.Background(), halo, ens, o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
