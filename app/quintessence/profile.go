package quintessence

import (
	"context"
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/fit"
	"github.com/gradsolve/gradsolve/internal/memory"
)

// ProfilePoint is the best fit at one λ: χ², Ω_m, h·r_d [Mpc] and w0.
type ProfilePoint struct {
	Lambda, Chi2, OmegaM, HRd, W0 float64
	// V0 is the flat ṽ0 at the best fit; Alpha = c/(H0 r_d).
	V0, Alpha float64
	// Iterations is the number of Gauss–Newton iterations taken.
	Iterations int
	// SigmaOmegaM and SigmaHRd are the Fisher standard errors of Ω_m
	// and h·r_d [Mpc] at this λ (marginal over the other: the square
	// roots of the diagonal of (JᵀC⁻¹J)⁻¹ for θ = (Ω_m, α), with
	// σ_hrd = h·r_d·σ_α/α), from fit.RunLSQ's Fisher information at the
	// fit's last evaluation; 0 where it is singular.
	SigmaOmegaM, SigmaHRd float64
}

// data holds a data vector d, in the order of DESIDR2, and the noise
// model of the DESI DR2 covariance C, factored (fit.Whitener: C = L·Lᵀ).
type data struct {
	d []float64
	w *fit.Whitener
}

func newData() (*data, error) {
	w, err := fit.NewWhitener(fit.Gaussian{Covariance: DESIDR2Cov()}, len(DESIDR2))
	if err != nil {
		return nil, fmt.Errorf("quintessence: the DESI DR2 covariance: %w", err)
	}
	d := make([]float64, len(DESIDR2))
	for i, m := range DESIDR2 {
		d[i] = m.Value
	}
	return &data{d: d, w: w}, nil
}

// chi2 returns χ² of the template m (units of c/H0) scaled by α.
func (dt *data) chi2(m []float64, alpha float64) float64 {
	r := make([]float64, len(m))
	for i := range m {
		r[i] = dt.d[i] - alpha*m[i]
	}
	return dt.w.Chi2(r)
}

// Profile fits (Ω_m, h·r_d) at each λ of the grid by Gauss–Newton, all λ
// at once as one ensemble: residual r = L⁻¹(d − α·m(Ω_m)), Jacobian
// J = −L⁻¹[α·dm/dΩ_m, m], step Δθ = −(JᵀJ)⁻¹Jᵀr (applications.md §B.7),
// with dm/dΩ_m from the forward sensitivities and the flatness condition,
// until |ΔΩ_m| < 1e-11. Ω_r is fixed (0 for the reference results).
func Profile(ctx context.Context, lambdas []float64, omegaR float64) ([]ProfilePoint, error) {
	return ProfileWith(ctx, lambdas, omegaR, Tolerances{})
}

// CheckSize refuses a grid of n values of λ whose arrays overflow an int
// or do not fit in the memory available: per grid point the fit's state,
// the profile point, two backgrounds (the current one and the one being
// solved) with their observables at every redshift of the data, and the
// solve's arrays. The caller may call it before it builds the grid; its
// error names the grid's size and the bytes.
func CheckSize(n int) error {
	nz := len(distinct())
	var b memory.Budget
	b.Add("grid", "n", int(unsafe.Sizeof(Cosmology{})+unsafe.Sizeof(ProfilePoint{}))+8+8+1, n) // λ, cs, pts, alpha, active
	b.Add("backgrounds", "2·n·(13·nz+16)", 8, 2, n, 13*nz+16)                                  // 13 slices of nz, the struct
	f, err := gradsolve.Sizes{N: n, Dim: 3, NumParams: 4, K: nz, NS: 2}.Footprint()
	if err != nil {
		return err
	}
	for _, a := range f.Arrays {
		b.AddBytes(a.Name, a.Bytes)
	}
	b.Add("parameters", "4·n", 8, 4, n)
	// fit.RunLSQ: per pair θ, r (13) and J (13×2) of the evaluation, the
	// group's state (16 values) and its result (14), and the structs.
	b.Add("least squares", "n", 8*71+2*int(unsafe.Sizeof(fit.LSQGroup{}))+17, n)
	return memory.Check(&b, fmt.Sprintf("quintessence: a grid of %d values of λ", n), "the arrays", "use fewer grid points")
}

// ProfileWith is Profile with the solves' tolerances given.
func ProfileWith(ctx context.Context, lambdas []float64, omegaR float64, tol Tolerances) ([]ProfilePoint, error) {
	if len(lambdas) == 0 {
		return nil, errors.New("quintessence: empty λ grid")
	}
	if err := CheckSize(len(lambdas)); err != nil {
		return nil, err
	}
	dt, err := newData()
	if err != nil {
		return nil, err
	}
	pts, err := profileMany(ctx, lambdas, omegaR, tol, []*data{dt})
	if err != nil {
		return nil, err
	}
	return pts[0], nil
}

// checkLambdas refuses a λ that is not finite or is negative.
func checkLambdas(lambdas []float64) error {
	for _, l := range lambdas {
		if math.IsNaN(l) || math.IsInf(l, 0) || l < 0 {
			return fmt.Errorf("quintessence: λ = %g: must be finite and ≥ 0 (λ → −λ is a symmetry)", l)
		}
	}
	return nil
}

