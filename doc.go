// Package gradsolve solves ensembles of small ordinary differential
// equations
//
//	dy/dt = f(t, y, p),  y(t0) = y0,  y ∈ ℝ^Dim, p ∈ ℝ^m,
//
// fast: thousands to millions of trajectories, each with its own
// initial state, parameters and time span, each with its own adaptive
// step size, spread over all cores.
//
// A Problem carries the right-hand side f(t, y, p, dy) for one
// trajectory; an Ensemble says which trajectories to solve; Options
// choose the method (Tsit5 by default; DP5, Vern7, DP8) and the
// tolerances. Solve returns a Result with the final states, the states
// at requested save times, and per-trajectory status and statistics. A
// trajectory that fails (step budget exhausted, non-finite values, step
// size underflow) gets its own status and error while the rest of the
// ensemble completes.
//
// Layout of every ensemble array is row-major: component j of
// trajectory i of an n×Dim array is at index i·Dim + j; save time k of
// trajectory i in the n×K×Dim array Result.Saved is at (i·K + k)·Dim + j.
//
// Results are bitwise identical for any number of workers.
package gradsolve
