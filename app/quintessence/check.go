package quintessence

import (
	"context"
	"fmt"
	"math"
)

// ReferenceProfile is the reference profile of applications.md §B.7 (DESI
// DR2 BAO only, Ω_r = 0; computed there with fixed-step RK4 from a =
// 1e-3, bisection on ṽ0, golden-section search on Ω_m and analytic α),
// with its printed digits: χ² and h·r_d to 3 decimals, Ω_m and w0 to 4.
var ReferenceProfile = []ProfilePoint{
	{Lambda: 0.0, Chi2: 10.271, OmegaM: 0.2975, HRd: 101.540, W0: -1.0000},
	{Lambda: 0.2, Chi2: 10.146, OmegaM: 0.2978, HRd: 101.431, W0: -0.9939},
	{Lambda: 0.4, Chi2: 9.794, OmegaM: 0.2989, HRd: 101.102, W0: -0.9754},
	{Lambda: 0.6, Chi2: 9.288, OmegaM: 0.3007, HRd: 100.548, W0: -0.9447},
	{Lambda: 0.8, Chi2: 8.774, OmegaM: 0.3033, HRd: 99.760, W0: -0.9015},
	{Lambda: 0.9, Chi2: 8.589, OmegaM: 0.3048, HRd: 99.273, W0: -0.8752},
	{Lambda: 1.0, Chi2: 8.515, OmegaM: 0.3066, HRd: 98.721, W0: -0.8457},
	{Lambda: 1.1, Chi2: 8.617, OmegaM: 0.3086, HRd: 98.099, W0: -0.8130},
	{Lambda: 1.2, Chi2: 8.986, OmegaM: 0.3109, HRd: 97.403, W0: -0.7770},
	{Lambda: 1.4, Chi2: 11.083, OmegaM: 0.3162, HRd: 95.762, W0: -0.6950},
	{Lambda: 1.6, Chi2: 16.603, OmegaM: 0.3231, HRd: 93.720, W0: -0.5990},
}

// CheckResult is the outcome of Check.
type CheckResult struct {
	// Matched is the number of grid points compared with the reference
	// profile (those whose λ is in it, to 1e-12), and Mismatches lists
	// the ones that differ beyond half a unit of the printed digits.
	Matched    int
	Mismatches []string
	// MaxChi2Diff is the largest |χ²| difference against a refit at
	// rtol = atol = 1e-13: the solves' own contribution to the profile.
	MaxChi2Diff float64
	Pass        bool
}

// CheckTolerance bounds the refit difference of χ²: 1e-6, a thousand
// times below the printed digits of the reference profile.
const CheckTolerance = 1e-6

// Check compares a profile (Ω_r = 0) with ReferenceProfile where their λ
// coincide, and with a refit at tight tolerances.
func Check(ctx context.Context, pts []ProfilePoint) (*CheckResult, error) {
	cr := &CheckResult{}
	for _, p := range pts {
		for _, w := range ReferenceProfile {
			if math.Abs(p.Lambda-w.Lambda) > 1e-12 {
				continue
			}
			cr.Matched++
			if math.Abs(p.Chi2-w.Chi2) > 5e-4 || math.Abs(p.OmegaM-w.OmegaM) > 5e-5 || math.Abs(p.HRd-w.HRd) > 5e-4 || math.Abs(p.W0-w.W0) > 5e-5 {
				cr.Mismatches = append(cr.Mismatches, fmt.Sprintf("λ = %g: χ² %.4f Ω_m %.5f h·r_d %.4f w0 %.5f; reference %.3f %.4f %.3f %.4f",
					p.Lambda, p.Chi2, p.OmegaM, p.HRd, p.W0, w.Chi2, w.OmegaM, w.HRd, w.W0))
			}
		}
	}
	lambdas := make([]float64, len(pts))
	for i, p := range pts {
		lambdas[i] = p.Lambda
	}
	tight, err := ProfileWith(ctx, lambdas, 0, Tolerances{RTol: 1e-13, ATol: 1e-13})
	if err != nil {
		return nil, err
	}
	for i := range pts {
		cr.MaxChi2Diff = math.Max(cr.MaxChi2Diff, math.Abs(pts[i].Chi2-tight[i].Chi2))
	}
	cr.Pass = len(cr.Mismatches) == 0 && cr.MaxChi2Diff <= CheckTolerance
	return cr, nil
}
