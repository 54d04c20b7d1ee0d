package gradsolve

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/gradsolve/gradsolve/ensemble"
	"github.com/gradsolve/gradsolve/internal/engine"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/router"
)

// Recording is an ensemble solve together with every trajectory's
// accepted steps (its mesh) and the states at the start of each step.
// It differentiates what the solve returned by the reverse replay: the
// discrete adjoint of the Runge–Kutta steps on the recorded mesh, with
// the step sizes held fixed — the exact gradient of the numbers Solve
// returns, the same derivative forward sensitivities give.
//
// The mesh belongs to the recording point (its parameters and initial
// states). Replay moves to other values with the mesh held fixed: the
// gradient is then exact for the replayed map, which drifts from what
// an adaptive solve at the new values would do as the values move away.
// Shift reports how far they have moved; record again (Record) when it
// grows large (a few percent is a common rule).
//
// A Recording is not safe for concurrent use.
type Recording struct {
	// Result is the solve at the current point: the recording solve, or
	// the last Replay.
	Result *Result

	prob   *Problem
	plan   engine.Plan // the recording engine's plan: its replayers
	atol   []float64   // the recording's absolute tolerances (Shift's floors)
	in     *inputs
	meshes []*ivp.Mesh
	y0, p  []float64 // current point, N×Dim and N×m
	y0Rec  []float64 // recording point
	pRec   []float64
	opts   Options
	// y0FromP: the current initial states are y0(p) of Problem.Initial
	// (evaluated by initial), so Replay moves them with the parameters
	// and Gradient adds (∂y0/∂p)ᵀ·∂L/∂y0 to ∂L/∂p.
	y0FromP bool
	initial ode.InitialFunc
	// replayers are the workers' replayers, made by the first walk that
	// needs them and kept (runJobs).
	replayers []engine.Replayer
	// stale: a Replay failed after it may have begun to overwrite the
	// meshes' states (a replay writes the states of its point into
	// them, and Gradient's reverse sweep reads them), so they may not
	// be the current point's; Gradient replays the current point
	// forward first.
	stale bool
}

// Record solves the ensemble as Solve does (the same accepted steps,
// bitwise the same results) and keeps each trajectory's mesh. The
// problem must have a cotangent program (Problem.Programs with VJP) for
// Gradient; every problem compiled from formulas has one. Memory: the
// states at every accepted step, (steps+1)·Dim values per trajectory,
// plus two numbers per step; with Options.Checkpoint = c ≥ 2, the
// states and times at every c-th step only, (⌊steps/c⌋+1)·(Dim+1)
// values, plus one per step, and the reverse sweep recomputes the
// others (bitwise the same gradient).
func Record(ctx context.Context, prob *Problem, ens *Ensemble, opts *Options) (*Recording, error) {
	if opts != nil && opts.Checkpoint >= 2 && opts.KeepStages {
		return nil, inputErr("Options.Checkpoint = %d with Options.KeepStages: a checkpointed recording keeps no stages (its reverse sweep keeps those of the segment it recomputes); set one or the other", opts.Checkpoint)
	}
	r, err := solve(ctx, prob, ens, opts, true)
	if err != nil {
		return nil, err
	}
	n, dim, m := r.res.N, prob.Dim, prob.NumParams
	rec := &Recording{Result: r.res, prob: prob, plan: r.plan, atol: r.num.atol, in: r.in, meshes: r.meshes}
	if opts != nil {
		rec.opts = *opts
	}
	rec.y0, rec.p = expand(r.in.y0, n, dim), expand(r.in.p, n, m)
	rec.y0Rec, rec.pRec = append([]float64(nil), rec.y0...), append([]float64(nil), rec.p...)
	if r.in.y0FromP {
		rec.y0FromP, rec.initial = true, prob.Initial()
	}
	return rec, nil
}

// MeshBytes returns the memory of the recorded meshes, in bytes: the
// times, step sizes and states (and stages, with Options.KeepStages)
// every trajectory's mesh holds, 8 bytes each — what Footprint's
// PerStep counts per step, with the initial states and times. With
// Options.Checkpoint = c ≥ 2 it counts the times and states at every
// c-th step.
func (rec *Recording) MeshBytes() uint64 {
	var b uint64
	for _, ms := range rec.meshes {
		if ms != nil {
			b += ms.Bytes()
		}
	}
	return b
}

// expand returns v as n rows of width (a copy).
func expand(v []float64, n, width int) []float64 {
	if len(v) == n*width {
		return append([]float64(nil), v...)
	}
	out := make([]float64, 0, n*width)
	for range n {
		out = append(out, v...)
	}
	return out
}

