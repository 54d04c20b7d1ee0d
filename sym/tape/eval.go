package tape

import (
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

// load copies the state inputs into the register file.
func (pg *Program) load(r []float64, t float64, y, p []float64) {
	l := pg.layout
	r[0] = t
	// Plain loops, not copy: these slices are short, and a call to
	// memmove would cost more than the copying.
	if pg.uses[1] {
		ry := r[l.Y() : l.Y()+int32(l.Dim)]
		for i := range ry {
			ry[i] = y[i]
		}
	}
	if pg.uses[2] {
		rp := r[l.P() : l.P()+int32(l.NumParams)]
		for i := range rp {
			rp[i] = p[i]
		}
	}
}

func (pg *Program) store(r []float64, outs []int32, dst []float64) {
	for i, o := range outs {
		dst[i] = r[o]
	}
}

// EvalF evaluates a program of Dim outputs whose inputs are t, y and p
// (f, ∂f/∂t) into out. r is a register file from NewRegisters.
func (pg *Program) EvalF(r []float64, t float64, y, p, out []float64) {
	pg.load(r, t, y, p)
	pg.exec(r)
	pg.store(r, pg.xouts, out)
}

// EvalJVP evaluates a program whose inputs are t, y, p and the tangents
// v (Dim) and w (NumParams) into out.
func (pg *Program) EvalJVP(r []float64, t float64, y, p, v, w, out []float64) {
	pg.load(r, t, y, p)
	l := pg.layout
	if pg.uses[3] {
		copy(r[l.V():l.V()+int32(l.Dim)], v)
	}
	if pg.uses[4] {
		copy(r[l.W():l.W()+int32(l.NumParams)], w)
	}
	pg.exec(r)
	pg.store(r, pg.xouts, out)
}

// EvalVJP evaluates a program whose inputs are t, y, p and the cotangent
// u (Dim), and whose outputs are Dim values into gy followed by
// NumParams values into gp.
func (pg *Program) EvalVJP(r []float64, t float64, y, p, u, gy, gp []float64) {
	pg.load(r, t, y, p)
	l := pg.layout
	if pg.uses[5] {
		copy(r[l.U():l.U()+int32(l.Dim)], u)
	}
	pg.exec(r)
	pg.store(r, pg.xouts[:l.Dim], gy)
	pg.store(r, pg.xouts[l.Dim:], gp)
}
