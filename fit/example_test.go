package fit_test

import (
	"context"
	"fmt"
	"math"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/fit"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/router"
	"github.com/gradsolve/gradsolve/sym"
	"github.com/gradsolve/gradsolve/sym/tape"
)

// decay returns y' = −k·y compiled from formulas.
func decay() *gradsolve.Problem {
	m := sym.NewModel("decay")
	y := m.State("y", 1)
	k := m.Param("k", 1)
	m.Deriv(y, k.Mul(y).Neg())
	set, err := tape.Build(m)
	if err != nil {
		panic(err)
	}
	return set.Problem()
}

// Fit one decay rate shared by an ensemble of four trajectories (each
// with its own initial state and span) to their final states, by
// Levenberg–Marquardt on forward sensitivities, with the standard error
// for noise σ = 0.01 (closed form: 1/√(Σ (t_i·y0_i·e^(−k·t_i))²/σ²) =
// 0.00544).
func ExampleRun() {
	const k = 0.7 // the truth
	ens := gradsolve.Ensemble{N: 4, Y0: []float64{1, 2, 3, 4}, T0: []float64{0}, T1: []float64{1, 2, 3, 4}}
	data := make([]float64, 4)
	for i := range data {
		data[i] = ens.Y0[i] * math.Exp(-k*ens.T1[i])
	}
	rep, err := fit.Run(context.Background(), &fit.Spec{
		Problem:  decay(),
		Ensemble: ens,
		Options:  gradsolve.Options{Method: method.DP8, RTol: 1e-12, ATol: 1e-14},
		Data:     &gradsolve.FitData{Final: data},
		Params:   []fit.Param{{Wrt: gradsolve.Param(0), Transform: fit.Log()}}, // k > 0
		Start:    []float64{2},
		Noise:    &fit.Noise{Sigma: 0.01},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	g := rep.Groups[0]
	fmt.Printf("%s on %v sensitivities: k = %.9f (%v after %d iterations), standard error %.5f\n",
		rep.Optimizer, rep.Mode, g.Estimate[0], g.Status, g.Iterations, g.StdErr[0])
	// Output:
	// levenberg-marquardt on forward sensitivities: k = 0.700000000 (Converged after 8 iterations), standard error 0.00544
}

// Fit each trajectory's own decay rate (three concurrent fits sharing
// every solve) by L-BFGS on the reverse replay, recording the meshes
// again whenever a rate has moved by more than 2%.
func ExampleRun_perTrajectory() {
	truth := []float64{0.3, 0.6, 1.2}
	ens := gradsolve.Ensemble{N: 3, Y0: []float64{1}, T0: []float64{0}, T1: []float64{2}, Save: []float64{0.5, 1, 1.5}}
	var saved []float64
	for _, k := range truth {
		for _, t := range ens.Save {
			saved = append(saved, math.Exp(-k*t))
		}
	}
	rep, err := fit.Run(context.Background(), &fit.Spec{
		Problem:   decay(),
		Ensemble:  ens,
		Options:   gradsolve.Options{Method: method.DP8, RTol: 1e-12, ATol: 1e-14},
		Data:      &gradsolve.FitData{Saved: saved},
		Params:    []fit.Param{{Wrt: gradsolve.Param(0), Transform: fit.Log()}},
		Owner:     fit.PerTrajectory,
		Start:     []float64{1}, // every fit starts from k = 1
		Optimizer: &fit.LBFGS{},
		Mode:      router.Reverse,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, g := range rep.Groups {
		fmt.Printf("trajectory %d: k = %.9f (truth %.1f), %v\n", i, g.Estimate[0], truth[i], g.Status)
	}
	fmt.Println("recorded more than once:", rep.Records > 1)
	// Output:
	// trajectory 0: k = 0.300000000 (truth 0.3), Converged
	// trajectory 1: k = 0.600000000 (truth 0.6), Converged
	// trajectory 2: k = 1.200000000 (truth 1.2), Converged
	// recorded more than once: true
}

// Groups: trajectories 0–1 and 2–3 each share a rate of their own. The
// second group's data were made with a rate above the bounds (0.1, 1)
// that its Logit transform imposes, so it ends at the bound.
func ExampleRun_groups() {
	ens := gradsolve.Ensemble{N: 4, Y0: []float64{1, 2, 1, 2}, T0: []float64{0}, T1: []float64{1}}
	rates := []float64{0.5, 0.5, 1.5, 1.5}
	data := make([]float64, 4)
	for i := range data {
		data[i] = ens.Y0[i] * math.Exp(-rates[i])
	}
	rep, err := fit.Run(context.Background(), &fit.Spec{
		Problem:  decay(),
		Ensemble: ens,
		Options:  gradsolve.Options{Method: method.DP8, RTol: 1e-12, ATol: 1e-14},
		Data:     &gradsolve.FitData{Final: data},
		Params:   []fit.Param{{Wrt: gradsolve.Param(0), Transform: fit.Logit(0.1, 1)}},
		Owner:    fit.Grouped,
		Group:    []int{0, 0, 1, 1},
		Start:    []float64{0.3},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for g, gr := range rep.Groups {
		fmt.Printf("group %d %v: k = %.4f\n", g, gr.Trajectories, gr.Estimate[0])
	}
	// Output:
	// group 0 [0 1]: k = 0.5000
	// group 1 [2 3]: k = 1.0000
}

// Fit y = a·e^(b·t) to two data sets at once (two groups), with
// correlated noise (a full covariance: σ = 0.01, correlation 0.5
// between neighbours), by Gauss–Newton on residuals and Jacobians the
// caller computes, and print each fit's estimate with its Fisher
// standard errors.
func ExampleRunLSQ() {
	ts := []float64{0, 0.5, 1, 1.5, 2}
	m := len(ts)
	cov := make([]float64, m*m)
	for i := range m {
		cov[i*m+i] = 1e-4
		if i > 0 {
			cov[i*m+i-1], cov[(i-1)*m+i] = 0.5e-4, 0.5e-4
		}
	}
	data := [][]float64{
		{2.003, 1.481, 1.093, 0.818, 0.605}, // near a = 2, b = −0.6
		{0.998, 1.224, 1.495, 1.818, 2.231}, // near a = 1, b = 0.4
	}
	rep, err := fit.RunLSQ(context.Background(), &fit.LSQ{
		Params:    []string{"a", "b"},
		Groups:    2,
		Residuals: m,
		Start:     []float64{1, 0}, // both groups start at a = 1, b = 0
		Noise:     fit.Gaussian{Covariance: cov},
		Eval: func(_ context.Context, e *fit.LSQEval) error {
			for g := range data {
				if !e.Active[g] {
					continue
				}
				a, b := e.Point(g)[0], e.Point(g)[1]
				r, j := e.Residual(g), e.Jacobian(g)
				for i, t := range ts {
					ex := math.Exp(b * t)
					r[i] = data[g][i] - a*ex        // data minus model
					j[2*i], j[2*i+1] = -ex, -a*t*ex // ∂r/∂a, ∂r/∂b
				}
			}
			return nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for g, gr := range rep.Groups {
		fmt.Printf("group %d: %v after %d iterations: a = %.4f ± %.4f, b = %.4f ± %.4f, χ² = %.2f\n",
			g, gr.Status, gr.Iterations, gr.Estimate[0], gr.StdErr[0], gr.Estimate[1], gr.StdErr[1], gr.Chi2)
	}
	// Output:
	// group 0: Converged after 6 iterations: a = 2.0004 ± 0.0096, b = -0.5999 ± 0.0068, χ² = 1.31
	// group 1: Converged after 7 iterations: a = 0.9980 ± 0.0080, b = 0.4026 ± 0.0049, χ² = 1.39
}
