package gradsolve_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/examples/compiled"
	"github.com/gradsolve/gradsolve/method"
)

// benchDerivN is the ensemble size of the derivative benchmarks (the
// issue's 10⁴ Lorenz ensemble).
const benchDerivN = 10000

// BenchmarkLorenzDerivatives compares, on one worker and in one run, a
// plain forward solve of 10⁴ Lorenz trajectories (examples/lorenz.ode,
// ρ from 0 to 21, Tsit5, rtol 1e-8, atol 1e-11) with: forward
// sensitivities to one parameter (ρ), a recording solve, and the
// gradient of Σ‖y_final‖²/2 by the reverse replay (the record excluded).
// Compare ns/op across the sub-benchmarks.
func BenchmarkLorenzDerivatives(b *testing.B) {
	pr := exampleProblem(b, "lorenz")
	ens := &gradsolve.Ensemble{N: benchDerivN, P: lorenzFileParams(benchDerivN)}
	o := gradsolve.Options{RTol: 1e-8, ATol: 1e-11, Workers: 1}
	ctx := context.Background()
	b.Run("forward", func(b *testing.B) {
		for range b.N {
			if _, err := gradsolve.Solve(ctx, pr, ens, &o); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sens1", func(b *testing.B) {
		so := o
		so.Sens = &gradsolve.Sensitivity{Wrt: []gradsolve.Wrt{gradsolve.Param(0)}}
		for range b.N {
			if _, err := gradsolve.Solve(ctx, pr, ens, &so); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("record", func(b *testing.B) {
		for range b.N {
			if _, err := gradsolve.Record(ctx, pr, ens, &o); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, keep := range []bool{false, true} {
		name := "gradient"
		if keep {
			name = "gradient_keepstages"
		}
		b.Run(name, func(b *testing.B) {
			ko := o
			ko.KeepStages = keep
			rec, err := gradsolve.Record(ctx, pr, ens, &ko)
			if err != nil {
				b.Fatal(err)
			}
			_, cot, _ := gradsolve.SumSquares()(rec.Result)
			b.ResetTimer()
			for range b.N {
				if _, err := rec.Gradient(ctx, cot); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHaloRecordMemory records 10⁴ halo orbits (q from 0.6 to 1,
// rtol = atol = 1e-8, ≈ 300 steps each) and reports the heap the
// recording holds per trajectory against the bytes of its stored states.
func BenchmarkHaloRecordMemory(b *testing.B) {
	pr := exampleProblem(b, "halo")
	n := benchDerivN
	p := make([]float64, 0, 3*n)
	for _, q := range linspace(0.6, 1, n) {
		p = append(p, 1, q, 0.2)
	}
	ens := &gradsolve.Ensemble{N: n, P: p}
	for range b.N {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		rec, err := gradsolve.Record(context.Background(), pr, ens, &gradsolve.Options{RTol: 1e-8, ATol: 1e-8})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		steps := rec.Result.Total().Accepted
		states := float64((steps + n) * pr.Dim * 8)
		held := float64(after.HeapAlloc - before.HeapAlloc)
		b.ReportMetric(float64(steps)/float64(n), "steps/traj")
		b.ReportMetric(held/float64(n), "heapB/traj")
		b.ReportMetric(held/states, "heap/states")
		runtime.KeepAlive(rec)
	}
}

// BenchmarkHaloSensitivities solves 500 halo orbits (the work-precision
// sweep's ensemble: x0 from 0.5 to 1.5, vy0 from 0.5 to 0.7) over
// t ∈ [0, 20] with forward sensitivities to (vc, q) under the error
// test, rtol = atol = 1e-8, one worker, through both routes: the
// generated Go code (examples/compiled) and the problem file's tape.
// Compare ns/attempt.
func BenchmarkHaloSensitivities(b *testing.B) {
	const n = 500
	p := make([]float64, 0, 3*n)
	y0 := make([]float64, 0, 6*n)
	for i := range n {
		u := float64(i) / float64(n-1)
		p = append(p, 1, 0.7, 0.2)
		y0 = append(y0, 0.5+u, 0, 0.2, 0.1, 0.5+0.2*u, 0.15)
	}
	ens := &gradsolve.Ensemble{N: n, Y0: y0, P: p, T0: []float64{0}, T1: []float64{20}}
	for _, route := range []struct {
		name string
		pr   *gradsolve.Problem
	}{{"go", compiled.HaloProblem()}, {"ode", exampleProblem(b, "halo")}} {
		for _, tb := range []*method.Tableau{method.Vern7, method.DP8} {
			b.Run(route.name+"/"+tb.Name, func(b *testing.B) {
				benchEnsemble(b, route.pr, ens, gradsolve.Options{Method: tb, RTol: 1e-8, ATol: 1e-8,
					Sens: &gradsolve.Sensitivity{ErrorTest: true, Wrt: []gradsolve.Wrt{gradsolve.Param(0), gradsolve.Param(1)}}})
			})
		}
	}
}

// BenchmarkLorenzFile solves the Lorenz ensemble of BenchmarkLorenz
// from examples/lorenz.ode (the tape) with the high-order methods, one
// worker, rtol 1e-8, atol 1e-11.
func BenchmarkLorenzFile(b *testing.B) {
	pr := exampleProblem(b, "lorenz")
	ens := &gradsolve.Ensemble{N: benchLorenzN, P: lorenzFileParams(benchLorenzN)}
	for _, tb := range []*method.Tableau{method.Vern7, method.DP8} {
		b.Run(tb.Name, func(b *testing.B) {
			benchEnsemble(b, pr, ens, gradsolve.Options{Method: tb, RTol: 1e-8, ATol: 1e-11})
		})
	}
}
