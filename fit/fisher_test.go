package fit

import (
	"context"
	"math"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/method"
)

// The Fisher information of the linear decay y' = −k·y, fitting k and a
// shared initial value y0 on the final states and the states at the
// save times τ ∈ {0.25, 0.5}, with noise σ: every residual at time t
// has the derivatives
//
//	∂y/∂k = −t·y0·e^(−kt),   ∂y/∂y0 = e^(−kt),
//
// so F = Σ_i Σ_t (1/σ²)·[∂y/∂k, ∂y/∂y0]ᵀ[∂y/∂k, ∂y/∂y0] in closed form.
// What "matched to 1e-10" means here, honestly: the report's F is the
// one assembled from the discrete solution's sensitivities, which
// equal the exact solution's derivatives to the solve's accuracy —
// DP8 at rtol 1e-13 leaves them within about 1e-12 relative, so the
// closed form at the estimate is matched to 1e-10 — and F equals
// Σ JᵀJ/σ² from an independent sensitivity solve at the estimate to
// rounding (1e-14). The covariance F⁻¹ is checked against the inverse
// of the closed form, to 1e-10 times the condition number's share
// (the 2×2 inverse amplifies relative errors by at most cond(F) ≈ 30
// here: 1e-9).
func TestFisherClosedForm(t *testing.T) {
	pr := decayProblem(t)
	const n, k, y0, sigma = 5, 0.8, 2.0, 0.05
	dc := newDecayCase(n, []float64{k})
	for i := range n {
		dc.ens.Y0[i] = y0
	}
	dc = decayData(dc, k, y0)
	opts := gradsolve.Options{Method: method.DP8, RTol: 1e-13, ATol: 1e-15}
	for _, weights := range [][]float64{nil, {1 / (sigma * sigma)}} {
		nz := &Noise{Sigma: sigma}
		if weights != nil {
			nz = &Noise{Weights: weights} // the same precision, given per component
		}
		rep, err := Run(context.Background(), &Spec{Problem: pr, Ensemble: dc.ens, Options: opts,
			Data:   &gradsolve.FitData{Final: dc.final, Saved: dc.saved},
			Params: []Param{{Wrt: gradsolve.Param(0), Transform: Log()}, {Wrt: gradsolve.InitialValue(0)}},
			Start:  []float64{1, 1.5}, Noise: nz})
		if err != nil {
			t.Fatal(err)
		}
		g := rep.Groups[0]
		if g.Status != Converged || relErr(g.Estimate[0], k) > recoverTol || relErr(g.Estimate[1], y0) > recoverTol {
			t.Fatalf("fit: %v, estimate %v", g.Status, g.Estimate)
		}
		if g.FisherErr != nil {
			t.Fatal(g.FisherErr)
		}
		kh, yh := g.Estimate[0], g.Estimate[1]
		// Closed form at the estimate.
		var want [4]float64
		for i := range n {
			for _, tt := range []float64{0.25, 0.5, dc.ens.T1[i]} {
				jk, jy := -tt*yh*math.Exp(-kh*tt), math.Exp(-kh*tt)
				want[0] += jk * jk / (sigma * sigma)
				want[1] += jk * jy / (sigma * sigma)
				want[3] += jy * jy / (sigma * sigma)
			}
		}
		want[2] = want[1]
		for a := range 4 {
			if e := relErr(g.Fisher[a], want[a]); e > 1e-10 {
				t.Errorf("F[%d] = %.15g, closed form %.15g: relative error %.2e", a, g.Fisher[a], want[a], e)
			}
		}
		// From an independent solve with sensitivities at the estimate.
		ens := dc.ens
		ens.P = []float64{kh, 1, 0, 0}
		ens.Y0 = []float64{yh}
		o := opts
		o.Sens = &gradsolve.Sensitivity{Wrt: []gradsolve.Wrt{gradsolve.Param(0), gradsolve.InitialValue(0)}}
		res, err := gradsolve.Solve(context.Background(), pr, &ens, &o)
		if err != nil {
			t.Fatal(err)
		}
		var disc [4]float64
		add := func(s []float64) {
			for a := range 2 {
				for b := range 2 {
					disc[2*a+b] += s[a] * s[b] / (sigma * sigma)
				}
			}
		}
		for i := range n {
			for kk := range 2 {
				add(res.SavedS[(i*2+kk)*2 : (i*2+kk)*2+2])
			}
			add(res.S[i*2 : i*2+2])
		}
		for a := range 4 {
			if e := relErr(g.Fisher[a], disc[a]); e > 1e-14 {
				t.Errorf("F[%d] = %.17g, Σ JᵀJ/σ² of the discrete sensitivities %.17g: relative error %.2e", a, g.Fisher[a], disc[a], e)
			}
		}
		// Covariance and standard errors.
		det := want[0]*want[3] - want[1]*want[1]
		inv := [4]float64{want[3] / det, -want[1] / det, -want[1] / det, want[0] / det}
		for a := range 4 {
			if e := relErr(g.Covariance[a], inv[a]); e > 1e-9 {
				t.Errorf("C[%d] = %.15g, closed form %.15g: relative error %.2e", a, g.Covariance[a], inv[a], e)
			}
		}
		for a := range 2 {
			if e := relErr(g.StdErr[a], math.Sqrt(inv[3*a])); e > 1e-9 {
				t.Errorf("standard error %d = %.15g, closed form %.15g", a, g.StdErr[a], math.Sqrt(inv[3*a]))
			}
		}
		t.Logf("F = %v, closed form %v; σ_k = %.6g, σ_y0 = %.6g", g.Fisher, want, g.StdErr[0], g.StdErr[1])
	}
}

// decayData replaces the case's data by those of the shared initial
// value y0.
func decayData(dc decayCase, k, y0 float64) decayCase {
	dc.final, dc.saved = nil, nil
	for i := range dc.ens.N {
		dc.final = append(dc.final, y0*math.Exp(-k*dc.ens.T1[i]))
		for _, s := range dc.ens.Save {
			dc.saved = append(dc.saved, y0*math.Exp(-k*s))
		}
	}
	return dc
}

// A quantity the data do not constrain makes F singular: c enters the
// right-hand side only as z·√(k − c) with z = 0, so ∂y/∂c is exactly
// zero and so is F's row of c. The report says so instead of giving a
// covariance, and the fit itself still succeeds.
func TestFisherSingular(t *testing.T) {
	pr := decayProblem(t)
	dc := newDecayCase(3, []float64{0.7})
	rep, err := Run(context.Background(), &Spec{Problem: pr, Ensemble: dc.ens, Options: tight,
		Data:   &gradsolve.FitData{Final: dc.final},
		Params: []Param{{Wrt: gradsolve.Param(0), Transform: Log()}, {Wrt: gradsolve.Param(3)}},
		Start:  []float64{1, 0}, Noise: &Noise{}})
	if err != nil {
		t.Fatal(err)
	}
	g := rep.Groups[0]
	if g.Status != Converged || relErr(g.Estimate[0], 0.7) > recoverTol || g.Estimate[1] != 0 {
		t.Errorf("fit: %v, estimate %v", g.Status, g.Estimate)
	}
	if g.Fisher == nil || g.Fisher[3] != 0 || g.Covariance != nil || g.StdErr != nil || g.FisherErr == nil {
		t.Errorf("F %v, covariance %v, standard errors %v, err %v: want F, and an error instead of the rest", g.Fisher, g.Covariance, g.StdErr, g.FisherErr)
	}
}
