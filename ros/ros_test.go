package ros

import (
	"math"
	"testing"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
)

func fill(v float64, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// linear returns y' = λ·y with its Jacobian.
func linear(lambda float64) (ode.Func, func(t float64, y, p, j []float64)) {
	return func(_ float64, y, _, dy []float64) { dy[0] = lambda * y[0] },
		func(_ float64, _, _, j []float64) { j[0] = lambda }
}

func newSolver(t *testing.T, rt *method.Rosenbrock, f ode.Func, jac func(t float64, y, p, j []float64), dim int, h0 float64) *Solver {
	t.Helper()
	sv, err := New(Config{Tableau: rt, F: f, JacY: jac, Dim: dim, RTol: fill(1e-8, dim), ATol: fill(1e-10, dim),
		H0: h0, MaxSteps: 100000, Controller: control.DefaultPI(rt.EstimateOrder(), 0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	return sv
}

// A first step whose W = I − hγJ is singular (λ = 1/(γ·h0)) is rejected
// and retried smaller; the solve then succeeds and matches e^{λt} to
// 1e-5 relative: the solution grows (e^{1.7}), so the ≈ rtol = 1e-8 local
// errors of the hundreds of steps a second-order method takes are
// amplified, up to ≈ 100·rtol observed for Rosenbrock23.
func TestSingularWRecovers(t *testing.T) {
	for _, rt := range method.AllRosenbrock() {
		h0 := 0.1
		lambda := 1 / (rt.Gamma * h0)
		f, jac := linear(lambda)
		sv := newSolver(t, rt, f, jac, 1, h0)
		out := &ivp.Output{Y: make([]float64, 1)}
		sv.Solve(&ivp.Trajectory{T0: 0, T1: 0.05, Y0: []float64{1}}, out, nil)
		if out.Status != ode.Success || out.Stats.Rejected < 1 {
			t.Errorf("%s: status %v with %d rejections", rt.Name, out.Status, out.Stats.Rejected)
		}
		if want := math.Exp(lambda * 0.05); math.Abs(out.Y[0]-want) > 1e-5*want {
			t.Errorf("%s: y = %.10g, want %.10g", rt.Name, out.Y[0], want)
		}
	}
}

// A right-hand side that turns NaN ends the trajectory with NonFinite.
func TestNonFiniteStatus(t *testing.T) {
	f := func(t float64, y, _, dy []float64) {
		dy[0] = -y[0]
		if t > 0.5 {
			dy[0] = math.NaN()
		}
	}
	jac := func(_ float64, _, _, j []float64) { j[0] = -1 }
	sv := newSolver(t, method.Rodas5P, f, jac, 1, 0)
	out := &ivp.Output{Y: make([]float64, 1)}
	sv.Solve(&ivp.Trajectory{T0: 0, T1: 1, Y0: []float64{1}}, out, nil)
	if out.Status != ode.NonFinite || out.T > 0.5 {
		t.Errorf("status %v at t = %g", out.Status, out.T)
	}
}

// A whole solve with save times allocates nothing.
func TestSolveDoesNotAllocate(t *testing.T) {
	f := func(_ float64, y, _, dy []float64) { dy[0], dy[1] = y[1], 1000*((1-y[0]*y[0])*y[1]-y[0]) }
	jac := func(_ float64, y, _, j []float64) {
		j[0], j[1] = 0, 1
		j[2], j[3] = 1000*(-2*y[0]*y[1]-1), 1000*(1-y[0]*y[0])
	}
	for _, rt := range method.AllRosenbrock() {
		sv := newSolver(t, rt, f, jac, 2, 0)
		tr := &ivp.Trajectory{T0: 0, T1: 1, Y0: []float64{2, 0}, Save: []float64{0.3, 0.7}}
		out := &ivp.Output{Y: make([]float64, 2), Saved: make([]float64, 4)}
		if a := testing.AllocsPerRun(5, func() { sv.Solve(tr, out, nil) }); a != 0 || out.Status != ode.Success {
			t.Errorf("%s: %v allocations, status %v", rt.Name, a, out.Status)
		}
	}
}

// lu solves a pivoting-demanding system, and its transpose, exactly (to
// rounding: the residual is a few ulps of the right-hand side).
func TestLU(t *testing.T) {
	f := newLU(3)
	orig := []float64{0, 2, 1, 1, 1, 1, 4, -1, 3}
	copy(f.a, orig)
	if !f.factor() {
		t.Fatal("nonsingular matrix reported singular")
	}
	b := []float64{3, 6, 9}
	x := append([]float64(nil), b...)
	f.solve(x)
	for i := range 3 {
		var s float64
		for j := range 3 {
			s += orig[i*3+j] * x[j]
		}
		if math.Abs(s-b[i]) > 1e-14*9 {
			t.Errorf("row %d: A·x = %v, want %v", i, s, b[i])
		}
	}
	// Wᵀ·x = b as well.
	xt := append([]float64(nil), b...)
	f.solveT(xt)
	for j := range 3 {
		var s float64
		for i := range 3 {
			s += orig[i*3+j] * xt[i]
		}
		if math.Abs(s-b[j]) > 1e-14*9 {
			t.Errorf("column %d: Aᵀ·x = %v, want %v", j, s, b[j])
		}
	}
	sing := newLU(2)
	copy(sing.a, []float64{1, 2, 2, 4})
	if sing.factor() {
		t.Error("singular matrix factored")
	}
}

// With sensitivity columns the solve still allocates nothing.
func TestSensSolveDoesNotAllocate(t *testing.T) {
	// y' = −k·y² with one parameter k: f, J, J_p and the second
	// derivatives by hand.
	f := func(_ float64, y, p, dy []float64) { dy[0] = -p[0] * y[0] * y[0] }
	jac := func(_ float64, y, p, j []float64) { j[0] = -2 * p[0] * y[0] }
	jvp := func(_ float64, y, p, v, w, out []float64) { out[0] = -2*p[0]*y[0]*v[0] - y[0]*y[0]*w[0] }
	jvpJac := func(_ float64, y, p, v, w, j []float64) { j[0] = -2*p[0]*v[0] - 2*y[0]*w[0] }
	for _, rt := range method.AllRosenbrock() {
		sv, err := New(Config{Tableau: rt, F: f, JacY: jac, Dim: 1, RTol: fill(1e-8, 1), ATol: fill(1e-10, 1), MaxSteps: 100000,
			Controller: control.DefaultPI(rt.EstimateOrder(), 0, 0), NS: 1, JVP: jvp, JVPJacY: jvpJac, SensW: [][]float64{{1}}})
		if err != nil {
			t.Fatal(err)
		}
		tr := &ivp.Trajectory{T0: 0, T1: 2, Y0: []float64{1, 0}, P: []float64{0.5}, Save: []float64{1}}
		out := &ivp.Output{Y: make([]float64, 2), Saved: make([]float64, 2)}
		if a := testing.AllocsPerRun(5, func() { sv.Solve(tr, out, nil) }); a != 0 || out.Status != ode.Success {
			t.Errorf("%s: %v allocations, status %v", rt.Name, a, out.Status)
		}
		// y = 1/(1 + k t): ∂y/∂k = −t/(1 + k t)² = −2/4 at t = 2, k = 0.5,
		// to the solve's accuracy (rtol 1e-8, ~100× amplified at most).
		if math.Abs(out.Y[1]+0.5) > 1e-6 {
			t.Errorf("%s: ∂y/∂k = %.10g, want -0.5", rt.Name, out.Y[1])
		}
	}
}

// The error estimate Σ e_i·K_i of one step from a smooth state falls
// like h^(q+1), q = min(Order, ErrOrder): slope 3 for Rosenbrock23 (its
// estimate is third order), 5 for Rodas5P, within ±0.3. The problem is
// nonlinear and non-autonomous: y1' = y2·(y1² + y2²) + sin t,
// y2' = −y1·(y1² + y2²).
func TestEstimatorOrder(t *testing.T) {
	f := func(tt float64, y, _, dy []float64) {
		r := y[0]*y[0] + y[1]*y[1]
		dy[0], dy[1] = y[1]*r+math.Sin(tt), -y[0]*r
	}
	jac := func(_ float64, y, _, j []float64) {
		r := y[0]*y[0] + y[1]*y[1]
		j[0], j[1] = 2*y[0]*y[1], r+2*y[1]*y[1]
		j[2], j[3] = -r-2*y[0]*y[0], -2*y[0]*y[1]
	}
	dfdt := func(tt float64, _, _, o []float64) { o[0], o[1] = math.Cos(tt), 0 }
	for _, rt := range method.AllRosenbrock() {
		sv, err := New(Config{Tableau: rt, F: f, JacY: jac, DfDt: dfdt, Dim: 2, RTol: fill(1, 2), ATol: fill(1, 2),
			MaxSteps: 1, Controller: control.DefaultPI(rt.EstimateOrder(), 0, 0)})
		if err != nil {
			t.Fatal(err)
		}
		y0 := []float64{0.3, 0.9}
		var est []float64
		hs := []float64{0.1, 0.05, 0.025, 0.0125}
		for _, h := range hs {
			copy(sv.y, y0)
			f(0.2, y0, nil, sv.f0)
			jac(0.2, y0, nil, sv.jac)
			dfdt(0.2, y0, nil, sv.ft)
			var st ode.Stats
			// With unit tolerances the norm is the RMS of e/(1 + |y|): a
			// smooth function of h times the raw estimate.
			e, ok := sv.attempt(0.2, h, nil, sv.k, sv.fs, nil, sv.y1, true, &st)
			if !ok {
				t.Fatalf("%s: step failed", rt.Name)
			}
			est = append(est, e)
		}
		var slopes []float64
		for i := 0; i+1 < len(est); i++ {
			slopes = append(slopes, math.Log2(est[i]/est[i+1]))
		}
		want := float64(rt.EstimateOrder())
		got := slopes[len(slopes)-1]
		t.Logf("%s: estimates %.3g, slopes %.3f", rt.Name, est, slopes)
		if math.Abs(got-want) > 0.3 {
			t.Errorf("%s: estimator slope %.3f, want %g ± 0.3", rt.Name, got, want)
		}
	}
}

// When the mesh may not grow (ivp.Mesh.Grow refuses), the step is not
// recorded and the solve ends Cancelled with the mesh consistent.
func TestMeshGrowRefused(t *testing.T) {
	f := func(_ float64, y, _, dy []float64) { dy[0], dy[1] = y[1], 1000*((1-y[0]*y[0])*y[1]-y[0]) }
	jac := func(_ float64, y, _, j []float64) {
		j[0], j[1] = 0, 1
		j[2], j[3] = 1000*(-2*y[0]*y[1]-1), 1000*(1-y[0]*y[0])
	}
	sv := newSolver(t, method.Rodas5P, f, jac, 2, 0)
	tr := &ivp.Trajectory{T0: 0, T1: 3000, Y0: []float64{2, 0}}
	plain := &ivp.Mesh{}
	out := &ivp.Output{Y: make([]float64, 2), Mesh: plain}
	sv.Solve(tr, out, nil)
	var counted uint64
	const budget = 4 << 10
	ms := &ivp.Mesh{Grow: func(b uint64) bool {
		if counted+b > budget {
			return false
		}
		counted += b
		return true
	}}
	out.Mesh = ms
	sv.Solve(tr, out, nil)
	n := ms.Steps()
	if out.Status != ode.Cancelled || n == 0 || n >= plain.Steps() || out.Stats.Accepted != n+1 || counted > budget {
		t.Fatalf("status %v after %d recorded steps (%d accepted, %d in the full mesh), %d bytes counted", out.Status, n, out.Stats.Accepted, plain.Steps(), counted)
	}
	if len(ms.T) != n+1 || len(ms.Y) != 2*(n+1) || ms.T[n] != plain.T[n] || ms.Y[2*n+1] != plain.Y[2*n+1] {
		t.Errorf("mesh of %d steps: T %d, Y %d values, or its steps differ from the full mesh's", n, len(ms.T), len(ms.Y))
	}
}
