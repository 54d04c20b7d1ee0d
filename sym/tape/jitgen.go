package tape

import (
	"encoding/binary"
	"math"
	"reflect"
	"sync"

	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/sym"
)

// The general registers that hold the blocks' addresses (see
// trampolineBases and funcBases).
const (
	gpAX  = jit.AX
	gpCX  = jit.CX
	gpDX  = jit.DX
	gpSI  = jit.SI
	gpDI  = jit.DI
	gpR8  = jit.R8
	gpR9  = jit.R9
	gpR10 = jit.R10
	gpR11 = jit.R11
)

// trampolineBases holds the general register of each block's address
// in code called through jit.Call and jit.Call5: register file, y, p,
// v, w, u, out, out2.
var trampolineBases = [8]byte{gpDI, gpSI, gpDX, gpR8, gpR9, gpR10, gpR11, gpCX}

// funcBases holds them for code called directly as an ode.Func closure,
// in builds that allow it (see direct.go): Go's register ABI,
// ABIInternal, on amd64 (t in X0; y, p and
// out as pointer, length, capacity in AX BX CX, DI SI R8, R9 R10 R11;
// the closure in DX, replaced by its register file). All outputs go to
// out.
var funcBases = [8]byte{gpDX, gpAX, gpDI, 0, 0, 0, gpR9, gpR9}

// The vector registers: values live in X0…X11; X12 is scratch, X13
// holds the mask of |x| and X14 that of −x. X15 is left alone (Go's
// zero register).
const (
	numSlots = 12
	xTmp     = 12
	xAbsMask = 13
	xNegMask = 14
)

// never is the next use of a value nobody reads again.
const never = math.MaxInt32

// loadMask sets vector register x to the 64-bit pattern bits, through
// R12 (free in both calling conventions; AX holds y in one).
func loadMask(a *jit.Asm, x byte, bits uint64) {
	a.MovImm64(jit.R12, bits)
	a.MovqToX(x, jit.R12)
}

// slot is one vector register holding a value of the register file.
type slot struct {
	reg   int32 // the tape register whose value it holds, −1 for none
	next  int32 // the next instruction reading that value, or never
	dirty bool  // the register file does not have the value yet
}

// jitGen translates one program.
type jitGen struct {
	a     jit.Asm
	pg    *Program
	bases [8]byte // the general register of each block (see trampolineBases)
	// lanes is the number of trajectories a value holds: 1 for scalar
	// code (SSE2, a value in the low double of an XMM register), or
	// laneWidth for lane code (AVX, a value of each trajectory in a YMM
	// register, every block lane-major: see lanes.go).
	lanes int
	slots [numSlots]slot
	where []int8 // slot of each tape register, −1 where none
	// opNext[i][k] is the next instruction after i that reads the value
	// operand k of instruction i reads; dstNext[i] that of the value
	// instruction i writes (len(code) for outputs, never for none).
	opNext  [][3]int32
	dstNext []int32
	// badJumps are the offsets of the rel32 fields of the length checks'
	// jumps.
	badJumps []int
}

// nextUses computes opNext and dstNext in one backward pass.
func (g *jitGen) nextUses() {
	code := g.pg.code
	last := make([]int32, g.pg.nregs)
	for i := range last {
		last[i] = never
	}
	for _, o := range g.pg.outs {
		last[o] = int32(len(code))
	}
	g.opNext = make([][3]int32, len(code))
	g.dstNext = make([]int32, len(code))
	for i := len(code) - 1; i >= 0; i-- {
		in := code[i]
		g.dstNext[i] = last[in.Dst]
		last[in.Dst] = never
		ops := [3]int32{in.A, in.B, in.C}
		n := in.Op.Arity()
		for k := range n {
			g.opNext[i][k] = last[ops[k]]
		}
		for k := range n {
			last[ops[k]] = int32(i)
		}
	}
}

// loc returns where register k is read and written in memory.
func (g *jitGen) loc(k int32) jit.Mem {
	blk, off := g.pg.layout.location(k)
	return jit.Mem{Base: g.bases[blk], Disp: off * 8 * int32(g.lanes)}
}

