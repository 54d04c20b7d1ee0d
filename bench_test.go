package gradsolve_test

import (
	"context"
	"math"
	"runtime"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/sym/parse"
	"github.com/gradsolve/gradsolve/sym/tape"
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

// BenchmarkBaselineHandDP5 is the yardstick for the ns/attempt figures
// above: the Lorenz ensemble of BenchmarkLorenz solved by Dormand–Prince
// 5(4) written out by hand the obvious way (slices, the right-hand side
// through a func value, math.Pow in the same PI controller), as a Go
// programmer would without gradsolve. Compare it with
// BenchmarkLorenz/DP5 in the same run.
func BenchmarkBaselineHandDP5(b *testing.B) {
	pr, ens := lorenzEnsemble(benchLorenzN)
	attempts := 0
	for range b.N {
		for i := range ens.N {
			attempts += handDP5(pr.F, ens.Y0, ens.P[3*i:3*i+3], 1, 1e-8, 1e-11)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(attempts), "ns/attempt")
	b.ReportMetric(float64(attempts)/float64(b.N*ens.N), "attempts/traj")
}

// handDP5 integrates from 0 to t1 with DP5 and returns the attempts.
func handDP5(f gradsolve.Func, y0, p []float64, t1, rtol, atol float64) int {
	const (
		c2, c3, c4, c5                = 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9
		a21                           = 1.0 / 5
		a31, a32                      = 3.0 / 40, 9.0 / 40
		a41, a42, a43                 = 44.0 / 45, -56.0 / 15, 32.0 / 9
		a51, a52, a53, a54            = 19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729
		a61, a62, a63, a64, a65       = 9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656
		b1, b3, b4, b5, b6            = 35.0 / 384, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84
		e1, e3, e4, e5, e6, e7        = 71.0 / 57600, -71.0 / 16695, 71.0 / 1920, -17253.0 / 339200, 22.0 / 525, -1.0 / 40
		beta1, beta2, safety          = 0.14, 0.08, 0.9
		qmin, qmax, qoldinit, initial = 0.2, 10, 1e-4, 1e-3
	)
	n := len(y0)
	w := make([]float64, 9*n)
	k1, k2, k3, k4, k5, k6, k7, yt, y := w[:n], w[n:2*n], w[2*n:3*n], w[3*n:4*n], w[4*n:5*n], w[5*n:6*n], w[6*n:7*n], w[7*n:8*n], w[8*n:]
	y1 := make([]float64, n)
	copy(y, y0)
	t, h, errOld, attempts := 0.0, initial, qoldinit, 0
	f(t, y, p, k1)
	for t < t1 {
		if t+h > t1 {
			h = t1 - t
		}
		for i := range n {
			yt[i] = y[i] + h*a21*k1[i]
		}
		f(t+c2*h, yt, p, k2)
		for i := range n {
			yt[i] = y[i] + h*(a31*k1[i]+a32*k2[i])
		}
		f(t+c3*h, yt, p, k3)
		for i := range n {
			yt[i] = y[i] + h*(a41*k1[i]+a42*k2[i]+a43*k3[i])
		}
		f(t+c4*h, yt, p, k4)
		for i := range n {
			yt[i] = y[i] + h*(a51*k1[i]+a52*k2[i]+a53*k3[i]+a54*k4[i])
		}
		f(t+c5*h, yt, p, k5)
		for i := range n {
			yt[i] = y[i] + h*(a61*k1[i]+a62*k2[i]+a63*k3[i]+a64*k4[i]+a65*k5[i])
		}
		f(t+h, yt, p, k6)
		for i := range n {
			y1[i] = y[i] + h*(b1*k1[i]+b3*k3[i]+b4*k4[i]+b5*k5[i]+b6*k6[i])
		}
		f(t+h, y1, p, k7)
		var s float64
		for i := range n {
			e := h * (e1*k1[i] + e3*k3[i] + e4*k4[i] + e5*k5[i] + e6*k6[i] + e7*k7[i])
			sc := atol + rtol*math.Max(math.Abs(y[i]), math.Abs(y1[i]))
			s += (e / sc) * (e / sc)
		}
		err := math.Sqrt(s / float64(n))
		attempts++
		if err <= 1 {
			q := math.Max(1/qmax, math.Min(1/qmin, math.Pow(err, beta1)/math.Pow(errOld, beta2)/safety))
			errOld = math.Max(err, qoldinit)
			t += h
			copy(y, y1)
			copy(k1, k7)
			h /= q
		} else {
			h /= math.Min(1/qmin, math.Pow(err, beta1)/safety)
		}
	}
	return attempts
}

// BenchmarkLorenzRHS solves the Lorenz ensemble of BenchmarkLorenz with
// Tsit5 on one worker, with the right-hand side as the hand-written Go
// function and as the compiled tape of examples/lorenz.ode: what the
// interpreter costs per step attempt in a whole solve.
func BenchmarkLorenzRHS(b *testing.B) {
	pr, ens := lorenzEnsemble(benchLorenzN)
	m, err := parse.ParseFile("examples/lorenz.ode")
	if err != nil {
		b.Fatal(err)
	}
	set, err := tape.Build(m)
	if err != nil {
		b.Fatal(err)
	}
	tp := set.Problem()
	// The file's parameter order is (rho, sigma, beta).
	tens := *ens
	tens.P = make([]float64, len(ens.P))
	for i := 0; i < len(ens.P); i += 3 {
		tens.P[i], tens.P[i+1], tens.P[i+2] = ens.P[i+1], ens.P[i], ens.P[i+2]
	}
	o := gradsolve.Options{RTol: 1e-8, ATol: 1e-11}
	b.Run("go", func(b *testing.B) { benchEnsemble(b, pr, ens, o) })
	b.Run("tape", func(b *testing.B) { benchEnsemble(b, tp, &tens, o) })
}

// BenchmarkRobertson: the Robertson ensemble of bench/README.md (k1
// from 0.02 to 0.06, t ∈ [0, 1e5]) at rtol 1e-8, atol 1e-12, one
// worker, with the built-in right-hand side and Jacobian.
func BenchmarkRobertson(b *testing.B) {
	pr := systems.Robertson()
	const n = 128
	p := make([]float64, 0, 3*n)
	for _, k1 := range linspace(0.02, 0.06, n) {
		p = append(p, k1, 3e7, 1e4)
	}
	ens := &gradsolve.Ensemble{N: n, Y0: []float64{1, 0, 0}, P: p, T0: []float64{0}, T1: []float64{1e5}}
	for _, m := range method.AllRosenbrock() {
		b.Run(m.Name, func(b *testing.B) {
			benchEnsemble(b, pr, ens, gradsolve.Options{Method: m, RTol: 1e-8, ATol: 1e-12})
		})
	}
}
