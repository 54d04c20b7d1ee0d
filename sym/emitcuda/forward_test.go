package emitcuda_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/sym/emitcuda"
	"github.com/gradsolve/gradsolve/sym/tape"
)

// ensembleSize is the number of trajectories of each emulated launch:
// more than one block of the launch (block 16, grid 3: 48 threads, so
// the grid-stride loop gives some threads two trajectories).
const ensembleSize = 64

// forwardCase is a problem of the bitwise forward test.
type forwardCase struct {
	name string
	file string // a problem file, relative to this package
	// span scales the default span: a short one keeps the test fast.
	span float64
	// maxSteps is the budget of the first option set: above what the
	// ordinary trajectories need, below what the long one (index 5,
	// 40 spans) needs.
	maxSteps int
	// special adjusts trajectory i's initial state (a NonFinite start).
	special func(i int, y0 []float64)
	// wrt, when set, are the columns of the case's sensitivity kernels
	// (TestSensitivitiesBitwise), errorTest puts them in the error norm,
	// and y0FromP starts the sensitivity solves at y0(p) (the
	// problem's initial values depend on its parameters), so that the
	// parameter columns start at ∂y0/∂p.
	wrt       []gradsolve.Wrt
	errorTest bool
	y0FromP   bool
}

// source generates the case's source: the forward kernels of the four
// methods and, where the case has columns, their sensitivity kernels.
// Every test of a case uses this one source, which compiles once.
func (c forwardCase) source(t testing.TB) (*tape.Set, *emitcuda.Source) {
	t.Helper()
	set := readModel(t, casePath(t, c.file))
	var opts emitcuda.Options
	if c.wrt != nil {
		opts.Sens = []emitcuda.Sens{{Cols: c.cols(), ErrorTest: c.errorTest}}
	}
	src, err := emitcuda.Generate(set, opts)
	if err != nil {
		t.Fatal(err)
	}
	return set, src
}

// cols returns the sensitivity columns in tape.Set.SensF's terms.
func (c forwardCase) cols() []int {
	cols := make([]int, len(c.wrt))
	for i, w := range c.wrt {
		cols[i] = w.Index
		if w.Y0 {
			cols[i] = -1
		}
	}
	return cols
}

// ensemble is a test ensemble: each trajectory its own parameters,
// initial state, span and save times.
type ensemble struct {
	t0, t1, y0, p, save []float64
	k                   int  // save times per trajectory
	y0FromP             bool // y0 is y0(p): the CPU solve is given no Y0
}

// makeEnsemble varies the problem's defaults: parameters by up to ±10%,
// initial states by up to ±5%, spans from 0.5 to 1.5 of the default;
// every fourth trajectory backwards; trajectory 5 forty spans long (it
// runs out of steps); trajectories 6 and 10 at t0 = 1e17, where steps
// below 89 do not move t (6 spans only 32: StepUnderflow); save times per trajectory, among them t0 itself and
// t1 itself.
func makeEnsemble(prob *ode.Problem, c forwardCase, seed uint64) *ensemble {
	rng := rand.New(rand.NewPCG(seed, 17))
	n, dim, np := ensembleSize, prob.Dim, prob.NumParams
	e := &ensemble{k: 3, t0: make([]float64, n), t1: make([]float64, n), y0: make([]float64, n*dim),
		p: make([]float64, n*np), save: make([]float64, n*3)}
	span := c.span * (prob.T1 - prob.T0)
	for i := range n {
		for j := range np {
			e.p[i*np+j] = prob.P[j] * (1 + 0.2*(rng.Float64()-0.5))
		}
		y0 := e.y0[i*dim : (i+1)*dim]
		if prob.Initial != nil {
			prob.Initial()(e.p[i*np:(i+1)*np], y0, nil)
		} else {
			copy(y0, prob.Y0)
		}
		for d := range y0 {
			y0[d] = y0[d]*(1+0.1*(rng.Float64()-0.5)) + 0.01*(rng.Float64()-0.5)
		}
		if c.special != nil {
			c.special(i, y0)
		}
		t0, t1 := prob.T0, prob.T0+span*(0.5+rng.Float64())
		switch {
		case i == 5:
			t1 = prob.T0 + 40*span
		case i == 6: // |t1 − t0| = 32, below the step floor 4ε·1e17 ≈ 89
			t0, t1 = 1e17, 1e17+32
		case i == 10: // a first step at the floor
			t0, t1 = 1e17, 1e17+1e4
		case i%4 == 3:
			t0, t1 = t1, t0
		}
		e.t0[i], e.t1[i] = t0, t1
		fr := [][3]float64{{0.25, 0.5, 1}, {0, 0.3, 0.7}, {0.1, 0.9, 0.95}}[i%3]
		for k, f := range fr {
			e.save[i*3+k] = t0 + f*(t1-t0)
		}
		if i%3 == 0 {
			e.save[i*3+2] = t1 // exactly t1
		}
	}
	return e
}

