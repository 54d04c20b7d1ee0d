package systems_test

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"sort"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/systems"
)

// eps is the float64 unit roundoff 2⁻⁵², the base of the tolerances below.
const eps = 0x1p-52

// testProblems returns the defaults of All plus sizes All does not cover.
func testProblems(t *testing.T) []*ode.Problem {
	t.Helper()
	probs := systems.All()
	l96, err := systems.Lorenz96(40, 8)
	if err != nil {
		t.Fatal(err)
	}
	l96small, err := systems.Lorenz96(4, -1.5)
	if err != nil {
		t.Fatal(err)
	}
	lin1, err := systems.Linear([]float64{-2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	return append(probs, l96, l96small, lin1.Problem)
}

// defaults returns fresh copies of pr's default y and p with len == cap,
// so any index past the end panics.
func defaults(pr *ode.Problem) (y, p []float64) {
	y = append(make([]float64, 0, pr.Dim), pr.Y0...)
	p = append(make([]float64, 0, pr.NumParams), pr.P...)
	return y[:len(y):len(y)], p[:len(p):len(p)]
}

// callF calls pr.F and turns a panic (an out-of-range index) into an error.
func callF(pr *ode.Problem, t float64, y, p, dy []float64) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("F panicked: %v", r)
		}
	}()
	pr.F(t, y, p, dy)
	return nil
}

func TestAllDefaults(t *testing.T) {
	for _, pr := range testProblems(t) {
		t.Run(pr.Name, func(t *testing.T) {
			if err := pr.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			switch {
			case pr.Name == "":
				t.Error("Name is empty")
			case pr.StateNames == nil:
				t.Error("StateNames not set")
			case pr.NumParams > 0 && (pr.ParamNames == nil || pr.P == nil):
				t.Error("ParamNames or P not set")
			case pr.Y0 == nil:
				t.Error("Y0 not set")
			case pr.T0 == pr.T1:
				t.Errorf("span [%g, %g] is empty", pr.T0, pr.T1)
			}
			y, p := defaults(pr)
			y0, p0 := append([]float64(nil), y...), append([]float64(nil), p...)
			// dy sits inside guard cells; len == cap, so writes past
			// the end panic and writes before it show in buf[0].
			buf := make([]float64, pr.Dim+2)
			for i := range buf {
				buf[i] = math.NaN()
			}
			buf[0], buf[pr.Dim+1] = -7, -7
			dy := buf[1 : pr.Dim+1 : pr.Dim+1]
			if err := callF(pr, pr.T0, y, p, dy); err != nil {
				t.Fatal(err)
			}
			for i, v := range dy {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Errorf("dy[%d] = %g after one call at the defaults: not written or not finite", i, v)
				}
			}
			if buf[0] != -7 || buf[pr.Dim+1] != -7 {
				t.Errorf("guard cells changed: %g, %g", buf[0], buf[pr.Dim+1])
			}
			for i := range y {
				if y[i] != y0[i] {
					t.Errorf("F wrote y[%d]", i)
				}
			}
			for i := range p {
				if p[i] != p0[i] {
					t.Errorf("F wrote p[%d]", i)
				}
			}
		})
	}
}

func TestByName(t *testing.T) {
	want := map[string]string{
		"lorenz":   "lorenz",
		"vdp":      "vdp",
		"lorenz96": "lorenz96_8",
		"linear":   "linear",
		"kepler":   "kepler",
		"halo":     "halo",
		// The stiff systems.
		"robertson":    "robertson",
		"hires":        "hires",
		"vdp_stiff":    "vdp_stiff",
		"linear_stiff": "linear_stiff",
	}
	all := systems.All()
	if len(all) != len(want) {
		t.Fatalf("All returned %d problems, want %d", len(all), len(want))
	}
	var allNames, wantNames []string
	for _, pr := range all {
		allNames = append(allNames, pr.Name)
	}
	for key, name := range want {
		wantNames = append(wantNames, name)
		pr, err := systems.ByName(key)
		if err != nil {
			t.Errorf("ByName(%q): %v", key, err)
			continue
		}
		if pr.Name != name {
			t.Errorf("ByName(%q).Name = %q, want %q", key, pr.Name, name)
		}
	}
	sort.Strings(allNames)
	sort.Strings(wantNames)
	if strings.Join(allNames, ",") != strings.Join(wantNames, ",") {
		t.Errorf("All names %v, want %v", allNames, wantNames)
	}

	// Fresh problems: changing one must not change the next.
	a, _ := systems.ByName("lorenz")
	a.P[0] = 99
	b, _ := systems.ByName("lorenz")
	if b.P[0] != 10 {
		t.Errorf("ByName shares defaults between calls: sigma = %g", b.P[0])
	}

	_, err := systems.ByName("rossler")
	if err == nil || !errors.Is(err, systems.ErrInvalid) {
		t.Fatalf("ByName(rossler) error = %v, want one wrapping ErrInvalid", err)
	}
	for key := range want {
		if !strings.Contains(err.Error(), key) {
			t.Errorf("ByName error %q does not list %q", err, key)
		}
	}
}

