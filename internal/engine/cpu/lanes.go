package cpu

import (
	"fmt"
	"os"
	"sync/atomic"

	"github.com/gradsolve/gradsolve/erk"
	"github.com/gradsolve/gradsolve/internal/engine"
	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
)

// Lanes is the engine cpu-lanes: cpu-erk's arithmetic on several
// trajectories per worker side by side in SIMD lanes (erk.LaneSolver,
// ivp.LaneDriver; eight as registered, two groups of four), each with
// its own step, bit for bit cpu-erk's results. It needs AVX2 and machine code (and is off with
// GRADSOLVE_LANES=off); the router prefers it for ensembles of at least
// a lane's width whose problem has a lane right-hand side
// (ode.Programs.FLanes, which problems compiled from formulas have).
//
// Forward sensitivities run in the lanes on the fused sensitivity
// system where the problem has its lane form (Problem.SensLanes), else
// lane by lane; the reverse replay of a recording runs in lanes too
// (erk.LaneReplayer), its forward replay on cpu-erk's replayer.
type Lanes struct{ laneEngine }

// laneEngine is what the lane engines have in common: a name, the lane
// count, a priority and whether it is forced on.
type laneEngine struct {
	name     string
	lanes    int
	priority int
	force    bool
}

// NewLanes returns a lane engine named name with L lanes and the given
// priority. With force set it runs where SIMD is missing too (on its Go
// loops, with the same bits): the conformance suite registers such
// engines for other lane counts.
func NewLanes(name string, L, priority int, force bool) Lanes {
	return Lanes{laneEngine{name: name, lanes: L, priority: priority, force: force}}
}

// lanesOff is set by GRADSOLVE_LANES=off (or 0, false) in the
// environment.
var lanesOff = func() bool {
	switch os.Getenv("GRADSOLVE_LANES") {
	case "off", "0", "false":
		return true
	}
	return false
}()

// LanesAvailable returns nil when cpu-lanes can run here, else why not.
func LanesAvailable() error {
	switch {
	case lanesOff:
		return fmt.Errorf("turned off by GRADSOLVE_LANES=off")
	case !jit.Enabled():
		return fmt.Errorf("machine code is off or unsupported here (GRADSOLVE_JIT=off, or not linux/amd64)")
	case !jit.HasAVX2():
		return fmt.Errorf("the processor has no AVX2")
	}
	return nil
}

// Name returns the engine's name ("cpu-lanes", "cpu-ros-lanes").
func (e laneEngine) Name() string { return e.name }

// Priority returns the engine's priority: above its reference's.
func (e laneEngine) Priority() int { return e.priority }

// Reference returns "cpu-erk", whose bits it gives.
func (Lanes) Reference() string { return "cpu-erk" }

// Runs reports whether m is an explicit Runge–Kutta tableau.
func (Lanes) Runs(m method.Method) bool { return ERK{}.Runs(m) }

// DefaultMethod returns method.Tsit5.
func (Lanes) DefaultMethod(*ode.Problem) method.Method { return method.Tsit5 }

// Available returns LanesAvailable(), or nil for an engine forced on.
func (e laneEngine) Available() error {
	if e.force {
		return nil
	}
	return LanesAvailable()
}

// serves returns why the engine cannot run here, or what its
// reference's Serves returns.
func (e laneEngine) serves(ref engine.Engine, req *engine.Request) error {
	if err := e.Available(); err != nil {
		return fmt.Errorf("%s is unavailable here: %v", e.name, err)
	}
	return ref.Serves(req)
}

// Serves refuses what cpu-erk refuses, and everything where the lanes
// cannot run (Available).
func (e Lanes) Serves(req *engine.Request) error { return e.serves(ERK{}, req) }

// Prefers returns why the router should leave a request to cpu-erk:
// an ensemble smaller than the lanes (but for a solve of three or more
// and a recording of any size: see idleERK), a problem without a lane
// right-hand side, or sensitivities (f lane by lane on the augmented
// system).
func (e Lanes) Prefers(req *engine.Request) error {
	switch {
	case idleERK(req, e.lanes):
		return idleLanes(req.N, e.lanes)
	case req.Job == engine.Sensitivities && (req.Problem.SensF == nil || req.Problem.SensLanes == nil):
		return fmt.Errorf("%s has no lane form of its sensitivity system (Problem.SensLanes): f would run lane by lane", req.Name())
	case !req.Offers.Has(ode.HasFLanes):
		return fmt.Errorf("%s has no lane right-hand side (Programs.FLanes): f would run lane by lane", req.Name())
	}
	return nil
}

