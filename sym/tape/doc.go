// Package tape compiles outputs of a symbolic graph (package sym) into
// straight-line register code and evaluates it without allocating.
//
// A Program has a register file laid out as
//
//	[ t | y (Dim) | p (NumParams) | v (Dim) | w (NumParams) | u (Dim) | constants | temporaries ]
//
// where v, w and u are the seed inputs of derivative programs (tangents
// of y and p, cotangent of f). Each instruction applies one operation of
// the graph (sym.Eval's arithmetic) to registers and writes one register;
// temporaries are reused once their last reader has run, so the register
// file stays small even for large graphs. Evaluation copies the inputs
// in, runs the instructions in order and copies the outputs out; it
// allocates nothing. A Program is immutable and safe to share; each
// goroutine needs its own register file (NewRegisters).
//
// On linux/amd64 a program is also translated into machine code when it
// is compiled, and evaluation runs that code instead of the interpreter,
// with the same results bit for bit: a right-hand side from a problem
// file then costs about what the same formulas written in Go cost.
// NewFunc hands out f-like programs as an ode.Func that is that code
// itself. Set GRADSOLVE_JIT=off in the environment to keep the
// interpreter.
//
// Build compiles the five programs every engine may need from a
// sym.Model — f, J_y·v + J_p·w, uᵀJ_y and uᵀJ_p, the dense J_y, and
// ∂f/∂t — and Set.Problem wraps them as an ode.Problem.
package tape

//go:generate go run gen_fused.go
