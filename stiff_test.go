package gradsolve_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/systems"
)

// withJacobian gives a test problem (rotation, expsin) the Jacobian and
// ∂f/∂t programs a Rosenbrock method needs.
func withJacobian(name string, dim int, f ode.Func, jac func(t float64, y, p, j []float64), dfdt func(t float64, y, p, o []float64)) *gradsolve.Problem {
	return &gradsolve.Problem{Name: name, Dim: dim, F: f,
		Programs: func() *gradsolve.Programs { return &gradsolve.Programs{F: f, JacY: jac, DfDt: dfdt} }}
}

// Observed orders with fixed steps on problems with known solutions (as
// for the explicit methods): Rosenbrock23 2, Rodas5P 5, ±0.3. The
// rotation problem is nonlinear and autonomous; expsin is
// non-autonomous, so the ∂f/∂t terms are exercised.
func TestRosenbrockObservedOrder(t *testing.T) {
	rotation := withJacobian("rotation", 2,
		func(_ float64, y, _, dy []float64) {
			r := y[0]*y[0] + y[1]*y[1]
			dy[0], dy[1] = y[1]*r, -y[0]*r
		},
		func(_ float64, y, _, j []float64) {
			r := y[0]*y[0] + y[1]*y[1]
			j[0], j[1] = 2*y[0]*y[1], r+2*y[1]*y[1]
			j[2], j[3] = -r-2*y[0]*y[0], -2*y[0]*y[1]
		}, nil)
	expsin := withJacobian("expsin", 1,
		func(t float64, y, _, dy []float64) { dy[0] = y[0] * math.Cos(t) },
		func(t float64, _, _, j []float64) { j[0] = math.Cos(t) },
		func(t float64, y, _, o []float64) { o[0] = -y[0] * math.Sin(t) })
	const t1 = 3.0
	problems := []struct {
		pr    *gradsolve.Problem
		y0    []float64
		exact []float64
	}{
		{rotation, []float64{0, 1}, []float64{math.Sin(t1), math.Cos(t1)}},
		{expsin, []float64{1}, []float64{math.Exp(math.Sin(t1))}},
	}
	nsteps := map[string][]int{"Rosenbrock23": {64, 128, 256, 512}, "Rodas5P": {16, 32, 64, 128}}
	for _, pb := range problems {
		for _, rt := range method.AllRosenbrock() {
			ns := nsteps[rt.Name]
			var errs []float64
			for _, n := range ns {
				h := t1 / float64(n)
				// Fixed steps: H0 = HMax = h and tolerances so loose that no
				// step is rejected.
				res := mustSolve(t, pb.pr, &gradsolve.Ensemble{N: 1, Y0: pb.y0, T0: []float64{0}, T1: []float64{t1}},
					&gradsolve.Options{Method: rt, RTol: 1, ATol: 1e6, H0: h, HMax: h})
				if res.Stats[0].Rejected != 0 || res.Stats[0].Accepted != n {
					t.Fatalf("%s: %d steps, %d rejected; want %d fixed steps", rt.Name, res.Stats[0].Accepted, res.Stats[0].Rejected, n)
				}
				errs = append(errs, relErr(res.Row(0), pb.exact))
			}
			got := fitOrder(ns, errs)
			t.Logf("%s %s: errors %.3g, order %.2f", pb.pr.Name, rt.Name, errs, got)
			if math.Abs(got-float64(rt.Order)) > 0.3 {
				t.Errorf("%s %s: observed order %.2f, want %d ± 0.3", pb.pr.Name, rt.Name, got, rt.Order)
			}
		}
	}
}

