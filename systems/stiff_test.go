package systems_test

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/sym/parse"
	"github.com/gradsolve/gradsolve/sym/tape"
	"github.com/gradsolve/gradsolve/systems"
)

// stiffNames are the registry names of the stiff systems.
var stiffNames = []string{"robertson", "hires", "vdp_stiff", "linear_stiff"}

// TestStiffRegistry checks that ByName finds the stiff systems with their
// defaults and that exactly they are marked Stiff in All.
func TestStiffRegistry(t *testing.T) {
	defaults := map[string]struct {
		dim, np int
		y0, p   []float64
		t1      float64
	}{
		"robertson":    {3, 3, []float64{1, 0, 0}, []float64{0.04, 3e7, 1e4}, 1e5},
		"hires":        {8, 0, []float64{1, 0, 0, 0, 0, 0, 0, 0.0057}, nil, 321.8122},
		"vdp_stiff":    {2, 1, []float64{2, 0}, []float64{1e3}, 2},
		"linear_stiff": {6, 0, []float64{1, 1, 1, 1, 1, 1}, nil, 1},
	}
	for _, name := range stiffNames {
		pr, err := systems.ByName(name)
		if err != nil {
			t.Errorf("ByName(%q): %v", name, err)
			continue
		}
		d := defaults[name]
		if pr.Name != name || !pr.Stiff || pr.Dim != d.dim || pr.NumParams != d.np ||
			!slices.Equal(pr.Y0, d.y0) || !slices.Equal(pr.P, d.p) || pr.T0 != 0 || pr.T1 != d.t1 {
			t.Errorf("ByName(%q) = name %q, stiff %v, dim %d, %d params, y0 %v, p %v, span [%g, %g]; want %q, true, %d, %d, %v, %v, [0, %g]",
				name, pr.Name, pr.Stiff, pr.Dim, pr.NumParams, pr.Y0, pr.P, pr.T0, pr.T1, name, d.dim, d.np, d.y0, d.p, d.t1)
		}
		if err := pr.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, pr := range systems.All() {
		if want := slices.Contains(stiffNames, pr.Name); pr.Stiff != want {
			t.Errorf("All: %s has Stiff = %v, want %v", pr.Name, pr.Stiff, want)
		}
	}
}

// exactSum returns Σ v exactly rounded (big.Float sums exactly at this
// precision for float64 inputs of moderate exponent range).
func exactSum(v ...float64) float64 {
	s := new(big.Float).SetPrec(2000)
	for _, x := range v {
		s.Add(s, new(big.Float).SetPrec(2000).SetFloat64(x))
	}
	f, _ := s.Float64()
	return f
}

// TestRobertsonConservation checks that F, the tangent JVP and the
// cotangent of 𝟙 respect the conservation of y1 + y2 + y3.
//
// With the three reaction rates a = k1·y1, b = k3·y2·y3, c = k2·y2² as
// computed, F = (fl(b − a), fl(fl(a − b) − c), c), so Σ f_i (summed
// exactly) is (b − a)·δ₀ + (a − b)·δ₁ + fl(a − b − c)·δ₂ with |δ| ≤ u =
// eps/2: at most u·(3|a − b| + |c|)(1 + u) ≤ 3.5·eps·max(a, b, c). The
// tolerance is 4·eps·max(|a|, |b|, |c|): a few ulps of the largest term,
// where the terms themselves reach 1e7.
func TestRobertsonConservation(t *testing.T) {
	pr := systems.Robertson()
	pg := pr.Programs()
	rng := rand.New(rand.NewPCG(7, 7))
	f, out := make([]float64, 3), make([]float64, 3)
	gy, gp := make([]float64, 3), make([]float64, 3)
	worst := 0.0
	for pt := range 2000 {
		var y, p []float64
		if pt%2 == 0 { // along the solution
			y = []float64{rng.Float64(), 4e-5 * rng.Float64(), rng.Float64()}
		} else { // anywhere
			y = []float64{2*rng.Float64() - 1, 2*rng.Float64() - 1, 2*rng.Float64() - 1}
		}
		p = []float64{0.08 * rng.Float64(), 6e7 * rng.Float64(), 2e4 * rng.Float64()}
		pr.F(0, y, p, f)
		a, b, c := math.Abs(p[0]*y[0]), math.Abs(p[2]*y[1]*y[2]), math.Abs(p[1]*y[1]*y[1])
		tol := 4 * eps * max(a, b, c)
		s := exactSum(f...)
		if tol > 0 {
			worst = max(worst, math.Abs(s)/tol)
		}
		if !(math.Abs(s) <= tol) {
			t.Fatalf("y = %v, p = %v: Σ f = %g, tolerance %g (f = %v)", y, p, s, tol, f)
		}
		if m := systems.RobertsonMass(y); m != y[0]+y[1]+y[2] {
			t.Fatalf("RobertsonMass(%v) = %g", y, m)
		}

		// The tangent has the same structure (rates a, b, c replaced by
		// their tangents), so the same bound holds with their sizes.
		v, w := randVec(rng, 3), randVec(rng, 3)
		pg.JVP(0, y, p, v, w, out)
		ta := math.Abs(p[0]*v[0]) + math.Abs(y[0]*w[0])
		tb := math.Abs(p[2])*(math.Abs(y[2]*v[1])+math.Abs(y[1]*v[2])) + math.Abs(y[1]*y[2]*w[2])
		tc := 2*math.Abs(p[1]*y[1]*v[1]) + math.Abs(y[1]*y[1]*w[1])
		if s, tol := exactSum(out...), 8*eps*max(ta, tb, tc); !(math.Abs(s) <= tol) {
			t.Fatalf("y = %v, p = %v: Σ JVP = %g, tolerance %g", y, p, s, tol)
		}

		// 𝟙ᵀJ_y = 0 and 𝟙ᵀJ_p = 0: the VJP forms differences of equal
		// cotangents, which are exactly 0.
		pg.VJP(0, y, p, []float64{1, 1, 1}, gy, gp)
		for i := range 3 {
			if gy[i] != 0 || gp[i] != 0 {
				t.Fatalf("y = %v, p = %v: VJP(𝟙) = %v, %v; want exact zeros", y, p, gy, gp)
			}
		}
	}
	t.Logf("largest |Σ f|/tolerance: %.3g", worst)
	if !math.IsNaN(systems.RobertsonMass([]float64{1, 2})) {
		t.Error("RobertsonMass of a short slice should be NaN")
	}
	if m := systems.RobertsonMass(pr.Y0); m != 1 {
		t.Errorf("mass of the default state %g, want 1", m)
	}
}

// TestHIRESValues checks F at the initial state and at (1, 2, …, 8)
// against values computed by hand from the equations. Each component is
// a sum of at most six rounded products of decimal constants: its error
// is at most about 3·eps·Σ|terms| (the constants' own roundings
// included), within the tolerance 1e-15·Σ|terms|.
func TestHIRESValues(t *testing.T) {
	pr := systems.HIRES()
	rows := []struct {
		y     []float64
		want  []float64
		scale []float64 // Σ |terms| of each component
	}{
		// Only y1 = 1 and y8 = 0.0057 are nonzero: f1 = −1.71 + 0.0007,
		// f2 = 1.71, and every other term has a zero factor.
		{pr.Y0, []float64{-1.7093, 1.71, 0, 0, 0, 0, 0, 0},
			[]float64{1.7107, 1.71, 0, 0, 0, 0, 0, 0}},
		// y = (1, …, 8): 280·y6·y8 = 13440.
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8},
			[]float64{
				-1.71 + 0.86 + 24.96 + 0.0007, // 24.1107
				1.71 - 17.5,                   // −15.79
				-30.09 + 1.72 + 0.175,         // −28.195
				16.64 + 5.13 - 4.48,           // 17.29
				-8.725 + 0.43*13,              // −3.135
				-13440 + 2.76 + 8.55 - 2.58 + 4.83,
				13440 - 12.67,
				-13440 + 12.67,
			},
			[]float64{27.5307, 19.21, 31.985, 26.25, 14.315, 13458.72, 13452.67, 13452.67}},
	}
	dy := make([]float64, 8)
	for _, r := range rows {
		pr.F(0, r.y, nil, dy)
		for i := range dy {
			if d := math.Abs(dy[i] - r.want[i]); !(d <= 1e-15*r.scale[i]) {
				t.Errorf("y = %v: f%d = %.17g, want %.17g (diff %g > 1e-15·%g)", r.y, i+1, dy[i], r.want[i], d, r.scale[i])
			}
		}
	}

	// y8' = −y7' exactly, so y7 + y8 is conserved; the published
	// reference keeps y7 + y8 = 0.0057 to its 16 digits. The cotangent
	// of e7 + e8 is exactly zero.
	rng := rand.New(rand.NewPCG(8, 8))
	pg := pr.Programs()
	gy := make([]float64, 8)
	for range 200 {
		y := randVec(rng, 8)
		pr.F(0, y, nil, dy)
		if math.Float64bits(dy[7]) != math.Float64bits(-dy[6]) {
			t.Fatalf("y = %v: y8' = %g, −y7' = %g", y, dy[7], -dy[6])
		}
		pg.VJP(0, y, nil, []float64{0, 0, 0, 0, 0, 0, 1, 1}, gy, nil)
		for j, g := range gy {
			if g != 0 {
				t.Fatalf("y = %v: (e7 + e8)ᵀJ_y[%d] = %g, want 0", y, j, g)
			}
		}
	}
	ref := systems.HIRESReference
	if d := math.Abs(ref[6] + ref[7] - 0.0057); d > 2*eps*0.0057 {
		t.Errorf("HIRESReference: y7 + y8 = %.17g, want 0.0057 (diff %g)", ref[6]+ref[7], d)
	}
}

