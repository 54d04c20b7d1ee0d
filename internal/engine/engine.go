// Package engine is the contract between gradsolve's front end (the
// root package, which resolves a request, and package router, which
// picks the engine) and the engines that run one trajectory's job: what
// an engine is, what it is asked, and the registry of the engines linked
// into the program.
//
// An engine has a name ("cpu-erk", "cpu-ros"), says which methods it
// runs (Runs) and which requests it can serve — and if not, why, in the
// Go API's terms (Serves) — and makes the per-worker state of the jobs:
// a Solver for the forward solve, the forward solve with sensitivities
// and the recording solve, and a Replayer for the replay-adjoint on a
// recorded mesh (Prepare, then Plan.NewSolver and Plan.NewReplayer).
// Everything engine-independent — input checks, the ensemble, the
// result arrays, the layout of sensitivities, initial states computed
// from the parameters — stays with the caller.
//
// Engines join by registering: a package of its own calls Register in
// its init function, and the root package links it in by importing it
// (engines.go). An engine behind a build tag (a GPU engine) is then
// simply absent from an untagged build. The router takes, among the
// registered engines that run the method and serve the request, the one
// of highest Priority.
//
// An engine that does the arithmetic of another one — a SIMD engine
// doing cpu-erk's operations lane by lane — names it as its Reference,
// and the conformance suite (internal/enginetest) then requires the
// same bits as the reference engine's: the same steps, statuses,
// outputs and gradients.
package engine

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
)

// Job is what a solve asks of each trajectory.
type Job int

const (
	// Forward solves for the final state and the states at the save
	// times.
	Forward Job = iota + 1
	// Sensitivities solves the state together with forward
	// sensitivity columns (see Spec).
	Sensitivities
	// Record solves forward and keeps the accepted steps (the mesh):
	// the Solver fills Output.Mesh. A recording is made to be replayed
	// and differentiated, so an engine serves Record only where it can
	// also run the replay-adjoint on its recording (Plan.NewReplayer).
	Record
)

// String names the job.
func (j Job) String() string {
	switch j {
	case Forward:
		return "forward"
	case Sensitivities:
		return "sensitivities"
	case Record:
		return "record"
	}
	return fmt.Sprintf("Job(%d)", int(j))
}

// Request is what a solve asks, as an engine judges whether it can
// serve it: the problem and what derivative programs it offers, the
// method, the job and the options that change which programs or which
// arithmetic the job needs.
type Request struct {
	// Problem is the problem, already validated.
	Problem *ode.Problem
	// Offers is Problem.ProgramSet(), asked once by the caller.
	Offers ode.ProgramSet
	// Method is the method, not nil and already validated.
	Method method.Method
	// Job is the job.
	Job Job
	// NumSens is the number of sensitivity columns (Sensitivities).
	NumSens int
	// ErrorTest puts the sensitivity columns in the error norm
	// (Sensitivities).
	ErrorTest bool
	// DenseSave asks for save times from the method's continuous
	// extension instead of a re-step.
	DenseSave bool
	// KeepStages asks a recording to keep every accepted step's
	// stages (Record).
	KeepStages bool
	// N is the number of trajectories of the ensemble (0: not known).
	N int
	// Float32 asks for the arithmetic in float32 (Options.Precision);
	// false: float64. An engine that computes in float64 only refuses
	// it.
	Float32 bool
	// Device is the accelerator the job runs on (Options.Device, ≥ 0),
	// for the engines that run on one; the CPU engines ignore it.
	Device int
}

// Name is the problem's name as messages use it: Problem.Name, or
// "unnamed problem".
func (r *Request) Name() string {
	if r.Problem.Name == "" {
		return "unnamed problem"
	}
	return r.Problem.Name
}

