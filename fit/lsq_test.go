package fit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"
)

// linearCase is a linear least-squares problem r(θ) = y − X·θ whose
// solution and covariance are known exactly: the data are y = X·θ* +
// C·u with Xᵀu = 0, so that XᵀC⁻¹(y − Xθ*) = Xᵀu = 0 and the weighted
// least-squares solution is θ* itself, with χ²_min = uᵀCu and
// covariance (XᵀC⁻¹X)⁻¹. Every entry of X, C, u and θ* is a small
// dyadic rational, so y is exact in floating point, and the test's
// reference values are computed in exact rational arithmetic
// (math/big): the closed form, not a second floating-point algorithm.
type linearCase struct {
	name  string
	k, m  int
	x     []float64 // m×k: column c is t^c, t = 0 … m−1
	u     []float64 // Xᵀu = 0: a k-th difference
	c     []float64 // m×m covariance
	noise Gaussian
	theta []float64
}

// newLinearCase builds the polynomial design of degree k−1 on t = 0 …
// m−1 with u = (k-th difference stencil), which annihilates every
// polynomial of degree < k, and the covariance c.
func newLinearCase(name string, k, m int, c []float64, noise Gaussian) linearCase {
	lc := linearCase{name: name, k: k, m: m, c: c, noise: noise}
	lc.x = make([]float64, m*k)
	for i := range m {
		v := 1.0
		for j := range k {
			lc.x[i*k+j] = v
			v *= float64(i)
		}
	}
	// k-th difference: binomial coefficients with alternating signs,
	// placed at the start and (shifted) at the end, so u has two
	// independent parts.
	lc.u = make([]float64, m)
	b := 1.0
	for j := 0; j <= k; j++ {
		s := b
		if j%2 == 1 {
			s = -s
		}
		lc.u[j] += s
		lc.u[m-1-k+j] += 0.5 * s
		b = b * float64(k-j) / float64(j+1)
	}
	for j := range k {
		lc.theta = append(lc.theta, 1.5-0.25*float64(j))
	}
	return lc
}

// ar1 returns the covariance s²·ρ^|i−j| with ρ = 1/2 (a correlated
// noise, every entry a power of 2 times s²).
func ar1(m int, s float64) []float64 {
	c := make([]float64, m*m)
	for i := range m {
		for j := range m {
			c[i*m+j] = s * s * math.Pow(0.5, math.Abs(float64(i-j)))
		}
	}
	return c
}

func diagCov(v []float64) []float64 {
	m := len(v)
	c := make([]float64, m*m)
	for i, x := range v {
		c[i*m+i] = x
	}
	return c
}

// data returns y = X·θ* + C·u (exact: every product and sum is of
// dyadic rationals with few bits).
func (lc linearCase) data() []float64 {
	y := make([]float64, lc.m)
	for i := range lc.m {
		for j := range lc.k {
			y[i] += lc.x[i*lc.k+j] * lc.theta[j]
		}
		for j := range lc.m {
			y[i] += lc.c[i*lc.m+j] * lc.u[j]
		}
	}
	return y
}

// exact returns χ²_min = uᵀCu and the covariance (XᵀC⁻¹X)⁻¹ in exact
// rational arithmetic.
func (lc linearCase) exact() (float64, []float64) {
	rat := func(v float64) *big.Rat { return new(big.Rat).SetFloat64(v) }
	m, k := lc.m, lc.k
	chi2 := new(big.Rat)
	for i := range m {
		for j := range m {
			chi2.Add(chi2, new(big.Rat).Mul(rat(lc.u[i]), new(big.Rat).Mul(rat(lc.c[i*m+j]), rat(lc.u[j]))))
		}
	}
	cinv := invRat(m, func(i, j int) *big.Rat { return rat(lc.c[i*m+j]) })
	f := func(a, b int) *big.Rat {
		s := new(big.Rat)
		for i := range m {
			for j := range m {
				s.Add(s, new(big.Rat).Mul(rat(lc.x[i*k+a]), new(big.Rat).Mul(cinv[i*m+j], rat(lc.x[j*k+b]))))
			}
		}
		return s
	}
	cov := invRat(k, f)
	out := make([]float64, k*k)
	for i, v := range cov {
		out[i], _ = v.Float64()
	}
	x, _ := chi2.Float64()
	return x, out
}

