package gpu_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/cuda"
	"github.com/gradsolve/gradsolve/internal/engine"
	"github.com/gradsolve/gradsolve/internal/engine/gpu"
	"github.com/gradsolve/gradsolve/sym/emitcuda"
)

// posingBackend is the emulated device posing as a real one: it asks
// for the self-test (gpu.SelfTester), and where corrupt is set its
// launches flip the last bit of one value of one trajectory's results,
// as a device whose arithmetic departs from the CPU's by one rounding
// would (corruptMesh: of a record kernel's meshes; corruptGrad: of an
// adjoint kernel's gradients).
type posingBackend struct {
	*gpu.Emulated
	corrupt     func(b *gpu.Batch)
	corruptMesh func(m *gpu.Meshes)
	corruptGrad func(a *gpu.AdjBatch, call int) // call: 1 for the backend's first adjoint launch, …
	adjoints    int
}

func (p *posingBackend) SelfTest() bool { return true }

func (p *posingBackend) Open(n int) (gpu.Device, error) {
	d, err := p.Emulated.Open(n)
	return posingDevice{d, p}, err
}

type posingDevice struct {
	gpu.Device
	p *posingBackend
}

func (d posingDevice) Load(src *emitcuda.Source) (gpu.Module, error) {
	m, err := d.Device.Load(src)
	if err != nil {
		return nil, err
	}
	return posingModule{m.(gpu.Recorder), d.p}, nil
}

type posingModule struct {
	gpu.Recorder
	p *posingBackend
}

func (m posingModule) Run(k gpu.Kernel, s *gpu.Settings, b *gpu.Batch, chunk int, stop *atomic.Bool) (int, error) {
	done, err := m.Recorder.Run(k, s, b, chunk, stop)
	if err == nil && m.p.corrupt != nil {
		m.p.corrupt(b)
	}
	return done, err
}

func (m posingModule) Record(k gpu.Kernel, s *gpu.Settings, b *gpu.Batch, ms *gpu.Meshes, chunk int, stop *atomic.Bool) (int, error) {
	done, err := m.Recorder.Record(k, s, b, ms, chunk, stop)
	if err == nil && m.p.corruptMesh != nil {
		m.p.corruptMesh(ms)
	}
	return done, err
}

func (m posingModule) Adjoint(k gpu.Kernel, s *gpu.Settings, a *gpu.AdjBatch, chunk int, stop *atomic.Bool) (int, error) {
	done, err := m.Recorder.Adjoint(k, s, a, chunk, stop)
	m.p.adjoints++
	if err == nil && m.p.corruptGrad != nil {
		m.p.corruptGrad(a, m.p.adjoints)
	}
	return done, err
}

// flip flips the last bit of x.
func flip(x *float64) { *x = math.Float64frombits(math.Float64bits(*x) ^ 1) }

// selfBad is an engine on a posing device whose results for the
// self-test's trajectory 2 (a batch of one: the self-test solves one
// trajectory at a time) differ from cpu-erk's by one bit, at a priority
// above every other engine: the router must pass it over, naming why.
var selfBadRuns atomic.Int64

var selfBad = gpu.New("emu-test-selfbad", &posingBackend{Emulated: &gpu.Emulated{}, corrupt: func(b *gpu.Batch) {
	if selfBadRuns.Add(1) == 3 {
		flip(&b.Y[0])
	}
}}, gpu.Config{Priority: 100})

func init() { engine.Register(selfBad) }

