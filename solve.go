package gradsolve

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/ensemble"
	"github.com/gradsolve/gradsolve/internal/engine"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/router"
)

// Default tolerances, used when Options.RTol and Options.ATol are both
// zero (the JAX gradsolve library's defaults).
const (
	DefaultRTol = 1e-6
	DefaultATol = 1e-9
	// DefaultMaxSteps is the step budget per trajectory (accepted plus
	// rejected attempts) when Options.MaxSteps is zero.
	DefaultMaxSteps = 100_000
	// MinRTol is the smallest relative tolerance accepted: below about
	// ten units of roundoff no method can meet the tolerance and steps
	// shrink until they underflow.
	MinRTol = 10 * 0x1p-52
	// DefaultRTol32 and DefaultATol32 are the tolerances of a float32
	// solve (Options.Precision Float32) when RTol and ATol are both
	// zero: float32 resolves about 6e-8 relative, so float64's defaults
	// could not be met.
	DefaultRTol32 = 1e-5
	DefaultATol32 = 1e-8
	// MinRTol32 is the smallest relative tolerance a float32 solve
	// accepts: ten units of float32's roundoff.
	MinRTol32 = 10 * 0x1p-23
)

// Ensemble says which trajectories to solve. Each input is either shared
// by all N trajectories or given per trajectory; its length tells which.
// A nil input takes the Problem's default.
type Ensemble struct {
	// N is the number of trajectories; it must be ≥ 1.
	N int
	// Y0 holds the initial states: length Dim (shared) or N·Dim
	// (row i is trajectory i). Nil means Problem.Y0.
	Y0 []float64
	// P holds the parameters: length m (shared) or N·m. Nil means
	// Problem.P. Empty when the problem has no parameters.
	P []float64
	// T0 and T1 hold the time spans: length 1 (shared) or N. Nil means
	// Problem.T0 and Problem.T1. T1 < T0 integrates backwards; T1 = T0
	// is an error.
	T0, T1 []float64
	// Save lists times at which to record the state, ordered in the
	// direction of integration and inside each trajectory's span.
	// Length K (shared) or N·K with SavePerTrajectory set.
	Save []float64
	// SavePerTrajectory says Save holds N rows of K times.
	SavePerTrajectory bool
}