// rk4 integrates pr from its defaults over [T0, T1] with n classical
// Runge–Kutta steps and returns the final state.
func rk4(pr *ode.Problem, p []float64, n int) []float64 {
	d := pr.Dim
	y := append([]float64(nil), pr.Y0...)
	k1, k2, k3, k4, tmp := make([]float64, d), make([]float64, d), make([]float64, d), make([]float64, d), make([]float64, d)
	h := (pr.T1 - pr.T0) / float64(n)
	for s := range n {
		t := pr.T0 + float64(s)*h
		pr.F(t, y, p, k1)
		for i := range y {
			tmp[i] = y[i] + h/2*k1[i]
		}
		pr.F(t+h/2, tmp, p, k2)
		for i := range y {
			tmp[i] = y[i] + h/2*k2[i]
		}
		pr.F(t+h/2, tmp, p, k3)
		for i := range y {
			tmp[i] = y[i] + h*k3[i]
		}
		pr.F(t+h, tmp, p, k4)
		for i := range y {
			y[i] += h / 6 * (k1[i] + 2*k2[i] + 2*k3[i] + k4[i])
		}
	}
	return y
}

// TestHIRESReference integrates HIRES over its default span with 2e5
// classical RK4 steps (h ≈ 1.6e-3; the fastest eigenvalue, about −210,
// gives |hλ| ≈ 0.34, well inside RK4's stability interval) and compares
// with the published reference: this checks the equations, the initial
// state, the span and the transcribed digits together. RK4's error is
// 5e-13 relative at this step and 1.7e-13 at half of it (fourth order,
// until rounding takes over); 1e-11 leaves a factor of 20.
func TestHIRESReference(t *testing.T) {
	pr := systems.HIRES()
	y := rk4(pr, nil, 200_000)
	worst := 0.0
	for i, want := range systems.HIRESReference {
		e := math.Abs(y[i]-want) / want
		worst = max(worst, e)
		if !(e <= 1e-11) {
			t.Errorf("y%d(321.8122) = %.16g, reference %.16g (relative %.3g)", i+1, y[i], want, e)
		}
	}
	t.Logf("largest relative difference from the reference: %.3g", worst)
}

