// Package jit holds what run-time machine code needs on amd64: an
// encoder for the few x86-64 instructions gradsolve emits (scalar SSE2
// and AVX arithmetic, loads and stores), executable memory, and the
// assembly trampolines Go code calls such code through.
//
// Two packages generate code with it: sym/tape translates a program
// (a right-hand side and its derivatives) into straight-line scalar
// code, and erk the stage sums of a Runge–Kutta step into unrolled AVX
// code. Both do, operation for operation, what their Go counterparts do,
// so the results are the same to the bit.
//
// The encoder is plain Go and works on any platform; running code
// needs linux/amd64 (Enabled), and AVX code a processor and system that
// support it (HasAVX; HasAVX2 and HasAVX512 answer the same for the
// wider instruction sets, read from CPUID and XCR0 at start-up). GRADSOLVE_JIT=off in the environment turns all
// machine code off.
package jit