// rr emits the register form of an SSE2 operation: prefix PSD for the
// scalar arithmetic (+ − × ÷, √, cmp), PPD for the bitwise operations
// and moves. Scalar code gets the legacy encoding; lane code the VEX
// 256-bit packed one, as d = d op s (for mov and √, d = op s).
func (g *jitGen) rr(prefix, op, d, s byte) {
	if g.lanes == 1 {
		g.a.SSE(prefix, op, d, s)
		return
	}
	v := d
	if op == jit.OpMov || op == jit.OpSqrt {
		v = 0 // no first source
	}
	g.a.VRR(jit.VexPP66, jit.Map0F, true, op, d, v, s)
}

// rm is rr with the second operand in memory; loads and stores too.
func (g *jitGen) rm(prefix, op, reg byte, m jit.Mem) {
	if g.lanes == 1 {
		g.a.SSEMem(prefix, op, reg, m)
		return
	}
	v := reg
	if op == jit.OpLoad || op == jit.OpSt || op == jit.OpSqrt {
		v = 0
	}
	g.a.VRM(jit.VexPP66, jit.Map0F, true, op, reg, v, m)
}

// mask sets vector register x to the 64-bit pattern bits (in every lane
// of lane code).
func (g *jitGen) mask(x byte, bits uint64) {
	if g.lanes > 1 {
		// VEX only in lane code: a legacy-SSE movq after 256-bit
		// instructions would stall on the change of state.
		g.a.MovImm64(jit.R12, bits)
		g.a.VMovqToX(x, jit.R12)
		g.a.VRR(jit.VexPP66, jit.Map0F38, true, 0x19, x, 0, x) // vbroadcastsd x, x (AVX2)
		return
	}
	loadMask(&g.a, x, bits)
}

// reset empties the vector registers at the start of a segment. Only
// the tape registers they held are marked as held nowhere: where is -1
// everywhere else already, and clearing all of it for each segment would
// make the compiler quadratic (a program with a math call every few
// operations has segments in proportion to its size).
func (g *jitGen) reset() {
	for s := range g.slots {
		if r := g.slots[s].reg; r >= 0 {
			g.where[r] = -1
		}
		g.slots[s] = slot{reg: -1}
	}
}

func (g *jitGen) drop(s int) {
	if r := g.slots[s].reg; r >= 0 {
		g.where[r] = -1
	}
	g.slots[s] = slot{reg: -1}
}

// alloc returns a free vector register, not one of pinned: an empty one,
// else one whose value is dead, else the one read again the latest
// (written back first if the register file lacks its value).
func (g *jitGen) alloc(pinned ...int) int {
	best, bestNext := -1, int32(-1)
	for s := range g.slots {
		if isPinned(s, pinned) {
			continue
		}
		sl := g.slots[s]
		if sl.reg < 0 {
			return s
		}
		if sl.next > bestNext {
			best, bestNext = s, sl.next
		}
	}
	if sl := g.slots[best]; sl.dirty && sl.next != never {
		g.rm(jit.PSD, jit.OpSt, byte(best), g.loc(sl.reg))
	}
	g.drop(best)
	return best
}

func isPinned(s int, pinned []int) bool {
	for _, p := range pinned {
		if p == s {
			return true
		}
	}
	return false
}

// ensure returns a vector register holding register k, loading it if
// needed, and records its next reader.
func (g *jitGen) ensure(k, next int32, pinned ...int) int {
	if s := g.where[k]; s >= 0 {
		g.slots[s].next = next
		return int(s)
	}
	s := g.alloc(pinned...)
	g.rm(jit.PSD, jit.OpLoad, byte(s), g.loc(k))
	g.slots[s] = slot{reg: k, next: next}
	g.where[k] = int8(s)
	return s
}

// touch records the next reader of register k if a vector register
// holds it, and returns that register or −1.
func (g *jitGen) touch(k, next int32) int {
	s := int(g.where[k])
	if s >= 0 {
		g.slots[s].next = next
	}
	return s
}

// dest returns the vector register for a result computed from the value
// in src: src itself when that value is dead after this instruction,
// else a copy of it.
func (g *jitGen) dest(src int, pinned ...int) int {
	if g.slots[src].next == never {
		g.drop(src)
		return src
	}
	d := g.alloc(append(pinned, src)...)
	g.rr(jit.PPD, jit.OpMov, byte(d), byte(src))
	return d
}