func TestFValues(t *testing.T) {
	l96n5, _ := systems.Lorenz96(5, 8)
	l96n4, _ := systems.Lorenz96(4, 8)
	lin := systems.LinearDefault()
	rows := []struct {
		name    string
		pr      *ode.Problem
		y, p    []float64
		want    []float64
		tol     float64 // absolute
		tolNote string
	}{
		// Lorenz at (1, 2, 3): (σ·1, 1·25 − 2, 2 − 3β).
		{"lorenz", systems.Lorenz(), []float64{1, 2, 3}, []float64{10, 28, 8.0 / 3.0},
			[]float64{10, 23, 2 - 8}, 1e-15, "one rounding of 8/3 times 3: ≤ 4·eps"},
		{"vdp mu=1", systems.VanDerPol(), []float64{2, 0.5}, []float64{1},
			[]float64{0.5, -3.5}, 0, "exact: small integers and halves"},
		{"vdp mu=3", systems.VanDerPol(), []float64{2, 0.5}, []float64{3},
			[]float64{0.5, -10.5}, 0, "exact: small integers and halves"},
		// Lorenz96 n = 5: (y[i+1] − y[i−2])·y[i−1] − y[i] + 8 by hand.
		{"lorenz96 n=5", l96n5, []float64{1, 2, 3, 4, 5}, []float64{8},
			[]float64{-3, 4, 11, 13, -5}, 0, "exact: integers"},
		{"lorenz96 n=4", l96n4, []float64{1, 2, 3, 4}, []float64{8},
			[]float64{3, 5, 11, 1}, 0, "exact: integers"},
		// A·(1, 2, 3, 4) row by row for LinearDefault.
		{"linear", lin.Problem, []float64{1, 2, 3, 4}, nil,
			[]float64{-0.5 + 4 + 3, -2 - 1 + 2, -3 + 6, 1.2}, 1e-15, "a few roundings of O(1) sums: ≤ 4·eps·|row|"},
		// r = (3, 4), |r| = 5, μ = 2: −μ/|r|³ = −0.016.
		{"kepler", systems.Kepler(), []float64{3, 4, 0.5, -1}, []float64{2},
			[]float64{0.5, -1, -0.048, -0.064}, 1e-15, "three roundings of O(0.05) values"},
		// D = 0.25 + 1 + 4 + 0.49/0.49 = 6.25, vc²/D = 0.64.
		{"halo", systems.Halo(), []float64{1, 2, 0.7, 0.3, -0.2, 0.1}, []float64{2, 0.7, 0.5},
			[]float64{0.3, -0.2, 0.1, -0.64, -1.28, -0.64 / 0.7}, 1e-15, "a few roundings of O(1) values"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			dy := make([]float64, r.pr.Dim)
			r.pr.F(0, r.y, r.p, dy)
			for i := range dy {
				if d := math.Abs(dy[i] - r.want[i]); d > r.tol {
					t.Errorf("dy[%d] = %.17g, want %.17g (diff %g > tol %g: %s)", i, dy[i], r.want[i], d, r.tol, r.tolNote)
				}
			}
		})
	}
}

func TestFNoAlloc(t *testing.T) {
	for _, pr := range testProblems(t) {
		t.Run(pr.Name, func(t *testing.T) {
			y, p := defaults(pr)
			dy := make([]float64, pr.Dim)
			allocs := testing.AllocsPerRun(100, func() { pr.F(pr.T0, y, p, dy) })
			if allocs != 0 {
				t.Errorf("F allocates %g times per call, want 0", allocs)
			}
		})
	}
}

