package gradsolve_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/systems"
)

// Long spans and times far from zero: the step-size floor is measured at
// the time the solution has reached (control.MinStep(t) = 4ε·|t|, or
// 2^−1022 near t = 0), not at the largest time of the span, and the
// first step is never below it (control.InitialStep).

// longSolve solves one trajectory over [t0, t1] and fails the test on an
// input error; the status is the caller's to check.
func longSolve(t *testing.T, pr *gradsolve.Problem, y0 []float64, t0, t1 float64, o *gradsolve.Options) *gradsolve.Result {
	t.Helper()
	res, err := gradsolve.Solve(context.Background(), pr, &gradsolve.Ensemble{N: 1, Y0: y0, T0: []float64{t0}, T1: []float64{t1}}, o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The IVP test set's reference values. F. Mazzia and F. Iavernaro (with
// C. Magherini), "Test Set for IVP Solvers", Release 2.4, University of
// Bari, problem descriptions ROBER and E5 (src/problems/rober.f and
// e5.f, subroutine solut; the same numbers are in Hairer & Wanner's
// testset and in R's deTestSet, reference()).
var (
	// ROBER at t = 1e11.
	roberRef = []float64{0.2083340149701255e-07, 0.8333360770334713e-13, 0.9999999791665050}
	// E5 at t = 1e13 ("computed using double precision RADAU on an
	// Alphaserver DS20E … uround = 1.01d-19, rtol = h0 = 1.1d-18,
	// atol = 1.1d-40").
	e5Ref = []float64{0.1152903278711829e-290, 0.8867655517642120e-22, 0.8854814626268838e-22, 0}
)

// ROBER on the test set's span [0, 1e11] in one call with Rodas5P at
// rtol 1e-8 matches the reference to 7 significant digits in every
// component (relative error ≤ 1e-7, the test set's scd ≥ 7). atol is per
// component, rtol times (a bit below) the size each component has at
// t = 1e11 (y1 ≈ 2e-8, y2 ≈ 8e-14, y3 ≈ 1), so that the relative
// tolerance governs all three to the end: with one atol of 1e-12, y2
// would be below it for the whole run and not controlled at all. Before
// the floor was measured at t, this failed at t ≈ 1e-4 with
// StepUnderflow: the old floor 4ε·1e11 ≈ 8.9e-5 was above the steps the
// initial transient needs.
func TestROBERLongSpan(t *testing.T) {
	pr := systems.Robertson()
	o := &gradsolve.Options{Method: method.Rodas5P,
		RTolVec: []float64{1e-8, 1e-8, 1e-8}, ATolVec: []float64{1e-16, 1e-22, 1e-8}}
	res := longSolve(t, pr, nil, 0, 1e11, o)
	if err := res.Errs(); err != nil {
		t.Fatal(err)
	}
	y := res.Row(0)
	for d, want := range roberRef {
		if e := math.Abs(y[d]-want) / want; e > 1e-7 {
			t.Errorf("y%d(1e11) = %.16g, reference %.16g (relative %.2g > 1e-7)", d+1, y[d], want, e)
		}
	}
	// A Rosenbrock step keeps the linear invariant y1 + y2 + y3 = 1 up
	// to rounding (a few ε per step over ~10³ steps).
	if m := y[0] + y[1] + y[2]; math.Abs(m-1) > 1e-12 {
		t.Errorf("mass %.17g", m)
	}
	t.Logf("Rodas5P: %d accepted, %d rejected; y(1e11) = %.16g", res.Stats[0].Accepted, res.Stats[0].Rejected, y)
}

// e5F is the IVP test set's E5 right-hand side (e5.f, feval), in its
// order of operations.
func e5F(_ float64, y, _, f []float64) {
	prod1 := 7.89e-10 * y[0]
	prod2 := 1.1e7 * y[0] * y[2]
	prod3 := 1.13e9 * y[1] * y[2]
	prod4 := 1.13e3 * y[3]
	f[0] = -prod1 - prod2
	f[1] = prod1 - prod3
	f[3] = prod2 - prod4
	f[2] = f[1] - f[3]
}

// e5Jac is e5.f's jeval, row-major.
func e5Jac(_ float64, y, _, j []float64) {
	const a, b, cm, c = 7.89e-10, 1.1e7, 1.13e9, 1.13e3
	j[0], j[1], j[2], j[3] = -a-b*y[2], 0, -b*y[0], 0
	j[4], j[5], j[6], j[7] = a, -cm*y[2], -cm*y[1], 0
	j[8], j[9], j[10], j[11] = a-b*y[2], -cm*y[2], -b*y[0]-cm*y[1], c
	j[12], j[13], j[14], j[15] = b*y[2], 0, b*y[0], -c
}

// E5 (the test set's 4 states, y0 = (1.76e-3, 0, 0, 0)) on [0, 1e13] in
// one call with Rodas5P, per-component atol 1e-20. The components end far
// below that atol (y2 ≈ y3 ≈ 8.9e-23, y1 and y4 ≈ 0), so what the
// tolerance allows there is an absolute error of atol: each component is
// checked to |y − ref| ≤ atol.
//
// It cannot do better in double precision, whatever the tolerance. The
// equations conserve y2 − y3 − y4 (f2 − f3 − f4 = 0) and the exact
// solution has y2 = y3 at 1e13 (y4 ≈ B·y1·y3/C ≈ 0), so the final
// y2 ≈ y3 ≈ 8.9e-23 is fixed by that conserved quantity staying 0 to
// well below 1e-23 — about 1e-20 of y1(0) = 1.76e-3, far below ε. A
// Rosenbrock step keeps a linear invariant only up to the rounding of its
// linear solves with W = I − hγJ, and hγ·J reaches 1e4 … 1e5 (hγ·B·y1)
// at the steps of t ∈ [1e2, 1e4], where y1 is still 1e-3 and the drift
// arises (measured at rtol 1e-8, atol 1e-30): Rodas5P's runs drift by
// 1e-23 … 1e-20 at rtol 1e-6 … 1e-13 and atol 1e-20 … 1e-30, and with a
// drift δ = y2 − y3 − y4 the late (y2, y3) tend to (δ, 0) or (0, −δ)
// instead of (u, u), u ≈ 8.86e-23.
// (The reference itself has y2 − y3 = 1.28e-25 with y4 = 0: its own
// drift, 1.45e-3 of y2.) TestE5Reduced removes the invariant and matches
// the reference to what the reference is worth.
func TestE5LongSpan(t *testing.T) {
	pr := &gradsolve.Problem{Name: "e5", Dim: 4, F: e5F, Y0: []float64{1.76e-3, 0, 0, 0},
		Programs: func() *gradsolve.Programs { return &gradsolve.Programs{F: e5F, JacY: e5Jac} }}
	atol := []float64{1e-20, 1e-20, 1e-20, 1e-20}
	o := &gradsolve.Options{Method: method.Rodas5P, RTolVec: []float64{1e-8, 1e-8, 1e-8, 1e-8}, ATolVec: atol}
	res := longSolve(t, pr, nil, 0, 1e13, o)
	if err := res.Errs(); err != nil {
		t.Fatal(err)
	}
	y := res.Row(0)
	for d, want := range e5Ref {
		if e := math.Abs(y[d] - want); e > atol[d] {
			t.Errorf("y%d(1e13) = %.6g, reference %.6g: |error| %.2g > atol %g", d+1, y[d], want, e, atol[d])
		}
	}
	t.Logf("Rodas5P: %d accepted, %d rejected; y(1e13) = %.6g; drift of y2 − y3 − y4: %.2g",
		res.Stats[0].Accepted, res.Stats[0].Rejected, y, y[1]-y[2]-y[3])
}

// e5rF is E5 with the conserved quantity substituted: states (y1, y3,
// y4) and y2 = y3 + y4, which holds exactly for the test set's y0. The
// solution is the same; only the drift of TestE5LongSpan is gone.
func e5rF(_ float64, y, _, f []float64) {
	y1, y3, y4 := y[0], y[1], y[2]
	prod1 := 7.89e-10 * y1
	prod2 := 1.1e7 * y1 * y3
	prod3 := 1.13e9 * (y3 + y4) * y3
	prod4 := 1.13e3 * y4
	f[0] = -prod1 - prod2
	f[2] = prod2 - prod4
	f[1] = prod1 - prod3 - f[2]
}

func e5rJac(_ float64, y, _, j []float64) {
	const a, b, cm, c = 7.89e-10, 1.1e7, 1.13e9, 1.13e3
	y1, y3, y4 := y[0], y[1], y[2]
	j[0], j[1], j[2] = -a-b*y3, -b*y1, 0
	j[3], j[4], j[5] = a-b*y3, -cm*(y4+2*y3)-b*y1, c-cm*y3
	j[6], j[7], j[8] = b*y3, b*y1, -c
}

// E5 without its invariant, on [0, 1e13] with Rodas5P at rtol 1e-8 and
// atol 1e-30 (so the relative tolerance governs the 1e-22 components),
// in one call. The exact y2 and y3 are equal at 1e13; the reference's
// differ by 1.28e-25 (see TestE5LongSpan), so each reference component
// is worth ±|y2 − y3|/2 = ±6.4e-26 (7.3e-4 relative) and their mean is
// the reference's best value. The solve matches the mean to 1e-6
// relative (100·rtol: global error over ~3 000 steps; it agrees to
// 1.8e-7, and Rodas5P at rtol 1e-10 and 1e-12 agree with each other to
// 2e-13), and each reference component to within its own spread. y1 and
// y4 are below 1e-250 (the reference: 1.2e-291 and 0).
func TestE5Reduced(t *testing.T) {
	pr := &gradsolve.Problem{Name: "e5-reduced", Dim: 3, F: e5rF, Y0: []float64{1.76e-3, 0, 0},
		Programs: func() *gradsolve.Programs { return &gradsolve.Programs{F: e5rF, JacY: e5rJac} }}
	o := &gradsolve.Options{Method: method.Rodas5P, RTolVec: []float64{1e-8, 1e-8, 1e-8}, ATolVec: []float64{1e-30, 1e-30, 1e-30}}
	res := longSolve(t, pr, nil, 0, 1e13, o)
	if err := res.Errs(); err != nil {
		t.Fatal(err)
	}
	y := res.Row(0)
	y1, y2, y3, y4 := y[0], y[1]+y[2], y[1], y[2]
	mean, spread := (e5Ref[1]+e5Ref[2])/2, math.Abs(e5Ref[1]-e5Ref[2])/2
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"y2", y2, e5Ref[1]}, {"y3", y3, e5Ref[2]}} {
		if e := math.Abs(c.got-mean) / mean; e > 1e-6 {
			t.Errorf("%s(1e13) = %.16g, reference mean %.16g (relative %.2g > 1e-6)", c.name, c.got, mean, e)
		}
		if e := math.Abs(c.got - c.want); e > spread+1e-6*mean {
			t.Errorf("%s(1e13) = %.16g, reference %.16g: |error| %.2g beyond the reference's spread %.2g", c.name, c.got, c.want, e, spread)
		}
	}
	if math.Abs(y1) > 1e-250 || math.Abs(y4) > 1e-250 {
		t.Errorf("y1(1e13) = %g, y4(1e13) = %g: want ≈ 0", y1, y4)
	}
	t.Logf("Rodas5P: %d accepted, %d rejected; y2 = y3 = %.16g (reference mean %.16g)", res.Stats[0].Accepted, res.Stats[0].Rejected, y3, mean)
}

