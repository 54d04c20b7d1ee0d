package cpu

import (
	"fmt"

	"github.com/gradsolve/gradsolve/internal/engine"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/ros"
)

// ROSLanes is the engine cpu-ros-lanes: cpu-ros's arithmetic on several
// trajectories per worker side by side in SIMD lanes (ros.LaneSolver,
// ivp.LaneDriver; eight as registered), each with its own step,
// Jacobian and factorisation, bit for bit cpu-ros's results. It needs
// AVX2 and machine code (LanesAvailable; off with GRADSOLVE_LANES=off).
//
// Forward solves (with save times, re-stepped or dense), forward
// sensitivities, the recordings, their forward replay and their reverse
// replay run in lanes; with DenseSave, a reversed step that holds
// save-time cotangents runs on cpu-ros's scalar replayer, lane by lane
// (ros.LaneReplayer.ReverseDense).
type ROSLanes struct{ laneEngine }

// NewROSLanes returns a Rosenbrock lane engine named name with L lanes
// and the given priority. With force set it runs where SIMD is missing
// too (each lane on a scalar solver, with the same bits): the
// conformance suite registers such engines for other lane counts.
func NewROSLanes(name string, L, priority int, force bool) ROSLanes {
	return ROSLanes{laneEngine{name: name, lanes: L, priority: priority, force: force}}
}

// Reference returns "cpu-ros", whose bits it gives.
func (ROSLanes) Reference() string { return "cpu-ros" }

// Runs reports whether m is a Rosenbrock method.
func (ROSLanes) Runs(m method.Method) bool { return ROS{}.Runs(m) }

// DefaultMethod returns method.Rodas5P.
func (ROSLanes) DefaultMethod(*ode.Problem) method.Method { return method.Rodas5P }

// Serves refuses what cpu-ros refuses, and everything where the lanes
// cannot run (Available).
func (e ROSLanes) Serves(req *engine.Request) error { return e.serves(ROS{}, req) }

// Prefers returns why the router should leave a request to cpu-ros: an
// ensemble smaller than the lanes (but for a solve of two or more and a
// recording of any size: see idleROS), a system whose lane attempt (with
// its sensitivity columns, if any) would pass the bound on its machine
// code (ros.LaneCodeFits: the LU grows as Dim³, and each column adds its
// stages), or a problem without a lane right-hand side.
func (e ROSLanes) Prefers(req *engine.Request) error {
	switch {
	case idleROS(req, e.lanes):
		return idleLanes(req.N, e.lanes)
	case req.Job == engine.Sensitivities && !ros.LaneCodeFits(req.Method.(*method.Rosenbrock), req.Problem.Dim, req.NumSens, laneCount(e.lanes, req.N)):
		cols := "columns"
		if req.NumSens == 1 {
			cols = "column"
		}
		return fmt.Errorf("%s has %d components and %d sensitivity %s: the lane attempt of %s on %d lanes would pass its bound on machine code, so the lanes would run one trajectory at a time", req.Name(), req.Problem.Dim, req.NumSens, cols, req.Method.MethodName(), laneCount(e.lanes, req.N))
	case req.Job != engine.Sensitivities && !ros.LaneCodeFits(req.Method.(*method.Rosenbrock), req.Problem.Dim, 0, laneCount(e.lanes, req.N)):
		return fmt.Errorf("%s has %d components: the lane attempt of %s on %d lanes would pass its bound on machine code, so the lanes would run one trajectory at a time", req.Name(), req.Problem.Dim, req.Method.MethodName(), laneCount(e.lanes, req.N))
	case !req.Offers.Has(ode.HasFLanes):
		return fmt.Errorf("%s has no lane right-hand side (Programs.FLanes): f would run lane by lane", req.Name())
	}
	return nil
}

// Prepare builds cpu-ros's plan of the job, whose workers run in lanes
// where the job does.
func (e ROSLanes) Prepare(spec *engine.Spec) (engine.Plan, error) {
	pl, err := ROS{}.Prepare(spec)
	if err != nil {
		return nil, err
	}
	return &rosLanesPlan{rosPlan: pl.(*rosPlan), lanes: laneCount(e.lanes, spec.N)}, nil
}

// rosLanesPlan is cpu-ros-lanes's plan of one job: cpu-ros's, with lane
// solvers for the jobs that run in lanes.
type rosLanesPlan struct {
	*rosPlan
	lanes int
}

// NewSolver returns one worker's lane solver (with sensitivities, on
// the augmented state).
func (pl *rosLanesPlan) NewSolver() (engine.Solver, error) {
	c, pg, err := pl.solverConfig()
	if err != nil {
		return nil, err
	}
	lp := ros.LanePrograms{F: pg.FLanes, Kernel: pg.Kernel, JacY: pg.JacYLanes, DfDt: pg.DfDtLanes,
		JVP: pg.JVPLanes, JVPJacY: pg.JVPJacYLanes, JVPDfDt: pg.JVPDfDtLanes}
	if c.NS > 0 && pg.JVPKernel != nil && pg.Kernel != nil {
		lp.JVPKernel = pg.JVPKernel() // the tangents in the attempt's code, with f
	}
	ls, err := ros.NewLanes(c, pl.lanes, pl.spec.Problem.NumParams, lp)
	if err != nil {
		return nil, err
	}
	return &laneSolver{lanes: ls}, nil
}

// NewReplayer returns one worker's lane replayer — the reverse replay in
// lanes, on the worker's own programs and their lane forms — or, where
// the lanes cannot reverse the job (a system above the lane reverse
// sweep's size, no AVX2), cpu-ros's replayer.
func (pl *rosLanesPlan) NewReplayer() (engine.Replayer, error) {
	c, pg, err := pl.config(pl.need | ode.HasVJP | ode.HasJVPVJP | pl.spec.Offers&ode.HasDfDtVJP)
	if err != nil {
		return nil, err
	}
	lp := ros.LanePrograms{F: pg.FLanes, Kernel: pg.Kernel, JacY: pg.JacYLanes, DfDt: pg.DfDtLanes}
	lr, err := ros.NewLaneReplayer(c, pl.lanes, pl.spec.Problem.NumParams, pg, lp)
	if err != nil {
		return pl.rosPlan.NewReplayer()
	}
	return lr, nil
}