// TestFConcurrent calls each F from several goroutines at once; every
// result must equal the serial one bitwise (run with -race as well).
func TestFConcurrent(t *testing.T) {
	const workers, calls = 8, 200
	for _, pr := range testProblems(t) {
		t.Run(pr.Name, func(t *testing.T) {
			y, p := defaults(pr)
			want := make([]float64, pr.Dim)
			pr.F(pr.T0, y, p, want)
			var wg sync.WaitGroup
			bad := make([]bool, workers)
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					yw := append([]float64(nil), y...)
					pw := append([]float64(nil), p...)
					dy := make([]float64, pr.Dim)
					for range calls {
						pr.F(pr.T0, yw, pw, dy)
						for i := range dy {
							if dy[i] != want[i] {
								bad[w] = true
							}
						}
					}
				}()
			}
			wg.Wait()
			for w, b := range bad {
				if b {
					t.Errorf("worker %d saw a result different from the serial one", w)
				}
			}
		})
	}
}

func TestLorenz96(t *testing.T) {
	pr, err := systems.Lorenz96(8, 0)
	if err != nil {
		t.Fatal(err)
	}
	if pr.Name != "lorenz96_8" || pr.Dim != 8 || pr.P[0] != 8 {
		t.Errorf("Lorenz96(8, 0): name %q, dim %d, F %g; want lorenz96_8, 8, 8", pr.Name, pr.Dim, pr.P[0])
	}
	for i, v := range pr.Y0 {
		want := 8.0
		if i == 0 {
			want = 8.01
		}
		if v != want {
			t.Errorf("Y0[%d] = %g, want %g", i, v, want)
		}
	}
	pr, err = systems.Lorenz96(6, 3.5)
	if err != nil || pr.P[0] != 3.5 || pr.Y0[1] != 3.5 {
		t.Errorf("Lorenz96(6, 3.5): err %v, P %v, Y0 %v", err, pr.P, pr.Y0)
	}

	for _, n := range []int{3, 0, -1} {
		_, err := systems.Lorenz96(n, 8)
		if err == nil || !errors.Is(err, systems.ErrInvalid) {
			t.Errorf("Lorenz96(%d, 8) error = %v, want one wrapping ErrInvalid", n, err)
			continue
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("n = %d", n)) || !strings.Contains(err.Error(), "≥ 4") {
			t.Errorf("Lorenz96(%d, 8) error %q does not name n and the rule", n, err)
		}
	}
	if _, err := systems.Lorenz96(8, math.NaN()); !errors.Is(err, systems.ErrInvalid) {
		t.Errorf("Lorenz96(8, NaN) error = %v, want ErrInvalid", err)
	}
}

func TestLinearErrors(t *testing.T) {
	cases := []struct {
		name string
		a    []float64
		n    int
		want string
	}{
		{"n=0", nil, 0, "n = 0"},
		{"short", []float64{1, 2, 3}, 2, "len(a) = 3"},
		{"long", []float64{1, 2, 3, 4, 5}, 2, "len(a) = 5"},
		{"nan", []float64{1, math.NaN(), 3, 4}, 2, "a[1]"},
		{"inf", []float64{1, 2, math.Inf(-1), 4}, 2, "a[2]"},
	}
	for _, c := range cases {
		_, err := systems.Linear(c.a, c.n)
		if err == nil || !errors.Is(err, systems.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Linear error = %v, want ErrInvalid naming %q", c.name, err, c.want)
		}
	}
}

// linearCases returns the systems the Exact tests run on.
func linearCases(t *testing.T) map[string]*systems.LinearSystem {
	t.Helper()
	rot, err := systems.Linear([]float64{0, 1, -1, 0}, 2)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*systems.LinearSystem{"default": systems.LinearDefault(), "rotation": rot}
}

// matVec returns A·y for the row-major n×n matrix a.
func matVec(a, y []float64) []float64 {
	n := len(y)
	out := make([]float64, n)
	for i := range n {
		for j := range n {
			out[i] += a[i*n+j] * y[j]
		}
	}
	return out
}

func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}