// invRat inverts the n×n matrix a(i, j) by Gauss–Jordan elimination in
// exact rational arithmetic.
func invRat(n int, a func(i, j int) *big.Rat) []*big.Rat {
	w := make([][]*big.Rat, n)
	for i := range n {
		w[i] = make([]*big.Rat, 2*n)
		for j := range n {
			w[i][j] = a(i, j)
			w[i][n+j] = new(big.Rat)
			if i == j {
				w[i][n+j].SetInt64(1)
			}
		}
	}
	for col := range n {
		p := col
		for w[p][col].Sign() == 0 {
			p++
		}
		w[col], w[p] = w[p], w[col]
		inv := new(big.Rat).Inv(w[col][col])
		for j := range 2 * n {
			w[col][j].Mul(w[col][j], inv)
		}
		for i := range n {
			if i == col || w[i][col].Sign() == 0 {
				continue
			}
			f := new(big.Rat).Set(w[i][col])
			for j := range 2 * n {
				w[i][j].Sub(w[i][j], new(big.Rat).Mul(f, w[col][j]))
			}
		}
	}
	out := make([]*big.Rat, n*n)
	for i := range n {
		for j := range n {
			out[i*n+j] = w[i][n+j]
		}
	}
	return out
}

// linearEval is the residuals y − X·θ and Jacobian −X of every group.
func linearEval(x []float64, ys [][]float64, k int) func(context.Context, *LSQEval) error {
	return func(_ context.Context, e *LSQEval) error {
		for g, y := range ys {
			if !e.Active[g] {
				continue
			}
			th, r, j := e.Point(g), e.Residual(g), e.Jacobian(g)
			for i := range y {
				s := y[i]
				for c := range k {
					s -= x[i*k+c] * th[c]
					j[i*k+c] = -x[i*k+c]
				}
				r[i] = s
			}
		}
		return nil
	}
}

