// Package cpu registers the reference engines, which run one trajectory
// after another in Go on each worker:
//
//	cpu-erk   explicit Runge–Kutta methods (package erk)
//	cpu-ros   Rosenbrock methods (package ros)
//
// Each runs every method of its family, all four jobs (forward,
// sensitivities, record, replay-adjoint), and is its own reference in
// the conformance suite: every later engine of the same arithmetic is
// compared with these bit for bit. It also registers
//
//	cpu-lanes     explicit methods, eight trajectories per worker in
//	              SIMD lanes (two AVX2 registers per value), with
//	              cpu-erk's bits (Lanes)
//	cpu-ros-lanes Rosenbrock methods in eight lanes, with cpu-ros's bits
//	              (ROSLanes)
package cpu

import (
	"fmt"

	"github.com/gradsolve/gradsolve/internal/engine"
	"github.com/gradsolve/gradsolve/ode"
)

func init() {
	engine.Register(ERK{})
	engine.Register(ROS{})
	// Eight lanes, two groups of four whose chains the machine code
	// interleaves: 7–12% less time per step than four on Lorenz
	// (erk.BenchmarkLanesWidth).
	engine.Register(NewLanes("cpu-lanes", 2*ode.LaneWidth, Priority+1, false))
	// Eight lanes for the Rosenbrock methods too (BenchmarkLanesRobertson
	// in package ros).
	engine.Register(NewROSLanes("cpu-ros-lanes", 2*ode.LaneWidth, Priority+1, false))
}

// Priority is the reference engines' priority: an engine that does
// their arithmetic faster registers above it.
const Priority = 0

// errFloat32 is every CPU engine's refusal of Options.Precision
// float32 (engine.Request.Float32).
var errFloat32 = fmt.Errorf("Options.Precision float32: the CPU engines compute in float64 only: their core (packages ivp, erk, ros, control and the compiled tapes) is written for float64, not generic over the float type, so a float32 CPU engine would be a second copy of all of it; float32 runs on the cuda engine")

// needFloat64 returns errFloat32 for a float32 request, else nil.
func needFloat64(req *engine.Request) error {
	if req.Float32 {
		return errFloat32
	}
	return nil
}

// needTangent returns why a sensitivity job cannot run on prob without a
// tangent program (ode.Programs.JVP), or nil.
func needTangent(req *engine.Request) error {
	switch {
	case req.Problem.Programs == nil:
		return fmt.Errorf("%s: sensitivities need a tangent program (Problem.Programs with JVP); compile the problem from formulas or supply one", req.Name())
	case !req.Offers.Has(ode.HasJVP):
		return fmt.Errorf("%s: sensitivities need a tangent program: Problem.Programs has no JVP", req.Name())
	}
	return nil
}

// needCotangent returns why a recording (made for the reverse replay)
// cannot run on prob without a cotangent program (ode.Programs.VJP), or
// nil.
func needCotangent(req *engine.Request) error {
	switch {
	case req.Problem.Programs == nil:
		return fmt.Errorf("%s: Record needs a cotangent program (Problem.Programs with VJP); compile the problem from formulas or supply one", req.Name())
	case !req.Offers.Has(ode.HasVJP):
		return fmt.Errorf("%s: Record needs a cotangent program: Problem.Programs has no VJP", req.Name())
	}
	return nil
}

// programs returns one worker's programs and checks that they set what
// the problem declared (Problem.Offers) for the job: a declaration that
// Programs does not keep is an error, never a nil call.
func programs(prob *ode.Problem, need ode.ProgramSet) (*ode.Programs, error) {
	pg := prob.Programs()
	if pg == nil || pg.F == nil {
		return nil, fmt.Errorf("%s: Problem.Programs returned no right-hand side (Programs.F)", name(prob))
	}
	if got := pg.Set(); !got.Has(need) {
		return nil, fmt.Errorf("%s: Problem.Programs sets %v, but the job needs %v (Problem.Offers = %v)", name(prob), got, need, prob.Offers)
	}
	return pg, nil
}

func name(prob *ode.Problem) string {
	if prob.Name == "" {
		return "unnamed problem"
	}
	return prob.Name
}

// augTol tiles the state's tolerances over the augmented state (y, S_1,
// …, S_ns): component d of every column takes the tolerance of
// component d.
func augTol(tol []float64, ns int) []float64 {
	dim := len(tol)
	out := make([]float64, dim*(1+ns))
	for b := 0; b <= ns; b++ {
		copy(out[b*dim:], tol)
	}
	return out
}