func TestLinearExact(t *testing.T) {
	for name, ls := range linearCases(t) {
		t.Run(name, func(t *testing.T) {
			n := ls.Dim()
			a := ls.Matrix()
			y0 := []float64{1, -0.5, 0.25, 2}[:n]
			got := make([]float64, n)

			// At t = t0 the solution is y0, bit for bit (documented).
			ls.Exact(0.3, y0, 0.3, got)
			for i := range got {
				if got[i] != y0[i] {
					t.Errorf("Exact at t = t0: [%d] = %g, want %g exactly", i, got[i], y0[i])
				}
			}

			// Central difference in t against A·y(t). With δ = 1e-5 the
			// truncation error is δ²/6·‖A‖³·‖y‖ ≈ 1e-10·27/6·‖y‖ (‖A‖ ≲ 3)
			// and the rounding error ≈ eps·‖y‖/δ ≈ 2e-11·‖y‖; 1e-8
			// relative leaves a factor of 100 for Exp's own error.
			const delta, fdTol = 1e-5, 1e-8
			yp, ym := make([]float64, n), make([]float64, n)
			for _, tt := range []float64{0.1, 0.7, 1.5, -0.8} {
				ls.Exact(0, y0, tt, got)
				ls.Exact(0, y0, tt+delta, yp)
				ls.Exact(0, y0, tt-delta, ym)
				ay := matVec(a, got)
				scale := maxAbs(ay)
				for i := range n {
					fd := (yp[i] - ym[i]) / (2 * delta)
					if d := math.Abs(fd - ay[i]); d > fdTol*scale {
						t.Errorf("t = %g: d/dt Exact[%d] ≈ %.12g, A·y = %.12g (diff %g > %g·%g)", tt, i, fd, ay[i], d, fdTol, scale)
					}
				}
			}

			// Group property: y0 → t1 → t2 equals y0 → t2. Two
			// exponentials of norm ≲ e³, each with relative error ~ a
			// few hundred eps: 1e-13 relative.
			const groupTol = 1e-13
			t0, t1, t2 := 0.2, 0.9, 1.6
			y1 := make([]float64, n)
			ls.Exact(t0, y0, t1, y1)
			via := make([]float64, n)
			ls.Exact(t1, y1, t2, via)
			direct := make([]float64, n)
			ls.Exact(t0, y0, t2, direct)
			for i := range n {
				if d := math.Abs(via[i] - direct[i]); d > groupTol*maxAbs(direct) {
					t.Errorf("group: [%d] via t1 %.17g, direct %.17g (diff %g)", i, via[i], direct[i], d)
				}
			}

			// dst may alias y0.
			alias := append([]float64(nil), y0...)
			ls.Exact(t0, alias, t2, alias)
			for i := range n {
				if alias[i] != direct[i] {
					t.Errorf("aliased dst: [%d] = %g, want %g", i, alias[i], direct[i])
				}
			}

			// Bad lengths fill dst with NaN instead of panicking.
			bad := make([]float64, n)
			ls.Exact(0, y0[:n-1], 1, bad)
			for i, v := range bad {
				if !math.IsNaN(v) {
					t.Errorf("short y0: dst[%d] = %g, want NaN", i, v)
				}
			}
		})
	}
}

func TestLinearRotationClosedForm(t *testing.T) {
	// exp(t·[[0, 1], [−1, 0]])·(1, 0) = (cos t, −sin t). Padé with
	// scaling and squaring is backward stable: error ≲ 10·eps·‖tA‖.
	rot := linearCases(t)["rotation"]
	got := make([]float64, 2)
	for _, tt := range []float64{0.5, 1, 3, 10} {
		rot.Exact(0, []float64{1, 0}, tt, got)
		want := []float64{math.Cos(tt), -math.Sin(tt)}
		tol := 20 * eps * math.Max(1, tt)
		for i := range got {
			if d := math.Abs(got[i] - want[i]); d > tol {
				t.Errorf("t = %g: [%d] = %.17g, want %.17g (diff %g > %g)", tt, i, got[i], want[i], d, tol)
			}
		}
	}
}

func TestLinearDefaultEigenvalues(t *testing.T) {
	ls := systems.LinearDefault()
	var eig mat.Eigen
	if !eig.Factorize(mat.NewDense(4, 4, ls.Matrix()), mat.EigenNone) {
		t.Fatal("eigen factorization failed")
	}
	got := eig.Values(nil)
	want := []complex128{complex(-0.5, 2), complex(-0.5, -2), -1, 0.3}
	// The eigenvalues are distinct and the matrix is O(1), so LAPACK's
	// backward-stable QR gives them to ~ eps·‖A‖·cond; 1e-12 is ample.
	const tol = 1e-12
	for _, w := range want {
		found := false
		for _, g := range got {
			if cmplx.Abs(g-w) < tol {
				found = true
			}
		}
		if !found {
			t.Errorf("eigenvalue %v not among %v", w, got)
		}
	}
}

