// Package quintessence fits thawing quintessence with an exponential
// potential to DESI DR2 BAO (shared/reference/applications.md §B).
//
// A flat universe with matter Ω_m, radiation Ω_r (default 0) and a
// canonical scalar φ with V(φ) = V0·e^(−λφ), in units 8πG = 1, H0 = 1,
// with ṽ0 = V0/(3H0²) and N = ln a (N = 0 today), ' = d/dN:
//
//	A = Ω_m e^(−3N) + Ω_r e^(−4N),  B = 3Ω_m e^(−3N) + 4Ω_r e^(−4N)
//	W = ṽ0 e^(−λφ),  K = 1 − φ'²/6,  Q = A + W,  E² = H²/H0² = Q/K
//	φ'' = −3φ' + φ'³/2 + K·(φ'B/2 + 3λW)/Q
//	χ'  = e^(−N)·√(K/Q)          (comoving distance in units of c/H0)
//
// from N_i = ln 10⁻⁴ with φ = φ' = χ = 0 (thawing: frozen by Hubble
// friction). The flatness condition E²(0) = 1 fixes ṽ0 (Newton on the
// forward sensitivity ∂(φ, φ')/∂ṽ0); derivatives of the observables with
// respect to Ω_m include dṽ0/dΩ_m by the implicit function theorem.
// The BAO observables are D_M/r_d = α·(χ(0) − χ(N_z)), D_H/r_d = α/E(z)
// and D_V/r_d = α·[z·D_M²·D_H]^(1/3) in units of c/H0, with
// α = c/(H0·r_d) = 2997.92458/(h·r_d [Mpc]).
package quintessence

import (
	"math"

	"github.com/gradsolve/gradsolve/sym"
)

// NStart is the initial e-fold, ln 10⁻⁴: deep in matter domination.
// Starting at 10⁻³ changes the profile of §B.7 in no printed digit, but
// moves ṽ0 and φ(0) at λ = 1 by 2e-9 relative; the background reference
// values of §B.7 (to 10 digits) match a start at 10⁻⁴ to 1e-9.
var NStart = math.Log(1e-4)

// Model returns the background equations in N with states (phi, dphi,
// chi) and parameters (omega_m, v0, lambda, omega_r).
func Model() *sym.Model {
	m := sym.NewModel("quintessence")
	phi, dphi, chi := m.State("phi", 0), m.State("dphi", 0), m.State("chi", 0)
	om, v0, lam, or := m.Param("omega_m", 0.3), m.Param("v0", 0.7), m.Param("lambda", 0), m.Param("omega_r", 0)
	n := m.Time()
	c := m.Const
	e3 := sym.Exp(n.MulConst(-3))
	e4 := sym.Exp(n.MulConst(-4))
	a := om.Mul(e3).Add(or.Mul(e4))
	b := c(3).Mul(om).Mul(e3).Add(c(4).Mul(or).Mul(e4))
	w := v0.Mul(sym.Exp(lam.Neg().Mul(phi)))
	k := c(1).Sub(dphi.Mul(dphi).Div(c(6)))
	q := a.Add(w)
	ddphi := c(-3).Mul(dphi).Add(dphi.Mul(dphi).Mul(dphi).Div(c(2))).
		Add(k.Mul(dphi.Mul(b).Div(c(2)).Add(c(3).Mul(lam).Mul(w))).Div(q))
	m.Deriv(phi, dphi)
	m.Deriv(dphi, ddphi)
	m.Deriv(chi, sym.Exp(n.Neg()).Mul(sym.Sqrt(k.Div(q))))
	m.T0, m.T1 = NStart, 0
	_ = chi
	return m
}
