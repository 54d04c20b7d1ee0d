package systems_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/systems"
)

// derivPoints is the number of random points per system at which the
// derivative programs are checked.
const derivPoints = 50

// derivCase is a problem whose Programs are checked, and how far from its
// defaults the random points go: state i varies by ±spread·max(1, |Y0_i|)
// and parameter j by ±spread·|P_j|, unless draw is set, which then
// returns the points instead.
type derivCase struct {
	pr     *ode.Problem
	spread float64
	draw   func(rng *rand.Rand) (y, p []float64)
}

// point returns a random state and parameter vector for c.
func (c derivCase) point(rng *rand.Rand) (y, p []float64) {
	if c.draw != nil {
		return c.draw(rng)
	}
	return derivPoint(rng, c.pr, c.spread)
}

// stiffDraws holds the neighbourhoods of the stiff systems whose terms
// differ by orders of magnitude. The finite-difference tolerance is
// relative to max|f|, so at points where one term dwarfs the rest a wrong
// Jacobian entry of a small term would pass; these draws keep every term
// within a few decades of the others.
var stiffDraws = map[string]func(rng *rand.Rand) (y, p []float64){
	// Robertson along its solution: y1, y3 ∈ [0, 1], y2 ∈ [0, 4e-5] (it
	// peaks near 3.65e-5), so k1·y1 ≈ 0.04, k3·y2·y3 ≈ 0.2 and k2·y2² ≈ 0.01
	// are comparable; rates within ±50% of the defaults.
	"robertson": func(rng *rand.Rand) (y, p []float64) {
		y = []float64{rng.Float64(), 4e-5 * rng.Float64(), rng.Float64()}
		p = []float64{0.04, 3e7, 1e4}
		for j := range p {
			p[j] *= 0.5 + rng.Float64()
		}
		return y, p
	},
	// HIRES along its solution: y1 … y7 ∈ [0, 1], y8 ∈ [0, 0.0114] (it
	// starts at 0.0057 and only falls), so 280·y6·y8 ≲ 3 stays of the
	// order of the linear terms.
	"hires": func(rng *rand.Rand) (y, p []float64) {
		y = make([]float64, 8)
		for i := range 7 {
			y[i] = rng.Float64()
		}
		y[7] = 0.0114 * rng.Float64()
		return y, nil
	},
}

// derivCases returns every default of All plus Lorenz96 at n = 4, 5, 9
// (n = 4 and 5 exercise the wrap-around, where the stencil covers every
// site), LinearStiff with three eigenvalues and Linear with a random 5×5
// matrix.
func derivCases(t *testing.T) []derivCase {
	t.Helper()
	// Kepler and Halo stay well away from their singular centre; the
	// polynomial systems can go further.
	spread := map[string]float64{
		"lorenz": 1, "vdp": 0.5, "lorenz96_8": 0.5, "linear": 1, "kepler": 0.2, "halo": 0.2,
		"vdp_stiff": 0.5, "linear_stiff": 1,
	}
	var cs []derivCase
	for _, pr := range systems.All() {
		if d, ok := stiffDraws[pr.Name]; ok {
			cs = append(cs, derivCase{pr: pr, draw: d})
			continue
		}
		s, ok := spread[pr.Name]
		if !ok {
			t.Fatalf("no spread for %q", pr.Name)
		}
		cs = append(cs, derivCase{pr: pr, spread: s})
	}
	for _, nf := range []struct {
		n int
		f float64
	}{{4, -1.5}, {5, 3.5}, {9, 8}} {
		pr, err := systems.Lorenz96(nf.n, nf.f)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, derivCase{pr: pr, spread: 0.5})
	}
	ls3, err := systems.LinearStiff([]float64{-0.5, -40, -3e3})
	if err != nil {
		t.Fatal(err)
	}
	ls3.Problem.Name = "linear_stiff3"
	cs = append(cs, derivCase{pr: ls3.Problem, spread: 1})
	rng := rand.New(rand.NewPCG(5, 5))
	a := make([]float64, 25)
	for k := range a {
		a[k] = 2*rng.Float64() - 1
	}
	ls, err := systems.Linear(a, 5)
	if err != nil {
		t.Fatal(err)
	}
	pr := ls.Problem
	pr.Name = "linear5"
	return append(cs, derivCase{pr: pr, spread: 1})
}