// bind records that vector register s holds the new value of register k.
func (g *jitGen) bind(k int32, s int, next int32) {
	if old := int(g.where[k]); old >= 0 && old != s {
		g.drop(old)
	}
	g.slots[s] = slot{reg: k, next: next, dirty: true}
	g.where[k] = int8(s)
}

// arithOpcode returns the SSE2 opcode of a scalar + − × ÷.
func arithOpcode(op sym.Op) byte {
	switch op {
	case sym.OpAdd:
		return jit.OpAdd
	case sym.OpSub:
		return jit.OpSub
	case sym.OpMul:
		return jit.OpMul
	}
	return jit.OpDiv
}

// instr translates instruction i.
func (g *jitGen) instr(i int) {
	in := g.pg.code[i]
	nx := g.opNext[i]
	var d int
	switch in.Op {
	case sym.OpAdd, sym.OpSub, sym.OpMul, sym.OpDiv:
		op := arithOpcode(in.Op)
		sa := g.ensure(in.A, nx[0])
		sb := g.touch(in.B, nx[1])
		d = g.dest(sa, sb)
		if sb >= 0 {
			g.rr(jit.PSD, op, byte(d), byte(sb))
		} else {
			g.rm(jit.PSD, op, byte(d), g.loc(in.B))
		}
	case sym.OpNeg, sym.OpAbs:
		d = g.dest(g.ensure(in.A, nx[0]))
		if in.Op == sym.OpNeg {
			g.rr(jit.PPD, jit.OpXor, byte(d), xNegMask)
		} else {
			g.rr(jit.PPD, jit.OpAnd, byte(d), xAbsMask)
		}
	case sym.OpSqrt:
		if sa := g.touch(in.A, nx[0]); sa >= 0 {
			if g.slots[sa].next == never {
				g.drop(sa)
				d = sa
			} else {
				d = g.alloc(sa)
			}
			g.rr(jit.PSD, jit.OpSqrt, byte(d), byte(sa))
		} else {
			d = g.alloc()
			g.rm(jit.PSD, jit.OpSqrt, byte(d), g.loc(in.A))
		}
	case sym.OpSelect:
		// a > 0 ? b : c as a mask: tmp = (0 < a), d = (b & tmp) | (c &^ tmp).
		sa := g.ensure(in.A, nx[0])
		sb := g.ensure(in.B, nx[1], sa)
		sc := g.ensure(in.C, nx[2], sa, sb)
		if sb == sc { // both branches the same value
			d = g.dest(sb, sa)
			break
		}
		g.rr(jit.PPD, jit.OpXor, xTmp, xTmp)
		g.rr(jit.PSD, jit.OpCmp, xTmp, byte(sa))
		g.a.B = append(g.a.B, 1) // predicate: less than
		d = g.dest(sb, sa, sc)
		g.rr(jit.PPD, jit.OpAnd, byte(d), xTmp)
		g.rr(jit.PPD, jit.OpAndN, xTmp, byte(sc))
		g.rr(jit.PPD, jit.OpOr, byte(d), xTmp)
	case sym.OpLt, sym.OpLe, sym.OpEq, sym.OpNe:
		d = g.compare(in, nx)
	case sym.OpSign:
		d = g.sign(in, nx)
	case sym.OpFloor, sym.OpCeil:
		d = g.round(in, nx)
	default:
		if laneFuncs[in.Op] == nil {
			panic("tape: no machine code for " + in.Op.String())
		}
		d = g.laneFunc(in, nx)
	}
	g.bind(in.Dst, d, g.dstNext[i])
}