// TestVanDerPolStiff checks VanDerPolStiff's defaults and that its F is
// VanDerPol's, and measures the relaxation period at μ = 1e3 with RK4
// at h = 2e-6 (|hλ| ≲ 2e-6·3e3 = 6e-3, and the fast transitions, over
// about 1/μ, get hundreds of steps): it must lie within 0.01 of the
// two-term asymptotic value 3 − 2·ln 2 + 3·α·μ^(−2/3) ≈ 1.684 (the next
// term is O(μ^(−1)·ln μ) ≈ 0.007), and [0, 2] must hold a full period.
func TestVanDerPolStiff(t *testing.T) {
	pr := systems.VanDerPolStiff(0)
	if pr.P[0] != 1e3 || pr.Name != "vdp_stiff" || !pr.Stiff || pr.T1 != 2 {
		t.Errorf("VanDerPolStiff(0): mu %g, name %q, stiff %v, t1 %g", pr.P[0], pr.Name, pr.Stiff, pr.T1)
	}
	if p := systems.VanDerPolStiff(250); p.P[0] != 250 || p.T1 != 2 {
		t.Errorf("VanDerPolStiff(250): mu %g, t1 %g", p.P[0], p.T1)
	}
	ref := systems.VanDerPol()
	rng := rand.New(rand.NewPCG(9, 9))
	a, b := make([]float64, 2), make([]float64, 2)
	for range 100 {
		y, p := randVec(rng, 2), []float64{1e4 * rng.Float64()}
		pr.F(0, y, p, a)
		ref.F(0, y, p, b)
		if a[0] != b[0] || a[1] != b[1] {
			t.Fatalf("F differs from VanDerPol's at y = %v, p = %v", y, p)
		}
	}

	// Downward zero crossings of x from (2, 0).
	mu := pr.P[0]
	f := func(y, dy []float64) { pr.F(0, y, pr.P, dy) }
	const h = 2e-6
	y := []float64{2, 0}
	var k1, k2, k3, k4, tmp [2]float64
	var cross []float64
	for s := 0; len(cross) < 2 && s < 2_000_000; s++ {
		f(y, k1[:])
		for i := range y {
			tmp[i] = y[i] + h/2*k1[i]
		}
		f(tmp[:], k2[:])
		for i := range y {
			tmp[i] = y[i] + h/2*k2[i]
		}
		f(tmp[:], k3[:])
		for i := range y {
			tmp[i] = y[i] + h*k3[i]
		}
		f(tmp[:], k4[:])
		x0 := y[0]
		for i := range y {
			y[i] += h / 6 * (k1[i] + 2*k2[i] + 2*k3[i] + k4[i])
		}
		if x0 > 0 && y[0] <= 0 {
			cross = append(cross, float64(s+1)*h)
		}
	}
	if len(cross) < 2 {
		t.Fatalf("fewer than two downward zero crossings: %v", cross)
	}
	period := cross[1] - cross[0]
	const airy = 2.338107410459767 // first zero of Ai(−x)
	asym := 3 - 2*math.Ln2 + 3*airy*math.Pow(mu, -2.0/3)
	t.Logf("crossings %v, period %.5g, asymptotic %.5g", cross, period, asym)
	if math.Abs(period-asym) > 0.01 {
		t.Errorf("period %.5g, two-term asymptotic value %.5g", period, asym)
	}
	if period > pr.T1-pr.T0 {
		t.Errorf("span [%g, %g] does not hold a full period (crossings %v)", pr.T0, pr.T1, cross)
	}
}

