package quintessence

import (
	"context"
	"fmt"
	"math"
	"sort"
	"sync"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/app/internal/failed"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/sym/tape"
)

// CKms is the speed of light in km/s; c/H0 = 2997.92458 h⁻¹ Mpc.
const CKms = 299792.458

// DefaultRTol and DefaultATol are the solves' tolerances (DP8): the
// observables then carry errors near 1e-10 relative, far below the
// printed digits of the reference values (applications.md §B.7).
const (
	DefaultRTol = 1e-11
	DefaultATol = 1e-11
)

// Tolerances sets the solves' tolerances; zero values take the defaults.
type Tolerances struct{ RTol, ATol float64 }

func (t Tolerances) resolved() Tolerances {
	if t.RTol == 0 && t.ATol == 0 {
		return Tolerances{DefaultRTol, DefaultATol}
	}
	return t
}

// theProblem is Model compiled, once.
var theProblem = sync.OnceValues(func() (*gradsolve.Problem, error) {
	set, err := tape.Build(Model())
	if err != nil {
		return nil, err
	}
	return set.Problem(), nil
})

// Cosmology is one point: (Ω_m, λ, Ω_r) and the ṽ0 that makes it flat.
type Cosmology struct {
	OmegaM, Lambda, OmegaR float64
	V0                     float64
}

// Background is what a solve gives for one cosmology at the redshifts of
// the data: the state today and at each redshift, with its derivatives
// with respect to (Ω_m, ṽ0).
type Background struct {
	Cosmology
	// Phi0, DPhi0 are φ(0) and φ'(0); W0 the equation of state today.
	Phi0, DPhi0, W0 float64
	// F is the flatness residual E²(0) − 1 and FOm, FV0 its partials.
	F, FOm, FV0 float64
	// Z holds the distinct redshifts (ascending); E, DM, DH, DV the
	// observables there in units of c/H0 (E dimensionless), and the
	// *Om, *V0 slices their partial derivatives.
	Z                  []float64
	E, DM, DH, DV      []float64
	DMOm, DHOm, DVOm   []float64
	DMV0, DHV0, DVV0   []float64
	EOm, EV0           []float64
	chi0, chi0Om, chiV []float64
}

// distinct returns the data's distinct redshifts, ascending.
func distinct() []float64 {
	seen := map[float64]bool{}
	var zs []float64
	for _, m := range DESIDR2 {
		if !seen[m.Z] {
			seen[m.Z] = true
			zs = append(zs, m.Z)
		}
	}
	sort.Float64s(zs)
	return zs
}

// solveBackgrounds integrates every cosmology from N_i to 0 with save
// times at the redshifts zs, and sensitivities to (Ω_m, ṽ0).
func solveBackgrounds(ctx context.Context, cs []Cosmology, zs []float64, tol Tolerances) ([]*Background, error) {
	tol = tol.resolved()
	pr, err := theProblem()
	if err != nil {
		return nil, err
	}
	n := len(cs)
	p := make([]float64, 0, 4*n)
	for _, c := range cs {
		p = append(p, c.OmegaM, c.V0, c.Lambda, c.OmegaR)
	}
	// Save times: N = −ln(1+z), ascending in N means descending z.
	save := make([]float64, len(zs))
	for k := range zs {
		save[k] = -math.Log1p(zs[len(zs)-1-k])
	}
	res, err := gradsolve.Solve(ctx, pr, &gradsolve.Ensemble{N: n, Y0: []float64{0, 0, 0}, P: p,
		T0: []float64{NStart}, T1: []float64{0}, Save: save},
		&gradsolve.Options{Method: method.DP8, RTol: tol.RTol, ATol: tol.ATol,
			Sens: &gradsolve.Sensitivity{Wrt: []gradsolve.Wrt{gradsolve.Param(0), gradsolve.Param(1)}}})
	if err != nil {
		return nil, err
	}
	if err := failed.Error("quintessence: the background solves", res, func(i int) string {
		return fmt.Sprintf("λ = %g, Ω_m = %g, Ω_r = %g", cs[i].Lambda, cs[i].OmegaM, cs[i].OmegaR)
	}); err != nil {
		return nil, err
	}
	out := make([]*Background, n)
	for i, c := range cs {
		bg := &Background{Cosmology: c, Z: zs}
		y, s := res.Row(i), res.S[i*6:(i+1)*6] // S[d·2 + c]: d ∈ (φ, φ', χ), c ∈ (Ω_m, ṽ0)
		bg.Phi0, bg.DPhi0 = y[0], y[1]
		e2, e2Om, e2V0 := esq(c, 0, y, s)
		bg.F, bg.FOm, bg.FV0 = e2-1, e2Om, e2V0
		x := y[1] * y[1] / 6
		wv := c.V0 * math.Exp(-c.Lambda*y[0]) / e2
		bg.W0 = (x - wv) / (x + wv)
		nz := len(zs)
		for _, f := range []*[]float64{&bg.E, &bg.DM, &bg.DH, &bg.DV, &bg.DMOm, &bg.DHOm, &bg.DVOm, &bg.DMV0, &bg.DHV0, &bg.DVV0, &bg.EOm, &bg.EV0} {
			*f = make([]float64, nz)
		}
		for k, z := range zs {
			row := nz - 1 - k // save row of redshift z
			ys := res.SavedRow(i, row)
			ss := res.SavedS[((i*nz+row)*3)*2 : ((i*nz+row)*3+3)*2]
			e2z, e2zOm, e2zV0 := esq(c, save[row], ys, ss)
			ez := math.Sqrt(e2z)
			bg.E[k], bg.EOm[k], bg.EV0[k] = ez, e2zOm/(2*ez), e2zV0/(2*ez)
			bg.DH[k] = 1 / ez
			bg.DHOm[k], bg.DHV0[k] = -bg.EOm[k]/(ez*ez), -bg.EV0[k]/(ez*ez)
			bg.DM[k] = y[2] - ys[2]
			bg.DMOm[k], bg.DMV0[k] = s[4]-ss[4], s[5]-ss[5]
			// D_V = (z·D_M²·D_H)^(1/3): d ln D_V = (2 d ln D_M + d ln D_H)/3.
			bg.DV[k] = math.Cbrt(z * bg.DM[k] * bg.DM[k] * bg.DH[k])
			bg.DVOm[k] = bg.DV[k] * (2*bg.DMOm[k]/bg.DM[k] + bg.DHOm[k]/bg.DH[k]) / 3
			bg.DVV0[k] = bg.DV[k] * (2*bg.DMV0[k]/bg.DM[k] + bg.DHV0[k]/bg.DH[k]) / 3
		}
		out[i] = bg
	}
	return out, nil
}

