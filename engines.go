package gradsolve

import (
	"fmt"
	"strings"

	"github.com/gradsolve/gradsolve/internal/engine"
	_ "github.com/gradsolve/gradsolve/internal/engine/cpu" // registers cpu-erk, cpu-ros and cpu-lanes
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/router"
)

// The engines are values in a registry (package internal/engine): each
// engine's package registers it in its init function, and this file
// links the packages in. An engine joins by adding its package here —
// behind a build tag of its own (a GPU engine) in a file of its own, so
// that an untagged build simply lacks it.

// Engines returns the names of the registered engines, in the order the
// router prefers them: the names Options.Engine accepts.
func Engines() []string { return engine.Names() }

// EngineChoice is the engine and method a solve runs, as Solve, Record
// and LossGradient choose them from the problem and the options.
type EngineChoice struct {
	// Engine names the engine, as Result.Engine does: "cpu-erk"
	// (explicit Runge–Kutta) or "cpu-ros" (Rosenbrock).
	Engine string
	// Method is the method: Options.Method, or the default the reason
	// gives.
	Method method.Method
	// Reason says why the method, as Result.Reason does;
	// EngineReason why the engine, as Result.EngineReason does.
	Reason, EngineReason string
}

// ChooseEngine returns the engine and method Solve runs prob on with
// opts (nil: the zero Options): the method the options name or, with
// none, the default (the named engine's, or Rodas5P for a problem
// marked stiff that offers a Jacobian program, else Tsit5); and the
// engine the options name, or else the registered engine of highest
// priority that runs the method and serves the job (forward, or with
// Options.Sens sensitivities). It returns an error wrapping ErrInput
// when no engine can: the named engine's refusal, or the refusal of the
// engines that run the method, saying why. A caller that sizes or plans
// a job before running it (the command's memory check) asks here, so
// that its plan is the library's. n is the number of trajectories (the
// router leaves an ensemble smaller than the lanes of cpu-lanes to
// cpu-erk); 0 means not known, and then Solve may choose cpu-erk for a
// small ensemble where this says cpu-lanes (the two give the same bits).
func ChooseEngine(prob *Problem, n int, opts *Options) (EngineChoice, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	job := engine.Forward
	if o.Sens != nil {
		job = engine.Sensitivities
	}
	c, err := chooseEngine(prob, &o, job, prob.ProgramSet(), n)
	if err != nil {
		return EngineChoice{}, err
	}
	return c.public(), nil
}

// GradientDecision returns how LossGradient differentiates prob with
// opts (nil: the zero Options): the router's decision for the columns
// Options.GradientWrt names (every parameter and initial value when
// nil) and Options.Mode, from the engines that can serve each mode. It
// returns an error wrapping ErrInput for malformed columns, or when the
// mode named (or, in Auto, either mode) cannot run. n is the number of
// trajectories, as for ChooseEngine (0: not known).
func GradientDecision(prob *Problem, n int, opts *Options) (router.Decision, error) {
	d, _, err := gradientDecision(prob, opts, n)
	return d, err
}

