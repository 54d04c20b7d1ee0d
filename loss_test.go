package gradsolve_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/router"
)

// The ready-made losses: their gradients match central differences of
// the loss on the recorded mesh (replayed), to 1e-6 relative (δ =
// 1e-6·scale: truncation and rounding ≈ 1e-10 here).
func TestLossGradients(t *testing.T) {
	pr := exampleProblem(t, "lorenz")
	n := 5
	ens := &gradsolve.Ensemble{N: n, P: lorenzFileParams(n)}
	data := make([]float64, n*3)
	for i := range data {
		data[i] = float64(i%3) - 1
	}
	for name, loss := range map[string]gradsolve.Loss{
		"sumsq":   gradsolve.SumSquares(),
		"lsq":     gradsolve.LeastSquares(data, nil),
		"weights": gradsolve.LeastSquares(data[:3], []float64{1, 2, 0.5}),
	} {
		// The reverse route, whose recording the check replays.
		l, g, rec, err := gradsolve.LossGradient(context.Background(), pr, ens, &gradsolve.Options{RTol: 1e-9, ATol: 1e-12, Mode: router.Reverse}, loss)
		if err != nil {
			t.Fatal(err)
		}
		if l <= 0 {
			t.Errorf("%s: loss %g", name, l)
		}
		// dL/dρ of trajectory 2 (parameter 0 of examples/lorenz.ode).
		p := lorenzFileParams(n)
		at := func(rho float64) float64 {
			p[2*3] = rho
			res, err := rec.Replay(context.Background(), &gradsolve.Point{P: p})
			if err != nil {
				t.Fatal(err)
			}
			v, _, _ := loss(res)
			return v
		}
		rho := p[2*3]
		delta := 1e-6 * rho
		fd := (at(rho+delta) - at(rho-delta)) / (2 * delta)
		if got := g.P[2*3]; math.Abs(got-fd) > 1e-6*math.Max(1, math.Abs(fd)) {
			t.Errorf("%s: dL/dρ = %.10g, central difference %.10g", name, got, fd)
		}
	}
	_, _, _, err := gradsolve.LossGradient(context.Background(), pr, ens, nil, gradsolve.LeastSquares([]float64{1, 2}, nil))
	if err == nil || !strings.Contains(err.Error(), "data has length 2") {
		t.Errorf("bad data: %v", err)
	}
}

// The router picks the mode its cost model finds cheaper; forcing the
// other gives the same gradient to rounding (both are the exact
// derivative of the same discrete map: 1e-12).
func TestLossGradientModes(t *testing.T) {
	pr := exampleProblem(t, "halo")
	ens := &gradsolve.Ensemble{N: 3, P: []float64{1, 0.7, 0.2, 1, 0.8, 0.2, 1.1, 0.9, 0.25}, Save: []float64{5, 20}}
	loss := func(res *gradsolve.Result) (float64, gradsolve.Cotangents, error) {
		// L = Σ x(t1)² + Σ vz(5): uses the final and a saved state.
		cot := gradsolve.Cotangents{Y: make([]float64, len(res.Y)), Saved: make([]float64, len(res.Saved))}
		var l float64
		for i := range res.N {
			x := res.Row(i)[0]
			l += x * x
			cot.Y[i*6] = 2 * x
			l += res.SavedRow(i, 0)[5]
			cot.Saved[(i*2)*6+5] = 1
		}
		return l, cot, nil
	}
	o := &gradsolve.Options{RTol: 1e-9, ATol: 1e-9}
	lr, gr, rec, err := gradsolve.LossGradient(context.Background(), pr, ens, o, loss)
	if err != nil {
		t.Fatal(err)
	}
	if gr.Decision.Overridden || (rec != nil) != (gr.Decision.Mode == router.Reverse) || !strings.Contains(gr.Decision.Reason, "cheaper") {
		t.Errorf("auto chose %+v", gr.Decision)
	}
	fo := *o
	fo.Mode = router.Forward + router.Reverse - gr.Decision.Mode // the other mode
	lf, gf, recf, err := gradsolve.LossGradient(context.Background(), pr, ens, &fo, loss)
	if err != nil {
		t.Fatal(err)
	}
	if gf.Decision.Mode != fo.Mode || !gf.Decision.Overridden || (recf != nil) != (fo.Mode == router.Reverse) {
		t.Errorf("forced %v: %+v", fo.Mode, gf.Decision)
	}
	if lr != lf {
		t.Errorf("losses differ: %v vs %v", lr, lf)
	}
	all := func(g *gradsolve.Gradient) []float64 { return append(append([]float64(nil), g.P...), g.Y0...) }
	a, b := all(gr), all(gf)
	var scale float64
	for _, v := range a {
		scale = math.Max(scale, math.Abs(v))
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-12*scale {
			t.Errorf("gradient %d: reverse %.16g, forward %.16g", i, a[i], b[i])
		}
	}
}
