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
// availability, refusals and plumbing, not a GPU.

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

// TestRegistered: "cuda" is registered above the CPU engines, runs the
// explicit methods only and is an Availability and a Preferrer;
// "cuda-emu" is registered only under GRADSOLVE_CUDA_EMULATE=1.
func TestRegistered(t *testing.T) {
	e := engine.Lookup("cuda")
	if e == nil {
		t.Fatalf("no engine cuda among %v", engine.Names())
	}
	if e.Priority() <= 1 {
		t.Errorf("cuda's priority %d is not above the CPU engines' (0, lanes 1)", e.Priority())
	}
	if !e.Runs(method.Tsit5) || !e.Runs(method.DP8) || !e.Runs(method.Rodas5P) || !e.Runs(method.Rosenbrock23) {
		t.Error("cuda should run the explicit and the Rosenbrock methods")
	}
	if fr, ok := e.(engine.FamilyReference); !ok || fr.ReferenceFor(method.Tsit5) != "cpu-erk" || fr.ReferenceFor(method.Rodas5P) != "cpu-ros" {
		t.Error("cuda's references should be cpu-erk for the explicit methods and cpu-ros for the Rosenbrock methods")
	}
	if _, ok := e.(engine.Availability); !ok {
		t.Error("cuda is not an engine.Availability")
	}
	// Named with no method, it runs the router's defaults: Rodas5P for
	// a problem marked stiff, Tsit5 otherwise.
	if m := e.DefaultMethod(&ode.Problem{Name: "s", Dim: 1, Stiff: true}); m != method.Rodas5P {
		t.Errorf("DefaultMethod(stiff) = %s, want Rodas5P", m.MethodName())
	}
	if m := e.DefaultMethod(&ode.Problem{Name: "p", Dim: 1}); m != method.Tsit5 {
		t.Errorf("DefaultMethod = %s, want Tsit5", m.MethodName())
	}
	p, ok := e.(engine.Preferrer)
	if !ok {
		t.Fatal("cuda is not an engine.Preferrer")
	}
	req := &engine.Request{Problem: &ode.Problem{Name: "p", Dim: 1}, Method: method.Tsit5, Job: engine.Forward, N: MinPreferred - 1}
	if err := p.Prefers(req); err == nil || !strings.Contains(err.Error(), "below 4096") {
		t.Errorf("Prefers(%d trajectories) = %v", req.N, err)
	}
	if req.N = MinPreferred; p.Prefers(req) != nil {
		t.Errorf("Prefers(%d trajectories) = %v", req.N, p.Prefers(req))
	}
	if emu := engine.Lookup("cuda-emu"); (emu != nil) != (os.Getenv("GRADSOLVE_CUDA_EMULATE") == "1") {
		t.Errorf("cuda-emu registered: %v, with GRADSOLVE_CUDA_EMULATE=%q", emu != nil, os.Getenv("GRADSOLVE_CUDA_EMULATE"))
	} else if emu != nil && emu.Priority() >= 0 {
		t.Errorf("cuda-emu's priority %d: the router would pick it", emu.Priority())
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
		name string
		opts cuda.Options
		env  string
		want string
	}{
		{"no driver", cuda.Options{Driver: missing}, "", "unavailable: no CUDA driver (" + missing + ": "},
		{"missing symbol", cuda.Options{Driver: l.NoLaunch}, "", "unavailable: " + l.NoLaunch + " has no symbol cuLaunchKernel"},
		{"no device", cuda.Options{Driver: l.Driver, NVRTC: l.NVRTC}, "0", "unavailable: no CUDA device"},
		{"no NVRTC", cuda.Options{Driver: l.Driver, NVRTC: missing}, "", "unavailable: no NVRTC (" + missing + ": "},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("FAKE_CUDA_DEVICES", c.env)
			e := New("cuda-test", &CUDA{Opts: c.opts}, Config{})
			err := e.Available()
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

// TestServes: with the fake driver available, the engine serves the
// forward and sensitivity jobs of a problem compiled from formulas on a
// device the machine has, and refuses the rest with the reason in the
// Go API's terms.
func TestServes(t *testing.T) {
	l := fakeLibs(t)
	os.Unsetenv("FAKE_CUDA_DEVICES")
	t.Setenv(SelfTestEnv, "off") // the fake solves nothing: TestSelfTestFake
	e := New("cuda-test", &CUDA{Opts: cuda.Options{Driver: l.Driver, NVRTC: l.NVRTC}}, Config{})
	if err := e.Available(); err != nil {
		t.Fatal(err)
	}
	sym := lorenzProblem(t)
	for _, c := range []struct {
		name string
		req  engine.Request
		want string // "" for served
	}{
		{"forward", engine.Request{Job: engine.Forward}, ""},
		{"sensitivities", engine.Request{Job: engine.Sensitivities, NumSens: 2, ErrorTest: true}, ""},
		{"record", engine.Request{Job: engine.Record}, ""},
		{"record dense save", engine.Request{Job: engine.Record, DenseSave: true}, "DenseSave needs a Rosenbrock method"},
		{"dense save", engine.Request{Job: engine.Forward, DenseSave: true}, "DenseSave needs a Rosenbrock method"},
		{"float32", engine.Request{Job: engine.Forward, Float32: true}, ""},
		{"float32 sensitivities", engine.Request{Job: engine.Sensitivities, NumSens: 2, Float32: true}, ""},
		{"float32 record", engine.Request{Job: engine.Record, Float32: true}, "Options.Precision float32: the cuda engine records meshes and takes gradients in float64 only"},
		{"device out of range", engine.Request{Job: engine.Forward, Device: 3}, "Options.Device = 3: the machine has 1 CUDA device (0)"},
		{"Go functions", engine.Request{Job: engine.Forward, Problem: &ode.Problem{Name: "gofunc", Dim: 1}},
			"gofunc has no symbolic form (Problem.Symbolic): the cuda engine writes its kernels from the problem's formulas"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := c.req
			req.Method = method.Tsit5
			if req.Problem == nil {
				req.Problem = sym
			}
			err := e.Serves(&req)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("Serves = %v; want nil", err)
			case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
				t.Errorf("Serves = %v; want %q…", err, c.want)
			}
		})
	}
	// float32 with a Rosenbrock method: served forward and with
	// sensitivities (the CUDA backend packs gs_ros_job_f32:
	// TestRun32Plumbing), and a float32 recording is refused as with an
	// explicit method.
	for _, c := range []struct {
		job  engine.Job
		want string
	}{
		{engine.Forward, ""},
		{engine.Sensitivities, ""},
		{engine.Record, "Options.Precision float32: the cuda engine records meshes and takes gradients in float64 only"},
	} {
		req := &engine.Request{Problem: sym, Offers: ode.AllPrograms, Method: method.Rodas5P, Job: c.job, Float32: true}
		if c.job == engine.Sensitivities {
			req.NumSens = 1
		}
		if err := e.Serves(req); (c.want == "") != (err == nil) || err != nil && !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("Serves(float32 Rodas5P %v) = %v; want %q…", c.job, err, c.want)
		}
	}
	t.Setenv("FAKE_CUDA_DEVICES", "2")
	e2 := New("cuda-test", &CUDA{Opts: cuda.Options{Driver: l.Driver, NVRTC: l.NVRTC}}, Config{})
	req := &engine.Request{Problem: sym, Method: method.Tsit5, Job: engine.Forward, Device: 2}
	if err := e2.Serves(req); err == nil || err.Error() != "Options.Device = 2: the machine has 2 CUDA devices (0 to 1)" {
		t.Errorf("Serves on device 2 of 2: %v", err)
	}
}

