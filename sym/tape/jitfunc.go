package tape

import (
	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/pmath"
	"github.com/gradsolve/gradsolve/sym"
)

// Math functions in lane code.
//
// exp and log are computed by the lane code itself, in the
// straight-line form package pmath gives them (pmath.Program): each
// step becomes one AVX2 instruction on the four lanes, each constant an
// operand read from the register file (preloaded after the program's own
// constants: Program.fnConsts). pmath.Exp and pmath.Log, which sym.Eval
// calls, are the same operations in the same order, so every lane gets
// the bits the interpreter and the scalar machine code give
// (TestLanesMatchInterpreter, TestLaneFuncsMatchPmath). The other math
// functions stay Go calls between pieces of lane code.

// laneFuncsInline says lane code computes laneFuncs itself: a variable
// so that benchmarks can measure the other route (Go calls between
// pieces), for programs compiled while it is false.
var laneFuncsInline = true

// laneFuncs are the math functions lane code computes itself.
var laneFuncs = map[sym.Op]*pmath.Program{
	sym.OpExp: pmath.ExpSteps(),
	sym.OpLog: pmath.LogSteps(),
}

// The VEX encodings of the steps (map 0F, prefix 66, 256-bit): the
// packed double arithmetic and bitwise operations, vpaddq, and the
// vcmppd predicates of the comparisons (LT_OS, GE_OS, GT_OS, EQ_OQ,
// NGE_US, UNORD_Q: the IEEE predicates of Go's operators, and their
// negation, true with a NaN).
var (
	stepOpcode = map[pmath.StepOp]byte{
		pmath.StepAdd: jit.OpAdd, pmath.StepSub: jit.OpSub, pmath.StepMul: jit.OpMul, pmath.StepDiv: jit.OpDiv,
		pmath.StepMax: jit.OpMax, pmath.StepMin: jit.OpMin, pmath.StepAnd: jit.OpAnd, pmath.StepOr: jit.OpOr,
		pmath.StepAndNot: jit.OpAndN, pmath.StepIAdd: opPAddQ,
	}
	stepPredicate = map[pmath.StepOp]byte{
		pmath.StepLT: 0x01, pmath.StepGE: 0x0D, pmath.StepGT: 0x0E, pmath.StepEQ: 0x00,
		pmath.StepNGE: 0x09, pmath.StepUnord: 0x03,
	}
)

// opPAddQ is vpaddq (map 0F, 66; AVX2 in its 256-bit form).
const opPAddQ = 0xD4

// laneFunc translates exp or log in lane code: the function's steps on
// vector registers taken for its temporaries (the argument's register
// is only read), the result left in one of them.
func (g *jitGen) laneFunc(in Instr, nx [3]int32) int {
	p := laneFuncs[in.Op]
	base := g.pg.fnConsts[in.Op]
	var phys [16]int
	phys[0] = g.ensure(in.A, nx[0])
	pinned := []int{phys[0]}
	for v := 1; v < p.Regs; v++ {
		phys[v] = g.alloc(pinned...)
		pinned = append(pinned, phys[v])
	}
	a := &g.a
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
		// rr or rm: d = op(x, y or m) in map 0F, with an immediate where imm >= 0.
		emit := func(mmmmm, op byte, x byte, imm int) {
			if konst {
				a.VRM(jit.VexPP66, mmmmm, true, op, d, x, m)
			} else {
				a.VRR(jit.VexPP66, mmmmm, true, op, d, x, y)
			}
			if imm >= 0 {
				a.B = append(a.B, byte(imm))
			}
		}
		switch s.Op {
		case pmath.StepLoad:
			if konst {
				emit(jit.Map0F, jit.OpLoad, 0, -1)
			} else {
				emit(jit.Map0F, jit.OpMov, 0, -1)
			}
		case pmath.StepShl:
			a.VShiftQ(jit.ShiftLeftQ, d, x, s.Imm)
		case pmath.StepShr:
			a.VShiftQ(jit.ShiftRightQ, d, x, s.Imm)
		case pmath.StepBlend:
			emit(jit.Map0F3A, jit.OpBlendv, x, int(phys[s.C])<<4)
		default:
			if op, ok := stepOpcode[s.Op]; ok {
				emit(jit.Map0F, op, x, -1)
			} else {
				emit(jit.Map0F, jit.OpCmp, x, int(stepPredicate[s.Op]))
			}
		}
	}
	return phys[p.Result]
}