// Options control a solve. The zero value is a working configuration:
// Tsit5, rtol 1e-6, atol 1e-9, automatic initial step, no maximum step,
// a budget of 100 000 step attempts, all cores.
type Options struct {
	// Method is the method, of either family: an explicit Runge–Kutta
	// tableau (method.Tsit5, method.DP5, method.Vern7, method.DP8, or
	// a *method.Tableau of one's own) or a linearly implicit
	// Rosenbrock method for stiff problems (method.Rodas5P,
	// method.Rosenbrock23), which needs the problem's Jacobian program
	// (Problem.Programs with JacY). Nil (or a nil tableau) means: the
	// default method of the engine Options.Engine names; else Rodas5P
	// for a problem marked Stiff that offers a Jacobian program; else
	// Tsit5.
	Method method.Method
	// Engine names the engine that runs the solve (one of Engines():
	// "cpu-erk" for explicit Runge–Kutta methods, "cpu-ros" for
	// Rosenbrock methods). Empty lets the router pick: the registered
	// engine of highest priority that runs the method and serves the
	// job. A named engine that does not run the method or cannot serve
	// the job is an error that says why; it is never replaced by
	// another.
	Engine string
	// RTol and ATol are scalar tolerances. Both zero means DefaultRTol
	// and DefaultATol (DefaultRTol32 and DefaultATol32 in float32);
	// otherwise both must be finite and > 0, and RTol ≥ MinRTol
	// (MinRTol32 in float32). Ignored where RTolVec or ATolVec is set.
	RTol, ATol float64
	// RTolVec and ATolVec, when not nil, give per-component tolerances
	// (length Dim, every entry > 0), overriding RTol and ATol.
	RTolVec, ATolVec []float64
	// HMax bounds |h|; 0 means no bound. Negative is an error.
	HMax float64
	// H0 is the first step size; 0 means automatic per trajectory
	// (Hairer, Nørsett & Wanner I, §II.4). Negative is an error.
	H0 float64
	// MaxSteps is the step budget per trajectory (accepted plus
	// rejected attempts); 0 means DefaultMaxSteps. Negative is an error.
	MaxSteps int
	// Controller overrides the step-size controller; nil means
	// control.DefaultPI for the method's order and its QMin/QMax.
	Controller *control.PI
	// Workers is the number of goroutines; 0 means GOMAXPROCS.
	Workers int
	// Chunk is the scheduling granularity; 0 means automatic (see
	// ensemble.Config).
	Chunk int
	// Progress, if not nil, is called now and then with the number of
	// finished trajectories and N, never concurrently.
	Progress func(done, total int)
	// Sens, when set, asks for forward sensitivities (see Sensitivity):
	// Result.S and Result.SavedS.
	Sens *Sensitivity
	// DenseSave computes save times inside a step from a Rosenbrock
	// method's continuous extension (Rodas5P: order 4) instead of one
	// step of the method from the start of the step: no extra
	// evaluations or factorisations. Only for Rosenbrock methods (the
	// explicit ones always re-step); false: re-step.
	DenseSave bool
	// KeepStages makes Record also keep the stages of every accepted
	// step — memory grows from (Dim per step) to (1+s')·Dim per step, s'
	// the stages that carry weight (6 for Tsit5) — so the reverse sweep
	// rebuilds the stage inputs instead of evaluating f again. The
	// gradient is the same; only its cost changes. Off: keep the states
	// alone and recompute the stages on the way back.
	KeepStages bool
	// Checkpoint makes Record (and LossGradient's reverse route) keep
	// each trajectory's state and time only at t0 and at every
	// Checkpoint-th accepted step, c = Checkpoint ≥ 2, instead of at
	// every step; the size of every step is still kept, and the times
	// in between are the solve's sums t + h, formed again. The reverse
	// sweep (Recording.Gradient) recomputes each segment of c steps
	// forward from its checkpoint, with the recorded step sizes, into a
	// scratch of its worker's, and reverses it. The recomputed states
	// are the recorded ones bit for bit, so the gradient and the
	// results are bitwise those of Checkpoint 0, for every c; Replay
	// works as before (it rewrites the checkpoints at the new point).
	//
	// Memory per trajectory: 1 number per step and Dim + 1 per c steps,
	// against Dim + 2 per step; plus, per worker, one segment: c·(Dim+1)
	// numbers (Rosenbrock methods) or at most c·(1 + s·Dim) (explicit
	// methods of s stages: the segment's stage inputs are kept, so that
	// its reversed steps evaluate no f). Time: an explicit method's
	// reverse sweep evaluates f as often as without (each step's
	// stages once, forward, instead of in the reverse sweep); a
	// Rosenbrock method's adds about one step (f, J, the LU, the
	// stages) for every step. The reverse sweep runs on each worker's
	// scalar replayer (the lane engines reverse meshes that keep every
	// state; Result.EngineReason says so), with their bits. 0 or 1:
	// every state (the default). Negative is an error, and so is
	// Checkpoint ≥ 2 with KeepStages. Solve ignores it.
	Checkpoint int
	// Mode chooses how LossGradient differentiates: router.Auto (the
	// zero value) lets the router decide from its cost model,
	// router.Forward and router.Reverse override it.
	Mode router.Mode
	// Precision is the floating-point type of the arithmetic: Float64
	// (the zero value) or Float32. Float32 runs only on an engine that
	// has float32 kernels (the cuda engine: forward and sensitivity jobs
	// of the explicit and Rosenbrock methods, not recordings); the CPU
	// engines compute in float64 alone and refuse it, saying why.
	Precision Precision
	// Device is the GPU the cuda engine runs on (0-based, ≥ 0); the
	// CPU engines ignore it. An index the machine does not have is an
	// error of the cuda engine naming the devices it has.
	Device int
	// GradientWrt lists the quantities LossGradient differentiates by
	// (parameters and initial values). Nil means every parameter and
	// every initial value. Forward mode integrates only these
	// sensitivity columns, and the router's cost model counts them; the
	// entries of Gradient.P and Gradient.Y0 not listed are NaN in either
	// mode. Solve and Record ignore it.
	GradientWrt []Wrt
}

// Precision is the floating-point type of a solve's arithmetic
// (Options.Precision).
type Precision int

const (
	// Float64 computes in IEEE binary64: every engine, the default.
	Float64 Precision = iota
	// Float32 computes in IEEE binary32, on the engines that have
	// float32 code (see Options.Precision).
	Float32
)

// String returns "float64" or "float32".
func (p Precision) String() string {
	switch p {
	case Float64:
		return "float64"
	case Float32:
		return "float32"
	}
	return fmt.Sprintf("Precision(%d)", int(p))
}