// esq returns E² = (A + W)/K at e-fold N from the state y = (φ, φ', χ)
// and its total derivatives with respect to (Ω_m, ṽ0), given the
// sensitivities s (s[d·2 + c]).
func esq(c Cosmology, N float64, y, s []float64) (e2, dOm, dV0 float64) {
	e3, e4 := math.Exp(-3*N), math.Exp(-4*N)
	a := c.OmegaM*e3 + c.OmegaR*e4
	w := c.V0 * math.Exp(-c.Lambda*y[0])
	k := 1 - y[1]*y[1]/6
	q := a + w
	e2 = q / k
	// dQ = dA + W·(−λ dφ) + (W/ṽ0)·dṽ0;  dK = −φ' dφ'/3.
	dq := func(col int, explicitA, explicitW float64) float64 {
		return explicitA + w*(-c.Lambda*s[0*2+col]) + explicitW
	}
	dk := func(col int) float64 { return -y[1] * s[1*2+col] / 3 }
	dqOm, dqV0 := dq(0, e3, 0), dq(1, 0, math.Exp(-c.Lambda*y[0]))
	dOm = (dqOm*k - q*dk(0)) / (k * k)
	dV0 = (dqV0*k - q*dk(1)) / (k * k)
	return e2, dOm, dV0
}

// Flatten finds, for each cosmology, the ṽ0 that makes the universe
// flat today (E²(0) = 1: applications.md §B.3) by Newton's method on
// the forward sensitivity ∂E²(0)/∂ṽ0, starting from 1 − Ω_m − Ω_r, to
// |E²(0) − 1| < 1e-13. It returns the backgrounds at the solution.
func Flatten(ctx context.Context, cs []Cosmology) ([]*Background, error) {
	return flatten(ctx, cs, Tolerances{})
}

func flatten(ctx context.Context, cs []Cosmology, tol Tolerances) ([]*Background, error) {
	zs := distinct()
	cur := append([]Cosmology(nil), cs...)
	for i := range cur {
		if cur[i].V0 == 0 {
			cur[i].V0 = 1 - cur[i].OmegaM - cur[i].OmegaR
		}
	}
	for range 50 {
		bgs, err := solveBackgrounds(ctx, cur, zs, tol)
		if err != nil {
			return nil, err
		}
		done := true
		for i, bg := range bgs {
			if math.Abs(bg.F) > 1e-13 {
				done = false
				step := bg.F / bg.FV0
				cur[i].V0 -= step
				if !(cur[i].V0 > 0) {
					cur[i].V0 = 0.5 * bgs[i].V0
				}
			}
		}
		if done {
			return bgs, nil
		}
	}
	return nil, fmt.Errorf("quintessence: the flatness solve did not converge")
}

// Model vector and its total derivative with respect to Ω_m (through
// the flatness condition: dṽ0/dΩ_m = −F_Ωm/F_ṽ0), in the order of
// DESIDR2, in units of c/H0 (α = 1).
func templates(bg *Background) (m, dm []float64) {
	dv0 := -bg.FOm / bg.FV0
	idx := map[float64]int{}
	for k, z := range bg.Z {
		idx[z] = k
	}
	for _, meas := range DESIDR2 {
		k := idx[meas.Z]
		var v, dOm, dV0 float64
		switch meas.Kind {
		case DV:
			v, dOm, dV0 = bg.DV[k], bg.DVOm[k], bg.DVV0[k]
		case DM:
			v, dOm, dV0 = bg.DM[k], bg.DMOm[k], bg.DMV0[k]
		case DH:
			v, dOm, dV0 = bg.DH[k], bg.DHOm[k], bg.DHV0[k]
		}
		m = append(m, v)
		dm = append(dm, dOm+dV0*dv0)
	}
	return m, dm
}