// Point is a point to replay at. Each field is nil (keep the current
// values), shared (one row) or per trajectory, as in Ensemble.
//
// Where the recording's initial states came from the parameters
// (Problem.Initial, and no Ensemble.Y0), they follow the parameters: a
// Point with P and without Y0 starts each trajectory from y0(P_i), as a
// solve at P would, and Gradient's ∂L/∂p then includes the path through
// y0(p). A Point with Y0 sets the initial states themselves: from then
// on they are inputs of their own, the replay at a later P keeps them,
// and ∂L/∂p no longer includes ∂y0/∂p (until the next Record).
type Point struct {
	Y0, P []float64
}

// ShiftParamFloor is the smallest scale Shift measures a parameter's
// move against: a parameter recorded at p_rec counts as having the size
// max(|p_rec|, ShiftParamFloor).
//
// A parameter recorded at zero has no size of its own, and the
// tolerances cannot give it one (they are in the units of the state),
// so the floor is absolute. At 1e-8 (about √ε, the size below which a
// double-precision quantity is customarily taken for zero next to an
// O(1) scale, as in finite-difference step rules) a parameter recorded
// at zero that moves by δ reads δ/1e-8: any move beyond 1e-10 reads
// above 1%. That errs on the side of recording again, which is the safe
// side — a term switched off at the recording can bring in dynamics the
// mesh was never chosen for — and costs one solve. A parameter whose
// own size is below 1e-8 (a constant in SI units) is measured against
// 1e-8 and its relative moves read too small: rescale it, or give its
// size to ShiftWith.
const ShiftParamFloor = 1e-8

// Shift returns how far the current point has moved from the recording
// point, each quantity measured against its own size: the largest, over
// trajectories i, parameters j and initial values d, of
//
//	|p_ij − p_ij,rec| / max(|p_ij,rec|, ShiftParamFloor)
//	|y0_id − y0_id,rec| / max(|y0_id,rec|, atol_d)
//
// — the ∞-norm of the componentwise relative change. atol_d is the
// recording's absolute tolerance of component d: the error control that
// chose the mesh does not resolve a component below it, so a state's
// size is never taken smaller. A move of 2% in any one quantity reads
// 0.02, whatever the sizes of the others; a quantity recorded at zero
// is measured against its floor (see ShiftParamFloor). The result is 0
// at the recording point and never NaN.
func (rec *Recording) Shift() float64 {
	s, _ := rec.ShiftWith(nil, nil) // nil floors cannot be malformed
	return s
}

// ShiftWith is Shift with the floors given: pFloor (length NumParams)
// replaces ShiftParamFloor for each parameter and y0Floor (length Dim)
// the absolute tolerances for each initial value; nil keeps the
// default. Give a parameter's typical size as its floor where many
// parameters sit near zero (the weights of a neural right-hand side),
// so that their moves are measured against that size rather than
// against themselves. Floors must be finite and > 0.
func (rec *Recording) ShiftWith(pFloor, y0Floor []float64) (float64, error) {
	n, dim, m := rec.Result.N, rec.prob.Dim, rec.prob.NumParams
	for _, f := range []struct {
		name string
		v    []float64
		want int
		wn   string
	}{{"pFloor", pFloor, m, "NumParams"}, {"y0Floor", y0Floor, dim, "Dim"}} {
		if f.v == nil {
			continue
		}
		if len(f.v) != f.want {
			return 0, inputErr("ShiftWith: %s has length %d: want %s = %d", f.name, len(f.v), f.wn, f.want)
		}
		for k, x := range f.v {
			if !(x > 0) || math.IsInf(x, 0) {
				return 0, inputErr("ShiftWith: %s[%d] = %g: must be finite and > 0", f.name, k, x)
			}
		}
	}
	floor := func(v []float64, k int, def float64) float64 {
		if v != nil {
			return v[k]
		}
		return def
	}
	var worst float64
	for i := range n {
		for j := range m {
			x, xr := rec.p[i*m+j], rec.pRec[i*m+j]
			worst = math.Max(worst, math.Abs(x-xr)/math.Max(math.Abs(xr), floor(pFloor, j, ShiftParamFloor)))
		}
		for d := range dim {
			x, xr := rec.y0[i*dim+d], rec.y0Rec[i*dim+d]
			worst = math.Max(worst, math.Abs(x-xr)/math.Max(math.Abs(xr), floor(y0Floor, d, rec.atol[d])))
		}
	}
	return worst, nil
}

