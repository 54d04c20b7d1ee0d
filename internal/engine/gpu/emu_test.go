package gpu_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
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

// The engine on the emulated device, through the front end
// (gradsolve.Solve with Options.Engine naming it): batches of five, and
// chunks of 1, 7 and as many as fit (the whole batch), against cpu-erk
// bit for bit. The engines rank below every real one: the router never
// picks them.
var chunkEngines = map[string]gpu.Config{
	"emu-test-chunk1": {Priority: -20, Batch: 5, Chunk: 1},
	"emu-test-chunk7": {Priority: -20, Batch: 16, Chunk: 7},
	"emu-test-chunkn": {Priority: -20},
}

// stopAfter is an emulated engine whose device sets the run's stop flag
// once its first launch is done: a cancellation amid a batch.
var stopAfter = gpu.New("emu-test-stop", &stoppingBackend{Emulated: &gpu.Emulated{}}, gpu.Config{Priority: -20, Batch: 12, Chunk: 4})

func init() {
	for name, cfg := range chunkEngines {
		engine.Register(gpu.NewEmulated(name, cfg))
	}
	engine.Register(stopAfter)
}

type stoppingBackend struct{ *gpu.Emulated }

func (b *stoppingBackend) Open(n int) (gpu.Device, error) {
	d, err := b.Emulated.Open(n)
	return stoppingDevice{d}, err
}

type stoppingDevice struct{ gpu.Device }

func (d stoppingDevice) Load(src *emitcuda.Source) (gpu.Module, error) {
	m, err := d.Device.Load(src)
	return stoppingModule{m}, err
}

type stoppingModule struct{ gpu.Module }

func (m stoppingModule) Run(k gpu.Kernel, s *gpu.Settings, b *gpu.Batch, chunk int, stop *atomic.Bool) (int, error) {
	done, err := m.Module.Run(k, s, b.Slice(0, min(chunk, b.N)), chunk, stop)
	if err != nil {
		return done, err
	}
	stop.Store(true)
	return done, nil
}

