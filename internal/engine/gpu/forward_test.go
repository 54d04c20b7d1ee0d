package gpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/internal/cuda"
	"github.com/gradsolve/gradsolve/internal/cudaemu"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
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

// fakeModule loads the lorenz source on the fake driver's device.
func fakeModule(t *testing.T) (*cudaModule, *emitcuda.Source) {
	t.Helper()
	return fakeLoad(t, fakeDevice(t), emitcuda.Options{Methods: []*method.Tableau{method.Tsit5}})
}

// fakeDevice opens device 0 of the fake driver (one device).
func fakeDevice(t *testing.T) Device {
	t.Helper()
	l := fakeLibs(t)
	t.Setenv("FAKE_CUDA_DEVICES", "")
	b := &CUDA{Opts: cuda.Options{Driver: l.Driver, NVRTC: l.NVRTC}}
	dev, err := b.Open(0)
	if err != nil {
		t.Fatal(err)
	}
	return dev
}

// fakeLoad generates Lorenz's kernels with o and loads them on dev.
func fakeLoad(t *testing.T, dev Device, o emitcuda.Options) (*cudaModule, *emitcuda.Source) {
	t.Helper()
	src, err := emitcuda.Generate(lorenzProblem(t).Symbolic.(*tape.Set), o)
	if err != nil {
		t.Fatal(err)
	}
	m, err := dev.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	return m.(*cudaModule), src
}

// plumbingBatch is a batch of n trajectories of lorenz with 2 save
// times, its inputs distinct per trajectory.
func plumbingBatch(n int) *Batch {
	b := NewBatch(n, 3, 3, 2)
	for i := range n {
		b.T0[i], b.T1[i] = float64(i), float64(1000*i)
		copy(b.Y0[3*i:], []float64{float64(i), -1, -2})
		copy(b.P[3*i:], []float64{float64(i) / 4, 0, 0})
		copy(b.Save[2*i:], []float64{0.25, 0.75})
	}
	return b
}

