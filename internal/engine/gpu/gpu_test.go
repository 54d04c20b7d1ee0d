package gpu

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve/internal/cuda"
	"github.com/gradsolve/gradsolve/internal/cuda/cudafake"
	"github.com/gradsolve/gradsolve/internal/engine"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
)

// The tests load the fake CUDA libraries of package cudafake (built
// from C with the system C compiler): they check the engine's
// availability and refusals, not a GPU.

func fakeLibs(t *testing.T) cudafake.Libs {
	t.Helper()
	l, err := cudafake.Build(t.TempDir())
	if errors.Is(err, cudafake.ErrNoCompiler) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestRegistered: "cuda" is registered below the CPU engines and runs
// the explicit methods only.
func TestRegistered(t *testing.T) {
	e := engine.Lookup("cuda")
	if e == nil {
		t.Fatalf("no engine cuda among %v", engine.Names())
	}
	if e.Priority() >= 0 {
		t.Errorf("cuda's priority %d is not below the CPU engines' 0", e.Priority())
	}
	if !e.Runs(method.Tsit5) || !e.Runs(method.DP8) || e.Runs(method.Rodas5P) {
		t.Error("cuda should run the explicit methods and no Rosenbrock method")
	}
	if _, ok := e.(engine.Availability); !ok {
		t.Error("cuda is not an engine.Availability")
	}
}

// TestUnavailable: each missing piece gives Serves and Prepare a
// refusal wrapping cuda.ErrUnavailable that starts "unavailable: " and
// says what is missing.
func TestUnavailable(t *testing.T) {
	l := fakeLibs(t)
	missing := filepath.Join(t.TempDir(), "none")
	req := &engine.Request{Problem: &ode.Problem{Name: "p", Dim: 1}, Method: method.Tsit5, Job: engine.Forward}
	for _, c := range []struct {
		name   string
		opts   cuda.Options
		device int
		env    string
		want   string
	}{
		{"no driver", cuda.Options{Driver: missing}, 0, "", "unavailable: no CUDA driver (" + missing + ": "},
		{"missing symbol", cuda.Options{Driver: l.NoLaunch}, 0, "", "unavailable: " + l.NoLaunch + " has no symbol cuLaunchKernel"},
		{"no device", cuda.Options{Driver: l.Driver, NVRTC: l.NVRTC}, 0, "0", "unavailable: no CUDA device"},
		{"device out of range", cuda.Options{Driver: l.Driver, NVRTC: l.NVRTC}, 1, "", "unavailable: CUDA device 1 does not exist: the machine has 1 (0 to 0)"},
		{"no NVRTC", cuda.Options{Driver: l.Driver, NVRTC: missing}, 0, "", "unavailable: no NVRTC (" + missing + ": "},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("FAKE_CUDA_DEVICES", c.env)
			e := New("cuda-test", c.opts, c.device)
			err := e.Available()
			if lerr := e.Loaded(); lerr == nil || lerr.Error() != err.Error() {
				t.Errorf("Loaded() = %v; want Available's %v", lerr, err)
			}
			if !errors.Is(err, cuda.ErrUnavailable) || !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("Available() = %v; want %q…", err, c.want)
			}
			if s := e.Serves(req); s == nil || s.Error() != err.Error() {
				t.Errorf("Serves = %v; want Available's %v", s, err)
			}
			if p, perr := e.Prepare(&engine.Spec{Request: *req}); p != nil || perr == nil || perr.Error() != err.Error() {
				t.Errorf("Prepare = %v, %v", p, perr)
			}
		})
	}
}

// TestAvailableServesNothing: with a driver, a device and NVRTC (the
// fakes), the engine is available and says it runs no job yet.
func TestAvailableServesNothing(t *testing.T) {
	l := fakeLibs(t)
	os.Unsetenv("FAKE_CUDA_DEVICES")
	e := New("cuda-test", cuda.Options{Driver: l.Driver, NVRTC: l.NVRTC}, 0)
	if err := e.Loaded(); err != nil {
		t.Fatal(err)
	}
	if e.dev == nil || e.dev.Arch() != "compute_90" {
		t.Fatalf("device %v; want the fake's compute_90", e.dev)
	}
	// Until its jobs are wired in, the engine says it cannot run, so
	// that the router and the conformance suite pass it by.
	if err := e.Available(); !errors.Is(err, errNoLaunch) || !errors.Is(err, cuda.ErrUnavailable) || !strings.HasPrefix(err.Error(), "unavailable: the cuda engine runs no job yet") {
		t.Errorf("Available = %v; want %v", err, errNoLaunch)
	}
	req := &engine.Request{Problem: &ode.Problem{Name: "p", Dim: 1}, Method: method.Tsit5, Job: engine.Forward}
	if err := e.Serves(req); !errors.Is(err, errNoLaunch) {
		t.Errorf("Serves = %v; want %v", err, errNoLaunch)
	}
}