// optionSet is one set of options of the test.
type optionSet struct {
	name string
	opts func(c forwardCase, dim int, span float64) gradsolve.Options
}

var optionSets = []optionSet{
	{"defaults", func(c forwardCase, dim int, span float64) gradsolve.Options {
		return gradsolve.Options{MaxSteps: c.maxSteps}
	}},
	{"tight-hmax-h0", func(c forwardCase, dim int, span float64) gradsolve.Options {
		atol := make([]float64, dim)
		rtol := make([]float64, dim)
		for d := range atol {
			atol[d] = 1e-10 * float64(d+1)
			rtol[d] = 1e-8 / float64(d+1)
		}
		return gradsolve.Options{RTolVec: rtol, ATolVec: atol, HMax: span / 37, H0: span * 1e-4, MaxSteps: 20 * c.maxSteps}
	}},
}

// expected returns what the CPU engine's res holds in a kernel's
// layout: for sensitivities the augmented state (y, then one block of
// Dim values per column) of the final and the saved states.
func expected(res *gradsolve.Result) *result {
	n, dim, ns, k := res.N, res.Dim, res.NS, res.K
	na := dim * (1 + ns)
	r := &result{y: make([]float64, n*na), t: res.T, saved: make([]float64, n*k*na), status: make([]int64, n),
		accepted: make([]int64, n), rejected: make([]int64, n), fevals: make([]int64, n)}
	aug := func(dst, y, s []float64) {
		copy(dst, y)
		for c := range ns {
			for d := range dim {
				dst[dim*(1+c)+d] = s[d*ns+c]
			}
		}
	}
	dns := dim * ns
	for i := range n {
		aug(r.y[i*na:(i+1)*na], res.Row(i), res.S[i*dns:(i+1)*dns])
		for q := range k {
			aug(r.saved[(i*k+q)*na:(i*k+q+1)*na], res.SavedRow(i, q), res.SavedS[(i*k+q)*dns:(i*k+q+1)*dns])
		}
		r.status[i] = int64(res.Status[i])
		st := res.Stats[i]
		r.accepted[i], r.rejected[i], r.fevals[i] = int64(st.Accepted), int64(st.Rejected), int64(st.FEvals)
	}
	return r
}