func lorenz(t *testing.T) *gradsolve.Problem {
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

// varied is an ensemble of n Lorenz trajectories with their own
// parameters, initial states, spans (every fourth backwards) and save
// times, one of them too long for the step budget of the tests.
func varied(pr *gradsolve.Problem, n int) *gradsolve.Ensemble {
	rng := rand.New(rand.NewPCG(3, 17))
	e := &gradsolve.Ensemble{N: n, SavePerTrajectory: true}
	for i := range n {
		for j := range pr.NumParams {
			e.P = append(e.P, pr.P[j]*(1+0.2*(rng.Float64()-0.5)))
		}
		for d := range pr.Dim {
			e.Y0 = append(e.Y0, pr.Y0[d]*(1+0.1*(rng.Float64()-0.5)))
		}
		t0, t1 := 0.0, 0.5+rng.Float64()
		if i == 3 {
			t1 = 40
		}
		if i%4 == 1 {
			t0, t1 = t1, t0
		}
		e.T0, e.T1 = append(e.T0, t0), append(e.T1, t1)
		e.Save = append(e.Save, t0, t0+0.3*(t1-t0), t1)
	}
	return e
}

// sameResults checks every output of got against want, bit for bit.
func sameResults(t *testing.T, what string, got, want *gradsolve.Result) {
	t.Helper()
	for _, c := range []struct {
		name string
		g, w []float64
	}{{"Y", got.Y, want.Y}, {"T", got.T, want.T}, {"Saved", got.Saved, want.Saved}, {"S", got.S, want.S}, {"SavedS", got.SavedS, want.SavedS}} {
		testutil.CheckBits(t, what+": "+c.name, c.g, c.w)
	}
	for i := range want.Status {
		if got.Status[i] != want.Status[i] || got.Stats[i] != want.Stats[i] {
			t.Errorf("%s: trajectory %d: %v %+v, want %v %+v", what, i, got.Status[i], got.Stats[i], want.Status[i], want.Stats[i])
		}
	}
}

func solve(t *testing.T, pr *gradsolve.Problem, ens *gradsolve.Ensemble, o gradsolve.Options) *gradsolve.Result {
	t.Helper()
	res, err := gradsolve.Solve(context.Background(), pr, ens, &o)
	if err != nil {
		t.Fatalf("%s: %v", o.Engine, err)
	}
	if res.Engine != o.Engine {
		t.Fatalf("ran on %s, want %s", res.Engine, o.Engine)
	}
	return res
}

// TestEmulatedChunks: the emulated engine's results through
// gradsolve.Solve are cpu-erk's bit for bit — forward with per
// trajectory save times, sensitivities with and without the columns in
// the error norm, a step budget that stops one trajectory — whatever
// the chunk of a launch (1, 7, the batch) and the batch.
func TestEmulatedChunks(t *testing.T) {
	e := engine.Lookup("emu-test-chunk1").(engine.Availability)
	if err := e.Available(); err != nil {
		t.Skipf("the emulated device cannot run here: %v", err)
	}
	pr := lorenz(t)
	const n = 23
	ens := varied(pr, n)
	wrt := []gradsolve.Wrt{gradsolve.Param(1), gradsolve.InitialValue(2)}
	for _, c := range []struct {
		name string
		o    gradsolve.Options
	}{
		{"forward", gradsolve.Options{MaxSteps: 500}},
		{"forward DP8 per-component tolerances", gradsolve.Options{Method: method.DP8, MaxSteps: 300,
			RTolVec: []float64{1e-8, 1e-7, 1e-9}, ATolVec: []float64{1e-10, 1e-9, 1e-10}, HMax: 0.05}},
		{"sensitivities", gradsolve.Options{MaxSteps: 500, Sens: &gradsolve.Sensitivity{Wrt: wrt}}},
		{"sensitivities in the norm", gradsolve.Options{Method: method.Vern7, MaxSteps: 500, Sens: &gradsolve.Sensitivity{Wrt: wrt, ErrorTest: true}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := c.o
			o.Engine = "cpu-erk"
			want := solve(t, pr, ens, o)
			if want.Status[3] != gradsolve.MaxStepsReached {
				t.Fatalf("trajectory 3 is %v on cpu-erk: want it stopped by the budget", want.Status[3])
			}
			for name := range chunkEngines {
				o.Engine = name
				got := solve(t, pr, ens, o)
				sameResults(t, fmt.Sprintf("%s on %s", c.name, name), got, want)
				if got.Workers != 1 {
					t.Errorf("%s: %d workers: want one per device", name, got.Workers)
				}
			}
		})
	}
}

// TestEmulatedStop: a run stopped amid a batch ends the trajectories
// launched with cpu-erk's bits and the others Cancelled at t0.
func TestEmulatedStop(t *testing.T) {
	if err := stopAfter.Available(); err != nil {
		t.Skipf("the emulated device cannot run here: %v", err)
	}
	pr := lorenz(t)
	ens := varied(pr, 10)
	want := solve(t, pr, ens, gradsolve.Options{Engine: "cpu-erk", MaxSteps: 500})
	got := solve(t, pr, ens, gradsolve.Options{Engine: "emu-test-stop", MaxSteps: 500})
	for i := range ens.N {
		switch {
		case i < 4:
			if got.Status[i] != want.Status[i] || !testutil.IdenticalBits(got.Row(i), want.Row(i)) {
				t.Errorf("trajectory %d of the first launch: %v %v, want %v %v", i, got.Status[i], got.Row(i), want.Status[i], want.Row(i))
			}
		case got.Status[i] != gradsolve.Cancelled || got.T[i] != ens.T0[i] || !testutil.IdenticalBits(got.Row(i), ens.Y0[3*i:3*i+3]):
			t.Errorf("trajectory %d after the stop: %v at T = %v, y %v; want Cancelled at t0 = %v with y0", i, got.Status[i], got.T[i], got.Row(i), ens.T0[i])
		}
	}
}