func TestKeplerDefaults(t *testing.T) {
	pr := systems.Kepler()
	// a = 1, e = 0.5: E = −μ/(2a), L = sqrt(μ·a·(1 − e²)); a few roundings.
	if e := systems.KeplerEnergy(pr.Y0, pr.P); math.Abs(e+0.5) > 4*eps {
		t.Errorf("energy %.17g, want -0.5", e)
	}
	if l := systems.KeplerAngularMomentum(pr.Y0, pr.P); math.Abs(l-math.Sqrt(0.75)) > 4*eps {
		t.Errorf("angular momentum %.17g, want %.17g", l, math.Sqrt(0.75))
	}
	if !math.IsNaN(systems.KeplerEnergy(pr.Y0[:3], pr.P)) || !math.IsNaN(systems.KeplerAngularMomentum(nil, nil)) {
		t.Error("short slices should give NaN")
	}
}

func TestKeplerExact(t *testing.T) {
	def := systems.Kepler()
	e9 := []float64{0.1, 0, 0, math.Sqrt(1.9 / 0.1)} // e = 0.9, a = 1, pericentre
	cases := []struct {
		name string
		y0   []float64
		p    []float64
		// periodTol: |y(T) − y0| after one period T = 2π·sqrt(a³/μ).
		// The phase n·T is off by a few eps·2π, so the error is about
		// |f(y0)|·T·few·eps: ≈ 4·6·1e-15 for e = 0.5 (1e-12 leaves room),
		// and ≈ 100·6·1e-15 for e = 0.9, where |v'| = μ/r² = 100.
		periodTol float64
	}{
		{"default", def.Y0, def.P, 1e-12},
		{"e=0.9", e9, []float64{1}, 1e-11},
		{"tilted mu=2", []float64{0.3, -0.8, 1.1, 0.4}, []float64{2}, 1e-12},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mu := c.p[0]
			e0 := systems.KeplerEnergy(c.y0, c.p)
			l0 := systems.KeplerAngularMomentum(c.y0, c.p)
			a := -mu / (2 * e0)
			period := 2 * math.Pi * math.Sqrt(a*a*a/mu)
			got := make([]float64, 4)

			if err := systems.KeplerExact(c.y0, c.p, period, got); err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if d := math.Abs(got[i] - c.y0[i]); d > c.periodTol {
					t.Errorf("after one period: [%d] = %.17g, want %.17g (diff %g > %g)", i, got[i], c.y0[i], d, c.periodTol)
				}
			}

			// Invariants along the exact solution: each is a few
			// roundings of O(|v|²) and O(μ/r) terms; |v|² ≤ 19 for e = 0.9,
			// so 1e-13 ≈ 20·|v|²·eps.
			const invTol = 1e-13
			for _, tt := range []float64{0.3, 1.7, -2.5, 3 * period / 7, 50} {
				if err := systems.KeplerExact(c.y0, c.p, tt, got); err != nil {
					t.Fatal(err)
				}
				if d := math.Abs(systems.KeplerEnergy(got, c.p) - e0); d > invTol {
					t.Errorf("t = %g: energy drift %g > %g", tt, d, invTol)
				}
				if d := math.Abs(systems.KeplerAngularMomentum(got, c.p) - l0); d > invTol {
					t.Errorf("t = %g: angular momentum drift %g > %g", tt, d, invTol)
				}
			}

			// Central difference in t against F. Truncation δ²/6·|y'''|
			// with |y'''| ≲ 3μ·|v|/r³ (≈ 8000 at e = 0.9 pericentre, but
			// we sample away from it) and rounding eps·|y|/δ ≈ 1e-10:
			// 1e-8 relative to |F|.
			const delta, fdTol = 1e-5, 1e-8
			yp, ym, f := make([]float64, 4), make([]float64, 4), make([]float64, 4)
			for _, tt := range []float64{0.4, 1.3, 2.9, -1.1} {
				if err := systems.KeplerExact(c.y0, c.p, tt, got); err != nil {
					t.Fatal(err)
				}
				_ = systems.KeplerExact(c.y0, c.p, tt+delta, yp)
				_ = systems.KeplerExact(c.y0, c.p, tt-delta, ym)
				def.F(tt, got, c.p, f)
				scale := maxAbs(f)
				for i := range 4 {
					fd := (yp[i] - ym[i]) / (2 * delta)
					if d := math.Abs(fd - f[i]); d > fdTol*scale {
						t.Errorf("t = %g: d/dt y[%d] ≈ %.12g, F = %.12g (diff %g > %g·%g)", tt, i, fd, f[i], d, fdTol, scale)
					}
				}
			}

			// Group property: y0 → t1 → t2 equals y0 → t2, to the
			// period tolerance (same error mechanism).
			y1, via, direct := make([]float64, 4), make([]float64, 4), make([]float64, 4)
			_ = systems.KeplerExact(c.y0, c.p, 1.25, y1)
			_ = systems.KeplerExact(y1, c.p, 4.5-1.25, via)
			_ = systems.KeplerExact(c.y0, c.p, 4.5, direct)
			for i := range 4 {
				if d := math.Abs(via[i] - direct[i]); d > c.periodTol {
					t.Errorf("group: [%d] via %.17g, direct %.17g (diff %g)", i, via[i], direct[i], d)
				}
			}
		})
	}
}