// The linear problem with a correlated (and a diagonal, and a scalar)
// noise model, for k = 1, 2, 3 (the closed-form solves and Cholesky):
// Gauss–Newton lands on the solution in one step, whatever the start,
// and stops after the second, whose step is rounding. The solution θ*,
// χ²_min and the covariance are matched to 1e-12 relative. Why that is
// the right size: the computed normal equations are those of the
// whitened problem to a few ulps, so the solution and F⁻¹ carry
// relative errors of about cond(F)·ε, with cond(F) ≤ 1.7e3 for these
// designs (polynomials of degree ≤ 2 on 7 points): 4e-13 at most (the
// errors measured are ≤ 7e-15). θ* has entries of order 1, and the
// covariance relative to C_00, the intercept's variance.
func TestLSQLinearClosedForm(t *testing.T) {
	const m = 7
	w := []float64{4, 2, 1, 0.5, 0.25, 2, 8} // precisions: C = σ²·diag(1/w)
	const sigma = 0.5
	cw := make([]float64, m)
	for i, v := range w {
		cw[i] = sigma * sigma / v
	}
	var cases []linearCase
	for k := 1; k <= 3; k++ {
		cases = append(cases,
			newLinearCase(fmt.Sprintf("k=%d/ar1", k), k, m, ar1(m, 0.25), Gaussian{Covariance: ar1(m, 0.25)}),
			newLinearCase(fmt.Sprintf("k=%d/weights", k), k, m, diagCov(cw), Gaussian{Sigma: sigma, Weights: w}),
			newLinearCase(fmt.Sprintf("k=%d/sigma", k), k, m, diagCov([]float64{4, 4, 4, 4, 4, 4, 4}), Gaussian{Sigma: 2}))
	}
	for _, lc := range cases {
		t.Run(lc.name, func(t *testing.T) {
			y := lc.data()
			// Two groups, the second with its data offset by X·δ: the
			// same problem with solution θ* + δ.
			y2 := append([]float64(nil), y...)
			delta := []float64{-0.5, 0.125, 0.0625}[:lc.k]
			for i := range m {
				for c := range lc.k {
					y2[i] += lc.x[i*lc.k+c] * delta[c]
				}
			}
			names := []string{"a", "b", "c"}[:lc.k]
			rep, err := RunLSQ(context.Background(), &LSQ{Params: names, Groups: 2, Residuals: m,
				Start: make([]float64, lc.k), Noise: lc.noise, Eval: linearEval(lc.x, [][]float64{y, y2}, lc.k)})
			if err != nil {
				t.Fatal(err)
			}
			chi2, cov := lc.exact()
			for g, gr := range rep.Groups {
				if gr.Status != Converged || gr.Iterations != 2 || gr.Evaluations != 2 {
					t.Fatalf("group %d: %v after %d iterations, %d evaluations: want Converged after 2 and 2", g, gr.Status, gr.Iterations, gr.Evaluations)
				}
				for c := range lc.k {
					want := lc.theta[c]
					if g == 1 {
						want += delta[c]
					}
					if e := math.Abs(gr.Estimate[c]-want) / math.Abs(want); e > 1e-12 {
						t.Errorf("group %d: θ[%d] = %.17g, closed form %g: relative error %.2g", g, c, gr.Estimate[c], want, e)
					}
				}
				if e := relErr(gr.Chi2, chi2); e > 1e-12 {
					t.Errorf("group %d: χ² = %.17g, closed form uᵀCu = %.17g: relative error %.2g", g, gr.Chi2, chi2, e)
				}
				if gr.FisherErr != nil {
					t.Fatal(gr.FisherErr)
				}
				for i, want := range cov {
					if e := math.Abs(gr.Covariance[i]-want) / math.Abs(cov[0]); e > 1e-12 {
						t.Errorf("group %d: covariance[%d] = %.17g, closed form %.17g: error %.2g of C_00", g, i, gr.Covariance[i], want, e)
					}
				}
				for c := range lc.k {
					if e := relErr(gr.StdErr[c], math.Sqrt(cov[c*lc.k+c])); e > 1e-12 {
						t.Errorf("group %d: standard error %d = %.17g, closed form %.17g", g, c, gr.StdErr[c], math.Sqrt(cov[c*lc.k+c]))
					}
				}
			}
		})
	}
}

// expCase is the nonlinear model μ_i = a·e^(b·t_i), t = 0 … 4, with
// data y = μ(θ*) + e, e_i = s·v_i·e^(−b*·t_i) and v = (1, −2, 1, 0, 0)
// (a second difference, so v ⊥ 1 and v ⊥ t): then Jᵀe = 0 at θ* (the
// Jacobian's columns are e^(b t) and a·t·e^(b t)), so θ* is a stationary
// point of χ², and a minimum for the small s used (the Hessian JᵀJ −
// Σ e_i ∂²μ_i is JᵀJ plus O(s)). The residuals there are nonzero:
// χ²_min = Σ e_i²/σ².
type expCase struct{ a, b, s float64 }

func (c expCase) data() []float64 {
	v := []float64{1, -2, 1, 0, 0}
	y := make([]float64, 5)
	for i := range y {
		t := float64(i)
		y[i] = c.a*math.Exp(c.b*t) + c.s*v[i]*math.Exp(-c.b*t)
	}
	return y
}

func expEval(ys [][]float64) func(context.Context, *LSQEval) error {
	return func(_ context.Context, e *LSQEval) error {
		for g, y := range ys {
			if !e.Active[g] {
				continue
			}
			th, r, j := e.Point(g), e.Residual(g), e.Jacobian(g)
			for i := range y {
				t := float64(i)
				ex := math.Exp(th[1] * t)
				r[i] = y[i] - th[0]*ex
				j[2*i], j[2*i+1] = -ex, -th[0]*t*ex
			}
		}
		return nil
	}
}

