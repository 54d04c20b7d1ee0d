package gpu

import (
	"fmt"
	"math"
	"os"
	"sync/atomic"

	"github.com/gradsolve/gradsolve/internal/engine"
	"github.com/gradsolve/gradsolve/internal/engine/cpu"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/sym/parse"
	"github.com/gradsolve/gradsolve/sym/tape"
)

// SelfTestEnv names the environment variable that skips the self-test
// of a device (GRADSOLVE_CUDA_SELFTEST=off): the engine is then
// available as soon as the driver, a device and NVRTC load, and its
// results on the device are taken on trust.
const SelfTestEnv = "GRADSOLVE_CUDA_SELFTEST"

// SelfTester is a Backend whose devices are checked before the engine
// says it is available: the real CUDA backend (whose kernels, compiled
// by the driver's NVRTC, could differ from the emulation's), and test
// backends that stand in for it. Emulated is not one: its programs are
// the conformance suite's own.
type SelfTester interface {
	Backend
	// SelfTest reports whether the engine should self-test device 0
	// on first use.
	SelfTest() bool
}

// SelfTest returns true: a real device is self-tested.
func (c *CUDA) SelfTest() bool { return true }

// selfTestModel is the self-test's problem: the Lorenz system (as
// examples/lorenz.ode), a few dozen operations, every kind of a
// kernel's work (stages, the controller, save times, rejections).
const selfTestModel = `name lorenz_selftest
state x = 1, y = 0, z = 0
param rho = 28, sigma = 10, beta = 8/3
span 0 1
x' = sigma*(y - x)
y' = x*(rho - z) - y
z' = x*y - beta*z
`

// selfTest compiles small generated sources on device 0 (the explicit
// kernels and the Rosenbrock kernels of Lorenz, with their record and
// adjoint kernels), runs a tiny ensemble (save times, one trajectory
// backwards, one stopped by the step budget) with Tsit5 forward and
// with two sensitivity columns, and with Rodas5P forward; records it
// with both methods and takes each successful trajectory's gradient
// through the adjoint kernel; and compares every output, mesh and
// gradient with cpu-erk's and cpu-ros's, computed here: nil
// where every bit agrees, else what differs. It runs once per process
// (Available), before any job, so a device whose compiler or arithmetic
// departs from the emulation's is never used.
func (e *Engine) selfTest() error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("self-test on device 0 failed: "+format, args...)
	}
	m, err := parse.Parse("lorenz_selftest.ode", []byte(selfTestModel))
	if err != nil {
		return fail("parsing its model: %v", err)
	}
	set, err := tape.Build(m)
	if err != nil {
		return fail("building its model: %v", err)
	}
	prob := set.Problem()
	for _, c := range []struct {
		m   method.Method
		job engine.Job
		ref string
		pre func(*engine.Spec) (engine.Plan, error)
	}{
		{method.Tsit5, engine.Forward, "cpu-erk", cpu.ERK{}.Prepare},
		{method.Tsit5, engine.Sensitivities, "cpu-erk", cpu.ERK{}.Prepare},
		{method.Rodas5P, engine.Forward, "cpu-ros", cpu.ROS{}.Prepare},
	} {
		spec := &engine.Spec{
			Request: engine.Request{Problem: prob, Offers: prob.ProgramSet(), Method: c.m, Job: c.job, N: selfTestN},
			RTol:    []float64{1e-8, 1e-8, 1e-8}, ATol: []float64{1e-10, 1e-10, 1e-10}, MaxSteps: 400,
		}
		if c.job == engine.Sensitivities {
			spec.SensCols = []int{0, -1}
			spec.NumSens = 2
		}
		what := fmt.Sprintf("%s %s job", c.m.MethodName(), c.job)
		want, err := selfTestRun(c.pre, spec)
		if err != nil {
			return fail("%s on %s: %v", what, c.ref, err)
		}
		got, err := selfTestRun(e.prepare, spec)
		if err != nil {
			return fail("%s: %v", what, err)
		}
		if err := compareOutputs(got, want, c.ref); err != nil {
			return fail("%s: %v", what, err)
		}
	}
	// The recordings and the gradients through the adjoint kernels.
	for _, c := range []struct {
		m   method.Method
		ref string
		pre func(*engine.Spec) (engine.Plan, error)
	}{
		{method.Tsit5, "cpu-erk", cpu.ERK{}.Prepare},
		{method.Rodas5P, "cpu-ros", cpu.ROS{}.Prepare},
	} {
		spec := &engine.Spec{
			Request: engine.Request{Problem: prob, Offers: prob.ProgramSet(), Method: c.m, Job: engine.Record, N: selfTestN},
			RTol:    []float64{1e-8, 1e-8, 1e-8}, ATol: []float64{1e-10, 1e-10, 1e-10}, MaxSteps: 400,
		}
		what := fmt.Sprintf("%s %s job", c.m.MethodName(), engine.Record)
		want, wg, err := selfTestGradients(c.pre, spec)
		if err != nil {
			return fail("%s on %s: %v", what, c.ref, err)
		}
		got, gg, err := selfTestGradients(e.prepare, spec)
		if err != nil {
			return fail("%s: %v", what, err)
		}
		if err := compareOutputs(got, want, c.ref); err != nil {
			return fail("%s: %v", what, err)
		}
		for i := range want {
			gm, wm := got[i].Mesh, want[i].Mesh
			for _, v := range []struct {
				name string
				g, w []float64
			}{{"mesh times", gm.T, wm.T}, {"mesh step sizes", gm.H, wm.H}, {"mesh states", gm.Y, wm.Y}, {"gradient values", gg[i], wg[i]}} {
				if err := sameBits(v.g, v.w); err != nil {
					return fail("%s: trajectory %d's %s differ from %s's: %v", what, i, v.name, c.ref, err)
				}
			}
		}
	}
	return nil
}

