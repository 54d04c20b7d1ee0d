package emitcuda_test

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/internal/cudaemu"
	"github.com/gradsolve/gradsolve/sym/emitcuda"
	"github.com/gradsolve/gradsolve/sym/parse"
	"github.com/gradsolve/gradsolve/sym/tape"
)

// The emulation tests compile generated kernel source with the system
// C++ compiler against internal/cudaemu's header, run it as a host
// program and compare what it computes with the CPU engines, bit for
// bit. Each distinct source compiles once per test run (cudaemu.Build
// caches by content hash in cacheDir).

//go:embed testdata/runner.cpp
var runnerSource string

var (
	cacheDir string // the compiled programs of this test run
	emu      struct {
		once sync.Once
		cxx  string
		err  error
	}
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "emitcuda-emu-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cacheDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// compiler returns the C++ compiler, or skips the test with the reason.
func compiler(t testing.TB) string {
	t.Helper()
	emu.once.Do(func() { emu.cxx, emu.err = cudaemu.Compiler() })
	if errors.Is(emu.err, cudaemu.ErrNoCompiler) {
		t.Skip("no C++ compiler (set CXX, or install g++ or clang++): the generated CUDA source cannot be run in emulation here")
	}
	if emu.err != nil {
		t.Fatal(emu.err)
	}
	return emu.cxx
}

// program is one compiled emulation program: a generated source with
// the runner.
type program struct {
	src *emitcuda.Source
	exe string
}

// compile assembles the translation unit of src (the emulation
// headers, the source, its kernel table and the runner) and builds it.
func compile(t testing.TB, src *emitcuda.Source) *program {
	t.Helper()
	cxx := compiler(t)
	var b strings.Builder
	b.WriteString("#include \"cuda_emu.h\"\n#include \"emu_io.h\"\n\n")
	b.Write(src.Code)
	var names, dims, nds []string
	for _, k := range src.Kernels {
		names = append(names, k.Name)
		dims = append(dims, fmt.Sprint(k.Dim))
		nds = append(nds, fmt.Sprint(k.NormDim))
	}
	if len(names) == 0 { // a table of one entry that no launch matches (no dimension is 0)
		names, dims, nds = []string{"nullptr"}, []string{"0"}, []string{"0"}
	}
	fmt.Fprintf(&b, "\nstatic void (*const gs_kernels[])(gs_erk_job) = {%s};\n", strings.Join(names, ", "))
	fmt.Fprintf(&b, "static const long long gs_kernel_dims[] = {%s};\n", strings.Join(dims, ", "))
	fmt.Fprintf(&b, "static const long long gs_kernel_normdims[] = {%s};\n\n", strings.Join(nds, ", "))
	b.WriteString(runnerSource)
	start := time.Now()
	exe, err := cudaemu.Build(context.Background(), cxx, cacheDir, []byte(b.String()))
	t.Logf("compiled %s in %v", src.Model, time.Since(start))
	if err != nil {
		t.Fatal(err)
	}
	return &program{src: src, exe: exe}
}

// readModel parses and builds a problem file of the examples or of
// testdata.
func readModel(t testing.TB, path string) *tape.Set {
	t.Helper()
	m, err := parse.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tape.Build(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// examplePath returns the path of examples/<name> in this module.
func examplePath(t testing.TB, name string) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("runtime.Caller failed")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "examples", name)
}

// job is the input of one launch of a forward kernel.
type job struct {
	kernel              int
	t0, t1, y0, p, save []float64
	perTrajectorySave   bool
	maxSteps            int
	hmax, h0            float64
	ctl                 control.PI
	rtol, atol          []float64
	grid, block         int
}

// result is what a launch computed.
type result struct {
	y, t, h, saved             []float64
	status                     []int64
	accepted, rejected, fevals []int64
}

// solve runs j on kernel j.kernel of p.
func (p *program) solve(t testing.TB, j *job) *result {
	t.Helper()
	k := p.src.Kernels[j.kernel]
	n := len(j.t0)
	nsave := len(j.save)
	stride := 0
	if j.perTrajectorySave {
		nsave /= n
		stride = nsave
	}
	var e cudaemu.Encoder
	for _, v := range []int{0, j.kernel, k.Dim, k.NormDim, n, nsave, stride, j.maxSteps} {
		e.Int(int64(v))
	}
	c := j.ctl
	e.Floats([]float64{j.hmax, j.h0, c.Beta1, c.Beta2, c.Safety, c.QMin, c.QMax, c.QOldInit})
	e.Int(int64(j.grid))
	e.Int(int64(j.block))
	for _, v := range [][]float64{j.rtol, j.atol, j.t0, j.t1, j.y0, j.p, j.save} {
		e.Floats(v)
	}
	out, err := cudaemu.Run(context.Background(), p.exe, e.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	d := cudaemu.NewDecoder(out)
	r := &result{y: d.Floats(n * k.Dim), t: d.Floats(n), h: d.Floats(n), saved: d.Floats(n * nsave * k.Dim),
		status: d.Ints(n), accepted: d.Ints(n), rejected: d.Ints(n), fevals: d.Ints(n)}
	if d.Err != nil || d.Rest() != 0 {
		t.Fatalf("%s: output: %v, %d bytes left over", k.Name, d.Err, d.Rest())
	}
	return r
}

// evalF evaluates the generated f at rows (t, y, p) in double (float32
// false) or float and returns the rows of dy.
func (p *program) evalF(t testing.TB, float32 bool, ts []float64, ys, ps [][]float64) [][]float64 {
	t.Helper()
	var e cudaemu.Encoder
	mode := int64(1)
	if float32 {
		mode = 2
	}
	e.Int(mode)
	e.Int(int64(len(ts)))
	for i := range ts {
		e.Float(ts[i])
		e.Floats(ys[i])
		e.Floats(ps[i])
	}
	out, err := cudaemu.Run(context.Background(), p.exe, e.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	d := cudaemu.NewDecoder(out)
	rows := make([][]float64, len(ts))
	for i := range rows {
		rows[i] = d.Floats(p.src.Dim)
	}
	if d.Err != nil || d.Rest() != 0 {
		t.Fatalf("f: output: %v, %d bytes left over", d.Err, d.Rest())
	}
	return rows
}
