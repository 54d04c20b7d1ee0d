package tape_test

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/gradsolve/gradsolve/sym"
	"github.com/gradsolve/gradsolve/sym/parse"
)

// The derivative programs of every shipped example agree with central
// finite differences of f at random points near the example's defaults,
// for all five program kinds (checkDerivatives).
func TestExampleDerivatives(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "*.ode"))
	if err != nil || len(files) < 5 {
		t.Fatalf("examples: %v (%d files)", err, len(files))
	}
	for _, file := range files {
		m, err := parse.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(m.Name, func(t *testing.T) { checkDerivatives(t, m, 30, awayFromKinks[m.Name]) })
	}
}

// awayFromKinks says, for the examples whose f switches, at which times
// t central differences see one branch: those far from the switches.
// The DETEST F problems switch at integer t (F4 at t = 10 only); the
// difference step is below 2e-4 on their span [0, 20], so a distance of
// 0.01 suffices, except for F5, whose terms |t − i|^(1/3) have a third
// derivative of order |t − i|^(−8/3): the truncation error h²·|f”'| of
// the differences stays below the 1e-7 tolerance for |t − i| ≥ 0.35.
var awayFromKinks = map[string]func(t float64) bool{
	"detest_f1": func(t float64) bool { return fromInteger(t) > 0.01 },
	"detest_f2": func(t float64) bool { return fromInteger(t) > 0.01 },
	"detest_f3": func(t float64) bool { return fromInteger(t) > 0.01 },
	"detest_f4": func(t float64) bool { return math.Abs(t-10) > 0.01 },
	"detest_f5": func(t float64) bool { return fromInteger(t) > 0.35 },
}

// fromInteger returns the distance of t from the nearest integer.
func fromInteger(t float64) float64 { return math.Abs(t - math.Round(t)) }

// checkDerivatives compares J_y·v + J_p·w, uᵀJ_y, uᵀJ_p, J_y and ∂f/∂t
// with central differences of f. The step for a variable x is
// h = ε^(1/3)·s with s = max(1, |x|), which balances the truncation
// error h²·|f”'|/6 against the rounding error ε·|f|/h: both are about
// ε^(2/3) ≈ 4e-11 times the natural derivative scale |f|/s. The
// comparison allows 1e-7 relative to the larger of the derivative and
// |f|/s — "where the function is well-conditioned": a derivative much
// smaller than |f|/s is the difference of large terms and a difference
// quotient cannot resolve it better than that.
//
// accept, when not nil, says at which times t to compare (see
// awayFromKinks); other random times are drawn again.
func checkDerivatives(t *testing.T, m *sym.Model, trials int, accept func(t float64) bool) {
	t.Helper()
	s := mustBuild(t, m)
	pg := s.Programs()
	dim, np := m.Dim(), m.NumParams()
	rng := rand.New(rand.NewPCG(11, 12))
	f := func(tt float64, y, p []float64) []float64 {
		out := make([]float64, dim)
		pg.F(tt, y, p, out)
		return out
	}
	cbrtEps := math.Cbrt(0x1p-52)
	step := func(x float64) float64 { return cbrtEps * math.Max(1, math.Abs(x)) }
	// check compares a derivative with a difference quotient of values
	// of size fscale over a variable of scale h/cbrtEps.
	check := func(what string, got, fd, fscale, h float64) {
		t.Helper()
		tol := 1e-7 * math.Max(math.Abs(fd), fscale*cbrtEps/h)
		if math.Abs(got-fd) > tol {
			t.Errorf("%s: program %.12g, finite difference %.12g (tolerance %.2g)", what, got, fd, tol)
		}
	}
	norm := func(v []float64) float64 {
		var s float64
		for _, x := range v {
			s = math.Max(s, math.Abs(x))
		}
		return s
	}
	y0, p0 := m.Y0(), m.P()
	for range trials {
		y := make([]float64, dim)
		p := make([]float64, np)
		for i := range y {
			y[i] = y0[i] + 0.1*(rng.Float64()-0.5)*math.Max(1, math.Abs(y0[i]))
		}
		for j := range p {
			p[j] = p0[j] * (1 + 0.1*(rng.Float64()-0.5))
		}
		tt := m.T0 + rng.Float64()*(m.T1-m.T0)
		for accept != nil && !accept(tt) {
			tt = m.T0 + rng.Float64()*(m.T1-m.T0)
		}
		fs := norm(f(tt, y, p))
		// J_y column by column, and ∂f/∂t.
		jac := make([]float64, dim*dim)
		pg.JacY(tt, y, p, jac)
		for j := range dim {
			h := step(y[j])
			yp, ym := append([]float64(nil), y...), append([]float64(nil), y...)
			yp[j] += h
			ym[j] -= h
			fp, fm := f(tt, yp, p), f(tt, ym, p)
			for i := range dim {
				check(m.Name+" J_y", jac[i*dim+j], (fp[i]-fm[i])/(2*h), fs, h)
			}
		}
		dfdt := make([]float64, dim)
		pg.DfDt(tt, y, p, dfdt)
		h := step(tt)
		fp, fm := f(tt+h, y, p), f(tt-h, y, p)
		for i := range dim {
			check(m.Name+" df/dt", dfdt[i], (fp[i]-fm[i])/(2*h), fs, h)
		}
		// J_p column by column through the JVP with v = 0, w = e_j, and
		// the JVP along a random (v, w) against J_y·v + J_p·w assembled
		// from those columns.
		v, w := randVec(rng, dim), randVec(rng, np)
		jvp := make([]float64, dim)
		pg.JVP(tt, y, p, v, w, jvp)
		want := make([]float64, dim)
		for i := range dim {
			for j := range dim {
				want[i] += jac[i*dim+j] * v[j]
			}
		}
		jp := make([]float64, dim*np)
		zero := make([]float64, dim)
		for j := range np {
			e := make([]float64, np)
			e[j] = 1
			col := make([]float64, dim)
			pg.JVP(tt, y, p, zero, e, col)
			h := step(p[j])
			pp, pm := append([]float64(nil), p...), append([]float64(nil), p...)
			pp[j] += h
			pm[j] -= h
			fp, fm := f(tt, y, pp), f(tt, y, pm)
			for i := range dim {
				check(m.Name+" J_p", col[i], (fp[i]-fm[i])/(2*h), fs, h)
				jp[i*np+j] = col[i]
				want[i] += col[i] * w[j]
			}
		}
		for i := range dim {
			// Same products summed in another order: rounding only.
			if math.Abs(jvp[i]-want[i]) > 1e-12*math.Max(1, norm(want)) {
				t.Errorf("%s jvp[%d] = %.17g, J_y·v + J_p·w = %.17g", m.Name, i, jvp[i], want[i])
			}
		}
		// uᵀJ_y and uᵀJ_p against the columns above.
		u := randVec(rng, dim)
		gy, gp := make([]float64, dim), make([]float64, np)
		pg.VJP(tt, y, p, u, gy, gp)
		for j := range dim {
			var s float64
			for i := range dim {
				s += u[i] * jac[i*dim+j]
			}
			if math.Abs(gy[j]-s) > 1e-12*math.Max(1, math.Abs(s)+norm(jac)*norm(u)) {
				t.Errorf("%s (uᵀJ_y)[%d] = %.17g, from J_y %.17g", m.Name, j, gy[j], s)
			}
		}
		for j := range np {
			var s float64
			for i := range dim {
				s += u[i] * jp[i*np+j]
			}
			if math.Abs(gp[j]-s) > 1e-12*math.Max(1, math.Abs(s)+norm(jp)*norm(u)) {
				t.Errorf("%s (uᵀJ_p)[%d] = %.17g, from J_p %.17g", m.Name, j, gp[j], s)
			}
		}
	}
}