// compareResults checks the emulated results got against the CPU
// engine's want (expected), trajectory by trajectory: status,
// statistics, time reached, final state and saved states, bit for bit
// (testutil.SameBits: a NaN matches any NaN).
func compareResults(t *testing.T, what string, want, got *result, ens *ensemble, na int) {
	t.Helper()
	n, k := len(want.t), ens.k
	bad := 0
	for i := range n {
		var msgs []string
		if g, w := ode.Status(got.status[i]), ode.Status(want.status[i]); g != w {
			msgs = append(msgs, fmt.Sprintf("status %v, want %v", g, w))
		}
		if got.accepted[i] != want.accepted[i] || got.rejected[i] != want.rejected[i] || got.fevals[i] != want.fevals[i] {
			msgs = append(msgs, fmt.Sprintf("accepted/rejected/fevals %d/%d/%d, want %d/%d/%d",
				got.accepted[i], got.rejected[i], got.fevals[i], want.accepted[i], want.rejected[i], want.fevals[i]))
		}
		if !testutil.SameBits(got.t[i], want.t[i]) {
			msgs = append(msgs, fmt.Sprintf("t reached %v, want %v", got.t[i], want.t[i]))
		}
		if g, w := got.y[i*na:(i+1)*na], want.y[i*na:(i+1)*na]; !testutil.EqualBits(g, w) {
			msgs = append(msgs, testutil.DiffReport("y", g, w, 0))
		}
		if g, w := got.saved[i*k*na:(i+1)*k*na], want.saved[i*k*na:(i+1)*k*na]; !testutil.EqualBits(g, w) {
			msgs = append(msgs, testutil.DiffReport("saved", g, w, 0))
		}
		if len(msgs) > 0 {
			bad++
			if bad <= 5 {
				t.Errorf("%s: trajectory %d (t0 %v, t1 %v): %v", what, i, ens.t0[i], ens.t1[i], msgs)
			}
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d of %d trajectories differ", what, bad, n)
	}
}

// cpuSolve solves ens on cpu-erk with method tb and options o.
func cpuSolve(t *testing.T, prob *ode.Problem, ens *ensemble, tb *method.Tableau, o gradsolve.Options) *gradsolve.Result {
	t.Helper()
	o.Method, o.Engine = tb, "cpu-erk"
	e := &gradsolve.Ensemble{N: ensembleSize, Y0: ens.y0, P: ens.p, T0: ens.t0, T1: ens.t1, Save: ens.save, SavePerTrajectory: true}
	if ens.y0FromP {
		e.Y0 = nil
	}
	res, err := gradsolve.Solve(context.Background(), prob, e, &o)
	if err != nil && res == nil {
		t.Fatal(err)
	}
	if res.Engine != "cpu-erk" {
		t.Fatalf("solved on %s, want cpu-erk", res.Engine)
	}
	return res
}

// runForward solves the case's ensemble with every option set and
// method on the CPU engine and in emulation, and compares.
func runForward(t *testing.T, c forwardCase) {
	set, src := c.source(t)
	prog := compile(t, src)
	prob := set.Problem()
	ens := makeEnsemble(prob, c, uint64(len(c.name)))
	span := c.span * (prob.T1 - prob.T0)
	for _, os := range optionSets {
		opts := os.opts(c, prob.Dim, span)
		statuses := map[ode.Status]int{}
		for ki, kern := range src.Kernels {
			if kern.Sens >= 0 {
				continue
			}
			res := cpuSolve(t, prob, ens, kern.Method, opts)
			for _, s := range res.Status {
				statuses[s]++
			}
			got := prog.solve(t, kernelJob(ki, kern, &res.Options, ens, ens.y0))
			compareResults(t, fmt.Sprintf("%s %s %s", c.name, kern.Method.Name, os.name), expected(res), got, ens, kern.Dim)
		}
		// The ensemble exercises what it is meant to: the budget, the
		// step floor and successes (NonFinite where the case asks).
		if statuses[ode.Success] == 0 || statuses[ode.StepUnderflow] == 0 || (os.name == "defaults" && statuses[ode.MaxStepsReached] == 0) {
			t.Errorf("%s %s: statuses %v: want successes, StepUnderflow and (defaults) MaxStepsReached", c.name, os.name, statuses)
		}
		if c.special != nil && statuses[ode.NonFinite] == 0 {
			t.Errorf("%s %s: statuses %v: want a NonFinite trajectory", c.name, os.name, statuses)
		}
	}
}

// kernelJob is the launch of kernel ki that solves ens from the
// (augmented) initial states y0 as cpu-erk did with the resolved
// options o (gradsolve.Result.Options): its tolerances (the norm's
// components: the state's, or with ErrorTest the state's repeated for
// each column), hmax (0: none), h0, the budget and its controller.
func kernelJob(ki int, k emitcuda.Kernel, o *gradsolve.Options, ens *ensemble, y0 []float64) *job {
	var rtol, atol []float64
	for len(rtol) < k.NormDim {
		rtol, atol = append(rtol, o.RTolVec...), append(atol, o.ATolVec...)
	}
	hmax := o.HMax
	if hmax == 0 {
		hmax = math.Inf(1)
	}
	return &job{kernel: ki, t0: ens.t0, t1: ens.t1, y0: y0, p: ens.p, save: ens.save, perTrajectorySave: true,
		maxSteps: o.MaxSteps, hmax: hmax, h0: o.H0, ctl: *o.Controller,
		rtol: rtol[:k.NormDim], atol: atol[:k.NormDim], grid: 3, block: 16}
}

// forwardCases are the problems of the tests: example files and
// testdata/funcs.ode, which calls every function of the problem
// language (and t); those with columns also have sensitivity kernels.
// Each compiles in a few seconds, which is what the tests cost.
var forwardCases = []forwardCase{
	{name: "lorenz", file: "lorenz.ode", span: 1, maxSteps: 400,
		wrt: []gradsolve.Wrt{{Index: 1}, {Y0: true, Index: 2}}, errorTest: true},
	{name: "halo", file: "halo.ode", span: 0.5, maxSteps: 400,
		wrt: []gradsolve.Wrt{{Index: 0}, {Index: 1}, {Index: 2}, {Y0: true, Index: 0}, {Y0: true, Index: 4}}},
	// examples/kepler.ode's equations, with y0 a function of the
	// eccentricity.
	{name: "kepler_ecc", file: "kepler_ecc.ode", span: 0.5, maxSteps: 300, special: func(i int, y0 []float64) {
		if i == 9 { // at the centre: f(t0, y0) is not finite
			y0[0], y0[1] = 0, 0
		}
	}, wrt: []gradsolve.Wrt{{Index: 0}, {Index: 1}, {Y0: true, Index: 1}}, y0FromP: true},
	{name: "vdp", file: "vanderpol.ode", span: 1, maxSteps: 300},
	{name: "funcs", file: "testdata/funcs.ode", span: 1, maxSteps: 300,
		wrt: []gradsolve.Wrt{{Index: 0}, {Index: 1}, {Index: 2}, {Y0: true, Index: 1}}},
}

// shortCases are the cases run under -short.
var shortCases = map[string]bool{"lorenz": true, "halo": true, "funcs": true}

// casePath returns the path of a case's problem file: testdata/… as it
// is, other names in the examples directory.
func casePath(t testing.TB, file string) string {
	if strings.HasPrefix(file, "testdata/") {
		return file
	}
	return examplePath(t, file)
}

// TestForwardBitwise solves each case's ensemble with every method and
// option set on cpu-erk and with the forward kernels in emulation, and
// compares the results bit for bit.
func TestForwardBitwise(t *testing.T) {
	for _, c := range forwardCases {
		if testing.Short() && !shortCases[c.name] {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // the compiles dominate: one per core
			runForward(t, c)
		})
	}
}