// profileMany profiles every data set of dts over the grid lambdas, all
// (data set, λ) pairs at once as one ensemble (pair j·len(lambdas)+i is
// data set j at λ_i): a batch of independent Gauss–Newton fits of θ =
// (Ω_m, α), one group per pair, run by fit.RunLSQ with the residuals
// r = d − α·m(Ω_m), their Jacobian −[α·dm/dΩ_m, m] and the DESI DR2
// covariance as the noise model, each pair converging on its own
// (|ΔΩ_m| < 1e-11; α is left out of the test). α starts at its best
// value for the start's templates (bestAlpha). Each pair's fit depends
// only on its own data and λ: a pair that has converged is re-solved at
// its estimate while the others iterate.
func profileMany(ctx context.Context, lambdas []float64, omegaR float64, tol Tolerances, dts []*data) ([][]ProfilePoint, error) {
	if err := checkLambdas(lambdas); err != nil {
		return nil, err
	}
	nl := len(lambdas)
	n := nl * len(dts)
	cs := make([]Cosmology, n)
	for i := range n {
		cs[i] = Cosmology{OmegaM: 0.3, Lambda: lambdas[i%nl], OmegaR: omegaR}
	}
	// The start: the backgrounds at Ω_m = 0.3 give α's start and serve
	// the first evaluation.
	bgs, err := flatten(ctx, cs, tol)
	if err != nil {
		return nil, err
	}
	start := make([]float64, 2*n)
	for i, bg := range bgs {
		m, _ := templates(bg)
		start[2*i], start[2*i+1] = cs[i].OmegaM, bestAlpha(dts[i/nl], m)
	}
	pts := make([]ProfilePoint, n)
	eval := func(ctx context.Context, e *fit.LSQEval) error {
		if e.Evaluation > 1 {
			for i := range cs {
				cs[i].OmegaM = e.Point(i)[0]
			}
			var err error
			if bgs, err = flatten(ctx, cs, tol); err != nil {
				return err
			}
		}
		for i, bg := range bgs {
			dt := dts[i/nl]
			cs[i].V0 = bg.V0
			m, dm := templates(bg)
			alpha := e.Point(i)[1]
			r, jac := e.Residual(i), e.Jacobian(i)
			for k := range m {
				r[k] = dt.d[k] - alpha*m[k]
				jac[2*k], jac[2*k+1] = -alpha*dm[k], -m[k]
			}
			pts[i] = ProfilePoint{Lambda: lambdas[i%nl], Chi2: dt.w.Chi2(r), OmegaM: cs[i].OmegaM,
				HRd: CKms / 100 / alpha, W0: bg.W0, V0: bg.V0, Alpha: alpha, Iterations: e.Evaluation}
		}
		return nil
	}
	rep, err := fit.RunLSQ(ctx, &fit.LSQ{Params: []string{"omega_m", "alpha"}, Groups: n, Residuals: len(DESIDR2),
		Start: start, Noise: fit.Gaussian{Covariance: DESIDR2Cov()}, Eval: eval,
		MaxIter: 50, StepTol: []float64{1e-11, math.Inf(1)}})
	if err != nil {
		return nil, err
	}
	for i, g := range rep.Groups {
		switch g.Status {
		case fit.Converged:
		case fit.MaxIterations:
			return nil, errors.New("quintessence: Gauss–Newton did not converge in 50 iterations")
		default:
			return nil, fmt.Errorf("quintessence: the fit at λ = %g: %v: %w", lambdas[i%nl], g.Status, g.Err)
		}
	}
	for i, g := range rep.Groups {
		if g.StdErr != nil {
			pts[i].SigmaOmegaM, pts[i].SigmaHRd = g.StdErr[0], pts[i].HRd*g.StdErr[1]/math.Abs(pts[i].Alpha)
		}
	}
	out := make([][]ProfilePoint, len(dts))
	for j := range out {
		out[j] = pts[j*nl : (j+1)*nl : (j+1)*nl]
	}
	return out, nil
}

// bestAlpha returns the α minimising χ² for the template m:
// α* = (mᵀC⁻¹d)/(mᵀC⁻¹m).
func bestAlpha(dt *data, m []float64) float64 {
	wm, wd := dt.w.Whiten(nil, m), dt.w.Whiten(nil, dt.d)
	var num, den float64
	for k := range wm {
		num += wm[k] * wd[k]
		den += wm[k] * wm[k]
	}
	return num / den
}

// Interval returns the λ interval where Δχ² = χ² − min χ² ≤ 1, by
// linear interpolation between grid points (NaN where the grid does
// not bracket a crossing), and the λ of the minimum.
func Interval(pts []ProfilePoint) (lo, hi, best float64) {
	if len(pts) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	ib := 0
	for i, p := range pts {
		if p.Chi2 < pts[ib].Chi2 {
			ib = i
		}
	}
	min := pts[ib].Chi2
	cross := func(a, b ProfilePoint) float64 {
		da, db := a.Chi2-min-1, b.Chi2-min-1
		return a.Lambda + (b.Lambda-a.Lambda)*da/(da-db)
	}
	lo, hi = math.NaN(), math.NaN()
	for i := ib; i > 0; i-- {
		if pts[i-1].Chi2-min > 1 {
			lo = cross(pts[i-1], pts[i])
			break
		}
	}
	for i := ib; i+1 < len(pts); i++ {
		if pts[i+1].Chi2-min > 1 {
			hi = cross(pts[i], pts[i+1])
			break
		}
	}
	return lo, hi, pts[ib].Lambda
}