func TestKeplerExactCircular(t *testing.T) {
	// μ = 1, r = 1, v = 1: y(t) = (cos t, sin t, −sin t, cos t). The
	// eccentricity is 0 up to rounding, where elements-based forms break
	// down. The phase error grows like eps·t: tol = 10·eps·max(1, t).
	got := make([]float64, 4)
	for _, tt := range []float64{0.5, 3, 20, -7} {
		if err := systems.KeplerExact([]float64{1, 0, 0, 1}, []float64{1}, tt, got); err != nil {
			t.Fatal(err)
		}
		s, c := math.Sincos(tt)
		want := []float64{c, s, -s, c}
		tol := 10 * eps * math.Max(1, math.Abs(tt))
		for i := range 4 {
			if d := math.Abs(got[i] - want[i]); d > tol {
				t.Errorf("t = %g: [%d] = %.17g, want %.17g (diff %g > %g)", tt, i, got[i], want[i], d, tol)
			}
		}
	}
}

func TestKeplerExactErrors(t *testing.T) {
	esc := math.Sqrt(2) // escape speed at r = 1, μ = 1
	cases := []struct {
		name string
		y0   []float64
		p    []float64
		tt   float64
		dst  int
		want error
	}{
		{"above escape", []float64{1, 0, 0, 1.01 * esc}, []float64{1}, 1, 4, systems.ErrUnbound},
		{"hyperbolic radial", []float64{0, 2, 0, 5}, []float64{1}, 1, 4, systems.ErrUnbound},
		{"r = 0", []float64{0, 0, 0.1, 0}, []float64{1}, 1, 4, systems.ErrInvalid},
		{"mu = 0", []float64{1, 0, 0, 1}, []float64{0}, 1, 4, systems.ErrInvalid},
		{"mu NaN", []float64{1, 0, 0, 1}, []float64{math.NaN()}, 1, 4, systems.ErrInvalid},
		{"t Inf", []float64{1, 0, 0, 1}, []float64{1}, math.Inf(1), 4, systems.ErrInvalid},
		{"y0 NaN", []float64{1, math.NaN(), 0, 1}, []float64{1}, 1, 4, systems.ErrInvalid},
		{"short y0", []float64{1, 0, 0}, []float64{1}, 1, 4, systems.ErrInvalid},
		{"long p", []float64{1, 0, 0, 1}, []float64{1, 2}, 1, 4, systems.ErrInvalid},
		{"short dst", []float64{1, 0, 0, 1}, []float64{1}, 1, 3, systems.ErrInvalid},
	}
	for _, c := range cases {
		dst := make([]float64, c.dst)
		for i := range dst {
			dst[i] = -3
		}
		err := systems.KeplerExact(c.y0, c.p, c.tt, dst)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: error = %v, want one wrapping %v", c.name, err, c.want)
		}
		for i, v := range dst {
			if v != -3 {
				t.Errorf("%s: dst[%d] written on error", c.name, i)
			}
		}
	}
}