// Spec is a request with its numerics resolved and checked by the
// caller: everything an engine needs to make the workers of a job.
type Spec struct {
	Request
	// RTol and ATol are the tolerances of the state's components
	// (length Problem.Dim, each finite and > 0). With sensitivities,
	// each column's component d takes the tolerances of component d.
	RTol, ATol []float64
	// HMax bounds |h| (0: no bound); H0 is the first step size (0:
	// automatic); MaxSteps is the step budget (≥ 1).
	HMax, H0 float64
	MaxSteps int
	// Controller is the step-size controller; nil means the method's
	// default (control.DefaultPI for the order of its error estimate
	// and its QMin, QMax).
	Controller *control.PI
	// SensCols, for Sensitivities, holds one entry per column (NumSens
	// of them): the parameter index j of a column ∂y/∂p_j, or −1 for a
	// column of an initial value.
	SensCols []int
}

// Engine is one way of running the jobs of one trajectory. An Engine
// value is shared by every solve and must be safe for concurrent use;
// the Plans, Solvers and Replayers it makes are not (one per solve, one
// per worker).
type Engine interface {
	// Name is the engine's name, as Options.Engine and --engine spell
	// it: lower case, no spaces.
	Name() string
	// Priority orders the engines that can serve one request: the
	// router takes the highest (ties: the name first in sort order).
	Priority() int
	// Reference names the registered engine whose arithmetic this one
	// reproduces bit for bit on every method both run; "" for an
	// engine that is its own reference.
	Reference() string
	// Runs reports whether the engine implements method m.
	Runs(m method.Method) bool
	// DefaultMethod is the method a solve on this engine runs when the
	// user names the engine and no method.
	DefaultMethod(prob *ode.Problem) method.Method
	// Serves returns nil when the engine can serve req (a method it
	// Runs), and otherwise an error whose text says why, in the Go
	// API's terms (a field of Options or Problem), starting with the
	// problem's name where the problem is the reason.
	Serves(req *Request) error
	// Prepare returns the plan of a job whose request it serves: the
	// work shared by the job's workers (the fused sensitivity program,
	// say), done once.
	Prepare(spec *Spec) (Plan, error)
}

// Plan makes the per-worker state of one job. A plan's methods are
// called from one goroutine.
type Plan interface {
	// Controller returns the step-size controller the workers run:
	// Spec.Controller, or the method's default.
	Controller() control.PI
	// NewSolver returns one worker's solver of the job: Forward,
	// Sensitivities or Record.
	NewSolver() (Solver, error)
	// NewReplayer returns one worker's replayer of a Record job's
	// meshes.
	NewReplayer() (Replayer, error)
}

// Solver runs one trajectory of a job at a time; one per worker.
//
// With Sensitivities its state is augmented: y, then NumSens columns
// S_c = ∂y/∂θ_c of Dim values each, column c at [Dim·(1+c),
// Dim·(2+c)). The Trajectory's Y0 and the Output's Y and Saved hold the
// augmented state, Stats.FEvals counts evaluations of the augmented
// system, and unless ErrorTest only the state's components choose the
// step size, so the mesh and the state are bitwise those of a forward
// solve.
type Solver interface {
	// Solve integrates tr and writes its results into out (see
	// ivp.Output), polling stop for cancellation. It does not
	// allocate.
	Solve(tr *ivp.Trajectory, out *ivp.Output, stop *atomic.Bool)
}

// LaneSolver is a Solver that advances several trajectories at once on
// one worker, each with its own step (a SIMD lane engine): the front end
// hands it a source of trajectories instead of one at a time, and it
// ends each with the results Solve would give it. Its Solve (one
// trajectory) gives the same bits.
type LaneSolver interface {
	Solver
	// Lanes is the number of trajectories it holds at once.
	Lanes() int
	// SolveLanes integrates every trajectory src hands out, as
	// ivp.SolveLanes does, polling stop. It allocates nothing per step.
	SolveLanes(src ivp.LaneSource, stop *atomic.Bool)
}

// WorkerLimit is a Plan whose job should run on at most MaxWorkers
// workers whatever Options.Workers asks (a GPU engine: one worker per
// device, each worker's LaneSolver launching a batch of trajectories at
// a time). The results do not depend on the number of workers.
type WorkerLimit interface {
	MaxWorkers() int
}

// FailingSolver is a Solver that can fail as a whole, not as one
// trajectory's status (a device's launch or copy error): Err returns
// the first such error after the run, and the front end returns it
// from the solve. The trajectories it could not finish it ends with
// status Cancelled.
type FailingSolver interface {
	Solver
	Err() error
}