// ParsePrecision reads "float64" or "float32".
func ParsePrecision(s string) (Precision, error) {
	for _, p := range []Precision{Float64, Float32} {
		if p.String() == s {
			return p, nil
		}
	}
	return Float64, fmt.Errorf("unknown precision %q: want float64 or float32", s)
}

// Result holds what Solve computed. Arrays are row-major (see the
// package documentation).
type Result struct {
	// Problem and Method name what was solved and how, and Reason says
	// why that method; Engine names the engine that ran ("cpu-erk":
	// explicit Runge–Kutta, "cpu-ros": Rosenbrock) and EngineReason
	// says why that engine.
	Problem, Method, Reason, Engine, EngineReason string
	// N, Dim and K are the number of trajectories, the state dimension
	// and the number of save times per trajectory.
	N, Dim, K int
	// Y holds the final states, N×Dim. On failure a row holds the last
	// accepted state; check Status.
	Y []float64
	// T holds the time each trajectory reached (its t1 on success).
	T []float64
	// Saved holds the states at the save times, N×K×Dim; NaN where a
	// failed trajectory never reached the time.
	Saved []float64
	// NS is the number of sensitivity columns (0 without Options.Sens).
	NS int
	// S holds the sensitivities at the final time, N×Dim×NS:
	// S[(i·Dim + d)·NS + c] = ∂y_d/∂θ_c of trajectory i.
	S []float64
	// SavedS holds the sensitivities at the save times, N×K×Dim×NS.
	SavedS []float64
	// Status and Stats are per trajectory. With sensitivities, FEvals
	// counts evaluations of the augmented system (one f and NS tangents).
	Status []Status
	Stats  []Stats
	// Options are the options as resolved (defaults filled in).
	Options Options
	// Workers is the number of goroutines used.
	Workers int
	// Elapsed is the wall time of the solve.
	Elapsed time.Duration

	h []float64 // last step size tried, for error reports
}

// Row returns the final state of trajectory i (a view into Y).
func (r *Result) Row(i int) []float64 { return r.Y[i*r.Dim : (i+1)*r.Dim] }

// SavedRow returns the state of trajectory i at its k-th save time (a
// view into Saved).
func (r *Result) SavedRow(i, k int) []float64 {
	o := (i*r.K + k) * r.Dim
	return r.Saved[o : o+r.Dim]
}

// Err returns nil if trajectory i succeeded, and a *TrajectoryError
// saying what failed and where otherwise.
func (r *Result) Err(i int) error {
	if r.Status[i] == Success {
		return nil
	}
	return &TrajectoryError{Index: i, Status: r.Status[i], T: r.T[i], H: r.h[i]}
}

// Failed returns the indices of the trajectories that did not succeed.
func (r *Result) Failed() []int {
	var out []int
	for i, s := range r.Status {
		if s != Success {
			out = append(out, i)
		}
	}
	return out
}

// maxJoined is how many trajectory errors Errs lists before summarising.
const maxJoined = 5

// Errs returns nil when every trajectory succeeded; otherwise an error
// that counts the failures and lists the first few.
func (r *Result) Errs() error {
	failed := r.Failed()
	if len(failed) == 0 {
		return nil
	}
	errs := []error{fmt.Errorf("gradsolve: %d of %d trajectories failed", len(failed), r.N)}
	for _, i := range failed[:min(len(failed), maxJoined)] {
		errs = append(errs, r.Err(i))
	}
	if len(failed) > maxJoined {
		errs = append(errs, fmt.Errorf("… and %d more", len(failed)-maxJoined))
	}
	return errors.Join(errs...)
}

// Total returns the statistics summed over all trajectories.
func (r *Result) Total() Stats {
	var s Stats
	for _, x := range r.Stats {
		s.Accepted += x.Accepted
		s.Rejected += x.Rejected
		s.FEvals += x.FEvals
		s.JacEvals += x.JacEvals
		s.LUs += x.LUs
	}
	return s
}

// ErrInput is wrapped by every error Solve returns for bad input.
var ErrInput = errors.New("gradsolve: invalid input")

func inputErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInput}, args...)...)
}

