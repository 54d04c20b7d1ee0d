package tape

import (
	"encoding/binary"

	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/pmath"
	"github.com/gradsolve/gradsolve/sym"
)

// Math functions in machine code.
//
// The math functions are computed by the machine code itself, in the
// straight-line form package pmath gives them (pmath.Program): each
// step becomes one AVX2 instruction on the four lanes of lane code, or
// its VEX.128 form on the one value of scalar code, each constant an
// operand read from the register file (preloaded after the program's own
// constants: Program.fnConsts). pmath's functions, which sym.Eval
// calls, are the same operations in the same order, so every lane gets
// the bits the interpreter gives (TestLanesMatchInterpreter,
// TestJITMatchesInterpreter, TestLaneFuncsMatchPmath). Without AVX2
// scalar code calls them from Go between pieces.

// laneFuncsInline says machine code computes laneFuncs itself: a
// variable so that benchmarks can measure the other route (Go calls
// between pieces), for programs compiled while it is false.
var laneFuncsInline = true

// scalarFuncs says scalar machine code computes laneFuncs too, one lane
// in the low half of an XMM register with the steps' VEX.128 encodings
// (the variable shifts and the gather need AVX2): a variable so that
// tests can take the other route.
var scalarFuncs = jit.HasAVX2()

// laneFuncs are the math functions lane code computes itself.
var laneFuncs = map[sym.Op]*pmath.Program{
	sym.OpExp:   pmath.ExpSteps(),
	sym.OpLog:   pmath.LogSteps(),
	sym.OpPow:   pmath.PowSteps(),
	sym.OpSin:   pmath.SinSteps(),
	sym.OpCos:   pmath.CosSteps(),
	sym.OpTan:   pmath.TanSteps(),
	sym.OpTanh:  pmath.TanhSteps(),
	sym.OpAtan2: pmath.Atan2Steps(),
	sym.OpMin:   pmath.MinSteps(),
	sym.OpMax:   pmath.MaxSteps(),
}

// maxInlineSteps bounds the steps of the math functions a program's
// machine code computes inline: over it (a right-hand side with
// thousands of calls), every math function of the program is a Go call
// between pieces, as without AVX2. The inline forms cost 50–300 steps
// of machine code a call (sin, cos and tan carry their rarely taken
// reduction at every call), and code 10⁴ calls long would take a second
// and hundreds of megabytes to build; the bound keeps building linear in
// the program at a few bytes per operation. 1<<15 steps is about 200 kB
// of code: 128 calls of sin, or 800 of exp.
const maxInlineSteps = 1 << 15

// inlineSteps returns the steps the math functions of pg's code would
// add inline.
func (pg *Program) inlineSteps() int {
	n := 0
	for _, in := range pg.code {
		if fn := laneFuncs[in.Op]; fn != nil {
			n += len(fn.Steps)
		}
	}
	return n
}

// jitableOp is jitableFor for pg: its math functions are machine code
// only while they stay within maxInlineSteps.
func (pg *Program) jitableOp(op sym.Op, lanes int) bool {
	if laneFuncs[op] != nil && pg.callFuncs {
		return false
	}
	return jitableFor(op, lanes)
}

// vexPPF3 is the VEX pp field of the F3 prefix (vmovq xmm, xmm).
const vexPPF3 = 2

// laneFuncRegs returns the vector registers laneFunc needs for p: its
// registers, and two more where it gathers.
func laneFuncRegs(p *pmath.Program) int {
	n := p.Regs
	for _, s := range p.Steps {
		if s.Op == pmath.StepGather {
			return n + 2
		}
	}
	return n
}

// A function whose straight-line form needs more vector registers than
// lane code has stays a Go call (TestLaneFuncsFit says none does).
func init() {
	for op, p := range laneFuncs {
		if laneFuncRegs(p) > numSlots {
			delete(laneFuncs, op)
		}
	}
}