// derivPoint returns a random state and parameter vector near pr's
// defaults (see derivCase).
func derivPoint(rng *rand.Rand, pr *ode.Problem, spread float64) (y, p []float64) {
	y = make([]float64, pr.Dim)
	for i, y0 := range pr.Y0 {
		y[i] = y0 + spread*math.Max(1, math.Abs(y0))*(2*rng.Float64()-1)
	}
	p = make([]float64, pr.NumParams)
	for j, p0 := range pr.P {
		p[j] = p0 * (1 + spread*(2*rng.Float64()-1))
	}
	return y, p
}

// randVec returns n values uniform in [−1, 1).
func randVec(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = 2*rng.Float64() - 1
	}
	return v
}

// nanVec returns n NaNs, so an entry a program fails to write shows.
func nanVec(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = math.NaN()
	}
	return v
}

// programs returns pr.Programs() with every program set, or stops the test.
func programs(t *testing.T, pr *ode.Problem) *ode.Programs {
	t.Helper()
	if pr.Programs == nil {
		t.Fatal("Programs is nil")
	}
	pg := pr.Programs()
	if pg == nil || pg.F == nil || pg.JVP == nil || pg.VJP == nil || pg.JacY == nil || pg.DfDt == nil {
		t.Fatalf("Programs() = %+v: want all five programs", pg)
	}
	return pg
}

// derivs holds J_y (row-major) and J_p (column k in jp[k]) at one point,
// from JacY and from JVP with v = 0, w = e_k.
type derivs struct {
	jy [][]float64 // jy[i][j] = ∂f_i/∂y_j
	jp [][]float64 // jp[k][i] = ∂f_i/∂p_k
}

func evalDerivs(pg *ode.Programs, n, m int, t float64, y, p []float64) derivs {
	jac := nanVec(n * n)
	pg.JacY(t, y, p, jac)
	d := derivs{jy: make([][]float64, n), jp: make([][]float64, m)}
	for i := range n {
		d.jy[i] = jac[i*n : i*n+n]
	}
	v := make([]float64, n)
	for k := range m {
		w := make([]float64, m)
		w[k] = 1
		d.jp[k] = nanVec(n)
		pg.JVP(t, y, p, v, w, d.jp[k])
	}
	return d
}

// TestProgramsFiniteDifferences checks JacY and the columns of J_p
// against central differences of F.
//
// With the step h = ε^(1/3)·s, s = max(1, |x|) for the coordinate x being
// varied, the central difference (f(x+h) − f(x−h))/2h has truncation
// error h²·f‴/6 and rounding error about ε·|f|/h. On a system whose
// natural length scale is s, f”' ≈ |f|/s³, so both are about
// ε^(2/3)·|f|/s ≈ 4e-11·|f|/s. The tolerance
// 1e-7·max(|fd|, |f|_∞·ε^(1/3)/h) = 1e-7·max(|fd|, |f|_∞/s) leaves a
// margin of over 1000 for the constants, yet a Jacobian entry wrong by
// 1e-6 of itself fails wherever the entry is not tiny against |f|_∞/s.
func TestProgramsFiniteDifferences(t *testing.T) {
	cbrtEps := math.Cbrt(eps)
	for _, c := range derivCases(t) {
		pr := c.pr
		t.Run(pr.Name, func(t *testing.T) {
			pg := programs(t, pr)
			n, m := pr.Dim, pr.NumParams
			rng := rand.New(rand.NewPCG(1, uint64(n*100+m)))
			f0, fp, fm := make([]float64, n), make([]float64, n), make([]float64, n)
			bad, worst := 0, 0.0
			for pt := range derivPoints {
				y, p := c.point(rng)
				tt := 0.5 * float64(pt)
				d := evalDerivs(pg, n, m, tt, y, p)
				pr.F(tt, y, p, f0)
				fInf := maxAbs(f0)
				// check compares column col of a Jacobian with the central
				// difference in x[j] (x is y or p).
				check := func(what string, x []float64, j int, col func(i int) float64) {
					x0 := x[j]
					s := math.Max(1, math.Abs(x0))
					h := cbrtEps * s
					x[j] = x0 + h
					xp := x[j]
					pr.F(tt, y, p, fp)
					x[j] = x0 - h
					xm := x[j]
					pr.F(tt, y, p, fm)
					x[j] = x0
					for i := range n {
						fd := (fp[i] - fm[i]) / (xp - xm) // the steps actually taken
						got := col(i)
						tol := 1e-7 * math.Max(math.Abs(fd), fInf/s)
						worst = math.Max(worst, math.Abs(got-fd)/tol)
						if !(math.Abs(got-fd) <= tol) {
							if bad++; bad <= 10 {
								t.Errorf("point %d: %s[%d][%d] = %.17g, central difference %.17g (diff %.3g, tol %.3g)",
									pt, what, i, j, got, fd, got-fd, tol)
							}
						}
					}
				}
				for j := range n {
					check("J_y", y, j, func(i int) float64 { return d.jy[i][j] })
				}
				for k := range m {
					check("J_p", p, k, func(i int) float64 { return d.jp[k][i] })
				}
			}
			t.Logf("largest |error|/tolerance: %.3g", worst)
		})
	}
}