// Solve integrates every trajectory of the ensemble and returns the
// result. It returns an error wrapping ErrInput (and a nil Result) for
// bad input; the error names the argument and the rule broken. It
// returns the partial Result and ctx's error if ctx is cancelled:
// trajectories not finished then have status NotRun or Cancelled.
// Failures of single trajectories are not errors of Solve: they are in
// Result.Status (see Result.Err and Result.Errs).
func Solve(ctx context.Context, prob *Problem, ens *Ensemble, opts *Options) (*Result, error) {
	r, err := solve(ctx, prob, ens, opts, false)
	if r == nil {
		return nil, err
	}
	return r.res, err
}

// solved is what solve computed, with what it was computed from.
type solved struct {
	res    *Result
	in     *inputs
	num    numerics
	meshes []*ivp.Mesh // with record: the accepted steps of each trajectory
	plan   engine.Plan // the engine's plan of the job: a recording's replayers come from it
}

// solve runs the ensemble: it resolves the inputs and the options,
// picks the engine (chooseEngine), lets it make one solver per worker,
// and runs them over the trajectories. Everything that depends on the
// method or the engine happens inside the engine.
func solve(ctx context.Context, prob *Problem, ens *Ensemble, opts *Options, record bool) (*solved, error) {
	if err := prob.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	if ens == nil {
		return nil, inputErr("nil ensemble")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	offers := prob.ProgramSet() // asked once: a problem that does not declare Offers is probed here
	sizes, sizesOK := ensembleSizes(prob, ens, &o, record, offers)
	if sizesOK { // before anything is allocated
		if err := sizes.check(); err != nil {
			return nil, err
		}
	}
	in, err := resolveInputs(prob, ens)
	if err != nil {
		return nil, err
	}
	num, err := resolveOptions(prob, &o)
	if err != nil {
		return nil, err
	}
	job := engine.Forward
	switch {
	case o.Sens != nil && record:
		return nil, inputErr("Options.Sens with a recording: ask for sensitivities or for a recording, not both")
	case o.Sens != nil:
		job = engine.Sensitivities
	case record:
		job = engine.Record
	}
	var ss *sensSetup
	if o.Sens != nil {
		if ss, err = newSensSetup(prob, o.Sens); err != nil {
			return nil, err
		}
	}
	ch, err := chooseEngine(prob, &o, job, offers, ens.N)
	if err != nil {
		return nil, err
	}
	spec := &engine.Spec{Request: ch.req, RTol: num.rtol, ATol: num.atol, HMax: num.hmax, H0: num.h0,
		MaxSteps: num.maxSteps, Controller: num.controller}
	if ss != nil {
		spec.SensCols = ss.paramCol
	}
	plan, err := ch.engine.Prepare(spec)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	if in.y0FromP {
		// y0(p), once for each row of parameters, and with forward
		// sensitivities ∂y0/∂p in the same call.
		if in.y0, in.s0, err = initialStates(prob, in.p, ens.N, ss); err != nil {
			return nil, err
		}
	}

	n, dim, m, K := ens.N, prob.Dim, prob.NumParams, in.k
	res := &Result{
		Problem: prob.Name, Method: ch.method.MethodName(), Reason: ch.reason,
		Engine: ch.engine.Name(), EngineReason: ch.engineReason,
		N: n, Dim: dim, K: K,
		Y:      make([]float64, n*dim),
		T:      make([]float64, n),
		Saved:  make([]float64, n*K*dim),
		Status: make([]Status, n),
		Stats:  make([]Stats, n),
		h:      make([]float64, n),
	}
	ecfg := ensemble.Config{Workers: o.Workers, Chunk: o.Chunk, Progress: o.Progress}
	if wl, ok := plan.(engine.WorkerLimit); ok {
		// An engine that runs a batch per worker on a device (cuda):
		// one worker per device, whatever Options.Workers says (the
		// bits do not depend on it).
		ecfg.Workers = min(ensemble.Workers(n, ecfg), max(1, wl.MaxWorkers()))
	}
	nw := ensemble.Workers(n, ecfg)
	first, err := plan.NewSolver()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	// A lane engine's worker holds several trajectories at once: every
	// per-trajectory header below has one slot per lane. And the first
	// worker takes up to a lane solver's worth of trajectories as it
	// starts, so more workers than ⌈n/lanes⌉ would be built for nothing
	// (a lane solver costs some 40 µs to build, as much as solving a few
	// small trajectories); the bits do not depend on the worker count.
	lanes := 1
	if ls, ok := first.(engine.LaneSolver); ok {
		lanes = ls.Lanes()
		nw = min(nw, (n+lanes-1)/lanes)
		ecfg.Workers = nw
	}
	solvers := make([]engine.Solver, nw)
	solvers[0] = first
	for w := 1; w < nw; w++ {
		if solvers[w], err = plan.NewSolver(); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInput, err)
		}
	}
	slots := nw * lanes
	if record && o.Checkpoint >= 2 && lanes > 1 {
		res.EngineReason += fmt.Sprintf("; the reverse replay of this checkpointed recording (Options.Checkpoint = %d) runs on each worker's scalar replayer, with the same bits (the lane walks reverse meshes that keep every state)", o.Checkpoint)
	}
	var sws []*sensWorker
	var meshes []*ivp.Mesh
	var workMesh []ivp.Mesh
	if record {
		meshes = make([]*ivp.Mesh, n)
		workMesh = make([]ivp.Mesh, slots)
		for w := range workMesh {
			workMesh[w].KeepStages = o.KeepStages
			workMesh[w].Checkpoint = o.Checkpoint
		}
	}
	if ss != nil {
		res.NS = ss.ns
		res.S = make([]float64, n*dim*ss.ns)
		res.SavedS = make([]float64, n*K*dim*ss.ns)
		sws = make([]*sensWorker, slots)
		for w := range sws {
			sws[w] = ss.newWorker(K)
		}
	}
	var ml *meshLimit
	runCtx := ctx
	if record {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithCancel(ctx)
		defer cancel()
		ml = newMeshLimit(sizes, cancel)
		for w := range workMesh {
			workMesh[w].Grow = ml.grow
		}
	}
	start := time.Now()
	// Per-slot trajectory and output headers: handing pointers to
	// per-call locals to an engine through its interface would move them
	// to the heap on every trajectory.
	trs, outs := make([]ivp.Trajectory, slots), make([]ivp.Output, slots)
	// begin fills slot's headers for trajectory i, finish stores what
	// its solve computed.
	begin := func(slot, i int) (*ivp.Trajectory, *ivp.Output) {
		tr, out := &trs[slot], &outs[slot]
		*tr = ivp.Trajectory{
			T0: pick(in.t0, i, 1)[0], T1: pick(in.t1, i, 1)[0],
			Y0: pick(in.y0, i, dim), P: pick(in.p, i, m),
			Save: pick(in.save, i, K),
		}
		*out = ivp.Output{Y: res.Y[i*dim : (i+1)*dim], Saved: res.Saved[i*K*dim : (i+1)*K*dim]}
		if ss != nil {
			sw := sws[slot]
			var s0 []float64
			if in.s0 != nil {
				s0 = pick(in.s0, i, dim*ss.nsp)
			}
			tr.Y0 = sw.initial(tr.Y0, s0)
			out.Y, out.Saved = sw.y, sw.saved
		}
		if record {
			out.Mesh = &workMesh[slot]
		}
		return tr, out
	}
	finish := func(slot, i int) {
		out := &outs[slot]
		if record {
			if ml.grow(workMesh[slot].Bytes()) {
				meshes[i] = workMesh[slot].Clone()
			} else if out.Status == Success {
				out.Status = Cancelled // its mesh could not be kept
			}
		}
		res.T[i], res.h[i], res.Status[i], res.Stats[i] = out.T, out.H, out.Status, out.Stats
		if ss != nil {
			dns := dim * ss.ns
			ss.scatter(out.Y, res.Y[i*dim:(i+1)*dim], res.S[i*dns:(i+1)*dns])
			na := ss.augDim()
			for k := range K {
				ss.scatter(out.Saved[k*na:(k+1)*na], res.SavedRow(i, k), res.SavedS[(i*K+k)*dns:(i*K+k+1)*dns])
			}
		}
	}
	runErr := ensemble.RunQueue(runCtx, n, ecfg, func(w int, q *ensemble.Queue, stop *atomic.Bool) {
		if ls, ok := solvers[w].(engine.LaneSolver); ok {
			ls.SolveLanes(&laneSource{q: q, base: w * lanes, index: make([]int, lanes), begin: begin, finish: finish}, stop)
			return
		}
		for i, ok := q.Next(); ok; i, ok = q.Next() {
			tr, out := begin(w, i)
			solvers[w].Solve(tr, out, stop)
			finish(w, i)
			q.Done()
		}
	})
	res.Elapsed = time.Since(start)
	if err := ml.failed(); err != nil {
		return nil, err
	}
	for _, sv := range solvers {
		if fs, ok := sv.(engine.FailingSolver); ok {
			if err := fs.Err(); err != nil {
				return nil, fmt.Errorf("gradsolve: engine %s: %w", ch.engine.Name(), err)
			}
		}
	}
	res.Workers = nw
	o.Method, o.Engine = ch.method, ch.engine.Name()
	o.RTolVec, o.ATolVec = num.rtol, num.atol
	o.HMax, o.H0, o.MaxSteps = num.hmax, num.h0, num.maxSteps
	ctl := plan.Controller()
	o.Controller = &ctl
	res.Options = o
	r := &solved{res, in, num, meshes, plan}
	if runErr != nil {
		var pe *ensemble.PanicError
		if errors.As(runErr, &pe) {
			return nil, fmt.Errorf("gradsolve: %s: the right-hand side panicked on trajectory %d: %v", nameOf(prob), pe.Index, pe.Value)
		}
		return r, runErr
	}
	return r, nil
}

