package emitcuda_test

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/cudaemu"
	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/ros"
	"github.com/gradsolve/gradsolve/sym/emitcuda"
	"github.com/gradsolve/gradsolve/sym/tape"
)

//go:embed testdata/ros_runner.cpp
var rosRunnerSource string

// rosCase is a problem of the Rosenbrock tests.
type rosCase struct {
	name, file string
	span       float64 // scales the default span
	maxSteps   int     // the first option set's budget (trajectory 5, 40 spans, exceeds it)
	params     []float64
	special    func(i int, y0 []float64)
	wrt        []gradsolve.Wrt // the sensitivity kernels' columns
	// statuses are those the ensemble must produce with the defaults
	// (beyond successes).
	statuses []ode.Status
	// methods are the case's methods: nil, rosMethods.
	methods []*method.Rosenbrock
}

var rosCases = []rosCase{
	{name: "robertson", file: "robertson.ode", span: 1e-3, maxSteps: 300,
		wrt:      []gradsolve.Wrt{{Index: 0}, {Index: 2}, {Y0: true, Index: 1}},
		statuses: []ode.Status{ode.StepUnderflow, ode.MaxStepsReached}},
	// van der Pol, stiff: μ = 1000 (Hairer & Wanner II, §IV.1, in the
	// example's scaling).
	{name: "vdp1e3", file: "vanderpol.ode", span: 0.1, maxSteps: 800, params: []float64{1000},
		wrt:      []gradsolve.Wrt{{Index: 0}, {Y0: true, Index: 0}},
		statuses: []ode.Status{ode.StepUnderflow, ode.MaxStepsReached}},
	{name: "rosforced", file: "testdata/rosforced.ode", span: 0.2, maxSteps: 500,
		special: func(i int, y0 []float64) {
			if i == 9 { // df/du is 0/0: every W is singular, the step shrinks to the floor (NonFinite)
				y0[0] = 0
			}
		},
		wrt:      []gradsolve.Wrt{{Index: 0}, {Index: 1}, {Y0: true, Index: 1}},
		statuses: []ode.Status{ode.StepUnderflow, ode.MaxStepsReached, ode.NonFinite},
		methods:  append(append([]*method.Rosenbrock(nil), rosMethods...), plainRos23())},
}

// plainRos23 is a Rosenbrock method of its own: Rosenbrock23's
// coefficients under another name and without a continuous extension.
// cpu-ros has no generated stage kernel for it and runs its generic
// stage loop; the kernel's method struct has no dense_weights.
func plainRos23() *method.Rosenbrock {
	m := *method.Rosenbrock23
	m.Name, m.Dense = "Ros23 plain", nil
	return &m
}

// rosShort are the cases run under -short.
var rosShort = map[string]bool{"rosforced": true}

// rosMethods are the methods of the tests: the two of package method.
var rosMethods = []*method.Rosenbrock{method.Rosenbrock23, method.Rodas5P}

// rosProgram is a case's compiled source, shared by the tests.
type rosProgram struct {
	set   *tape.Set
	prob  *ode.Problem
	src   *emitcuda.Source
	exe   string
	index []int // each kernel's index in its table (gs_ros_kernels or gs_ros_record_kernels)
}

var rosPrograms sync.Map // case name → *rosBuild

type rosBuild struct {
	once sync.Once
	p    *rosProgram
	err  error
}