// The nonlinear model with a known minimum, by Gauss–Newton from near
// starts and by Levenberg–Marquardt from far ones (where undamped GN
// overshoots), three groups at once: each converges to its θ* to 1e-10
// relative (the step tolerance 1e-12 on entries of order 1, and
// cond(JᵀJ) ≈ 1e3 amplifying the rounding of the stationarity
// condition: about 1e-13), with χ² at the minimum as the closed form.
// Rosenbrock's residuals (10(θ1 − θ0²), 1 − θ0), minimum (1, 1) with
// χ² = 0, from the classic start (−1.2, 1) are the fourth and fifth
// groups' problem (they need no data).
func TestLSQNonlinearKnownMinimum(t *testing.T) {
	cases := []expCase{{2, -0.3, 1e-3}, {0.5, 0.2, -2e-3}, {1, -1, 5e-4}}
	var ys [][]float64
	for _, c := range cases {
		ys = append(ys, c.data())
	}
	const sigma = 1e-2
	for _, tc := range []struct {
		name    string
		damping float64
		start   func(c expCase) []float64
	}{
		{"gauss-newton", 0, func(c expCase) []float64 { return []float64{c.a * 1.05, c.b * 0.95} }},
		{"levenberg-marquardt", 1e-3, func(c expCase) []float64 { return []float64{1, 0.5} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var start []float64
			for _, c := range cases {
				start = append(start, tc.start(c)...)
			}
			start = append(start, -1.2, 1, -1.2, 1)
			eval := func(ctx context.Context, e *LSQEval) error {
				if err := expEval(ys)(ctx, e); err != nil {
					return err
				}
				for g := 3; g < 5; g++ {
					if !e.Active[g] {
						continue
					}
					th, r, j := e.Point(g), e.Residual(g), e.Jacobian(g)
					clear(r)
					clear(j)
					r[0], r[1] = 10*(th[1]-th[0]*th[0]), 1-th[0]
					j[0], j[1], j[2], j[3] = -20*th[0], 10, -1, 0
				}
				return nil
			}
			rep, err := RunLSQ(context.Background(), &LSQ{Params: []string{"a", "b"}, Groups: 5, Residuals: 5,
				Start: start, Noise: Gaussian{Sigma: sigma}, Eval: eval, Damping: tc.damping, StepTol: []float64{1e-12, 1e-12}})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Method != tc.name {
				t.Errorf("method %q", rep.Method)
			}
			for g, gr := range rep.Groups {
				want, chi2 := []float64{1, 1}, 0.0
				if g < 3 {
					c := cases[g]
					want = []float64{c.a, c.b}
					for i, v := range []float64{1, -2, 1, 0, 0} {
						e := c.s * v * math.Exp(-c.b*float64(i))
						chi2 += e * e / (sigma * sigma)
					}
				}
				if gr.Status != Converged {
					t.Errorf("group %d: %v (%v) after %d iterations", g, gr.Status, gr.Err, gr.Iterations)
					continue
				}
				for c := range 2 {
					if e := relErr(gr.Estimate[c], want[c]); e > 1e-10 {
						t.Errorf("group %d: θ[%d] = %.15g, minimum %g: relative error %.2g", g, c, gr.Estimate[c], want[c], e)
					}
				}
				// Rosenbrock: χ² is at At, the point the last step (below
				// 1e-12) was computed from, so r ≈ J·h ≤ 22·1e-12 and χ² ≤
				// (22e-12/σ)² ≈ 5e-18.
				if g < 3 && relErr(gr.Chi2, chi2) > 1e-8 || g >= 3 && gr.Chi2 > 5e-18 {
					t.Errorf("group %d: χ² = %.15g, at the minimum %.15g", g, gr.Chi2, chi2)
				}
				t.Logf("group %d: %d iterations, %d evaluations, θ = %v, χ² = %.6g", g, gr.Iterations, gr.Evaluations, gr.Estimate, gr.Chi2)
			}
		})
	}
}

