package emitcuda_test

import (
	"bytes"
	_ "embed"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/sym/emitcuda"
)

//go:embed testdata/clang_cuda_shim.h
var clangShim string

// TestDeviceCompile compiles a generated source for the GPU, where
// clang with its NVPTX target is installed (no CUDA installation is
// needed), and checks the PTX: every kernel is there, no instruction
// fuses a product into a multiply–add (fma), and every double product
// is a mul.rn.f64, which no later compiler may fuse either. It logs the
// local memory the kernels use (the state and stages should live in
// registers). Skipped where clang cannot compile CUDA for sm_80.
func TestDeviceCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles for the device with clang; skipped in -short mode")
	}
	clang := ""
	for _, name := range []string{"clang++", "clang++-19", "clang++-18", "clang++-17", "clang++-16", "clang++-15", "clang++-14"} {
		if p, err := exec.LookPath(name); err == nil {
			clang = p
			break
		}
	}
	if clang == "" {
		t.Skip("no clang++: the device compile of the generated source is not checked here")
	}
	dir := t.TempDir()
	shim := filepath.Join(dir, "shim.h")
	if err := os.WriteFile(shim, []byte(clangShim), 0o644); err != nil {
		t.Fatal(err)
	}
	ptx := func(src []byte) ([]byte, error) {
		in, out := filepath.Join(dir, "k.cu"), filepath.Join(dir, "k.ptx")
		if err := os.WriteFile(in, src, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(clang, "-x", "cuda", "--cuda-device-only", "--cuda-gpu-arch=sm_80", "-nocudainc", "-nocudalib",
			"-std=c++17", "-O2", "-ffp-contract=off", "-include", shim, "-S", in, "-o", out)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return nil, &exec.ExitError{Stderr: stderr.Bytes()}
		}
		return os.ReadFile(out)
	}
	probe := []byte("extern \"C\" __global__ void probe(double* x) { x[threadIdx.x] = __dmul_rn(x[0], 2.0); }\n")
	if _, err := ptx(probe); err != nil {
		t.Skipf("%s cannot compile CUDA for sm_80 here: %s", clang, err.(*exec.ExitError).Stderr)
	}
	// funcs: every math function; Tsit5 (FSAL) and DP8 (the deferred
	// last stage, DOP853's norm), forward and with sensitivities, in
	// double and float, and the record and adjoint kernels.
	c := forwardCases[len(forwardCases)-1]
	src, err := emitcuda.Generate(readModel(t, casePath(t, c.file)), emitcuda.Options{
		Methods: []*method.Tableau{method.Tsit5, method.DP8}, Sens: []emitcuda.Sens{{Cols: c.cols()}},
		Float32: true, Record: true, Adjoint: true})
	if err != nil {
		t.Fatal(err)
	}
	code, err := ptx(src.Code)
	if err != nil {
		t.Fatalf("the generated source does not compile for the device:\n%s", err.(*exec.ExitError).Stderr)
	}
	for _, k := range src.Kernels {
		if !bytes.Contains(code, []byte(".entry "+k.Name+"(")) {
			t.Errorf("kernel %s is not in the PTX", k.Name)
		}
	}
	if n := len(regexp.MustCompile(`\bfma\.`).FindAll(code, -1)); n > 0 {
		t.Errorf("the PTX has %d fma instructions: a product was fused", n)
	}
	if n := len(regexp.MustCompile(`\bmul\.f64`).FindAll(code, -1)); n > 0 {
		t.Errorf("the PTX has %d mul.f64 instructions that a later pass may fuse; want mul.rn.f64 only", n)
	}
	t.Logf("%d mul.rn.f64; local memory: %d loads and stores", len(regexp.MustCompile(`\bmul\.rn\.f64`).FindAll(code, -1)),
		len(regexp.MustCompile(`\b(ld|st)\.local`).FindAll(code, -1)))
}
