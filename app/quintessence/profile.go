package quintessence

import (
	"context"
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/memory"
)

// ProfilePoint is the best fit at one λ: χ², Ω_m, h·r_d [Mpc] and w0.
type ProfilePoint struct {
	Lambda, Chi2, OmegaM, HRd, W0 float64
	// V0 is the flat ṽ0 at the best fit; Alpha = c/(H0 r_d).
	V0, Alpha float64
	// Iterations is the number of Gauss–Newton iterations taken.
	Iterations int
}

// data holds d and the Cholesky factor L of C (C = L·Lᵀ), row-major.
type data struct {
	d []float64
	l []float64
}

func newData() (*data, error) {
	const n = 13
	c := DESIDR2Cov()
	l := make([]float64, n*n)
	for j := range n {
		s := c[j*n+j]
		for k := range j {
			s -= l[j*n+k] * l[j*n+k]
		}
		if !(s > 0) {
			return nil, errors.New("quintessence: the covariance is not positive definite")
		}
		l[j*n+j] = math.Sqrt(s)
		for i := j + 1; i < n; i++ {
			s := c[i*n+j]
			for k := range j {
				s -= l[i*n+k] * l[j*n+k]
			}
			l[i*n+j] = s / l[j*n+j]
		}
	}
	d := make([]float64, n)
	for i, m := range DESIDR2 {
		d[i] = m.Value
	}
	return &data{d: d, l: l}, nil
}

// whiten returns L⁻¹·v (forward substitution).
func (dt *data) whiten(v []float64) []float64 {
	const n = 13
	out := make([]float64, n)
	for i := range n {
		s := v[i]
		for k := range i {
			s -= dt.l[i*n+k] * out[k]
		}
		out[i] = s / dt.l[i*n+i]
	}
	return out
}

// Chi2 returns χ² of the template m (units of c/H0) scaled by α.
func (dt *data) chi2(m []float64, alpha float64) float64 {
	r := make([]float64, len(m))
	for i := range m {
		r[i] = dt.d[i] - alpha*m[i]
	}
	w := dt.whiten(r)
	var s float64
	for _, v := range w {
		s += v * v
	}
	return s
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
// data set j at λ_i). Each pair's fit depends only on its own data and
// λ: a pair that has converged is re-solved with the same parameters
// while the others iterate, so its point is the one a profile of its data
// set alone gives, bit for bit.
func profileMany(ctx context.Context, lambdas []float64, omegaR float64, tol Tolerances, dts []*data) ([][]ProfilePoint, error) {
	if err := checkLambdas(lambdas); err != nil {
		return nil, err
	}
	nl := len(lambdas)
	n := nl * len(dts)
	cs := make([]Cosmology, n)
	alpha := make([]float64, n)
	pts := make([]ProfilePoint, n)
	active := make([]bool, n)
	for i := range n {
		cs[i] = Cosmology{OmegaM: 0.3, Lambda: lambdas[i%nl], OmegaR: omegaR}
		active[i] = true
	}
	for iter := 1; iter <= 50; iter++ {
		bgs, err := flatten(ctx, cs, tol)
		if err != nil {
			return nil, err
		}
		any := false
		for i, bg := range bgs {
			dt := dts[i/nl]
			cs[i].V0 = bg.V0
			m, dm := templates(bg)
			if iter == 1 {
				alpha[i] = bestAlpha(dt, m)
			}
			pts[i] = ProfilePoint{Lambda: lambdas[i%nl], Chi2: dt.chi2(m, alpha[i]), OmegaM: cs[i].OmegaM,
				HRd: CKms / 100 / alpha[i], W0: bg.W0, V0: bg.V0, Alpha: alpha[i], Iterations: iter}
			if !active[i] {
				continue
			}
			// Gauss–Newton on θ = (Ω_m, α).
			r := make([]float64, 13)
			j0, j1 := make([]float64, 13), make([]float64, 13)
			for k := range m {
				r[k] = dt.d[k] - alpha[i]*m[k]
				j0[k] = -alpha[i] * dm[k]
				j1[k] = -m[k]
			}
			wr, w0, w1 := dt.whiten(r), dt.whiten(j0), dt.whiten(j1)
			var a00, a01, a11, g0, g1 float64
			for k := range wr {
				a00 += w0[k] * w0[k]
				a01 += w0[k] * w1[k]
				a11 += w1[k] * w1[k]
				g0 += w0[k] * wr[k]
				g1 += w1[k] * wr[k]
			}
			det := a00*a11 - a01*a01
			dOm := -(a11*g0 - a01*g1) / det
			dAl := -(-a01*g0 + a00*g1) / det
			cs[i].OmegaM += dOm
			alpha[i] += dAl
			if math.Abs(dOm) < 1e-11 {
				active[i] = false
			} else {
				any = true
			}
		}
		if !any {
			out := make([][]ProfilePoint, len(dts))
			for j := range out {
				out[j] = pts[j*nl : (j+1)*nl : (j+1)*nl]
			}
			return out, nil
		}
	}
	return nil, errors.New("quintessence: Gauss–Newton did not converge in 50 iterations")
}

// bestAlpha returns the α minimising χ² for the template m:
// α* = (mᵀC⁻¹d)/(mᵀC⁻¹m).
func bestAlpha(dt *data, m []float64) float64 {
	wm, wd := dt.whiten(m), dt.whiten(dt.d)
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