// TestRunPlumbing runs a batch through the fake driver in chunks on
// two streams: the generated source reaches NVRTC, the kernel is found,
// every chunk is launched (alternately on the two streams) with a
// gs_erk_job whose fields arrive where the C struct has them (the fake
// writes each output from inputs at other offsets), and every chunk's
// outputs come back to its own rows. It checks the plumbing only: the
// fake solves nothing, and no GPU is used.
func TestRunPlumbing(t *testing.T) {
	m, src := fakeModule(t)
	k := erkKernel(src.Kernels[0])
	if k.Name != "gs_erk_tsit5" {
		t.Fatalf("kernel %s", k.Name)
	}
	s := &Settings{MaxSteps: 77, HMax: math.Inf(1), H0: 0.5,
		Controller: control.PI{Beta1: 1, Beta2: 2, Safety: 4, QMin: 8, QMax: 16, QOldInit: 32},
		RTol:       []float64{64, 0, 0}, ATol: []float64{128, 0, 0}}
	const n = 300
	for _, chunk := range []int{7, 128, n} {
		log := filepath.Join(t.TempDir(), "launches")
		t.Setenv("FAKE_CUDA_LAUNCHES", log)
		b := plumbingBatch(n)
		var stop atomic.Bool
		done, err := m.Run(k, s, b, chunk, &stop)
		if err != nil || done != n {
			t.Fatalf("chunk %d: Run = %d, %v", chunk, done, err)
		}
		for i := range n {
			c := i % chunk // the fake's index within its launch
			size := min(chunk, n-(i-c))
			if b.T[i] != float64(1001*i) || b.H[i] != math.Inf(1) || b.Y[3*(i-c)+c] != b.Y0[3*(i-c)+c] ||
				b.Status[i] != 2002 || b.Accepted[i] != 77 || b.Rejected[i] != int64(c) || b.FEvals[i] != int64(size) {
				t.Fatalf("chunk %d: trajectory %d: t %v h %v y %v status %d accepted %d rejected %d fevals %d", chunk,
					i, b.T[i], b.H[i], b.Y[3*(i-c)+c], b.Status[i], b.Accepted[i], b.Rejected[i], b.FEvals[i])
			}
			if c == 0 && b.Saved[i*6] != 0.25 {
				t.Fatalf("chunk %d: trajectory %d: saved[0] = %v, want its first save time", chunk, i, b.Saved[i*6])
			}
		}
		text, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(text)), "\n")
		if want := (n + chunk - 1) / chunk; len(lines) != want {
			t.Fatalf("chunk %d: %d launches, want %d", chunk, len(lines), want)
		}
		streams := map[string]bool{}
		for q, line := range lines {
			f := strings.Fields(line)
			if len(f) != 3 || f[0] != k.Name || f[2] != fmt.Sprint(min(chunk, n-q*chunk)) {
				t.Fatalf("chunk %d: launch %d: %q", chunk, q, line)
			}
			streams[f[1]] = true
			if q > 0 && f[1] == strings.Fields(lines[q-1])[1] {
				t.Errorf("chunk %d: launches %d and %d on one stream %s: want the two streams in turn", chunk, q-1, q, f[1])
			}
		}
		if want := min(2, len(lines)); len(streams) != want || streams["0"] {
			t.Errorf("chunk %d: streams %v, want %d of the engine's own (not the default stream 0)", chunk, streams, want)
		}
	}
	// A finite hmax: h carries the sum of the scalars and of p.
	s.HMax = 256
	b := plumbingBatch(n)
	var stop atomic.Bool
	if _, err := m.Run(k, s, b, 50, &stop); err != nil {
		t.Fatal(err)
	}
	if want := 256 + 0.5 + 1 + 2 + 4 + 8 + 16 + 32 + 64 + 128 + b.P[5]; b.H[5] != want {
		t.Errorf("h[5] = %v; want %v", b.H[5], want)
	}
	// The run's two lanes (stream and buffers) are kept for the next
	// run, which reuses them: a solve of many batches allocates once.
	if len(m.idle) != 2 {
		t.Fatalf("%d idle lanes after a run of two streams, want 2", len(m.idle))
	}
	kept := map[*lane]bool{m.idle[0]: true, m.idle[1]: true}
	if _, err := m.Run(k, s, plumbingBatch(n), 40, &stop); err != nil {
		t.Fatal(err)
	}
	if len(m.idle) != 2 || !kept[m.idle[0]] || !kept[m.idle[1]] {
		t.Errorf("a second run of smaller chunks did not reuse the lanes: %v, kept %v", m.idle, kept)
	}
	// Stopped before the start: nothing is launched.
	stop.Store(true)
	if done, err := m.Run(k, s, plumbingBatch(n), 50, &stop); done != 0 || err != nil {
		t.Errorf("Run with stop set: %d, %v; want 0, nil", done, err)
	}
}

// TestRunErrors: each failing driver call of a run comes back as a
// *cuda.Error naming the call and the driver's error.
func TestRunErrors(t *testing.T) {
	m, src := fakeModule(t)
	k := erkKernel(src.Kernels[0])
	s := &Settings{MaxSteps: 10, HMax: math.Inf(1), Controller: control.DefaultPI(5, 0.2, 10), RTol: []float64{1, 1, 1}, ATol: []float64{1, 1, 1}}
	for _, c := range []struct{ env, val, want string }{
		{"FAKE_CUDA_STREAM", "2", "cuda: cuStreamCreate: CUDA error 2"},
		{"FAKE_CUDA_HOSTALLOC", "2", "cuda: cuMemAllocHost("},
		{"FAKE_CUDA_ASYNC", "700", "cuda: cuMemcpyHtoDAsync: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)"},
		{"FAKE_CUDA_LAUNCH", "719", "cuda: cuLaunchKernel(gs_erk_tsit5): CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)"},
		{"FAKE_CUDA_STREAM_SYNC", "700", "cuda: cuStreamSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS"},
	} {
		t.Run(c.env, func(t *testing.T) {
			t.Setenv(c.env, c.val)
			var stop atomic.Bool
			_, err := m.Run(k, s, plumbingBatch(20), 7, &stop)
			var ce *cuda.Error
			if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("Run with %s=%s: %v; want %q…", c.env, c.val, err, c.want)
			}
		})
	}
	// A kernel the module lacks.
	bad := k
	bad.Name = "gs_erk_none"
	var stop atomic.Bool
	if _, err := m.Run(bad, s, plumbingBatch(3), 7, &stop); err == nil || !strings.Contains(err.Error(), "has no kernel gs_erk_none") {
		t.Errorf("Run of a missing kernel: %v", err)
	}
}

// lorenzProblem is examples/lorenz.ode as a Problem (with its
// symbolic form).
func lorenzProblem(t *testing.T) *ode.Problem {
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
	return s.Problem()
}