// selfTestGradients records the self-test's ensemble with the plan
// prepare makes of spec (a Record job), then reverses each successful
// trajectory's mesh with the plan's replayer from fixed cotangents of
// its final and saved states, and returns the outputs (with their
// meshes) and each trajectory's gradient (∂L/∂y0, then ∂L/∂p; nil for
// a failed trajectory).
func selfTestGradients(prepare func(*engine.Spec) (engine.Plan, error), spec *engine.Spec) ([]ivp.Output, [][]float64, error) {
	outs, err := selfTestRun(prepare, spec)
	if err != nil {
		return nil, nil, err
	}
	pl, err := prepare(spec)
	if err != nil {
		return nil, nil, err
	}
	rp, err := pl.NewReplayer()
	if err != nil {
		return nil, nil, err
	}
	dim, np := spec.Problem.Dim, spec.Problem.NumParams
	grads := make([][]float64, len(outs))
	var jobs []*ivp.ReverseJob
	for i := range outs {
		if outs[i].Status != ode.Success {
			continue
		}
		tr := selfTestTrajectory(i, spec)
		cotSaved := make([]float64, 3*dim)
		for k := range cotSaved {
			cotSaved[k] = 0.1 * float64(k+1)
		}
		g := make([]float64, dim+np)
		grads[i] = g
		jobs = append(jobs, &ivp.ReverseJob{Mesh: outs[i].Mesh, P: tr.P, Save: tr.Save, CotY: []float64{1, -0.5, 0.25}, CotSaved: cotSaved,
			GY0: g[:dim], GP: g[dim:]})
	}
	// A lane replayer (the device's: its adjoint kernel) takes the jobs
	// as a batch, a scalar one (the CPU reference's) one at a time.
	if lr, ok := rp.(engine.LaneReplayer); ok {
		var stop atomic.Bool
		lr.ReverseLanes(&jobList{jobs: jobs}, &stop)
	} else {
		for _, j := range jobs {
			rp.Reverse(j.Mesh, j.P, j.Save, j.CotY, j.CotSaved, j.GY0, j.GP)
		}
	}
	if fr, ok := rp.(engine.FailingReplayer); ok && fr.Err() != nil {
		return nil, nil, fr.Err()
	}
	return outs, grads, nil
}

// jobList hands out its jobs in order to whichever lane asks
// (ivp.ReverseSource).
type jobList struct {
	jobs []*ivp.ReverseJob
	next int
}

func (s *jobList) Next(int) (*ivp.ReverseJob, bool) {
	if s.next == len(s.jobs) {
		return nil, false
	}
	s.next++
	return s.jobs[s.next-1], true
}

