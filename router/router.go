// Package router chooses how gradsolve computes what is asked — which
// mode of differentiation — and says why and on which engine.
//
// Its first form knows the two Go CPU engines — explicit Runge–Kutta
// (package erk) and Rosenbrock (package ros), which the choice of method
// selects and the Decision reports — and decides between forward
// sensitivities and the reverse replay from a cost model measured on the
// explicit engine
// (BenchmarkLorenzDerivatives; figures in bench/results):
//
//	forward sensitivities for k quantities  ≈ (1 + SensCost·k) forward solves
//	reverse replay for r scalar outputs      ≈ RecordCost + GradientCost·r forward solves
//
// so forward mode wins for few parameters and many outputs, reverse
// mode for a scalar loss of many parameters. A user can override the
// choice; the Decision records it.
package router

import "fmt"

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

// Costs of the derivative jobs in units of one forward solve, measured
// on 10⁴ Lorenz trajectories (BenchmarkLorenzDerivatives, one worker):
// one-parameter sensitivities 2.0×, record 0.8×, reverse gradient 2.1×.
const (
	SensCost     = 1.0 // each sensitivity column adds about one forward solve
	RecordCost   = 0.8
	GradientCost = 2.1
)

// Request says what is asked.
type Request struct {
	// NumWrt is the number of quantities to differentiate by
	// (parameters and initial values): the sensitivity columns forward
	// mode would integrate.
	NumWrt int
	// NumOutputs is the number of scalar outputs whose derivatives are
	// wanted (1 for a scalar loss).
	NumOutputs int
	// Engine is the engine the solve will run, as the choice of method
	// made it: "cpu-erk" (explicit Runge–Kutta) or "cpu-ros"
	// (Rosenbrock). Empty means "cpu-erk". The router does not choose
	// the engine — the method does (gradsolve's Options.Method and
	// Options.Rosenbrock, or a problem marked stiff) — it reports it, so
	// the Decision names the engine that runs.
	Engine string
	// EngineReason says why that engine runs (the method choice's
	// reason); it is appended to the Decision's reason.
	EngineReason string
	// Mode overrides the choice unless Auto.
	Mode Mode
}

// Decision is the router's answer.
type Decision struct {
	Mode Mode
	// Engine is the engine that runs: Request.Engine, or "cpu-erk".
	Engine string
	// Reason says why, with the estimated costs.
	Reason string
	// Overridden is set when the user named the mode.
	Overridden bool
}

// Choose decides how to serve req.
func Choose(req Request) Decision {
	d := Decision{Engine: req.Engine}
	if d.Engine == "" {
		d.Engine = "cpu-erk"
	}
	fwd := 1 + SensCost*float64(req.NumWrt)
	rev := RecordCost + GradientCost*float64(req.NumOutputs)
	costs := fmt.Sprintf("estimated cost, in forward solves: forward sensitivities %.1f (%d columns), reverse replay %.1f (%d outputs)",
		fwd, req.NumWrt, rev, req.NumOutputs)
	switch {
	case req.Mode != Auto:
		d.Mode, d.Overridden = req.Mode, true
		d.Reason = "mode named by the user; " + costs
	case fwd <= rev:
		d.Mode = Forward
		d.Reason = "forward sensitivities are cheaper: " + costs
	default:
		d.Mode = Reverse
		d.Reason = "reverse replay is cheaper: " + costs
	}
	if d.Engine != "cpu-erk" {
		d.Reason += " (costs measured on the explicit engine)"
	}
	d.Reason += "; engine " + d.Engine
	if req.EngineReason != "" {
		d.Reason += ": " + req.EngineReason
	}
	return d
}
