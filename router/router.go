// Package router chooses how gradsolve serves what is asked: which
// registered engine runs a job (Pick), and which mode of
// differentiation computes a gradient (Choose), and it says why.
//
// The engine comes from the engines' own capabilities (package
// internal/engine: each says which methods it runs and which requests
// it serves, and why not). Among those that serve a request the router
// takes the one of highest priority, and its reason names the engines
// it passed over and why. A user can name the engine; one that cannot
// serve the request is an error, not a silent substitution.
//
// The mode comes from what the engines can serve — forward
// sensitivities and the reverse replay need different derivative
// programs — and, where both can run, from a cost model each engine
// states for itself (engine.Coster, measured by BenchmarkDerivativeCosts
// in package gradsolve; figures in bench/results), in forward solves on
// that engine:
//
//	forward sensitivities for k quantities  ≈ 1 + SensColumn·k
//	reverse replay for r scalar outputs      ≈ Record + Gradient·r
//
// so forward mode wins for few parameters and many outputs, reverse
// mode for a scalar loss of many parameters. A user can override the
// choice; the Decision records it.
package router

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gradsolve/gradsolve/internal/engine"
)

// Mode is a way to compute derivatives.
type Mode int

const (
	// Auto lets the router choose.
	Auto Mode = iota
	// Forward integrates sensitivities with the state.
	Forward
	// Reverse records the mesh and runs the discrete adjoint.
	Reverse
)

