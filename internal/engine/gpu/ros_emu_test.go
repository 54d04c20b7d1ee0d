package gpu_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/engine"
	"github.com/gradsolve/gradsolve/internal/engine/gpu"
	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/sym/emitcuda"
	"github.com/gradsolve/gradsolve/sym/parse"
	"github.com/gradsolve/gradsolve/sym/tape"
)

// forcedModel is a stiff non-autonomous problem: u relaxes at rate k
// towards cos(w t), v is driven by exp(-t) u, so ∂f/∂t is not zero and
// the h²·d_i·f_t terms of a Rosenbrock step take part.
const forcedModel = `name forced
param k = 50, w = 3, c = 0.5
state u = 1, v = 0
span 0 3
u' = -k*(u - cos(w*t)) + v
v' = -c*v*u + exp(-t)*u
`

// exampleProblem returns examples/<file> as a Problem.
func exampleProblem(t *testing.T, file string) *gradsolve.Problem {
	t.Helper()
	_, me, _, _ := runtime.Caller(0)
	m, err := parse.ParseFile(filepath.Join(filepath.Dir(me), "..", "..", "..", "examples", file))
	if err != nil {
		t.Fatal(err)
	}
	s, err := tape.Build(m)
	if err != nil {
		t.Fatal(err)
	}
	return s.Problem()
}

func forcedProblem(t *testing.T) *gradsolve.Problem {
	t.Helper()
	m, err := parse.Parse("forced.ode", []byte(forcedModel))
	if err != nil {
		t.Fatal(err)
	}
	s, err := tape.Build(m)
	if err != nil {
		t.Fatal(err)
	}
	return s.Problem()
}

// stiffEnsemble is an ensemble of n trajectories of pr with their own
// parameters, initial states, spans of about span (every fourth
// backwards, trajectory 3 a thousand times longer, for the step budget) and
// save times at t0, inside and at t1.
func stiffEnsemble(pr *gradsolve.Problem, n int, span float64) *gradsolve.Ensemble {
	rng := rand.New(rand.NewPCG(5, 11))
	e := &gradsolve.Ensemble{N: n, SavePerTrajectory: true}
	for i := range n {
		for j := range pr.NumParams {
			e.P = append(e.P, pr.P[j]*(1+0.2*(rng.Float64()-0.5)))
		}
		for d := range pr.Dim {
			e.Y0 = append(e.Y0, pr.Y0[d]*(1+0.1*(rng.Float64()-0.5)))
		}
		t0, t1 := 0.0, span*(0.5+rng.Float64())
		if i == 3 {
			t1 = 1000 * span
		}
		if i%4 == 1 {
			t0, t1 = t1, t0
		}
		e.T0, e.T1 = append(e.T0, t0), append(e.T1, t1)
		e.Save = append(e.Save, t0, t0+0.3*(t1-t0), t1)
	}
	return e
}

