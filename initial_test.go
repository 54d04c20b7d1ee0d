package gradsolve_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/router"
)

// decay is y' = −k·y from y(0) = a·b: y(t) = a·b·e^(−kt), so
//
//	∂y/∂a = b·e^(−kt),  ∂y/∂b = a·e^(−kt),  ∂y/∂k = −t·a·b·e^(−kt).
const decaySrc = `param a = 2, b = 0.5, k = 0.7
state y = a*b
span 0 1.5
y' = -k*y
`

// The closed-form case: each trajectory starts from a·b of its own
// parameters, and forward sensitivities with respect to a and b start
// from ∂y0/∂a = b and ∂y0/∂b = a. Tsit5 at rtol 1e-11 is accurate to
// about 1e-10 relative on this smooth problem (100·rtol); the
// sensitivities are the derivatives of the same discrete solution and
// carry the same relative error.
func TestInitialFromParamsClosedForm(t *testing.T) {
	pr := sourceProblem(t, "decay", decaySrc)
	if pr.Initial == nil {
		t.Fatal("Problem.Initial is nil")
	}
	p := []float64{2, 0.5, 0.7, 3, 0.25, 1.2, -1, 4, 0.3}
	ens := &gradsolve.Ensemble{N: 3, P: p}
	o := &gradsolve.Options{RTol: 1e-11, ATol: 1e-14,
		Sens: &gradsolve.Sensitivity{Wrt: []gradsolve.Wrt{gradsolve.Param(0), gradsolve.Param(1), gradsolve.Param(2), gradsolve.InitialValue(0)}}}
	res := mustSolve(t, pr, ens, o)
	const tol = 1e-9
	for i := range 3 {
		a, b, k := p[3*i], p[3*i+1], p[3*i+2]
		e := math.Exp(-k * 1.5)
		want := []float64{b * e, a * e, -1.5 * a * b * e, e}
		if y := res.Y[i]; math.Abs(y-a*b*e) > tol*math.Abs(a*b*e) {
			t.Errorf("trajectory %d: y(t1) = %.15g, want %.15g", i, y, a*b*e)
		}
		for c, w := range want {
			if s := res.S[i*4+c]; math.Abs(s-w) > tol*math.Max(math.Abs(w), math.Abs(a*b*e)) {
				t.Errorf("trajectory %d column %d: S = %.15g, want %.15g", i, c, s, w)
			}
		}
	}
	// Explicit initial states override y0(p): then y0 does not depend on
	// p, and S starts at 0 for the parameters.
	ens.Y0 = []float64{1}
	res = mustSolve(t, pr, ens, o)
	for i := range 3 {
		k := p[3*i+2]
		e := math.Exp(-k * 1.5)
		want := []float64{0, 0, -1.5 * e, e}
		for c, w := range want {
			if s := res.S[i*4+c]; math.Abs(s-w) > tol*math.Max(math.Abs(w), e) {
				t.Errorf("given Y0, trajectory %d column %d: S = %.15g, want %.15g", i, c, s, w)
			}
		}
	}
}

// An initial state that is not finite at a trajectory's parameters is
// refused with a message naming the state and the trajectory.
func TestInitialFromParamsNotFinite(t *testing.T) {
	pr := sourceProblem(t, "logy", "param k = 1\nstate y = log(k)\ny' = -y\nspan 0 1\n")
	_, err := gradsolve.Solve(context.Background(), pr, &gradsolve.Ensemble{N: 2, P: []float64{1, -1}}, nil)
	if err == nil || !strings.Contains(err.Error(), "trajectory 1 has y = NaN") {
		t.Errorf("error %v, want one about y = NaN on trajectory 1", err)
	}
}

// orbitSrc is examples/kepler_ecc.ode with the angle of the pericentre
// as a third parameter: every initial value depends on the parameters.
const orbitSrc = `param e = 0.5, mu = 1, w = 0.3
const r = 1 - e
let v = sqrt(mu*(1 + e)/r)
state x = r*cos(w), y = r*sin(w), vx = -v*sin(w), vy = v*cos(w)
span 0 3
let r2 = x*x + y*y
let f = -mu/(r2*sqrt(r2))
x' = vx
y' = vy
vx' = f*x
vy' = f*y
`

// orbitLoss is L = Σ_i (x_i(t1) + 2·vy_i(t1))² + Σ_i y_i(t_save).
func orbitLoss(res *gradsolve.Result) (float64, gradsolve.Cotangents, error) {
	cot := gradsolve.Cotangents{Y: make([]float64, len(res.Y)), Saved: make([]float64, len(res.Saved))}
	var l float64
	for i := range res.N {
		y := res.Row(i)
		u := y[0] + 2*y[3]
		l += u * u
		cot.Y[i*4], cot.Y[i*4+3] = 2*u, 4*u
		l += res.SavedRow(i, 0)[1]
		cot.Saved[(i*res.K)*4+1] = 1
	}
	return l, cot, nil
}

