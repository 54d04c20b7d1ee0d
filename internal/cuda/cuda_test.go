package cuda

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/gradsolve/gradsolve/internal/cuda/cudafake"
)

// The tests load fake driver and NVRTC libraries built from
// package cudafake with the system C
// compiler: they exercise the loading, binding, argument passing and
// every error path of the package, not a GPU (none is needed, and a
// real device is not tested here).

// fakes holds the paths of the built fake libraries, or why there are
// none.
var fakes struct {
	driver, noLaunch, nvrtc string
	skip                    string
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gradsolve-fakecuda")
	if err != nil {
		fakes.skip = err.Error()
	} else if l, err := cudafake.Build(dir); err != nil {
		fakes.skip = err.Error()
	} else {
		fakes.driver, fakes.noLaunch, fakes.nvrtc = l.Driver, l.NoLaunch, l.NVRTC
	}
	code := m.Run()
	if dir != "" {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

func needFakes(t *testing.T) {
	t.Helper()
	if fakes.skip != "" {
		t.Skip(fakes.skip)
	}
}

// fakeDevice opens the fake driver and its device 0.
func fakeDevice(t *testing.T) *Device {
	t.Helper()
	needFakes(t)
	d, err := Open(Options{Driver: fakes.driver, NVRTC: fakes.nvrtc})
	if err != nil {
		t.Fatal(err)
	}
	dev, err := d.Device(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := dev.Close(); err != nil {
			t.Error(err)
		}
	})
	return dev
}

const scaleSrc = `extern "C" __global__ void fake_scale(double *x, int n, double a) {}
extern "C" __global__ void other(int) {}
`

// TestOpenErrors: each way the driver cannot be opened gives an error
// wrapping ErrUnavailable whose text says why.
func TestOpenErrors(t *testing.T) {
	needFakes(t)
	missing := filepath.Join(t.TempDir(), "libcuda.so.1")
	for _, c := range []struct {
		name string
		opts Options
		env  map[string]string
		want []string
	}{
		{"missing library", Options{Driver: missing}, nil,
			[]string{"unavailable: no CUDA driver (" + missing + ": ", "No such file"}},
		{"missing symbol", Options{Driver: fakes.noLaunch}, nil,
			[]string{"unavailable: " + fakes.noLaunch + " has no symbol cuLaunchKernel"}},
		{"cuInit: no device", Options{Driver: fakes.driver}, map[string]string{"FAKE_CUDA_INIT": "100"},
			[]string{"unavailable: no CUDA device (cuInit: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected))"}},
		{"cuInit: other", Options{Driver: fakes.driver}, map[string]string{"FAKE_CUDA_INIT": "999"},
			[]string{"unavailable: the CUDA driver did not initialize (cuInit: CUDA error 999)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			d, err := Open(c.opts)
			if err == nil || d != nil {
				t.Fatalf("Open(%+v) = %v, %v; want an error", c.opts, d, err)
			}
			if !errors.Is(err, ErrUnavailable) {
				t.Errorf("%v does not wrap ErrUnavailable", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestOpenEnv: GRADSOLVE_CUDA_DRIVER names the driver where Options
// does not.
func TestOpenEnv(t *testing.T) {
	needFakes(t)
	t.Setenv("GRADSOLVE_CUDA_DRIVER", fakes.noLaunch)
	if _, err := Open(Options{}); err == nil || !strings.Contains(err.Error(), fakes.noLaunch+" has no symbol cuLaunchKernel") {
		t.Errorf("Open with GRADSOLVE_CUDA_DRIVER: %v", err)
	}
}

// TestSystemDriver: on a machine without the CUDA driver, the default
// soname gives the "no CUDA driver" error (skipped where one exists).
func TestSystemDriver(t *testing.T) {
	t.Setenv("GRADSOLVE_CUDA_DRIVER", "")
	d, err := Open(Options{})
	if err == nil {
		t.Skipf("a CUDA driver is installed here (%s)", d.path)
	}
	if !errors.Is(err, ErrUnavailable) || !strings.HasPrefix(err.Error(), "unavailable: ") {
		t.Errorf("Open() without a driver: %v", err)
	}
	t.Log(err)
}

// TestDeviceErrors: no device, and a device index out of range.
func TestDeviceErrors(t *testing.T) {
	needFakes(t)
	d, err := Open(Options{Driver: fakes.driver})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("FAKE_CUDA_DEVICES", "0")
	if _, err := d.Device(0); !errors.Is(err, ErrUnavailable) || err.Error() != "unavailable: no CUDA device" {
		t.Errorf("Device(0) with no device: %v", err)
	}
	t.Setenv("FAKE_CUDA_DEVICES", "2")
	if _, err := d.Device(2); err == nil || errors.Is(err, ErrUnavailable) || err.Error() != "CUDA device 2 does not exist: the machine has 2 (0 to 1)" {
		t.Errorf("Device(2) of 2: %v", err)
	}
	dev, err := d.Device(1)
	if err != nil {
		t.Fatal(err)
	}
	if dev.Arch() != "compute_90" || dev.Ordinal() != 1 {
		t.Errorf("device 1: arch %s, ordinal %d; the fake has 9.0", dev.Arch(), dev.Ordinal())
	}
	if err := dev.Close(); err != nil {
		t.Error(err)
	}
	if _, err := dev.Alloc(8); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Alloc on a closed device: %v", err)
	}
}

// TestNVRTCErrors: no NVRTC, an NVRTC lacking a symbol, and a failed
// compile, whose error carries the program log.
func TestNVRTCErrors(t *testing.T) {
	needFakes(t)
	missing := filepath.Join(t.TempDir(), "libnvrtc.so")
	for _, c := range []struct {
		name, nvrtc, src string
		unavailable      bool
		want             []string
	}{
		{"missing library", missing, scaleSrc, true, []string{"unavailable: no NVRTC (" + missing + ": ", "No such file"}},
		{"missing symbol", fakes.driver, scaleSrc, true, []string{"unavailable: " + fakes.driver + " has no symbol nvrtcCreateProgram"}},
		{"compile fails", fakes.nvrtc, "int x;\n#error fake: broken kernel\n", false, []string{
			"nvrtc: compiling gs.cu (--gpu-architecture=compute_90 --fmad=false --std=c++17) failed:\n",
			`gs.cu(1): error: #error fake: broken kernel`, `1 error detected in the compilation of "gs.cu"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := Open(Options{Driver: fakes.driver, NVRTC: c.nvrtc})
			if err != nil {
				t.Fatal(err)
			}
			dev, err := d.Device(0)
			if err != nil {
				t.Fatal(err)
			}
			defer dev.Close()
			m, err := dev.Module(c.src, "gs.cu")
			if err == nil || m != nil {
				t.Fatalf("Module = %v, %v; want an error", m, err)
			}
			if errors.Is(err, ErrUnavailable) != c.unavailable {
				t.Errorf("%v: errors.Is(ErrUnavailable) = %v", err, !c.unavailable)
			}
			if c.unavailable && d.NVRTC() == nil {
				t.Error("NVRTC() = nil where Module found no NVRTC")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if dev.compiles != 0 {
				t.Errorf("%d compiles counted for a failed one", dev.compiles)
			}
		})
	}
}

// TestHappyPath drives compile → load → function → alloc → copy →
// launch → synchronize → copy back through the fake, whose fake_scale
// multiplies n doubles by a: the arguments reach the "kernel" as
// cuLaunchKernel's parameter array, and the data make the round trip.
func TestHappyPath(t *testing.T) {
	dev := fakeDevice(t)
	ptx, err := dev.Compile(scaleSrc, "scale.cu")
	if err != nil {
		t.Fatal(err)
	}
	// The fake's PTX lists the options NVRTC got, one a line.
	for _, o := range []string{"--gpu-architecture=compute_90\n", "--fmad=false\n", "--std=c++17\n", ".entry fake_scale\n"} {
		if !strings.Contains(string(ptx), o) {
			t.Errorf("PTX %q lacks %q", ptx, o)
		}
	}
	m, err := dev.Module(scaleSrc, "scale.cu")
	if err != nil {
		t.Fatal(err)
	}
	if m2, err := dev.Module(scaleSrc, "scale.cu"); err != nil || m2 != m || dev.compiles != 1 {
		t.Errorf("second Module of the same source: %p, %v, %d compiles; want the cached %p, 1 compile", m2, err, dev.compiles, m)
	}
	if m3, err := dev.Module(scaleSrc+"\n", "scale.cu"); err != nil || m3 == m || dev.compiles != 2 {
		t.Errorf("Module of another source: %v, %d compiles; want a new module", err, dev.compiles)
	}
	if _, err := m.Function("missing"); err == nil || err.Error() != "cuda: module scale.cu has no kernel missing" {
		t.Errorf("Function(missing): %v", err)
	}
	f, err := m.Function("fake_scale")
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{1, -2, 0.5, 3, 1e300, -0.0, 7}
	p, err := dev.Alloc(len(x) * 8)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Free(p)
	if err := CopyIn(dev, p, x); err != nil {
		t.Fatal(err)
	}
	n, a := int32(len(x)), 0.25
	if err := f.Launch(2, 2, unsafe.Pointer(&p), unsafe.Pointer(&n), unsafe.Pointer(&a)); err != nil {
		t.Fatal(err)
	}
	if err := dev.Synchronize(); err != nil {
		t.Fatal(err)
	}
	got := make([]float64, len(x))
	if err := CopyOut(dev, got, p); err != nil {
		t.Fatal(err)
	}
	for i := range x {
		// Scaling by 0.25 is exact for these values.
		if got[i] != x[i]*a {
			t.Errorf("x[%d] = %v after the launch; want %v", i, got[i], x[i]*a)
		}
	}
	if _, err := dev.Alloc(0); err == nil {
		t.Error("Alloc(0) succeeded")
	}
	if err := f.Launch(0, 32); err == nil {
		t.Error("a launch on an empty grid succeeded")
	}
}

// TestLaunchErrors: a launch and a synchronize that fail name the call,
// the kernel and the driver's error name and text.
func TestLaunchErrors(t *testing.T) {
	dev := fakeDevice(t)
	m, err := dev.Module(scaleSrc, "scale.cu")
	if err != nil {
		t.Fatal(err)
	}
	f, err := m.Function("other")
	if err != nil {
		t.Fatal(err)
	}
	var k int32
	for _, c := range []struct {
		env, code string
		call      func() error
		want      string
	}{
		{"FAKE_CUDA_LAUNCH", "719", func() error { return f.Launch(1, 1, unsafe.Pointer(&k)) },
			"cuda: cuLaunchKernel(other): CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)"},
		{"FAKE_CUDA_LAUNCH", "701", func() error { return f.Launch(1, 1, unsafe.Pointer(&k)) },
			"cuda: cuLaunchKernel(other): CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (too many resources requested for launch)"},
		{"FAKE_CUDA_LAUNCH", "4242", func() error { return f.Launch(1, 1, unsafe.Pointer(&k)) },
			"cuda: cuLaunchKernel(other): CUDA error 4242"},
		{"FAKE_CUDA_SYNC", "700", dev.Synchronize,
			"cuda: cuCtxSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)"},
	} {
		t.Setenv(c.env, c.code)
		err := c.call()
		var ce *Error
		if err == nil || err.Error() != c.want || !errors.As(err, &ce) || ce.Code == 0 {
			t.Errorf("%s=%s: %v; want %q", c.env, c.code, err, c.want)
		}
		t.Setenv(c.env, "")
	}
}