// TestEmulatedRosenbrock: the Rosenbrock kernels through the engine
// (gradsolve.Solve naming it) give cpu-ros's bits — final and saved
// states, sensitivities, statuses, times reached and the five
// counters — for Robertson and a forced non-autonomous problem, with
// Rodas5P, Rosenbrock23 and a tableau of the user's (Rosenbrock23's
// coefficients, renamed, without a continuous extension), forward,
// with DenseSave, with sensitivity columns of parameters and initial
// values, whatever the chunk (1, 7, the batch).
func TestEmulatedRosenbrock(t *testing.T) {
	e := engine.Lookup("emu-test-chunk1").(engine.Availability)
	if err := e.Available(); err != nil {
		t.Skipf("the emulated device cannot run here: %v", err)
	}
	own := *method.Rosenbrock23
	own.Name, own.Dense = "own23", nil
	rob, forced := exampleProblem(t, "robertson.ode"), forcedProblem(t)
	const n = 13
	for _, c := range []struct {
		name string
		pr   *gradsolve.Problem
		span float64
		o    gradsolve.Options
	}{
		{"robertson Rodas5P", rob, 1, gradsolve.Options{Method: method.Rodas5P, MaxSteps: 70, RTol: 1e-6, ATol: 1e-10}},
		{"robertson Rosenbrock23 dense", rob, 1, gradsolve.Options{Method: method.Rosenbrock23, MaxSteps: 300, RTol: 1e-5, ATol: 1e-9, DenseSave: true}},
		{"robertson Rodas5P sensitivities", rob, 1, gradsolve.Options{Method: method.Rodas5P, MaxSteps: 70, RTol: 1e-6, ATol: 1e-10,
			Sens: &gradsolve.Sensitivity{Wrt: []gradsolve.Wrt{gradsolve.Param(0), gradsolve.Param(2), gradsolve.InitialValue(0)}}}},
		{"forced Rodas5P dense, HMax", forced, 1, gradsolve.Options{Method: method.Rodas5P, MaxSteps: 200, HMax: 0.05, DenseSave: true}},
		{"forced own tableau sensitivities", forced, 1, gradsolve.Options{Method: &own, MaxSteps: 400,
			Sens: &gradsolve.Sensitivity{Wrt: []gradsolve.Wrt{gradsolve.Param(1), gradsolve.InitialValue(1)}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ens := stiffEnsemble(c.pr, n, c.span)
			o := c.o
			o.Engine = "cpu-ros"
			want := solve(t, c.pr, ens, o)
			if want.Status[3] != gradsolve.MaxStepsReached {
				t.Fatalf("trajectory 3 is %v on cpu-ros: want it stopped by the budget (%+v; trajectory 0: %+v)", want.Status[3], want.Stats[3], want.Stats[0])
			}
			if want.Stats[0].JacEvals == 0 || want.Stats[0].LUs == 0 {
				t.Fatalf("cpu-ros's statistics %+v count no Jacobian or LU", want.Stats[0])
			}
			for name := range chunkEngines {
				o.Engine = name
				sameResults(t, fmt.Sprintf("%s on %s", c.name, name), solve(t, c.pr, ens, o), want)
			}
		})
	}
}

// TestEmulatedRecordGradient: a recording on the engine (the record
// kernel) is cpu-ros's — the results and so the meshes' ends, bit for
// bit — and its gradient through the adjoint kernel
// (Recording.Gradient, the engine's LaneReplayer) is cpu-ros's ∂L/∂y0
// and ∂L/∂p bit for bit, with cotangents of the final and saved
// states, for Robertson and the forced non-autonomous problem (its
// HMax makes meshes longer than the record kernel's first room,
// FirstMeshCap, so they are re-run with more), re-stepped and dense
// save times, whatever the chunk (1, 7, the batch). A replay at other
// parameters (cpu-ros's forward replay) is cpu-ros's too, and so is a
// checkpointed recording's gradient.
func TestEmulatedRecordGradient(t *testing.T) {
	e := engine.Lookup("emu-test-chunk1").(engine.Availability)
	if err := e.Available(); err != nil {
		t.Skipf("the emulated device cannot run here: %v", err)
	}
	rob, forced := exampleProblem(t, "robertson.ode"), forcedProblem(t)
	const n = 13
	for _, c := range []struct {
		name    string
		pr      *gradsolve.Problem
		o       gradsolve.Options
		longest int // a mesh at least this long, past FirstMeshCap
	}{
		{"robertson Rodas5P", rob, gradsolve.Options{Method: method.Rodas5P, MaxSteps: 70, RTol: 1e-6, ATol: 1e-10}, 0},
		{"robertson Rosenbrock23 dense", rob, gradsolve.Options{Method: method.Rosenbrock23, MaxSteps: 300, RTol: 1e-5, ATol: 1e-9, DenseSave: true}, 0},
		{"forced Rodas5P HMax", forced, gradsolve.Options{Method: method.Rodas5P, MaxSteps: 400, HMax: 0.01}, gpu.FirstMeshCap + 1},
		{"forced Rodas5P dense", forced, gradsolve.Options{Method: method.Rodas5P, MaxSteps: 400, HMax: 0.01, DenseSave: true}, gpu.FirstMeshCap + 1},
		// A checkpointed recording: the meshes keep every 4th state (as
		// Mesh.Push keeps them), and the reverse runs on cpu-ros's
		// replayer (the adjoint kernel needs every state).
		{"robertson Rodas5P checkpointed", rob, gradsolve.Options{Method: method.Rodas5P, MaxSteps: 70, RTol: 1e-6, ATol: 1e-10, Checkpoint: 4}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			ens := stiffEnsemble(c.pr, n, 1)
			run := func(name string) recRun { return runRecording(t, c.pr, ens, c.o, name, 1.01) }
			want := run("cpu-ros")
			ok, longest := 0, 0
			for i := range n {
				if want.res.Status[i] == gradsolve.Success {
					ok++
				}
				longest = max(longest, want.res.Stats[i].Accepted)
			}
			if ok < n/2 || want.res.Status[3] != gradsolve.MaxStepsReached {
				t.Fatalf("cpu-ros: %d of %d successful, trajectory 3 %v: want most successful and 3 stopped by the budget", ok, n, want.res.Status[3])
			}
			if longest < c.longest {
				t.Fatalf("the longest mesh has %d steps: want at least %d", longest, c.longest)
			}
			for name := range chunkEngines {
				got := run(name)
				what := fmt.Sprintf("%s on %s", c.name, name)
				sameRecordings(t, what, got, want)
			}
		})
	}
}

