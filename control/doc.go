// Package control holds the step-size control shared by every gradsolve
// engine: the error norm, the PI step-size controller and the automatic
// initial step. It never evaluates a right-hand side except in
// InitialStep, which needs one trial evaluation, and it never allocates.
//
// The scaled error of a step is the weighted RMS norm
//
//	err = sqrt( (1/N) Σ_i ( e_i / sc_i )² ),  sc_i = atol_i + rtol_i·max(|y_i|, |y1_i|),
//
// where e is the embedded error estimate, y the state at the start of
// the step and y1 the proposed state (Hairer, Nørsett & Wanner I, §II.4,
// eq. 4.11), or for DP8 Hairer's combined form of dop853. A step is
// accepted when err ≤ 1. Norm computes it, for every engine (the
// machine-code stage sums of package erk form the squared terms
// themselves and finish through NormOfSquares); the controller receives
// err.
package control
