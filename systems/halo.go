package systems

import (
	"fmt"
	"math"

	"github.com/gradsolve/gradsolve/ode"
)

// Halo returns the orbit of a star (a test particle) in the flattened,
// axisymmetric logarithmic halo
//
//	D(x) = rc² + x² + y² + z²/q²
//	Φ(x) = ½·vc²·ln D(x)
//	x' = v
//	v' = −∇Φ = −(vc²/D)·(x, y, z/q²)
//
// with states (x, y, z, vx, vy, vz) and parameters (vc, q, rc). Units are
// dimensionless: lengths in units of an arbitrary L, speeds in units of
// an arbitrary V, time in L/V; G never appears because the potential is
// given directly, not through a density.
//
//	vc  asymptotic circular speed,                         default 1
//	q   axis ratio of the equipotentials (z-flattening),   default 0.7
//	rc  core radius,                                       default 0.2
//
// Default initial state x = (1, 0, 0.2), v = (0.1, 0.6, 0.15) and span
// [0, 20]: the reference fixture of reference/applications.md §A.7, whose energy is
// E = 0.253642674902. The energy HaloEnergy and the angular momentum
// about the symmetry axis HaloLz are conserved. For q < 1/√2 the density
// that generates Φ is negative near the z axis far out (§A.1); this does
// not affect the orbits.
//
// Sources: J. Binney & S. Tremaine, Galactic Dynamics, 2nd ed., Princeton
// 2008, §2.3.2 (the flattened logarithmic potential); gala's
// LogarithmicPotential(v_c, r_h = rc, q1 = q2 = 1, q3 = q, phi = 0),
// A. M. Price-Whelan, JOSS 2 (2017) 388, doi:10.21105/joss.00388.
func Halo() *ode.Problem {
	return &ode.Problem{
		Name:       "halo",
		Dim:        6,
		NumParams:  3,
		F:          haloF,
		StateNames: []string{"x", "y", "z", "vx", "vy", "vz"},
		ParamNames: []string{"vc", "q", "rc"},
		Y0:         []float64{1, 0, 0.2, 0.1, 0.6, 0.15},
		P:          []float64{1, 0.7, 0.2},
		T0:         0,
		T1:         20,
		Programs:   func() *ode.Programs { return haloLanes.add(haloPrograms()) },
		Offers:     haloLanes.offers(),
		SensF:      haloSensF,
		SensLanes:  haloSensLanes,
	}
}

// haloPrograms returns the hand-written derivative programs of Halo.
// They keep no state, so one set serves every goroutine.
func haloPrograms() *ode.Programs {
	return &ode.Programs{F: haloF, JVP: haloJVP, VJP: haloVJP, JacY: haloJacY, DfDt: zeroDfDt}
}

// haloSensF is Halo's ode.Problem.SensF: f and every sensitivity column
// in one function, computing the terms shared by the columns (haloTerms)
// once. Each column is exactly haloJVP's arithmetic, so the results equal
// F and one JVP per column bit for bit.
func haloSensF(paramCols []int) (func() ode.Func, error) {
	w, err := haloSensWeights(paramCols)
	if err != nil {
		return nil, err
	}
	f := func(_ float64, y, p, dy []float64) {
		haloF(0, y[:6], p, dy[:6])
		var h haloTerms
		h.set(y, p)
		for c, wc := range w {
			o := 6 * (1 + c)
			h.jvp(y[o:o+6], wc, dy[o:o+6])
		}
	}
	return func() ode.Func { return f }, nil
}

// haloSensWeights returns the direction w of each sensitivity column:
// the unit vector of its parameter, zero for an initial value.
func haloSensWeights(paramCols []int) ([][]float64, error) {
	w := make([][]float64, len(paramCols))
	for c, j := range paramCols {
		if j >= 3 {
			return nil, fmt.Errorf("halo: sensitivity column of parameter %d, but it has 3", j)
		}
		w[c] = make([]float64, 3)
		if j >= 0 {
			w[c][j] = 1
		}
	}
	return w, nil
}

func haloF(_ float64, y, p, dy []float64) {
	x, yy, z := y[0], y[1], y[2]
	vc, q, rc := p[0], p[1], p[2]
	// Products rounded before they are added: no FMA on any architecture.
	zq := z / (q * q)
	d := float64(rc*rc) + float64(x*x) + float64(yy*yy) + float64(z*zq)
	k := -vc * vc / d
	dy[0] = y[3]
	dy[1] = y[4]
	dy[2] = y[5]
	dy[3] = k * x
	dy[4] = k * yy
	dy[5] = k * zq
}