// failingAdjoint is the emulated device whose adjoint launches fail, as
// a device's launch error would.
type failingAdjoint struct{ *gpu.Emulated }

func (b *failingAdjoint) Open(n int) (gpu.Device, error) {
	d, err := b.Emulated.Open(n)
	return failingAdjointDevice{d}, err
}

type failingAdjointDevice struct{ gpu.Device }

func (d failingAdjointDevice) Load(src *emitcuda.Source) (gpu.Module, error) {
	m, err := d.Device.Load(src)
	if err != nil {
		return nil, err
	}
	return failingAdjointModule{m.(gpu.Recorder)}, nil
}

type failingAdjointModule struct{ gpu.Recorder }

func (failingAdjointModule) Adjoint(gpu.Kernel, *gpu.Settings, *gpu.AdjBatch, int, *atomic.Bool) (int, error) {
	return 0, errors.New("cuda: cuLaunchKernel(gs_ros_rodas5p_adjoint): CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)")
}

func init() {
	engine.Register(gpu.New("emu-test-adjfail", &failingAdjoint{Emulated: &gpu.Emulated{}}, gpu.Config{Priority: -20, Batch: 4}))
}

// TestEmulatedAdjointFails: a device failure in the adjoint kernel is
// Recording.Gradient's error (engine.FailingReplayer), never NaN
// gradients returned as a result.
func TestEmulatedAdjointFails(t *testing.T) {
	e := engine.Lookup("emu-test-adjfail").(engine.Availability)
	if err := e.Available(); err != nil {
		t.Skipf("the emulated device cannot run here: %v", err)
	}
	rob := exampleProblem(t, "robertson.ode")
	ens := stiffEnsemble(rob, 6, 1)
	rec, err := gradsolve.Record(context.Background(), rob, ens, &gradsolve.Options{Engine: "emu-test-adjfail", Method: method.Rodas5P, MaxSteps: 70})
	if err != nil {
		t.Fatal(err)
	}
	cot := make([]float64, len(rec.Result.Y))
	for i := range cot {
		cot[i] = 1
	}
	g, err := rec.Gradient(context.Background(), gradsolve.Cotangents{Y: cot})
	if err == nil || !strings.Contains(err.Error(), "engine emu-test-adjfail: cuda: cuLaunchKernel(gs_ros_rodas5p_adjoint): CUDA_ERROR_LAUNCH_FAILED") {
		t.Errorf("Gradient = %v, %v; want the launch's error", g, err)
	}
}

// recRun is what runRecording computed on one engine.
type recRun struct {
	res, replay *gradsolve.Result
	g           *gradsolve.Gradient
}

// runRecording records ens on the named engine, takes the gradient of
// Σ y²/2 over the final and saved states (their cotangents are the
// states themselves, zero where a failed trajectory has none) and
// replays the recording at the parameters scaled by scale.
func runRecording(t *testing.T, pr *gradsolve.Problem, ens *gradsolve.Ensemble, o gradsolve.Options, name string, scale float64) recRun {
	t.Helper()
	o.Engine = name
	rec, err := gradsolve.Record(context.Background(), pr, ens, &o)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if rec.Result.Engine != name {
		t.Fatalf("recorded on %s, want %s", rec.Result.Engine, name)
	}
	r := recRun{res: rec.Result}
	finite := func(v []float64) []float64 {
		w := append([]float64(nil), v...)
		for i, x := range w {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				w[i] = 0
			}
		}
		return w
	}
	if r.g, err = rec.Gradient(context.Background(), gradsolve.Cotangents{Y: finite(r.res.Y), Saved: finite(r.res.Saved)}); err != nil {
		t.Fatalf("%s: gradient: %v", name, err)
	}
	p := append([]float64(nil), ens.P...)
	for i := range p {
		p[i] *= scale
	}
	if r.replay, err = rec.Replay(context.Background(), &gradsolve.Point{P: p}); err != nil {
		t.Fatalf("%s: replay: %v", name, err)
	}
	return r
}

// sameRecordings requires got's recording, replay and gradient to be
// want's bit for bit.
func sameRecordings(t *testing.T, what string, got, want recRun) {
	t.Helper()
	sameResults(t, what+": record", got.res, want.res)
	sameResults(t, what+": replay", got.replay, want.replay)
	testutil.CheckBits(t, what+": dL/dy0", got.g.Y0, want.g.Y0)
	testutil.CheckBits(t, what+": dL/dp", got.g.P, want.g.P)
}