// FailingReplayer is a Replayer that can fail as a whole (a device's
// launch or copy error): Err returns the first such error of its last
// walk, and the front end returns it from the walk (Recording.Gradient,
// Replay). The jobs it could not finish have NaN results.
type FailingReplayer interface {
	Replayer
	Err() error
}

// PartialReference is an engine that claims its Reference's bits on
// some of the jobs alone, and refuses the others (a GPU engine whose
// record and adjoint kernels are not built): ReferenceJobs lists the
// jobs it claims. The conformance suite then requires the reference's
// bits and jobs on those, and no more; an engine that is not a
// PartialReference claims every job its reference serves.
type PartialReference interface {
	ReferenceJobs() []Job
}

// FamilyReference is an engine whose Reference depends on the method's
// family (a GPU engine whose explicit kernels give cpu-erk's bits and
// whose Rosenbrock kernels give cpu-ros's): ReferenceFor names the
// reference engine of method m, and the conformance suite compares
// each method with its own. Reference is then the reference of the
// engine's default family.
type FamilyReference interface {
	ReferenceFor(m method.Method) string
}

// FamilyReferenceJobs is a FamilyReference whose claimed jobs also
// depend on the method (a GPU engine with record and adjoint kernels of
// one family only): ReferenceJobsFor lists the jobs whose bits it
// claims for m.
type FamilyReferenceJobs interface {
	ReferenceJobsFor(m method.Method) []Job
}

// ReferenceJobsOf returns the jobs whose reference bits e claims for
// m: FamilyReferenceJobs's, else PartialReference's; nil for every
// job.
func ReferenceJobsOf(e Engine, m method.Method) []Job {
	if fj, ok := e.(FamilyReferenceJobs); ok {
		return fj.ReferenceJobsFor(m)
	}
	if pr, ok := e.(PartialReference); ok {
		return pr.ReferenceJobs()
	}
	return nil
}

// ReferenceOf returns the name of e's reference engine for method m:
// FamilyReference's, else Reference.
func ReferenceOf(e Engine, m method.Method) string {
	if fr, ok := e.(FamilyReference); ok {
		return fr.ReferenceFor(m)
	}
	return e.Reference()
}

// LaneReplayer is a Replayer that also reverses several recordings at
// once on one worker (the lane engine's reverse replay): the front end
// hands it a source of jobs, and each job's gradients are Reverse's.
type LaneReplayer interface {
	Replayer
	// Lanes is the number of jobs it holds at once.
	Lanes() int
	// ReverseLanes runs every job src hands out (ivp.LaneWalk.Reverse).
	ReverseLanes(src ivp.ReverseSource, stop *atomic.Bool)
}

// LaneForwarder is a Replayer that also replays several recordings
// forward at once, each lane on its own mesh (ivp.LaneForward), with
// the bits of its Forward.
type LaneForwarder interface {
	Replayer
	// Lanes is the number of jobs it holds at once.
	Lanes() int
	// ForwardLanes runs every job src hands out.
	ForwardLanes(src ivp.ForwardSource, stop *atomic.Bool)
}

// Costs are an engine's costs of the derivative jobs, each in forward
// solves of the same ensemble on the same engine: what the router's
// choice between forward sensitivities and the reverse replay weighs.
type Costs struct {
	// SensColumn is what each forward sensitivity column adds to a
	// solve.
	SensColumn float64
	// Record is a recording solve (the forward solve that keeps the
	// mesh).
	Record float64
	// Gradient is one reverse replay of a recording for one scalar
	// output.
	Gradient float64
	// Source says where the figures come from (the benchmark and
	// problem they were measured on).
	Source string
}

// Coster is an Engine that states its Costs for the requests it serves.
// An engine that does not is weighed with DefaultCosts.
type Coster interface {
	Costs(req *Request) Costs
}

