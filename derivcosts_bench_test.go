package gradsolve_test

import (
	"context"
	"testing"
	"time"

	"github.com/gradsolve/gradsolve"
)

// BenchmarkDerivativeCosts measures, per engine, the costs the router's
// cost model (package router, engine.DerivativeCosts) states: forward
// sensitivities to one parameter, a recording solve and the gradient of
// Σ‖y_final‖²/2 by the reverse replay, each in forward solves of the
// same ensemble on the same engine, and sensitivities to all six
// parameters and initial values (the column cost at larger k). Each
// iteration times all five jobs back to back, so the ratios it reports
// (sens1/solve, sens6/solve, record/solve, gradient/solve) see the same
// machine load. One worker. Lorenz
// (examples/lorenz.ode, 2000 trajectories, ρ from 0 to 21, Tsit5 at
// rtol 1e-8, atol 1e-11) on the explicit engines; Robertson
// (examples/robertson.ode, 256 trajectories, k1 from 0.02 to 0.06,
// t ∈ [0, 1e4], Rodas5P at rtol 1e-8, atol 1e-12) on the Rosenbrock
// ones.
func BenchmarkDerivativeCosts(b *testing.B) {
	lorenz := exampleProblem(b, "lorenz")
	const nl = 2000
	lens := &gradsolve.Ensemble{N: nl, P: lorenzFileParams(nl)}
	rob := exampleProblem(b, "robertson")
	const nr = 256
	rp := make([]float64, 0, 3*nr)
	for i := range nr {
		rp = append(rp, 0.02+0.04*float64(i)/float64(nr-1), 3e7, 1e4)
	}
	rens := &gradsolve.Ensemble{N: nr, P: rp, T0: []float64{0}, T1: []float64{1e4}}
	for _, c := range []struct {
		engine string
		pr     *gradsolve.Problem
		ens    *gradsolve.Ensemble
		o      gradsolve.Options
	}{
		{"cpu-erk", lorenz, lens, gradsolve.Options{RTol: 1e-8, ATol: 1e-11}},
		{"cpu-lanes", lorenz, lens, gradsolve.Options{RTol: 1e-8, ATol: 1e-11}},
		{"cpu-ros", rob, rens, gradsolve.Options{RTol: 1e-8, ATol: 1e-12}},
		{"cpu-ros-lanes", rob, rens, gradsolve.Options{RTol: 1e-8, ATol: 1e-12}},
	} {
		b.Run(c.engine, func(b *testing.B) {
			ctx := context.Background()
			o := c.o
			o.Engine, o.Workers = c.engine, 1
			so := o
			so.Sens = &gradsolve.Sensitivity{Wrt: []gradsolve.Wrt{gradsolve.Param(0)}}
			all := o // every parameter and initial value: six columns
			all.Sens = &gradsolve.Sensitivity{Wrt: []gradsolve.Wrt{gradsolve.Param(0), gradsolve.Param(1), gradsolve.Param(2),
				gradsolve.InitialValue(0), gradsolve.InitialValue(1), gradsolve.InitialValue(2)}}
			var solve, sens, sens6, record, grad time.Duration
			for range b.N {
				t0 := time.Now()
				if _, err := gradsolve.Solve(ctx, c.pr, c.ens, &o); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if _, err := gradsolve.Solve(ctx, c.pr, c.ens, &so); err != nil {
					b.Fatal(err)
				}
				t2 := time.Now()
				rec, err := gradsolve.Record(ctx, c.pr, c.ens, &o)
				if err != nil {
					b.Fatal(err)
				}
				t3 := time.Now()
				_, cot, _ := gradsolve.SumSquares()(rec.Result)
				t4 := time.Now()
				if _, err := rec.Gradient(ctx, cot); err != nil {
					b.Fatal(err)
				}
				t5 := time.Now()
				if _, err := gradsolve.Solve(ctx, c.pr, c.ens, &all); err != nil {
					b.Fatal(err)
				}
				t6 := time.Now()
				solve, sens, record, grad, sens6 = solve+t1.Sub(t0), sens+t2.Sub(t1), record+t3.Sub(t2), grad+t5.Sub(t4), sens6+t6.Sub(t5)
			}
			b.ReportMetric(float64(sens6)/float64(solve), "sens6/solve")
			b.ReportMetric(float64(sens)/float64(solve), "sens1/solve")
			b.ReportMetric(float64(record)/float64(solve), "record/solve")
			b.ReportMetric(float64(grad)/float64(solve), "gradient/solve")
		})
	}
}
