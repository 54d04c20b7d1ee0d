package tape

import (
	"runtime"
	"sync"

	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/sym"
)

// Lane code: one program evaluated for LaneWidth trajectories at once,
// through EvalFLanes, EvalJVPLanes, EvalVJPLanes or EvalJVPVJPLanes.
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
// exp and log are lane code too, in pmath's straight-line forms
// (jitfunc.go); the other math functions stay Go calls, made lane by
// lane between pieces of lane code. The code is compiled on first use, entered only through
// jit.Call (ABI0), and kept with the program. Without AVX2, or with
// GRADSOLVE_JIT=off, EvalFLanes runs the interpreter on each lane, with
// the same bits.
//
// The lane engine (internal/engine/lanes) calls them through
// ode.Programs.FLanes (NewLaneFunc).

// LaneWidth is the number of trajectories EvalFLanes evaluates at once:
// ode.LaneWidth, the width of an ode.LaneFunc.
const LaneWidth = ode.LaneWidth

// HasLaneCode reports whether EvalFLanes runs as packed machine code
// here (else it runs the interpreter lane by lane).
func HasLaneCode() bool { return jit.HasAVX2() }

// laneState is a program's lane code, compiled on first use.
type laneState struct {
	once  sync.Once
	code  *jitCode // nil: none (no AVX2, or no executable memory)
	entry uintptr  // the code when it is one piece, else 0
	// body is the lane code of one piece as a body to inline
	// (LaneCodeSeeded), written once, on any machine.
	bodyOnce sync.Once
	body     []byte
}

