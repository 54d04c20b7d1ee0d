// Package cudafake builds fake CUDA libraries for tests: a libcuda.so.1
// (fake_cuda.c.in) with the driver API symbols package cuda binds, a
// variant of it without cuLaunchKernel, and a libnvrtc.so
// (fake_nvrtc.c.in), compiled from C with the system C compiler. Their
// behaviour is set by environment variables, read at each call (see the
// C sources): FAKE_CUDA_INIT (cuInit's status), FAKE_CUDA_DEVICES (the
// device count), FAKE_CUDA_LAUNCH and FAKE_CUDA_SYNC (the statuses of
// cuLaunchKernel and cuCtxSynchronize), FAKE_CUDA_ASYNC_BYTES and
// FAKE_CUDA_LAUNCH_N (which copies and launches fail), FAKE_CUDA_CALLS
// (a file logging each allocation, free, copy, launch and stream call,
// for tests of their order and of the memory used); a source containing "#error fake:"
// fails to compile with a log. The fake device has compute capability
// 9.0, host memory as device memory, and one kernel it "runs",
// fake_scale(double *x, int n, double a): x[i] *= a; a
// kernel named gs_erk_* has its gs_erk_job's outputs written from its
// inputs (see fake_cuda.c.in), not solved.
package cudafake

import (
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

//go:embed fake_cuda.c.in
var fakeCUDA []byte

//go:embed fake_nvrtc.c.in
var fakeNVRTC []byte

// Libs are the paths of the built libraries.
type Libs struct {
	// Driver is the fake libcuda.so.1; NoLaunch the same without the
	// symbol cuLaunchKernel; NVRTC the fake libnvrtc.so.
	Driver, NoLaunch, NVRTC string
}

// ErrNoCompiler is returned by Build where there is no C compiler.
var ErrNoCompiler = fmt.Errorf("cudafake: no C compiler ($CC, or cc) to build the fake CUDA libraries")

// Build compiles the fake libraries into dir with $CC, else cc. It
// returns ErrNoCompiler where there is none.
func Build(dir string) (Libs, error) {
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		return Libs{}, ErrNoCompiler
	}
	var l Libs
	for _, b := range []struct {
		out   *string
		name  string
		src   []byte
		flags []string
	}{
		{&l.Driver, "libcuda.so.1", fakeCUDA, nil},
		{&l.NoLaunch, "nolaunch/libcuda.so.1", fakeCUDA, []string{"-DFAKE_NO_LAUNCH"}},
		{&l.NVRTC, "libnvrtc.so", fakeNVRTC, nil},
	} {
		out := filepath.Join(dir, b.name)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return Libs{}, err
		}
		src := out + ".c"
		if err := os.WriteFile(src, b.src, 0o644); err != nil {
			return Libs{}, err
		}
		args := append([]string{"-shared", "-fPIC", "-O1", "-o", out}, b.flags...)
		args = append(args, src)
		if msg, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
			return Libs{}, fmt.Errorf("cudafake: building %s: %v: %s", b.name, err, msg)
		}
		*b.out = out
	}
	return l, nil
}