// slowDecay is y' = −y/1e12 from a problem file, so it has every
// derivative program (Record, Rosenbrock methods).
func slowDecay(t *testing.T) *gradsolve.Problem {
	t.Helper()
	return sourceProblem(t, "slowdecay", "name slowdecay\nparam lam = 1e-12\nstate y = 1\nspan 0 1e13\ny' = -lam*y\n")
}

// y' = −lam·y over spans of 1e13 with y = 1 at the start: lam = 1e-12
// forwards — on [0, 1e13], and far from zero on [1e13, 2e13], where one
// ulp of t is 2e-3, more than the initial-step rule's fallback step 1e-4
// — and lam = −1e-12 backwards ([1e13, 0], [2e13, 1e13], [0, −1e13],
// [−1e13, −2e13]), so the solution decays in the direction of
// integration and y = e^(−10) at the end of every span. Every method
// succeeds. At rtol 1e-6 and 1e-8 (atol 1e-9) Tsit5, DP8 and Rodas5P —
// and DP5 and Vern7 — match exp(−10) to one tolerance unit, atol +
// rtol·e^(−10): the controller keeps each step's local error estimate
// below atol + rtol·|y| (aiming at 0.9 of it); the estimate is the
// error of the lower-order embedded solution, so it overstates that of
// the higher-order solution propagated; and the problem is contractive
// in the direction of integration — an error made at s is damped by
// e^(−|t1−s|/1e12) — so the global error stays a fraction of one unit
// (measured: at most 6%, over 34 to 102 steps). Rosenbrock23 propagates
// its second-order solution and embeds a third-order one, so its
// estimate is the full local error, and its ~10³ steps add up to 8.6–13
// units; it is only checked to succeed.
func TestSlowDecayLongSpan(t *testing.T) {
	pr := slowDecay(t)
	e10 := math.Exp(-10)
	spans := [][2]float64{{0, 1e13}, {1e13, 2e13}, {1e13, 0}, {2e13, 1e13}, {0, -1e13}, {-1e13, -2e13}}
	type run struct {
		name string
		o    gradsolve.Options
	}
	var runs []run
	for _, tb := range method.All() {
		runs = append(runs, run{tb.Name, gradsolve.Options{Method: tb}})
	}
	for _, rt := range method.AllRosenbrock() {
		runs = append(runs, run{rt.Name, gradsolve.Options{Method: rt}})
	}
	for _, sp := range spans {
		for _, r := range runs {
			for _, rtol := range []float64{1e-6, 1e-8} {
				o := r.o
				o.RTol, o.ATol = rtol, 1e-9
				lam := math.Copysign(1e-12, sp[1]-sp[0])
				res, err := gradsolve.Solve(context.Background(), pr,
					&gradsolve.Ensemble{N: 1, P: []float64{lam}, T0: sp[:1], T1: sp[1:]}, &o)
				if err != nil {
					t.Fatal(err)
				}
				if err := res.Errs(); err != nil {
					t.Errorf("%s %v rtol %g: %v", r.name, sp, rtol, err)
					continue
				}
				y := res.Row(0)[0]
				bound := o.ATol + rtol*e10
				if r.name != "Rosenbrock23" && math.Abs(y-e10) > bound {
					t.Errorf("%s %v rtol %g: y = %.16g, exp(−10) = %.16g (error %.2g > atol + rtol·|y| = %.2g)",
						r.name, sp, rtol, y, e10, math.Abs(y-e10), bound)
				}
				if sp == [2]float64{0, 1e13} || sp == [2]float64{2e13, 1e13} {
					t.Logf("%s %v rtol %g: %d accepted, %d rejected, error %.2g of atol + rtol·|y|", r.name, sp, rtol,
						res.Stats[0].Accepted, res.Stats[0].Rejected, math.Abs(y-e10)/bound)
				}
			}
		}
	}
}

