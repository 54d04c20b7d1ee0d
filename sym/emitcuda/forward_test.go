package emitcuda_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/sym/emitcuda"
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
}

// ensemble is a test ensemble: each trajectory its own parameters,
// initial state, span and save times.
type ensemble struct {
	t0, t1, y0, p, save []float64
	k                   int // save times per trajectory
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

// compareForward checks the emulated results r against the CPU
// engine's res, trajectory by trajectory: status, statistics, time
// reached, final state and saved states, bit for bit.
func compareForward(t *testing.T, what string, res *gradsolve.Result, r *result, ens *ensemble) {
	t.Helper()
	n, dim, k := res.N, res.Dim, ens.k
	bad := 0
	for i := range n {
		var msgs []string
		if got, want := ode.Status(r.status[i]), res.Status[i]; got != want {
			msgs = append(msgs, fmt.Sprintf("status %v, want %v", got, want))
		}
		st := res.Stats[i]
		if r.accepted[i] != int64(st.Accepted) || r.rejected[i] != int64(st.Rejected) || r.fevals[i] != int64(st.FEvals) {
			msgs = append(msgs, fmt.Sprintf("accepted/rejected/fevals %d/%d/%d, want %d/%d/%d",
				r.accepted[i], r.rejected[i], r.fevals[i], st.Accepted, st.Rejected, st.FEvals))
		}
		if !testutil.SameBits(r.t[i], res.T[i]) {
			msgs = append(msgs, fmt.Sprintf("t reached %v, want %v", r.t[i], res.T[i]))
		}
		if !testutil.EqualBits(r.y[i*dim:(i+1)*dim], res.Row(i)) {
			msgs = append(msgs, testutil.DiffReport("y", r.y[i*dim:(i+1)*dim], res.Row(i), 0))
		}
		if got, want := r.saved[i*k*dim:(i+1)*k*dim], res.Saved[i*k*dim:(i+1)*k*dim]; !testutil.EqualBits(got, want) {
			msgs = append(msgs, testutil.DiffReport("saved", got, want, 0))
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

// runForward solves the case's ensemble with every option set and
// method on the CPU engine and in emulation, and compares.
func runForward(t *testing.T, c forwardCase) {
	set := readModel(t, c.file)
	src, err := emitcuda.Generate(set, emitcuda.Options{})
	if err != nil {
		t.Fatal(err)
	}
	prog := compile(t, src)
	prob := set.Problem()
	ens := makeEnsemble(prob, c, uint64(len(c.name)))
	span := c.span * (prob.T1 - prob.T0)
	for _, os := range optionSets {
		opts := os.opts(c, prob.Dim, span)
		statuses := map[ode.Status]int{}
		for ki, kern := range src.Kernels {
			tb := kern.Method
			o := opts
			o.Method, o.Engine = tb, "cpu-erk"
			res, err := gradsolve.Solve(context.Background(), prob,
				&gradsolve.Ensemble{N: ensembleSize, Y0: ens.y0, P: ens.p, T0: ens.t0, T1: ens.t1, Save: ens.save, SavePerTrajectory: true}, &o)
			if err != nil && res == nil {
				t.Fatal(err)
			}
			for _, s := range res.Status {
				statuses[s]++
			}
			j := kernelJob(ki, tb, prob.Dim, &o, ens)
			r := prog.solve(t, j)
			compareForward(t, fmt.Sprintf("%s %s %s", c.name, tb.Name, os.name), res, r, ens)
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

// kernelJob is the launch of kernel ki that solves ens with o as
// cpu-erk would: the resolved tolerances, hmax (0: none), h0, the
// budget and the method's default controller.
func kernelJob(ki int, tb *method.Tableau, dim int, o *gradsolve.Options, ens *ensemble) *job {
	rtol, atol := o.RTolVec, o.ATolVec
	if rtol == nil {
		r, a := o.RTol, o.ATol
		if r == 0 && a == 0 {
			r, a = gradsolve.DefaultRTol, gradsolve.DefaultATol
		}
		rtol, atol = make([]float64, dim), make([]float64, dim)
		for d := range dim {
			rtol[d], atol[d] = r, a
		}
	}
	hmax := o.HMax
	if hmax == 0 {
		hmax = math.Inf(1)
	}
	maxSteps := o.MaxSteps
	if maxSteps == 0 {
		maxSteps = gradsolve.DefaultMaxSteps
	}
	return &job{kernel: ki, t0: ens.t0, t1: ens.t1, y0: ens.y0, p: ens.p, save: ens.save, perTrajectorySave: true,
		maxSteps: maxSteps, hmax: hmax, h0: o.H0, ctl: control.DefaultPI(tb.Order, tb.QMin, tb.QMax),
		rtol: rtol, atol: atol, grid: 3, block: 16}
}

// forwardCases are the problems of TestForwardBitwise: example files
// and testdata/funcs.ode, which calls every function of the problem
// language.
var forwardCases = []forwardCase{
	{name: "lorenz", file: "lorenz.ode", span: 1, maxSteps: 400},
	{name: "halo", file: "halo.ode", span: 0.5, maxSteps: 400},
	{name: "kepler", file: "kepler.ode", span: 0.5, maxSteps: 300, special: func(i int, y0 []float64) {
		if i == 9 { // at the centre: f(t0, y0) is not finite
			y0[0], y0[1] = 0, 0
		}
	}},
	{name: "vdp", file: "vanderpol.ode", span: 1, maxSteps: 300},
	{name: "pendulum", file: "pendulum.ode", span: 0.2, maxSteps: 300},
	{name: "funcs", file: "testdata/funcs.ode", span: 1, maxSteps: 300},
}

func TestForwardBitwise(t *testing.T) {
	for _, c := range forwardCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // the compiles dominate: one per core
			if !strings.HasPrefix(c.file, "testdata/") {
				c.file = examplePath(t, c.file)
			}
			runForward(t, c)
		})
	}
}