// Gradients with respect to parameters the initial state depends on:
// the reverse replay adds (∂y0/∂p)ᵀ·ḡ_y0 and forward mode starts the
// sensitivities at ∂y0/∂p, so the two agree to rounding (both are the
// exact derivative of the same discrete map; 1e-10 relative) for every
// method, Rodas5P's included; and central differences of the replay on
// the recorded mesh (Replay at P ± h·e_j, which recomputes y0(P))
// agree to their truncation and rounding error: O(h²·L”') + O(ε·L/h)
// ≈ 1e-8 relative at h = 1e-5, so 1e-6.
func TestInitialFromParamsGradient(t *testing.T) {
	pr := sourceProblem(t, "orbit", orbitSrc)
	p := []float64{0.5, 1, 0.3, 0.2, 1.3, -0.4}
	ens := &gradsolve.Ensemble{N: 2, P: p, Save: []float64{1.25}}
	type meth struct {
		name string
		o    gradsolve.Options
	}
	ms := []meth{{"rodas5p", gradsolve.Options{Method: method.Rodas5P}}}
	for _, tb := range method.All() {
		ms = append(ms, meth{tb.Name, gradsolve.Options{Method: tb}})
	}
	for _, mt := range ms {
		t.Run(mt.name, func(t *testing.T) {
			o := mt.o
			o.RTol, o.ATol = 1e-8, 1e-10
			o.Mode = router.Reverse
			lr, gr, rec, err := gradsolve.LossGradient(context.Background(), pr, ens, &o, orbitLoss)
			if err != nil {
				t.Fatal(err)
			}
			o.Mode = router.Forward
			lf, gf, _, err := gradsolve.LossGradient(context.Background(), pr, ens, &o, orbitLoss)
			if err != nil {
				t.Fatal(err)
			}
			if lr != lf {
				t.Errorf("losses differ: reverse %v, forward %v", lr, lf)
			}
			scale := 0.0
			for _, v := range append(append([]float64(nil), gr.P...), gr.Y0...) {
				scale = math.Max(scale, math.Abs(v))
			}
			for k := range gr.P {
				if math.Abs(gr.P[k]-gf.P[k]) > 1e-10*scale {
					t.Errorf("∂L/∂p[%d]: reverse %.16g, forward %.16g", k, gr.P[k], gf.P[k])
				}
			}
			for k := range gr.Y0 {
				if math.Abs(gr.Y0[k]-gf.Y0[k]) > 1e-10*scale {
					t.Errorf("∂L/∂y0[%d]: reverse %.16g, forward %.16g", k, gr.Y0[k], gf.Y0[k])
				}
			}
			// Central differences of the replay on the recorded mesh.
			const h = 1e-5
			for k := range p {
				at := func(dp float64) float64 {
					q := append([]float64(nil), p...)
					q[k] += dp
					res, err := rec.Replay(context.Background(), &gradsolve.Point{P: q})
					if err != nil {
						t.Fatal(err)
					}
					l, _, _ := orbitLoss(res)
					return l
				}
				fd := (at(h) - at(-h)) / (2 * h)
				if math.Abs(fd-gr.P[k]) > 1e-6*math.Max(1, math.Abs(fd)) {
					t.Errorf("∂L/∂p[%d] = %.12g, difference of the replay %.12g", k, gr.P[k], fd)
				}
			}
			// Back at the recording point, the replay reproduces the solve
			// bit for bit, and its gradient is the one taken there.
			res, err := rec.Replay(context.Background(), &gradsolve.Point{P: p})
			if err != nil {
				t.Fatal(err)
			}
			if l, _, _ := orbitLoss(res); l != lr {
				t.Errorf("replay at the recording point: loss %v, recorded %v", l, lr)
			}
			_, cot, _ := orbitLoss(res)
			g2, err := rec.Gradient(context.Background(), cot)
			if err != nil {
				t.Fatal(err)
			}
			for k := range gr.P {
				if g2.P[k] != gr.P[k] {
					t.Errorf("gradient after replay at the recording point: ∂L/∂p[%d] = %v, was %v", k, g2.P[k], gr.P[k])
				}
			}
		})
	}
}

