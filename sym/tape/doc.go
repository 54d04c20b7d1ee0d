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
// Build compiles the five programs every engine may need from a
// sym.Model — f, J_y·v + J_p·w, uᵀJ_y and uᵀJ_p, the dense J_y, and
// ∂f/∂t — and Set.Problem wraps them as an ode.Problem.
package tape

//go:generate go run gen_fused.go
