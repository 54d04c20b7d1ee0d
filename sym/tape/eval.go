package tape

import (
	"math"

	"github.com/gradsolve/gradsolve/sym"
)

// exec runs the instructions on the register file r.
func (pg *Program) exec(r []float64) {
	r = r[:pg.nregs]
	for _, in := range pg.code {
		var v float64
		switch in.Op {
		case sym.OpAdd:
			v = r[in.A] + r[in.B]
		case sym.OpSub:
			v = r[in.A] - r[in.B]
		case sym.OpMul:
			v = r[in.A] * r[in.B]
		case sym.OpDiv:
			v = r[in.A] / r[in.B]
		case sym.OpNeg:
			v = -r[in.A]
		case sym.OpSqrt:
			v = math.Sqrt(r[in.A])
		case sym.OpExp:
			v = math.Exp(r[in.A])
		case sym.OpLog:
			v = math.Log(r[in.A])
		case sym.OpSin:
			v = math.Sin(r[in.A])
		case sym.OpCos:
			v = math.Cos(r[in.A])
		case sym.OpTanh:
			v = math.Tanh(r[in.A])
		case sym.OpSelect:
			v = r[in.C]
			if r[in.A] > 0 {
				v = r[in.B]
			}
		default:
			v = sym.Eval(in.Op, r[in.A], r[in.B], r[in.C])
		}
		r[in.Dst] = v
	}
}

// load copies the state inputs into the register file.
func (pg *Program) load(r []float64, t float64, y, p []float64) {
	l := pg.layout
	r[0] = t
	if pg.uses[1] {
		copy(r[l.Y():l.Y()+int32(l.Dim)], y)
	}
	if pg.uses[2] {
		copy(r[l.P():l.P()+int32(l.NumParams)], p)
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
	pg.store(r, pg.outs, out)
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
	pg.store(r, pg.outs, out)
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
	pg.store(r, pg.outs[:l.Dim], gy)
	pg.store(r, pg.outs[l.Dim:], gp)
}