// laneCode returns pg's lane code, compiling it the first time, or nil.
func (pg *Program) laneCode() *jitCode {
	pg.lane.once.Do(func() {
		if HasLaneCode() {
			pg.lane.code = compileCode(pg, LaneWidth)
			if c := pg.lane.code; c != nil && len(c.segs) == 1 {
				pg.lane.entry = c.segs[0].entry
			}
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

// LaneKernel returns the program's lane code as a body to inline into
// other generated code (see ode.LaneKernel), or nil where there is none:
// no lane code here (HasLaneCode), or a program LaneCode refuses.
func (pg *Program) LaneKernel() *ode.LaneKernel { return pg.kernel(pg.LaneCode) }

// SeededLaneKernel is LaneKernel for a program with seeds (the
// cotangent program), under ode.LaneKernel's register contract for such
// programs: nil where there is no lane code here, or for a program of
// several pieces.
func (pg *Program) SeededLaneKernel() *ode.LaneKernel { return pg.kernel(pg.LaneCodeSeeded) }

// kernel makes an ode.LaneKernel of the body code gives, where lane
// code runs here.
func (pg *Program) kernel(code func() ([]byte, int, []float64)) *ode.LaneKernel {
	if pg.laneCode() == nil {
		return nil
	}
	body, _, _ := code()
	if body == nil {
		return nil
	}
	return &ode.LaneKernel{Body: body, Registers: pg.NewLaneRegisters}
}

// LaneCode returns the program's lane code as the body of an
// ode.LaneKernel, with what its register file holds before a call: the
// index of the program's first constant in the file (its constants
// follow, each in every lane: constant i at [(base+i)·LaneWidth + l]),
// and the constants. It writes the code without running it, the same on
// every machine (gradsolve gen writes it into Go assembly for others).
// body is nil for a program with math functions other than exp and log
// (several pieces, with Go calls between them), seeds, or outputs past
// its first block.
func (pg *Program) LaneCode() (body []byte, base int, consts []float64) {
	body, base, consts = pg.LaneCodeSeeded()
	if pg.uses[3] || pg.uses[4] || pg.uses[5] || pg.split() != len(pg.outs) {
		body = nil
	}
	return body, base, consts
}

// LaneCodeSeeded is LaneCode for any program of one piece, seeds and a
// second output block allowed (ode.LaneKernel's contract for them): body
// is nil only for a program of several pieces.
func (pg *Program) LaneCodeSeeded() (body []byte, base int, consts []float64) {
	pg.lane.bodyOnce.Do(func() {
		if j, _, _, _ := genCode(pg, LaneWidth); j != nil {
			pg.lane.body = j.body
		}
	})
	return pg.lane.body, int(pg.layout.NumInputs()), pg.consts
}

// LaneRegisters is the size of the register file of the program's lane
// code (the lane part of NewLaneRegisters).
func (pg *Program) LaneRegisters() int { return pg.nregs * LaneWidth }

// NewLaneFunc returns the program as an ode.LaneFunc (EvalFLanes) with
// its own lane register file: for one goroutine.
func (pg *Program) NewLaneFunc() ode.LaneFunc {
	r := pg.NewLaneRegisters()
	return func(t, y, p, out []float64) { pg.EvalFLanes(r, t, y, p, out) }
}

// EvalFLanes evaluates a program whose inputs are t, y and p for
// LaneWidth trajectories at once: lane l has time t[l], state
// y[d·LaneWidth + l] and parameters p[j·LaneWidth + l], and its outputs
// go to out[i·LaneWidth + l]. r comes from NewLaneRegisters. Each lane's
// outputs have the bits EvalF gives for that lane alone. A slice
// shorter than the program needs panics, naming it, and so does a
// program that reads inputs EvalFLanes does not take (seeds).
func (pg *Program) EvalFLanes(r, t, y, p, out []float64) {
	const L = LaneWidth
	// The hottest path, as EvalF's: code of one piece, entered at once.
	if j := pg.laneCode(); j != nil && pg.lane.entry != 0 && !pg.uses[3] && !pg.uses[4] && !pg.uses[5] &&
		len(r) >= pg.nregs*(L+1) && len(t) >= L && len(y) >= pg.layout.Dim*L &&
		len(p) >= pg.layout.NumParams*L && len(out) >= len(pg.outs)*L {
		copy(r[:L], t[:L])
		jit.Call5(pg.lane.entry, data(r), data(y), data(p), data(out), data(out[j.split*L:]))
		runtime.KeepAlive(j) // it owns the machine code
		return
	}
	pg.evalLanes("EvalFLanes", r, t, y, p, nil, nil, nil, out, nil)
}

// EvalJVPLanes is EvalJVP for LaneWidth trajectories at once, with the
// tangents v (Dim) and w (NumParams) lane-major like y and p.
func (pg *Program) EvalJVPLanes(r, t, y, p, v, w, out []float64) {
	const L = LaneWidth
	// The hot path of a sensitivity system in lanes: code of one piece,
	// entered at once (as EvalFLanes's).
	if j := pg.laneCode(); j != nil && pg.lane.entry != 0 && !pg.uses[5] {
		lay := pg.layout
		if len(r) >= pg.nregs*(L+1) && len(t) >= L && len(y) >= lay.Dim*L && len(p) >= lay.NumParams*L &&
			len(v) >= lay.Dim*L && len(w) >= lay.NumParams*L && len(out) >= len(pg.outs)*L {
			copy(r[:L], t[:L])
			var a jitArgs
			a[0], a[1], a[2], a[3], a[4] = data(r), data(y), data(p), data(v), data(w)
			a[6], a[7] = data(out), data(out[j.split*L:])
			jit.Call(pg.lane.entry, &a)
			runtime.KeepAlive(j) // it owns the machine code
			return
		}
	}
	pg.evalLanes("EvalJVPLanes", r, t, y, p, v, w, nil, out, nil)
}

// EvalVJPLanes is EvalVJP for LaneWidth trajectories at once: the
// cotangent u (Dim) lane-major, the first Dim outputs into gy and the
// rest into gp, each lane-major.
func (pg *Program) EvalVJPLanes(r, t, y, p, u, gy, gp []float64) {
	const L = LaneWidth
	// The reverse replay's hot path, as EvalFLanes's: code of one
	// piece, entered at once.
	if j := pg.laneCode(); j != nil && pg.lane.entry != 0 && !pg.uses[3] && !pg.uses[4] {
		lay, nOut := pg.layout, pg.split()
		if len(r) >= pg.nregs*(L+1) && len(t) >= L && len(y) >= lay.Dim*L && len(p) >= lay.NumParams*L &&
			len(u) >= lay.Dim*L && len(gy) >= nOut*L && len(gp) >= (len(pg.outs)-nOut)*L {
			copy(r[:L], t[:L])
			var a jitArgs
			a[0], a[1], a[2], a[5], a[6], a[7] = data(r), data(y), data(p), data(u), data(gy), data(gp)
			jit.Call(pg.lane.entry, &a)
			runtime.KeepAlive(j) // it owns the machine code
			return
		}
	}
	pg.evalLanes("EvalVJPLanes", r, t, y, p, nil, nil, u, gy, gp)
}

// EvalJVPVJPLanes is EvalJVPVJP for LaneWidth trajectories at once.
func (pg *Program) EvalJVPVJPLanes(r, t, y, p, v, w, u, gy, gp []float64) {
	pg.evalLanes("EvalJVPVJPLanes", r, t, y, p, v, w, u, gy, gp)
}

// evalLanes runs pg on LaneWidth trajectories: the seeds it is not given
// (nil) the program must not read; with out2 set, the first split
// outputs go to out and the rest to out2.
func (pg *Program) evalLanes(caller string, r, t, y, p, v, w, u, out, out2 []float64) {
	const L = LaneWidth
	l := pg.layout
	for _, s := range [...]struct {
		name  string
		given bool
		use   int
	}{{"v", v != nil, 3}, {"w", w != nil, 4}, {"u", u != nil, 5}} {
		if pg.uses[s.use] && !s.given {
			panic("tape: " + pg.Name + " (lanes): the program reads the seed " + s.name + ", which " + caller + " does not take")
		}
	}
	nOut, nOut2 := len(pg.outs), 0
	if out2 != nil {
		nOut = pg.split()
		nOut2 = len(pg.outs) - nOut
	}
	var args [9]lenArg // r, t, y, p, 3 seeds, 2 outputs: building them allocates nothing
	args[0], args[1] = lenArg{"r", len(r), pg.nregs * (L + 1)}, lenArg{"t", len(t), L}
	args[2], args[3] = lenArg{"y", len(y), l.Dim * L}, lenArg{"p", len(p), l.NumParams * L}
	n := 4
	for _, s := range [...]struct {
		name string
		x    []float64
		size int
	}{{"v", v, l.Dim}, {"w", w, l.NumParams}, {"u", u, l.Dim}} {
		if s.x != nil {
			args[n] = lenArg{s.name, len(s.x), s.size * L}
			n++
		}
	}
	if out2 == nil {
		args[n] = lenArg{outName(pg.Name), len(out), nOut * L}
		n++
	} else {
		args[n], args[n+1] = lenArg{"gy", len(out), nOut * L}, lenArg{"gp", len(out2), nOut2 * L}
		n += 2
	}
	for _, a := range args[:n] {
		if a.got < a.want {
			pg.badLanes(args[:n])
		}
	}
	if j := pg.laneCode(); j != nil {
		copy(r[:L], t[:L])
		if out2 == nil {
			out2 = out[j.split*L:]
		}
		var a jitArgs
		a[0], a[1], a[2] = data(r), data(y), data(p)
		a[3], a[4], a[5] = data(v), data(w), data(u)
		a[6], a[7] = data(out), data(out2)
		j.run(&a, L, &[6][]float64{r, y, p, v, w, u})
		return
	}
	// The interpreter, lane by lane, in the scalar file after the lanes.
	rs := r[pg.nregs*L:]
	in := [...]struct {
		x    []float64
		base int32
		n    int
	}{{y, l.Y(), l.Dim}, {p, l.P(), l.NumParams}, {v, l.V(), l.Dim}, {w, l.W(), l.NumParams}, {u, l.U(), l.Dim}}
	code := pg.xcode
	for ln := range L {
		rs[0] = t[ln]
		for _, b := range in {
			if b.x == nil {
				continue
			}
			for k := range b.n {
				rs[int(b.base)+k] = b.x[k*L+ln]
			}
		}
		for i := execArith(rs, code, 0); i < len(code); i = execArith(rs, code, i+1) {
			x := &code[i]
			rs[x.d] = sym.Eval(sym.Op(x.op), rs[x.a[0]], rs[x.a[1]], rs[x.a[2]])
		}
		for i, o := range pg.xouts {
			if i < nOut {
				out[i*L+ln] = rs[o]
			} else {
				out2[(i-nOut)*L+ln] = rs[o]
			}
		}
	}
}

// badLanes panics naming the first short slice of a lane evaluator; a
// function of its own, so that the arguments escape only on that path.
func (pg *Program) badLanes(args []lenArg) {
	panicShort(pg.Name+" (lanes)", append([]lenArg(nil), args...))
}