// laneSource hands a lane engine's worker the trajectories of its
// queue, each lane in its own slot of the per-trajectory headers.
type laneSource struct {
	q      *ensemble.Queue
	base   int   // the worker's first slot
	index  []int // the trajectory in each lane
	begin  func(slot, i int) (*ivp.Trajectory, *ivp.Output)
	finish func(slot, i int)
}

func (s *laneSource) Next(l int) (*ivp.Trajectory, *ivp.Output, bool) {
	i, ok := s.q.Next()
	if !ok {
		return nil, nil, false
	}
	s.index[l] = i
	tr, out := s.begin(s.base+l, i)
	return tr, out, true
}

func (s *laneSource) Done(l int) {
	s.finish(s.base+l, s.index[l])
	s.q.Done()
}

// pick returns row i of a shared (one row) or per-trajectory array.
func pick(v []float64, i, width int) []float64 {
	if len(v) == width {
		return v
	}
	return v[i*width : (i+1)*width]
}

type inputs struct {
	y0, p, t0, t1, save []float64
	k                   int
	// y0FromP: y0 holds y0(p_i) from Problem.Initial (no Ensemble.Y0),
	// so derivatives with respect to p include ∂y0/∂p. solve fills y0
	// (initialStates) once it knows whether the sensitivities need
	// ∂y0/∂p as well.
	y0FromP bool
	// s0, with forward sensitivities and y0FromP, holds ∂y0/∂p for the
	// parameter columns: per row of p, one block of Dim values per
	// column (see initialStates).
	s0 []float64
}