// laneCount is the number of lanes a job of n trajectories runs on, on
// an engine of L lanes: one group of four (ode.LaneWidth) where the
// whole ensemble fits in it and L holds several groups, else L. Every
// group of a lane solver computes in every round whether its lanes hold
// work or not, so an ensemble of up to four on eight lanes paid for
// eight; and with one group per worker the two workers share a small
// ensemble where one worker's eight lanes took it all. Same bits: lanes
// are bitwise the scalar engines whatever their count. Measured with
// engines of four and of eight lanes registered side by side
// (interleaved, best of 20, 2026-12-02, AMD EPYC, 2 cores; a solve, a
// record with its first gradient, and a replay with its gradient), four
// lanes against eight:
//
//	Robertson (Rodas5P, rtol 1e-8, atol 1e-12), n = 1, 2, 3: solve 0.61, 0.49, 0.66;
//	                                  record and gradient 0.62, 0.42, 0.59; replay and gradient 0.56, 0.32, 0.52
//	Lorenz (Tsit5, rtol 1e-8), n = 2, 3:                solve 0.65, 0.85;
//	                                  record and gradient 0.59, 0.73; replay and gradient 0.52, 0.74
//
// and at n = 6 about equal (Robertson) or worse (Lorenz: 1.15 for the
// replay and gradient), so five trajectories and more keep L.
func laneCount(L, n int) int {
	const W = ode.LaneWidth
	if n >= 1 && n <= W && L > W && L%W == 0 {
		return W
	}
	return L
}

// idleERK says whether cpu-lanes (L lanes) should leave req's ensemble
// to cpu-erk: fewer trajectories than lanes, except for a solve of
// three or more and a recording of any size. Of cpu-erk's time, on four
// lanes (bench/smallens: best of 30, interleaved, 2026-12-02, AMD EPYC,
// 2 cores; bench/results/smallens-2026-12-02.txt), Lorenz (Tsit5, rtol
// 1e-8, atol 1e-10, t ∈ [0, 1]) and the halo (t ∈ [0, 10]) take
//
//	           solve        record and gradient   replay and gradient
//	n = 1:     1.13, 0.98   0.93, 0.89            0.61, 0.76
//	n = 2:     0.97, 0.71   0.77, 0.70            0.53, 0.45
//	n = 3:     0.71, 0.48   0.60, 0.52            0.34, 0.31
//	n = 4 … 7: 0.39–0.69    0.40–0.59             0.22–0.33
//
// A recording is made to be replayed and differentiated, often many
// times (a fit replays it at every update): in lanes from one
// trajectory up. A solve of one or two stays on cpu-erk, as do
// sensitivities of fewer trajectories than lanes.
func idleERK(req *engine.Request, L int) bool {
	if req.N <= 0 || req.N >= L {
		return false
	}
	switch req.Job {
	case engine.Record:
		return false
	case engine.Forward:
		return req.N < 3
	}
	return true
}

// idleROS says whether cpu-ros-lanes (L lanes) should leave req's
// ensemble to cpu-ros: fewer trajectories than lanes, except for a
// solve of two or more and a recording of any size. With the forward
// replay and the reverse walk in whole rounds of machine code (ros
// lanesrounds.go), Robertson (Rodas5P, rtol 1e-8, atol 1e-12, t ∈
// [0, 1e4]) on four lanes takes, of cpu-ros's time (bench/smallens, as
// for idleERK),
//
//	           solve       record and gradient   replay and gradient
//	n = 1:     1.10–1.32   0.62–0.68             0.44–0.52
//	n = 2:     0.67–0.82   0.41–0.48             0.23–0.27
//	n = 3 … 7: 0.35–0.54   0.21–0.30             0.13–0.27
//
// so one trajectory's solve stays on cpu-ros, as do sensitivities of
// fewer trajectories than lanes.
func idleROS(req *engine.Request, L int) bool {
	if req.N <= 0 || req.N >= L {
		return false
	}
	switch req.Job {
	case engine.Record:
		return false
	case engine.Forward:
		return req.N < 2
	}
	return true
}

