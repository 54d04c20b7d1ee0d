package quintessence

import (
	"context"
	"math"
	"testing"
)

// The background reference values of applications.md §B.7 at Ω_m = 0.3,
// Ω_r = 0 (scipy DOP853 at rtol 1e-12 with brentq; 10 significant
// digits printed): ṽ0, φ(0), φ'(0), w0 and the distances, to 1e-8
// relative (our solve: DP8 at 1e-11).
func TestBackgroundReference(t *testing.T) {
	bgs, err := Flatten(context.Background(), []Cosmology{{OmegaM: 0.3, Lambda: 0}, {OmegaM: 0.3, Lambda: 0.5}, {OmegaM: 0.3, Lambda: 1}})
	if err != nil {
		t.Fatal(err)
	}
	near := func(what string, got, want, tol float64) {
		t.Helper()
		if math.Abs(got-want) > tol*math.Max(1, math.Abs(want)) {
			t.Errorf("%s = %.12g, reference %.12g", what, got, want)
		}
	}
	want := []struct{ v0, phi, dphi, w0 float64 }{
		{0.7, 0, 0, -1},
		{0.7408469868, 0.1521907252, 0.2839346575, -0.96161005},
		{0.8959594292, 0.3283921855, 0.5736045672, -0.84332276},
	}
	for i, w := range want {
		near("ṽ0", bgs[i].V0, w.v0, 1e-9)
		near("φ(0)", bgs[i].Phi0, w.phi, 1e-9)
		near("φ'(0)", bgs[i].DPhi0, w.dphi, 1e-9)
		near("w0", bgs[i].W0, w.w0, 1e-8)
	}
	at := func(bg *Background, z float64) int {
		for k, zz := range bg.Z {
			if zz == z {
				return k
			}
		}
		t.Fatalf("z = %g not among %v", z, bg.Z)
		return -1
	}
	rows := []struct {
		i                int
		z, e, dm, dh, dv float64
	}{
		{0, 0.51, 1.3163910133, 0.4486033853, 0.7596527095, 0.4272054523},
		{0, 2.33, 3.4318815685, 1.3128841442, 0.2913853465, 1.0538014985},
		{1, 0.51, 1.3257363569, 0.4463382210, 0.7542977869, 0.4247633676},
		{1, 2.33, 3.4375663894, 1.3067723567, 0.2909034726, 1.0499490739},
		{2, 0.295, 1.1945708738, 0.2701528793, 0.8371206949, 0.2621861614},
		{2, 0.51, 1.3575063811, 0.4390898383, 0.7366447877, 0.4168486089},
		{2, 2.33, 3.4588139771, 1.2861221978, 0.2891164447, 1.0367269650},
	}
	for _, r := range rows {
		bg := bgs[r.i]
		k := at(bg, r.z)
		near("E", bg.E[k], r.e, 1e-9)
		near("D_M", bg.DM[k], r.dm, 1e-9)
		near("D_H", bg.DH[k], r.dh, 1e-9)
		near("D_V", bg.DV[k], r.dv, 1e-9)
	}
}

// The derivatives through the flatness condition agree with central
// differences of the flat model: dm/dΩ_m to 1e-6 relative. With
// δ = 1e-5 the truncation error is ~δ²·|d³m/dΩ_m³| ≈ 1e-10 and the solves'
// errors (≈ 1e-11 relative, from rtol 1e-11, and the flatness residual
// 1e-13) divided by δ give ≈ 1e-6 at most.
func TestTemplateDerivative(t *testing.T) {
	ctx := context.Background()
	bg, err := Flatten(ctx, []Cosmology{{OmegaM: 0.31, Lambda: 0.8}})
	if err != nil {
		t.Fatal(err)
	}
	_, dm := templates(bg[0])
	const d = 1e-5
	bp, _ := Flatten(ctx, []Cosmology{{OmegaM: 0.31 + d, Lambda: 0.8}})
	bm, _ := Flatten(ctx, []Cosmology{{OmegaM: 0.31 - d, Lambda: 0.8}})
	mp, _ := templates(bp[0])
	mm, _ := templates(bm[0])
	for k := range dm {
		fd := (mp[k] - mm[k]) / (2 * d)
		if math.Abs(fd-dm[k]) > 1e-6*math.Abs(fd) {
			t.Errorf("dm[%d]/dΩ_m = %.10g, central difference %.10g", k, dm[k], fd)
		}
	}
}