// TestLinearStiffErrors checks that every bad eigenvalue is rejected
// with an error naming its index and value.
func TestLinearStiffErrors(t *testing.T) {
	cases := []struct {
		eigs []float64
		want string
	}{
		{nil, "no eigenvalues"},
		{[]float64{}, "no eigenvalues"},
		{[]float64{-1, 0}, "eigs[1] = 0"},
		{[]float64{-1, -2, 0.5}, "eigs[2] = 0.5"},
		{[]float64{math.NaN()}, "eigs[0] = NaN"},
		{[]float64{-1, math.Inf(-1)}, "eigs[1] = -Inf"},
		{[]float64{math.Inf(1)}, "eigs[0] = +Inf"},
		{[]float64{-3, math.Copysign(0, -1)}, "eigs[1] = -0"},
	}
	for _, c := range cases {
		ls, err := systems.LinearStiff(c.eigs)
		if ls != nil || err == nil || !errors.Is(err, systems.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("LinearStiff(%v) = %v, error %v; want ErrInvalid naming %q", c.eigs, ls, err, c.want)
		}
	}
}

// linearStiffCases returns the default and two other LinearStiff systems
// (n = 1, and n = 4, where V has exact entries ±1/2).
func linearStiffCases(t *testing.T) map[string]*systems.LinearSystem {
	t.Helper()
	out := map[string]*systems.LinearSystem{"default": systems.LinearStiffDefault()}
	for name, eigs := range map[string][]float64{"n=1": {-7}, "n=4": {-0.3, -2, -2, -5e3}} {
		ls, err := systems.LinearStiff(eigs)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = ls
	}
	return out
}

