package gpu

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/internal/engine"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/ode"
)

// MinChunk is the smallest chunk the engine splits a batch into so that
// its two streams overlap copies with kernels: a batch of fewer than
// 2·MinChunk trajectories is launched whole (where it fits).
const MinChunk = 1 << 14

// plan is the engine's plan of one job: the module loaded on the
// device, the kernel and the launch's settings.
type plan struct {
	e      *Engine
	spec   *engine.Spec
	dev    Device
	mod    Module
	kernel Kernel
	dim    int
	set    Settings
	// A Record job's: the module's record and adjoint kernels.
	rec     Recorder
	adjoint Kernel
}

// Controller returns the controller the kernels run.
func (pl *plan) Controller() control.PI { return pl.set.Controller }

// MaxWorkers returns 1: one worker per device, whose batches fill it.
func (pl *plan) MaxWorkers() int { return 1 }

// NewSolver returns the worker's solver: a batch of Lanes()
// trajectories, the ensemble's size at most.
func (pl *plan) NewSolver() (engine.Solver, error) {
	L := pl.e.cfg.Batch
	if L <= 0 {
		L = DefaultBatch
	}
	if n := pl.spec.N; n > 0 {
		L = min(L, n)
	}
	return &Solver{pl: pl, L: L, trs: make([]*ivp.Trajectory, L), outs: make([]*ivp.Output, L)}, nil
}

// Solver is the engine's worker: it takes a batch of trajectories from
// the front end, packs their inputs, runs the kernel on the batch (in
// chunks of the device's memory) and writes each trajectory's Output as
// cpu-erk's Solver would: the final state, the saved states, the time
// reached, the last step tried, the status and the statistics (with
// sensitivities, of the augmented state: engine.Solver's layout). It is
// an engine.LaneSolver of Lanes() trajectories and an
// engine.FailingSolver: a failure of the device ends the run.
type Solver struct {
	pl    *plan
	L     int
	chunk int
	b     *Batch
	trs   []*ivp.Trajectory
	outs  []*ivp.Output
	one   oneSource
	err   error
	// A Record job's meshes: row l of the batch is row meshRow[l] of
	// meshOf[l] (the first launch's, or a re-run's with more room).
	meshOf  []*Meshes
	meshRow []int
}

// Lanes returns the batch size.
func (s *Solver) Lanes() int { return s.L }

// Err returns the first failure of the device, or nil.
func (s *Solver) Err() error { return s.err }

// Solve solves one trajectory: a batch of one.
func (s *Solver) Solve(tr *ivp.Trajectory, out *ivp.Output, stop *atomic.Bool) {
	s.one = oneSource{tr: tr, out: out}
	s.SolveLanes(&s.one, stop)
}

// oneSource hands out one trajectory.
type oneSource struct {
	tr    *ivp.Trajectory
	out   *ivp.Output
	given bool
}

func (o *oneSource) Next(int) (*ivp.Trajectory, *ivp.Output, bool) {
	if o.given {
		return nil, nil, false
	}
	o.given = true
	return o.tr, o.out, true
}

func (o *oneSource) Done(int) {}

// prepare allocates the batch for trajectories of k save times and
// sizes the chunk.
func (s *Solver) prepare(k int) error {
	pl := s.pl
	np := pl.spec.Problem.NumParams
	s.b = NewBatch(s.L, pl.kernel.Dim, np, k)
	s.chunk = pl.e.cfg.Chunk
	if s.chunk <= 0 {
		mem, err := pl.dev.Memory()
		if err != nil {
			return err
		}
		if s.chunk = chunkOf(mem, bytesPer(pl.kernel.Dim, np, k), s.L); s.chunk < 1 {
			return fmt.Errorf("%s: one trajectory (%d bytes of inputs and outputs) does not fit in the device memory the engine may use (%d bytes)",
				pl.spec.Name(), bytesPer(pl.kernel.Dim, np, k), mem)
		}
	}
	return nil
}

// SolveLanes runs batches of up to Lanes() trajectories from src until
// it has no more, or stop is set, or the device fails (Err; the
// trajectories of that batch end Cancelled).
func (s *Solver) SolveLanes(src ivp.LaneSource, stop *atomic.Bool) {
	pl := s.pl
	dim, np := pl.kernel.Dim, pl.spec.Problem.NumParams
	for s.err == nil && !stop.Load() {
		n := 0
		for n < s.L {
			tr, out, ok := src.Next(n)
			if !ok {
				break
			}
			s.trs[n], s.outs[n] = tr, out
			k := len(tr.Save)
			if s.b == nil || s.b.K != k {
				if n > 0 || s.b != nil && s.b.K != k {
					// One solve's trajectories share K; a batch of
					// mixed K is a caller's error.
					s.fail(fmt.Errorf("gpu: trajectories of %d and %d save times in one solve", s.b.K, k))
				} else if err := s.prepare(k); err != nil {
					s.fail(err)
				}
			}
			if s.err == nil {
				b := s.b
				b.T0[n], b.T1[n] = tr.T0, tr.T1
				copy(b.Y0[n*dim:(n+1)*dim], tr.Y0)
				copy(b.P[n*np:(n+1)*np], tr.P)
				copy(b.Save[n*k:(n+1)*k], tr.Save)
			}
			n++
		}
		if n == 0 {
			return
		}
		done := 0
		if s.err == nil {
			var err error
			if pl.rec != nil {
				done, err = s.record(s.b.Slice(0, n), stop)
			} else {
				done, err = pl.mod.Run(pl.kernel, &pl.set, s.b.Slice(0, n), s.chunk, stop)
			}
			if err != nil {
				s.fail(err)
				done = 0
			}
		}
		for l := range n {
			if l < done {
				s.write(l)
			} else {
				cancelled(s.trs[l], s.outs[l])
			}
			s.trs[l], s.outs[l] = nil, nil
			src.Done(l)
		}
		if n < s.L {
			return
		}
	}
}

// fail keeps the first error.
func (s *Solver) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// write stores trajectory l's results from the batch into its Output.
func (s *Solver) write(l int) {
	b, out := s.b, s.outs[l]
	d, k := b.Dim, b.K
	copy(out.Y, b.Y[l*d:(l+1)*d])
	copy(out.Saved, b.Saved[l*k*d:(l+1)*k*d])
	out.T, out.H = b.T[l], b.H[l]
	out.Status = ode.Status(b.Status[l])
	out.Stats = ode.Stats{Accepted: int(b.Accepted[l]), Rejected: int(b.Rejected[l]), FEvals: int(b.FEvals[l])}
	if s.pl.kernel.Family == ROS {
		out.Stats.JacEvals, out.Stats.LUs = int(b.JacEvals[l]), int(b.LUs[l])
	}
	if s.pl.rec != nil && out.Mesh != nil {
		s.writeMesh(l, out)
	}
}

// cancelled ends a trajectory that was not launched: Cancelled at t0,
// with its initial state and no saved state.
func cancelled(tr *ivp.Trajectory, out *ivp.Output) {
	copy(out.Y, tr.Y0)
	for i := range out.Saved {
		out.Saved[i] = math.NaN()
	}
	out.T, out.H = tr.T0, 0
	out.Status = ode.Cancelled
	out.Stats = ode.Stats{}
}
