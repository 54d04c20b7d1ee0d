// Package erk integrates one trajectory at a time with an explicit
// embedded Runge–Kutta method given as a tableau (package method), under
// adaptive step-size control (package control).
//
// A Solver owns every work array a solve needs, sized once by New; Solve
// then runs a trajectory's whole adaptive loop without allocating: the
// loop is ivp.Solve's, the Solver its stepper (ivp.Stepper), with the
// stage-sum strategy New chose (generic loops, a generated kernel, or
// machine code). A Solver is not safe for concurrent use: give each
// goroutine its own.
//
// Floating-point contract: every product is rounded before it is added
// (explicit float64 conversions stop the compiler from fusing x*y+z into
// an FMA), so a solve gives bitwise the same numbers on every
// architecture Go supports, and other engines can reproduce it.
package erk
