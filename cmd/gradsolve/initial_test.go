package main

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/npy"
	"github.com/gradsolve/gradsolve/sym/parse"
	"github.com/gradsolve/gradsolve/sym/tape"
)

// A --param sweep of a file whose initial state depends on the
// parameters starts each trajectory from y0 of its own parameters:
// examples/kepler_ecc.ode swept in e returns after one period to its own
// pericentre (1 − e, 0, 0, sqrt((1 + e)/(1 − e))), and the result is the
// Go API's, with no Ensemble.Y0, bit for bit.
func TestParamSweepStartsFromY0OfP(t *testing.T) {
	dir := t.TempDir()
	const file = "../../examples/kepler_ecc.ode"
	if out, _, err := runCmd("solve", file, "--n", "5", "--param", "e=0:0.8", "--rtol", "1e-10", "--atol", "1e-12", "--out", dir); err != nil {
		t.Fatal(err, out)
	}
	got, err := npy.ReadFile(filepath.Join(dir, "y_final.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if err := got.Check("y_final", []int{5, 4}); err != nil {
		t.Fatal(err)
	}
	m, err := parse.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	set, err := tape.Build(m)
	if err != nil {
		t.Fatal(err)
	}
	var p []float64
	for i := range 5 {
		p = append(p, 0.8*float64(i)/4, 1)
	}
	api, err := gradsolve.Solve(context.Background(), set.Problem(), &gradsolve.Ensemble{N: 5, P: p}, &gradsolve.Options{RTol: 1e-10, ATol: 1e-12})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range api.Y {
		if math.Float64bits(v) != math.Float64bits(got.Data[i]) {
			t.Fatalf("y_final[%d] = %v from the command, %v from the Go API", i, got.Data[i], v)
		}
	}
	// After one period each orbit is back at its pericentre. Tsit5 at
	// rtol 1e-10 keeps the global error of one orbit of e ≤ 0.8 below
	// 1e-6 (measured: at most 1.6e-8, at e = 0.8).
	for i := range 5 {
		e := p[2*i]
		want := []float64{1 - e, 0, 0, math.Sqrt((1 + e) / (1 - e))}
		for d, w := range want {
			if g := got.Data[4*i+d]; math.Abs(g-w) > 1e-6*math.Max(1, math.Abs(w)) {
				t.Errorf("trajectory %d (e = %g): y_final[%d] = %.10g, want %.10g", i, e, d, g, w)
			}
		}
	}
}