// DefaultCosts are the costs of the explicit engine cpu-erk, which the
// router uses for an engine that measured none of its own (figures in
// internal/engine/cpu's costs.go).
var DefaultCosts = Costs{SensColumn: 0.2, Record: 1.2, Gradient: 3.2,
	Source: "cpu-erk's, BenchmarkDerivativeCosts on 2000 Lorenz trajectories"}

// CostsOf returns e's Costs for req, or DefaultCosts (with a Source
// that says so) for an engine that states none.
func CostsOf(e Engine, req *Request) Costs {
	if c, ok := e.(Coster); ok {
		return c.Costs(req)
	}
	c := DefaultCosts
	c.Source = "not measured on " + e.Name() + ": " + c.Source
	return c
}

// Preferrer is an Engine that serves some requests it should not be
// picked for by default (they run, but slower than on another engine):
// Prefers returns nil where the router may pick it, else why not. An
// engine the user names runs whatever it serves.
type Preferrer interface {
	Prefers(req *Request) error
}

// Availability is an Engine that may be linked in yet unable to run in
// this process (no SIMD unit, no GPU driver, turned off): Available
// returns nil when it can run, else why not, and its Serves then
// refuses every request with that reason.
type Availability interface {
	Available() error
}

// Replayer walks a recorded mesh again with the step sizes held fixed;
// one per worker.
type Replayer interface {
	// Forward recomputes the states of ms from y0 at p, overwriting
	// ms.Y, and writes the final state into yOut and the states at the
	// save times into saved: at the recording's own y0 and p, bit for
	// bit the recording solve's.
	Forward(ms *ivp.Mesh, y0, p, save, yOut, saved []float64)
	// Reverse runs the discrete adjoint of the steps of ms at p, from
	// the cotangents of the final state (cotY) and of the saved states
	// (cotSaved, nil for none), and writes ∂L/∂y0 into gy0 and ∂L/∂p
	// into gp.
	Reverse(ms *ivp.Mesh, p, save, cotY, cotSaved, gy0, gp []float64)
}

// Directions returns the parameter direction w_c of each sensitivity
// column cols[c] of a problem with m parameters: the unit vector e_j
// for a column of parameter j, zeros for a column of an initial value
// (cols[c] < 0), so that the column's tangent is J_y·S_c + J_p·w_c.
func Directions(cols []int, m int) [][]float64 {
	zero := make([]float64, m)
	w := make([][]float64, len(cols))
	for c, j := range cols {
		if j < 0 {
			w[c] = zero
			continue
		}
		w[c] = make([]float64, m)
		w[c][j] = 1
	}
	return w
}

// The registry.
var registry struct {
	sync.Mutex
	engines []Engine
}

// Register adds e to the engines the router may pick. It is meant for
// init functions; it panics if e's name is empty, has upper-case
// letters or spaces, or is registered already (a programming error of
// the engine's package).
func Register(e Engine) {
	name := e.Name()
	if name == "" || name != strings.ToLower(name) || strings.ContainsAny(name, " \t\n,") {
		panic(fmt.Sprintf("engine: Register: malformed engine name %q", name))
	}
	registry.Lock()
	defer registry.Unlock()
	for _, o := range registry.engines {
		if o.Name() == name {
			panic(fmt.Sprintf("engine: Register: engine %q registered twice", name))
		}
	}
	registry.engines = append(registry.engines, e)
	sort.SliceStable(registry.engines, func(i, j int) bool {
		a, b := registry.engines[i], registry.engines[j]
		if a.Priority() != b.Priority() {
			return a.Priority() > b.Priority()
		}
		return a.Name() < b.Name()
	})
}

// All returns the registered engines in the router's order of
// preference: highest Priority first, then by name.
func All() []Engine {
	registry.Lock()
	defer registry.Unlock()
	return append([]Engine(nil), registry.engines...)
}

// Lookup returns the registered engine of the given name, or nil.
func Lookup(name string) Engine {
	registry.Lock()
	defer registry.Unlock()
	for _, e := range registry.engines {
		if e.Name() == name {
			return e
		}
	}
	return nil
}

// Names returns the names of the registered engines, in All's order.
func Names() []string {
	var out []string
	for _, e := range All() {
		out = append(out, e.Name())
	}
	return out
}