func resolveInputs(prob *Problem, ens *Ensemble) (*inputs, error) {
	n, dim, m := ens.N, prob.Dim, prob.NumParams
	if n < 1 {
		return nil, inputErr("ensemble size N = %d: must be ≥ 1", n)
	}
	in := &inputs{y0: ens.Y0, p: ens.P, t0: ens.T0, t1: ens.T1, save: ens.Save}
	if in.y0 == nil && prob.Initial == nil {
		if prob.Y0 == nil {
			return nil, inputErr("%s: no initial state: set Ensemble.Y0 (problem has no default)", nameOf(prob))
		}
		in.y0 = prob.Y0
	}
	if in.p == nil {
		in.p = prob.P
		if in.p == nil && m > 0 {
			return nil, inputErr("%s: no parameters: set Ensemble.P (%d per trajectory; problem has no default)", nameOf(prob), m)
		}
	}
	if in.y0 == nil {
		// The default initial state depends on the parameters
		// (Problem.Initial): each trajectory starts from y0(p_i), which
		// solve computes.
		if err := checkShape("P", in.p, n, m, "NumParams"); err != nil {
			return nil, err
		}
		in.y0FromP = true
	}
	if in.t0 == nil && in.t1 == nil {
		if prob.T0 == prob.T1 {
			return nil, inputErr("%s: no time span: set Ensemble.T0 and T1 (problem has no default)", nameOf(prob))
		}
		in.t0, in.t1 = []float64{prob.T0}, []float64{prob.T1}
	}
	if in.y0 != nil {
		if err := checkShape("Y0", in.y0, n, dim, "Dim"); err != nil {
			return nil, err
		}
	}
	if err := checkShape("P", in.p, n, m, "NumParams"); err != nil {
		return nil, err
	}
	if err := checkShape("T0", in.t0, n, 1, ""); err != nil {
		return nil, err
	}
	if err := checkShape("T1", in.t1, n, 1, ""); err != nil {
		return nil, err
	}
	for i := range n {
		t0, t1 := pick(in.t0, i, 1)[0], pick(in.t1, i, 1)[0]
		if t0 == t1 {
			return nil, inputErr("trajectory %d: t0 = t1 = %g: the time span must not be empty", i, t0)
		}
		if math.IsInf(t1-t0, 0) {
			return nil, inputErr("trajectory %d: t0 = %g, t1 = %g: the span's length t1 − t0 overflows to ±Inf; it must be finite", i, t0, t1)
		}
		if len(in.t0) == 1 && len(in.t1) == 1 {
			break
		}
	}
	// Save times.
	if ens.SavePerTrajectory {
		if len(in.save)%n != 0 {
			return nil, inputErr("Save has %d times with SavePerTrajectory: must be N·K = %d·K", len(in.save), n)
		}
		in.k = len(in.save) / n
	} else {
		in.k = len(in.save)
	}
	if in.k > 0 {
		for i := range n {
			if err := checkSave(pick(in.save, i, in.k), pick(in.t0, i, 1)[0], pick(in.t1, i, 1)[0], i); err != nil {
				return nil, err
			}
			if !ens.SavePerTrajectory && len(in.t0) == 1 && len(in.t1) == 1 {
				break
			}
		}
	}
	return in, nil
}