// A group whose residuals are NaN, one that Eval marks as failed, and
// one whose normal equations are singular stop with their own status;
// the other groups' results are those they give alone, bit for bit.
func TestLSQGroupFailures(t *testing.T) {
	c := expCase{2, -0.3, 1e-3}
	y := c.data()
	run := func(groups int, bad func(g int, e *LSQEval)) *LSQReport {
		t.Helper()
		ys := make([][]float64, groups)
		for g := range ys {
			ys[g] = y
		}
		rep, err := RunLSQ(context.Background(), &LSQ{Params: []string{"a", "b"}, Groups: groups, Residuals: 5,
			Start: []float64{2.1, -0.28}, Eval: func(ctx context.Context, e *LSQEval) error {
				if err := expEval(ys)(ctx, e); err != nil {
					return err
				}
				for g := range groups {
					if e.Active[g] && bad != nil {
						bad(g, e)
					}
				}
				return nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	alone := run(1, nil).Groups[0]
	rep := run(5, func(g int, e *LSQEval) {
		switch {
		case g == 1 && e.Evaluation == 2:
			e.Residual(g)[3] = math.NaN()
		case g == 2 && e.Evaluation == 1:
			e.Fail(g, errors.New("the solve of trajectory 7 failed"))
		case g == 3:
			for i := range 5 {
				e.Jacobian(g)[2*i+1] = 0 // b does not enter
			}
		}
	})
	want := []struct {
		s   Status
		err string
	}{{Converged, ""}, {Failed, "group 1: residual 3 = NaN"}, {Failed, "group 2: the solve of trajectory 7 failed"},
		{Stalled, "singular"}, {Converged, ""}}
	for g, gr := range rep.Groups {
		if gr.Status != want[g].s || (want[g].err == "") != (gr.Err == nil) || gr.Err != nil && !strings.Contains(gr.Err.Error(), want[g].err) {
			t.Errorf("group %d: %v, %v: want %v with %q", g, gr.Status, gr.Err, want[g].s, want[g].err)
		}
	}
	for _, g := range []int{0, 4} {
		gr := rep.Groups[g]
		if gr.Iterations != alone.Iterations || gr.Chi2 != alone.Chi2 || gr.Estimate[0] != alone.Estimate[0] || gr.Estimate[1] != alone.Estimate[1] {
			t.Errorf("group %d: %+v, alone %+v", g, gr, alone)
		}
	}
	if g := rep.Groups[1]; g.Iterations != 1 || g.Chi2 != g.Chi2 || g.At == nil || g.Fisher == nil {
		t.Errorf("group 1 (NaN at its second point): %+v: want its first point's χ² and Fisher information", g)
	}
	if g := rep.Groups[2]; g.At != nil || !math.IsNaN(g.Chi2) || g.FisherErr == nil {
		t.Errorf("group 2 (failed at its start): %+v", g)
	}
	if g := rep.Groups[3]; g.Fisher == nil || g.Covariance != nil || g.FisherErr == nil {
		t.Errorf("group 3 (singular): %+v", g)
	}
	// MaxIterations, and cancellation from inside Eval.
	rep, err := RunLSQ(context.Background(), &LSQ{Params: []string{"a", "b"}, Groups: 1, Residuals: 5,
		Start: []float64{2.1, -0.28}, Eval: expEval([][]float64{y}), MaxIter: 1})
	if err != nil || rep.Groups[0].Status != MaxIterations || rep.Groups[0].Iterations != 1 {
		t.Errorf("MaxIter 1: %v, %+v", err, rep)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rep, err = RunLSQ(ctx, &LSQ{Params: []string{"a", "b"}, Groups: 2, Residuals: 5,
		Start: []float64{2.1, -0.28}, Eval: func(ctx context.Context, e *LSQEval) error {
			if e.Evaluation == 2 {
				cancel()
			}
			return expEval([][]float64{y, y})(ctx, e)
		}})
	if !errors.Is(err, context.Canceled) || rep == nil || rep.Groups[1].Status != Cancelled || rep.Evaluations != 2 {
		t.Errorf("cancelled: %v, %+v", err, rep)
	}
	// An error of Eval ends the run, with the report so far.
	boom := errors.New("the ensemble solve failed")
	rep, err = RunLSQ(context.Background(), &LSQ{Params: []string{"a"}, Groups: 1, Residuals: 1, Start: []float64{0},
		Eval: func(context.Context, *LSQEval) error { return boom }})
	if !errors.Is(err, boom) || rep == nil || rep.Groups[0].Status != Failed {
		t.Errorf("Eval's error: %v, %+v", err, rep)
	}
}

// Levenberg–Marquardt steps back from a trial whose residuals are NaN
// (here: b > 0.5, outside the model's domain) instead of failing.
func TestLSQDampedStepsBack(t *testing.T) {
	c := expCase{2, -0.3, 1e-3}
	y := c.data()
	rep, err := RunLSQ(context.Background(), &LSQ{Params: []string{"a", "b"}, Groups: 1, Residuals: 5,
		Start: []float64{0.5, 0.4}, Damping: 1e-6, StepTol: []float64{1e-12, 1e-12},
		Eval: func(ctx context.Context, e *LSQEval) error {
			if err := expEval([][]float64{y})(ctx, e); err != nil {
				return err
			}
			if e.Point(0)[1] > 0.5 {
				e.Residual(0)[0] = math.NaN()
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	g := rep.Groups[0]
	if g.Status != Converged || relErr(g.Estimate[0], c.a) > 1e-10 || relErr(g.Estimate[1], c.b) > 1e-10 {
		t.Errorf("%v (%v), estimate %v", g.Status, g.Err, g.Estimate)
	}
}

// Bad specs get an error wrapping ErrInput that names the field and the
// rule broken, and no report.
func TestLSQBadInputs(t *testing.T) {
	valid := func() *LSQ {
		return &LSQ{Params: []string{"a", "b"}, Groups: 2, Residuals: 3, Start: []float64{1, 2},
			Eval: func(context.Context, *LSQEval) error { return nil }}
	}
	spd := []float64{2, 1, 0, 1, 2, 0, 0, 0, 1}
	for _, c := range []struct {
		name string
		edit func(*LSQ)
		want string
	}{
		{"no params", func(p *LSQ) { p.Params = nil }, "LSQ.Params is empty"},
		{"groups", func(p *LSQ) { p.Groups = 0 }, "LSQ.Groups = 0"},
		{"residuals", func(p *LSQ) { p.Residuals = 0 }, "LSQ.Residuals = 0"},
		{"overflow", func(p *LSQ) { p.Groups, p.Residuals = math.MaxInt/2, 4 }, "overflows an int"},
		{"eval", func(p *LSQ) { p.Eval = nil }, "LSQ.Eval is nil"},
		{"start length", func(p *LSQ) { p.Start = []float64{1, 2, 3} }, "LSQ.Start has length 3: want k = 2 (shared) or G·k = 4"},
		{"start NaN", func(p *LSQ) { p.Start = []float64{1, math.NaN()} }, "LSQ.Start[1] = NaN"},
		{"damping", func(p *LSQ) { p.Damping = -1 }, "LSQ.Damping = -1"},
		{"max iter", func(p *LSQ) { p.MaxIter = -1 }, "LSQ.MaxIter = -1"},
		{"step tol length", func(p *LSQ) { p.StepTol = []float64{1} }, "LSQ.StepTol has length 1"},
		{"step tol zero", func(p *LSQ) { p.StepTol = []float64{1e-10, 0} }, "LSQ.StepTol[1] = 0: must be > 0"},
		{"step tol all inf", func(p *LSQ) { p.StepTol = []float64{math.Inf(1), math.Inf(1)} }, "every entry is +Inf"},
		{"sigma", func(p *LSQ) { p.Noise.Sigma = -2 }, "LSQ.Noise.Sigma = -2"},
		{"both", func(p *LSQ) { p.Noise = Gaussian{Weights: []float64{1, 1, 1}, Covariance: spd} }, "both Weights and Covariance"},
		{"weights length", func(p *LSQ) { p.Noise.Weights = []float64{1, 1} }, "LSQ.Noise.Weights has length 2: want m = 3"},
		{"weights negative", func(p *LSQ) { p.Noise.Weights = []float64{1, -1, 1} }, "LSQ.Noise.Weights[1] = -1"},
		{"covariance length", func(p *LSQ) { p.Noise.Covariance = spd[:4] }, "LSQ.Noise.Covariance has length 4: want m·m = 9"},
		{"covariance NaN", func(p *LSQ) { p.Noise.Covariance = []float64{1, 0, 0, 0, math.NaN(), 0, 0, 0, 1} }, "LSQ.Noise.Covariance[1][1] = NaN"},
		{"covariance asymmetric", func(p *LSQ) { p.Noise.Covariance = []float64{2, 1, 0, 0.5, 2, 0, 0, 0, 1} }, "not symmetric: [1][0] = 0.5, [0][1] = 1"},
		{"covariance not SPD", func(p *LSQ) { p.Noise.Covariance = []float64{1, 2, 0, 2, 1, 0, 0, 0, 1} }, "not positive definite: the Cholesky factorisation fails at pivot 1"},
		{"covariance zero", func(p *LSQ) { p.Noise.Covariance = make([]float64, 9) }, "fails at pivot 0"},
		{"sigma with covariance", func(p *LSQ) { p.Noise = Gaussian{Sigma: 2, Covariance: spd} }, "LSQ.Noise.Sigma = 2 with Covariance"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := valid()
			c.edit(p)
			rep, err := RunLSQ(context.Background(), p)
			if err == nil || !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v: want ErrInput with %q", err, c.want)
			}
			if rep != nil {
				t.Errorf("a report for a bad spec: %+v", rep)
			}
		})
	}
	if _, err := RunLSQ(context.Background(), nil); !errors.Is(err, ErrInput) {
		t.Errorf("nil LSQ: %v", err)
	}
	//lint:ignore SA1012 a nil context is the bad input tested
	if _, err := RunLSQ(nil, valid()); !errors.Is(err, ErrInput) { //nolint:staticcheck
		t.Errorf("nil context: %v", err)
	}
	if _, err := NewWhitener(Gaussian{Covariance: []float64{1, 2, 2, 1}}, 2); err == nil || !strings.Contains(err.Error(), "Gaussian.Covariance is not positive definite") {
		t.Errorf("NewWhitener: %v", err)
	}
}

// The whitener of each model: Whiten inverts Sample's noise (L⁻¹·(L·z)
// = z to rounding: forward substitution is backward stable, and these
// L are well conditioned), and χ² of a residual equals rᵀC⁻¹r computed
// in exact rational arithmetic.
func TestWhitener(t *testing.T) {
	const m = 5
	for _, c := range []struct {
		name string
		g    Gaussian
		cov  []float64
	}{
		{"sigma", Gaussian{Sigma: 0.5}, diagCov([]float64{0.25, 0.25, 0.25, 0.25, 0.25})},
		{"weights", Gaussian{Sigma: 2, Weights: []float64{1, 4, 0.25, 2, 8}}, diagCov([]float64{4, 1, 16, 2, 0.5})},
		{"covariance", Gaussian{Covariance: ar1(m, 2)}, ar1(m, 2)},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, err := NewWhitener(c.g, m)
			if err != nil {
				t.Fatal(err)
			}
			if w.Len() != m {
				t.Errorf("Len %d", w.Len())
			}
			z := []float64{0.3, -1.2, 2.5, 0.01, -0.7}
			x := w.Whiten(nil, w.Sample(nil, make([]float64, m), z))
			for i := range z {
				if math.Abs(x[i]-z[i]) > 1e-15*4 {
					t.Errorf("Whiten(Sample(z))[%d] = %.17g, z = %.17g", i, x[i], z[i])
				}
			}
			r := []float64{1, -0.5, 0.25, 2, -1}
			rat := func(v float64) *big.Rat { return new(big.Rat).SetFloat64(v) }
			inv := invRat(m, func(i, j int) *big.Rat { return rat(c.cov[i*m+j]) })
			want := new(big.Rat)
			for i := range m {
				for j := range m {
					want.Add(want, new(big.Rat).Mul(rat(r[i]), new(big.Rat).Mul(inv[i*m+j], rat(r[j]))))
				}
			}
			wf, _ := want.Float64()
			if e := relErr(w.Chi2(r), wf); e > 1e-14 {
				t.Errorf("χ² = %.17g, rᵀC⁻¹r = %.17g: relative error %.2g", w.Chi2(r), wf, e)
			}
		})
	}
}
