package gradsolve

import (
	"fmt"
	"sync/atomic"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/erk"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ros"
	"github.com/gradsolve/gradsolve/router"
)

// engine solves one trajectory: erk.Solver (explicit Runge–Kutta) and
// ros.Solver (Rosenbrock) both are.
type engine interface {
	Solve(tr *ivp.Trajectory, out *ivp.Output, stop *atomic.Bool)
}

// EngineChoice is the engine and method a solve runs, as Solve, Record
// and LossGradient choose them from the problem and the options.
type EngineChoice struct {
	// Engine names the engine, as Result.Engine does: "cpu-erk"
	// (explicit Runge–Kutta) or "cpu-ros" (Rosenbrock).
	Engine string
	// Method is the explicit tableau (Options.Method, or method.Tsit5);
	// nil on the Rosenbrock engine.
	Method *method.Tableau
	// Rosenbrock is the Rosenbrock method; nil on the explicit engine.
	Rosenbrock *method.Rosenbrock
	// Reason says why, as Result.Reason does.
	Reason string
}

// ChooseEngine returns the engine and method Solve, Record and
// LossGradient run prob on with opts (nil: the zero Options): the method
// the options name; with none, Rodas5P for a problem marked stiff that
// has a Jacobian program (Problem.Programs with JacY), else Tsit5. It
// returns an error wrapping ErrInput when the options ask for both
// kinds of method, or for a Rosenbrock method on a problem without a
// Jacobian program. A caller that sizes or plans a job before running
// it (the command's memory check) asks here, so that its plan is the
// library's.
func ChooseEngine(prob *Problem, opts *Options) (EngineChoice, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	rt, reason, err := chooseRosenbrock(prob, &o)
	if err != nil {
		return EngineChoice{}, err
	}
	if rt != nil {
		return EngineChoice{Engine: "cpu-ros", Rosenbrock: rt, Reason: reason}, nil
	}
	tb := o.Method
	if tb == nil {
		tb = method.Tsit5
	}
	return EngineChoice{Engine: "cpu-erk", Method: tb, Reason: reason}, nil
}

// GradientDecision returns how LossGradient differentiates prob with
// opts (nil: the zero Options): the router's decision for the columns
// Options.GradientWrt names (every parameter and initial value when
// nil) and Options.Mode, on the engine ChooseEngine picks. It returns
// an error wrapping ErrInput for malformed columns or options that
// ChooseEngine refuses.
func GradientDecision(prob *Problem, opts *Options) (router.Decision, error) {
	d, _, err := gradientDecision(prob, opts)
	return d, err
}

// gradientDecision is GradientDecision, with the columns.
func gradientDecision(prob *Problem, opts *Options) (router.Decision, []Wrt, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	wrt, err := gradientWrt(prob, o.GradientWrt)
	if err != nil {
		return router.Decision{}, nil, err
	}
	ch, err := ChooseEngine(prob, &o)
	if err != nil {
		return router.Decision{}, nil, err
	}
	d := router.Choose(router.Request{NumWrt: len(wrt), NumOutputs: 1, Engine: ch.Engine, EngineReason: ch.Reason, Mode: o.Mode})
	return d, wrt, nil
}

// chooseRosenbrock decides whether the solve runs a Rosenbrock method:
// the one the options name, or Rodas5P for a problem marked stiff when
// no method is named and the problem has a Jacobian program. It returns
// nil for the explicit engine, and the reason either way.
func chooseRosenbrock(prob *Problem, o *Options) (*method.Rosenbrock, string, error) {
	hasJac := false
	if prob.Programs != nil {
		if pg := prob.Programs(); pg != nil && pg.JacY != nil {
			hasJac = true
		}
	}
	switch {
	case o.Method != nil && o.Rosenbrock != nil:
		return nil, "", inputErr("Options.Method (%s) and Options.Rosenbrock (%s) are both set: choose one", o.Method.Name, o.Rosenbrock.Name)
	case o.Rosenbrock != nil:
		if !hasJac {
			return nil, "", inputErr("%s: %s needs the Jacobian program (Problem.Programs with JacY); compile the problem from formulas or supply one", nameOf(prob), o.Rosenbrock.Name)
		}
		return o.Rosenbrock, fmt.Sprintf("%s requested", o.Rosenbrock.Name), nil
	case o.Method != nil:
		return nil, fmt.Sprintf("%s requested", o.Method.Name), nil
	case prob.Stiff && hasJac:
		return method.Rodas5P, "the problem is marked stiff: Rodas5P, the default stiff method", nil
	case prob.Stiff:
		return nil, "the problem is marked stiff but has no Jacobian program, so it runs the explicit default Tsit5, whose steps follow stability", nil
	}
	return nil, "Tsit5, the default for problems not marked stiff", nil
}

// rosConfig builds the Rosenbrock configuration from the explicit one
// (tolerances, bounds and budget are shared) and checks it.
func rosConfig(prob *Problem, rt *method.Rosenbrock, cfg erk.Config, userCtl *control.PI) (ros.Config, error) {
	rc := ros.Config{Tableau: rt, Dim: cfg.Dim, RTol: cfg.RTol, ATol: cfg.ATol,
		HMax: cfg.HMax, H0: cfg.H0, MaxSteps: cfg.MaxSteps}
	if userCtl != nil {
		rc.Controller = *userCtl
	} else {
		rc.Controller = control.DefaultPI(rt.EstimateOrder(), rt.QMin, rt.QMax) // the error estimate is O(h^EstimateOrder)
	}
	pg := prob.Programs()
	rc.F, rc.JacY, rc.DfDt = pg.F, pg.JacY, pg.DfDt
	if _, err := ros.New(rc); err != nil {
		return rc, fmt.Errorf("%w: %w", ErrInput, err)
	}
	return rc, nil
}
