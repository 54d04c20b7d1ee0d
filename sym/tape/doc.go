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
// itself (guarded: see direct.go). Set GRADSOLVE_JIT=off in the
// environment to keep the interpreter.
//
// EvalFLanes (and EvalJVPLanes, EvalVJPLanes, EvalJVPVJPLanes) evaluate
// a program for LaneWidth trajectories at once on lane-major data; where
// the processor has AVX2 they run packed machine code, one trajectory a
// lane, each lane with the bits the scalar evaluator gives it alone
// (lanes.go).
//
// Build compiles f from a sym.Model; the derivative programs the
// engines may need — J_y·v + J_p·w, uᵀJ_y and uᵀJ_p, the dense J_y,
// ∂f/∂t and the second derivatives of Rosenbrock sensitivities — are
// derived and compiled when first asked for (see Set), so that building
// costs time and memory linear in the size of f. Set.Problem wraps them
// as an ode.Problem.
//
// Every evaluator checks that the slices it is given are at least as
// long as the program needs, and panics naming the program, the
// argument and both lengths otherwise ("tape: f: len(dy) = 5, want at
// least 6"): a short slice is a programmer error of the Go API, as an
// index out of range is, and no evaluator reads or writes past a
// slice's length, on machine code or on the interpreter. Longer slices
// are allowed; their first values are used.
package tape

//go:generate go run gen_fused.go