// TestLinearStiffEigenvalues checks that A is exactly symmetric and has
// the requested eigenvalues to 1e-10 relative. A symmetric eigensolver is
// backward stable, so Weyl's theorem only promises each eigenvalue to
// within c·n·eps·‖A‖₂ absolute (A's rounded entries add as much): for the
// default, ‖A‖₂ = 1e5, that allows ~1e-10 on the eigenvalue −1. In
// practice gonum's EigenSym does far better on these matrices: 2e-12
// relative on −1, 1.4e-12 on −0.3 (n = 4), the largest observed, so the
// relative tolerance keeps a margin of 50.
func TestLinearStiffEigenvalues(t *testing.T) {
	for name, ls := range linearStiffCases(t) {
		t.Run(name, func(t *testing.T) {
			n := ls.Dim()
			a := ls.Matrix()
			for i := range n {
				for j := range n {
					if math.Float64bits(a[i*n+j]) != math.Float64bits(a[j*n+i]) {
						t.Fatalf("A[%d][%d] = %g, A[%d][%d] = %g: not symmetric", i, j, a[i*n+j], j, i, a[j*n+i])
					}
				}
			}
			want := ls.Eigenvalues()
			var es mat.EigenSym
			if !es.Factorize(mat.NewSymDense(n, a), false) {
				t.Fatal("eigen factorization failed")
			}
			got := es.Values(nil)
			sort.Float64s(got)
			sort.Float64s(want)
			for k := range n {
				tol := 1e-10 * math.Abs(want[k])
				if d := math.Abs(got[k] - want[k]); !(d <= tol) {
					t.Errorf("eigenvalue %d: %.17g, want %.17g (diff %g > %g)", k, got[k], want[k], d, tol)
				} else {
					t.Logf("λ = %g: relative error %.2g", want[k], d/math.Abs(want[k]))
				}
			}
			// Eigenvalues returns a copy.
			e := ls.Eigenvalues()
			e[0] = 123
			if ls.Eigenvalues()[0] == 123 {
				t.Error("Eigenvalues shares its slice")
			}
		})
	}
	if systems.LinearDefault().Eigenvalues() != nil {
		t.Error("Eigenvalues of a Linear system should be nil")
	}
	ls := systems.LinearStiffDefault()
	if got := ls.Eigenvalues(); !slices.Equal(got, []float64{-1, -10, -100, -1e3, -1e4, -1e5}) {
		t.Errorf("default eigenvalues %v", got)
	}
	if pr := ls.Problem; pr.Name != "linear_stiff" || !pr.Stiff || pr.Dim != 6 || pr.T1 != 1 {
		t.Errorf("default: name %q, stiff %v, dim %d, t1 %g", pr.Name, pr.Stiff, pr.Dim, pr.T1)
	}
}