func (s *jobList) Done(int) {}

// sameBits returns nil where g and w hold the same float64 bits, else
// the first difference.
func sameBits(g, w []float64) error {
	if len(g) != len(w) {
		return fmt.Errorf("%d values, want %d", len(g), len(w))
	}
	for k := range w {
		if math.Float64bits(g[k]) != math.Float64bits(w[k]) {
			return fmt.Errorf("value %d is %v, want %v", k, g[k], w[k])
		}
	}
	return nil
}

// selfTestN is the self-test's ensemble size.
const selfTestN = 5

// selfTestRun solves the self-test's ensemble with the plan prepare
// makes of spec, one trajectory at a time on one worker.
func selfTestRun(prepare func(*engine.Spec) (engine.Plan, error), spec *engine.Spec) ([]ivp.Output, error) {
	pl, err := prepare(spec)
	if err != nil {
		return nil, err
	}
	sv, err := pl.NewSolver()
	if err != nil {
		return nil, err
	}
	dim := spec.Problem.Dim
	ns := len(spec.SensCols)
	da := dim * (1 + ns)
	var stop atomic.Bool
	outs := make([]ivp.Output, selfTestN)
	for i := range selfTestN {
		tr := selfTestTrajectory(i, spec)
		outs[i] = ivp.Output{Y: make([]float64, da), Saved: make([]float64, 3*da)}
		if spec.Job == engine.Record {
			outs[i].Mesh = &ivp.Mesh{}
		}
		sv.Solve(tr, &outs[i], &stop)
	}
	if fs, ok := sv.(engine.FailingSolver); ok && fs.Err() != nil {
		return nil, fs.Err()
	}
	return outs, nil
}

// selfTestTrajectory is trajectory i of the self-test's ensemble: its
// own span (trajectory 1 backwards; trajectory 4 runs out of its 400
// steps), initial state and parameters, three save times (at t0, inside
// and at t1), and the initial tangents of spec's sensitivity columns.
func selfTestTrajectory(i int, spec *engine.Spec) *ivp.Trajectory {
	dim := spec.Problem.Dim
	x := float64(i)
	t0, t1 := 0.0, 0.4+0.3*x
	if i == 1 {
		t0, t1 = t1, t0
	}
	if i == 4 {
		t1 = 60 // runs out of its 400 steps
	}
	y0 := make([]float64, dim*(1+len(spec.SensCols)))
	copy(y0, []float64{1 + 0.1*x, 0.2 * x, 0.5 - 0.05*x})
	for c, j := range spec.SensCols {
		if j < 0 {
			y0[dim*(1+c)] = 1 // the column of x(t0)
		}
	}
	return &ivp.Trajectory{T0: t0, T1: t1, Y0: y0, P: []float64{28 - x, 10 + 0.5*x, 8.0 / 3},
		Save: []float64{t0, t0 + 0.37*(t1-t0), t1}}
}

// compareOutputs returns nil where got and want agree bit for bit in
// every output, else the first difference.
func compareOutputs(got, want []ivp.Output, ref string) error {
	for i := range want {
		g, w := &got[i], &want[i]
		if g.Status != w.Status {
			return fmt.Errorf("trajectory %d's status is %v, %s's %v", i, g.Status, ref, w.Status)
		}
		if g.Stats != w.Stats {
			return fmt.Errorf("trajectory %d's statistics are %+v, %s's %+v", i, g.Stats, ref, w.Stats)
		}
		for _, c := range []struct {
			name string
			g, w []float64
		}{{"y differs", g.Y, w.Y}, {"saved states differ", g.Saved, w.Saved}, {"time reached differs", []float64{g.T}, []float64{w.T}}} {
			for k := range c.w {
				if math.Float64bits(c.g[k]) != math.Float64bits(c.w[k]) {
					return fmt.Errorf("trajectory %d's %s from %s's (component %d: %v, want %v)", i, c.name, ref, k, c.g[k], c.w[k])
				}
			}
		}
	}
	return nil
}

// selfTestSkipped reports whether the environment skips the self-test.
func selfTestSkipped() bool { return os.Getenv(SelfTestEnv) == "off" }
