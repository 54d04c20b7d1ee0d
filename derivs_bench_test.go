package gradsolve_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/gradsolve/gradsolve"
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