// initialStates returns y0(p_i) for each row of p (one row: shared),
// from Problem.Initial, and refuses values that are not finite. With ss
// (forward sensitivities) that has parameter columns it also returns
// s0, ∂y0/∂p_j for each of them (in the order of ss.paramCol), from the
// same evaluation: row i holds one block of Dim values per column.
func initialStates(prob *Problem, p []float64, n int, ss *sensSetup) (y0, s0 []float64, _ error) {
	dim, m := prob.Dim, prob.NumParams
	rows := 1
	if len(p) != m {
		rows = n
	}
	y0 = make([]float64, rows*dim)
	var jac []float64
	if ss != nil && ss.nsp > 0 {
		jac, s0 = make([]float64, dim*m), make([]float64, rows*dim*ss.nsp)
	}
	ev := prob.Initial()
	for i := range rows {
		row := y0[i*dim : (i+1)*dim]
		ev(p[i*m:(i+1)*m], row, jac)
		for d, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				name := fmt.Sprint(d)
				if prob.StateNames != nil {
					name = prob.StateNames[d]
				}
				which := fmt.Sprintf("the parameters of trajectory %d", i)
				if rows == 1 {
					which = "the parameters"
				}
				return nil, nil, inputErr("%s: the initial state computed from %s has %s = %g: it must be finite (check the parameters, or give the initial states)", nameOf(prob), which, name, v)
			}
		}
		if s0 != nil {
			blocks := s0[i*dim*ss.nsp : (i+1)*dim*ss.nsp]
			q := 0
			for _, j := range ss.paramCol {
				if j < 0 {
					continue
				}
				for d := range dim {
					blocks[q*dim+d] = jac[d*m+j]
				}
				q++
			}
		}
	}
	return y0, s0, nil
}

// checkShape checks that v has length width (shared) or n·width and
// holds only finite numbers.
func checkShape(name string, v []float64, n, width int, wname string) error {
	if len(v) != width && len(v) != n*width {
		if wname == "" {
			return inputErr("%s has length %d: want 1 (shared) or N = %d", name, len(v), n)
		}
		return inputErr("%s has length %d: want %s = %d (shared) or N·%s = %d", name, len(v), wname, width, wname, n*width)
	}
	for k, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			if width == 0 || len(v) == width {
				return inputErr("%s[%d] = %g is not finite", name, k, x)
			}
			return inputErr("%s of trajectory %d, component %d = %g is not finite", name, k/width, k%width, x)
		}
	}
	return nil
}

func checkSave(save []float64, t0, t1 float64, traj int) error {
	dir := 1.0
	if t1 < t0 {
		dir = -1
	}
	for k, s := range save {
		switch {
		case math.IsNaN(s) || math.IsInf(s, 0):
			return inputErr("save time %d of trajectory %d = %g is not finite", k, traj, s)
		case dir*(s-t0) < 0 || dir*(s-t1) > 0:
			return inputErr("save time %d = %g of trajectory %d lies outside its span [%g, %g]", k, s, traj, t0, t1)
		case k > 0 && dir*(s-save[k-1]) < 0:
			return inputErr("save times of trajectory %d are not ordered in the direction of integration: %g then %g", traj, save[k-1], s)
		}
	}
	return nil
}