// segment translates code[lo:hi] (all machine-code operations) into a
// function; the last one also writes the outputs.
func (g *jitGen) segment(lo, hi int, last bool, split int) int {
	start := len(g.a.B)
	if g.bases == funcBases {
		g.funcPrologue()
	}
	g.reset()
	var neg, abs bool
	for _, in := range g.pg.code[lo:hi] {
		neg = neg || in.Op == sym.OpNeg
		abs = abs || in.Op == sym.OpAbs
	}
	if neg {
		g.mask(xNegMask, 1<<63)
	}
	if abs {
		g.mask(xAbsMask, 1<<63-1)
	}
	for i := lo; i < hi; i++ {
		g.instr(i)
	}
	if last {
		for i, k := range g.pg.outs {
			m := jit.Mem{Base: g.bases[6], Disp: int32(8 * g.lanes * i)}
			if i >= split {
				m = jit.Mem{Base: g.bases[7], Disp: int32(8 * g.lanes * (i - split))}
			}
			s := int(g.where[k])
			if s < 0 {
				s = xTmp
				g.rm(jit.PSD, jit.OpLoad, xTmp, g.loc(k))
			}
			g.rm(jit.PSD, jit.OpSt, byte(s), m)
		}
	} else {
		for s, sl := range g.slots {
			if sl.dirty && sl.next != never {
				g.rm(jit.PSD, jit.OpSt, byte(s), g.loc(sl.reg))
			}
		}
	}
	if g.lanes > 1 {
		g.a.Vzeroupper() // jit.Call's rule
	}
	g.a.Ret()
	return start
}

// funcPrologue starts code called as an ode.Func: it checks the slice
// lengths, jumping to jitBadArgs (which panics) when one is short, loads
// the register file from the closure and stores t.
func (g *jitGen) funcPrologue() {
	l := g.pg.layout
	a := &g.a
	for _, c := range []struct {
		rex, modrm byte
		n          int
	}{
		{0x48, 0xFB, l.Dim},          // cmp rbx, Dim
		{0x48, 0xFE, l.NumParams},    // cmp rsi, NumParams
		{0x49, 0xFA, len(g.pg.outs)}, // cmp r10, outputs
	} {
		if c.n == 0 {
			continue
		}
		a.B = append(a.B, c.rex, 0x81, c.modrm)
		a.B = binary.LittleEndian.AppendUint32(a.B, uint32(c.n))
		a.B = append(a.B, 0x0F, 0x82) // jb bad
		g.badJumps = append(g.badJumps, len(a.B))
		a.B = append(a.B, 0, 0, 0, 0)
	}
	a.B = append(a.B, 0x48, 0x8B, 0x52, 0x08) // mov rdx, [rdx+8]
	if g.pg.uses[0] {
		a.SSEMem(jit.PSD, jit.OpSt, 0, jit.Mem{Base: gpDX}) // movsd [rdx], xmm0
	}
}

// badArgsStub emits the target of the length checks: a tail jump to
// jitBadArgs, so that it panics as if called by the caller itself, with
// the slices' pointers and lengths untouched and, in place of what the
// message does not need, the lengths the program needs as the slices'
// capacities and its name (see jitNames) as t. jitBadArgs has f's
// signature: the caller reserved the stack for spilling its arguments,
// and no more.
func (g *jitGen) badArgsStub() {
	a := &g.a
	target := len(a.B)
	for _, at := range g.badJumps {
		binary.LittleEndian.PutUint32(a.B[at:], uint32(target-(at+4)))
	}
	l := g.pg.layout
	a.MovImm64(gpCX, uint64(l.Dim))
	a.MovImm64(gpR8, uint64(l.NumParams))
	a.MovImm64(gpR11, uint64(len(g.pg.outs)))
	loadMask(a, 0, math.Float64bits(float64(jitNames.index(g.pg.Name))))
	a.MovImm64(jit.R12, uint64(reflect.ValueOf(jitBadArgs).Pointer()))
	a.JmpReg(jit.R12)
}

// jitBadArgs is where machine code called as an ode.Func goes when a
// slice is shorter than the program needs, to panic as EvalF does. The
// capacities of y, p and out are the lengths the program needs, and
// name numbers its name (see badArgsStub): only the lengths and
// capacities are read.
func jitBadArgs(name float64, y, p, out []float64) {
	prog := jitNames.name(int(name))
	panicShort(prog, []lenArg{{"y", len(y), cap(y)}, {"p", len(p), cap(p)}, {outName(prog), len(out), cap(out)}})
}

// jitNames numbers the names of programs with machine code called as an
// ode.Func, for the messages of jitBadArgs (which receives a number).
var jitNames nameTable

type nameTable struct {
	mu    sync.Mutex
	ids   map[string]int
	names []string
}

func (t *nameTable) index(name string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if i, ok := t.ids[name]; ok {
		return i
	}
	if t.ids == nil {
		t.ids = map[string]int{}
	}
	t.ids[name] = len(t.names)
	t.names = append(t.names, name)
	return len(t.names) - 1
}

