package gradsolve_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve"
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
		l, g, rec, err := gradsolve.LossGradient(context.Background(), pr, ens, &gradsolve.Options{RTol: 1e-9, ATol: 1e-12}, loss)
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