// TestForwardDetectsChange checks that the comparison of
// TestForwardBitwise sees a change of one bit in what the kernel is
// given: the controller's safety factor one ulp above 0.9 must change
// the results of (almost) every trajectory.
func TestForwardDetectsChange(t *testing.T) {
	c := forwardCases[0]
	set, src := c.source(t)
	if src.Kernels[0].Method != method.Tsit5 {
		t.Fatalf("kernel 0 runs %s, want Tsit5", src.Kernels[0].Method.Name)
	}
	prog := compile(t, src)
	prob := set.Problem()
	ens := makeEnsemble(prob, c, 1)
	res := cpuSolve(t, prob, ens, method.Tsit5, gradsolve.Options{MaxSteps: c.maxSteps})
	j := kernelJob(0, src.Kernels[0], &res.Options, ens, ens.y0)
	j.ctl.Safety = math.Nextafter(j.ctl.Safety, 1)
	r := prog.solve(t, j)
	differ := 0
	for i := range ensembleSize {
		if !testutil.EqualBits(r.y[i*prob.Dim:(i+1)*prob.Dim], res.Row(i)) {
			differ++
		}
	}
	if differ < ensembleSize/2 {
		t.Errorf("safety one ulp off changed %d of %d final states; want most", differ, ensembleSize)
	}
}

// TestForwardSaveLists covers the two other layouts of save times: none
// at all, and one list shared by every trajectory (gs_erk_job's
// save_stride 0), on lorenz with every method, bitwise as in
// TestForwardBitwise. The spans all start at 0 and run forwards so that
// the shared list {0, 0.1, 0.25, 0.5} lies inside each.
func TestForwardSaveLists(t *testing.T) {
	c := forwardCases[0]
	set, src := c.source(t)
	prog := compile(t, src)
	prob := set.Problem()
	ens := makeEnsemble(prob, c, 3)
	for i := range ensembleSize {
		ens.t0[i], ens.t1[i] = 0, 0.5+float64(i)/ensembleSize
	}
	for _, save := range [][]float64{nil, {0, 0.1, 0.25, 0.5}} {
		e := *ens
		e.save, e.k = save, len(save)
		for ki, kern := range src.Kernels {
			if kern.Sens >= 0 {
				continue
			}
			o := gradsolve.Options{Method: kern.Method, Engine: "cpu-erk", MaxSteps: c.maxSteps}
			res, err := gradsolve.Solve(context.Background(), prob,
				&gradsolve.Ensemble{N: ensembleSize, Y0: e.y0, P: e.p, T0: e.t0, T1: e.t1, Save: e.save}, &o)
			if err != nil && res == nil {
				t.Fatal(err)
			}
			j := kernelJob(ki, kern, &res.Options, &e, e.y0)
			j.perTrajectorySave = false
			got := prog.solve(t, j)
			compareResults(t, fmt.Sprintf("%s with %d shared save times", kern.Name, len(save)), expected(res), got, &e, kern.Dim)
		}
	}
}