// Replay recomputes every trajectory at the point pt with the recorded
// step sizes and returns the new result (also kept as rec.Result). At
// the recording point it reproduces the recording solve bit for bit.
// Trajectories whose recording failed keep their status and NaN values.
// When it returns an error (a malformed or refused point, a cancelled
// ctx) the recording stays at its current point: Result, Shift and
// Gradient are what they were.
func (rec *Recording) Replay(ctx context.Context, pt *Point) (*Result, error) {
	n, dim, m, K := rec.Result.N, rec.prob.Dim, rec.prob.NumParams, rec.in.k
	// The new point, in locals: a Replay that fails leaves the
	// recording at its current point.
	y0, p, y0FromP := rec.y0, rec.p, rec.y0FromP
	if pt != nil {
		if pt.Y0 != nil {
			if err := checkShape("Point.Y0", pt.Y0, n, dim, "Dim"); err != nil {
				return nil, err
			}
			y0 = expand(pt.Y0, n, dim)
		}
		if pt.P != nil {
			if err := checkShape("Point.P", pt.P, n, m, "NumParams"); err != nil {
				return nil, err
			}
			p = expand(pt.P, n, m)
		}
		switch {
		case pt.Y0 != nil:
			y0FromP = false
		case pt.P != nil && y0FromP:
			var err error
			if y0, _, err = initialStates(rec.prob, p, n, nil); err != nil {
				return nil, err
			}
		}
	}
	old := rec.Result
	res := &Result{Problem: old.Problem, Method: old.Method, Reason: old.Reason, Engine: old.Engine, EngineReason: old.EngineReason, N: n, Dim: dim, K: K,
		Y: make([]float64, n*dim), T: append([]float64(nil), old.T...), Saved: make([]float64, n*K*dim),
		Status: append([]Status(nil), old.Status...), Stats: append([]Stats(nil), old.Stats...),
		Options: old.Options, h: old.h}
	start := time.Now()
	err := rec.forward(ctx, y0, p, res, &res.Workers)
	res.Elapsed = time.Since(start)
	if err != nil {
		rec.stale = true
		return nil, err
	}
	rec.y0, rec.p, rec.y0FromP, rec.Result, rec.stale = y0, p, y0FromP, res, false
	return res, nil
}

// forward replays every trajectory at (y0, p) on its recorded mesh,
// overwriting the mesh's states, and writes the final and saved states
// into res.
func (rec *Recording) forward(ctx context.Context, y0, p []float64, res *Result, workers *int) error {
	dim, m, K := rec.prob.Dim, rec.prob.NumParams, rec.in.k
	return rec.runJobs(ctx, jobs{
		one: func(rp engine.Replayer, i int) {
			rp.Forward(rec.meshes[i], y0[i*dim:(i+1)*dim], p[i*m:(i+1)*m], pick(rec.in.save, i, K),
				res.Y[i*dim:(i+1)*dim], res.Saved[i*K*dim:(i+1)*K*dim])
		},
		fwd: func(i int, j *ivp.ForwardJob) {
			*j = ivp.ForwardJob{Mesh: rec.meshes[i], Y0: y0[i*dim : (i+1)*dim], P: p[i*m : (i+1)*m], Save: pick(rec.in.save, i, K),
				YOut: res.Y[i*dim : (i+1)*dim], Saved: res.Saved[i*K*dim : (i+1)*K*dim]}
		},
		failed: func(i int) {
			fillNaN(res.Y[i*dim : (i+1)*dim])
			fillNaN(res.Saved[i*K*dim : (i+1)*K*dim])
		},
	}, workers)
}

// Cotangents are the derivatives of a scalar loss L with respect to what
// the solve returned: Y (N×Dim, the final states) and Saved (N×K×Dim,
// the states at the save times; nil when the loss does not use them).
type Cotangents struct {
	Y, Saved []float64
}

// Gradient is dL/dθ for each trajectory. Where the initial states are
// computed from the parameters (Problem.Initial, no Ensemble.Y0), P is
// the total derivative, through y0(p) too, and Y0 the derivative with
// respect to the initial state itself.
type Gradient struct {
	// P holds ∂L/∂p, N×m (row i: the parameters of trajectory i; sum
	// the rows for parameters shared by the ensemble). From
	// LossGradient with Options.GradientWrt set, the parameters it does
	// not list are NaN.
	P []float64
	// Y0 holds ∂L/∂y0, N×Dim; NaN, like P, where Options.GradientWrt
	// leaves an initial value out.
	Y0 []float64
	// Status is each trajectory's status in the recording; rows of
	// failed trajectories hold NaN.
	Status []Status
	// Shift is Recording.Shift at the point the gradient was taken.
	Shift float64
	// Elapsed is the wall time of the reverse sweep.
	Elapsed time.Duration
	// Workers is the number of goroutines used.
	Workers int
	// Decision says how LossGradient computed the gradient, on which
	// engine ("cpu-erk" or "cpu-ros": the one that ran, as in
	// Result.Engine), and why (zero for Recording.Gradient, which is
	// always the reverse replay).
	Decision router.Decision
}

