package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEngineCUDAUnavailable: where there is no CUDA driver, --engine
// cuda exits with status 1 and one line saying it is unavailable and
// why, in the flags' terms: no crash, no Go error text. The driver's
// path is set to one that does not exist (GRADSOLVE_CUDA_DRIVER), so
// that the test means the same on a machine with a GPU.
func TestEngineCUDAUnavailable(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "libcuda.so.1")
	env := []string{"GRADSOLVE_CUDA_DRIVER=" + missing}
	for _, args := range [][]string{
		{"solve", "../../examples/lorenz.ode", "--engine", "cuda", "--n", "2"},
		{"solve", "../../examples/lorenz.ode", "--engine", "cuda", "--method", "dp8", "--n", "2", "--sens", "rho"},
		{"grad", "../../examples/lorenz.ode", "--engine", "cuda", "--loss", "sumsq", "--n", "2"},
	} {
		r := execCmd(t, env, append(args, "--out", t.TempDir())...)
		line := strings.TrimSuffix(r.stderr, "\n")
		want := "unavailable: no CUDA driver (" + missing + ": "
		if r.code != 1 || strings.Contains(line, "\n") || !strings.HasPrefix(line, "gradsolve: ") ||
			!strings.Contains(line, `--engine "cuda"`) || !strings.Contains(line, want) ||
			goField.MatchString(line) || strings.Contains(line, "panic") || strings.Contains(line, "goroutine") {
			t.Errorf("gradsolve %v: exit %d, stderr %q; want exit 1 and one line with %q", args, r.code, r.stderr, want)
		}
	}
	// Without the override, a machine with no driver says so as well.
	if _, err := os.Stat("/dev/nvidia0"); err == nil {
		return
	}
	r := execCmd(t, []string{"GRADSOLVE_CUDA_DRIVER="}, "solve", "../../examples/lorenz.ode", "--engine", "cuda", "--n", "2", "--out", t.TempDir())
	if r.code != 1 || !strings.Contains(r.stderr, "unavailable: ") {
		t.Errorf("gradsolve solve --engine cuda: exit %d, stderr %q", r.code, r.stderr)
	}
}