// TestSelfTestFake: on the fake driver the CUDA backend self-tests
// device 0 before it serves anything. The fake compiles and launches,
// but its kernel solves nothing (it copies inputs to outputs), so the
// self-test finds the difference from cpu-erk; a failing launch is
// named; GRADSOLVE_CUDA_SELFTEST=off skips the test.
func TestSelfTestFake(t *testing.T) {
	l := fakeLibs(t)
	t.Setenv("FAKE_CUDA_DEVICES", "")
	req := &engine.Request{Problem: lorenzProblem(t), Method: method.Tsit5, Job: engine.Forward}
	for _, c := range []struct {
		name, launch, selftest string
		want                   string // "" for available
	}{
		{"wrong results", "", "", "unavailable: self-test on device 0 failed: Tsit5 forward job: trajectory 0's status is "},
		{"launch error", "719", "", "unavailable: self-test on device 0 failed: Tsit5 forward job: cuda: cuLaunchKernel(gs_erk_tsit5): CUDA_ERROR_LAUNCH_FAILED"},
		{"skipped", "", "off", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("FAKE_CUDA_LAUNCH", c.launch)
			t.Setenv(SelfTestEnv, c.selftest)
			e := New("cuda-test", &CUDA{Opts: cuda.Options{Driver: l.Driver, NVRTC: l.NVRTC}}, Config{})
			err := e.Available()
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("Available() = %v; want nil", err)
			case c.want == "":
				return
			case err == nil || !errors.Is(err, cuda.ErrUnavailable) || !strings.HasPrefix(err.Error(), c.want):
				t.Fatalf("Available() = %v; want %q…", err, c.want)
			}
			if s := e.Serves(req); s == nil || s.Error() != err.Error() {
				t.Errorf("Serves = %v; want Available's %v", s, err)
			}
			if again := e.Available(); again != err {
				t.Errorf("a second Available() = %v: the self-test runs once per engine", again)
			}
		})
	}
}
