// Package ode holds the vocabulary every gradsolve engine shares: the
// right-hand-side contract Func, the Problem that carries it with its
// names and defaults, and the per-trajectory Status and Stats.
//
// It imports nothing else of gradsolve, so problem builders (the built-in
// systems, the symbolic front end) and engines can all depend on it.
package ode