// fitOrder fits log(err) = c − order·log(n) by least squares.
func fitOrder(ns []int, errs []float64) float64 {
	var sx, sy, sxx, sxy float64
	for i, n := range ns {
		x, y := math.Log(float64(n)), math.Log(errs[i])
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	k := float64(len(ns))
	return -(k*sxy - sx*sy) / (k*sxx - sx*sx)
}

// On the stiff linear family (eigenvalues −1 … −1e5) a Rosenbrock
// method is stable at step sizes far beyond the explicit limit
// (|hλ| ≲ 3 means h ≲ 3e-5): it finishes [0, 1] in a few dozen steps,
// and matches the closed form to the tolerance's accuracy (10·rtol).
func TestRosenbrockStiffLinear(t *testing.T) {
	ls := systems.LinearStiffDefault()
	pr := ls.Problem
	want := make([]float64, pr.Dim)
	ls.Exact(0, pr.Y0, 1, want)
	for _, rt := range method.AllRosenbrock() {
		res := mustSolve(t, pr, &gradsolve.Ensemble{N: 1}, &gradsolve.Options{Method: rt, RTol: 1e-6, ATol: 1e-9})
		s := res.Stats[0]
		t.Logf("%s: %d accepted, %d rejected, %d LUs", rt.Name, s.Accepted, s.Rejected, s.LUs)
		if s.Accepted > 2000 {
			t.Errorf("%s: %d steps on [0, 1]: not stable beyond the explicit limit", rt.Name, s.Accepted)
		}
		if e := relErr(res.Row(0), want); e > 1e-5 {
			t.Errorf("%s: relative error %.3g against exp(At)", rt.Name, e)
		}
	}
	// The router sends this stiff problem to Rodas5P by itself.
	res := mustSolve(t, pr, &gradsolve.Ensemble{N: 1}, nil)
	if res.Method != "Rodas5P" || res.Engine != "cpu-ros" {
		t.Errorf("stiff problem ran %s on %s (%s)", res.Method, res.Engine, res.Reason)
	}
}

// Robertson over [0, 1e5] at rtol 1e-8 matches a converged reference
// (Rodas5P at rtol 1e-12; its own error is far below 1e-8) to 1e-6
// relative in y1 and y3, and conserves y1 + y2 + y3 = 1 to 1e-10 (a
// Rosenbrock step preserves linear invariants up to rounding). An
// explicit method ends with a status, never a hang.
func TestRobertson(t *testing.T) {
	pr := systems.Robertson()
	ens := &gradsolve.Ensemble{N: 1}
	ref := mustSolve(t, pr, ens, &gradsolve.Options{Method: method.Rodas5P, RTol: 1e-12, ATol: 1e-16, MaxSteps: 1_000_000})
	for _, rt := range method.AllRosenbrock() {
		o := &gradsolve.Options{Method: rt, RTol: 1e-8, ATol: 1e-14, MaxSteps: 2_000_000}
		res := mustSolve(t, pr, ens, o)
		y, r := res.Row(0), ref.Row(0)
		for _, d := range []int{0, 2} {
			if e := math.Abs(y[d]-r[d]) / math.Abs(r[d]); e > 1e-6 {
				t.Errorf("%s: y%d(1e5) = %.12g, reference %.12g (relative %.2g)", rt.Name, d+1, y[d], r[d], e)
			}
		}
		if m := y[0] + y[1] + y[2]; math.Abs(m-1) > 1e-10 {
			t.Errorf("%s: mass %.17g", rt.Name, m)
		}
		t.Logf("%s: %d accepted, %d rejected steps; y = %.10g", rt.Name, res.Stats[0].Accepted, res.Stats[0].Rejected, y)
	}
	exp, err := gradsolve.Solve(context.Background(), pr, ens, &gradsolve.Options{Method: method.Tsit5, RTol: 1e-6, ATol: 1e-10, MaxSteps: 50000})
	if err != nil {
		t.Fatal(err)
	}
	if s := exp.Status[0]; s != gradsolve.MaxStepsReached && s != gradsolve.Success {
		t.Errorf("Tsit5 on Robertson: status %v", s)
	}
	t.Logf("Tsit5: status %v after %d attempts (t reached %.4g)", exp.Status[0], exp.Stats[0].Attempts(), exp.T[0])
}

// HIRES at t = 321.8122 matches the published reference solution of the
// IVP test set to 1e-6 relative at rtol = 1e-10 (the reference is given
// to 16 digits).
func TestHIRES(t *testing.T) {
	pr := systems.HIRES()
	res := mustSolve(t, pr, &gradsolve.Ensemble{N: 1}, &gradsolve.Options{Method: method.Rodas5P, RTol: 1e-10, ATol: 1e-14})
	want := systems.HIRESReference
	for d, v := range res.Row(0) {
		if e := math.Abs(v-want[d]) / math.Abs(want[d]); e > 1e-6 {
			t.Errorf("y%d(321.8122) = %.12g, reference %.12g (relative %.2g)", d+1, v, want[d], e)
		}
	}
	t.Logf("Rodas5P: %d accepted, %d rejected", res.Stats[0].Accepted, res.Stats[0].Rejected)
}

func TestRosenbrockInputErrors(t *testing.T) {
	rob := systems.Robertson()
	noJac := &gradsolve.Problem{Name: "nojac", Dim: 1, F: blowup.F, NumParams: 1, P: []float64{0.1}, Y0: []float64{1}, T1: 1}
	cases := []struct {
		prob *gradsolve.Problem
		o    *gradsolve.Options
		want string
	}{
		{rob, &gradsolve.Options{Method: method.Tsit5, Engine: "cpu-ros"}, `Options.Engine = "cpu-ros" does not run Tsit5 (of the explicit Runge–Kutta family)`},
		{noJac, &gradsolve.Options{Method: method.Rodas5P}, "Jacobian program"},
		{rob, &gradsolve.Options{Method: method.Rodas5P, Sens: &gradsolve.Sensitivity{Wrt: []gradsolve.Wrt{gradsolve.Param(0)}}}, "second-derivative programs"},
		{rob, &gradsolve.Options{Method: method.Rodas5P, Sens: &gradsolve.Sensitivity{Wrt: []gradsolve.Wrt{gradsolve.Param(0)}, ErrorTest: true}}, "ErrorTest"},
	}
	for _, c := range cases {
		_, err := gradsolve.Solve(context.Background(), c.prob, &gradsolve.Ensemble{N: 1}, c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one mentioning %q", err, c.want)
		}
	}
	if _, err := gradsolve.Record(context.Background(), rob, &gradsolve.Ensemble{N: 1}, nil); err == nil || !strings.Contains(err.Error(), "JVPVJP") {
		t.Errorf("Record of a stiff built-in without second-derivative programs: %v", err)
	}
}

// Forward sensitivities of the Rosenbrock methods: the state (and so the
// mesh) is bitwise that of a plain solve, and the sensitivities are the
// exact derivative of the discrete map, so on a fixed mesh (fixed steps)
// they match central differences of the solution: Robertson with respect
// to (k1, k3), HIRES with respect to y0, to 1e-5 relative to the largest
// entry of each column (the bound; δ = 1e-6·scale keeps the
// differences' truncation and rounding errors near 1e-8 of it). The
// fixed steps are fine enough (h = 1e-4 through Robertson's fast initial
// transient, 5e-3 on HIRES) that the discrete map is smooth: with no
// error control, steps far beyond the accuracy limit in that transient
// (h = 2e-3) drive y2 negative and the fixed-step solution diverges
// (observed for Rodas5P), and difference quotients mean nothing.
func TestRosenbrockSensitivities(t *testing.T) {
	cases := []struct {
		file string
		t1   float64
		n    int
		wrt  []gradsolve.Wrt
	}{
		{"robertson", 0.5, 5000, []gradsolve.Wrt{gradsolve.Param(0), gradsolve.Param(2)}},
		{"hires", 5, 1000, []gradsolve.Wrt{gradsolve.InitialValue(0), gradsolve.InitialValue(3), gradsolve.InitialValue(7)}},
	}
	for _, c := range cases {
		pr := exampleProblem(t, c.file)
		ens := &gradsolve.Ensemble{N: 1, T0: []float64{0}, T1: []float64{c.t1}}
		for _, rt := range method.AllRosenbrock() {
			// Adaptive: sensitivities leave the state alone.
			o := gradsolve.Options{Method: rt, RTol: 1e-8, ATol: 1e-12}
			plain := mustSolve(t, pr, ens, &o)
			so := o
			so.Sens = &gradsolve.Sensitivity{Wrt: c.wrt}
			sens := mustSolve(t, pr, ens, &so)
			if !testutil.IdenticalBits(plain.Y, sens.Y) || plain.Stats[0].Accepted != sens.Stats[0].Accepted {
				t.Errorf("%s %s: sensitivities changed the solve", c.file, rt.Name)
			}
			// Fixed mesh against central differences.
			h := c.t1 / float64(c.n)
			fixed := gradsolve.Options{Method: rt, RTol: 1, ATol: 1e6, H0: h, HMax: h}
			fo := fixed
			fo.Sens = &gradsolve.Sensitivity{Wrt: c.wrt}
			res := mustSolve(t, pr, ens, &fo)
			ns := len(c.wrt)
			for col, w := range c.wrt {
				y0, p := append([]float64(nil), pr.Y0...), append([]float64(nil), pr.P...)
				x := &p
				if w.Y0 {
					x = &y0
				}
				orig := (*x)[w.Index]
				delta := 1e-6 * math.Max(1e-3, math.Abs(orig))
				(*x)[w.Index] = orig + delta
				plus := mustSolve(t, pr, &gradsolve.Ensemble{N: 1, Y0: y0, P: p, T0: ens.T0, T1: ens.T1}, &fixed)
				(*x)[w.Index] = orig - delta
				minus := mustSolve(t, pr, &gradsolve.Ensemble{N: 1, Y0: y0, P: p, T0: ens.T0, T1: ens.T1}, &fixed)
				var scale float64
				for d := range pr.Dim {
					scale = math.Max(scale, math.Abs(res.S[d*ns+col]))
				}
				for d := range pr.Dim {
					fd := (plus.Y[d] - minus.Y[d]) / (2 * delta)
					if got := res.S[d*ns+col]; math.Abs(got-fd) > 1e-5*scale {
						t.Errorf("%s %s: ∂y%d/∂%v = %.10g, central difference %.10g", c.file, rt.Name, d+1, w, got, fd)
					}
				}
			}
		}
	}
}

// On a non-stiff problem Rodas5P's sensitivities converge to the same
// derivative as the explicit methods': the halo fixture S(20) of
// applications.md §A.7 to 1e-6 relative at rtol = atol = 1e-10.
func TestRodas5PHaloSensitivityFixture(t *testing.T) {
	pr := exampleProblem(t, "halo")
	want := [6][2]float64{
		{15.88832639, -0.65317829}, {11.55977778, 3.61059929}, {4.02397261, -9.90755050},
		{-25.50727724, -0.43875418}, {7.92695133, 2.89128449}, {5.39269401, -9.43054421},
	}
	res := mustSolve(t, pr, &gradsolve.Ensemble{N: 1}, &gradsolve.Options{Method: method.Rodas5P, RTol: 1e-10, ATol: 1e-10,
		Sens: &gradsolve.Sensitivity{Wrt: []gradsolve.Wrt{gradsolve.Param(0), gradsolve.Param(1)}}})
	for d := range 6 {
		for c := range 2 {
			if e := math.Abs(res.S[d*2+c]-want[d][c]) / math.Abs(want[d][c]); e > 1e-6 {
				t.Errorf("S[%d][%d] = %.10g, fixture %.10g (relative %.2g)", d, c, res.S[d*2+c], want[d][c], e)
			}
		}
	}
}

// The agreement check for the Rosenbrock methods, on the
// adaptive mesh: Robertson with respect to (k1, k3) and HIRES with
// respect to y0. The replay at the recording point reproduces the solve
// bit for bit; the reverse replay agrees with the forward sensitivities
// to 1e-10 relative (both exact derivatives of the same discrete map,
// computed in different orders, through LU solves with W of condition up
// to ~1e4) and with central differences of the replay on the same mesh
// to 1e-5.
func TestRosenbrockReverseAgrees(t *testing.T) {
	cases := []struct {
		file string
		t1   float64
		wrt  []gradsolve.Wrt
	}{
		{"robertson", 100, []gradsolve.Wrt{gradsolve.Param(0), gradsolve.Param(2)}},
		{"hires", 321.8122, []gradsolve.Wrt{gradsolve.InitialValue(0), gradsolve.InitialValue(1), gradsolve.InitialValue(5), gradsolve.InitialValue(7)}},
	}
	for _, c := range cases {
		pr := exampleProblem(t, c.file)
		dim := pr.Dim
		save := []float64{c.t1 / 3, c.t1}
		ens := &gradsolve.Ensemble{N: 1, T0: []float64{0}, T1: []float64{c.t1}, Save: save}
		for _, rt := range method.AllRosenbrock() {
			o := gradsolve.Options{Method: rt, RTol: 1e-7, ATol: 1e-11}
			plain := mustSolve(t, pr, ens, &o)
			rec := mustRecord(t, pr, ens, &o)
			rep, err := rec.Replay(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !testutil.IdenticalBits(plain.Y, rec.Result.Y) || !testutil.IdenticalBits(plain.Y, rep.Y) || !testutil.IdenticalBits(plain.Saved, rep.Saved) {
				t.Errorf("%s %s: recording or replay differs from the solve", c.file, rt.Name)
			}
			cot := gradsolve.Cotangents{Y: make([]float64, dim), Saved: make([]float64, 2*dim)}
			for d := range dim {
				cot.Y[d] = 1 + 0.1*float64(d)
				cot.Saved[d] = 0.5 - 0.05*float64(d)
			}
			g, err := rec.Gradient(context.Background(), cot)
			if err != nil {
				t.Fatal(err)
			}
			so := o
			so.Sens = &gradsolve.Sensitivity{Wrt: c.wrt}
			fw := mustSolve(t, pr, ens, &so)
			ns := len(c.wrt)
			loss := func(res *gradsolve.Result) float64 {
				var l float64
				for d := range dim {
					l += cot.Y[d]*res.Y[d] + cot.Saved[d]*res.Saved[d] + cot.Saved[dim+d]*res.Saved[dim+d]
				}
				return l
			}
			for col, w := range c.wrt {
				var fwd float64
				for d := range dim {
					fwd += cot.Y[d] * fw.S[d*ns+col]
					for k := range 2 {
						fwd += cot.Saved[k*dim+d] * fw.SavedS[(k*dim+d)*ns+col]
					}
				}
				var rev float64
				if w.Y0 {
					rev = g.Y0[w.Index]
				} else {
					rev = g.P[w.Index]
				}
				if math.Abs(rev-fwd) > 1e-10*math.Max(math.Abs(fwd), 1e-300) {
					t.Errorf("%s %s: dL/d%v reverse %.15g, forward %.15g", c.file, rt.Name, w, rev, fwd)
				}
				y0, p := append([]float64(nil), pr.Y0...), append([]float64(nil), pr.P...)
				x := &p
				if w.Y0 {
					x = &y0
				}
				orig := (*x)[w.Index]
				delta := 1e-6 * math.Max(1e-3, math.Abs(orig))
				(*x)[w.Index] = orig + delta
				rp, _ := rec.Replay(context.Background(), &gradsolve.Point{Y0: y0, P: p})
				lp := loss(rp)
				(*x)[w.Index] = orig - delta
				rm, _ := rec.Replay(context.Background(), &gradsolve.Point{Y0: y0, P: p})
				fd := (lp - loss(rm)) / (2 * delta)
				if math.Abs(fd-rev) > 1e-5*math.Max(math.Abs(rev), 1e-300) {
					t.Errorf("%s %s: dL/d%v reverse %.10g, central difference of the replay %.10g", c.file, rt.Name, w, rev, fd)
				}
			}
			if _, err := rec.Replay(context.Background(), &gradsolve.Point{Y0: pr.Y0, P: pr.P}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// Dense save times (Rodas5P's continuous extension, order 4) agree with
// re-stepped ones to rtol = 1e-8 — each differs from the true solution
// by at most one step's local error, which the controller keeps below
// rtol (observed 1e-11) — leave the mesh alone, and differentiate
// exactly: the
// reverse replay with dense saves agrees with the forward sensitivities
// at those saves to 1e-10.
func TestDenseSave(t *testing.T) {
	pr := exampleProblem(t, "hires")
	save := []float64{1, 10.5, 100, 250}
	ens := &gradsolve.Ensemble{N: 1, Save: save}
	for _, rt := range method.AllRosenbrock() {
		o := gradsolve.Options{Method: rt, RTol: 1e-8, ATol: 1e-12}
		re := mustSolve(t, pr, ens, &o)
		do := o
		do.DenseSave = true
		de := mustSolve(t, pr, ens, &do)
		if !testutil.IdenticalBits(re.Y, de.Y) || re.Stats[0].Accepted != de.Stats[0].Accepted {
			t.Errorf("%s: dense saves changed the solve", rt.Name)
		}
		for k := range save {
			e := relErr(de.SavedRow(0, k), re.SavedRow(0, k))
			t.Logf("%s save %g: dense vs re-step %.2g", rt.Name, save[k], e)
			if e > 1e-8 {
				t.Errorf("%s: save %g: dense and re-stepped differ by %.2g relative", rt.Name, save[k], e)
			}
		}
		rec := mustRecord(t, pr, ens, &do)
		cot := gradsolve.Cotangents{Y: make([]float64, 8), Saved: make([]float64, 4*8)}
		for i := range cot.Saved {
			cot.Saved[i] = float64(i%7) - 3
		}
		g, err := rec.Gradient(context.Background(), cot)
		if err != nil {
			t.Fatal(err)
		}
		so := do
		wrt := []gradsolve.Wrt{gradsolve.InitialValue(0), gradsolve.InitialValue(7)}
		so.Sens = &gradsolve.Sensitivity{Wrt: wrt}
		fw := mustSolve(t, pr, ens, &so)
		for c, w := range wrt {
			var fwd float64
			for k := range save {
				for d := range 8 {
					fwd += cot.Saved[k*8+d] * fw.SavedS[(k*8+d)*2+c]
				}
			}
			if rev := g.Y0[w.Index]; math.Abs(rev-fwd) > 1e-10*math.Abs(fwd) {
				t.Errorf("%s: dL/d%v reverse %.15g, forward %.15g", rt.Name, w, rev, fwd)
			}
		}
	}
	if _, err := gradsolve.Solve(context.Background(), exampleProblem(t, "lorenz"), &gradsolve.Ensemble{N: 1}, &gradsolve.Options{DenseSave: true}); err == nil || !strings.Contains(err.Error(), "DenseSave") {
		t.Errorf("DenseSave with an explicit method: %v", err)
	}
}

// Rosenbrock methods integrate backwards in time too, with save times
// ordered in that direction: the Kepler orbit one period back returns to
// its start (the exact solution is periodic) to the tolerance's accuracy.
func TestRosenbrockBackwards(t *testing.T) {
	pr := exampleProblem(t, "kepler")
	ens := &gradsolve.Ensemble{N: 1, T0: []float64{0}, T1: []float64{-2 * math.Pi}, Save: []float64{-math.Pi, -2 * math.Pi}}
	for _, rt := range method.AllRosenbrock() {
		res := mustSolve(t, pr, ens, &gradsolve.Options{Method: rt, RTol: 1e-9, ATol: 1e-12})
		// One period of an e = 0.5 orbit: each step's local error is held
		// to ≈ rtol = 1e-9 and the phase error adds them up over the steps
		// (Rosenbrock23, second order: ≈ 6300 steps, 3.2e-5 observed, the
		// same as forwards; Rodas5P: ≈ 380 steps, 3.5e-9), so the bound is
		// 10·steps·rtol.
		bound := 10 * float64(res.Stats[0].Accepted) * 1e-9
		if e := relErr(res.Row(0), pr.Y0); e > bound {
			t.Errorf("%s: after one period backwards, relative error %.2g", rt.Name, e)
		}
		if !testutil.IdenticalBits(res.SavedRow(0, 1), res.Row(0)) {
			t.Errorf("%s: the save at t1 differs from the final state", rt.Name)
		}
		want := make([]float64, 4)
		if err := systems.KeplerExact(pr.Y0, pr.P, -math.Pi, want); err != nil {
			t.Fatal(err)
		}
		if e := relErr(res.SavedRow(0, 0), want); e > bound {
			t.Errorf("%s: at t = -π relative error %.2g", rt.Name, e)
		}
	}
}

// The reverse replay of a recording with dense saves runs in lanes on
// cpu-ros-lanes (the steps holding save-time cotangents on the scalar
// replayer, the others in lanes) and gives cpu-ros's gradient bit for
// bit, and its forward replay cpu-ros's states: 12 Robertson
// trajectories (more than the lanes) with save times inside steps.
func TestDenseSaveInLanes(t *testing.T) {
	pr := exampleProblem(t, "robertson")
	const n = 12
	p := make([]float64, 0, 3*n)
	for i := range n {
		p = append(p, 0.04*(1+0.05*float64(i)), 3e7, 1e4)
	}
	ens := &gradsolve.Ensemble{N: n, P: p, Save: []float64{0.5, 3, 40, 700}}
	var grads [][]float64
	for _, e := range []string{"cpu-ros", "cpu-ros-lanes"} {
		o := gradsolve.Options{Method: method.Rodas5P, RTol: 1e-7, ATol: 1e-10, DenseSave: true, Engine: e}
		rec, err := gradsolve.Record(context.Background(), pr, ens, &o)
		if err != nil {
			t.Skipf("%s: %v", e, err)
		}
		if rec.Result.Engine != e {
			t.Fatalf("the recording ran on %s, want %s", rec.Result.Engine, e)
		}
		cot := gradsolve.Cotangents{Y: make([]float64, n*3), Saved: make([]float64, n*4*3)}
		for i := range cot.Saved {
			cot.Saved[i] = float64(i%5) - 2
		}
		for i := range cot.Y {
			cot.Y[i] = 1
		}
		rp, err := rec.Replay(context.Background(), &gradsolve.Point{P: p})
		if err != nil {
			t.Fatal(err)
		}
		g, err := rec.Gradient(context.Background(), cot)
		if err != nil {
			t.Fatal(err)
		}
		grads = append(grads, append(append(append([]float64(nil), g.P...), g.Y0...), append(rp.Y, rp.Saved...)...))
	}
	testutil.CheckBits(t, "gradient and replay with DenseSave, cpu-ros-lanes against cpu-ros", grads[1], grads[0])
}
