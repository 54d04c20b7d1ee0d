package gpu_test

import (
	"fmt"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/engine"
	"github.com/gradsolve/gradsolve/internal/engine/gpu"
	"github.com/gradsolve/gradsolve/method"
)

// TestEmulatedERKRecordGradient: the explicit methods' record and
// adjoint kernels through the engine (gradsolve.Record, then
// Recording.Gradient and Replay) give cpu-erk's bits — the recorded
// results, the gradients of Σ y²/2 over the final and saved states, a
// replay at other parameters — for Lorenz and the halo orbit with save
// times, whatever the chunk (1, 7, the batch), with meshes longer than
// the first launch's room (re-run with more) and a checkpointed
// recording (reversed on cpu-erk's replayer).
func TestEmulatedERKRecordGradient(t *testing.T) {
	e := engine.Lookup("emu-test-chunk1").(engine.Availability)
	if err := e.Available(); err != nil {
		t.Skipf("the emulated device cannot run here: %v", err)
	}
	lz, halo := lorenz(t), exampleProblem(t, "halo.ode")
	const n = 13
	for _, c := range []struct {
		name    string
		pr      *gradsolve.Problem
		ens     *gradsolve.Ensemble
		o       gradsolve.Options
		longest int // a mesh at least this long
	}{
		{"lorenz Tsit5", lz, varied(lz, n), gradsolve.Options{Method: method.Tsit5, MaxSteps: 400}, gpu.FirstMeshCap + 1},
		{"lorenz Vern7 tight", lz, varied(lz, n), gradsolve.Options{Method: method.Vern7, MaxSteps: 600, RTol: 1e-9, ATol: 1e-11}, gpu.FirstMeshCap + 1},
		{"lorenz DP5 checkpointed", lz, varied(lz, n), gradsolve.Options{Method: method.DP5, MaxSteps: 400, Checkpoint: 4}, 0},
		{"halo DP8", halo, stiffEnsemble(halo, n, halo.T1-halo.T0), gradsolve.Options{Method: method.DP8, MaxSteps: 500, RTol: 1e-8, ATol: 1e-10}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := func(name string) recRun { return runRecording(t, c.pr, c.ens, c.o, name, 1.001) }
			want := run("cpu-erk")
			ok, longest := 0, 0
			for i := range n {
				if want.res.Status[i] == gradsolve.Success {
					ok++
				}
				longest = max(longest, want.res.Stats[i].Accepted)
			}
			if ok < n/2 {
				t.Fatalf("cpu-erk: %d of %d successful: want most", ok, n)
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
