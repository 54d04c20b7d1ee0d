package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve/npy"
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

// TestDevicePrecisionFlags: --device and --precision reach the engines,
// and each refusal is one line in the flags' terms with exit status 1.
func TestDevicePrecisionFlags(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "libcuda.so.1")
	lorenz := []string{"solve", "../../examples/lorenz.ode", "--n", "2", "--ref", "0"}
	for _, c := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"negative device", nil, []string{"--device", "-1"}, "gradsolve: --device = -1: must be ≥ 0 (the index of a GPU)"},
		{"unknown precision", nil, []string{"--precision", "float16"}, `gradsolve: --precision "float16": want float64 or float32`},
		{"float32 on the CPU", nil, []string{"--precision", "float32"},
			"gradsolve: --precision float32: the CPU engines compute in float64 only: their core (packages ivp, erk, ros, control and the compiled tapes) is written for float64, not generic over the float type"},
		{"float32 on cpu-ros", nil, []string{"--precision", "float32", "--engine", "cpu-ros"}, "--precision float32: the CPU engines compute in float64 only"},
		{"device out of range", []string{"GRADSOLVE_CUDA_EMULATE=1"}, []string{"--device", "3", "--engine", "cuda-emu"},
			`gradsolve: --engine "cuda-emu" cannot serve this forward job: --device 3: the machine has 1 emulated CUDA device (0)`},
		{"no GPU", []string{"GRADSOLVE_CUDA_DRIVER=" + missing}, []string{"--device", "1", "--engine", "cuda"},
			`gradsolve: --engine "cuda" cannot serve this forward job: unavailable: no CUDA driver (` + missing},
		{"grad float32", nil, []string{"--precision", "float32"}, "--precision float32: the CPU engines compute in float64 only"},
		{"a tolerance float32 cannot meet", []string{"GRADSOLVE_CUDA_EMULATE=1"}, []string{"--precision", "float32", "--engine", "cuda-emu", "--rtol", "1e-8"},
			"gradsolve: --rtol = 1e-08 with --precision float32: must be ≥ 1.19e-06 (ten units of float32's roundoff; leave --rtol and --atol out for float32's defaults 1e-05 and 1e-08)"},
		{"grad float32 on the cuda engine", []string{"GRADSOLVE_CUDA_EMULATE=1"}, []string{"--precision", "float32", "--engine", "cuda-emu", "--mode", "reverse"},
			`gradsolve: --engine "cuda-emu" cannot serve this record job: --precision float32: the cuda engine records meshes and takes gradients in float64 only`},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append(append([]string(nil), lorenz...), c.args...)
			if strings.HasPrefix(c.name, "grad float32") {
				args = append([]string{"grad", "../../examples/lorenz.ode", "--n", "2", "--loss", "sumsq"}, c.args...)
			}
			r := execCmd(t, c.env, append(args, "--out", t.TempDir())...)
			line := strings.TrimSuffix(r.stderr, "\n")
			if r.code != 1 || strings.Contains(line, "\n") || !strings.Contains(line, c.want) || goField.MatchString(line) {
				t.Errorf("gradsolve %v: exit %d, stderr %q; want exit 1 and one line with %q", args, r.code, r.stderr, c.want)
			}
		})
	}
	// Without --rtol and --atol, float32 runs at its own defaults.
	if r := execCmd(t, []string{"GRADSOLVE_CUDA_EMULATE=1"}, append(append([]string(nil), lorenz...), "--engine", "cuda-emu", "--precision", "float32", "--out", t.TempDir())...); r.code != 0 && !strings.Contains(r.stderr, "unavailable: ") {
		t.Errorf("--precision float32 with the default tolerances: exit %d, stderr %q", r.code, r.stderr)
	} else if r.code == 0 && !strings.Contains(r.stdout, "rtol 1e-05, atol 1e-08") {
		t.Errorf("--precision float32 with the default tolerances: stdout %q, want rtol 1e-05, atol 1e-08", r.stdout)
	}
	// --device is ignored by the CPU engines, and the emulated cuda
	// engine runs on its device 0.
	for _, args := range [][]string{{"--device", "2"}, {"--engine", "cuda-emu", "--device", "0", "--precision", "float64"}} {
		r := execCmd(t, []string{"GRADSOLVE_CUDA_EMULATE=1"}, append(append(append([]string(nil), lorenz...), args...), "--out", t.TempDir())...)
		if r.code != 0 {
			t.Errorf("gradsolve %v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
}

// TestFloat32Emulated: gradsolve solve --engine cuda-emu --precision
// float32 runs the float32 kernels, explicit (Lorenz, the default Tsit5)
// and Rosenbrock (Robertson's stiff kinetics with Rodas5P): every
// trajectory Success, finite final states that are not the float64
// solve's bits. (Their accuracy against the truth is
// internal/engine/gpu's TestEmulatedFloat32 and TestEmulatedRosFloat32.)
func TestFloat32Emulated(t *testing.T) {
	for _, c := range []struct{ file, method string }{{"lorenz.ode", ""}, {"robertson.ode", "rodas5p"}} {
		t.Run(c.file, func(t *testing.T) { float32Emulated(t, c.file, c.method) })
	}
}

func float32Emulated(t *testing.T, file, method string) {
	env := []string{"GRADSOLVE_CUDA_EMULATE=1"}
	run := func(prec string) *npy.Array {
		dir := t.TempDir()
		args := []string{"solve", "../../examples/" + file, "--n", "4", "--ref", "0", "--engine", "cuda-emu",
			"--precision", prec, "--rtol", "1e-5", "--atol", "1e-6", "--out", dir}
		if method != "" {
			args = append(args, "--method", method)
		}
		r := execCmd(t, env, args...)
		if r.code != 0 {
			if strings.Contains(r.stderr, "unavailable: ") {
				t.Skipf("the emulated device cannot run here: %s", r.stderr)
			}
			t.Fatalf("--precision %s: exit %d, stderr %q", prec, r.code, r.stderr)
		}
		if !strings.Contains(r.stdout, "status: 4 Success") {
			t.Fatalf("--precision %s: stdout %q: want every trajectory Success", prec, r.stdout)
		}
		y, err := npy.ReadFile(filepath.Join(dir, "y_final.npy"))
		if err != nil {
			t.Fatal(err)
		}
		if err := y.Check("y_final", []int{4, 3}); err != nil {
			t.Fatal(err)
		}
		return y
	}
	y32, y64 := run("float32"), run("float64")
	same := true
	for i, v := range y32.Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Errorf("float32 y_final[%d] = %v", i, v)
		}
		same = same && v == y64.Data[i]
	}
	if same {
		t.Errorf("the float32 solve's final states are the float64 solve's bits: it did not run in float")
	}
}