// TestProgramsJVPVJP checks JVP(v, w) against J_y·v + J_p·w and VJP(u)
// against uᵀJ_y and uᵀJ_p, with J_y from JacY and J_p from JVP at unit w
// (so VJP is checked against JVP too). The programs form the same
// products but sum them in another order (or factor them), so each
// result must agree to 1e-13 relative to the sum of the magnitudes of
// its terms, which bounds the rounding error of any order of summation.
func TestProgramsJVPVJP(t *testing.T) {
	const rel = 1e-13
	for _, c := range derivCases(t) {
		pr := c.pr
		t.Run(pr.Name, func(t *testing.T) {
			pg := programs(t, pr)
			n, m := pr.Dim, pr.NumParams
			rng := rand.New(rand.NewPCG(2, uint64(n*100+m)))
			bad, worst := 0, 0.0
			report := func(format string, args ...any) {
				if bad++; bad <= 10 {
					t.Errorf(format, args...)
				}
			}
			for pt := range derivPoints {
				y, p := c.point(rng)
				tt := 0.5 * float64(pt)
				d := evalDerivs(pg, n, m, tt, y, p)

				v, w := randVec(rng, n), randVec(rng, m)
				out := nanVec(n)
				pg.JVP(tt, y, p, v, w, out)
				for i := range n {
					var ref, scale float64
					for j := range n {
						ref += d.jy[i][j] * v[j]
						scale += math.Abs(d.jy[i][j] * v[j])
					}
					for k := range m {
						ref += d.jp[k][i] * w[k]
						scale += math.Abs(d.jp[k][i] * w[k])
					}
					if scale > 0 {
						worst = math.Max(worst, math.Abs(out[i]-ref)/(rel*scale))
					}
					if !(math.Abs(out[i]-ref) <= rel*scale) {
						report("point %d: JVP[%d] = %.17g, J_y·v + J_p·w = %.17g (scale %.3g)", pt, i, out[i], ref, scale)
					}
				}

				u := randVec(rng, n)
				gy, gp := nanVec(n), nanVec(m)
				pg.VJP(tt, y, p, u, gy, gp)
				for j := range n {
					var ref, scale float64
					for i := range n {
						ref += u[i] * d.jy[i][j]
						scale += math.Abs(u[i] * d.jy[i][j])
					}
					if scale > 0 {
						worst = math.Max(worst, math.Abs(gy[j]-ref)/(rel*scale))
					}
					if !(math.Abs(gy[j]-ref) <= rel*scale) {
						report("point %d: VJP gy[%d] = %.17g, (uᵀJ_y)_%d = %.17g (scale %.3g)", pt, j, gy[j], j, ref, scale)
					}
				}
				for k := range m {
					var ref, scale float64
					for i := range n {
						ref += u[i] * d.jp[k][i]
						scale += math.Abs(u[i] * d.jp[k][i])
					}
					if scale > 0 {
						worst = math.Max(worst, math.Abs(gp[k]-ref)/(rel*scale))
					}
					if !(math.Abs(gp[k]-ref) <= rel*scale) {
						report("point %d: VJP gp[%d] = %.17g, (uᵀJ_p)_%d = %.17g (scale %.3g)", pt, k, gp[k], k, ref, scale)
					}
				}
			}
			t.Logf("largest |error|/tolerance: %.3g", worst)
		})
	}
}