// TestSelfTest: the self-test of a device posing as real passes where
// its results are the emulation's (cpu-erk's and cpu-ros's bits), and
// fails, with the reason, where one bit of one trajectory's final state
// or saved states differs, or a counter (of an explicit or a
// Rosenbrock kernel); the router then falls back to the CPU and names the
// reason in Result.EngineReason. GRADSOLVE_CUDA_SELFTEST=off skips the
// test (and trusts the device).
func TestSelfTest(t *testing.T) {
	if _, err := (&gpu.Emulated{}).Devices(); err != nil {
		t.Skipf("the emulated device cannot run here: %v", err)
	}
	t.Run("good", func(t *testing.T) {
		e := gpu.New("selftest-good", &posingBackend{Emulated: &gpu.Emulated{}}, gpu.Config{})
		if err := e.Available(); err != nil {
			t.Fatalf("Available() = %v on a device with the emulation's bits", err)
		}
	})
	for _, c := range []struct {
		name        string
		corrupt     func(b *gpu.Batch)
		want        string
		corruptMesh func(m *gpu.Meshes)
		corruptGrad func(a *gpu.AdjBatch, call int)
	}{
		{"final state", func(b *gpu.Batch) { flip(&b.Y[b.Dim-1]) },
			"unavailable: self-test on device 0 failed: Tsit5 forward job: trajectory 0's y differs from cpu-erk's (component 2: ", nil, nil},
		{"sensitivity column", func(b *gpu.Batch) {
			if b.Dim > 3 {
				flip(&b.Saved[len(b.Saved)-1])
			}
		}, "unavailable: self-test on device 0 failed: Tsit5 sensitivities job: trajectory 0's saved states differ", nil, nil},
		{"Rosenbrock counter", func(b *gpu.Batch) {
			if b.JacEvals[0] > 0 {
				b.LUs[0]++
			}
		}, "unavailable: self-test on device 0 failed: Rodas5P forward job: trajectory 0's statistics are ", nil, nil},
		{"counter", func(b *gpu.Batch) { b.FEvals[0]++ },
			"unavailable: self-test on device 0 failed: Tsit5 forward job: trajectory 0's statistics are ", nil, nil},
		// A recorded state of the mesh (its second row: the first is
		// y0, copied in), of an explicit and of a Rosenbrock record
		// kernel; the Rosenbrock kernels run after the explicit ones.
		{"mesh state", nil, "unavailable: self-test on device 0 failed: Tsit5 record job: trajectory 0's mesh states differ from cpu-erk's",
			func(m *gpu.Meshes) {
				if m.Steps[0] > 0 {
					flip(&m.Y[m.Dim])
				}
			}, nil},
		// A gradient of the explicit adjoint kernel (the first adjoint
		// launch) and of the Rosenbrock one (the second).
		{"gradient", nil, "unavailable: self-test on device 0 failed: Tsit5 record job: trajectory 0's gradient values differ from cpu-erk's",
			nil, func(a *gpu.AdjBatch, call int) { flip(&a.GP[0]) }},
		{"Rosenbrock gradient", nil, "unavailable: self-test on device 0 failed: Rodas5P record job: trajectory 0's gradient values differ from cpu-ros's",
			nil, func(a *gpu.AdjBatch, call int) {
				if call == 2 {
					flip(&a.GY0[1])
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			bad := func() *posingBackend {
				return &posingBackend{Emulated: &gpu.Emulated{}, corrupt: c.corrupt, corruptMesh: c.corruptMesh, corruptGrad: c.corruptGrad}
			}
			e := gpu.New("selftest-bad", bad(), gpu.Config{})
			err := e.Available()
			if err == nil || !errors.Is(err, cuda.ErrUnavailable) || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("Available() = %v; want %q…", err, c.want)
			}
			t.Setenv(gpu.SelfTestEnv, "off")
			e = gpu.New("selftest-bad", bad(), gpu.Config{})
			if err := e.Available(); err != nil {
				t.Errorf("with %s=off: Available() = %v; want nil (no self-test)", gpu.SelfTestEnv, err)
			}
		})
	}
	t.Run("router", func(t *testing.T) {
		pr := lorenz(t)
		ens := varied(pr, 4)
		res, err := gradsolve.Solve(context.Background(), pr, ens, &gradsolve.Options{MaxSteps: 500})
		if err != nil {
			t.Fatal(err)
		}
		const want = "emu-test-selfbad: unavailable: self-test on device 0 failed: Tsit5 forward job: trajectory 2's y differs from cpu-erk's (component 0: "
		if strings.HasPrefix(res.Engine, "emu-test") || !strings.Contains(res.EngineReason, want) {
			t.Errorf("engine %s, reason %q: want the CPU, passing over %q…", res.Engine, res.EngineReason, want)
		}
		_, err = gradsolve.Solve(context.Background(), pr, ens, &gradsolve.Options{Engine: "emu-test-selfbad"})
		if err == nil || !strings.Contains(err.Error(), "self-test on device 0 failed") {
			t.Errorf("named, the engine that failed its self-test: %v", err)
		}
	})
}