// haloJVP writes J_y·v + J_p·w of Halo into out (applications.md §A.2).
// With s = rc² + x² + y², D = s + z²/q², g = (x, y, z/q²), the weights
// ω = (1, 1, 1/q²), c = vc²/D and e = 2·vc²/D², the Hessian of Φ is
//
//	H = c·diag(ω) − e·g·gᵀ,   so  J_y = [[0, I], [−H, 0]],
//
// and the parameter derivatives of the force ∇Φ = c·g are
//
//	∂(∇Φ)/∂vc = (2·vc/D)·g
//	∂(∇Φ)/∂q  = (e/q³)·(x·z², y·z², −z·s)
//	∂(∇Φ)/∂rc = −e·rc·g,
//
// with J_p = [[0], [−∂(∇Φ)/∂θ]] for θ = (vc, q, rc). (For ∂/∂q: ∂D/∂q =
// −2z²/q³ and ∂g₃/∂q = −2z/q³; for ∂/∂rc: ∂D/∂rc = 2·rc.) With
// d = (v₀, v₁, v₂) the position part of v, g·d and
//
//	τ = e·(g·d) − (2·vc/D)·w₀ + e·rc·w₂,   κ = (e/q³)·z·w₁,
//
// the velocity rows are
//
//	out₃ = x·(τ − κ·z) − c·v₀,  out₄ = y·(τ − κ·z) − c·v₁,
//	out₅ = (z/q²)·τ + κ·s − c·v₂/q².
func haloJVP(_ float64, y, p, v, w, out []float64) {
	var h haloTerms
	h.set(y, p)
	h.jvp(v, w, out)
}

// haloTerms holds the quantities of haloJVP that depend on (y, p) only,
// so that the fused sensitivity right-hand side computes them once for
// all its columns.
type haloTerms struct {
	x, yy, z, vc, q, rc, q2, zq, s, d, c, e float64
}

func (h *haloTerms) set(y, p []float64) {
	h.x, h.yy, h.z = y[0], y[1], y[2]
	h.vc, h.q, h.rc = p[0], p[1], p[2]
	// Products rounded before they are added: no FMA on any architecture.
	h.q2 = h.q * h.q
	h.zq = h.z / h.q2
	h.s = float64(h.rc*h.rc) + float64(h.x*h.x) + float64(h.yy*h.yy)
	h.d = h.s + float64(h.z*h.zq) // as haloF sums D
	vc2 := h.vc * h.vc
	h.c = vc2 / h.d
	h.e = 2 * vc2 / (h.d * h.d)
}

// jvp writes J_y·v + J_p·w into out (see haloJVP).
func (h *haloTerms) jvp(v, w, out []float64) {
	x, yy, z, zq, e, c, q2 := h.x, h.yy, h.z, h.zq, h.e, h.c, h.q2
	gd := float64(x*v[0]) + float64(yy*v[1]) + float64(zq*v[2])
	tau := float64(e*gd) - float64(2*h.vc/h.d*w[0]) + float64(e*h.rc*w[2])
	kap := e / (q2 * h.q) * z * w[1]
	txy := tau - float64(kap*z)
	out[0] = v[3]
	out[1] = v[4]
	out[2] = v[5]
	out[3] = float64(x*txy) - float64(c*v[0])
	out[4] = float64(yy*txy) - float64(c*v[1])
	out[5] = float64(zq*tau) + float64(kap*h.s) - float64(c*v[2]/q2)
}

// haloVJP writes uᵀJ_y into gy and uᵀJ_p into gp (J_y, J_p and the
// names as in haloJVP; H is symmetric). With c' = (u₃, u₄, u₅) and g·c',
//
//	gy = (−H·c', u₀, u₁, u₂),   −H·c' = e·(g·c')·g − c·ω∘c'
//	gp = (−(2·vc/D)·(g·c'),  −(e/q³)·(z²·(x·u₃ + y·u₄) − z·s·u₅),  e·rc·(g·c')).
func haloVJP(_ float64, y, p, u, gy, gp []float64) {
	x, yy, z := y[0], y[1], y[2]
	vc, q, rc := p[0], p[1], p[2]
	q2 := q * q
	zq := z / q2
	s := float64(rc*rc) + float64(x*x) + float64(yy*yy)
	d := s + float64(z*zq)
	vc2 := vc * vc
	c := vc2 / d
	e := 2 * vc2 / (d * d)
	xyu := float64(x*u[3]) + float64(yy*u[4])
	gu := xyu + float64(zq*u[5])
	egu := e * gu
	gy[0] = float64(egu*x) - float64(c*u[3])
	gy[1] = float64(egu*yy) - float64(c*u[4])
	gy[2] = float64(egu*zq) - float64(c*u[5]/q2)
	gy[3] = u[0]
	gy[4] = u[1]
	gy[5] = u[2]
	gp[0] = -float64(2 * vc / d * gu)
	gp[1] = -float64(e / (q2 * q) * z * (float64(z*xyu) - float64(s*u[5])))
	gp[2] = float64(egu * rc)
}