func (m Mode) String() string {
	switch m {
	case Auto:
		return "auto"
	case Forward:
		return "forward"
	case Reverse:
		return "reverse"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode reads "auto", "forward" or "reverse".
func ParseMode(s string) (Mode, error) {
	for _, m := range []Mode{Auto, Forward, Reverse} {
		if m.String() == s {
			return m, nil
		}
	}
	return Auto, fmt.Errorf("router: unknown mode %q: want auto, forward or reverse", s)
}

// ErrNoEngine is wrapped by Pick's errors when no registered engine
// runs the request's method at all.
var ErrNoEngine = errors.New("no registered engine runs the method")

// Route is the engine that runs one job, and why; or, with Err set, why
// no engine can run it.
type Route struct {
	// Engine names the engine ("cpu-erk", "cpu-ros").
	Engine string
	// Reason says why that engine.
	Reason string
	// Costs are the engine's costs of the derivative jobs
	// (engine.CostsOf), which Choose weighs; zero: engine.DefaultCosts.
	Costs engine.Costs
	// Err, when not nil, says why the job cannot run: Engine and
	// Reason are then empty.
	Err error
}

// Pick returns the route of req among engines (in order of preference,
// as engine.All gives them): the first engine that runs req.Method,
// serves req and, if it is an engine.Preferrer, prefers it; failing
// that, the first that serves it. The reason names the engines passed
// over and why; when none serves, the error is the refusal of the one
// engine that runs the method, or the one refusal every such engine
// that can run here gives, else every such engine's refusal joined;
// when none runs the method at all, it wraps ErrNoEngine.
func Pick(engines []engine.Engine, req *engine.Request) (engine.Engine, Route) {
	var runs []engine.Engine
	var refused, unpreferred []string
	var errs []error
	var fallback engine.Engine
	reason := func(e engine.Engine, passed []string) Route {
		r := fmt.Sprintf("the registered engine for %s methods", req.Method.Family())
		if len(passed) > 0 {
			r += "; passed over: " + strings.Join(passed, "; ")
		}
		return Route{Engine: e.Name(), Reason: r, Costs: engine.CostsOf(e, req)}
	}
	for _, e := range engines {
		if !e.Runs(req.Method) {
			continue
		}
		runs = append(runs, e)
		err := e.Serves(req)
		if err != nil {
			refused = append(refused, e.Name()+": "+err.Error())
			errs = append(errs, err)
			continue
		}
		if p, ok := e.(engine.Preferrer); ok {
			if why := p.Prefers(req); why != nil {
				if fallback == nil {
					fallback = e
				}
				unpreferred = append(unpreferred, e.Name()+": "+why.Error())
				continue
			}
		}
		return e, reason(e, append(refused, unpreferred...))
	}
	if fallback != nil {
		return fallback, reason(fallback, refused)
	}
	switch len(runs) {
	case 0:
		var names []string
		for _, e := range engines {
			names = append(names, e.Name())
		}
		return nil, Route{Err: fmt.Errorf("%w %s (of the %s family); the registered engines are %s",
			ErrNoEngine, req.Method.MethodName(), req.Method.Family(), strings.Join(names, ", "))}
	case 1:
		return nil, Route{Err: errs[0]}
	}
	if err := sameRefusal(runs, errs); err != nil {
		return nil, Route{Err: err}
	}
	return nil, Route{Err: fmt.Errorf("no registered engine can serve the %s job of %s with %s: %s", req.Job, req.Name(), req.Method.MethodName(), strings.Join(refused, "; "))}
}

// sameRefusal returns the refusal errs[i] of engine runs[i] when every
// engine that can run here (engine.Availability) refused for the same
// reason — a lane engine and its reference, which serve the same jobs —
// else nil. An engine that cannot run here counts only where none can.
func sameRefusal(runs []engine.Engine, errs []error) error {
	var here []error
	for i, e := range runs {
		if a, ok := e.(engine.Availability); !ok || a.Available() == nil {
			here = append(here, errs[i])
		}
	}
	if len(here) == 0 {
		here = errs
	}
	for _, err := range here[1:] {
		if err.Error() != here[0].Error() {
			return nil
		}
	}
	return here[0]
}

// Request says what a gradient asks.
type Request struct {
	// NumWrt is the number of quantities to differentiate by
	// (parameters and initial values): the sensitivity columns forward
	// mode would integrate.
	NumWrt int
	// NumOutputs is the number of scalar outputs whose derivatives are
	// wanted (1 for a scalar loss).
	NumOutputs int
	// Forward and Reverse are the routes of the two modes: the engine
	// that would integrate the sensitivities, and the engine that
	// would record and replay, as Pick found them (with Err set, that
	// mode cannot run).
	Forward, Reverse Route
	// MethodReason says why the method runs; it is appended to the
	// Decision's reason.
	MethodReason string
	// Mode overrides the choice unless Auto.
	Mode Mode
}

// Decision is the router's answer.
type Decision struct {
	Mode Mode
	// Engine is the engine that runs: the chosen mode's route.
	Engine string
	// Reason says why this mode, with the estimated costs, and why the
	// method.
	Reason string
	// EngineReason says why this engine (the route's reason).
	EngineReason string
	// Overridden is set when the user named the mode.
	Overridden bool
}

// Choose decides how to serve req: the mode the user named, which must
// be able to run; else the cheaper of the modes that can run. It
// returns the error of the route that cannot run when the user named
// its mode, or when neither mode can run (then that of the mode the
// cost model prefers).
func Choose(req Request) (Decision, error) {
	fc, rc := costsOf(req.Forward), costsOf(req.Reverse)
	fwd := 1 + fc.SensColumn*float64(req.NumWrt)
	rev := rc.Record + rc.Gradient*float64(req.NumOutputs)
	costs := fmt.Sprintf("estimated cost, in forward solves: forward sensitivities %.1f (%d columns), reverse replay %.1f (%d outputs)",
		fwd, req.NumWrt, rev, req.NumOutputs)
	cheaper := Forward
	if fwd > rev {
		cheaper = Reverse
	}
	route := func(m Mode) Route {
		if m == Forward {
			return req.Forward
		}
		return req.Reverse
	}
	other := func(m Mode) Mode { return Forward + Reverse - m }
	var d Decision
	switch {
	case req.Mode != Auto:
		if err := route(req.Mode).Err; err != nil {
			return Decision{}, err
		}
		d.Mode, d.Overridden = req.Mode, true
		d.Reason = "mode named by the user; " + costs
	case route(cheaper).Err == nil:
		d.Mode = cheaper
		if cheaper == Forward {
			d.Reason = "forward sensitivities are cheaper: " + costs
		} else {
			d.Reason = "reverse replay is cheaper: " + costs
		}
	case route(other(cheaper)).Err == nil:
		d.Mode = other(cheaper)
		d.Reason = fmt.Sprintf("%s mode, since %s mode cannot run (%v); %s", d.Mode, cheaper, route(cheaper).Err, costs)
	default:
		return Decision{}, route(cheaper).Err
	}
	r := route(d.Mode)
	d.Engine, d.EngineReason = r.Engine, r.Reason
	if c := costsOf(r); c.Source != "" {
		d.Reason += " (costs: " + c.Source + ")"
	}
	d.Reason += "; engine " + d.Engine
	if req.MethodReason != "" {
		d.Reason += ": " + req.MethodReason
	}
	return d, nil
}

// costsOf returns the route's costs, engine.DefaultCosts where it
// carries none.
func costsOf(r Route) engine.Costs {
	if r.Costs == (engine.Costs{}) {
		return engine.DefaultCosts
	}
	return r.Costs
}