// gradientDecision is GradientDecision for an ensemble of n
// trajectories (0: not known), with the columns.
func gradientDecision(prob *Problem, opts *Options, n int) (router.Decision, []Wrt, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	wrt, err := gradientWrt(prob, o.GradientWrt)
	if err != nil {
		return router.Decision{}, nil, err
	}
	offers := prob.ProgramSet()
	m, reason, err := resolveMethod(prob, &o, offers)
	if err != nil {
		return router.Decision{}, nil, err
	}
	req := router.Request{NumWrt: len(wrt), NumOutputs: 1, MethodReason: reason, Mode: o.Mode}
	for _, r := range []struct {
		job   engine.Job
		route *router.Route
	}{{engine.Sensitivities, &req.Forward}, {engine.Record, &req.Reverse}} {
		er := &engine.Request{Problem: prob, Offers: offers, Method: m, Job: r.job, KeepStages: o.KeepStages, DenseSave: o.DenseSave, N: n}
		if r.job == engine.Sensitivities {
			er.NumSens = len(wrt)
		}
		_, *r.route = route(er, o.Engine)
	}
	d, err := router.Choose(req)
	if err != nil {
		return router.Decision{}, nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	return d, wrt, nil
}

// choice is a resolved method and engine for one job, with the request
// the engine serves.
type choice struct {
	method       method.Method
	reason       string
	engine       engine.Engine
	engineReason string
	req          engine.Request
}

func (c *choice) public() EngineChoice {
	return EngineChoice{Engine: c.engine.Name(), Method: c.method, Reason: c.reason, EngineReason: c.engineReason}
}

// chooseEngine resolves the method and picks the engine of job for prob
// with o; offers is prob.ProgramSet().
func chooseEngine(prob *Problem, o *Options, job engine.Job, offers ode.ProgramSet, n int) (*choice, error) {
	m, reason, err := resolveMethod(prob, o, offers)
	if err != nil {
		return nil, err
	}
	c := &choice{method: m, reason: reason,
		req: engine.Request{Problem: prob, Offers: offers, Method: m, Job: job, DenseSave: o.DenseSave, KeepStages: o.KeepStages, N: n,
			Float32: o.Precision == Float32, Device: o.Device}}
	if o.Sens != nil {
		c.req.NumSens, c.req.ErrorTest = len(o.Sens.Wrt), o.Sens.ErrorTest
	}
	var r router.Route
	c.engine, r = route(&c.req, o.Engine)
	if r.Err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInput, r.Err)
	}
	c.engineReason = r.Reason
	return c, nil
}

// route picks the engine of req: the one named (Options.Engine), which
// must run the method and serve the request, or the router's pick.
func route(req *engine.Request, named string) (engine.Engine, router.Route) {
	if named == "" {
		return router.Pick(engine.All(), req)
	}
	e := engine.Lookup(named)
	switch {
	case e == nil:
		return nil, router.Route{Err: unknownEngine(named)}
	case !e.Runs(req.Method):
		return nil, router.Route{Err: fmt.Errorf("Options.Engine = %q does not run %s (of the %s family)", named, req.Method.MethodName(), req.Method.Family())}
	}
	if err := e.Serves(req); err != nil {
		return nil, router.Route{Err: fmt.Errorf("Options.Engine = %q cannot serve this %s job: %w", named, req.Job, err)}
	}
	return e, router.Route{Engine: named, Reason: "named by Options.Engine", Costs: engine.CostsOf(e, req)}
}

func unknownEngine(name string) error {
	return fmt.Errorf("Options.Engine = %q: no such engine: the registered engines are %s", name, strings.Join(engine.Names(), ", "))
}

// resolveMethod returns the method of a solve and why: Options.Method;
// with none, the named engine's default; else Rodas5P for a problem
// marked stiff that offers a Jacobian program, and Tsit5 otherwise. It
// refuses an engine name nobody registered and a method whose
// coefficients do not validate.
func resolveMethod(prob *Problem, o *Options, offers ode.ProgramSet) (method.Method, string, error) {
	var named engine.Engine
	if o.Engine != "" {
		if named = engine.Lookup(o.Engine); named == nil {
			return nil, "", inputErr("%s", unknownEngine(o.Engine))
		}
	}
	m := o.Method
	switch {
	case !method.IsNil(m):
		if err := m.Validate(); err != nil {
			return nil, "", fmt.Errorf("%w: %w", ErrInput, err)
		}
		return m, fmt.Sprintf("%s requested", m.MethodName()), nil
	case named != nil:
		m = named.DefaultMethod(prob)
		return m, fmt.Sprintf("%s, the default method of engine %s, which Options.Engine names", m.MethodName(), named.Name()), nil
	case prob.Stiff && offers.Has(ode.HasJacY):
		return method.Rodas5P, "the problem is marked stiff: Rodas5P, the default stiff method", nil
	case prob.Stiff:
		return method.Tsit5, "the problem is marked stiff but has no Jacobian program, so it runs the explicit default Tsit5, whose steps follow stability", nil
	}
	return method.Tsit5, "Tsit5, the default for problems not marked stiff", nil
}
