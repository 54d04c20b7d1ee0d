package main

import (
	"encoding/binary"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve/internal/memory"
	"github.com/gradsolve/gradsolve/npy"
)

// writeSaveTimes writes k save times evenly in (0, 1] as a .npy file.
func writeSaveTimes(t *testing.T, k int) string {
	t.Helper()
	v := make([]float64, k)
	for i := range v {
		v[i] = float64(i+1) / float64(k)
	}
	path := filepath.Join(t.TempDir(), "save.npy")
	if err := npy.WriteFloat64File(path, []int{k}, v); err != nil {
		t.Fatal(err)
	}
	return path
}

// A job too large for an int or for the machine's memory is refused at
// once with one line that names the flag and the bytes, and never ends
// in a Go runtime error. GOMEMLIMIT=256MiB makes GOMEMLIMIT the source of
// the memory available on every machine (the lowest of the limits is
// reported, and no machine that runs the tests has less than 256 MiB
// available), for the rows that would fit a large one; the overflowing
// rows run without it.
func TestHugeJobsRefused(t *testing.T) {
	save := writeSaveTimes(t, 200_000)
	const limit = "GOMEMLIMIT=256MiB"
	cases := []struct {
		env  string
		args []string
		want []string
	}{
		{limit, []string{"solve", "../../examples/lorenz.ode", "--n", "1000000000", "--chunk", "1000000000"}, []string{"a --chunk of --n 1000000000 (n = 1000000000): the run's arrays need 105 GB (", "y_final 24.0 GB", "(GOMEMLIMIT): lower --chunk (now 1000000000)"}},
		{"", []string{"solve", "../../examples/lorenz.ode", "--n", "6148914691236517206"}, []string{"--n 6148914691236517206: the size of y_final (n·dim = 6148914691236517206·3, 8 bytes each) overflows an int"}},
		{limit, []string{"solve", "../../examples/lorenz.ode", "--n", "100000", "--saveat", save, "--chunk", "100000"}, []string{"with --saveat " + save + " (200000 save times)", "y_saved 480 GB", "lower --chunk"}},
		{limit, []string{"solve", "--n", "1000000000", "--chunk", "1000000000"}, []string{"--n 1000000000 (n = 1000000000): the run's arrays need"}},
		{limit, []string{"solve", "../../examples/lorenz.ode", "--n", "100000000", "--sens", "all", "--chunk", "100000000"}, []string{"sens 7.20 GB"}},
		{limit, []string{"grad", "../../examples/lorenz.ode", "--n", "1000000000", "--loss", "sumsq", "--mode", "reverse", "--chunk", "1000000000"}, []string{"--n 1000000000 (n = 1000000000): the run's arrays need", "per accepted step"}},
		{"", []string{"grad", "../../examples/lorenz.ode", "--n", "6148914691236517206", "--loss", "sumsq"}, []string{"overflows an int"}},
		{limit, []string{"grad", "../../examples/lorenz.ode", "--n", "100000", "--saveat", save, "--loss", "sumsq", "--chunk", "100000"}, []string{"y_saved 480 GB"}},
		{limit, []string{"grad", "../../examples/lorenz.ode", "--n", "100000000", "--loss", "sumsq", "--mode", "forward", "--chunk", "100000000"}, []string{"sens 14.4 GB"}},
		{limit, []string{"halo", "--n", "1000000000"}, []string{"--n 1000000000: the run's arrays need 8.00 GB (periods 8.00 GB)", "lower --n"}},
		{"", []string{"halo", "--n", "6148914691236517206"}, []string{"overflows an int"}},
		{limit, []string{"halo", "--n", "10000000", "--chunk", "10000000"}, []string{"a --chunk of --n 10000000 (n = 10000000): the run's arrays need", "lower --chunk (now 10000000)"}},
		{limit, []string{"precession", "--n", "1000000000", "--chunk", "1000000000"}, []string{"a --chunk of --n 1000000000 (n = 1000000000): the run's arrays need", "lower --chunk"}},
		{limit, []string{"precession", "--n", "100000000000", "--check"}, []string{"--n 100000000000: the run's arrays need 8.00 GB (error quantile 8.00 GB)", "lower --n"}},
		{"", []string{"precession", "--n", "6148914691236517206", "--check"}, []string{"overflows an int"}},
		{limit, []string{"quintessence", "--n", "1000000000"}, []string{"--n 1000000000: the run's arrays need"}},
		{"", []string{"quintessence", "--n", "6148914691236517206"}, []string{"overflows an int"}},
	}
	for _, c := range cases {
		var env []string
		if c.env != "" {
			env = []string{c.env}
		}
		r := execCmd(t, env, c.args...)
		line := strings.TrimSuffix(r.stderr, "\n")
		if r.code != 1 || strings.Contains(line, "\n") || !strings.HasPrefix(line, "gradsolve: ") ||
			strings.Contains(r.stderr, "fatal error") || strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "goroutine") {
			t.Errorf("%v: exit %d, stderr:\n%s", c.args, r.code, r.stderr)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(line, w) {
				t.Errorf("%v: %q lacks %q", c.args, line, w)
			}
		}
		t.Logf("%v: exit %d in %v", c.args, r.code, r.elapsed.Round(1e6))
	}
}

