package gradsolve

import (
	"fmt"
	"sync/atomic"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/erk"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ros"
)

// engine solves one trajectory: erk.Solver (explicit Runge–Kutta) and
// ros.Solver (Rosenbrock) both are.
type engine interface {
	Solve(tr *erk.Trajectory, out *erk.Output, stop *atomic.Bool)
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
