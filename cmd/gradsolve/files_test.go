package main

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/npy"
	"github.com/gradsolve/gradsolve/systems"
)

// The check: the problem file route gives bit for bit the
// result of the Go API on the built-in Lorenz (the tape computes the
// same operations as the Go function), and agrees with a converged
// reference (DP8 at rtol 1e-13) to 1e-6 relative at the 99th
// percentile, 100·rtol as in the package's own accuracy test.
func TestLorenzFileMatchesGoAPI(t *testing.T) {
	dir := t.TempDir()
	out, _, err := runCmd("solve", "../../examples/lorenz.ode", "--n", "1000", "--param", "rho=0:21",
		"--rtol", "1e-8", "--atol", "1e-11", "--out", dir)
	if err != nil {
		t.Fatal(err, out)
	}
	got, err := npy.ReadFile(filepath.Join(dir, "y_final.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if err := got.Check("y_final", []int{1000, 3}); err != nil {
		t.Fatal(err)
	}
	n := 1000
	p := make([]float64, 0, 3*n)
	for i := range n {
		p = append(p, 10, 0+(21-0)*float64(i)/float64(n-1), 8.0/3)
	}
	ens := &gradsolve.Ensemble{N: n, Y0: []float64{1, 0, 0}, P: p, T0: []float64{0}, T1: []float64{1}}
	api, err := gradsolve.Solve(context.Background(), systems.Lorenz(), ens, &gradsolve.Options{RTol: 1e-8, ATol: 1e-11})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range api.Y {
		if math.Float64bits(v) != math.Float64bits(got.Data[i]) {
			t.Fatalf("y_final[%d] = %v from the file route, %v from the Go API", i, got.Data[i], v)
		}
	}
	ref, err := gradsolve.Solve(context.Background(), systems.Lorenz(), ens, &gradsolve.Options{Method: method.DP8, RTol: 1e-13, ATol: 1e-16})
	if err != nil {
		t.Fatal(err)
	}
	errs := make([]float64, n)
	for i := range n {
		var num, den float64
		for d := range 3 {
			e := got.Data[3*i+d] - ref.Y[3*i+d]
			num += e * e
			den += ref.Y[3*i+d] * ref.Y[3*i+d]
		}
		errs[i] = math.Sqrt(num / den)
	}
	sort.Float64s(errs)
	if p99 := errs[989]; p99 > 1e-6 {
		t.Errorf("99th percentile relative error %.3g > 1e-6", p99)
	}
	status, err := npy.ReadFile(filepath.Join(dir, "status.npy"))
	if err != nil || status.Check("status", []int{1000}) != nil {
		t.Fatalf("status.npy: %v", err)
	}
	for _, s := range status.Data {
		if s != 0 {
			t.Fatalf("status %v, want 0 everywhere", s)
		}
	}
	js, err := os.ReadFile(filepath.Join(dir, "stats.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"engine"`, `"method": "Tsit5"`, `"rtol": 1e-8`, `"atol": 1e-11`, `"n": 1000`, `"workers"`, `"solve_seconds"`, `"wall_seconds"`, `"accepted_steps"`, `"rejected_steps"`, `"failed": 0`} {
		if !strings.Contains(string(js), key) {
			t.Errorf("stats.json lacks %s:\n%s", key, js)
		}
	}
}

// Inputs from .npy files: parameters, initial states, per-trajectory
// spans and save times; outputs have the documented shapes.
func TestNpyInputs(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, shape []int, data []float64) string {
		path := filepath.Join(dir, name)
		if err := npy.WriteFloat64File(path, shape, data); err != nil {
			t.Fatal(err)
		}
		return path
	}
	// Lorenz file order: rho, sigma, beta.
	params := write("p.npy", []int{2, 3}, []float64{28, 10, 8.0 / 3, 15, 10, 8.0 / 3})
	y0 := write("y0.npy", []int{2, 3}, []float64{1, 0, 0, 0, 1, 0})
	t1 := write("t1.npy", []int{2}, []float64{1, 2})
	save := write("s.npy", []int{2, 2}, []float64{0.5, 1, 1, 2})
	outDir := filepath.Join(dir, "out")
	if _, _, err := runCmd("solve", "../../examples/lorenz.ode", "--params", params, "--y0", y0, "--t1", t1,
		"--saveat", save, "--out", outDir, "-q"); err != nil {
		t.Fatal(err)
	}
	ys, err := npy.ReadFile(filepath.Join(outDir, "y_saved.npy"))
	if err != nil {
		t.Fatal(err)
	}
	yf, _ := npy.ReadFile(filepath.Join(outDir, "y_final.npy"))
	if ys.Check("", []int{2, 2, 3}) != nil || yf.Check("", []int{2, 3}) != nil {
		t.Fatalf("shapes %v and %v", ys.Shape, yf.Shape)
	}
	// The last save time of each trajectory is its t1: bitwise the final state.
	for i := range 2 {
		for d := range 3 {
			if ys.Data[(i*2+1)*3+d] != yf.Data[i*3+d] {
				t.Errorf("trajectory %d: save at t1 differs from the final state", i)
			}
		}
	}
	// Same trajectory 0 through the Go API (params reordered to σ, ρ, β).
	api, err := gradsolve.Solve(context.Background(), systems.Lorenz(),
		&gradsolve.Ensemble{N: 1, Y0: []float64{1, 0, 0}, P: []float64{10, 28, 8.0 / 3}, T0: []float64{0}, T1: []float64{1}},
		&gradsolve.Options{RTol: 1e-8, ATol: 1e-11})
	if err != nil {
		t.Fatal(err)
	}
	for d := range 3 {
		if api.Y[d] != yf.Data[d] {
			t.Errorf("component %d: %v from files, %v from the Go API", d, yf.Data[d], api.Y[d])
		}
	}

	// Wrong shapes and dtypes are named.
	bad := write("bad.npy", []int{2, 2}, []float64{1, 2, 3, 4})
	cplx := filepath.Join(dir, "c.npy")
	if err := os.WriteFile(cplx, complexNpy(), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "afile")
	os.WriteFile(file, nil, 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--params", bad}, "shape (2, 2): want (2, 3) or (3,) (n × params)"},
		{[]string{"--y0", bad}, "shape (2, 2): want (2, 3) or (3,) (n × states)"},
		{[]string{"--params", params, "--n", "5"}, "has 2 rows but --n gives n = 5"},
		{[]string{"--params", cplx}, "complex"},
		{[]string{"--params", filepath.Join(dir, "none.npy")}, "no such file"},
		{[]string{"--out", filepath.Join(file, "sub")}, "--out"},
	}
	for _, c := range cases {
		_, _, err := runCmd(append([]string{"solve", "../../examples/lorenz.ode", "-q"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want it to mention %q", c.args, err, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(file, "sub")); err == nil {
		t.Error("an output directory appeared under a file")
	}
}

// complexNpy returns a valid .npy file of dtype complex128 with one element.
func complexNpy() []byte {
	h := "{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }"
	for (10+len(h)+1)%64 != 0 {
		h += " "
	}
	h += "\n"
	b := []byte("\x93NUMPY\x01\x00")
	b = append(b, byte(len(h)), byte(len(h)>>8))
	b = append(b, h...)
	return append(b, make([]byte, 16)...)
}

// A run killed part-way (here: cancelled) writes no files at all.
func TestCancelledRunWritesNothing(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var sink strings.Builder
	err := run(ctx, []string{"solve", "../../examples/lorenz.ode", "--n", "100", "--out", dir, "-q"}, &sink, &sink)
	if err == nil {
		t.Fatal("no error from a cancelled run")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("a cancelled run left %d files", len(entries))
	}
}

// repeatRows returns row repeated n times.
func repeatRows(row []float64, n int) []float64 {
	out := make([]float64, 0, n*len(row))
	for range n {
		out = append(out, row...)
	}
	return out
}