// numerics are the options that set a solve's numbers, resolved
// (defaults filled in) and checked, whatever the method and the engine.
type numerics struct {
	rtol, atol []float64 // per component, length Dim
	hmax, h0   float64   // 0: no bound; 0: automatic
	maxSteps   int
	controller *control.PI // the user's, checked; nil: the method's default
}

func resolveOptions(prob *Problem, o *Options) (numerics, error) {
	dim := prob.Dim
	num := numerics{hmax: o.HMax, h0: o.H0, maxSteps: o.MaxSteps}
	switch {
	case o.Workers < 0:
		return num, inputErr("Workers = %d: must be ≥ 0", o.Workers)
	case o.Chunk < 0:
		return num, inputErr("Chunk = %d: must be ≥ 0", o.Chunk)
	case o.Precision != Float64 && o.Precision != Float32:
		return num, inputErr("Options.Precision = %v: want Float64 or Float32", o.Precision)
	case o.Device < 0:
		return num, inputErr("Options.Device = %d: must be ≥ 0 (the index of a GPU)", o.Device)
	case o.Checkpoint < 0:
		return num, inputErr("Options.Checkpoint = %d: must be ≥ 0 (0 or 1: keep every state; c ≥ 2: every c-th)", o.Checkpoint)
	case o.MaxSteps < 0:
		return num, inputErr("MaxSteps = %d: must be ≥ 0 (0 means %d)", o.MaxSteps, DefaultMaxSteps)
	case o.HMax < 0 || math.IsNaN(o.HMax):
		return num, inputErr("HMax = %g: must be ≥ 0 (0 means no bound)", o.HMax)
	case o.H0 < 0 || math.IsNaN(o.H0) || math.IsInf(o.H0, 0):
		return num, inputErr("H0 = %g: must be finite and ≥ 0 (0 means automatic)", o.H0)
	}
	if num.maxSteps == 0 {
		num.maxSteps = DefaultMaxSteps
	}
	rtol, atol, minRTol := o.RTol, o.ATol, MinRTol
	if o.Precision == Float32 {
		minRTol = MinRTol32
	}
	if rtol == 0 && atol == 0 {
		rtol, atol = DefaultRTol, DefaultATol
		if o.Precision == Float32 {
			rtol, atol = DefaultRTol32, DefaultATol32
		}
	}
	var err error
	if num.rtol, err = tolVec("rtol", o.RTolVec, rtol, dim, minRTol); err != nil {
		if o.Precision == Float32 {
			err = fmt.Errorf("%w (Options.Precision is Float32)", err)
		}
		return num, err
	}
	if num.atol, err = tolVec("atol", o.ATolVec, atol, dim, 0); err != nil {
		return num, err
	}
	if o.Controller != nil {
		c := *o.Controller
		if !(c.QMin > 0 && c.QMin < 1) || !(c.QMax > 1) || math.IsInf(c.QMax, 0) || !(c.Safety > 0 && c.Safety <= 1) ||
			!(c.Beta1 > 0) || c.Beta2 < 0 || !(c.QOldInit > 0) {
			return num, inputErr("controller %+v: need 0 < QMin < 1 < QMax < ∞, 0 < Safety ≤ 1, Beta1 > 0, Beta2 ≥ 0, QOldInit > 0", c)
		}
		num.controller = &c
	}
	return num, nil
}

// tolVec expands a scalar tolerance or checks a per-component one.
func tolVec(name string, vec []float64, scalar float64, dim int, minimum float64) ([]float64, error) {
	if vec == nil {
		if !(scalar > 0) || math.IsInf(scalar, 0) || scalar < minimum {
			return nil, inputErr("%s = %g: must be finite and > 0%s (set both rtol and atol, or neither for the defaults)",
				name, scalar, minText(minimum))
		}
		v := make([]float64, dim)
		for i := range v {
			v[i] = scalar
		}
		return v, nil
	}
	if len(vec) != dim {
		return nil, inputErr("per-component %s has length %d: want Dim = %d", name, len(vec), dim)
	}
	for i, x := range vec {
		if !(x > 0) || math.IsInf(x, 0) || x < minimum {
			return nil, inputErr("%s[%d] = %g: must be finite and > 0%s", name, i, x, minText(minimum))
		}
	}
	return append([]float64(nil), vec...), nil
}

func minText(m float64) string {
	if m == 0 {
		return ""
	}
	return fmt.Sprintf(" and ≥ %.3g", m)
}