// A Point with Y0 sets the initial states themselves: the replay keeps
// them when P moves, and ∂L/∂p loses the term through y0(p) — the
// gradient is that of a recording with the same Y0 given explicitly.
func TestReplayWithGivenInitialStates(t *testing.T) {
	pr := sourceProblem(t, "orbit", orbitSrc)
	p := []float64{0.5, 1, 0.3}
	o := &gradsolve.Options{RTol: 1e-8, ATol: 1e-10}
	rec, err := gradsolve.Record(context.Background(), pr, &gradsolve.Ensemble{N: 1, P: p, Save: []float64{1.25}}, o)
	if err != nil {
		t.Fatal(err)
	}
	y0 := append([]float64(nil), rec.Result.Y...) // any state will do: the final one
	if _, err := rec.Replay(context.Background(), &gradsolve.Point{Y0: y0}); err != nil {
		t.Fatal(err)
	}
	q := []float64{0.55, 1, 0.3}
	res, err := rec.Replay(context.Background(), &gradsolve.Point{P: q})
	if err != nil {
		t.Fatal(err)
	}
	_, cot, _ := orbitLoss(res)
	g, err := rec.Gradient(context.Background(), cot)
	if err != nil {
		t.Fatal(err)
	}
	// The same replay from a recording whose Y0 was given.
	rec2, err := gradsolve.Record(context.Background(), pr, &gradsolve.Ensemble{N: 1, P: p, Y0: pr.Y0, Save: []float64{1.25}}, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rec2.Replay(context.Background(), &gradsolve.Point{Y0: y0, P: q}); err != nil {
		t.Fatal(err)
	}
	g2, err := rec2.Gradient(context.Background(), cot)
	if err != nil {
		t.Fatal(err)
	}
	for k := range g.P {
		if g.P[k] != g2.P[k] {
			t.Errorf("∂L/∂p[%d] = %v, with Y0 given from the start %v", k, g.P[k], g2.P[k])
		}
	}
}

// y0(p) is evaluated once for each row of parameters, also with forward
// sensitivities, whose ∂y0/∂p comes from the same call: N calls for N
// rows, one for shared parameters. The sensitivities are exact
// (closed form of decay, to the accuracy argued above) and the states
// those of a solve without them, bit for bit.
func TestInitialEvaluatedOnce(t *testing.T) {
	base := sourceProblem(t, "decay", decaySrc)
	var calls, withJac int
	pr := *base
	pr.Initial = func() gradsolve.InitialFunc {
		ev := base.Initial()
		return func(p, y0, jac []float64) {
			calls++ // serial: Solve evaluates y0(p) before the workers start
			if jac != nil {
				withJac++
			}
			ev(p, y0, jac)
		}
	}
	p := []float64{2, 0.5, 0.7, 3, 0.25, 1.2, -1, 4, 0.3}
	sens := &gradsolve.Options{RTol: 1e-11, ATol: 1e-14, Workers: 2,
		Sens: &gradsolve.Sensitivity{Wrt: []gradsolve.Wrt{gradsolve.InitialValue(0), gradsolve.Param(1), gradsolve.Param(2)}}}
	plain := &gradsolve.Options{RTol: 1e-11, ATol: 1e-14, Workers: 2}
	for _, c := range []struct {
		name  string
		ens   *gradsolve.Ensemble
		calls int
	}{
		{"per trajectory", &gradsolve.Ensemble{N: 3, P: p}, 3},
		{"shared", &gradsolve.Ensemble{N: 3, P: p[:3]}, 1},
	} {
		calls, withJac = 0, 0
		ref := mustSolve(t, &pr, c.ens, plain)
		if calls != c.calls || withJac != 0 {
			t.Errorf("%s, no sensitivities: %d evaluations (%d with ∂y0/∂p), want %d without", c.name, calls, withJac, c.calls)
		}
		calls, withJac = 0, 0
		res := mustSolve(t, &pr, c.ens, sens)
		if calls != c.calls || withJac != c.calls {
			t.Errorf("%s, sensitivities: %d evaluations (%d with ∂y0/∂p), want %d, each with it", c.name, calls, withJac, c.calls)
		}
		if !testutil.IdenticalBits(res.Y, ref.Y) {
			t.Errorf("%s: the sensitivities changed the states", c.name)
		}
		const tol = 1e-9
		for i := range 3 {
			q := p[3*i : 3*i+3]
			if len(c.ens.P) == 3 {
				q = p[:3]
			}
			a, b, k := q[0], q[1], q[2]
			e := math.Exp(-k * 1.5)
			for col, w := range []float64{e, a * e, -1.5 * a * b * e} {
				if s := res.S[i*3+col]; math.Abs(s-w) > tol*math.Max(math.Abs(w), math.Abs(a*b*e)) {
					t.Errorf("%s: trajectory %d column %d: S = %.15g, want %.15g", c.name, i, col, s, w)
				}
			}
		}
	}
}
