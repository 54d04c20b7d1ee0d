package tape

import (
	"fmt"
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

// exec runs the program on the register file r, whose length the
// evaluator checked: arithmetic in the tight loop of execArith, the math
// functions one at a time here.
func (pg *Program) exec(r []float64) {
	code := pg.xcode
	for i := execArith(r, code, 0); i < len(code); i = execArith(r, code, i+1) {
		x := &code[i]
		r[x.d] = sym.Eval(sym.Op(x.op), r[x.a[0]], r[x.a[1]], r[x.a[2]])
	}
}

// load copies t, y and p into the register file, whose lengths the
// evaluator checked (plain loops: these slices are short, and a call to
// memmove would cost more than the copying).
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

// store copies the outputs' registers into dst, whose length the
// evaluator checked.
func (pg *Program) store(r []float64, outs []int32, dst []float64) {
	dst = dst[:len(outs)]
	for i, o := range outs {
		dst[i] = r[o]
	}
}

// Slice lengths.
//
// Every evaluator checks, on entry, that each slice it is given holds at
// least what the program reads or writes there: y and v Dim values, p
// and w NumParams, u Dim, the outputs one value per output (gy the first
// Dim, gp the rest), the register file NumRegisters. A shorter slice is
// a programmer error of the Go API, and the evaluator panics with a
// message naming the program, the argument and both lengths ("tape: f:
// len(dy) = 5, want at least 6"), on the interpreter and on machine code
// alike; it never reads or writes past a slice's length, even where its
// capacity is larger. A longer slice is allowed: the program uses its
// first values and leaves the rest alone. The check is one comparison
// per argument.

// evalKind tells the evaluators apart, for their arguments' names.
type evalKind uint8

const (
	evalF      evalKind = iota // t, y, p → out
	evalJVP                    // t, y, p, v, w → out
	evalVJP                    // t, y, p, u → gy, gp
	evalJVPVJP                 // t, y, p, v, w, u → gy, gp
)

// outName returns the name of the output argument of an EvalF or
// EvalJVP program in ode.Programs, by the program's name: dy for a
// right-hand side, jac for a Jacobian, out for the others.
func outName(prog string) string {
	switch prog {
	case "f", "sens":
		return "dy"
	case "jac_y", "jvp_jac_y":
		return "jac"
	}
	return "out"
}

// lenArg is a slice argument's name, length and the length it needs.
type lenArg struct {
	name      string
	got, want int
}

// panicShort panics naming the first argument shorter than it needs to
// be, if any.
func panicShort(prog string, args []lenArg) {
	for _, a := range args {
		if a.got < a.want {
			panic(fmt.Sprintf("tape: %s: len(%s) = %d, want at least %d", prog, a.name, a.got, a.want))
		}
	}
}

// split returns the number of outputs that go into gy (the rest go into
// gp) for EvalVJP and EvalJVPVJP.
func (pg *Program) split() int { return min(pg.layout.Dim, len(pg.outs)) }

// badArgs panics naming the first slice shorter than the program needs
// (see Slice lengths); an evaluator calls it when one is.
func (pg *Program) badArgs(kind evalKind, r, y, p, v, w, u, out, out2 []float64) {
	l := pg.layout
	args := []lenArg{{"y", len(y), l.Dim}, {"p", len(p), l.NumParams}}
	if kind == evalJVP || kind == evalJVPVJP {
		args = append(args, lenArg{"v", len(v), l.Dim}, lenArg{"w", len(w), l.NumParams})
	}
	if kind == evalVJP || kind == evalJVPVJP {
		sp := pg.split()
		args = append(args, lenArg{"u", len(u), l.Dim}, lenArg{"gy", len(out), sp}, lenArg{"gp", len(out2), len(pg.outs) - sp})
	} else {
		args = append(args, lenArg{outName(pg.Name), len(out), len(pg.outs)})
	}
	panicShort(pg.Name, args)
	if len(r) < pg.nregs {
		panic(fmt.Sprintf("tape: %s: register file of %d, want at least %d: use Program.NewRegisters", pg.Name, len(r), pg.nregs))
	}
}

// EvalF evaluates a program of Dim outputs whose inputs are t, y and p
// (f, ∂f/∂t) into out. r is a register file from NewRegisters. A slice
// shorter than the program needs panics (see Slice lengths).
func (pg *Program) EvalF(r []float64, t float64, y, p, out []float64) {
	if len(r) < pg.nregs || len(y) < pg.layout.Dim || len(p) < pg.layout.NumParams || len(out) < len(pg.outs) {
		pg.badArgs(evalF, r, y, p, nil, nil, nil, out, nil)
	}
	// The hottest path: a program that is one piece of machine code.
	if pg.entry != 0 {
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
	pg.load(r, t, y, p)
	code := pg.xcode
	for i := execArith(r, code, 0); i < len(code); i = execArith(r, code, i+1) {
		x := &code[i]
		r[x.d] = sym.Eval(sym.Op(x.op), r[x.a[0]], r[x.a[1]], r[x.a[2]])
	}
	pg.store(r, pg.xouts, out)
}

// EvalJVP evaluates a program whose inputs are t, y, p and the tangents
// v (Dim) and w (NumParams) into out. A slice shorter than the program
// needs panics (see Slice lengths).
func (pg *Program) EvalJVP(r []float64, t float64, y, p, v, w, out []float64) {
	l := pg.layout
	if len(r) < pg.nregs || len(y) < l.Dim || len(p) < l.NumParams || len(v) < l.Dim || len(w) < l.NumParams ||
		len(out) < len(pg.outs) {
		pg.badArgs(evalJVP, r, y, p, v, w, nil, out, nil)
	}
	if pg.jitAll(r, t, y, p, v, w, nil, out, nil, false) {
		return
	}
	pg.load(r, t, y, p)
	copyShort(r[l.V():], v[:l.Dim])
	copyShort(r[l.W():], w[:l.NumParams])
	pg.exec(r)
	pg.store(r, pg.xouts, out)
}

// EvalVJP evaluates a program whose inputs are t, y, p and the cotangent
// u (Dim), and whose outputs are Dim values into gy followed by
// NumParams values into gp. A slice shorter than the program needs
// panics (see Slice lengths).
func (pg *Program) EvalVJP(r []float64, t float64, y, p, u, gy, gp []float64) {
	l, sp := pg.layout, pg.split()
	if len(r) < pg.nregs || len(y) < l.Dim || len(p) < l.NumParams || len(u) < l.Dim ||
		len(gy) < sp || len(gp) < len(pg.outs)-sp {
		pg.badArgs(evalVJP, r, y, p, nil, nil, u, gy, gp)
	}
	if pg.jitAll(r, t, y, p, nil, nil, u, gy, gp, true) {
		return
	}
	pg.load(r, t, y, p)
	copyShort(r[l.U():], u[:l.Dim])
	pg.exec(r)
	pg.store(r, pg.xouts[:sp], gy)
	pg.store(r, pg.xouts[sp:], gp)
}

// EvalJVPVJP evaluates a program whose inputs are t, y, p, the tangents
// v and w and the cotangent u, and whose outputs are Dim values into gy
// followed by NumParams values into gp. A slice shorter than the program
// needs panics (see Slice lengths).
func (pg *Program) EvalJVPVJP(r []float64, t float64, y, p, v, w, u, gy, gp []float64) {
	l, sp := pg.layout, pg.split()
	if len(r) < pg.nregs || len(y) < l.Dim || len(p) < l.NumParams || len(v) < l.Dim || len(w) < l.NumParams ||
		len(u) < l.Dim || len(gy) < sp || len(gp) < len(pg.outs)-sp {
		pg.badArgs(evalJVPVJP, r, y, p, v, w, u, gy, gp)
	}
	if pg.jitAll(r, t, y, p, v, w, u, gy, gp, true) {
		return
	}
	pg.load(r, t, y, p)
	copyShort(r[l.V():], v[:l.Dim])
	copyShort(r[l.W():], w[:l.NumParams])
	copyShort(r[l.U():], u[:l.Dim])
	pg.exec(r)
	pg.store(r, pg.xouts[:sp], gy)
	pg.store(r, pg.xouts[sp:], gp)
}
