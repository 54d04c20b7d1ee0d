package tape

import (
	"runtime"
	"unsafe"

	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/sym"
)

// Machine code for the tape.
//
// Where the platform allows it (linux/amd64: see jitgen.go and package internal/jit),
// Compile also translates a program into machine code at run time: the
// arithmetic (− + − × ÷, √, |·|, select, comparisons, sign; floor and
// ceil where the processor has SSE4.1) becomes straight-line SSE2
// code that keeps values in the vector registers and reads y, p and the
// seeds straight from the caller's slices; the math functions (exp,
// log, pow, …) and min/max are computed inline too, in pmath's
// straight-line forms in VEX.128 encodings, where the processor has
// AVX2 (jitfunc.go); elsewhere they stay Go calls, run between pieces
// of machine code. Every operation is the IEEE operation the interpreter
// performs, in the same order, so both give the same bits
// (TestJITMatchesInterpreter). No Go compiler is involved: this is the
// run-time route of a problem file, at close to the speed of generated
// Go code. Elsewhere, or with GRADSOLVE_JIT=off in the environment,
// programs run on the interpreter.

// jitArgs holds the base address of every block the machine code reads
// or writes, in the order jit.Call loads them into registers: register
// file, y, p, v, w, u, out, out2.
type jitArgs = [8]unsafe.Pointer

// jitCode is a program as machine code: pieces of machine code and, in
// between, instructions run in Go.
type jitCode struct {
	segs []jitSeg
	// split is the number of outputs written to jitArgs.out; the rest go
	// to jitArgs.out2.
	split int
	// fentry, where not 0, is the program as a function called directly
	// as an ode.Func (see direct.go).
	fentry uintptr
	code   *jit.Code // owns the machine code
	// body, for lane code of one piece, is that piece as straight-line
	// code to inline (see Program.LaneKernel), else nil.
	body []byte
}

// jitSeg is an entry into machine code, or (entry 0) a run of
// instructions evaluated in Go.
type jitSeg struct {
	entry uintptr
	calls []callInstr
}

// callInstr is an instruction evaluated in Go between pieces of machine
// code: R[d] = op(operands), each operand read from input block blk
// (0 the register file, 1 y, 2 p, 3 v, 4 w, 5 u) at offset off.
type callInstr struct {
	op  sym.Op
	d   int32
	blk [3]uint8
	off [3]int32
}

// jitable reports whether the machine code computes op itself (the
// others are Go calls).
func jitable(op sym.Op) bool { return jitableFor(op, 1) }

// jitableFor is jitable for code of the given lanes: lane code needs
// AVX2, which implies SSE4.1, so floor and ceil are always machine code
// there, whatever the machine that generates it (gradsolve gen writes
// lane code for other machines), and so are exp and log (laneFuncs).
func jitableFor(op sym.Op, lanes int) bool {
	if lanes > 1 && (op == sym.OpFloor || op == sym.OpCeil) {
		return true
	}
	if laneFuncs[op] != nil && laneFuncsInline && (lanes > 1 || scalarFuncs) {
		return true
	}
	switch op {
	case sym.OpNeg, sym.OpAdd, sym.OpSub, sym.OpMul, sym.OpDiv, sym.OpSqrt, sym.OpAbs, sym.OpSelect,
		sym.OpLt, sym.OpLe, sym.OpEq, sym.OpNe, sym.OpSign:
		return true
	case sym.OpFloor, sym.OpCeil:
		return useRoundSD // else Go calls (see jitpiece.go)
	}
	return false
}

// location returns the block and offset of register k where the
// machine code reads it: inputs in the caller's slices, everything else
// in the register file.
func (l Layout) location(k int32) (blk uint8, off int32) {
	switch {
	case k >= l.Y() && k < l.P():
		return 1, k - l.Y()
	case k >= l.P() && k < l.V():
		return 2, k - l.P()
	case k >= l.V() && k < l.W():
		return 3, k - l.V()
	case k >= l.W() && k < l.U():
		return 4, k - l.W()
	case k >= l.U() && k < l.NumInputs():
		return 5, k - l.U()
	}
	return 0, k
}

// run executes the pieces of the program in order on the blocks in
// (register file, y, p, v, w, u): machine code through jit.Call, and the
// Go calls in between. With lanes > 1 (lane code, see lanes.go) the
// blocks are lane-major and each Go call runs lane by lane.
func (j *jitCode) run(a *jitArgs, lanes int, in *[6][]float64) {
	r := in[0]
	for i := range j.segs {
		s := &j.segs[i]
		if s.entry != 0 {
			jit.Call(s.entry, a)
			continue
		}
		for k := range s.calls {
			c := &s.calls[k]
			for ln := range lanes {
				var x [3]float64
				for o := range c.op.Arity() {
					x[o] = in[c.blk[o]][int(c.off[o])*lanes+ln]
				}
				r[int(c.d)*lanes+ln] = sym.Eval(c.op, x[0], x[1], x[2])
			}
		}
	}
	// The machine code is freed with j: keep j alive while it runs.
	runtime.KeepAlive(j)
}

// data returns the address of a slice's first element (nil for an
// empty slice, which the code then never reads).
func data(s []float64) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(s)) }

// jitF runs machine code of several pieces for EvalF, which checked
// the slices' lengths.
func (pg *Program) jitF(r []float64, t float64, y, p, out []float64) {
	j := pg.jit
	r[0] = t
	// Field by field: a composite literal is built in a temporary and
	// copied with wide loads that stall on the narrow stores.
	var a jitArgs
	a[0], a[1], a[2] = data(r), data(y), data(p)
	a[6], a[7] = data(out), data(out[j.split:])
	j.run(&a, 1, &[6][]float64{r, y, p})
}

// jitAll runs machine code for the evaluators with seeds, with the
// outputs in out, or split between out and out2 (the gradients with
// respect to y and p) when two is set; it reports false when the
// program has none. The evaluator checked the slices' lengths.
func (pg *Program) jitAll(r []float64, t float64, y, p, v, w, u, out, out2 []float64, two bool) bool {
	j := pg.jit
	if j == nil {
		return false
	}
	if !two {
		out2 = out[j.split:]
	}
	r[0] = t
	// Field by field, as in jitF.
	var a jitArgs
	a[0], a[1], a[2] = data(r), data(y), data(p)
	a[3], a[4], a[5] = data(v), data(w), data(u)
	a[6], a[7] = data(out), data(out2)
	if len(j.segs) == 1 {
		jit.Call(j.segs[0].entry, &a)
		runtime.KeepAlive(j)
	} else {
		j.run(&a, 1, &[6][]float64{r, y, p, v, w, u})
	}
	return true
}