// TestProgramsDfDtAndF checks that DfDt writes zeros (every system is
// autonomous) and that Programs' F gives the same bits as Problem.F.
func TestProgramsDfDtAndF(t *testing.T) {
	for _, c := range derivCases(t) {
		pr := c.pr
		t.Run(pr.Name, func(t *testing.T) {
			pg := programs(t, pr)
			n := pr.Dim
			rng := rand.New(rand.NewPCG(3, uint64(n)))
			for pt := range derivPoints {
				y, p := c.point(rng)
				tt := 0.5 * float64(pt)
				out := nanVec(n)
				pg.DfDt(tt, y, p, out)
				for i, v := range out {
					if v != 0 {
						t.Fatalf("point %d: DfDt[%d] = %g, want 0", pt, i, v)
					}
				}
				want, got := nanVec(n), nanVec(n)
				pr.F(tt, y, p, want)
				pg.F(tt, y, p, got)
				for i := range n {
					if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
						t.Fatalf("point %d: Programs().F[%d] = %.17g, Problem.F gives %.17g", pt, i, got[i], want[i])
					}
				}
			}
		})
	}
}

// TestProgramsNoAlloc checks that none of the five programs allocates.
func TestProgramsNoAlloc(t *testing.T) {
	for _, c := range derivCases(t) {
		pr := c.pr
		t.Run(pr.Name, func(t *testing.T) {
			pg := programs(t, pr)
			n, m := pr.Dim, pr.NumParams
			y, p := c.point(rand.New(rand.NewPCG(4, 4)))
			v, w, u := make([]float64, n), make([]float64, m), make([]float64, n)
			for i := range v {
				v[i], u[i] = 0.5, -0.25
			}
			for k := range w {
				w[k] = 1
			}
			out, gy, gp, jac := make([]float64, n), make([]float64, n), make([]float64, m), make([]float64, n*n)
			for _, prog := range []struct {
				name string
				run  func()
			}{
				{"F", func() { pg.F(0, y, p, out) }},
				{"JVP", func() { pg.JVP(0, y, p, v, w, out) }},
				{"VJP", func() { pg.VJP(0, y, p, u, gy, gp) }},
				{"JacY", func() { pg.JacY(0, y, p, jac) }},
				{"DfDt", func() { pg.DfDt(0, y, p, out) }},
			} {
				if a := testing.AllocsPerRun(100, prog.run); a != 0 {
					t.Errorf("%s: %g allocations per call, want 0", prog.name, a)
				}
			}
		})
	}
}

// Halo's fused sensitivity right-hand side equals F followed by one JVP
// per column, bit for bit, for parameter and initial-value columns.
func TestHaloSensFMatchesJVP(t *testing.T) {
	pr := systems.Halo()
	pg := pr.Programs()
	if _, err := pr.SensF([]int{3}); err == nil {
		t.Error("SensF with parameter 3 of 3: no error")
	}
	cols := []int{0, 1, -1, 2}
	src, err := pr.SensF(cols)
	if err != nil {
		t.Fatal(err)
	}
	f := src()
	rng := rand.New(rand.NewPCG(3, 4))
	na := 6 * (1 + len(cols))
	y, got, want := make([]float64, na), make([]float64, na), make([]float64, na)
	for range 100 {
		for i := range y {
			y[i] = rng.Float64()*2 - 1
		}
		p := []float64{0.5 + rng.Float64(), 0.5 + rng.Float64()/2, 0.1 + rng.Float64()/4}
		f(0, y, p, got)
		pg.F(0, y[:6], p, want[:6])
		for c, j := range cols {
			w := make([]float64, 3)
			if j >= 0 {
				w[j] = 1
			}
			o := 6 * (1 + c)
			pg.JVP(0, y[:6], p, y[o:o+6], w, want[o:o+6])
		}
		for i := range got {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("component %d: fused %v, F and JVP %v", i, got[i], want[i])
			}
		}
	}
}