// The recording solve follows the same accepted steps as Solve on a long
// span, and its replay at the recording point reproduces them bit for
// bit (erk and ros replays walk the recorded mesh, with no floor of
// their own).
func TestRecordLongSpan(t *testing.T) {
	pr := slowDecay(t)
	for _, o := range []*gradsolve.Options{{Method: method.Tsit5}, {Method: method.DP8}, {Method: method.Rodas5P}} {
		for _, sp := range [][2]float64{{0, 1e13}, {2e13, 1e13}} {
			ens := &gradsolve.Ensemble{N: 1, T0: sp[:1], T1: sp[1:], Save: []float64{(sp[0] + sp[1]) / 2}}
			res, err := gradsolve.Solve(context.Background(), pr, ens, o)
			if err != nil {
				t.Fatal(err)
			}
			rec, err := gradsolve.Record(context.Background(), pr, ens, o)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := rec.Replay(context.Background(), &gradsolve.Point{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Errs() != nil || rep.Errs() != nil {
				t.Fatalf("%s %v: %v / %v", res.Method, sp, res.Errs(), rep.Errs())
			}
			for _, pair := range [][2][]float64{{res.Y, rep.Y}, {res.Saved, rep.Saved}} {
				for i := range pair[0] {
					if math.Float64bits(pair[0][i]) != math.Float64bits(pair[1][i]) {
						t.Errorf("%s %v: replay %v, solve %v", res.Method, sp, pair[1], pair[0])
					}
				}
			}
		}
	}
}

// y' = cos(t/1e12)·y/1e12 on [1e13, 2e13] and backwards: non-autonomous
// and far from zero, so the initial-step probe f(t0 + 1e-6, …) sees the
// same t as f(t0, …) and only the raise to the floor makes the first step
// move t. y = exp(sin(t/1e12) − sin(t0/1e12)). The solution grows and
// shrinks by up to e² over the span, so the error is not damped as in
// TestSlowDecayLongSpan: the bound is ten tolerance units (measured: at
// most 2.1 for these methods).
func TestNonAutonomousFarFromZero(t *testing.T) {
	f := func(t float64, y, _, dy []float64) { dy[0] = math.Cos(t*1e-12) * 1e-12 * y[0] }
	pr := &gradsolve.Problem{Name: "expsin-long", Dim: 1, F: f, Y0: []float64{1},
		Programs: func() *gradsolve.Programs {
			return &gradsolve.Programs{F: f,
				JacY: func(t float64, _, _, j []float64) { j[0] = math.Cos(t*1e-12) * 1e-12 },
				DfDt: func(t float64, y, _, o []float64) { o[0] = -math.Sin(t*1e-12) * 1e-24 * y[0] }}
		}}
	for _, o := range []gradsolve.Options{{Method: method.Tsit5}, {Method: method.DP8}, {Method: method.Rodas5P}} {
		for _, sp := range [][2]float64{{1e13, 2e13}, {2e13, 1e13}} {
			for _, rtol := range []float64{1e-6, 1e-8} {
				o.RTol, o.ATol = rtol, 1e-9
				res := longSolve(t, pr, nil, sp[0], sp[1], &o)
				if err := res.Errs(); err != nil {
					t.Errorf("%s %v: %v", res.Method, sp, err)
					continue
				}
				want := math.Exp(math.Sin(sp[1]*1e-12) - math.Sin(sp[0]*1e-12))
				bound := 10 * (o.ATol + rtol*want)
				if e := math.Abs(res.Row(0)[0] - want); e > bound {
					t.Errorf("%s %v rtol %g: y = %.16g, exact %.16g (error %.2g > %.2g)", res.Method, sp, rtol, res.Row(0)[0], want, e, bound)
				}
			}
		}
	}
}

// At t = 0 there is no relative floor, and a trajectory whose every trial
// fails still stops at once: each rejection for a non-finite trial
// multiplies h by QMin, and the floor 2^−1022 ends it after
// ⌈log(h/2^−1022)/log(1/QMin)⌉ attempts (438 from h = 0.01 at QMin =
// 0.2), with status NonFinite at t = 0. Here f is NaN for every t > 0;
// y' = −y at y0 = 1 with rtol = atol gives the first step h = 0.01·d0/d1
// = 0.01 exactly.
func TestNoRelativeFloorAtZero(t *testing.T) {
	f := func(t float64, y, _, dy []float64) {
		dy[0] = -y[0]
		if t > 0 {
			dy[0] = math.NaN()
		}
	}
	pr := &gradsolve.Problem{Name: "nan-after-0", Dim: 1, F: f, Y0: []float64{1},
		Programs: func() *gradsolve.Programs {
			return &gradsolve.Programs{F: f, JacY: func(_ float64, _, _, j []float64) { j[0] = -1 }}
		}}
	for _, c := range []struct {
		o     gradsolve.Options
		order int
		qmin  float64
	}{
		{gradsolve.Options{Method: method.Tsit5}, 5, 0.2},
		{gradsolve.Options{Method: method.DP8}, 8, 0.333},
		{gradsolve.Options{Method: method.Rodas5P}, 4, 0.2},
	} {
		ctl := control.DefaultPI(c.order, c.qmin, 10)
		c.o.Controller, c.o.RTol, c.o.ATol = &ctl, 1e-6, 1e-6
		res := longSolve(t, pr, nil, 0, 1, &c.o)
		want := 0
		for h := 0.01; h >= control.MinStep(0); h *= c.qmin {
			want++
		}
		if res.Status[0] != gradsolve.NonFinite || res.T[0] != 0 || res.Stats[0].Accepted != 0 || res.Stats[0].Rejected != want {
			t.Errorf("%s: status %v at t = %g after %d accepted, %d rejected; want NonFinite at 0 after %d rejected",
				res.Method, res.Status[0], res.T[0], res.Stats[0].Accepted, res.Stats[0].Rejected, want)
		}
	}
}

// Near a singularity close to t = 0 the relative floor still ends the
// run: y' = p·y², y(0) = 1 blows up at t = 1/p = 1e-10, and the
// trajectory stops with StepUnderflow at the numerical solution's own
// blow-up time (within 10·rtol of 1e-10: observed 1.2e-6 relative at the
// default rtol 1e-6), the step below a few ulps of t, long before the
// budget; the message names the cause, the time and the step.
func TestUnderflowNearZero(t *testing.T) {
	f := func(_ float64, y, p, dy []float64) { dy[0] = p[0] * y[0] * y[0] }
	pr := &gradsolve.Problem{Name: "blowup", Dim: 1, NumParams: 1, F: f, Y0: []float64{1}, P: []float64{1e10},
		Programs: func() *gradsolve.Programs {
			return &gradsolve.Programs{F: f, JacY: func(_ float64, y, p, j []float64) { j[0] = 2 * p[0] * y[0] }}
		}}
	for _, o := range []gradsolve.Options{{Method: method.Tsit5}, {Method: method.DP8}, {Method: method.Rodas5P}} {
		res := longSolve(t, pr, nil, 0, 2e-10, &o)
		tr, h := res.T[0], 0.0
		err := res.Err(0)
		if res.Status[0] != gradsolve.StepUnderflow || err == nil {
			t.Errorf("%s: status %v, want StepUnderflow", res.Method, res.Status[0])
			continue
		}
		if math.Abs(tr-1e-10) > 1e-5*1e-10 || res.Stats[0].Attempts() >= gradsolve.DefaultMaxSteps {
			t.Errorf("%s: stopped at t = %.17g after %d attempts; want t ≈ 1e-10", res.Method, tr, res.Stats[0].Attempts())
		}
		if te, ok := err.(*gradsolve.TrajectoryError); ok {
			h = te.H
		}
		if math.Abs(h) >= control.MinStep(tr) || !strings.Contains(err.Error(), "no longer changes the time") {
			t.Errorf("%s: h = %g at t = %g (floor %g); message %q", res.Method, h, tr, control.MinStep(tr), err)
		}
	}
}
