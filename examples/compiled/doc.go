// Package compiled holds the Go code that `gradsolve gen` writes from
// the problem files in examples/: the right-hand side of each, its
// derivative programs and its fused sensitivity system as plain Go
// functions, and a constructor of its ode.Problem (LorenzProblem,
// HaloProblem, RobertsonProblem, PendulumProblem: the last with sin and cos, computed inline by its lane code too). It is the route of a Go program that
// compiles its model ahead of time, and the Go route of the
// work-precision benchmarks (bench/). Regenerate with
// `go generate ./examples/compiled`; a test fails while a file is stale.
package compiled

//go:generate go run ../../cmd/gradsolve gen ../lorenz.ode -package compiled -o lorenz_gen.go
//go:generate go run ../../cmd/gradsolve gen ../halo.ode -package compiled -o halo_gen.go
//go:generate go run ../../cmd/gradsolve gen ../robertson.ode -package compiled -o robertson_gen.go
//go:generate go run ../../cmd/gradsolve gen ../pendulum.ode -package compiled -o pendulum_gen.go
