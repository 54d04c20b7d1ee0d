package gradsolve_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/router"
)

// A rate constant of 1e4 next to weights of order 0.3 and a bias at
// zero: the example for Shift.
const shiftModel = `name shift
state y = 1, z = 0
param k3 = 1e4, w1 = 0.3, w2 = 0.25, b = 0
span 0 1
y' = -w1*y + w2*z + b
z' = w1*y - w2*z - z/k3
`

// Shift measures each quantity against its own size: w1 = 0.3 moved by
// 0.2 reads 0.2/0.3 next to k3 = 1e4 (the example, where the
// old measure against the largest parameter read 2e-5); a bias recorded
// at zero reads its move over ShiftParamFloor, an initial value
// recorded at zero its move over atol; nothing moved reads 0, never
// NaN. The expected values are the formula's, evaluated in the same
// floating-point operations (|x − x_rec| / max(|x_rec|, floor)), so
// they hold to the last bit.
func TestShiftPerComponent(t *testing.T) {
	pr := sourceProblem(t, "test", shiftModel)
	atol := 1e-9
	base := []float64{1e4, 0.3, 0.25, 0}
	moved := func(j int, v float64) []float64 {
		p := append([]float64(nil), base...)
		p[j] = v
		return p
	}
	rel := func(x, xr, floor float64) float64 { return math.Abs(x-xr) / math.Max(math.Abs(xr), floor) }
	cases := []struct {
		name  string
		pt    gradsolve.Point
		want  float64
		about float64 // the figure in words, to 1e-3 relative
	}{
		{"nothing moved", gradsolve.Point{P: base}, 0, 0},
		{"w1 0.3 → 0.5 next to k3 = 1e4", gradsolve.Point{P: moved(1, 0.5)}, rel(0.5, 0.3, gradsolve.ShiftParamFloor), 2.0 / 3},
		{"k3 moved by 1%", gradsolve.Point{P: moved(0, 1.01e4)}, rel(1.01e4, 1e4, gradsolve.ShiftParamFloor), 0.01},
		{"w1 moved by 2%, b stays at zero", gradsolve.Point{P: moved(1, 0.306)}, rel(0.306, 0.3, gradsolve.ShiftParamFloor), 0.02},
		{"b moved from zero by 1e-12", gradsolve.Point{P: moved(3, 1e-12)}, rel(1e-12, 0, gradsolve.ShiftParamFloor), 1e-4},
		{"b moved from zero by 1e-3", gradsolve.Point{P: moved(3, 1e-3)}, rel(1e-3, 0, gradsolve.ShiftParamFloor), 1e5},
		{"z0 moved from zero by 1e-12", gradsolve.Point{Y0: []float64{1, 1e-12}}, rel(1e-12, 0, atol), 1e-3},
		{"y0 moved by 3%", gradsolve.Point{Y0: []float64{1.03, 0}}, rel(1.03, 1, atol), 0.03},
	}
	for _, c := range cases {
		rec := mustRecord(t, pr, &gradsolve.Ensemble{N: 2}, &gradsolve.Options{RTol: 1e-6, ATol: atol})
		if s := rec.Shift(); s != 0 {
			t.Fatalf("shift %g at the recording point", s)
		}
		if _, err := rec.Replay(context.Background(), &c.pt); err != nil {
			t.Fatal(err)
		}
		s := rec.Shift()
		if s != c.want || math.Abs(s-c.about) > 1e-3*c.about {
			t.Errorf("%s: shift %.6g, want %.6g (about %g)", c.name, s, c.want, c.about)
		}
	}

	// ShiftWith: a typical size of 0.1 for the bias and 1 for the
	// weights measures b = 1e-3 as 1% and w1's move of 0.2 as 0.2.
	rec := mustRecord(t, pr, &gradsolve.Ensemble{N: 1}, &gradsolve.Options{RTol: 1e-6, ATol: atol})
	if _, err := rec.Replay(context.Background(), &gradsolve.Point{P: []float64{1e4, 0.5, 0.25, 1e-3}}); err != nil {
		t.Fatal(err)
	}
	s, err := rec.ShiftWith([]float64{1, 1, 1, 0.1}, nil)
	if err != nil || s != rel(0.5, 0.3, 1) {
		t.Errorf("ShiftWith: %v, %v; want %v", s, err, rel(0.5, 0.3, 1))
	}
	if s, err := rec.ShiftWith([]float64{1, 1, 1, 1}, []float64{1, 1}); err != nil || math.Abs(s-0.2) > 1e-15 {
		t.Errorf("ShiftWith with unit floors: %v, %v", s, err)
	}
	for _, c := range []struct {
		p, y []float64
		want string
	}{
		{[]float64{1}, nil, "pFloor has length 1: want NumParams = 4"},
		{nil, []float64{1, 0}, "y0Floor[1] = 0: must be finite and > 0"},
		{[]float64{1, 1, math.NaN(), 1}, nil, "pFloor[2] = NaN"},
	} {
		if _, err := rec.ShiftWith(c.p, c.y); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ShiftWith(%v, %v): %v, want %q", c.p, c.y, err, c.want)
		}
	}
}