// The VEX encodings of the steps (prefix 66, 256-bit): the packed
// double arithmetic and bitwise operations and the integer ones (map 0F
// or 0F38, with VEX.W1 for the variable shifts), and the vcmppd
// predicates of the comparisons (LT_OS, GE_OS, GT_OS, EQ_OQ, NGE_US,
// UNORD_Q: the IEEE predicates of Go's operators, and their negation,
// true with a NaN).
var (
	stepOpcode = map[pmath.StepOp]struct{ mmmmm, op byte }{
		pmath.StepAdd: {jit.Map0F, jit.OpAdd}, pmath.StepSub: {jit.Map0F, jit.OpSub},
		pmath.StepMul: {jit.Map0F, jit.OpMul}, pmath.StepDiv: {jit.Map0F, jit.OpDiv},
		pmath.StepMax: {jit.Map0F, jit.OpMax}, pmath.StepMin: {jit.Map0F, jit.OpMin},
		pmath.StepAnd: {jit.Map0F, jit.OpAnd}, pmath.StepOr: {jit.Map0F, jit.OpOr},
		pmath.StepAndNot: {jit.Map0F, jit.OpAndN}, pmath.StepXor: {jit.Map0F, jit.OpXor},
		pmath.StepIAdd: {jit.Map0F, 0xD4}, pmath.StepISub: {jit.Map0F, 0xFB}, // vpaddq, vpsubq
		pmath.StepIEq: {jit.Map0F38, jit.OpPCmpEqQ}, pmath.StepIGT: {jit.Map0F38, 0x37}, // vpcmpeqq, vpcmpgtq
		pmath.StepShlV: {jit.Map0F38, 0x47}, pmath.StepShrV: {jit.Map0F38, 0x45}, // vpsllvq, vpsrlvq (W1)
	}
	stepPredicate = map[pmath.StepOp]byte{
		pmath.StepLT: 0x01, pmath.StepGE: 0x0D, pmath.StepGT: 0x0E, pmath.StepEQ: 0x00,
		pmath.StepNGE: 0x09, pmath.StepUnord: 0x03,
	}
)