// The profile reproduces the reference table of applications.md §B.7
// (DESI DR2 BAO only, Ω_r = 0) to its printed digits, including the
// ΛCDM fit χ² = 10.271, Ω_m = 0.2975, h·r_d = 101.54 Mpc.
func TestProfileReference(t *testing.T) {
	var lambdas []float64
	for _, w := range ReferenceProfile {
		lambdas = append(lambdas, w.Lambda)
	}
	pts, err := Profile(context.Background(), lambdas, 0)
	if err != nil {
		t.Fatal(err)
	}
	cr, err := Check(context.Background(), pts)
	if err != nil {
		t.Fatal(err)
	}
	if !cr.Pass || cr.Matched != len(ReferenceProfile) {
		t.Errorf("check: %+v", cr)
	}
	t.Logf("refit difference of χ² at 1e-13: %.2g", cr.MaxChi2Diff)
	lo, hi, best := Interval(pts)
	t.Logf("best λ %.2f, 68%% interval [%.3f, %.3f]", best, lo, hi)
	if best != 1.0 || math.Abs(lo-0.51) > 0.05 || math.Abs(hi-1.27) > 0.05 {
		t.Errorf("best λ %g, interval [%g, %g]; reference ≈ 1.0, [0.51, 1.27]", best, lo, hi)
	}
}

// The Fisher standard errors of (Ω_m, h·r_d) at the best fit, which
// come from fit.RunLSQ's whitened Jacobian (forward sensitivities and
// the flatness condition), against the same errors from a Jacobian
// whose Ω_m column is a central difference of the templates at Ω_m ± δ
// (each a flat background of its own), δ = 1e-4: the difference's
// truncation error is O(δ²) ≈ 1e-8 relative and the solves' (rtol
// 1e-11) contribute about 1e-11/δ = 1e-7, so 1e-5 leaves a margin of
// 100.
func TestProfileStdErr(t *testing.T) {
	ctx := context.Background()
	for _, lambda := range []float64{0, 1} {
		pts, err := Profile(ctx, []float64{lambda}, 0)
		if err != nil {
			t.Fatal(err)
		}
		p := pts[0]
		const delta = 1e-4
		var ms [3][]float64
		for j, om := range []float64{p.OmegaM - delta, p.OmegaM, p.OmegaM + delta} {
			bgs, err := Flatten(ctx, []Cosmology{{OmegaM: om, Lambda: lambda}})
			if err != nil {
				t.Fatal(err)
			}
			ms[j], _ = templates(bgs[0])
		}
		dt, err := newData()
		if err != nil {
			t.Fatal(err)
		}
		n := len(DESIDR2)
		j0, j1 := make([]float64, n), make([]float64, n)
		for k := range n {
			j0[k] = -p.Alpha * (ms[2][k] - ms[0][k]) / (2 * delta)
			j1[k] = -ms[1][k]
		}
		w0, w1 := dt.w.Whiten(nil, j0), dt.w.Whiten(nil, j1)
		var a00, a01, a11 float64
		for k := range n {
			a00 += w0[k] * w0[k]
			a01 += w0[k] * w1[k]
			a11 += w1[k] * w1[k]
		}
		det := a00*a11 - a01*a01
		sOm, sHRd := math.Sqrt(a11/det), p.HRd*math.Sqrt(a00/det)/p.Alpha
		if relErr := math.Abs(p.SigmaOmegaM-sOm) / sOm; relErr > 1e-5 {
			t.Errorf("λ = %g: σ(Ω_m) = %.10g, from finite differences %.10g", lambda, p.SigmaOmegaM, sOm)
		}
		if relErr := math.Abs(p.SigmaHRd-sHRd) / sHRd; relErr > 1e-5 {
			t.Errorf("λ = %g: σ(h·r_d) = %.10g, from finite differences %.10g", lambda, p.SigmaHRd, sHRd)
		}
		t.Logf("λ = %g: Ω_m = %.4f ± %.4f, h·r_d = %.3f ± %.3f Mpc (finite differences: ± %.6g, ± %.6g)",
			lambda, p.OmegaM, p.SigmaOmegaM, p.HRd, p.SigmaHRd, sOm, sHRd)
	}
}