// TestRosJobLayout: RosJob has gs_ros_job's size and offsets, as the
// host C++ compiler lays out the generated Rosenbrock source's struct:
// gs_erk_job's fields, then dense_save, jac_evals and lus.
func TestRosJobLayout(t *testing.T) {
	cxx, err := cudaemu.Compiler()
	if err != nil {
		t.Skip(err)
	}
	set := lorenzProblem(t).Symbolic.(*tape.Set)
	src, err := emitcuda.Generate(set, emitcuda.Options{Methods: []*method.Tableau{}, Rosenbrock: []*method.Rosenbrock{method.Rosenbrock23}})
	if err != nil {
		t.Fatal(err)
	}
	fields := append(append([]string(nil), jobFields...), "dense_save", "jac_evals", "lus")
	var b strings.Builder
	b.WriteString("#include \"cuda_emu.h\"\n#include <cstddef>\n#include <cstdio>\n")
	b.Write(src.Code)
	b.WriteString("int main() {\n  printf(\"%zu\", sizeof(gs_ros_job));\n")
	for _, f := range fields {
		fmt.Fprintf(&b, "  printf(\" %%zu\", offsetof(gs_ros_job, %s));\n", f)
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
	typ := reflect.TypeOf(RosJob{})
	want := fmt.Sprint(typ.Size())
	jt := reflect.TypeOf(Job{})
	for i := range jt.NumField() {
		want += fmt.Sprintf(" %d", jt.Field(i).Offset)
	}
	for _, f := range []string{"DenseSave", "JacEvals", "LUs"} {
		sf, _ := typ.FieldByName(f)
		want += fmt.Sprintf(" %d", sf.Offset)
	}
	if string(out) != want {
		t.Errorf("gs_ros_job: size and offsets %q; RosJob: %q", out, want)
	}
}

// TestRosPlumbing runs the Rosenbrock kernels' launches through the
// fake driver: a forward kernel on the two streams (RosJob's dense_save,
// jac_evals and lus arrive where gs_ros_job has them, and the two more
// counters come back to their rows), a record kernel (gs_ros_mesh as
// the second parameter: the meshes come back) and an adjoint kernel
// (gs_ros_job, gs_ros_mesh, gs_ros_adj: the mesh, the cotangents and
// the gradients' room arrive). The plumbing only: the fake solves
// nothing.
func TestRosPlumbing(t *testing.T) {
	m, src := fakeLoad(t, fakeDevice(t), emitcuda.Options{Methods: []*method.Tableau{},
		Rosenbrock: []*method.Rosenbrock{method.Rodas5P}, RosRecord: true, RosAdjoint: true})
	fw, err := rosKernelFor(src, method.Rodas5P, false, false)
	if err != nil {
		t.Fatal(err)
	}
	rk, err := rosKernelOf(src, method.Rodas5P, false)
	if err != nil {
		t.Fatal(err)
	}
	ak, err := rosKernelOf(src, method.Rodas5P, true)
	if err != nil {
		t.Fatal(err)
	}
	s := &Settings{MaxSteps: 77, HMax: math.Inf(1), RTol: []float64{1, 1, 1}, ATol: []float64{1, 1, 1}, DenseSave: true}
	const n = 20
	var stop atomic.Bool
	for _, chunk := range []int{7, n} {
		b := plumbingBatch(n)
		if done, err := m.Run(rosKernel(fw), s, b, chunk, &stop); err != nil || done != n {
			t.Fatalf("forward, chunk %d: Run = %d, %v", chunk, done, err)
		}
		for i := range n {
			c := i % chunk
			if b.T[i] != float64(1001*i) || b.Accepted[i] != 77 || b.JacEvals[i] != int64(100+c) || b.LUs[i] != int64(c+1) {
				t.Fatalf("forward, chunk %d: trajectory %d: t %v accepted %d jac_evals %d lus %d", chunk, i, b.T[i], b.Accepted[i], b.JacEvals[i], b.LUs[i])
			}
		}
	}
	b := plumbingBatch(n)
	ms := NewMeshes(n, 5, 3)
	if done, err := m.Record(rosKernel(rk), s, b, ms, 7, &stop); err != nil || done != n {
		t.Fatalf("record: %d, %v", done, err)
	}
	for i := range n {
		c := i % 7
		lo := i - c
		if b.T[i] != float64(1001*i) || b.LUs[i] != int64(c+1) || ms.Steps[i] != 5 {
			t.Fatalf("record: trajectory %d: t %v lus %d steps %d", i, b.T[i], b.LUs[i], ms.Steps[i])
		}
		// The fake writes row c of its launch at the offsets it knows
		// (one value per state): t0 at c·(cap+1), t1 at c·cap, y0 at
		// c·(cap+1) of its chunk's arrays.
		cm := ms.Slice(lo, min(lo+7, n))
		if cm.T[c*6] != b.T0[i] || cm.H[c*5] != b.T1[i] || cm.Y[c*6] != b.Y0[3*lo+c] {
			t.Fatalf("record: trajectory %d's mesh: t %v h %v y %v", i, cm.T[c*6], cm.H[c*5], cm.Y[c*6])
		}
	}
	a := plumbingAdj(b, ms)
	if done, err := m.Adjoint(rosKernel(ak), s, a, n, &stop); err != nil || done != n {
		t.Fatalf("adjoint: %d, %v", done, err)
	}
	for c := range n {
		want := a.CotY[c] + ms.T[c*6] + ms.H[c*5] + ms.Y[c] + a.P[c] + a.Save[c*2] + 0.5 + 0.25
		if a.GY0[c] != 5*1000+float64(ms.Steps[c])+100 || a.GP[c] != want {
			t.Fatalf("adjoint: row %d: gy0 %v gp %v, want %v %v", c, a.GY0[c], a.GP[c], 5*1000+float64(ms.Steps[c])+100, want)
		}
	}
	checkFailingLaunches(t, m, rosKernel(rk), rosKernel(ak), s, a)
}

// TestERKRecordLayout: ERKRecordJob and ERKAdjointJob have the size
// and offsets of gs_erk_record_job and gs_erk_adjoint_job as the host
// C++ compiler lays out the generated source's structs (fields of 8
// bytes, and a gs_erk_job first, on which x86-64 and a GPU agree).
func TestERKRecordLayout(t *testing.T) {
	cxx, err := cudaemu.Compiler()
	if err != nil {
		t.Skip(err)
	}
	set := lorenzProblem(t).Symbolic.(*tape.Set)
	src, err := emitcuda.Generate(set, emitcuda.Options{Methods: []*method.Tableau{method.Tsit5}, Record: true, Adjoint: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cname  string
		typ    reflect.Type
		fields []string // in the Go struct's order
	}{
		{"gs_erk_record_job", reflect.TypeOf(ERKRecordJob{}), []string{"fwd", "cap", "mesh_t", "mesh_h", "mesh_y", "steps"}},
		{"gs_erk_adjoint_job", reflect.TypeOf(ERKAdjointJob{}), []string{"n", "nsave", "save_stride", "cap", "p", "save",
			"mesh_t", "mesh_h", "mesh_y", "steps", "status", "cot_y", "cot_saved", "gy0", "gp"}},
	} {
		var b strings.Builder
		b.WriteString("#include \"cuda_emu.h\"\n#include <cstddef>\n#include <cstdio>\n")
		b.Write(src.Code)
		fmt.Fprintf(&b, "int main() {\n  printf(\"%%zu\", sizeof(%s));\n", c.cname)
		for _, f := range c.fields {
			fmt.Fprintf(&b, "  printf(\" %%zu\", offsetof(%s, %s));\n", c.cname, f)
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
		want := fmt.Sprint(c.typ.Size())
		for i := range c.typ.NumField() {
			want += fmt.Sprintf(" %d", c.typ.Field(i).Offset)
		}
		if c.typ.NumField() != len(c.fields) || string(out) != want {
			t.Errorf("%s: size and offsets %q; %v (%d fields): %q", c.cname, out, c.typ, c.typ.NumField(), want)
		}
	}
}

// TestERKRecordPlumbing runs the explicit record and adjoint kernels'
// launches through the fake driver: ERKRecordJob (the forward job, cap
// and the meshes) and ERKAdjointJob (sizes, meshes, statuses,
// cotangents, gradients) arrive where gs_erk_record_job and
// gs_erk_adjoint_job have their fields, the meshes and gradients come
// back, and a failing launch is the call's error. The plumbing only:
// the fake solves nothing.
func TestERKRecordPlumbing(t *testing.T) {
	l := fakeLibs(t)
	t.Setenv("FAKE_CUDA_DEVICES", "")
	b0 := &CUDA{Opts: cuda.Options{Driver: l.Driver, NVRTC: l.NVRTC}}
	dev, err := b0.Open(0)
	if err != nil {
		t.Fatal(err)
	}
	set := lorenzProblem(t).Symbolic.(*tape.Set)
	src, err := emitcuda.Generate(set, emitcuda.Options{Methods: []*method.Tableau{method.Tsit5}, Record: true, Adjoint: true})
	if err != nil {
		t.Fatal(err)
	}
	mod, err := dev.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	m := mod.(*cudaModule)
	rk, err := kernelFor(src, method.Tsit5, emitcuda.Record, false)
	if err != nil {
		t.Fatal(err)
	}
	ak, err := kernelFor(src, method.Tsit5, emitcuda.Adjoint, false)
	if err != nil {
		t.Fatal(err)
	}
	s := &Settings{MaxSteps: 77, HMax: math.Inf(1), RTol: []float64{1, 1, 1}, ATol: []float64{1, 1, 1}}
	const n = 20
	var stop atomic.Bool
	b := plumbingBatch(n)
	for i := range b.JacEvals {
		b.JacEvals[i], b.LUs[i] = -5, -6 // the explicit kernels have no such counters: left as they are
	}
	ms := NewMeshes(n, 5, 3)
	if done, err := m.Record(erkKernel(rk), s, b, ms, 7, &stop); err != nil || done != n {
		t.Fatalf("record: %d, %v", done, err)
	}
	for i := range n {
		c := i % 7
		lo := i - c
		wantSteps := int64(5)
		if c%2 == 1 {
			wantSteps = -1
		}
		if b.T[i] != float64(1001*i) || b.Accepted[i] != 77 || ms.Steps[i] != wantSteps || b.JacEvals[i] != -5 || b.LUs[i] != -6 {
			t.Fatalf("record: trajectory %d: t %v accepted %d steps %d jac_evals %d lus %d", i, b.T[i], b.Accepted[i], ms.Steps[i], b.JacEvals[i], b.LUs[i])
		}
		cm := ms.Slice(lo, min(lo+7, n))
		if cm.T[c*6] != b.T0[i] || cm.H[c*5] != b.T1[i] || cm.Y[c*6] != b.Y0[3*lo+c] {
			t.Fatalf("record: trajectory %d's mesh: t %v h %v y %v", i, cm.T[c*6], cm.H[c*5], cm.Y[c*6])
		}
	}
	a := plumbingAdj(b, ms)
	if done, err := m.Adjoint(erkKernel(ak), s, a, n, &stop); err != nil || done != n {
		t.Fatalf("adjoint: %d, %v", done, err)
	}
	for c := range n {
		// Status Success (1) for every job, save_stride K = 2.
		wy := 5*1000 + float64(ms.Steps[c]) + float64(ode.Success)*100 + 2*10
		wp := a.CotY[c] + ms.T[c*6] + ms.H[c*5] + ms.Y[c] + a.P[c] + a.Save[c*2] + 0.5
		if a.GY0[c] != wy || a.GP[c] != wp {
			t.Fatalf("adjoint: row %d: gy0 %v gp %v, want %v %v", c, a.GY0[c], a.GP[c], wy, wp)
		}
	}
	checkFailingLaunches(t, m, erkKernel(rk), erkKernel(ak), s, a)
}

// TestRun32Plumbing runs the float32 kernels' batches through the fake
// driver in chunks on two streams, an explicit one's (gs_erk_job_f32)
// and a Rosenbrock one's (gs_ros_job_f32: the same fields, then
// dense_save, jac_evals and lus): the double fields (t0, t1, save, t,
// h, the counters) and the float fields (the tolerances, y0, p rounded
// to float; y and saved widened back) arrive and return where the C
// structs have them, each chunk to its own rows. The plumbing only.
func TestRun32Plumbing(t *testing.T) {
	if err := (&CUDA{}).Float32(); err != nil {
		t.Fatal(err)
	}
	mod, src := fakeLoad(t, fakeDevice(t), emitcuda.Options{Methods: []*method.Tableau{method.Tsit5},
		Rosenbrock: []*method.Rosenbrock{method.Rodas5P}, Float32: true})
	k32, err := kernelFor(src, method.Tsit5, emitcuda.Forward, true)
	if err != nil || !k32.Float32 {
		t.Fatalf("kernelFor float32: %+v, %v", k32, err)
	}
	r32, err := rosKernelFor(src, method.Rodas5P, false, true)
	if err != nil || !r32.Float32 {
		t.Fatalf("rosKernelFor float32: %+v, %v", r32, err)
	}
	s := &Settings{MaxSteps: 77, HMax: 2, RTol: []float64{1e-5, 1e-5, 1e-5}, ATol: []float64{1e-7, 1e-7, 1e-7}, DenseSave: true}
	const n = 20
	var stop atomic.Bool
	for _, k := range []Kernel{erkKernel(k32), rosKernel(r32)} {
		for _, chunk := range []int{7, n} {
			b := plumbingBatch(n)
			if done, err := mod.Run(k, s, b, chunk, &stop); err != nil || done != n {
				t.Fatalf("%s, chunk %d: Run = %d, %v", k.Name, chunk, done, err)
			}
			for i := range n {
				c := i % chunk
				lo := i - c
				// The fake's row c of its launch: t = t0 + t1, h from the
				// float tolerances and p[c] of the chunk's flat array, y[c]
				// = 2·y0[c] in float, saved[d] = save[d] for d < n·K; for
				// the Rosenbrock job jac_evals 100·dense_save + c and lus
				// c + 1.
				wh := 2 + 0 + float64(float32(1e-5)) + float64(float32(1e-7)) + float64(float32(b.P[3*lo+c]))
				wy := float64(float32(b.Y0[3*lo+c]) * 2)
				if b.T[i] != float64(1001*i) || b.H[i] != wh || b.Y[3*lo+c] != wy || b.Status[i] != 2002 || b.Accepted[i] != 77 || b.Rejected[i] != int64(c) {
					t.Fatalf("%s, chunk %d: trajectory %d: t %v h %v (want %v) y %v (want %v) status %d accepted %d rejected %d",
						k.Name, chunk, i, b.T[i], b.H[i], wh, b.Y[3*lo+c], wy, b.Status[i], b.Accepted[i], b.Rejected[i])
				}
				if w := float64(float32(b.Save[2*lo+c])); b.Saved[6*lo+c] != w {
					t.Fatalf("%s, chunk %d: trajectory %d: saved %v, want %v", k.Name, chunk, i, b.Saved[6*lo+c], w)
				}
				if k.Family == ROS && (b.JacEvals[i] != int64(100+c) || b.LUs[i] != int64(c+1)) {
					t.Fatalf("%s, chunk %d: trajectory %d: jac_evals %d lus %d", k.Name, chunk, i, b.JacEvals[i], b.LUs[i])
				}
			}
		}
	}
}

// plumbingAdj is the adjoint batch of the fake driver's plumbing tests
// on the recorded meshes ms of batch b (3 states, 3 parameters, 2 save
// times): cotangents 0, 1, 2, … of the final states.
func plumbingAdj(b *Batch, ms *Meshes) *AdjBatch {
	n := len(b.T)
	a := &AdjBatch{N: n, Dim: 3, NP: 3, K: 2, P: b.P, Save: b.Save, Mesh: ms, CotY: make([]float64, 3*n),
		CotSaved: make([]float64, 6*n), GY0: make([]float64, 3*n), GP: make([]float64, 3*n)}
	for i := range a.CotY {
		a.CotY[i] = float64(i)
	}
	return a
}

// checkFailingLaunches makes the fake driver's launches fail and checks
// that the record kernel rec and the adjoint kernel adj report it.
func checkFailingLaunches(t *testing.T, m *cudaModule, rec, adj Kernel, s *Settings, a *AdjBatch) {
	t.Helper()
	var stop atomic.Bool
	t.Setenv("FAKE_CUDA_LAUNCH", "719")
	for _, c := range []struct {
		name string
		run  func() error
	}{
		{"record", func() error {
			_, err := m.Record(rec, s, plumbingBatch(3), NewMeshes(3, 5, 3), 7, &stop)
			return err
		}},
		{"adjoint", func() error { _, err := m.Adjoint(adj, s, a.Slice(0, 3), 7, &stop); return err }},
	} {
		if err := c.run(); err == nil || !strings.Contains(err.Error(), "CUDA_ERROR_LAUNCH_FAILED") {
			t.Errorf("%s with a failing launch: %v", c.name, err)
		}
	}
}
