package halo

import (
	"context"
	"math"
	"strings"
	"testing"
)

// The fit recovers the truth from a noisy catalogue within 3 of its
// Fisher standard errors, from the default start 10% away, with a χ²
// consistent with its degrees of freedom; the energy stage lands well
// inside the basin of the final positions' least squares.
func TestFitRecoversTruth(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		fr, err := Fit(context.Background(), Config{N: 100, Seed: seed}, FitConfig{NoiseSeed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if !fr.Converged {
			t.Fatalf("seed %d: status %v", seed, fr.Status)
		}
		if fr.Start[0] != 1.1 || math.Abs(fr.Start[1]-0.77) > 1e-15 || fr.Config.Sigma != DefaultSigma {
			t.Errorf("seed %d: defaults: start %v, σ %g", seed, fr.Start, fr.Config.Sigma)
		}
		for c := range 2 {
			if math.Abs(fr.Pull[c]) > 3 || !(fr.StdErr[c] > 0) {
				t.Errorf("seed %d: %s = %.10g ± %.3g, truth %g: %.2f stderr off", seed, fr.Names[c], fr.Estimate[c], fr.StdErr[c], fr.Truth[c], fr.Pull[c])
			}
			if math.Abs(fr.LMStart[c]-fr.Truth[c]) > 0.01*fr.Truth[c] {
				t.Errorf("seed %d: energy stage gave %s = %g, truth %g", seed, fr.Names[c], fr.LMStart[c], fr.Truth[c])
			}
			if fr.Within[c] != (math.Abs(fr.Pull[c]) <= 1) {
				t.Errorf("seed %d: Within %v, pull %v", seed, fr.Within, fr.Pull)
			}
		}
		if fr.Dof != 598 || math.Abs(fr.Chi2-float64(fr.Dof)) > 5*math.Sqrt(2*float64(fr.Dof)) {
			t.Errorf("seed %d: χ² = %g for %d dof", seed, fr.Chi2, fr.Dof)
		}
		cv := fr.Covariance
		if cv[1] != cv[2] || math.Abs(math.Sqrt(cv[0])-fr.StdErr[0]) > 1e-12*fr.StdErr[0] || math.Abs(math.Sqrt(cv[3])-fr.StdErr[1]) > 1e-12*fr.StdErr[1] {
			t.Errorf("seed %d: covariance %v, stderr %v", seed, cv, fr.StdErr)
		}
		if len(fr.Catalogue) != 600 || fr.Mocks != nil {
			t.Errorf("seed %d: catalogue %d values, mocks %v", seed, len(fr.Catalogue), fr.Mocks)
		}
	}
}

// Without noise the fit recovers the truth to the optimiser's
// tolerance: the catalogue is the discrete solution at the truth itself.
func TestFitExact(t *testing.T) {
	fr, err := Fit(context.Background(), Config{N: 50, Seed: 3}, FitConfig{Exact: true, Start: []float64{0.9, 0.8}})
	if err != nil {
		t.Fatal(err)
	}
	for c := range 2 {
		if d := math.Abs(fr.Estimate[c] - fr.Truth[c]); !fr.Converged || d > 1e-8*fr.Truth[c] {
			t.Errorf("%s = %.17g, truth %g (off by %.2g; status %v)", fr.Names[c], fr.Estimate[c], fr.Truth[c], d, fr.Status)
		}
	}
	if fr.Chi2 > 1e-6 {
		t.Errorf("χ² = %g without noise", fr.Chi2)
	}
}

// The scatter of refits to noisy mocks matches the Fisher error bars
// (loosely: 20 mocks know the scatter to about 16%).
func TestFitMocks(t *testing.T) {
	fr, err := Fit(context.Background(), Config{N: 40, Seed: 5}, FitConfig{NoiseSeed: 5, Mocks: 20})
	if err != nil {
		t.Fatal(err)
	}
	m := fr.Mocks
	if m == nil || m.K != 20 || m.Used != 20 || len(m.Estimates) != 40 {
		t.Fatalf("mocks %+v", m)
	}
	for c := range 2 {
		if !(m.Ratio[c] > 0.5 && m.Ratio[c] < 1.5) {
			t.Errorf("%s: scatter %.3g, mean stderr %.3g: ratio %.3f outside [0.5, 1.5]", fr.Names[c], m.Scatter[c], m.MeanStdErr[c], m.Ratio[c])
		}
		if math.Abs(m.Bias[c]) > 4 || !(m.RatioErr[c] > 0) {
			t.Errorf("%s: bias %.2f, ratio ± %.3g", fr.Names[c], m.Bias[c], m.RatioErr[c])
		}
	}
	// The mocks differ from each other and from the catalogue.
	if m.Estimates[0] == m.Estimates[2] || m.Estimates[0] == fr.Estimate[0] {
		t.Errorf("mock estimates %v, catalogue's %v", m.Estimates[:4], fr.Estimate)
	}
}

// Direct: from a start close to the truth Levenberg–Marquardt alone
// reaches the same minimum as the two stages; from 10% off in vc the
// final positions' phase wrapping traps it in another minimum, which is
// why the energy stage exists.
func TestFitDirect(t *testing.T) {
	ctx := context.Background()
	r, err := Run(ctx, Config{N: 50, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	two, err := FitRun(ctx, r, FitConfig{})
	if err != nil {
		t.Fatal(err)
	}
	near, err := FitRun(ctx, r, FitConfig{Direct: true, Start: []float64{1.03, 0.72}})
	if err != nil {
		t.Fatal(err)
	}
	if near.EnergyIterations != 0 || near.LMStart[0] != 1.03 {
		t.Errorf("direct: LM started at %v after %d energy iterations", near.LMStart, near.EnergyIterations)
	}
	for c := range 2 {
		if d := math.Abs(near.Estimate[c]-two.Estimate[c]) / two.StdErr[c]; d > 1e-3 {
			t.Errorf("%s: direct %.12g, two stages %.12g: %.2g stderr apart", two.Names[c], near.Estimate[c], two.Estimate[c], d)
		}
	}
	far, err := FitRun(ctx, r, FitConfig{Direct: true})
	if err != nil && !strings.Contains(err.Error(), "error bars") {
		t.Fatal(err)
	}
	if err == nil && math.Abs(far.Pull[0]) < 100 {
		t.Errorf("direct from 10%% off: vc = %.10g, %.2f stderr from the truth: expected a local minimum far away", far.Estimate[0], far.Pull[0])
	}
}

// Bad configurations are refused with the field named.
func TestFitConfigErrors(t *testing.T) {
	ctx := context.Background()
	r, err := Run(ctx, Config{N: 5, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		fc   FitConfig
		want string
	}{
		{FitConfig{Sigma: -1}, "Sigma = -1"},
		{FitConfig{Sigma: math.NaN()}, "Sigma = NaN"},
		{FitConfig{Sigma: math.Inf(1)}, "Sigma = +Inf"},
		{FitConfig{Mocks: -2}, "Mocks = -2"},
		{FitConfig{MaxIter: -1}, "MaxIter = -1"},
		{FitConfig{Start: []float64{1}}, "Start has 1 values"},
		{FitConfig{Start: []float64{1, 0}}, "Start q = 0"},
		{FitConfig{Start: []float64{math.Inf(1), 0.7}}, "Start vc = +Inf"},
	} {
		if _, err := FitRun(ctx, r, c.fc); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.fc, err, c.want)
		}
	}
}
