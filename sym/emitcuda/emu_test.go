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
	// slot is each kernel's index in the runner's table of its kind.
	slot []int
}

// compile assembles the translation unit of src (the emulation
// headers, the source, its kernel table and the runner) and builds it.
func compile(t testing.TB, src *emitcuda.Source) *program {
	t.Helper()
	cxx := compiler(t)
	var b strings.Builder
	b.WriteString("#include \"cuda_emu.h\"\n#include \"emu_io.h\"\n\n")
	b.Write(src.Code)
	// One table per job type: the double forward and sensitivity
	// kernels, the float32 ones, the record and the adjoint kernels.
	type table struct{ names, dims, nds []string }
	var tabs [4]table
	slot := make([]int, len(src.Kernels))
	for i, k := range src.Kernels {
		ti := 0
		switch {
		case k.Kind == emitcuda.Record:
			ti = 2
		case k.Kind == emitcuda.Adjoint:
			ti = 3
		case k.Float32:
			ti = 1
		}
		tb := &tabs[ti]
		slot[i] = len(tb.names)
		tb.names = append(tb.names, k.Name)
		tb.dims = append(tb.dims, fmt.Sprint(k.Dim))
		tb.nds = append(tb.nds, fmt.Sprint(k.NormDim))
	}
	for ti, spec := range []struct{ suffix, job, have string }{{"", "gs_erk_job", ""}, {"_f32", "gs_erk_job_f32", "GS_HAVE_F32"},
		{"_rec", "gs_erk_record_job", "GS_HAVE_REC"}, {"_adj", "gs_erk_adjoint_job", "GS_HAVE_ADJ"}} {
		tb := tabs[ti]
		if len(tb.names) == 0 {
			if ti > 0 {
				continue
			}
			// a table of one entry that no launch matches (no dimension is 0)
			tb.names, tb.dims, tb.nds = []string{"nullptr"}, []string{"0"}, []string{"0"}
		}
		if spec.have != "" {
			fmt.Fprintf(&b, "\n#define %s 1", spec.have)
		}
		fmt.Fprintf(&b, "\nstatic void (*const gs_kernels%s[])(%s) = {%s};\n", spec.suffix, spec.job, strings.Join(tb.names, ", "))
		fmt.Fprintf(&b, "static const long long gs_kernel%s_dims[] = {%s};\n", spec.suffix, strings.Join(tb.dims, ", "))
		fmt.Fprintf(&b, "static const long long gs_kernel%s_normdims[] = {%s};\n\n", spec.suffix, strings.Join(tb.nds, ", "))
	}
	b.WriteString(runnerSource)
	start := time.Now()
	exe, err := cudaemu.Build(context.Background(), cxx, cacheDir, []byte(b.String()))
	t.Logf("compiled %s in %v", src.Model, time.Since(start))
	if err != nil {
		t.Fatal(err)
	}
	return &program{src: src, exe: exe, slot: slot}
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
	cap                 int // a record kernel's mesh capacity, in steps
}

// result is what a launch computed.
type result struct {
	y, t, h, saved             []float64
	status                     []int64
	accepted, rejected, fevals []int64
	// A record kernel's meshes: steps per trajectory (−1: full), and
	// the rows of T (cap+1 each), H (cap) and Y ((cap+1)·Dim).
	steps               []int64
	meshT, meshH, meshY []float64
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
	mode := 0
	switch {
	case k.Kind == emitcuda.Record:
		mode = 5
	case k.Float32:
		mode = 4
	}
	var e cudaemu.Encoder
	for _, v := range []int{mode, p.slot[j.kernel], k.Dim, k.NormDim, n, nsave, stride, j.maxSteps} {
		e.Int(int64(v))
	}
	c := j.ctl
	e.Floats([]float64{j.hmax, j.h0, c.Beta1, c.Beta2, c.Safety, c.QMin, c.QMax, c.QOldInit})
	e.Int(int64(j.grid))
	e.Int(int64(j.block))
	for _, v := range [][]float64{j.rtol, j.atol, j.t0, j.t1, j.y0, j.p, j.save} {
		e.Floats(v)
	}
	if mode == 5 {
		e.Int(int64(j.cap))
	}
	out, err := cudaemu.Run(context.Background(), p.exe, e.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	d := cudaemu.NewDecoder(out)
	r := &result{y: d.Floats(n * k.Dim), t: d.Floats(n), h: d.Floats(n), saved: d.Floats(n * nsave * k.Dim),
		status: d.Ints(n), accepted: d.Ints(n), rejected: d.Ints(n), fevals: d.Ints(n)}
	if mode == 5 {
		c := j.cap
		r.steps = d.Ints(n)
		r.meshT, r.meshH, r.meshY = d.Floats(n*(c+1)), d.Floats(n*c), d.Floats(n*(c+1)*k.Dim)
	}
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