// LeastSquaresFit over the final and the saved states with weights: the
// loss is the formula evaluated on the solve's states, and its gradient
// matches central differences of the loss on the recorded mesh
// (replayed) to 1e-6 relative (δ = 1e-6·scale: truncation δ²·L”' and
// rounding ε·L/δ are both near 1e-10 relative here).
func TestLeastSquaresFitSavedStates(t *testing.T) {
	pr := exampleProblem(t, "lorenz")
	n, dim := 3, 3
	save := []float64{0.25, 0.5, 0.75}
	K := len(save)
	ens := &gradsolve.Ensemble{N: n, P: lorenzFileParams(n), Save: save}
	final := []float64{1, -1, 2}
	saved := make([]float64, n*K*dim)
	savedW := make([]float64, K*dim)
	for i := range saved {
		saved[i] = float64(i%5) - 2
	}
	for i := range savedW {
		savedW[i] = 0.5 + float64(i%3)
	}
	fits := map[string]gradsolve.FitData{
		"saved":              {Saved: saved},
		"saved, weighted":    {Saved: saved, SavedWeights: savedW},
		"saved and final":    {Saved: saved, SavedWeights: savedW[:dim], Final: final, FinalWeights: []float64{2, 0, 1}},
		"saved, shared rows": {Saved: saved[:K*dim], Final: final},
	}
	for name, fit := range fits {
		loss := gradsolve.LeastSquaresFit(fit)
		l, g, rec, err := gradsolve.LossGradient(context.Background(), pr, ens, &gradsolve.Options{RTol: 1e-9, ATol: 1e-12, Mode: router.Reverse}, loss)
		if err != nil {
			t.Fatal(err)
		}
		// The loss by its formula.
		res := rec.Result
		var want float64
		for i := range n {
			for k := range K {
				for d, v := range res.SavedRow(i, k) {
					w := 1.0
					switch len(fit.SavedWeights) {
					case dim:
						w = fit.SavedWeights[d]
					case K * dim:
						w = fit.SavedWeights[k*dim+d]
					}
					r := v - fit.Saved[(i*K+k)*dim%len(fit.Saved)+d]
					want += 0.5 * w * r * r
				}
			}
			if fit.Final != nil {
				for d, v := range res.Row(i) {
					w := 1.0
					if fit.FinalWeights != nil {
						w = fit.FinalWeights[d]
					}
					want += 0.5 * w * (v - fit.Final[d]) * (v - fit.Final[d])
				}
			}
		}
		if math.Abs(l-want) > 1e-13*want {
			t.Errorf("%s: loss %.16g, formula %.16g", name, l, want)
		}
		// dL/dσ of trajectory 1 and dL/dz0 of trajectory 2.
		p := lorenzFileParams(n)
		y0 := []float64{1, 0, 0, 1, 0, 0, 1, 0, 0}
		at := func() float64 {
			res, err := rec.Replay(context.Background(), &gradsolve.Point{P: p, Y0: y0})
			if err != nil {
				t.Fatal(err)
			}
			v, _, err := loss(res)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		for _, c := range []struct {
			what string
			x    *float64
			got  float64
		}{{"dL/dsigma", &p[1*3+1], g.P[1*3+1]}, {"dL/dz0", &y0[2*3+2], g.Y0[2*3+2]}} {
			x0 := *c.x
			delta := 1e-6 * math.Max(1, math.Abs(x0))
			*c.x = x0 + delta
			lp := at()
			*c.x = x0 - delta
			lm := at()
			*c.x = x0
			fd := (lp - lm) / (2 * delta)
			if math.Abs(c.got-fd) > 1e-6*math.Max(1, math.Abs(fd)) {
				t.Errorf("%s: %s = %.10g, central difference %.10g", name, c.what, c.got, fd)
			}
		}
	}

	// Bad fits, each named in the message.
	res := mustSolve(t, pr, ens, nil)
	for _, c := range []struct {
		fit  gradsolve.FitData
		want string
	}{
		{gradsolve.FitData{}, "neither FitData.Final nor FitData.Saved is set"},
		{gradsolve.FitData{Saved: saved[:4]}, "FitData.Saved has length 4: want K·Dim = 9 or N·K·Dim = 27"},
		{gradsolve.FitData{Saved: saved, SavedWeights: []float64{1, 2}}, "FitData.SavedWeights has length 2: want Dim = 3 or K·Dim = 9 or N·K·Dim = 27"},
		{gradsolve.FitData{Saved: saved, SavedWeights: []float64{1, -2, 1}}, "FitData.SavedWeights[1] = -2: must be finite and ≥ 0"},
		{gradsolve.FitData{Final: []float64{1, math.Inf(1), 0}}, "FitData.Final[1] = +Inf: must be finite"},
		{gradsolve.FitData{Saved: saved, FinalWeights: []float64{1, 1, 1}}, "FitData.FinalWeights is set without FitData.Final"},
	} {
		if _, _, err := gradsolve.LeastSquaresFit(c.fit)(res); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.fit, err, c.want)
		}
	}
	noSave := mustSolve(t, pr, &gradsolve.Ensemble{N: n, P: lorenzFileParams(n)}, nil)
	if _, _, err := gradsolve.LeastSquaresFit(gradsolve.FitData{Saved: saved})(noSave); err == nil || !strings.Contains(err.Error(), "no save times") {
		t.Errorf("saved targets without save times: %v", err)
	}
}