func (t *nameTable) name(i int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if i >= 0 && i < len(t.names) {
		return t.names[i]
	}
	return "?"
}

// compileJIT translates pg into machine code, or returns nil when it
// cannot (machine code turned off, or no executable memory).
func compileJIT(pg *Program) *jitCode { return compileCode(pg, 1) }

// compileCode translates pg into scalar code (lanes 1) or lane code
// (lanes laneWidth: see lanes.go), or returns nil when it cannot.
func compileCode(pg *Program, lanes int) *jitCode {
	if !jit.Enabled() {
		return nil
	}
	j, b, starts, fstart := genCode(pg, lanes)
	if j == nil {
		return nil
	}
	var err error
	if j.code, err = jit.NewCode(b); err != nil {
		return nil // no executable memory: the interpreter it is
	}
	j.code.Name(len(b), "tape.program", nil)
	k := 0
	for i := range j.segs {
		if j.segs[i].entry != 0 {
			j.segs[i].entry = j.code.Addr(starts[k])
			k++
		}
	}
	if fstart >= 0 {
		j.fentry = j.code.Addr(fstart)
	}
	return j
}

// genCode writes pg's machine code without making it executable (it
// depends on nothing of the machine it runs on): the pieces, the bytes,
// the offset of each machine-code piece and of the direct entry (−1 for
// none); nil where a displacement would overflow. For lane code of one
// piece it also keeps that piece as a body to inline (jitCode.body): the
// piece without its closing vzeroupper and ret.
func genCode(pg *Program, lanes int) (j *jitCode, b []byte, starts []int, fstart int) {
	// Every displacement is an int32: the register file's and the
	// outputs' (a dense Jacobian's outputs can outnumber the registers,
	// many of them sharing one).
	if max(int64(pg.nregs), int64(len(pg.outs)))*8*int64(lanes) > math.MaxInt32 {
		return nil, nil, nil, -1
	}
	l := pg.layout
	g := &jitGen{pg: pg, bases: trampolineBases, lanes: lanes, where: make([]int8, pg.nregs)}
	for i := range g.where {
		g.where[i] = -1
	}
	for s := range g.slots {
		g.slots[s] = slot{reg: -1}
	}
	g.nextUses()
	split := min(l.Dim, len(pg.outs))
	j = &jitCode{split: split}
	// Pieces: maximal runs of machine-code operations, and runs of Go
	// calls; the last piece is machine code (it writes the outputs).
	code := pg.code
	for lo := 0; ; {
		hi := lo
		for hi < len(code) && pg.jitableOp(code[hi].Op, lanes) {
			hi++
		}
		if hi > lo || hi == len(code) {
			starts = append(starts, g.segment(lo, hi, hi == len(code), split))
			j.segs = append(j.segs, jitSeg{entry: 1}) // set below
			if hi == len(code) {
				break
			}
			lo = hi
			continue
		}
		var calls []callInstr
		for ; hi < len(code) && !pg.jitableOp(code[hi].Op, lanes); hi++ {
			in := code[hi]
			c := callInstr{op: in.Op, d: in.Dst}
			ops := [3]int32{in.A, in.B, in.C}
			for k := range in.Op.Arity() {
				c.blk[k], c.off[k] = l.location(ops[k])
			}
			calls = append(calls, c)
		}
		j.segs = append(j.segs, jitSeg{calls: calls})
		lo = hi
	}
	// A program of one piece that reads no seeds can also be called
	// directly as an ode.Func, in builds that allow it (see direct.go).
	fstart = -1
	if directSupported && lanes == 1 && len(j.segs) == 1 && !pg.uses[3] && !pg.uses[4] && !pg.uses[5] {
		g.bases = funcBases
		fstart = g.segment(0, len(code), true, len(pg.outs))
		g.badArgsStub()
	}
	if lanes > 1 && len(j.segs) == 1 {
		b := g.a.B[starts[0]:]
		if n := len(b); n >= 4 && b[n-4] == 0xC5 && b[n-3] == 0xF8 && b[n-2] == 0x77 && b[n-1] == 0xC3 {
			j.body = append([]byte(nil), b[:n-4]...)
		}
	}
	return j, g.a.B, starts, fstart
}