// The halo example's Jacobians equal the hand-derived ones of
// shared/reference/applications.md §A.2: J_y = [[0, I], [−H, 0]] with
// H_ij = vc²(δ_ij w_j/D − 2 g_i g_j/D²), w = (1, 1, q⁻²), g = w∘x; and
// J_p = −∂(∇Φ)/∂(vc, q, rc) with ∂/∂vc = 2 vc g/D,
// ∂/∂q = (2 vc²/(q³ D²))·(x z², y z², −z(rc² + x² + y²)),
// ∂/∂rc = −2 vc² rc g/D². Both sides are short formulas evaluated in
// different orders: they agree to a few ulps (1e-13 relative to the
// largest entry).
func TestHaloHandDerivatives(t *testing.T) {
	m, err := parse.ParseFile(filepath.Join("..", "..", "examples", "halo.ode"))
	if err != nil {
		t.Fatal(err)
	}
	pg := mustBuild(t, m).Programs()
	rng := rand.New(rand.NewPCG(13, 14))
	for range 100 {
		y := []float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
		vc, q, rc := 0.5+rng.Float64(), 0.6+0.4*rng.Float64(), 0.1+0.3*rng.Float64()
		p := []float64{vc, q, rc}
		x := y[:3]
		w := []float64{1, 1, 1 / (q * q)}
		g := []float64{x[0], x[1], x[2] / (q * q)}
		d := rc*rc + x[0]*x[0] + x[1]*x[1] + x[2]*x[2]/(q*q)
		want := make([]float64, 36)
		for i := range 3 {
			want[i*6+3+i] = 1
			for j := range 3 {
				h := -2 * g[i] * g[j] / (d * d)
				if i == j {
					h += w[j] / d
				}
				want[(3+i)*6+j] = -vc * vc * h
			}
		}
		jac := make([]float64, 36)
		pg.JacY(0, y, p, jac)
		compareWithin(t, "J_y", jac, want)
		dq := 2 * vc * vc / (q * q * q * d * d)
		wantP := make([]float64, 18) // 6×3, columns vc, q, rc
		for i := range 3 {
			wantP[(3+i)*3+0] = -2 * vc * g[i] / d
			wantP[(3+i)*3+2] = 2 * vc * vc * rc * g[i] / (d * d)
		}
		wantP[3*3+1] = -dq * x[0] * x[2] * x[2]
		wantP[4*3+1] = -dq * x[1] * x[2] * x[2]
		wantP[5*3+1] = dq * x[2] * (rc*rc + x[0]*x[0] + x[1]*x[1])
		gotP := make([]float64, 18)
		zero := make([]float64, 6)
		for j := range 3 {
			e := make([]float64, 3)
			e[j] = 1
			col := make([]float64, 6)
			pg.JVP(0, y, p, zero, e, col)
			for i := range 6 {
				gotP[i*3+j] = col[i]
			}
		}
		compareWithin(t, "J_p", gotP, wantP)
	}
}

func compareWithin(t *testing.T, what string, got, want []float64) {
	t.Helper()
	var scale float64
	for _, v := range want {
		scale = math.Max(scale, math.Abs(v))
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > 1e-13*scale {
			t.Fatalf("%s[%d] = %.17g, hand-derived %.17g", what, i, got[i], want[i])
		}
	}
}
