package gpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/internal/cuda"
	"github.com/gradsolve/gradsolve/internal/cudaemu"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/sym/emitcuda"
	"github.com/gradsolve/gradsolve/sym/parse"
	"github.com/gradsolve/gradsolve/sym/tape"
)

// lorenzSource generates the kernels of examples/lorenz.ode.
func lorenzSource(t *testing.T) *emitcuda.Source {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	m, err := parse.ParseFile(filepath.Join(filepath.Dir(file), "..", "..", "..", "examples", "lorenz.ode"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := tape.Build(m)
	if err != nil {
		t.Fatal(err)
	}
	src, err := emitcuda.Generate(s, emitcuda.Options{Methods: []*method.Tableau{method.Tsit5}})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// jobFields are gs_erk_job's fields in erk.cuh's order, those of Job.
var jobFields = []string{"n", "nsave", "save_stride", "max_steps", "hmax", "h0",
	"beta1", "beta2", "safety", "qmin", "qmax", "qoldinit",
	"rtol", "atol", "t0", "t1", "y0", "p", "save", "y", "t", "h", "saved",
	"status", "accepted", "rejected", "fevals"}

// TestJobLayout: Job has gs_erk_job's size and offsets, as the host C++
// compiler lays out the generated source's struct (x86-64 and a GPU
// agree for a struct of 8-byte fields).
func TestJobLayout(t *testing.T) {
	cxx, err := cudaemu.Compiler()
	if err != nil {
		t.Skip(err)
	}
	src := lorenzSource(t)
	var b strings.Builder
	b.WriteString("#include \"cuda_emu.h\"\n#include <cstddef>\n#include <cstdio>\n")
	b.Write(src.Code)
	b.WriteString("int main() {\n  printf(\"%zu\", sizeof(gs_erk_job));\n")
	for _, f := range jobFields {
		fmt.Fprintf(&b, "  printf(\" %%zu\", offsetof(gs_erk_job, %s));\n", f)
	}
	b.WriteString("  return 0;\n}\n")
	exe, err := cudaemu.Build(context.Background(), cxx, t.TempDir(), []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	out, err := cudaemu.Run(context.Background(), exe, nil)
	if err != nil {
		t.Fatal(err)
	}
	typ := reflect.TypeOf(Job{})
	want := fmt.Sprint(typ.Size())
	for i := range jobFields {
		want += fmt.Sprintf(" %d", typ.Field(i).Offset)
	}
	if typ.NumField() != len(jobFields) || string(out) != want {
		t.Errorf("gs_erk_job: size and offsets %q; Job (%d fields): %q", out, typ.NumField(), want)
	}
}

// TestForwardPlumbing runs Forward through the fake driver: the
// generated source reaches NVRTC, the kernel gs_erk_tsit5 is found, the
// job struct reaches the "kernel" with every field where gs_erk_job has
// it (the fake writes each output from inputs at other offsets), and
// the outputs come back. It checks the plumbing only: the fake solves
// nothing, and no GPU is used.
func TestForwardPlumbing(t *testing.T) {
	l := fakeLibs(t)
	t.Setenv("FAKE_CUDA_DEVICES", "")
	e := New("cuda-test", cuda.Options{Driver: l.Driver, NVRTC: l.NVRTC}, 0)
	src := lorenzSource(t)
	k := src.Kernels[0]
	if k.Name != "gs_erk_tsit5" {
		t.Fatalf("kernel %s", k.Name)
	}
	const n = 300 // more than one block
	in := &Input{K: 2, MaxSteps: 77, HMax: math.Inf(1), H0: 0.5,
		Controller: control.PI{Beta1: 1, Beta2: 2, Safety: 4, QMin: 8, QMax: 16, QOldInit: 32},
		RTol:       []float64{64, 0, 0}, ATol: []float64{128, 0, 0}, Save: []float64{0.25, 0.75}}
	for i := range n {
		in.T0 = append(in.T0, float64(i))
		in.T1 = append(in.T1, float64(1000*i))
		in.Y0 = append(in.Y0, float64(i), -1, -2)
		in.P = append(in.P, float64(i)/4, 0, 0)
	}
	out, err := e.Forward(src, k, in)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		wantH := math.Inf(1)
		if out.T[i] != float64(1001*i) || out.H[i] != wantH || out.Y[i] != in.Y0[i] ||
			out.Status[i] != 2000 || out.Accepted[i] != 77 || out.Rejected[i] != int64(i) || out.FEvals[i] != n {
			t.Fatalf("trajectory %d: t %v h %v y %v status %d accepted %d rejected %d fevals %d",
				i, out.T[i], out.H[i], out.Y[i], out.Status[i], out.Accepted[i], out.Rejected[i], out.FEvals[i])
		}
	}
	if out.Saved[0] != 0.25 || len(out.Saved) != n*2*3 {
		t.Errorf("saved[0] = %v (len %d); want the first save time, 0.25 (len %d)", out.Saved[0], len(out.Saved), n*6)
	}
	// A finite hmax: h carries the sum of the scalars and of p.
	in.HMax = 256
	out, err = e.Forward(src, k, in)
	if err != nil {
		t.Fatal(err)
	}
	if want := 256 + 0.5 + 1 + 2 + 4 + 8 + 16 + 32 + 64 + 128 + in.P[5]; out.H[5] != want {
		t.Errorf("h[5] = %v; want %v", out.H[5], want)
	}
	if e.dev.Arch() != "compute_90" {
		t.Errorf("arch %s", e.dev.Arch())
	}
	// The launch error of the driver comes back as it is.
	t.Setenv("FAKE_CUDA_LAUNCH", "719")
	var ce *cuda.Error
	if _, err := e.Forward(src, k, in); !errors.As(err, &ce) || !strings.Contains(err.Error(), "cuLaunchKernel(gs_erk_tsit5): CUDA_ERROR_LAUNCH_FAILED") {
		t.Errorf("Forward with a failing launch: %v", err)
	}
	t.Setenv("FAKE_CUDA_LAUNCH", "")
	// Inputs of the wrong sizes are refused before any copy.
	bad := *in
	bad.Y0 = bad.Y0[1:]
	if _, err := e.Forward(src, k, &bad); err == nil || !strings.Contains(err.Error(), "y0") {
		t.Errorf("Forward with a short y0: %v", err)
	}
	// Unavailable: Available's reason.
	u := New("cuda-test", cuda.Options{Driver: filepath.Join(t.TempDir(), "none")}, 0)
	if _, err := u.Forward(src, k, in); !errors.Is(err, cuda.ErrUnavailable) {
		t.Errorf("Forward on an unavailable engine: %v", err)
	}
}
