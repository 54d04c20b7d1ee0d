package gradsolve_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/systems"
)

// BenchmarkCheckpoint: Record + Gradient of the halo orbit over
// t ∈ [0, 500] (about 7600 steps a trajectory), 8 trajectories, Tsit5
// at 1e-8, one worker on cpu-erk, for checkpoint intervals k (1: every
// state); it reports the recorded meshes' bytes per trajectory. The
// measured table for longer trajectories (go run ./bench/checkpoint)
// is in docs/numerics.md.
func BenchmarkCheckpoint(b *testing.B) {
	pr := systems.Halo()
	const n = 8
	p := make([]float64, 0, 3*n)
	for _, q := range linspace(0.6, 1, n) {
		p = append(p, 1, q, 0.2)
	}
	ens := &gradsolve.Ensemble{N: n, P: p, T0: []float64{0}, T1: []float64{500}}
	for _, k := range []int{1, 4, 16, 64, 256} {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			o := &gradsolve.Options{Method: method.Tsit5, RTol: 1e-8, ATol: 1e-8, Workers: 1, Engine: "cpu-erk", Checkpoint: k}
			ctx := context.Background()
			var bytes uint64
			for range b.N {
				rec, err := gradsolve.Record(ctx, pr, ens, o)
				if err != nil {
					b.Fatal(err)
				}
				_, cot, err := gradsolve.SumSquares()(rec.Result)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := rec.Gradient(ctx, cot); err != nil {
					b.Fatal(err)
				}
				bytes = rec.MeshBytes()
			}
			b.ReportMetric(float64(bytes)/n, "mesh-B/traj")
		})
	}
}
