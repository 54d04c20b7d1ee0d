package emitcuda_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/sym/emitcuda"
)

// TestDeviceCompileRosenbrock is TestDeviceCompile for the Rosenbrock
// kernels: where clang with its NVPTX target is installed, the source
// of rosforced (cos, sin and exp in f and its derivative programs; both
// methods, forward, with sensitivities, their float32 twins, record and adjoint) compiles for sm_80, every
// Rosenbrock kernel is in the PTX, no product is fused (no fma) and
// every double product is a mul.rn.f64. It logs the local memory the
// kernels use. Skipped without clang, and in -short mode.
func TestDeviceCompileRosenbrock(t *testing.T) {
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
	ptx := func(src []byte) ([]byte, []byte, error) {
		in, out := filepath.Join(dir, "k.cu"), filepath.Join(dir, "k.ptx")
		if err := os.WriteFile(in, src, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(clang, "-x", "cuda", "--cuda-device-only", "--cuda-gpu-arch=sm_80", "-nocudainc", "-nocudalib",
			"-std=c++17", "-O2", "-ffp-contract=off", "-include", shim, "-S", in, "-o", out)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return nil, stderr.Bytes(), err
		}
		b, err := os.ReadFile(out)
		return b, nil, err
	}
	probe := []byte("extern \"C\" __global__ void probe(double* x) { x[threadIdx.x] = __dmul_rn(x[0], 2.0); }\n")
	if _, msg, err := ptx(probe); err != nil {
		t.Skipf("%s cannot compile CUDA for sm_80 here: %s", clang, msg)
	}
	c := rosCases[2]
	src, err := emitcuda.Generate(readModel(t, casePath(t, c.file)), emitcuda.Options{Methods: []*method.Tableau{},
		Rosenbrock: rosMethods, Sens: []emitcuda.Sens{{Cols: []int{0, 1, -1}}}, RosRecord: true, RosAdjoint: true, Float32: true})
	if err != nil {
		t.Fatal(err)
	}
	code, msg, err := ptx(src.Code)
	if err != nil {
		t.Fatalf("the generated source does not compile for the device: %v\n%s", err, msg)
	}
	for _, k := range src.RosKernels {
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