// idleLanes is the reason to leave an ensemble of n < L trajectories
// to the scalar engine.
func idleLanes(n, L int) error {
	if n == 1 {
		return fmt.Errorf("an ensemble of 1 trajectory leaves lanes of %d idle", L)
	}
	return fmt.Errorf("an ensemble of %d trajectories leaves lanes of %d idle", n, L)
}

// Prepare builds cpu-erk's plan of the job, whose workers run in lanes.
func (e Lanes) Prepare(spec *engine.Spec) (engine.Plan, error) {
	pl, err := ERK{}.Prepare(spec)
	if err != nil {
		return nil, err
	}
	lp := &lanesPlan{erkPlan: pl.(*erkPlan), lanes: laneCount(e.lanes, spec.N)}
	if prob := spec.Problem; lp.fused != nil && prob.SensLanes != nil {
		if lp.sensLanes, err = prob.SensLanes(spec.SensCols); err != nil {
			return nil, fmt.Errorf("%s: building the sensitivity system in lanes: %w", spec.Name(), err)
		}
	}
	return lp, nil
}

// lanesPlan is cpu-lanes's plan of one job: cpu-erk's, with lane
// solvers.
type lanesPlan struct {
	*erkPlan
	lanes int
	// sensLanes, with sensitivities of a problem that has them, makes
	// each worker's lane form of the fused sensitivity system (the
	// program of erkPlan.fused).
	sensLanes func() ode.LaneProgram
}

// NewSolver returns one worker's lane solver.
func (pl *lanesPlan) NewSolver() (engine.Solver, error) {
	c, flanes, kernel, err := pl.workerConfig()
	if err != nil {
		return nil, err
	}
	var ls *erk.LaneSolver
	if pl.sensLanes != nil {
		ls, err = erk.NewSensLanes(c, pl.lanes, pl.spec.Problem.NumParams, pl.sensLanes(), pl.spec.Problem.Dim)
	} else {
		ls, err = erk.NewLanes(c, pl.lanes, pl.spec.Problem.NumParams, flanes, kernel)
	}
	if err != nil {
		return nil, err
	}
	return &laneSolver{lanes: ls}, nil
}

// NewReplayer returns one worker's lane replayer: the reverse replay in
// lanes, on the worker's own programs (f, the cotangent program and
// their lane forms).
func (pl *lanesPlan) NewReplayer() (engine.Replayer, error) {
	pg, err := programs(pl.spec.Problem, ode.HasVJP)
	if err != nil {
		return nil, err
	}
	c := pl.cfg
	c.F = pg.F
	var vk *ode.LaneKernel
	if pg.VJPKernel != nil {
		vk = pg.VJPKernel()
	}
	rp, err := erk.NewLaneReplayer(c, pl.lanes, pl.spec.Problem.NumParams, pg.VJP, pg.FLanes, pg.VJPLanes, pg.Kernel, vk)
	if err != nil {
		return nil, err
	}
	return rp, nil
}

// laneStepper is what erk.LaneSolver and ros.LaneSolver have in common.
type laneStepper interface {
	Lanes() int
	SolveLanes(src ivp.LaneSource, stop *atomic.Bool)
}

// laneSolver is a lane stepper as an engine.LaneSolver: its Solve runs
// one trajectory in the lanes.
type laneSolver struct {
	lanes laneStepper
	one   oneTrajectory
}

// Lanes returns the number of lanes.
func (s *laneSolver) Lanes() int { return s.lanes.Lanes() }

// SolveLanes integrates the trajectories src hands out.
func (s *laneSolver) SolveLanes(src ivp.LaneSource, stop *atomic.Bool) { s.lanes.SolveLanes(src, stop) }

// Solve integrates tr alone.
func (s *laneSolver) Solve(tr *ivp.Trajectory, out *ivp.Output, stop *atomic.Bool) {
	s.one = oneTrajectory{tr: tr, out: out}
	s.lanes.SolveLanes(&s.one, stop)
	s.one = oneTrajectory{}
}

// oneTrajectory is a LaneSource of one trajectory.
type oneTrajectory struct {
	tr    *ivp.Trajectory
	out   *ivp.Output
	given bool
}

func (o *oneTrajectory) Next(int) (*ivp.Trajectory, *ivp.Output, bool) {
	if o.given {
		return nil, nil, false
	}
	o.given = true
	return o.tr, o.out, true
}

func (o *oneTrajectory) Done(int) {}