// rosCompile generates and compiles the source of case c (its forward
// and sensitivity kernels of each method, their float32 twins, and the
// record and adjoint kernels) once per test run.
func rosCompile(t *testing.T, c rosCase) *rosProgram {
	t.Helper()
	cxx := compiler(t)
	v, _ := rosPrograms.LoadOrStore(c.name, &rosBuild{})
	b := v.(*rosBuild)
	b.once.Do(func() {
		set := readModel(t, casePath(t, c.file))
		cols := make([]int, len(c.wrt))
		for i, w := range c.wrt {
			cols[i] = w.Index
			if w.Y0 {
				cols[i] = -1
			}
		}
		methods := c.methods
		if methods == nil {
			methods = rosMethods
		}
		src, err := emitcuda.Generate(set, emitcuda.Options{Methods: []*method.Tableau{}, Rosenbrock: methods,
			Sens: []emitcuda.Sens{{Cols: cols}}, RosRecord: true, RosAdjoint: true, Float32: true})
		if err != nil {
			b.err = err
			return
		}
		var s strings.Builder
		s.WriteString("#include \"cuda_emu.h\"\n#include \"emu_io.h\"\n\n")
		s.Write(src.Code)
		var names, dims, recs, adjs, f32s, f32dims []string
		index := make([]int, len(src.RosKernels))
		for i, k := range src.RosKernels {
			if k.Float32 {
				index[i] = len(f32s)
				f32s, f32dims = append(f32s, k.Name), append(f32dims, fmt.Sprint(k.Dim))
				continue
			}
			if k.Adjoint {
				index[i] = len(adjs)
				adjs = append(adjs, k.Name)
				continue
			}
			if k.Record {
				index[i] = len(recs)
				recs = append(recs, k.Name)
				continue
			}
			index[i] = len(names)
			names = append(names, k.Name)
			dims = append(dims, fmt.Sprint(k.Dim))
		}
		fmt.Fprintf(&s, "\nstatic void (*const gs_ros_kernels[])(gs_ros_job) = {%s};\n", strings.Join(names, ", "))
		fmt.Fprintf(&s, "static const long long gs_ros_kernel_dims[] = {%s};\n", strings.Join(dims, ", "))
		fmt.Fprintf(&s, "static void (*const gs_ros_kernels_f32[])(gs_ros_job_f32) = {%s};\n", strings.Join(f32s, ", "))
		fmt.Fprintf(&s, "static const long long gs_ros_kernel_f32_dims[] = {%s};\n", strings.Join(f32dims, ", "))
		fmt.Fprintf(&s, "static void (*const gs_ros_record_kernels[])(gs_ros_job, gs_ros_mesh) = {%s};\n", strings.Join(recs, ", "))
		fmt.Fprintf(&s, "static void (*const gs_ros_adjoint_kernels[])(gs_ros_job, gs_ros_mesh, gs_ros_adj) = {%s};\n\n", strings.Join(adjs, ", "))
		s.WriteString(rosRunnerSource)
		start := time.Now()
		exe, err := cudaemu.Build(context.Background(), cxx, cacheDir, []byte(s.String()))
		t.Logf("compiled %s (Rosenbrock) in %v", c.name, time.Since(start))
		if err != nil {
			b.err = err
			return
		}
		prob := set.Problem()
		if c.params != nil {
			pr := *prob
			pr.P = c.params
			prob = &pr
		}
		b.p = &rosProgram{set: set, prob: prob, src: src, exe: exe, index: index}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	if b.p == nil {
		t.Fatalf("%s: the build failed in another test", c.name)
	}
	return b.p
}

// rosJob is one launch of a Rosenbrock kernel.
type rosJob struct {
	job
	dense bool
	cap   int // a record kernel's room for steps per trajectory
}

// rosResult is what a launch computed.
type rosResult struct {
	result
	jacEvals, lus []int64
	// A record kernel's meshes: steps recorded, and the rows of t, h
	// and y (gs_ros_mesh).
	steps        []int64
	meshT, meshH []float64
	meshY        []float64
}

// solve runs j on Rosenbrock kernel j.kernel.
func (p *rosProgram) solve(t *testing.T, j *rosJob) *rosResult {
	t.Helper()
	k := p.src.RosKernels[j.kernel]
	n := len(j.t0)
	nsave := len(j.save)
	stride := 0
	if j.perTrajectorySave {
		nsave /= n
		stride = nsave
	}
	dense := 0
	if j.dense {
		dense = 1
	}
	capSteps := -1
	switch {
	case k.Record:
		capSteps = j.cap
	case k.Float32:
		capSteps = -3 // ros_runner.cpp's float32 table
	}
	var e cudaemu.Encoder
	for _, v := range []int{capSteps, p.index[j.kernel], k.Dim, k.NormDim, n, nsave, stride, j.maxSteps, dense} {
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
	r := &rosResult{result: result{y: d.Floats(n * k.Dim), t: d.Floats(n), h: d.Floats(n), saved: d.Floats(n * nsave * k.Dim),
		status: d.Ints(n), accepted: d.Ints(n), rejected: d.Ints(n), fevals: d.Ints(n)}, jacEvals: d.Ints(n), lus: d.Ints(n)}
	if k.Record {
		r.steps, r.meshT, r.meshH, r.meshY = d.Ints(n), d.Floats(n*(j.cap+1)), d.Floats(n*j.cap), d.Floats(n*(j.cap+1)*k.Dim)
	}
	if d.Err != nil || d.Rest() != 0 {
		t.Fatalf("%s: output: %v, %d bytes left over", k.Name, d.Err, d.Rest())
	}
	return r
}

// rosOptionSets are the option sets of the Rosenbrock tests: the
// defaults (a small budget), per-component tolerances with HMax and H0,
// and the defaults with save times from the continuous extension.
var rosOptionSets = []optionSet{
	optionSets[0],
	optionSets[1],
	{"dense", func(c forwardCase, dim int, span float64) gradsolve.Options {
		return gradsolve.Options{MaxSteps: c.maxSteps, DenseSave: true}
	}},
}

// rosCPUSolve solves ens on cpu-ros with method m and options o.
func rosCPUSolve(t *testing.T, prob *ode.Problem, ens *ensemble, m *method.Rosenbrock, o gradsolve.Options) *gradsolve.Result {
	t.Helper()
	o.Method, o.Engine = m, "cpu-ros"
	e := &gradsolve.Ensemble{N: len(ens.t0), Y0: ens.y0, P: ens.p, T0: ens.t0, T1: ens.t1, Save: ens.save, SavePerTrajectory: ens.k > 0 && len(ens.save) == ens.k*len(ens.t0)}
	res, err := gradsolve.Solve(context.Background(), prob, e, &o)
	if err != nil && res == nil {
		t.Fatal(err)
	}
	if res.Engine != "cpu-ros" {
		t.Fatalf("solved on %s, want cpu-ros", res.Engine)
	}
	return res
}

// rosKernelJob is the launch of Rosenbrock kernel ki that solves ens
// from the (augmented) initial states y0 as cpu-ros did with the
// resolved options o.
func rosKernelJob(ki int, k emitcuda.RosKernel, o *gradsolve.Options, ens *ensemble, y0 []float64) *rosJob {
	hmax := o.HMax
	if hmax == 0 {
		hmax = math.Inf(1)
	}
	return &rosJob{job: job{kernel: ki, t0: ens.t0, t1: ens.t1, y0: y0, p: ens.p, save: ens.save, perTrajectorySave: true,
		maxSteps: o.MaxSteps, hmax: hmax, h0: o.H0, ctl: *o.Controller,
		rtol: o.RTolVec, atol: o.ATolVec, grid: 3, block: 16}, dense: o.DenseSave, cap: o.MaxSteps}
}

// compareRos compares as compareResults does, and the Jacobian and LU
// counters.
func compareRos(t *testing.T, what string, res *gradsolve.Result, got *rosResult, ens *ensemble, na int) {
	t.Helper()
	compareResults(t, what, expected(res), &got.result, ens, na)
	bad := 0
	for i, st := range res.Stats {
		if got.jacEvals[i] != int64(st.JacEvals) || got.lus[i] != int64(st.LUs) {
			if bad++; bad <= 3 {
				t.Errorf("%s: trajectory %d: JacEvals/LUs %d/%d, want %d/%d", what, i, got.jacEvals[i], got.lus[i], st.JacEvals, st.LUs)
			}
		}
	}
}

// TestRosenbrockBitwise solves each case's ensemble (64 trajectories
// with their own parameters, initial states, spans — every fourth
// backwards — and save times at t0, t1 and inside steps) with both
// methods and three option sets on cpu-ros and with the Rosenbrock
// kernels in emulation, forward and with sensitivities, and compares
// final states, saved states, statuses, times reached and the five
// counters bit for bit.
func TestRosenbrockBitwise(t *testing.T) {
	for _, c := range rosCases {
		if testing.Short() && !rosShort[c.name] {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rp := rosCompile(t, c)
			prob, dim := rp.prob, rp.prob.Dim
			fc := forwardCase{name: c.name, span: c.span, maxSteps: c.maxSteps, special: c.special}
			ens := makeEnsemble(prob, fc, uint64(len(c.name)))
			span := c.span * (prob.T1 - prob.T0)
			y0s := augmented(ens.y0, dim, c.wrt)
			for _, os := range rosOptionSets {
				statuses := map[ode.Status]int{}
				for ki, kern := range rp.src.RosKernels {
					if kern.Adjoint || kern.Float32 {
						continue // TestRosenbrockAdjoint, TestRosenbrockFloat32
					}
					opts := os.opts(fc, dim, span)
					if opts.DenseSave && !kern.Dense {
						continue // cpu-ros refuses DenseSave without a continuous extension
					}
					y0 := ens.y0
					if kern.Sens >= 0 {
						opts.Sens = &gradsolve.Sensitivity{Wrt: c.wrt}
						y0 = y0s
					}
					res := rosCPUSolve(t, prob, ens, kern.Method, opts)
					for _, s := range res.Status {
						statuses[s]++
					}
					for i, st := range res.Stats {
						if st.LUs > 0 && st.JacEvals == 0 {
							t.Fatalf("trajectory %d: %d LUs without a Jacobian", i, st.LUs)
						}
					}
					got := rp.solve(t, rosKernelJob(ki, kern, &res.Options, ens, y0))
					compareRos(t, fmt.Sprintf("%s %s %s", c.name, kern.Name, os.name), res, got, ens, kern.Dim)
				}
				if statuses[ode.Success] == 0 {
					t.Errorf("%s: statuses %v: want successes", os.name, statuses)
				}
				if os.name != "defaults" {
					continue
				}
				for _, s := range c.statuses {
					if statuses[s] == 0 {
						t.Errorf("%s: statuses %v: want %v among them", os.name, statuses, s)
					}
				}
			}
		})
	}
}

// TestRosenbrockSingular checks what rosforced's trajectory 9 is for:
// its Jacobian is not finite at the start, so every W it forms fails to
// factorise; cpu-ros rejects each attempt, shrinks the step to the floor
// and ends with NonFinite, one Jacobian and an LU per attempt — and the
// kernel does the same, bit for bit (TestRosenbrockBitwise compares the
// whole ensemble; this pins the case down).
func TestRosenbrockSingular(t *testing.T) {
	c := rosCases[2]
	rp := rosCompile(t, c)
	prob := rp.prob
	fc := forwardCase{name: c.name, span: c.span, maxSteps: c.maxSteps, special: c.special}
	ens := makeEnsemble(prob, fc, 1)
	res := rosCPUSolve(t, prob, ens, method.Rodas5P, gradsolve.Options{MaxSteps: 1000})
	st := res.Stats[9]
	if res.Status[9] != ode.NonFinite || st.Accepted != 0 || st.JacEvals != 1 || st.LUs != st.Rejected || st.LUs < 10 {
		t.Fatalf("cpu-ros: trajectory 9: status %v, stats %+v: want NonFinite, no step accepted, one Jacobian, an LU per rejection", res.Status[9], st)
	}
	ki := 1 // gs_ros_rodas5p
	if k := rp.src.RosKernels[ki]; k.Method != method.Rodas5P || k.Sens >= 0 {
		t.Fatalf("kernel %d is %s", ki, k.Name)
	}
	got := rp.solve(t, rosKernelJob(ki, rp.src.RosKernels[ki], &res.Options, ens, ens.y0))
	compareRos(t, "rosforced gs_ros_rodas5p", res, got, ens, prob.Dim)
}

// TestRosenbrockDetectsChange checks that the comparisons of
// TestRosenbrockBitwise see small changes in what a kernel is given:
// the controller's safety factor one ulp above its value changes most
// final states, and dense_save flipped changes the saved states inside
// steps (the continuous extension and a re-step agree only to the
// method's accuracy).
func TestRosenbrockDetectsChange(t *testing.T) {
	c := rosCases[2]
	rp := rosCompile(t, c)
	prob, dim := rp.prob, rp.prob.Dim
	fc := forwardCase{name: c.name, span: c.span, maxSteps: c.maxSteps}
	ens := makeEnsemble(prob, fc, 1)
	ki := 1 // gs_ros_rodas5p
	res := rosCPUSolve(t, prob, ens, method.Rodas5P, gradsolve.Options{MaxSteps: c.maxSteps})
	j := rosKernelJob(ki, rp.src.RosKernels[ki], &res.Options, ens, ens.y0)
	j.ctl.Safety = math.Nextafter(j.ctl.Safety, 1)
	r := rp.solve(t, j)
	differ := 0
	for i := range ensembleSize {
		if !testutil.EqualBits(r.y[i*dim:(i+1)*dim], res.Row(i)) {
			differ++
		}
	}
	if differ < ensembleSize/2 {
		t.Errorf("safety one ulp off changed %d of %d final states; want most", differ, ensembleSize)
	}
	j = rosKernelJob(ki, rp.src.RosKernels[ki], &res.Options, ens, ens.y0)
	j.dense = true
	r = rp.solve(t, j)
	want := expected(res)
	differ = 0
	for i := range ensembleSize {
		if res.Status[i] == ode.Success && !testutil.EqualBits(r.saved[i*3*dim:(i+1)*3*dim], want.saved[i*3*dim:(i+1)*3*dim]) {
			differ++
		}
	}
	if differ == 0 {
		t.Error("dense_save set: no saved state changed; the re-step and the continuous extension cannot agree to the bit everywhere")
	}
}

// TestGenerateRosenbrock checks Options.Rosenbrock's errors, named in
// its terms, and the Rosenbrock source as TestGenerateSource checks the
// explicit one: deterministic, no header or host library, no inexact
// library function, every product of values rounded; and its kernels
// as RosKernels describes them.
func TestGenerateRosenbrock(t *testing.T) {
	set := readModel(t, "testdata/rosforced.ode")
	bad := *method.Rodas5P
	bad.M = bad.M[:3]
	renamed := *method.Rosenbrock23
	renamed.Name = "rodas-5p"
	for _, c := range []struct {
		name string
		opts emitcuda.Options
		want string
	}{
		{"nil method", emitcuda.Options{Rosenbrock: []*method.Rosenbrock{method.Rodas5P, nil}}, "Options.Rosenbrock[1] is nil"},
		{"invalid method", emitcuda.Options{Rosenbrock: []*method.Rosenbrock{&bad}}, "Options.Rosenbrock[0]"},
		{"same kernel name", emitcuda.Options{Rosenbrock: []*method.Rosenbrock{method.Rodas5P, &renamed}}, "kernel name gs_ros_rodas5p"},
		{"error test", emitcuda.Options{Rosenbrock: []*method.Rosenbrock{method.Rodas5P}, Sens: []emitcuda.Sens{{Cols: []int{0}, ErrorTest: true}}},
			"Options.Sens[0].ErrorTest with Options.Rosenbrock"},
	} {
		_, err := emitcuda.Generate(set, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}

	opts := emitcuda.Options{Rosenbrock: rosMethods, Sens: []emitcuda.Sens{{Cols: []int{2, -1}}}}
	a, err := emitcuda.Generate(set, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := emitcuda.Generate(set, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Code, b.Code) {
		t.Error("two Generates of one model give different sources")
	}
	index := map[string]bool{"i": true, "c": true, "r": true, "N": true, "N_": true, "S": true, "NP": true, "j": true, "q": true, "k": true, "nsave": true, "isave": true, "blockIdx.x": true, "blockDim.x": true}
	code := string(a.Code)
	for _, line := range strings.Split(code, "\n") {
		l := strings.TrimSpace(line)
		if i := strings.Index(l, "//"); i >= 0 {
			l = l[:i]
		}
		if strings.Contains(l, "#include") || strings.Contains(l, "std::") {
			t.Errorf("the source includes a header or uses the host library: %s", line)
		}
		if m := libraryCall.FindStringSubmatch(l); m != nil {
			t.Errorf("the source calls %s: %s", m[1], line)
		}
		for _, m := range bareProduct.FindAllStringSubmatch(l, -1) {
			if !index[m[1]] {
				t.Errorf("a bare product %q: %s", m[0], line)
			}
		}
	}
	if len(a.Kernels) != 8 || len(a.RosKernels) != 4 {
		t.Fatalf("%d explicit and %d Rosenbrock kernels, want 8 and 4", len(a.Kernels), len(a.RosKernels))
	}
	for _, k := range a.RosKernels {
		if !strings.Contains(code, "extern \"C\" __global__ void "+k.Name+"(gs_ros_job job)") {
			t.Errorf("kernel %s is not in the source", k.Name)
		}
	}
	want := []emitcuda.RosKernel{
		{Name: "gs_ros_rosenbrock23", Method: method.Rosenbrock23, Sens: -1, Dim: 2, NormDim: 2, Dense: true},
		{Name: "gs_ros_rodas5p", Method: method.Rodas5P, Sens: -1, Dim: 2, NormDim: 2, Dense: true},
		{Name: "gs_ros_rosenbrock23_sens0", Method: method.Rosenbrock23, Sens: 0, SensCols: []int{2, -1}, Dim: 6, NormDim: 2, Dense: true},
		{Name: "gs_ros_rodas5p_sens0", Method: method.Rodas5P, Sens: 0, SensCols: []int{2, -1}, Dim: 6, NormDim: 2, Dense: true},
	}
	for i, k := range a.RosKernels {
		w := want[i]
		if k.Name != w.Name || k.Method != w.Method || k.Sens != w.Sens || fmt.Sprint(k.SensCols) != fmt.Sprint(w.SensCols) ||
			k.Dim != w.Dim || k.NormDim != w.NormDim || k.Dense != w.Dense {
			t.Errorf("RosKernels[%d] = %+v, want %+v", i, k, w)
		}
	}
	// Without Options.Rosenbrock the source is the explicit one alone.
	plain, err := emitcuda.Generate(set, emitcuda.Options{Sens: opts.Sens})
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.RosKernels) != 0 || strings.Contains(string(plain.Code), "gs_ros_") || strings.Contains(string(plain.Code), "gs_jac_y") {
		t.Error("a source without Options.Rosenbrock has Rosenbrock code")
	}
}

// TestRosenbrockSaveLists covers the two other layouts of save times on
// rosforced: none at all, and one list shared by every trajectory
// (save_stride 0), with every kernel (both methods and plainRos23,
// forward and with sensitivities) and the continuous extension where
// there is one, bitwise as in TestRosenbrockBitwise. The spans all start
// at 0 and run forwards so that the shared list lies inside each.
func TestRosenbrockSaveLists(t *testing.T) {
	c := rosCases[2]
	rp := rosCompile(t, c)
	prob, dim := rp.prob, rp.prob.Dim
	fc := forwardCase{name: c.name, span: c.span, maxSteps: c.maxSteps}
	ens := makeEnsemble(prob, fc, 3)
	for i := range ensembleSize {
		ens.t0[i], ens.t1[i] = 0, 0.5+float64(i)/ensembleSize
	}
	y0s := augmented(ens.y0, dim, c.wrt)
	for _, save := range [][]float64{nil, {0, 0.1, 0.25, 0.5}} {
		e := *ens
		e.save, e.k = save, len(save)
		for _, dense := range []bool{false, true} {
			for ki, kern := range rp.src.RosKernels {
				if kern.Adjoint || kern.Float32 || dense && !kern.Dense {
					continue
				}
				o := gradsolve.Options{MaxSteps: 20 * c.maxSteps, DenseSave: dense}
				y0 := e.y0
				if kern.Sens >= 0 {
					o.Sens = &gradsolve.Sensitivity{Wrt: c.wrt}
					y0 = y0s
				}
				res := rosCPUSolve(t, prob, &e, kern.Method, o)
				j := rosKernelJob(ki, kern, &res.Options, &e, y0)
				j.perTrajectorySave = false
				got := rp.solve(t, j)
				compareRos(t, fmt.Sprintf("%s with %d shared save times, dense %t", kern.Name, len(save), dense), res, got, &e, kern.Dim)
			}
		}
	}
}

// TestRosenbrockRecord checks the record kernels' meshes against those
// package ros records (ros.Solver, the solver cpu-ros runs, with an
// ivp.Mesh; TestRosenbrockBitwise compares their other results with
// gradsolve.Solve): t0 and y0, then the time, step size and state of
// every accepted step, bit for bit, with room for the whole budget and
// with room for 5 steps only, where a trajectory with more ends with
// Cancelled at the first step that does not fit — on the CPU a mesh of
// exactly that capacity whose Grow refuses.
func TestRosenbrockRecord(t *testing.T) {
	for _, c := range rosCases {
		if testing.Short() && !rosShort[c.name] {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			rp := rosCompile(t, c)
			prob, dim := rp.prob, rp.prob.Dim
			fc := forwardCase{name: c.name, span: c.span, maxSteps: c.maxSteps, special: c.special}
			ens := makeEnsemble(prob, fc, 5)
			pg := rp.set.Programs()
			for ki, kern := range rp.src.RosKernels {
				if !kern.Record {
					continue
				}
				for _, dense := range []bool{false, true}[:1+b2i(kern.Dense)] {
					res := rosCPUSolve(t, prob, ens, kern.Method, gradsolve.Options{MaxSteps: c.maxSteps, DenseSave: dense})
					o := &res.Options
					sv, err := ros.New(ros.Config{Tableau: kern.Method, F: pg.F, JacY: pg.JacY, DfDt: pg.DfDt, Dim: dim,
						RTol: o.RTolVec, ATol: o.ATolVec, HMax: o.HMax, H0: o.H0, MaxSteps: o.MaxSteps, Controller: *o.Controller, DenseSave: dense})
					if err != nil {
						t.Fatal(err)
					}
					for _, room := range []int{o.MaxSteps, 5} {
						j := rosKernelJob(ki, kern, o, ens, ens.y0)
						j.cap = room
						got := rp.solve(t, j)
						cancelled := 0
						for i := range ensembleSize {
							ms := &ivp.Mesh{T: make([]float64, 0, room+1), H: make([]float64, 0, room), Y: make([]float64, 0, (room+1)*dim),
								Grow: func(uint64) bool { return false }}
							out := &ivp.Output{Y: make([]float64, dim), Saved: make([]float64, 3*dim), Mesh: ms}
							sv.Solve(&ivp.Trajectory{T0: ens.t0[i], T1: ens.t1[i], Y0: ens.y0[i*dim : (i+1)*dim], P: ens.p[i*len(prob.P) : (i+1)*len(prob.P)],
								Save: ens.save[i*3 : (i+1)*3]}, out, nil)
							what := fmt.Sprintf("%s dense %t room %d: trajectory %d", kern.Name, dense, room, i)
							if out.Status == ode.Cancelled {
								cancelled++
							}
							steps := ms.Steps()
							if ode.Status(got.status[i]) != out.Status || !testutil.SameBits(got.t[i], out.T) ||
								!testutil.EqualBits(got.y[i*dim:(i+1)*dim], out.Y) || got.steps[i] != int64(steps) {
								t.Errorf("%s: status %v, t %v, steps %d; ros.Solver %v, %v, %d", what, ode.Status(got.status[i]), got.t[i], got.steps[i], out.Status, out.T, steps)
								continue
							}
							gt := got.meshT[i*(room+1) : i*(room+1)+steps+1]
							gh := got.meshH[i*room : i*room+steps]
							gy := got.meshY[i*(room+1)*dim : (i*(room+1)+steps+1)*dim]
							if !testutil.EqualBits(gt, ms.T) || !testutil.EqualBits(gh, ms.H) || !testutil.EqualBits(gy, ms.Y) {
								t.Errorf("%s: the mesh differs: %s; %s; %s", what, testutil.DiffReport("t", gt, ms.T, 0),
									testutil.DiffReport("h", gh, ms.H, 0), testutil.DiffReport("y", gy, ms.Y, 0))
							}
						}
						if room == 5 && cancelled == 0 {
							t.Errorf("%s room 5: no trajectory ran out of room", kern.Name)
						}
					}
				}
			}
		})
	}
}

// adjoint runs adjoint kernel ki on the meshes of rec (a record
// kernel's launch with room for room steps per trajectory) with the
// cotangents cotY and cotSaved, and returns dL/dy0 and dL/dp.
func (p *rosProgram) adjoint(t *testing.T, ki int, ens *ensemble, rec *rosResult, room int, dense bool, cotY, cotSaved []float64) (gy0, gp []float64) {
	t.Helper()
	n, dim, np := len(ens.t0), p.prob.Dim, len(p.prob.P)
	var e cudaemu.Encoder
	d := 0
	if dense {
		d = 1
	}
	for _, v := range []int{-2, p.index[ki], n, ens.k, ens.k, d, room, 3, 16} {
		e.Int(int64(v))
	}
	e.Floats(ens.p)
	e.Floats(ens.save)
	for _, s := range rec.steps {
		e.Int(s)
	}
	e.Floats(rec.meshT)
	e.Floats(rec.meshH)
	e.Floats(rec.meshY)
	e.Floats(cotY)
	e.Int(1)
	e.Floats(cotSaved)
	out, err := cudaemu.Run(context.Background(), p.exe, e.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	dec := cudaemu.NewDecoder(out)
	gy0, gp = dec.Floats(n*dim), dec.Floats(n*np)
	if dec.Err != nil || dec.Rest() != 0 {
		t.Fatalf("adjoint output: %v, %d bytes left over", dec.Err, dec.Rest())
	}
	return gy0, gp
}

// TestRosenbrockAdjoint checks the adjoint kernels against ros.Replayer's
// Reverse (what cpu-ros runs for a recording's gradient): each
// trajectory's mesh recorded by the record kernel (equal to ros.Solver's,
// TestRosenbrockRecord), the cotangents of the final and saved states
// random, and dL/dy0 and dL/dp bitwise equal, with save times re-stepped
// (their reverse partial steps) and from the continuous extension, for
// every method of each case. Only successful trajectories are compared:
// the gradient of a failed solve is not defined.
func TestRosenbrockAdjoint(t *testing.T) {
	for _, c := range rosCases {
		if testing.Short() && !rosShort[c.name] {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			rp := rosCompile(t, c)
			prob, dim, np := rp.prob, rp.prob.Dim, len(rp.prob.P)
			fc := forwardCase{name: c.name, span: c.span, maxSteps: c.maxSteps, special: c.special}
			ens := makeEnsemble(prob, fc, 11)
			rng := rand.New(rand.NewPCG(5, 6))
			cotY, cotSaved := make([]float64, ensembleSize*dim), make([]float64, ensembleSize*ens.k*dim)
			for i := range cotY {
				cotY[i] = rng.NormFloat64()
			}
			for i := range cotSaved {
				cotSaved[i] = rng.NormFloat64()
			}
			pg := rp.set.Programs()
			var recs []int
			for ki, k := range rp.src.RosKernels {
				if k.Record {
					recs = append(recs, ki)
				}
			}
			for ai, kern := range rp.src.RosKernels {
				if !kern.Adjoint {
					continue
				}
				ki := -1
				for _, r := range recs {
					if rp.src.RosKernels[r].Method == kern.Method {
						ki = r
					}
				}
				for _, dense := range []bool{false, true}[:1+b2i(kern.Dense)] {
					// A budget that lets most trajectories succeed.
					res := rosCPUSolve(t, prob, ens, kern.Method, gradsolve.Options{MaxSteps: 10 * c.maxSteps, DenseSave: dense})
					o := &res.Options
					cfg := ros.Config{Tableau: kern.Method, F: pg.F, JacY: pg.JacY, DfDt: pg.DfDt, Dim: dim,
						RTol: o.RTolVec, ATol: o.ATolVec, HMax: o.HMax, H0: o.H0, MaxSteps: o.MaxSteps, Controller: *o.Controller, DenseSave: dense}
					sv, err := ros.New(cfg)
					if err != nil {
						t.Fatal(err)
					}
					rpl, err := ros.NewReplayer(cfg, np, pg)
					if err != nil {
						t.Fatal(err)
					}
					room := o.MaxSteps
					j := rosKernelJob(ki, rp.src.RosKernels[ki], o, ens, ens.y0)
					j.cap, j.dense = room, dense
					rec := rp.solve(t, j)
					gy0, gp := rp.adjoint(t, ai, ens, rec, room, dense, cotY, cotSaved)
					compared, bad := 0, 0
					for i := range ensembleSize {
						ms := &ivp.Mesh{}
						out := &ivp.Output{Y: make([]float64, dim), Saved: make([]float64, 3*dim), Mesh: ms}
						p, save := ens.p[i*np:(i+1)*np], ens.save[i*3:(i+1)*3]
						sv.Solve(&ivp.Trajectory{T0: ens.t0[i], T1: ens.t1[i], Y0: ens.y0[i*dim : (i+1)*dim], P: p, Save: save}, out, nil)
						if out.Status != ode.Success {
							continue
						}
						wy, wp := make([]float64, dim), make([]float64, np)
						rpl.Reverse(ms, p, save, cotY[i*dim:(i+1)*dim], cotSaved[i*3*dim:(i+1)*3*dim], wy, wp)
						compared++
						if gy, gpi := gy0[i*dim:(i+1)*dim], gp[i*np:(i+1)*np]; !testutil.EqualBits(gy, wy) || !testutil.EqualBits(gpi, wp) {
							if bad++; bad <= 3 {
								t.Errorf("%s dense %t: trajectory %d: %s; %s", kern.Name, dense, i, testutil.DiffReport("dL/dy0", gy, wy, 0), testutil.DiffReport("dL/dp", gpi, wp, 0))
							}
						}
					}
					if compared < ensembleSize/4 {
						t.Errorf("%s dense %t: only %d successful trajectories to compare", kern.Name, dense, compared)
					}
				}
			}
		})
	}
}

// b2i is 1 for true, 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
