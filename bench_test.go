package gradsolve_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/systems"
)

// Ensemble sizes of the benchmarks.
const (
	benchLorenzN = 2048
	benchHaloN   = 512
)

// haloEnsemble varies the flattening q across [0.6, 1] from the §A.7
// initial state, over t ∈ [0, 20].
func haloEnsemble(n int) (*gradsolve.Problem, *gradsolve.Ensemble) {
	pr := systems.Halo()
	p := make([]float64, 0, 3*n)
	for _, q := range linspace(0.6, 1, n) {
		p = append(p, 1, q, 0.2)
	}
	return pr, &gradsolve.Ensemble{N: n, P: p}
}

// benchEnsemble solves the ensemble b.N times on one worker and reports
// ns per step attempt and heap allocations per trajectory (a fixed
// number per Solve call for its result arrays and per-worker work
// arrays, none per step: see erk.TestSolveDoesNotAllocate).
func benchEnsemble(b *testing.B, pr *gradsolve.Problem, ens *gradsolve.Ensemble, o gradsolve.Options) {
	o.Workers = 1
	var attempts int
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	b.ResetTimer()
	for range b.N {
		res, err := gradsolve.Solve(context.Background(), pr, ens, &o)
		if err != nil || res.Errs() != nil {
			b.Fatal(err, res.Errs())
		}
		attempts += res.Total().Attempts()
	}
	b.StopTimer()
	runtime.ReadMemStats(&ms1)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(attempts), "ns/attempt")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(b.N*ens.N), "allocs/traj")
	b.ReportMetric(float64(attempts)/float64(b.N*ens.N), "attempts/traj")
}

// BenchmarkLorenz: the DiffEqGPU Lorenz ensemble (ρ = linspace(0, 21)),
// t ∈ [0, 1], rtol 1e-8, atol 1e-11, one worker.
func BenchmarkLorenz(b *testing.B) {
	pr, ens := lorenzEnsemble(benchLorenzN)
	for _, tb := range method.All() {
		b.Run(tb.Name, func(b *testing.B) {
			benchEnsemble(b, pr, ens, gradsolve.Options{Method: tb, RTol: 1e-8, ATol: 1e-11})
		})
	}
}

// BenchmarkHalo: halo orbits over t ∈ [0, 20] with q from 0.6 to 1,
// rtol = atol = 1e-8, one worker.
func BenchmarkHalo(b *testing.B) {
	pr, ens := haloEnsemble(benchHaloN)
	for _, tb := range method.All() {
		b.Run(tb.Name, func(b *testing.B) {
			benchEnsemble(b, pr, ens, gradsolve.Options{Method: tb, RTol: 1e-8, ATol: 1e-8})
		})
	}
}
