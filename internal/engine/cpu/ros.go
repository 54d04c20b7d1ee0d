package cpu

import (
	"fmt"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/internal/engine"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/ros"
)

// ROS is the engine cpu-ros: Rosenbrock methods (any valid
// *method.Rosenbrock) on package ros, for problems with a Jacobian
// program.
type ROS struct{}

// Name returns "cpu-ros".
func (ROS) Name() string { return "cpu-ros" }

// Priority returns Priority.
func (ROS) Priority() int { return Priority }

// Reference returns "": cpu-ros is the reference of its arithmetic.
func (ROS) Reference() string { return "" }

// Runs reports whether m is a Rosenbrock method.
func (ROS) Runs(m method.Method) bool { return m.Family() == method.RosenbrockFamily }

// DefaultMethod returns method.Rodas5P.
func (ROS) DefaultMethod(*ode.Problem) method.Method { return method.Rodas5P }

// Serves needs the Jacobian program for every job, the second
// derivatives for sensitivities (JVPJacY, and JVPDfDt for a
// non-autonomous problem) and for the reverse replay of a recording
// (JVPVJP, and DfDtVJP), and a continuous extension for DenseSave; it
// refuses sensitivities in the error norm, which a Rosenbrock method's
// sensitivities do not take part in.
func (ROS) Serves(req *engine.Request) error {
	if err := needFloat64(req); err != nil {
		return err
	}
	rt := req.Method.(*method.Rosenbrock)
	has := req.Offers
	switch {
	case !has.Has(ode.HasJacY):
		return fmt.Errorf("%s: %s needs the Jacobian program (Problem.Programs with JacY); compile the problem from formulas or supply one", req.Name(), rt.Name)
	case req.DenseSave && len(rt.Dense) != 3:
		return fmt.Errorf("DenseSave: %s has no continuous extension (Rosenbrock.Dense)", rt.Name)
	}
	switch req.Job {
	case engine.Sensitivities:
		if req.ErrorTest {
			return fmt.Errorf("%s: Sensitivity.ErrorTest is not available for Rosenbrock methods: their sensitivities follow the state's mesh", req.Name())
		}
		if err := needTangent(req); err != nil {
			return err
		}
		if !has.Has(ode.HasJVPJacY) || (has.Has(ode.HasDfDt) && !has.Has(ode.HasJVPDfDt)) {
			return fmt.Errorf("%s: sensitivities with %s need the second-derivative programs (Programs.JVPJacY, and JVPDfDt for a non-autonomous problem); every problem compiled from formulas has them", req.Name(), rt.Name)
		}
	case engine.Record:
		if err := needCotangent(req); err != nil {
			return err
		}
		if !has.Has(ode.HasJVPVJP) || (has.Has(ode.HasDfDt) && !has.Has(ode.HasDfDtVJP)) {
			return fmt.Errorf("%s: the reverse replay of %s needs the second-derivative cotangent programs (Programs.JVPVJP, and DfDtVJP for a non-autonomous problem); every problem compiled from formulas has them", req.Name(), rt.Name)
		}
	}
	return nil
}

// Prepare builds the ros configuration of the job.
func (ROS) Prepare(spec *engine.Spec) (engine.Plan, error) {
	rt := spec.Method.(*method.Rosenbrock)
	prob := spec.Problem
	rc := ros.Config{Tableau: rt, Dim: prob.Dim, RTol: spec.RTol, ATol: spec.ATol,
		HMax: spec.HMax, H0: spec.H0, MaxSteps: spec.MaxSteps, DenseSave: spec.DenseSave}
	if spec.Controller != nil {
		rc.Controller = *spec.Controller
	} else {
		rc.Controller = control.DefaultPI(rt.EstimateOrder(), rt.QMin, rt.QMax) // the error estimate is O(h^EstimateOrder)
	}
	pl := &rosPlan{spec: spec, cfg: rc, need: ode.HasJacY | spec.Offers&ode.HasDfDt}
	if spec.Job == engine.Sensitivities {
		pl.w = engine.Directions(spec.SensCols, prob.NumParams)
		pl.need |= ode.HasJVP | ode.HasJVPJacY | spec.Offers&ode.HasJVPDfDt
	}
	return pl, nil
}

// rosPlan is cpu-ros's plan of one job.
type rosPlan struct {
	spec *engine.Spec
	cfg  ros.Config
	need ode.ProgramSet
	w    [][]float64 // sensitivities: the parameter direction of each column
}

func (pl *rosPlan) Controller() control.PI { return pl.cfg.Controller }

// config returns the configuration on one worker's own programs.
func (pl *rosPlan) config(need ode.ProgramSet) (ros.Config, *ode.Programs, error) {
	pg, err := programs(pl.spec.Problem, need)
	if err != nil {
		return ros.Config{}, nil, err
	}
	c := pl.cfg
	c.F, c.JacY, c.DfDt = pg.F, pg.JacY, pg.DfDt
	return c, pg, nil
}

// solverConfig returns the configuration of a worker's solver on its
// own programs; with sensitivities, of the augmented state.
func (pl *rosPlan) solverConfig() (ros.Config, *ode.Programs, error) {
	c, pg, err := pl.config(pl.need)
	if err != nil {
		return c, nil, err
	}
	if pl.w != nil {
		c.NS, c.SensW = len(pl.w), pl.w
		c.JVP, c.JVPJacY, c.JVPDfDt = pg.JVP, pg.JVPJacY, pg.JVPDfDt
	}
	return c, pg, nil
}

// NewSolver returns a ros.Solver on the worker's own programs; with
// sensitivities, on the augmented state.
func (pl *rosPlan) NewSolver() (engine.Solver, error) {
	c, _, err := pl.solverConfig()
	if err != nil {
		return nil, err
	}
	sv, err := ros.New(c)
	if err != nil {
		return nil, err
	}
	return sv, nil
}

// NewReplayer returns a ros.Replayer on the worker's own programs.
func (pl *rosPlan) NewReplayer() (engine.Replayer, error) {
	c, pg, err := pl.config(pl.need | ode.HasVJP | ode.HasJVPVJP | pl.spec.Offers&ode.HasDfDtVJP)
	if err != nil {
		return nil, err
	}
	rp, err := ros.NewReplayer(c, pl.spec.Problem.NumParams, pg)
	if err != nil {
		return nil, err
	}
	return rp, nil
}