// TestLinearStiffExact checks the eigen-form Exact: against the closed
// form for y0 = 𝟙, the ODE (central differences in t), the group
// property, and gonum's matrix exponential of the same A.
func TestLinearStiffExact(t *testing.T) {
	for name, ls := range linearStiffCases(t) {
		t.Run(name, func(t *testing.T) {
			n := ls.Dim()
			a := ls.Matrix()
			lam := ls.Eigenvalues()
			ones := ls.Problem.Y0
			got := make([]float64, n)

			// y_i(t) = −e^{λ_i t} + (2/n)·Σ_k e^{λ_k t} for y0 = 𝟙. Both
			// sides are a few roundings of sums of n terms ≤ 1 (times
			// 1 + 2/n ≤ 3): 1e-14 absolute.
			for _, tt := range []float64{0, 1e-6, 1e-4, 0.01, 0.3, 1} {
				ls.Exact(0, ones, tt, got)
				var s float64
				for _, l := range lam {
					s += math.Exp(l * tt)
				}
				for i := range n {
					want := -math.Exp(lam[i]*tt) + 2/float64(n)*s
					if d := math.Abs(got[i] - want); d > 1e-14 {
						t.Errorf("t = %g: y%d = %.17g, closed form %.17g (diff %g)", tt, i, got[i], want, d)
					}
				}
			}

			// Central difference in t against A·y(t). In modal form
			// y(t) = Σ_k w_k·(±v_k) with weights w_k = e^{λ_k·t}·|c_k|,
			// c = Vᵀ·y0 = y0 − (2/n)·(Σ y0)·𝟙 (V as documented), and
			// |V_ik| ≤ 1. The scale of y' is S = Σ_k |λ_k|·w_k, the sum
			// of the magnitudes of its modal terms (components of A·y can
			// cancel, so ‖A·y‖ is no scale), and the test allows 1e-7·S.
			// With δ the step, the truncation error is at most
			// δ²/6·Σ|λ_k|³·w_k and the rounding error about 4·eps·Σw_k/δ
			// (each Exact is correct to a few eps·Σw_k); δ is chosen to
			// balance them, and the test first checks that this bound is
			// below 1e-8·S at every time, so the tolerance keeps a margin
			// of at least 10 (the observed errors are far smaller).
			y0 := []float64{1, -0.5, 0.25, 2, -1.5, 0.75}[:n]
			var sum float64
			for _, v := range y0 {
				sum += v
			}
			yp, ym := make([]float64, n), make([]float64, n)
			worst, worstBound := 0.0, 0.0
			for _, tt := range []float64{1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.1, 1} {
				var sw, s1, s3 float64
				for k, l := range lam {
					w := math.Exp(l*tt) * math.Abs(y0[k]-2/float64(n)*sum)
					sw += w
					s1 += math.Abs(l) * w
					s3 += math.Abs(l*l*l) * w
				}
				delta := math.Cbrt(12 * eps * sw / s3)
				bound := delta*delta/6*s3 + 4*eps*sw/delta
				worstBound = max(worstBound, bound/s1)
				if !(bound <= 1e-8*s1) {
					t.Fatalf("t = %g: error bound %g of the central difference exceeds 1e-8·S = %g", tt, bound, 1e-8*s1)
				}
				ls.Exact(0, y0, tt, got)
				ay := matVec(a, got)
				ls.Exact(0, y0, tt+delta, yp)
				ls.Exact(0, y0, tt-delta, ym)
				for i := range n {
					fd := (yp[i] - ym[i]) / ((tt + delta) - (tt - delta)) // the steps actually taken
					d := math.Abs(fd - ay[i])
					worst = max(worst, d/(1e-7*s1))
					if !(d <= 1e-7*s1) {
						t.Errorf("t = %g: d/dt Exact[%d] ≈ %.12g, A·y = %.12g (diff %g > 1e-7·%g)", tt, i, fd, ay[i], d, s1)
					}
				}
			}
			t.Logf("central differences: largest bound/S %.3g", worstBound)
			t.Logf("central differences: largest error/tolerance %.3g", worst)

			// Group property: y0 → t1 → t2 equals y0 → t2. Each Exact is
			// two products with V (sums of n terms of size ≤ 3·‖y‖∞) and
			// the exponentials: ≲ 2·n·eps·3·‖y0‖∞ ≈ 1.6e-14 for n = 6.
			// Three calls: 5e-14·‖y0‖∞.
			for _, ts := range [][3]float64{{0, 1e-5, 1e-3}, {0.2, 0.2005, 0.9}, {0, 0.5, 1}} {
				y1, via, direct := make([]float64, n), make([]float64, n), make([]float64, n)
				ls.Exact(ts[0], y0, ts[1], y1)
				ls.Exact(ts[1], y1, ts[2], via)
				ls.Exact(ts[0], y0, ts[2], direct)
				for i := range n {
					if d := math.Abs(via[i] - direct[i]); d > 5e-14*maxAbs(y0) {
						t.Errorf("group %v: [%d] via t1 %.17g, direct %.17g (diff %g)", ts, i, via[i], direct[i], d)
					}
				}
			}

			// At t = t0 the result is y0 bit for bit; dst may alias y0.
			ls.Exact(0.4, y0, 0.4, got)
			if !slices.Equal(got, y0) {
				t.Errorf("Exact at t = t0: %v, want %v", got, y0)
			}
			direct := make([]float64, n)
			ls.Exact(0, y0, 0.3, direct)
			alias := append([]float64(nil), y0...)
			ls.Exact(0, alias, 0.3, alias)
			if !slices.Equal(alias, direct) {
				t.Errorf("aliased dst: %v, want %v", alias, direct)
			}

			// The same A through gonum's Padé exponential (Linear's
			// Exact). Scaling and squaring is backward stable, with error
			// up to about eps·‖tA‖₂ relative to ‖y0‖: 2e-11 for
			// ‖tA‖ = 1e5 (observed: 3e-13). 1e-10 leaves a factor of 5
			// over that estimate for its constant.
			gen, err := systems.Linear(a, n)
			if err != nil {
				t.Fatal(err)
			}
			viaExp := make([]float64, n)
			for _, tt := range []float64{1e-4, 0.01, 1} {
				ls.Exact(0, y0, tt, got)
				gen.Exact(0, y0, tt, viaExp)
				for i := range n {
					if d := math.Abs(got[i] - viaExp[i]); d > 1e-10*maxAbs(y0) {
						t.Errorf("t = %g: [%d] eigen form %.17g, exp(tA) %.17g (diff %g)", tt, i, got[i], viaExp[i], d)
					}
				}
			}
		})
	}
}

