package tape

import (
	"sync"

	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/sym"
)

// Lane code: one program evaluated for LaneWidth trajectories at once.
//
// Where the processor has AVX2 (jit.HasAVX2), a program can also be
// translated into packed code: the same register allocation and the same
// instructions as the scalar machine code (jitgen.go), each in its VEX
// 256-bit packed form, so that a vector register holds one value of four
// trajectories. Every block — the register file, y, p and the outputs —
// is lane-major: value k of lane l is at [k·LaneWidth + l]. No operation
// mixes lanes, and each lane performs the scalar code's IEEE operations
// on the same operands in the same order, so every lane gets the bits
// the interpreter gives that trajectory alone (TestLanesMatchInterpreter).
// The math functions stay Go calls, made lane by lane between pieces of
// lane code. The code is compiled on first use, entered only through
// jit.Call (ABI0), and kept with the program. Without AVX2, or with
// GRADSOLVE_JIT=off, EvalFLanes runs the interpreter on each lane, with
// the same bits.
//
// This is the right-hand-side half of the SIMD lane engine (issue 14);
// the engine that drives lanes of trajectories, each with its own step,
// is still to come.

// LaneWidth is the number of trajectories EvalFLanes evaluates at once.
const LaneWidth = 4

// HasLaneCode reports whether EvalFLanes runs as packed machine code
// here (else it runs the interpreter lane by lane).
func HasLaneCode() bool { return jit.HasAVX2() }

// laneState is a program's lane code, compiled on first use.
type laneState struct {
	once sync.Once
	code *jitCode // nil: none (no AVX2, or no executable memory)
}

// laneCode returns pg's lane code, compiling it the first time, or nil.
func (pg *Program) laneCode() *jitCode {
	pg.lane.once.Do(func() {
		if HasLaneCode() {
			pg.lane.code = compileCode(pg, LaneWidth)
		}
	})
	return pg.lane.code
}

// NewLaneRegisters returns a register file for EvalFLanes, with the
// program's constants loaded in every lane. Give each goroutine its
// own.
func (pg *Program) NewLaneRegisters() []float64 {
	const L = LaneWidth
	n := pg.nregs * L
	r := make([]float64, n+pg.nregs) // lane-major, then one scalar file for the interpreter
	base := int(pg.layout.NumInputs())
	for i, c := range pg.consts {
		for l := range L {
			r[(base+i)*L+l] = c
		}
	}
	copy(r[n+base:], pg.consts)
	return r
}

// EvalFLanes evaluates a program whose inputs are t, y and p for
// LaneWidth trajectories at once: lane l has time t[l], state
// y[d·LaneWidth + l] and parameters p[j·LaneWidth + l], and its outputs
// go to out[i·LaneWidth + l]. r comes from NewLaneRegisters. Each lane's
// outputs have the bits EvalF gives for that lane alone. A slice
// shorter than the program needs panics, naming it.
func (pg *Program) EvalFLanes(r, t, y, p, out []float64) {
	const L = LaneWidth
	l := pg.layout
	if len(r) < pg.nregs*(L+1) || len(t) < L || len(y) < l.Dim*L || len(p) < l.NumParams*L || len(out) < len(pg.outs)*L {
		panicShort(pg.Name+" (lanes)", []lenArg{{"r", len(r), pg.nregs * (L + 1)}, {"t", len(t), L},
			{"y", len(y), l.Dim * L}, {"p", len(p), l.NumParams * L}, {outName(pg.Name), len(out), len(pg.outs) * L}})
	}
	if pg.uses[3] || pg.uses[4] || pg.uses[5] {
		panic("tape: " + pg.Name + " (lanes): the program reads seeds; EvalFLanes takes t, y and p only")
	}
	if j := pg.laneCode(); j != nil {
		copy(r[:L], t[:L])
		var a jitArgs
		a[0], a[1], a[2] = data(r), data(y), data(p)
		a[6], a[7] = data(out), data(out[j.split*L:])
		j.run(&a, LaneWidth, &[6][]float64{r, y, p})
		return
	}
	// The interpreter, lane by lane, in the scalar file after the lanes.
	rs := r[pg.nregs*L:]
	code := pg.xcode
	for ln := range L {
		rs[0] = t[ln]
		for d := range l.Dim {
			rs[int(l.Y())+d] = y[d*L+ln]
		}
		for k := range l.NumParams {
			rs[int(l.P())+k] = p[k*L+ln]
		}
		for i := execArith(rs, code, 0); i < len(code); i = execArith(rs, code, i+1) {
			x := &code[i]
			rs[x.d] = sym.Eval(sym.Op(x.op), rs[x.a[0]], rs[x.a[1]], rs[x.a[2]])
		}
		for i, o := range pg.xouts {
			out[i*L+ln] = rs[o]
		}
	}
}