// haloJacY writes J_y = [[0, I], [−H, 0]] of Halo row-major into jac,
// with −H_ij = e·g_i·g_j − c·ω_j·δ_ij (names as in haloJVP).
func haloJacY(_ float64, y, p, jac []float64) {
	x, yy, z := y[0], y[1], y[2]
	vc, q, rc := p[0], p[1], p[2]
	q2 := q * q
	zq := z / q2
	d := float64(rc*rc) + float64(x*x) + float64(yy*yy) + float64(z*zq)
	vc2 := vc * vc
	c := vc2 / d
	e := 2 * vc2 / (d * d)
	jac = jac[:36]
	clear(jac)
	jac[0*6+3], jac[1*6+4], jac[2*6+5] = 1, 1, 1
	g := [3]float64{x, yy, zq}
	for i := range 3 {
		row := jac[(3+i)*6 : (3+i)*6+3]
		egi := e * g[i]
		for j := range 3 {
			row[j] = float64(egi * g[j])
		}
	}
	jac[3*6+0] -= c
	jac[4*6+1] -= c
	jac[5*6+2] -= c / q2
}

// HaloPotential returns the potential of Halo at the position
// x = (x, y, z) with p = (vc, q, rc):
//
//	Φ = ½·vc²·ln(rc² + x² + y² + z²/q²).
//
// Only x[0:3] is read, so a full state may be passed. It returns NaN if
// len(x) < 3 or len(p) < 3.
func HaloPotential(x, p []float64) float64 {
	if len(x) < 3 || len(p) < 3 {
		return math.NaN()
	}
	vc, q, rc := p[0], p[1], p[2]
	d := rc*rc + x[0]*x[0] + x[1]*x[1] + x[2]*x[2]/(q*q)
	return 0.5 * vc * vc * math.Log(d)
}

// HaloEnergy returns the energy per unit mass of the Halo state
// y = (x, y, z, vx, vy, vz) with p = (vc, q, rc):
//
//	E = ½·(vx² + vy² + vz²) + Φ(x, y, z).
//
// It returns NaN if len(y) < 6 or len(p) < 3.
func HaloEnergy(y, p []float64) float64 {
	if len(y) < 6 || len(p) < 3 {
		return math.NaN()
	}
	return 0.5*(y[3]*y[3]+y[4]*y[4]+y[5]*y[5]) + HaloPotential(y, p)
}

// HaloLz returns the angular momentum per unit mass about the symmetry
// (z) axis of the Halo state y = (x, y, z, vx, vy, vz):
//
//	L_z = x·vy − y·vx.
//
// p is unused and may be nil. It returns NaN if len(y) < 6.
func HaloLz(y, _ []float64) float64 {
	if len(y) < 6 {
		return math.NaN()
	}
	return y[0]*y[4] - y[1]*y[3]
}

// HaloScales returns the error scales of applications.md §A.3 for the
// orbit through the Halo state y with p = (vc, q, rc) and energy
// E = HaloEnergy(y, p): the in-plane radius where Φ(R, z = 0) = E and the
// speed the orbit would have at the centre, where Φ(0) = vc²·ln rc,
//
//	r_E = sqrt(exp(2E/vc²) − rc²)
//	v_E = sqrt(2·(E − vc²·ln rc)).
//
// Both are in the Halo's length and speed units. They are NaN if the
// slices are too short (see HaloEnergy). Both are real for any state,
// since E ≥ Φ(0) = vc²·ln rc, except that rounding can make r_E NaN for a
// state at rest at the very centre.
func HaloScales(y, p []float64) (rE, vE float64) {
	e := HaloEnergy(y, p)
	if math.IsNaN(e) {
		return math.NaN(), math.NaN()
	}
	vc, rc := p[0], p[2]
	rE = math.Sqrt(math.Exp(2*e/(vc*vc)) - rc*rc)
	vE = math.Sqrt(2 * (e - vc*vc*math.Log(rc)))
	return rE, vE
}
