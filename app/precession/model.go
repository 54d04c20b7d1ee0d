// Package precession runs the binary black-hole spin-precession
// application: the orbit-averaged post-Newtonian equations of
// precession v2 (Gerosa et al. 2023, PRD 108, 024042, arXiv:2304.04801;
// equations after Gerosa & Kesden 2016, arXiv:1605.01067, §4A, as
// restated in shared/reference/applications.md §C), integrated in the
// orbital velocity v = r^(−1/2) from r = 100 M to 10 M for a population
// of binaries, in units G = c = M = 1.
//
// State (10): the unit vectors L̂, Ŝ1, Ŝ2 and the time t; parameters
// (q, χ1, χ2): mass ratio q = m2/m1 ≤ 1 and dimensionless spins. With
// m1 = 1/(1+q), m2 = q/(1+q), η = q/(1+q)², S_i = χ_i·m_i²,
// c1 = Ŝ1·L̂, c2 = Ŝ2·L̂, c12 = Ŝ1·Ŝ2:
//
//	Ω1 = η v⁵ (2 + 3q/2) L̂ + (v⁶/2)[S2 Ŝ2 − 3(S2 c2 + q S1 c1) L̂]
//	Ω2 = η v⁵ (2 + 3/(2q)) L̂ + (v⁶/2)[S1 Ŝ1 − 3(S1 c1 + S2 c2/q) L̂]
//	dŜ1/dt = Ω1 × Ŝ1,  dŜ2/dt = Ω2 × Ŝ2,  dL̂/dt = −(v/η)(S1 dŜ1/dt + S2 dŜ2/dt)
//	dv/dt = (32/5) η v⁹ [1 + b2 v² + b3 v³ + b4 v⁴ + b5 v⁵ + b6 v⁶ + b7 v⁷]
//
// with the b_k of §C.2 (all PN orders the code switches on by default),
// and every derivative divided by dv/dt to integrate in v.
//
// Run solves a population at once; RunChunks streams it in chunks of
// Config.Chunk binaries with the same bits, and
// ChooseAccuracy picks the method and tolerances for a target angle
// error by a pilot.
package precession

import (
	"math"

	"github.com/gradsolve/gradsolve/sym"
)

// eulerGamma is γ_E as precession codes it (10 digits, applications.md
// §C.2).
const eulerGamma = 0.5772156649

type vec [3]sym.Expr

func dot(a, b vec) sym.Expr { return sym.Dot(a[:], b[:]) }

func cross(a, b vec) vec {
	return vec{
		a[1].Mul(b[2]).Sub(a[2].Mul(b[1])),
		a[2].Mul(b[0]).Sub(a[0].Mul(b[2])),
		a[0].Mul(b[1]).Sub(a[1].Mul(b[0])),
	}
}

func scale(s sym.Expr, a vec) vec { return vec{s.Mul(a[0]), s.Mul(a[1]), s.Mul(a[2])} }

func add(a, b vec) vec { return vec{a[0].Add(b[0]), a[1].Add(b[1]), a[2].Add(b[2])} }