// Options.GradientWrt: forward mode integrates the columns asked for
// and no others (the loss sees NS = 1 for one column), the router counts
// them, and the entries not asked for are NaN in both modes. The asked
// column is bitwise the same as with every column (each sensitivity
// column is integrated on its own: Sensitivity), and the reverse replay
// agrees to 1e-12 relative (both exact derivatives of the same discrete
// map).
func TestGradientWrt(t *testing.T) {
	pr := exampleProblem(t, "halo")
	ens := &gradsolve.Ensemble{N: 2, P: []float64{1, 0.7, 0.2, 1, 0.8, 0.2}, Save: []float64{5, 12}}
	fit := gradsolve.FitData{Saved: make([]float64, 2*6), Final: make([]float64, 6)}
	for i := range fit.Saved {
		fit.Saved[i] = 0.1 * float64(i%7)
	}
	var ns int
	loss := func(res *gradsolve.Result) (float64, gradsolve.Cotangents, error) {
		ns = res.NS
		return gradsolve.LeastSquaresFit(fit)(res)
	}
	o := gradsolve.Options{RTol: 1e-9, ATol: 1e-9, Mode: router.Forward}
	_, all, _, err := gradsolve.LossGradient(context.Background(), pr, ens, &o, loss)
	if err != nil {
		t.Fatal(err)
	}
	if ns != 9 {
		t.Errorf("every column: forward mode integrated %d columns, want 9", ns)
	}
	q := gradsolve.Param(1)
	o.GradientWrt = []gradsolve.Wrt{q}
	for _, mode := range []router.Mode{router.Auto, router.Forward, router.Reverse} {
		o.Mode = mode
		ns = -1
		_, g, _, err := gradsolve.LossGradient(context.Background(), pr, ens, &o, loss)
		if err != nil {
			t.Fatal(err)
		}
		switch g.Decision.Mode {
		case router.Forward:
			if ns != 1 {
				t.Errorf("%v: forward mode integrated %d columns, want 1", mode, ns)
			}
		case router.Reverse:
			if ns != 0 {
				t.Errorf("%v: the reverse replay's solve had %d sensitivity columns", mode, ns)
			}
		}
		if mode == router.Auto && g.Decision.Mode != router.Forward {
			t.Errorf("auto with one column chose %+v", g.Decision)
		}
		if !strings.Contains(g.Decision.Reason, "(1 columns)") {
			t.Errorf("%v: the router did not count one column: %s", mode, g.Decision.Reason)
		}
		for i := range 2 {
			for j := range 3 {
				v := g.P[i*3+j]
				switch {
				case j != 1 && !math.IsNaN(v):
					t.Errorf("%v: dL/dp[%d] of trajectory %d = %v, not asked for: want NaN", mode, j, i, v)
				case j == 1 && g.Decision.Mode == router.Forward && v != all.P[i*3+1]:
					t.Errorf("%v: dL/dq = %.17g, with every column %.17g", mode, v, all.P[i*3+1])
				case j == 1 && math.Abs(v-all.P[i*3+1]) > 1e-12*math.Abs(all.P[i*3+1]):
					t.Errorf("%v: dL/dq = %.17g, forward %.17g", mode, v, all.P[i*3+1])
				}
			}
			for d := range 6 {
				if !math.IsNaN(g.Y0[i*6+d]) {
					t.Errorf("%v: dL/dy0[%d] = %v, not asked for", mode, d, g.Y0[i*6+d])
				}
			}
		}
	}
	for _, c := range []struct {
		wrt  []gradsolve.Wrt
		want string
	}{
		{[]gradsolve.Wrt{}, "Options.GradientWrt is empty"},
		{[]gradsolve.Wrt{gradsolve.Param(3)}, "Options.GradientWrt[0]: parameter index 3 out of range [0, 3)"},
		{[]gradsolve.Wrt{gradsolve.InitialValue(1), gradsolve.InitialValue(1)}, "Options.GradientWrt[1]: y0[1] listed twice"},
	} {
		o := gradsolve.Options{GradientWrt: c.wrt}
		if _, _, _, err := gradsolve.LossGradient(context.Background(), pr, ens, &o, loss); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.wrt, err, c.want)
		}
	}
}

