package cudaemu_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve/internal/cudaemu"
)

// compiler returns the C++ compiler or skips the test.
func compiler(t *testing.T) string {
	t.Helper()
	cxx, err := cudaemu.Compiler()
	if errors.Is(err, cudaemu.ErrNoCompiler) {
		t.Skip("no C++ compiler on this machine (set CXX or install g++): the CUDA emulation cannot be tested")
	}
	if err != nil {
		t.Fatal(err)
	}
	return cxx
}

// axpy is a grid-stride kernel: each thread handles the elements i, i +
// stride, … (stride = blockDim·gridDim), and records which thread did,
// so the test sees that the launch ran every thread once and covered
// every element once.
const axpy = `#include "cuda_emu.h"
#include "emu_io.h"

extern "C" __global__ void axpy(long long n, double a, const double* x, double* y, long long* who) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x) {
    y[i] = __dmul_rn(a, x[i]) + y[i];
    who[i] += 1000 * (long long)blockIdx.x + threadIdx.x + 1;
  }
}

int main() {
  long long n = gs_read_i64(), grid = gs_read_i64(), block = gs_read_i64();
  double a = gs_read_f64();
  std::vector<double> x = gs_read_f64s(n), y = gs_read_f64s(n);
  std::vector<long long> who(n, 0);
  gs_emu_launch(dim3(grid), dim3(block), axpy, n, a, x.data(), y.data(), who.data());
  gs_write_f64s(y.data(), n);
  gs_write_i64s(who.data(), n);
  return 0;
}
`

func TestLaunchGridStride(t *testing.T) {
	cxx := compiler(t)
	ctx := context.Background()
	dir := t.TempDir()
	exe, err := cudaemu.Build(ctx, cxx, dir, []byte(axpy))
	if err != nil {
		t.Fatal(err)
	}
	again, err := cudaemu.Build(ctx, cxx, dir, []byte(axpy))
	if err != nil || again != exe {
		t.Fatalf("second Build of the same source: %q, %v; want the cached %q", again, err, exe)
	}
	const n, grid, block = 1000, 3, 64 // 192 threads: most handle 5 or 6 elements
	a := 1.0 / 3
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = math.Sqrt(float64(i)) + 0.1
		y[i] = 1 / float64(i+1)
	}
	var e cudaemu.Encoder
	e.Int(n)
	e.Int(grid)
	e.Int(block)
	e.Float(a)
	e.Floats(x)
	e.Floats(y)
	out, err := cudaemu.Run(ctx, exe, e.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	d := cudaemu.NewDecoder(out)
	gotY, who := d.Floats(n), d.Ints(n)
	if d.Err != nil || d.Rest() != 0 {
		t.Fatalf("output: %v, %d bytes left", d.Err, d.Rest())
	}
	for i := range n {
		want := float64(a*x[i]) + y[i]
		if math.Float64bits(gotY[i]) != math.Float64bits(want) {
			t.Errorf("y[%d] = %v, want %v", i, gotY[i], want)
		}
		// Element i belongs to global thread i mod 192: block g/64,
		// thread g%64, recorded once.
		g := i % (grid * block)
		if w := int64(1000*(g/block) + g%block + 1); who[i] != w {
			t.Errorf("element %d: written by %d, want once by block %d thread %d", i, who[i], g/block, g%block)
		}
	}
}

func TestBuildError(t *testing.T) {
	cxx := compiler(t)
	_, err := cudaemu.Build(context.Background(), cxx, t.TempDir(), []byte("#include \"cuda_emu.h\"\nint main() { return undefined_name; }\n"))
	if err == nil || !strings.Contains(err.Error(), "undefined_name") {
		t.Fatalf("Build of a bad source: %v; want the compiler's message naming undefined_name", err)
	}
}

func TestEncoderDecoder(t *testing.T) {
	var e cudaemu.Encoder
	e.Int(-3)
	e.Floats([]float64{math.Copysign(0, -1), math.Inf(1), math.Float64frombits(0x7ff8000000000123)})
	d := cudaemu.NewDecoder(e.Bytes())
	if v := d.Int(); v != -3 {
		t.Errorf("Int = %d, want -3", v)
	}
	want := []uint64{0x8000000000000000, 0x7ff0000000000000, 0x7ff8000000000123}
	for i, x := range d.Floats(3) {
		if math.Float64bits(x) != want[i] {
			t.Errorf("value %d: bits %#x, want %#x", i, math.Float64bits(x), want[i])
		}
	}
	if d.Err != nil {
		t.Fatal(d.Err)
	}
	d.Int()
	if d.Err == nil {
		t.Error("reading past the end set no error")
	}
}