// fusesFMA reports whether the Go compiler may fuse x*y + z into one
// rounding on this architecture (never on amd64, 386 or wasm).
var fusesFMA = !slices.Contains([]string{"amd64", "386", "wasm"}, runtime.GOARCH)

// TestStiffExamples parses examples/robertson.ode and examples/hires.ode,
// compiles them with sym/tape, and checks that they match the built-ins:
// names, defaults, span and stiffness, and F bitwise at random points
// (each file writes its expressions in the Go code's order). Where the
// compiler may fuse multiply-adds the hand-written code rounds every
// product explicitly, but the tolerance allows 1e-15 of max|f| as the
// other example tests do.
func TestStiffExamples(t *testing.T) {
	rows := []struct {
		file string
		ref  *ode.Problem
		draw func(r *rand.Rand, y, p []float64)
	}{
		{"robertson.ode", systems.Robertson(), func(r *rand.Rand, y, p []float64) {
			if r.IntN(2) == 0 {
				y[0], y[1], y[2] = r.Float64(), 4e-5*r.Float64(), r.Float64()
			} else {
				y[0], y[1], y[2] = r.NormFloat64(), r.NormFloat64(), r.NormFloat64()
			}
			p[0], p[1], p[2] = 0.08*r.Float64(), 6e7*r.Float64(), 2e4*r.Float64()
		}},
		{"hires.ode", systems.HIRES(), func(r *rand.Rand, y, _ []float64) {
			for i := range y {
				y[i] = r.NormFloat64()
			}
			if r.IntN(4) == 0 { // exact zeros, as at the initial state
				y[r.IntN(8)], y[r.IntN(8)] = 0, 0
			}
		}},
	}
	for _, row := range rows {
		t.Run(row.file, func(t *testing.T) {
			m, err := parse.ParseFile(filepath.Join("..", "examples", row.file))
			if err != nil {
				t.Fatal(err)
			}
			set, err := tape.Build(m)
			if err != nil {
				t.Fatal(err)
			}
			got, want := set.Problem(), row.ref
			if got.Name != want.Name || !slices.Equal(got.StateNames, want.StateNames) || !slices.Equal(got.ParamNames, want.ParamNames) {
				t.Errorf("names %q %v %v, built-in %q %v %v", got.Name, got.StateNames, got.ParamNames, want.Name, want.StateNames, want.ParamNames)
			}
			if !slices.Equal(got.Y0, want.Y0) || !slices.Equal(got.P, want.P) ||
				got.T0 != want.T0 || got.T1 != want.T1 || got.Stiff != want.Stiff {
				t.Errorf("defaults y0 %v p %v span [%v, %v] stiff %v; built-in %v %v [%v, %v] %v",
					got.Y0, got.P, got.T0, got.T1, got.Stiff, want.Y0, want.P, want.T0, want.T1, want.Stiff)
			}
			fg, fw := got.WorkerF(), want.F
			rng := rand.New(rand.NewPCG(10, uint64(len(row.file))))
			y, p := make([]float64, want.Dim), make([]float64, want.NumParams)
			dyGot, dyWant := make([]float64, want.Dim), make([]float64, want.Dim)
			check := func() {
				fw(0, y, p, dyWant)
				fg(0, y, p, dyGot)
				scale := maxAbs(dyWant)
				for i := range dyWant {
					if math.Float64bits(dyGot[i]) == math.Float64bits(dyWant[i]) {
						continue
					}
					if fusesFMA && math.Abs(dyGot[i]-dyWant[i]) <= 1e-15*scale {
						continue
					}
					t.Fatalf("f(%v, %v): %s' = %v (bits %#x), built-in %v (bits %#x)", y, p, want.StateNames[i],
						dyGot[i], math.Float64bits(dyGot[i]), dyWant[i], math.Float64bits(dyWant[i]))
				}
			}
			copy(y, want.Y0)
			copy(p, want.P)
			check() // the defaults, with their exact zeros
			for range 1000 {
				row.draw(rng, y, p)
				check()
			}
		})
	}
}

// ExampleLinearStiffDefault shows the stiff linear system's spectrum and
// its exact solution at the end of the default span: from y0 = 𝟙,
// y_i(1) = −e^{λ_i} + (1/3)·Σ_k e^{λ_k}, with only e^{−1} and e^{−10}
// not negligible.
func ExampleLinearStiffDefault() {
	ls := systems.LinearStiffDefault()
	pr := ls.Problem
	fmt.Println(pr.Name, pr.Dim, pr.Stiff, ls.Eigenvalues())
	y := make([]float64, pr.Dim)
	ls.Exact(pr.T0, pr.Y0, pr.T1, y)
	fmt.Printf("y(1) = %.6f\n", y)
	// Output:
	// linear_stiff 6 true [-1 -10 -100 -1000 -10000 -100000]
	// y(1) = [-0.245238 0.122596 0.122642 0.122642 0.122642 0.122642]
}