// laneFunc translates a laneFuncs function in lane code: its steps on
// vector registers taken for its temporaries (the arguments' registers
// are only read), the result left in one of them.
//
//   - A constant operand is read from the register file, where every
//     constant is held once per lane.
//   - StepGather is vgatherqpd from the table's constants in the
//     register file: index·4 (the table's entries are a lane-major run,
//     so entry i of lane 0 is at the table's start + 32·i), scaled by
//     8, under an all-ones mask, in two more temporaries.
//   - A StepIfAny block is skipped by a forward jump where no lane's
//     mask is set (vmovmskpd into R12, which lane code may clobber):
//     the only jump in lane code, within its own body.
func (g *jitGen) laneFunc(in Instr, nx [3]int32) int {
	p := laneFuncs[in.Op]
	base := g.pg.fnConsts[in.Op]
	var phys [16]int
	phys[0] = g.ensure(in.A, nx[0])
	pinned := []int{phys[0]}
	if p.Args == 2 {
		phys[1] = g.ensure(in.B, nx[1], phys[0])
		pinned = append(pinned, phys[1])
	}
	for v := p.Args; v < p.Regs; v++ {
		phys[v] = g.alloc(pinned...)
		pinned = append(pinned, phys[v])
	}
	wide := g.lanes > 1  // 256-bit lane code, else VEX.128 scalar code
	var gIdx, gMask byte // the temporaries of StepGather
	for _, s := range p.Steps {
		if s.Op == pmath.StepGather {
			gIdx = byte(g.alloc(pinned...))
			pinned = append(pinned, int(gIdx))
			gMask = byte(g.alloc(pinned...))
			break
		}
	}
	a := &g.a
	jump := -1 // the rel32 of the open block's jump
	for _, s := range p.Steps {
		d, x := byte(phys[s.Dst]), byte(phys[s.A])
		konst := s.B < 0
		var m jit.Mem
		var y byte
		if konst {
			m = g.loc(base + int32(-1-int(s.B)))
		} else {
			y = byte(phys[s.B])
		}
		// emit writes d = op(x, y or m), with an immediate where imm ≥ 0
		// and VEX.W1 where w.
		emit := func(mmmmm, op, x byte, imm int, w bool) {
			at := len(a.B)
			if konst {
				a.VRM(jit.VexPP66, mmmmm, wide, op, d, x, m)
			} else {
				a.VRR(jit.VexPP66, mmmmm, wide, op, d, x, y)
			}
			if w {
				a.B[at+2] |= 0x80
			}
			if imm >= 0 {
				a.B = append(a.B, byte(imm))
			}
		}
		switch s.Op {
		case pmath.StepLoad:
			if konst {
				emit(jit.Map0F, jit.OpLoad, 0, -1, false)
			} else {
				emit(jit.Map0F, jit.OpMov, 0, -1, false)
			}
		case pmath.StepShl:
			a.VShiftQL(jit.ShiftLeftQ, d, x, s.Imm, wide)
		case pmath.StepShr:
			a.VShiftQL(jit.ShiftRightQ, d, x, s.Imm, wide)
		case pmath.StepBlend:
			emit(jit.Map0F3A, jit.OpBlendv, x, phys[s.C]<<4, false)
		case pmath.StepRound:
			a.VRRI(jit.VexPP66, jit.Map0F3A, wide, jit.OpRound, d, 0, x, 8|s.Imm)
		case pmath.StepGather:
			shift := byte(0) // entry i at the table's start + 8·i in scalar code
			if wide {
				shift = 2 // + 32·i in lane code (each constant once per lane)
			}
			a.VShiftQL(jit.ShiftLeftQ, gIdx, x, shift, wide)
			a.VRR(jit.VexPP66, jit.Map0F38, wide, jit.OpPCmpEqQ, gMask, gMask, gMask)
			if !wide {
				// Scalar code's value is the low half alone (the high
				// half holds what earlier instructions left): gather
				// only the low one (vmovq zeroes the mask's high half).
				a.VRR(vexPPF3, jit.Map0F, false, 0x7E, gMask, 0, gMask)
			}
			g.gather(d, gIdx, gMask, m, wide)
		case pmath.StepIfAny:
			a.VRR(jit.VexPP66, jit.Map0F, wide, jit.OpMovmsk, jit.R12, 0, byte(phys[s.C]))
			if wide {
				a.B = append(a.B, 0x45, 0x85, 0xE4) // test r12d, r12d: any lane
			} else {
				a.B = append(a.B, 0x41, 0xF6, 0xC4, 0x01) // test r12b, 1: the low half alone
			}
			a.B = append(a.B, 0x0F, 0x84, 0, 0, 0, 0) // jz rel32
			jump = len(a.B) - 4
		case pmath.StepEnd:
			binary.LittleEndian.PutUint32(a.B[jump:], uint32(len(a.B)-(jump+4)))
		default:
			if op, ok := stepOpcode[s.Op]; ok {
				w := s.Op == pmath.StepShlV || s.Op == pmath.StepShrV
				emit(op.mmmmm, op.op, x, -1, w)
			} else {
				emit(jit.Map0F, jit.OpCmp, x, int(stepPredicate[s.Op]), false)
			}
		}
	}
	return phys[p.Result]
}

// gather emits vgatherqpd d, [m.Base + idx·8 + m.Disp], mask (VEX.66.0F38.W1
// 93 /r with a VSIB operand: ModRM mod 10 with a SIB byte and a 32-bit
// displacement), 256-bit where wide. The mask is all ones on entry and
// zero after.
func (g *jitGen) gather(d, idx, mask byte, m jit.Mem, wide bool) {
	a := &g.a
	b1 := byte(jit.Map0F38)
	if d&8 == 0 {
		b1 |= 0x80 // R̄
	}
	if idx&8 == 0 {
		b1 |= 0x40 // X̄
	}
	if m.Base&8 == 0 {
		b1 |= 0x20 // B̄
	}
	b2 := byte(0x80) | (^mask&15)<<3 | jit.VexPP66 // W1, vvvv = mask
	if wide {
		b2 |= 4 // L 256
	}
	a.B = append(a.B, 0xC4, b1, b2, 0x93, 0x80|(d&7)<<3|4, 3<<6|(idx&7)<<3|m.Base&7)
	a.B = binary.LittleEndian.AppendUint32(a.B, uint32(m.Disp))
}
