package cpu

import "github.com/gradsolve/gradsolve/internal/engine"

// The CPU engines' costs of the derivative jobs (engine.Costs), in
// forward solves on the same engine, measured with
//
//	go test -run XXX -bench DerivativeCosts -benchtime 6x -count 2 .
//
// (package gradsolve; one worker; AMD EPYC, 2 cores shared with other
// jobs, Go 1.26; each iteration times the solve, the sensitivities to
// one and to six quantities, the record and the gradient back to back,
// so the ratios see the same load; raw, three runs:
// bench/results/derivcosts-2026-12-02.txt). The explicit engines on
// 2000 Lorenz trajectories (Tsit5, rtol 1e-8), the Rosenbrock ones on
// 256 Robertson trajectories to t = 10⁴ (Rodas5P, rtol 1e-8). As
// sens1/solve, sens6/solve, record/solve, gradient/solve:
//
//	cpu-erk        1.11–1.44  1.77–2.46  1.05–1.62  2.68–4.10
//	cpu-lanes      1.26–1.37  4.25–4.42  3.78–4.64  1.86–2.06
//	cpu-ros        2.97–4.53  13.5–17.1  0.86–1.61  3.07–5.23
//	cpu-ros-lanes  1.70–1.96  5.44–6.37  1.58–1.81  2.99–3.36
//
// and cpu-ros-lanes again after its replay and reverse walk moved into
// whole rounds of machine code (three runs, -benchtime 6x, a quiet
// machine): 1.61–1.82, 5.36–6.19, 1.45–1.57, 1.96–2.01.
//
// SensColumn is (sens6/solve − 1)/6, the slope where the choice
// matters (a column is cheap on the scalar explicit engine, whose solve
// is dominated by the per-step work around f; in lanes the solve runs
// whole rounds in machine code but the recording does not yet: it runs
// the Go lane driver).
var (
	erkCosts      = engine.DefaultCosts
	lanesCosts    = engine.Costs{SensColumn: 0.55, Record: 4.2, Gradient: 2.0, Source: "cpu-lanes', BenchmarkDerivativeCosts on 2000 Lorenz trajectories"}
	rosCosts      = engine.Costs{SensColumn: 2.4, Record: 1.0, Gradient: 3.5, Source: "cpu-ros', BenchmarkDerivativeCosts on 256 Robertson trajectories"}
	rosLanesCosts = engine.Costs{SensColumn: 0.8, Record: 1.5, Gradient: 2.0, Source: "cpu-ros-lanes', BenchmarkDerivativeCosts on 256 Robertson trajectories"}
)

// Costs returns cpu-erk's measured costs (engine.DefaultCosts).
func (ERK) Costs(*engine.Request) engine.Costs { return erkCosts }

// Costs returns cpu-lanes' measured costs.
func (Lanes) Costs(*engine.Request) engine.Costs { return lanesCosts }

// Costs returns cpu-ros' measured costs.
func (ROS) Costs(*engine.Request) engine.Costs { return rosCosts }

// Costs returns cpu-ros-lanes' measured costs.
func (ROSLanes) Costs(*engine.Request) engine.Costs { return rosLanesCosts }