// Gradient runs the reverse replay at the current point (the recording
// point, or the last Replay) and returns ∂L/∂p and ∂L/∂y0 for the loss
// whose cotangents are given.
func (rec *Recording) Gradient(ctx context.Context, cot Cotangents) (*Gradient, error) {
	n, dim, m, K := rec.Result.N, rec.prob.Dim, rec.prob.NumParams, rec.in.k
	if err := checkCotangents(cot, n, dim, K); err != nil {
		return nil, err
	}
	if rec.stale {
		// Put the current point's states back into the meshes. The
		// replay is deterministic, so it writes into Result the very
		// numbers Result holds.
		var w int
		if err := rec.forward(ctx, rec.y0, rec.p, rec.Result, &w); err != nil {
			return nil, err
		}
		rec.stale = false
	}
	g := &Gradient{P: make([]float64, n*m), Y0: make([]float64, n*dim), Status: rec.Result.Status, Shift: rec.Shift()}
	start := time.Now()
	job := func(i int, j *ivp.ReverseJob) {
		var cs []float64
		if cot.Saved != nil {
			cs = cot.Saved[i*K*dim : (i+1)*K*dim]
		}
		*j = ivp.ReverseJob{Mesh: rec.meshes[i], P: rec.p[i*m : (i+1)*m], Save: pick(rec.in.save, i, K),
			CotY: cot.Y[i*dim : (i+1)*dim], CotSaved: cs, GY0: g.Y0[i*dim : (i+1)*dim], GP: g.P[i*m : (i+1)*m]}
	}
	err := rec.runJobs(ctx, jobs{
		one: func(rp engine.Replayer, i int) {
			var cs []float64
			if cot.Saved != nil {
				cs = cot.Saved[i*K*dim : (i+1)*K*dim]
			}
			rp.Reverse(rec.meshes[i], rec.p[i*m:(i+1)*m], pick(rec.in.save, i, K), cot.Y[i*dim:(i+1)*dim], cs,
				g.Y0[i*dim:(i+1)*dim], g.P[i*m:(i+1)*m])
		},
		rev: job,
		failed: func(i int) {
			fillNaN(g.Y0[i*dim : (i+1)*dim])
			fillNaN(g.P[i*m : (i+1)*m])
		},
	}, &g.Workers)
	if err == nil && rec.y0FromP {
		rec.addInitialTerm(g)
	}
	g.Elapsed = time.Since(start)
	if err != nil {
		return nil, err
	}
	return g, nil
}

// checkCotangents checks the shapes of cot (Y: N×Dim; Saved: nil or
// N×K×Dim) and that they hold finite numbers.
func checkCotangents(cot Cotangents, n, dim, K int) error {
	if len(cot.Y) != n*dim {
		return inputErr("cotangent Y has length %d: want N·Dim = %d", len(cot.Y), n*dim)
	}
	if cot.Saved != nil && len(cot.Saved) != n*K*dim {
		return inputErr("cotangent Saved has length %d: want N·K·Dim = %d", len(cot.Saved), n*K*dim)
	}
	for _, c := range []struct {
		name string
		v    []float64
	}{{"Y", cot.Y}, {"Saved", cot.Saved}} {
		for k, v := range c.v {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return inputErr("cotangent %s[%d] = %g is not finite", c.name, k, v)
			}
		}
	}
	return nil
}

// jobs is the work of one walk over the recordings: one, for a
// trajectory on a worker's Replayer; rev or fwd, the same as a job for
// a replayer that runs reverse (engine.LaneReplayer) or forward
// (engine.LaneForwarder) jobs in lanes (nil: never in lanes); failed,
// for a trajectory whose recording failed.
type jobs struct {
	one    func(rp engine.Replayer, i int)
	rev    func(i int, j *ivp.ReverseJob)
	fwd    func(i int, j *ivp.ForwardJob)
	failed func(i int)
}

