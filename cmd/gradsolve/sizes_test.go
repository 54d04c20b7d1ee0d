package main

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
		{limit, []string{"solve", "../../examples/lorenz.ode", "--n", "1000000000"}, []string{"--n 1000000000: the run's arrays need 105 GB (", "y_final 24.0 GB", "(GOMEMLIMIT): lower --n"}},
		{"", []string{"solve", "../../examples/lorenz.ode", "--n", "6148914691236517206"}, []string{"--n 6148914691236517206: the size of y_final (n·dim = 6148914691236517206·3, 8 bytes each) overflows an int"}},
		{limit, []string{"solve", "../../examples/lorenz.ode", "--n", "100000", "--saveat", save}, []string{"with --saveat " + save + " (200000 save times)", "y_saved 480 GB", "give fewer --saveat times"}},
		{limit, []string{"solve", "--n", "1000000000"}, []string{"--n 1000000000: the run's arrays need"}},
		{limit, []string{"solve", "../../examples/lorenz.ode", "--n", "100000000", "--sens", "all"}, []string{"sens 7.20 GB"}},
		{limit, []string{"grad", "../../examples/lorenz.ode", "--n", "1000000000", "--loss", "sumsq"}, []string{"--n 1000000000: the run's arrays need", "per accepted step"}},
		{"", []string{"grad", "../../examples/lorenz.ode", "--n", "6148914691236517206", "--loss", "sumsq"}, []string{"overflows an int"}},
		{limit, []string{"grad", "../../examples/lorenz.ode", "--n", "100000", "--saveat", save, "--loss", "sumsq"}, []string{"y_saved 480 GB"}},
		{limit, []string{"grad", "../../examples/lorenz.ode", "--n", "100000000", "--loss", "sumsq", "--mode", "forward"}, []string{"sens 14.4 GB"}},
		{limit, []string{"halo", "--n", "1000000000"}, []string{"--n 1000000000: the run's arrays need", "lower --n"}},
		{"", []string{"halo", "--n", "6148914691236517206"}, []string{"overflows an int"}},
		{limit, []string{"precession", "--n", "1000000000"}, []string{"--n 1000000000: the run's arrays need"}},
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
