package main

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/npy"
	"github.com/gradsolve/gradsolve/sym/parse"
	"github.com/gradsolve/gradsolve/sym/tape"
)

func readNpy(t *testing.T, path string, shape ...int) []float64 {
	t.Helper()
	a, err := npy.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Check(path, shape); err != nil {
		t.Fatal(err)
	}
	return a.Data
}

func lorenzFile(t *testing.T) *gradsolve.Problem {
	t.Helper()
	m, err := parse.ParseFile("../../examples/lorenz.ode")
	if err != nil {
		t.Fatal(err)
	}
	s, err := tape.Build(m)
	if err != nil {
		t.Fatal(err)
	}
	return s.Problem()
}

// --sens writes sens.npy (n×dim×m, columns as given) and sens_saved.npy,
// equal to the Go API's.
func TestSensFlag(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := runCmd("solve", "../../examples/lorenz.ode", "--n", "3", "--param", "rho=10:20", "--sens", "beta,y0.z,rho",
		"--saveat", "0.5,1", "--out", dir, "-q"); err != nil {
		t.Fatal(err)
	}
	s := readNpy(t, filepath.Join(dir, "sens.npy"), 3, 3, 3)
	ss := readNpy(t, filepath.Join(dir, "sens_saved.npy"), 3, 2, 3, 3)
	p := []float64{10, 10, 8.0 / 3, 15, 10, 8.0 / 3, 20, 10, 8.0 / 3}
	res, err := gradsolve.Solve(context.Background(), lorenzFile(t), &gradsolve.Ensemble{N: 3, P: p, Save: []float64{0.5, 1}},
		&gradsolve.Options{RTol: 1e-8, ATol: 1e-11, Sens: &gradsolve.Sensitivity{Wrt: []gradsolve.Wrt{gradsolve.Param(2), gradsolve.InitialValue(2), gradsolve.Param(0)}}})
	if err != nil {
		t.Fatal(err)
	}
	if !equalBits(s, res.S) || !equalBits(ss, res.SavedS) {
		t.Error("sens.npy or sens_saved.npy differ from the Go API's sensitivities")
	}
	for _, c := range []struct{ spec, want string }{{"nope", `no parameter "nope"`}, {"y0.w", `no state "w"`}} {
		_, _, err := runCmd("solve", "../../examples/lorenz.ode", "--sens", c.spec, "-q")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--sens %s: %v", c.spec, err)
		}
	}
}

func equalBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// grad writes the gradient of the loss by the reverse replay: with
// --loss sumsq it equals the Go API's, and --cot with the final states
// as cotangents gives the same gradient (L = ½Σy² has cotangent y).
func TestGradCommand(t *testing.T) {
	dir := t.TempDir()
	out, _, err := runCmd("grad", "../../examples/lorenz.ode", "--n", "4", "--param", "rho=5:25", "--loss", "sumsq", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "loss") {
		t.Errorf("summary lacks the loss:\n%s", out)
	}
	gp := readNpy(t, filepath.Join(dir, "grad_params.npy"), 4, 3)
	gy := readNpy(t, filepath.Join(dir, "grad_y0.npy"), 4, 3)
	yf := readNpy(t, filepath.Join(dir, "y_final.npy"), 4, 3)
	p := make([]float64, 0, 12)
	for i := range 4 {
		p = append(p, 5+20*float64(i)/3, 10, 8.0/3)
	}
	_, g, _, err := gradsolve.LossGradient(context.Background(), lorenzFile(t), &gradsolve.Ensemble{N: 4, P: p},
		&gradsolve.Options{RTol: 1e-8, ATol: 1e-11}, gradsolve.SumSquares())
	if err != nil {
		t.Fatal(err)
	}
	if !equalBits(gp, g.P) || !equalBits(gy, g.Y0) {
		t.Error("gradients differ from the Go API's")
	}
	cotPath := filepath.Join(dir, "cot.npy")
	if err := npy.WriteFloat64File(cotPath, []int{4, 3}, yf); err != nil {
		t.Fatal(err)
	}
	dir2 := t.TempDir()
	if _, _, err := runCmd("grad", "../../examples/lorenz.ode", "--n", "4", "--param", "rho=5:25", "--cot", cotPath, "--out", dir2, "-q"); err != nil {
		t.Fatal(err)
	}
	if !equalBits(readNpy(t, filepath.Join(dir2, "grad_params.npy"), 4, 3), gp) {
		t.Error("--cot y_final gives another gradient than --loss sumsq")
	}
	// Forward mode: the same gradient to rounding (1e-12 relative).
	dir3 := t.TempDir()
	if _, _, err := runCmd("grad", "../../examples/lorenz.ode", "--n", "4", "--param", "rho=5:25", "--loss", "sumsq", "--mode", "forward", "--out", dir3, "-q"); err != nil {
		t.Fatal(err)
	}
	for i, v := range readNpy(t, filepath.Join(dir3, "grad_params.npy"), 4, 3) {
		if math.Abs(v-gp[i]) > 1e-12*math.Max(1, math.Abs(gp[i])) {
			t.Errorf("forward mode gradient %d: %v, reverse %v", i, v, gp[i])
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--loss", "sumsq", "--cot", cotPath}, "exactly one"},
		{nil, "exactly one"},
		{[]string{"--loss", "huber"}, "known losses"},
		{[]string{"--loss", "sumsq", "--mode", "sideways"}, "unknown mode"},
		{[]string{"--n", "2", "--cot", cotPath}, "shape (4, 3): want (2, 3)"},
	} {
		_, _, err := runCmd(append([]string{"grad", "../../examples/lorenz.ode", "-q"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}
