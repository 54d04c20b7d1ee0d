package cpu

import (
	"fmt"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/erk"
	"github.com/gradsolve/gradsolve/internal/engine"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
)

// ERK is the engine cpu-erk: explicit Runge–Kutta methods (any valid
// *method.Tableau) on package erk.
type ERK struct{}

// Name returns "cpu-erk".
func (ERK) Name() string { return "cpu-erk" }

// Priority returns Priority.
func (ERK) Priority() int { return Priority }

// Reference returns "": cpu-erk is the reference of its arithmetic.
func (ERK) Reference() string { return "" }

// Runs reports whether m is an explicit Runge–Kutta tableau.
func (ERK) Runs(m method.Method) bool { return m.Family() == method.ExplicitFamily }

// DefaultMethod returns method.Tsit5.
func (ERK) DefaultMethod(*ode.Problem) method.Method { return method.Tsit5 }

// Serves refuses save times from a continuous extension (the explicit
// methods re-step them), sensitivities without a tangent program, and a
// recording without a cotangent program.
func (ERK) Serves(req *engine.Request) error {
	if err := needFloat64(req); err != nil {
		return err
	}
	if req.DenseSave {
		return fmt.Errorf("DenseSave needs a Rosenbrock method with a continuous extension (Rodas5P, Rosenbrock23); %s re-steps its save times", req.Method.MethodName())
	}
	switch req.Job {
	case engine.Sensitivities:
		return needTangent(req)
	case engine.Record:
		return needCotangent(req)
	}
	return nil
}

// Prepare builds the erk configuration of the job; for sensitivities,
// the augmented one and, where the problem has it, the fused
// sensitivity program (Problem.SensF), compiled once for every worker.
func (ERK) Prepare(spec *engine.Spec) (engine.Plan, error) {
	tb := spec.Method.(*method.Tableau)
	prob := spec.Problem
	cfg := erk.Config{Tableau: tb, F: prob.F, Dim: prob.Dim, RTol: spec.RTol, ATol: spec.ATol,
		HMax: spec.HMax, H0: spec.H0, MaxSteps: spec.MaxSteps}
	if spec.Controller != nil {
		cfg.Controller = *spec.Controller
	} else {
		cfg.Controller = control.DefaultPI(tb.Order, tb.QMin, tb.QMax)
	}
	pl := &erkPlan{spec: spec, cfg: cfg}
	if spec.Job == engine.Sensitivities {
		ns := len(spec.SensCols)
		pl.cfg.Dim = prob.Dim * (1 + ns)
		pl.cfg.RTol, pl.cfg.ATol = augTol(spec.RTol, ns), augTol(spec.ATol, ns)
		pl.cfg.NormDim = prob.Dim // the state alone chooses the mesh
		if spec.ErrorTest {
			pl.cfg.NormDim = pl.cfg.Dim
		}
		pl.w = engine.Directions(spec.SensCols, prob.NumParams)
		if prob.SensF != nil {
			var err error
			if pl.fused, err = prob.SensF(spec.SensCols); err != nil {
				return nil, fmt.Errorf("%s: building the sensitivity system: %w", spec.Name(), err)
			}
		}
	}
	return pl, nil
}

// erkPlan is cpu-erk's plan of one job.
type erkPlan struct {
	spec *engine.Spec
	cfg  erk.Config
	w    [][]float64 // sensitivities: the parameter direction of each column
	// fused, when the problem has SensF, makes each worker's augmented
	// right-hand side as one program.
	fused func() ode.Func
}

func (pl *erkPlan) Controller() control.PI { return pl.cfg.Controller }

// NewSolver returns an erk.Solver on the worker's own evaluator of f
// (a tape's registers), or of the augmented system.
func (pl *erkPlan) NewSolver() (engine.Solver, error) {
	c, _, _, err := pl.workerConfig()
	if err != nil {
		return nil, err
	}
	sv, err := erk.New(c)
	if err != nil {
		return nil, err
	}
	return sv, nil
}

// workerConfig returns the configuration of one worker's solver, on
// its own evaluator of f (a tape's registers) or of the augmented
// system, and for the state's own f (not sensitivities) the same
// Programs' lane form of f and its kernel, if it has them.
func (pl *erkPlan) workerConfig() (erk.Config, ode.LaneFunc, *ode.LaneKernel, error) {
	c := pl.cfg
	prob := pl.spec.Problem
	var flanes ode.LaneFunc
	var kernel *ode.LaneKernel
	switch {
	case pl.spec.Job != engine.Sensitivities:
		c.F = prob.F
		if prob.Programs != nil {
			if pg := prob.Programs(); pg != nil && pg.F != nil {
				c.F, flanes, kernel = pg.F, pg.FLanes, pg.Kernel
			}
		}
	case pl.fused != nil:
		c.F = pl.fused()
	default:
		pg, err := programs(prob, ode.HasJVP)
		if err != nil {
			return c, nil, nil, err
		}
		c.F = augmented(pg.F, pg.JVP, pl.w, prob.Dim)
	}
	return c, flanes, kernel, nil
}

// augmented returns the right-hand side of the sensitivity system
// evaluated column by column: f, then one tangent J_y·S_c + J_p·w_c per
// column, each at the stage's own state.
func augmented(f ode.Func, jvp func(t float64, y, p, v, w, out []float64), w [][]float64, dim int) ode.Func {
	return func(t float64, ya, p, dya []float64) {
		y := ya[:dim]
		f(t, y, p, dya[:dim])
		for c := range w {
			o := dim * (1 + c)
			jvp(t, y, p, ya[o:o+dim], w[c], dya[o:o+dim])
		}
	}
}

// NewReplayer returns an erk.Replayer on the worker's own programs.
func (pl *erkPlan) NewReplayer() (engine.Replayer, error) {
	pg, err := programs(pl.spec.Problem, ode.HasVJP)
	if err != nil {
		return nil, err
	}
	c := pl.cfg
	c.F = pg.F
	rp, err := erk.NewReplayer(c, pl.spec.Problem.NumParams, pg.VJP)
	if err != nil {
		return nil, err
	}
	return rp, nil
}