// runJobs does js for every trajectory on the ensemble's workers, each
// with its own Replayer: lane by lane where the replayer runs the jobs
// in lanes (and the meshes keep every state), else one trajectory at a
// time. The replayers are made on
// first use and kept for later walks (a replayer is made for the
// worker count of its walk; its machine code is compiled once).
func (rec *Recording) runJobs(ctx context.Context, js jobs, workers *int) error {
	n := rec.Result.N
	ecfg := ensemble.Config{Workers: rec.opts.Workers, Chunk: rec.opts.Chunk}
	nw := ensemble.Workers(n, ecfg)
	for len(rec.replayers) < nw {
		rp, err := rec.plan.NewReplayer()
		if err != nil {
			return fmt.Errorf("%w: %w", ErrInput, err)
		}
		rec.replayers = append(rec.replayers, rp)
	}
	rps := rec.replayers
	*workers = nw
	// The lane walks read every state of a mesh: a checkpointed
	// recording's walks run on each worker's scalar replayer (every
	// lane replayer is one), with the same bits.
	lanes := rec.opts.Checkpoint <= 1
	err := ensemble.RunQueue(ctx, n, ecfg, func(w int, q *ensemble.Queue, stop *atomic.Bool) {
		if lr, ok := rps[w].(engine.LaneReplayer); ok && js.rev != nil && lanes {
			lr.ReverseLanes(newJobSource(rec, q, lr.Lanes(), js.rev, js.failed), stop)
			return
		}
		if lf, ok := rps[w].(engine.LaneForwarder); ok && js.fwd != nil && lanes {
			lf.ForwardLanes(newJobSource(rec, q, lf.Lanes(), js.fwd, js.failed), stop)
			return
		}
		for i, ok := q.Next(); ok; i, ok = q.Next() {
			if rec.Result.Status[i] != ode.Success {
				js.failed(i)
			} else {
				js.one(rps[w], i)
			}
			q.Done()
		}
	})
	var pe *ensemble.PanicError
	if errors.As(err, &pe) {
		return fmt.Errorf("gradsolve: %s: a derivative program panicked on trajectory %d: %v", nameOf(rec.prob), pe.Index, pe.Value)
	}
	if err != nil {
		return err
	}
	for _, rp := range rps[:nw] {
		if fr, ok := rp.(engine.FailingReplayer); ok {
			if err := fr.Err(); err != nil {
				return fmt.Errorf("gradsolve: engine %s: %w", rec.Result.Engine, err)
			}
		}
	}
	return nil
}

// jobSource hands a lane replayer's worker the jobs (forward or
// reverse: ivp.ForwardJob, ivp.ReverseJob) of its queue: the successful
// recordings, each described by job into the lane's slot (the others
// are failed at once). It is an ivp.ForwardSource or an
// ivp.ReverseSource.
type jobSource[J any] struct {
	rec    *Recording
	q      *ensemble.Queue
	jobs   []J
	job    func(i int, j *J)
	failed func(i int)
}

func newJobSource[J any](rec *Recording, q *ensemble.Queue, lanes int, job func(int, *J), failed func(int)) *jobSource[J] {
	return &jobSource[J]{rec: rec, q: q, jobs: make([]J, lanes), job: job, failed: failed}
}

func (s *jobSource[J]) Next(l int) (*J, bool) {
	for {
		i, ok := s.q.Next()
		if !ok {
			return nil, false
		}
		if s.rec.Result.Status[i] != ode.Success {
			s.failed(i)
			s.q.Done()
			continue
		}
		s.job(i, &s.jobs[l])
		return &s.jobs[l], true
	}
}

func (s *jobSource[J]) Done(int) { s.q.Done() }

func fillNaN(v []float64) {
	for i := range v {
		v[i] = math.NaN()
	}
}

// addInitialTerm adds the path through the initial states y0(p) to the
// parameter gradient of each successful trajectory:
//
//	∂L/∂p_j += Σ_d ∂y0_d/∂p_j · ∂L/∂y0_d
func (rec *Recording) addInitialTerm(g *Gradient) {
	n, dim, m := rec.Result.N, rec.prob.Dim, rec.prob.NumParams
	y0, jac := make([]float64, dim), make([]float64, dim*m)
	for i := range n {
		if g.Status[i] != Success {
			continue
		}
		rec.initial(rec.p[i*m:(i+1)*m], y0, jac)
		gy0 := g.Y0[i*dim : (i+1)*dim]
		for j := range m {
			s := g.P[i*m+j]
			for d, w := range gy0 {
				s += jac[d*m+j] * w
			}
			g.P[i*m+j] = s
		}
	}
}