// Model returns the equations as a symbolic model in v, states
// (Lx, Ly, Lz, S1x, S1y, S1z, S2x, S2y, S2z, t), parameters (q, chi1,
// chi2) with defaults (0.8, 0.5, 0.9), span v from 0.1 (r = 100) to
// 10^(−1/2) (r = 10).
func Model() *sym.Model {
	m := sym.NewModel("precession")
	names := []string{"Lx", "Ly", "Lz", "S1x", "S1y", "S1z", "S2x", "S2y", "S2z"}
	var st [9]sym.Expr
	for i, n := range names {
		st[i] = m.State(n, 0)
	}
	tt := m.State("t", 0)
	q, chi1, chi2 := m.Param("q", 0.8), m.Param("chi1", 0.5), m.Param("chi2", 0.9)
	v := m.Time() // the independent variable is v
	c := m.Const
	L, S1h, S2h := vec{st[0], st[1], st[2]}, vec{st[3], st[4], st[5]}, vec{st[6], st[7], st[8]}

	onePlusQ := c(1).Add(q)
	m1 := c(1).Div(onePlusQ)
	m2 := q.Div(onePlusQ)
	eta := q.Div(onePlusQ.Mul(onePlusQ))
	S1 := chi1.Mul(m1).Mul(m1)
	S2 := chi2.Mul(m2).Mul(m2)
	c1, c2, c12 := dot(S1h, L), dot(S2h, L), dot(S1h, S2h)

	v2 := v.Mul(v)
	v4 := v2.Mul(v2)
	v5 := v4.Mul(v)
	v6 := v5.Mul(v)
	half := c(0.5)
	// Ω1, Ω2.
	o1 := add(scale(eta.Mul(v5).Mul(c(2).Add(c(1.5).Mul(q))), L),
		scale(v6.Mul(half), add(scale(S2, S2h), scale(c(-3).Mul(S2.Mul(c2).Add(q.Mul(S1).Mul(c1))), L))))
	o2 := add(scale(eta.Mul(v5).Mul(c(2).Add(c(1.5).Div(q))), L),
		scale(v6.Mul(half), add(scale(S1, S1h), scale(c(-3).Mul(S1.Mul(c1).Add(S2.Mul(c2).Div(q))), L))))
	dS1 := cross(o1, S1h)
	dS2 := cross(o2, S2h)
	dL := scale(v.Div(eta).Neg(), add(scale(S1, dS1), scale(S2, dS2)))

	// dv/dt with the PN coefficients of §C.2.
	pi := c(math.Pi)
	b2 := c(-743).Sub(c(924).Mul(eta)).Div(c(336))
	b3 := c(4 * math.Pi).
		Sub(chi1.Mul(c1).Mul(c(113.0 / 12).Mul(m1).Mul(m1).Add(c(25.0 / 4).Mul(eta)))).
		Sub(chi2.Mul(c2).Mul(c(113.0 / 12).Mul(m2).Mul(m2).Add(c(25.0 / 4).Mul(eta))))
	m1c1, m2c2 := m1.Mul(chi1), m2.Mul(chi2)
	b4 := c(34103.0 / 18144).Add(c(13661.0 / 2016).Mul(eta)).Add(c(59.0 / 18).Mul(eta).Mul(eta)).
		Add(eta.Mul(chi1).Mul(chi2).Mul(c(721).Mul(c1).Mul(c2).Sub(c(247).Mul(c12))).Div(c(48))).
		Add(m1c1.Mul(m1c1).Mul(c(719).Mul(c1).Mul(c1).Sub(c(233))).Div(c(96))).
		Add(m2c2.Mul(m2c2).Mul(c(719).Mul(c2).Mul(c2).Sub(c(233))).Div(c(96)))
	b5 := pi.Neg().Mul(c(4159).Add(c(15876).Mul(eta))).Div(c(672))
	b6 := c(16447322263.0 / 139708800).Add(c(16 * math.Pi * math.Pi / 3)).
		Sub(c(1712.0 / 105).Mul(c(eulerGamma).Add(sym.Log(c(4).Mul(v))))).
		Add(c(451*math.Pi*math.Pi/48 - 56198689.0/217728).Mul(eta)).
		Add(c(541.0 / 896).Mul(eta).Mul(eta)).
		Sub(c(5605.0 / 2592).Mul(eta).Mul(eta).Mul(eta))
	b7 := pi.Mul(c(-4415.0 / 4032).Add(c(358675.0 / 6048).Mul(eta)).Add(c(91495.0 / 1512).Mul(eta).Mul(eta)))
	series := c(1).Add(b2.Mul(v2)).Add(b3.Mul(v2).Mul(v)).Add(b4.Mul(v4)).Add(b5.Mul(v5)).
		Add(b6.Mul(v6)).Add(b7.Mul(v6).Mul(v))
	v9 := v5.Mul(v4)
	dvdt := c(32.0 / 5).Mul(eta).Mul(v9).Mul(series)

	for i, d := range []sym.Expr{dL[0], dL[1], dL[2], dS1[0], dS1[1], dS1[2], dS2[0], dS2[1], dS2[2]} {
		m.Deriv(st[i], d.Div(dvdt))
	}
	m.Deriv(tt, c(1).Div(dvdt))
	m.T0, m.T1 = 0.1, 1/math.Sqrt(10)
	return m
}
