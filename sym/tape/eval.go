package tape

import (
	"runtime"

	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/sym"
)

// xinstr is an instruction as the interpreter runs it: a plain
// operation, R[d] = op(R[a[0]], R[a[1]], R[a[2]]), or a fused tree (see
// fuse) whose leaves are R[a[0]]… in order.
type xinstr struct {
	op uint16
	d  int32
	a  [4]int32
}

// exec runs the program on the register file r: arithmetic in the tight
// loop of execArith, the math functions one at a time here.
func (pg *Program) exec(r []float64) {
	if len(r) < pg.nregs {
		panic("tape: register file too small: use Program.NewRegisters")
	}
	code := pg.xcode
	for i := execArith(r, code, 0); i < len(code); i = execArith(r, code, i+1) {
		x := &code[i]
		r[x.d] = sym.Eval(sym.Op(x.op), r[x.a[0]], r[x.a[1]], r[x.a[2]])
	}
}

// load copies t, y and p into the register file (plain loops: these
// slices are short, and a call to memmove would cost more than the
// copying).
func (pg *Program) load(r []float64, t float64, y, p []float64) {
	l := pg.layout
	r[0] = t
	copyShort(r[l.Y():], y[:l.Dim])
	copyShort(r[l.P():], p[:l.NumParams])
}

// copyShort copies src into dst[:len(src)] with a plain loop: these
// slices are short, and a call to memmove costs more than the copying.
func copyShort(dst, src []float64) {
	dst = dst[:len(src)]
	for i := range src {
		dst[i] = src[i]
	}
}

func (pg *Program) store(r []float64, outs []int32, dst []float64) {
	dst = dst[:len(outs)]
	for i, o := range outs {
		dst[i] = r[o]
	}
}

// EvalF evaluates a program of Dim outputs whose inputs are t, y and p
// (f, ∂f/∂t) into out. r is a register file from NewRegisters.
func (pg *Program) EvalF(r []float64, t float64, y, p, out []float64) {
	// The hottest path: a program that is one piece of machine code.
	if pg.entry != 0 {
		if len(r) < pg.nregs || len(y) < pg.layout.Dim || len(p) < pg.layout.NumParams || len(out) < len(pg.outs) {
			pg.badLengths(r, y, p, out)
		}
		r[0] = t
		jit.Call5(pg.entry, data(r), data(y), data(p), data(out), data(out[pg.jit.split:]))
		runtime.KeepAlive(pg.jit) // it owns the machine code
		return
	}
	if pg.jit != nil {
		pg.jitF(r, t, y, p, out)
		return
	}
	// The body of exec, written out: one call less.
	if len(r) < pg.nregs {
		panic("tape: register file too small: use Program.NewRegisters")
	}
	pg.load(r, t, y, p)
	code := pg.xcode
	for i := execArith(r, code, 0); i < len(code); i = execArith(r, code, i+1) {
		x := &code[i]
		r[x.d] = sym.Eval(sym.Op(x.op), r[x.a[0]], r[x.a[1]], r[x.a[2]])
	}
	pg.store(r, pg.xouts, out)
}

// badLengths panics with a message naming the slice of EvalF that is
// too short.
func (pg *Program) badLengths(r, y, p, out []float64) {
	l := pg.layout
	checkLen("register file", r, pg.nregs)
	checkLen("y", y, l.Dim)
	checkLen("p", p, l.NumParams)
	checkLen("output", out, len(pg.outs))
}

// EvalJVP evaluates a program whose inputs are t, y, p and the tangents
// v (Dim) and w (NumParams) into out.
func (pg *Program) EvalJVP(r []float64, t float64, y, p, v, w, out []float64) {
	if pg.jitAll(r, t, y, p, v, w, nil, out, nil, false) {
		return
	}
	pg.load(r, t, y, p)
	l := pg.layout
	copyShort(r[l.V():], v[:l.Dim])
	copyShort(r[l.W():], w[:l.NumParams])
	pg.exec(r)
	pg.store(r, pg.xouts, out)
}

// EvalVJP evaluates a program whose inputs are t, y, p and the cotangent
// u (Dim), and whose outputs are Dim values into gy followed by
// NumParams values into gp.
func (pg *Program) EvalVJP(r []float64, t float64, y, p, u, gy, gp []float64) {
	if pg.jitAll(r, t, y, p, nil, nil, u, gy, gp, true) {
		return
	}
	pg.load(r, t, y, p)
	l := pg.layout
	copyShort(r[l.U():], u[:l.Dim])
	pg.exec(r)
	pg.store(r, pg.xouts[:l.Dim], gy)
	pg.store(r, pg.xouts[l.Dim:], gp)
}

// EvalJVPVJP evaluates a program whose inputs are t, y, p, the tangents
// v and w and the cotangent u, and whose outputs are Dim values into gy
// followed by NumParams values into gp.
func (pg *Program) EvalJVPVJP(r []float64, t float64, y, p, v, w, u, gy, gp []float64) {
	if pg.jitAll(r, t, y, p, v, w, u, gy, gp, true) {
		return
	}
	pg.load(r, t, y, p)
	l := pg.layout
	copyShort(r[l.V():], v[:l.Dim])
	copyShort(r[l.W():], w[:l.NumParams])
	copyShort(r[l.U():], u[:l.Dim])
	pg.exec(r)
	pg.store(r, pg.xouts[:l.Dim], gy)
	pg.store(r, pg.xouts[l.Dim:], gp)
}
