package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/engine/cpu"
	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/npy"
	"github.com/gradsolve/gradsolve/router"
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
	if !testutil.IdenticalBits(s, res.S) || !testutil.IdenticalBits(ss, res.SavedS) {
		t.Error("sens.npy or sens_saved.npy differ from the Go API's sensitivities")
	}
	for _, c := range []struct{ spec, want string }{{"nope", `no parameter "nope"`}, {"y0.w", `no state "w"`}} {
		_, _, err := runCmd("solve", "../../examples/lorenz.ode", "--sens", c.spec, "-q")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--sens %s: %v", c.spec, err)
		}
	}
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
	if !testutil.IdenticalBits(gp, g.P) || !testutil.IdenticalBits(gy, g.Y0) {
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
	if !testutil.IdenticalBits(readNpy(t, filepath.Join(dir2, "grad_params.npy"), 4, 3), gp) {
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

// readStats reads stats.json of an output directory.
func readStats(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "stats.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// writeNpy writes an array for a flag into dir and returns its path.
func writeNpy(t *testing.T, dir, name string, shape []int, data []float64) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := npy.WriteFloat64File(path, shape, data); err != nil {
		t.Fatal(err)
	}
	return path
}

// maxRelDiff returns max|a − b| / max|b|: the ∞-norm of the difference
// relative to the ∞-norm of b.
func maxRelDiff(a, b []float64) float64 {
	var num, den float64
	for i := range b {
		num = math.Max(num, math.Abs(a[i]-b[i]))
		den = math.Max(den, math.Abs(b[i]))
	}
	return num / den
}

// A loss on saved states from the command line: targets for the states
// at three save times (n×k×dim) with weights per save time and
// component, plus weighted targets for the final state. For every
// method, the reverse replay and forward sensitivities give the same
// gradient to 1e-10 in the ∞-norm relative to the largest entry of
// each file (max|rev − fwd| ≤ 1e-10·max|fwd|; both are the exact
// derivative of the same discrete map, computed in different orders:
// the differences are rounding, 5e-16 to 6e-15 here), the engine the
// router's decision names is the one that ran, and the reverse gradient
// is bitwise the Go API's (LeastSquaresFit on the same arrays).
func TestGradSavedStatesEveryMethod(t *testing.T) {
	in := t.TempDir()
	n, k, dim := 3, 3, 3
	data := make([]float64, n*k*dim)
	for i := range data {
		data[i] = float64(i%7) - 3
	}
	weights := make([]float64, k*dim)
	for i := range weights {
		weights[i] = 0.5 + float64(i%4)
	}
	final := []float64{1, -2, 20}
	finalW := []float64{1, 0, 3}
	dataPath := writeNpy(t, in, "data.npy", []int{n, k, dim}, data)
	wPath := writeNpy(t, in, "w.npy", []int{k, dim}, weights)
	fPath := writeNpy(t, in, "final.npy", []int{dim}, final)
	fwPath := writeNpy(t, in, "wfinal.npy", []int{dim}, finalW)
	base := []string{"grad", "../../examples/lorenz.ode", "--n", "3", "--param", "rho=5:25", "--saveat", "0.3,0.6,0.9",
		"--data", dataPath, "--weights", wPath, "--data-final", fPath, "--weights-final", fwPath, "-q"}
	p := make([]float64, 0, 9)
	for i := range n {
		p = append(p, 5+20*float64(i)/float64(n-1), 10, 8.0/3)
	}
	// rodas5p --dense takes the save times from the continuous
	// extension, whose adjoint is its own code path.
	for _, label := range []string{"tsit5", "dp5", "vern7", "dp8", "rosenbrock23", "rodas5p", "rodas5p --dense"} {
		meth, dense := strings.CutSuffix(label, " --dense")
		var got [2][2][]float64
		for c, mode := range []string{"reverse", "forward"} {
			dir := t.TempDir()
			args := append(base, "--method", meth, "--mode", mode, "--out", dir)
			if dense {
				args = append(args, "--dense")
			}
			if _, _, err := runCmd(args...); err != nil {
				t.Fatalf("%s %s: %v", label, mode, err)
			}
			got[c][0] = readNpy(t, filepath.Join(dir, "grad_params.npy"), n, 3)
			got[c][1] = readNpy(t, filepath.Join(dir, "grad_y0.npy"), n, dim)
			st := readStats(t, dir)
			// The recording of a reverse gradient runs in lanes where
			// they can run (it is replayed there), the sensitivities of
			// so few trajectories on the scalar engines.
			wantEngine := "cpu-erk"
			if strings.HasPrefix(meth, "ro") {
				wantEngine = "cpu-ros"
			}
			if mode == "reverse" && n >= 2 && cpu.LanesAvailable() == nil {
				wantEngine = strings.Replace(wantEngine, "erk", "lanes", 1)
				if strings.HasPrefix(meth, "ro") {
					wantEngine = "cpu-ros-lanes"
				}
			}
			if st["engine"] != wantEngine || st["router_engine"] != wantEngine || !strings.Contains(st["mode_reason"].(string), "engine "+wantEngine) {
				t.Errorf("%s %s: engine %v, router_engine %v, reason %q", label, mode, st["engine"], st["router_engine"], st["mode_reason"])
			}
			if ls := fmt.Sprint(st["loss_states"]); ls != "[final saved]" {
				t.Errorf("%s %s: loss_states %s", label, mode, ls)
			}
		}
		for f, name := range []string{"grad_params", "grad_y0"} {
			if d := maxRelDiff(got[0][f], got[1][f]); d > 1e-10 || math.IsNaN(d) {
				t.Errorf("%s: %s: reverse and forward differ by %.2e relative", label, name, d)
			} else {
				t.Logf("%s: %s: reverse − forward: %.2e relative", label, name, d)
			}
		}
		o := &gradsolve.Options{RTol: 1e-8, ATol: 1e-11, Mode: router.Reverse, DenseSave: dense}
		var err error
		if o.Method, err = method.Lookup(meth); err != nil {
			t.Fatal(err)
		}
		fit := gradsolve.FitData{Saved: data, SavedWeights: weights, Final: final, FinalWeights: finalW}
		_, g, _, err := gradsolve.LossGradient(context.Background(), lorenzFile(t), &gradsolve.Ensemble{N: n, P: p, Save: []float64{0.3, 0.6, 0.9}}, o, gradsolve.LeastSquaresFit(fit))
		if err != nil {
			t.Fatal(err)
		}
		if !testutil.IdenticalBits(got[0][0], g.P) || !testutil.IdenticalBits(got[0][1], g.Y0) {
			t.Errorf("%s: the command's reverse gradient differs from the Go API's", label)
		}
	}

	// --cot with saved-state cotangents (and --cot-final) is the
	// Go API's Recording.Gradient with the same Cotangents, bit for bit.
	cotF := []float64{1, 0, -1, 0.5, 0.5, 0.5, 0, 2, 0}
	cotPath := writeNpy(t, in, "cot.npy", []int{n, k, dim}, data)
	cotFPath := writeNpy(t, in, "cotf.npy", []int{n, dim}, cotF)
	dir := t.TempDir()
	if _, _, err := runCmd("grad", "../../examples/lorenz.ode", "--n", "3", "--param", "rho=5:25", "--saveat", "0.3,0.6,0.9",
		"--cot", cotPath, "--cot-final", cotFPath, "--mode", "reverse", "--out", dir, "-q"); err != nil {
		t.Fatal(err)
	}
	rec, err := gradsolve.Record(context.Background(), lorenzFile(t), &gradsolve.Ensemble{N: n, P: p, Save: []float64{0.3, 0.6, 0.9}}, &gradsolve.Options{RTol: 1e-8, ATol: 1e-11})
	if err != nil {
		t.Fatal(err)
	}
	g, err := rec.Gradient(context.Background(), gradsolve.Cotangents{Y: cotF, Saved: data})
	if err != nil {
		t.Fatal(err)
	}
	if !testutil.IdenticalBits(readNpy(t, filepath.Join(dir, "grad_params.npy"), n, 3), g.P) || !testutil.IdenticalBits(readNpy(t, filepath.Join(dir, "grad_y0.npy"), n, dim), g.Y0) {
		t.Error("--cot with saved states gives another gradient than Recording.Gradient")
	}
	var want float64 // the linear loss Σ cot·y
	for i := range n {
		for d, y := range rec.Result.Row(i) {
			want += cotF[i*dim+d] * y
		}
		for q := range k {
			for d, y := range rec.Result.SavedRow(i, q) {
				want += data[(i*k+q)*dim+d] * y
			}
		}
	}
	if l := readStats(t, dir)["loss"].(float64); l != want {
		t.Errorf("--cot loss %v, want Σ cot·y = %v", l, want)
	}
}

// --wrt chooses the gradient's columns. With --wrt q forward mode
// integrates one sensitivity column (stats.json: sensitivity_columns),
// the router picks forward mode for it on its own, grad_params.npy is
// n×1 and grad_y0.npy n×0, and the column is bitwise that of a run with
// every column (each sensitivity column is integrated on its own). In
// reverse mode the columns asked for are bitwise those of the full
// gradient, in the order given.
func TestGradWrt(t *testing.T) {
	args := []string{"grad", "../../examples/halo.ode", "--n", "2", "--param", "q=0.6:0.9", "--loss", "sumsq", "--rtol", "1e-9", "--atol", "1e-9", "-q"}
	run := func(extra ...string) string {
		t.Helper()
		dir := t.TempDir()
		if _, _, err := runCmd(append(append(args, "--out", dir), extra...)...); err != nil {
			t.Fatalf("%v: %v", extra, err)
		}
		return dir
	}
	fullF := run("--mode", "forward")
	if st := readStats(t, fullF); st["sensitivity_columns"] != 9.0 {
		t.Errorf("every column: sensitivity_columns = %v, want 9", st["sensitivity_columns"])
	}
	allP := readNpy(t, filepath.Join(fullF, "grad_params.npy"), 2, 3)
	for _, mode := range []string{"forward", "auto"} {
		dir := run("--wrt", "q", "--mode", mode)
		st := readStats(t, dir)
		if st["sensitivity_columns"] != 1.0 || st["mode"] != "forward" || fmt.Sprint(st["grad_params_columns"]) != "[q]" || fmt.Sprint(st["grad_y0_columns"]) != "[]" {
			t.Errorf("--wrt q --mode %s: sensitivity_columns %v, mode %v, columns %v %v", mode, st["sensitivity_columns"], st["mode"], st["grad_params_columns"], st["grad_y0_columns"])
		}
		if !strings.Contains(st["mode_reason"].(string), "(1 columns)") {
			t.Errorf("--wrt q: the router did not count one column: %s", st["mode_reason"])
		}
		gq := readNpy(t, filepath.Join(dir, "grad_params.npy"), 2, 1)
		readNpy(t, filepath.Join(dir, "grad_y0.npy"), 2, 0)
		if !testutil.IdenticalBits(gq, []float64{allP[1], allP[4]}) {
			t.Errorf("--wrt q --mode %s: dL/dq = %v, with every column %v", mode, gq, []float64{allP[1], allP[4]})
		}
	}
	fullR := run("--mode", "reverse")
	rp := readNpy(t, filepath.Join(fullR, "grad_params.npy"), 2, 3)
	ry := readNpy(t, filepath.Join(fullR, "grad_y0.npy"), 2, 6)
	if st := readStats(t, fullR); st["sensitivity_columns"] != 0.0 {
		t.Errorf("reverse: sensitivity_columns = %v", st["sensitivity_columns"])
	}
	dir := run("--wrt", "rc,y0.vz,vc,y0.x", "--mode", "reverse")
	st := readStats(t, dir)
	if fmt.Sprint(st["grad_params_columns"]) != "[rc vc]" || fmt.Sprint(st["grad_y0_columns"]) != "[y0.vz y0.x]" {
		t.Errorf("columns %v %v", st["grad_params_columns"], st["grad_y0_columns"])
	}
	if got := readNpy(t, filepath.Join(dir, "grad_params.npy"), 2, 2); !testutil.IdenticalBits(got, []float64{rp[2], rp[0], rp[5], rp[3]}) {
		t.Errorf("--wrt rc,…,vc: grad_params %v, full %v", got, rp)
	}
	if got := readNpy(t, filepath.Join(dir, "grad_y0.npy"), 2, 2); !testutil.IdenticalBits(got, []float64{ry[5], ry[0], ry[11], ry[6]}) {
		t.Errorf("--wrt y0.vz,y0.x: grad_y0 %v, full %v", got, ry)
	}
	// Forward and reverse agree on every column (1e-10 relative, as above).
	if d := maxRelDiff(rp, allP); d > 1e-10 {
		t.Errorf("halo: reverse and forward differ by %.2e", d)
	}
}

// Bad loss and --wrt flags get one-line errors naming the flag, the
// file and the shapes.
func TestGradFlagErrors(t *testing.T) {
	in := t.TempDir()
	n, k, dim := 2, 2, 3
	saved := writeNpy(t, in, "saved.npy", []int{n, k, dim}, make([]float64, n*k*dim))
	savedK3 := writeNpy(t, in, "saved3.npy", []int{n, 3, dim}, make([]float64, n*3*dim))
	final := writeNpy(t, in, "final.npy", []int{n, dim}, make([]float64, n*dim))
	neg := writeNpy(t, in, "neg.npy", []int{dim}, []float64{1, -1, 1})
	nan := writeNpy(t, in, "nan.npy", []int{n, k, dim}, append(make([]float64, 7), math.NaN(), 0, 0, 0, 0))
	wrongW := writeNpy(t, in, "w4.npy", []int{4}, make([]float64, 4))
	file := []string{"grad", "../../examples/lorenz.ode", "--n", "2", "-q"}
	save := []string{"--saveat", "0.5,1"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--loss", "sumsq", "--wrt", "nope"}, `--wrt "nope": lorenz has no parameter "nope" (parameters: rho, sigma, beta; or params, y0, y0.NAME)`},
		{[]string{"--loss", "sumsq", "--wrt", "all"}, "say params,y0"},
		{[]string{"--loss", "sumsq", "--wrt", "y0.w"}, `no state "w"`},
		{[]string{"--loss", "sumsq", "--wrt", "rho,params"}, `--wrt "rho,params": rho is listed twice`},
		{[]string{"--loss", "sumsq", "--wrt", "rho,"}, `--wrt "rho,": empty item`},
		{[]string{"--data", saved}, "holds saved states (n × k × states): give the save times with --saveat"},
		{append([]string{"--data", savedK3}, save...), "shape (2, 3, 3): want (2, 2, 3) or (1, 2, 3) (n × k × states, k = 2 --saveat times)"},
		{append([]string{"--data", nan}, save...), "--data " + nan + ": element [1, 0, 1] = NaN is not finite"},
		{append([]string{"--data", saved, "--weights", neg}, save...), "--weights " + neg + ": element [1] = -1: weights must be finite and ≥ 0"},
		{append([]string{"--data", saved, "--weights", wrongW}, save...), "--weights " + wrongW + ": shape (4,): want (2, 2, 3) or (1, 2, 3) or (2, 3) or (3,)"},
		{[]string{"--data", final, "--data-final", final}, "--data " + final + " already holds the final states"},
		{[]string{"--loss", "sumsq", "--data-final", final}, "--data-final " + final + " needs --data"},
		{append([]string{"--data", saved, "--weights-final", neg}, save...), "--weights-final " + neg + " needs --data-final"},
		{[]string{"--cot", final, "--cot-final", final}, "--cot-final " + final + ": --cot " + final + " already holds dL/dy_final"},
		{append([]string{"--cot", saved, "--cot-final", saved}, save...), "--cot-final " + saved + ": shape (2, 2, 3): want (2, 3) (n × states)"},
		{append([]string{"--cot", savedK3}, save...), "--cot " + savedK3 + ": shape (2, 3, 3): want (2, 2, 3)"},
	} {
		_, _, err := runCmd(append(file, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}