// Gradient.Decision.Engine names the engine that ran (Result.Engine of
// the solve the loss saw), in both modes, for every method, for the
// automatic choice on a stiff problem and for an explicit method named
// on one.
func TestDecisionNamesTheEngineThatRan(t *testing.T) {
	lorenz, rober := exampleProblem(t, "lorenz"), exampleProblem(t, "robertson")
	type run struct {
		name string
		pr   *gradsolve.Problem
		ens  *gradsolve.Ensemble
		o    gradsolve.Options
	}
	var runs []run
	for _, tb := range method.All() {
		runs = append(runs, run{tb.Name, lorenz, &gradsolve.Ensemble{N: 1}, gradsolve.Options{Method: tb}})
	}
	for _, rt := range method.AllRosenbrock() {
		runs = append(runs, run{rt.Name, lorenz, &gradsolve.Ensemble{N: 1}, gradsolve.Options{Method: rt}})
	}
	short := &gradsolve.Ensemble{N: 1, T0: []float64{0}, T1: []float64{1e-3}}
	runs = append(runs,
		run{"stiff, automatic", rober, short, gradsolve.Options{}},
		run{"stiff, Tsit5 named", rober, short, gradsolve.Options{Method: method.Tsit5}})
	for _, r := range runs {
		for _, mode := range []router.Mode{router.Forward, router.Reverse} {
			var ran string
			loss := func(res *gradsolve.Result) (float64, gradsolve.Cotangents, error) {
				ran = res.Engine
				return gradsolve.SumSquares()(res)
			}
			o := r.o
			o.Mode = mode
			_, g, _, err := gradsolve.LossGradient(context.Background(), r.pr, r.ens, &o, loss)
			if err != nil {
				t.Fatal(err)
			}
			if g.Decision.Engine != ran || !strings.Contains(g.Decision.Reason, "engine "+ran) {
				t.Errorf("%s, %v: Decision %+v, but %s ran", r.name, mode, g.Decision, ran)
			}
		}
	}
}