func TestHaloFixture(t *testing.T) {
	pr := systems.Halo()
	// applications.md §A.7 prints 12 decimals; the printed values are
	// rounded, so they agree to 5e-13, inside 1e-12.
	const fixTol = 1e-12
	if e := systems.HaloEnergy(pr.Y0, pr.P); math.Abs(e-0.253642674902) > fixTol {
		t.Errorf("E = %.15g, want 0.253642674902", e)
	}
	rE, vE := systems.HaloScales(pr.Y0, pr.P)
	if math.Abs(rE-1.273097263513) > fixTol {
		t.Errorf("r_E = %.15g, want 1.273097263513", rE)
	}
	if math.Abs(vE-1.930326701538) > fixTol {
		t.Errorf("v_E = %.15g, want 1.930326701538", vE)
	}
	// L_z = x·vy − y·vx = 1·0.6 − 0·0.1, exactly.
	if lz := systems.HaloLz(pr.Y0, pr.P); lz != 0.6 {
		t.Errorf("L_z = %.17g, want 0.6", lz)
	}
	if !math.IsNaN(systems.HaloPotential([]float64{1, 2}, pr.P)) || !math.IsNaN(systems.HaloEnergy(pr.Y0[:5], pr.P)) ||
		!math.IsNaN(systems.HaloLz(nil, nil)) {
		t.Error("short slices should give NaN")
	}
	if r, v := systems.HaloScales(pr.Y0, pr.P[:2]); !math.IsNaN(r) || !math.IsNaN(v) {
		t.Error("HaloScales with short p should give NaN")
	}
}

func TestHaloForceIsMinusGradient(t *testing.T) {
	pr := systems.Halo()
	states := [][]float64{
		pr.Y0,
		{-0.4, 0.9, -1.3, 0.2, -0.1, 0.3},
		{0.05, -0.02, 0.01, 0, 0, 0}, // inside the core
	}
	params := [][]float64{pr.P, {1.3, 0.9, 0.5}}
	// Central difference with δ = 1e-5: truncation δ²/6·|∂³Φ| plus
	// rounding eps·|Φ|/δ ≈ 1e-11. Outside the core |∂³Φ| = O(vc²/r³) ≲ 10,
	// so ≲ 2e-10: tol 1e-9. Inside it (|x| ≪ rc = 0.2, q = 0.7) |∂³Φ|
	// reaches O(vc²/(rc³·q⁶)) ≈ 1e3, so ~2e-8: tol 1e-7.
	const delta = 1e-5
	for si, y := range states {
		for pi, p := range params {
			tol := 1e-9
			if si == 2 {
				tol = 1e-7
			}
			dy := make([]float64, 6)
			pr.F(0, y, p, dy)
			for k := range 3 {
				if dy[k] != y[3+k] {
					t.Errorf("state %d params %d: dy[%d] = %g, want v = %g", si, pi, k, dy[k], y[3+k])
				}
				xp := append([]float64(nil), y[:3]...)
				xm := append([]float64(nil), y[:3]...)
				xp[k] += delta
				xm[k] -= delta
				grad := (systems.HaloPotential(xp, p) - systems.HaloPotential(xm, p)) / (2 * delta)
				if d := math.Abs(dy[3+k] + grad); d > tol {
					t.Errorf("state %d params %d: dy[%d] = %.12g, −∂Φ/∂x_%d ≈ %.12g (diff %g > %g)", si, pi, 3+k, dy[3+k], k, -grad, d, tol)
				}
			}
		}
	}
}

// Each built-in declares the derivative programs its Programs sets
// (Problem.Offers), so that asking what it can do builds nothing; the
// declaration must be what Programs really sets.
func TestOffersMatchPrograms(t *testing.T) {
	for _, pr := range systems.All() {
		if pr.Offers == 0 || pr.Programs == nil {
			t.Errorf("%s: Offers = %v, Programs set: %v", pr.Name, pr.Offers, pr.Programs != nil)
			continue
		}
		if got := pr.Programs().Set(); got != pr.Offers {
			t.Errorf("%s: Programs sets %v, Offers declares %v", pr.Name, got, pr.Offers)
		}
		if got := pr.ProgramSet(); got != pr.Offers {
			t.Errorf("%s: ProgramSet() = %v, want %v", pr.Name, got, pr.Offers)
		}
	}
}