// A .npy file claiming a huge shape is refused by the reader before it
// allocates (the npy package checks the claim against the file's size).
func TestHugeNpyHeaderRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "y0.npy")
	hdr := "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000, 3), }"
	hdr += strings.Repeat(" ", 64-(10+len(hdr)+1)%64) + "\n"
	b := append([]byte("\x93NUMPY\x01\x00"), 0, 0)
	binary.LittleEndian.PutUint16(b[8:], uint16(len(hdr)))
	b = append(append(b, hdr...), make([]byte, 24)...)
	binary.LittleEndian.PutUint64(b[len(b)-8:], math.Float64bits(1))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := runCmd("solve", "../../examples/lorenz.ode", "--y0", path)
	if err == nil || !strings.Contains(err.Error(), "--y0") {
		t.Errorf("err = %v", err)
	}
}

// partBytes sums the budget's parts of the given name.
func partBytes(b *memory.Budget, name string) (sum uint64, found bool) {
	for _, p := range b.Parts {
		if p.Name == name {
			sum, found = sum+p.Bytes, true
		}
	}
	return sum, found
}

// The size check counts what grad reads and builds after it: the loss
// inputs (8 bytes per element of the shape their headers give), the
// saved states' cotangents, the gradient columns; and a reference solve
// only for solve's --ref (grad runs none).
func TestSizeBudgetCountsLossInputs(t *testing.T) {
	const n, k, dim = 4, 5, 3
	dir := t.TempDir()
	data := writeNpy(t, dir, "data.npy", []int{n, k, dim}, make([]float64, n*k*dim))
	weights := writeNpy(t, dir, "w.npy", []int{k, dim}, make([]float64, k*dim))
	final := writeNpy(t, dir, "final.npy", []int{n, dim}, make([]float64, n*dim))
	cot := writeNpy(t, dir, "cot.npy", []int{n, k, dim}, make([]float64, n*k*dim))
	common := []string{"../../examples/lorenz.ode", "--n", "4", "--saveat", "0.2,0.4,0.6,0.8,1", "--t1", "1"}
	sf := sizeFlags{n: n, nFrom: "--n", k: k, kFrom: "--saveat"}
	cases := []struct {
		cmd   string
		flags []string
		want  map[string]uint64 // part → bytes; 0: absent
	}{
		{"grad", []string{"--data", data, "--weights", weights, "--data-final", final, "--wrt", "sigma,y0.x"},
			map[string]uint64{"--data": 8 * n * k * dim, "--weights": 8 * k * dim, "--data-final": 8 * n * dim,
				"grad_params and grad_y0": 8 * n * 2, "cotangents": 8 * (n*dim + n*k*dim), "reference y_final": 0}},
		{"grad", []string{"--cot", cot}, map[string]uint64{"--cot": 8 * n * k * dim, "grad_params and grad_y0": 8 * n * 6, "reference inputs": 0}},
		{"solve", []string{"--ref", "3"}, map[string]uint64{"reference y_final": 8 * 3 * dim, "--data": 0, "grad_params and grad_y0": 0, "cotangents": 0}},
	}
	for _, c := range cases {
		args := append(append([]string{}, common...), c.flags...)
		usage := solveUsage
		if c.cmd == "grad" {
			usage = gradUsage
		}
		j, err := setup(c.cmd, usage, args, io.Discard)
		if err != nil {
			t.Fatalf("%s %v: %v", c.cmd, args, err)
		}
		b, _, err := j.sizeBudget(sf)
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range c.want {
			got, found := partBytes(b, name)
			if want == 0 && found || want != 0 && got != want {
				t.Errorf("%s %v: %s counts %d bytes (found %v), want %d", c.cmd, c.flags, name, got, found, want)
			}
		}
	}
}

// A recording whose mesh outgrows the memory as it runs — one
// trajectory of Robertson with Tsit5 to 1e11, whose steps stability
// bounds near 1e-4, under a budget of 10⁸ steps — stops with one line
// that names the memory and what to lower, under a Go memory limit of
// 64 MiB; it used to die in a Go "fatal error: out of memory" (ulimit -v
// 3000000 showed it).
func TestRecordingGrowthRefused(t *testing.T) {
	r := execCmd(t, []string{"GOMEMLIMIT=64MiB"}, "grad", "../../examples/robertson.ode", "--method", "tsit5", "--t1", "1e11",
		"--max-steps", "100000000", "--mode", "reverse", "--loss", "sumsq", "--workers", "1")
	line := strings.TrimSuffix(r.stderr, "\n")
	if r.code != 1 || strings.Contains(line, "\n") || strings.Contains(r.stderr, "fatal error") || strings.Contains(r.stderr, "panic") {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	for _, w := range []string{"gradsolve: --n 1: the recorded meshes need", "per accepted step of each trajectory", "(GOMEMLIMIT, as the recording grew)", "lower --max-steps (now 100000000)"} {
		if !strings.Contains(line, w) {
			t.Errorf("%q lacks %q", line, w)
		}
	}
	t.Logf("exit %d in %v: %s", r.code, r.elapsed.Round(1e6), line)
}
