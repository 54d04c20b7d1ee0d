package jit

import "encoding/binary"

// The general and vector registers by their x86-64 numbers.
const (
	AX  = 0
	CX  = 1
	DX  = 2
	BX  = 3
	SP  = 4
	BP  = 5
	SI  = 6
	DI  = 7
	R8  = 8
	R9  = 9
	R10 = 10
	R11 = 11
	R12 = 12
	R13 = 13
	R14 = 14
	R15 = 15
)

// Mem is a memory operand [Base + Disp].
type Mem struct {
	Base byte
	Disp int32
}

// Asm appends x86-64 machine code to B.
type Asm struct{ B []byte }

// The legacy SSE prefixes and opcodes (after 0F) used.
const (
	PSD    = 0xF2 // scalar double
	PPD    = 0x66 // packed double
	OpLoad = 0x10 // movsd x, m64 / movupd
	OpSt   = 0x11 // movsd m64, x / movupd
	OpMov  = 0x28 // movapd x, x
	OpAdd  = 0x58
	OpMul  = 0x59
	OpSub  = 0x5C
	OpDiv  = 0x5E
	OpSqrt = 0x51
	OpAnd  = 0x54
	OpAndN = 0x55
	OpOr   = 0x56
	OpXor  = 0x57
	OpCmp  = 0xC2
)

// rex emits a REX prefix when one is needed: w for 64-bit operands, reg
// the register of the ModRM reg field, rm that of the rm field.
func (a *Asm) rex(w bool, reg, rm byte) {
	v := byte(0x40)
	if w {
		v |= 8
	}
	if reg&8 != 0 {
		v |= 4
	}
	if rm&8 != 0 {
		v |= 1
	}
	if v != 0x40 {
		a.B = append(a.B, v)
	}
}

// modrmMem emits the ModRM byte (and SIB, displacement) of reg with
// memory operand m, with an 8-bit displacement where it fits.
func (a *Asm) modrmMem(reg byte, m Mem) {
	mod := byte(0x80)
	if m.Disp >= -128 && m.Disp <= 127 {
		mod = 0x40
	}
	a.B = append(a.B, mod|(reg&7)<<3|m.Base&7)
	if m.Base&7 == SP {
		a.B = append(a.B, 0x24) // SIB: base only
	}
	if mod == 0x40 {
		a.B = append(a.B, byte(int8(m.Disp)))
	} else {
		a.B = binary.LittleEndian.AppendUint32(a.B, uint32(m.Disp))
	}
}

// SSE emits prefix [REX] 0F op with two vector register operands.
func (a *Asm) SSE(prefix, op, dst, src byte) {
	a.B = append(a.B, prefix)
	a.rex(false, dst, src)
	a.B = append(a.B, 0x0F, op, 0xC0|(dst&7)<<3|src&7)
}

// SSEMem emits prefix [REX] 0F op with a vector register and a memory
// operand.
func (a *Asm) SSEMem(prefix, op, reg byte, m Mem) {
	a.B = append(a.B, prefix)
	a.rex(false, reg, m.Base)
	a.B = append(a.B, 0x0F, op)
	a.modrmMem(reg, m)
}

// MovImm64 emits mov r, imm64.
func (a *Asm) MovImm64(r byte, v uint64) {
	a.rex(true, 0, r)
	a.B = append(a.B, 0xB8+r&7)
	a.B = binary.LittleEndian.AppendUint64(a.B, v)
}

// MovqToX emits movq x, r (a general register's 64 bits into the low
// half of a vector register).
func (a *Asm) MovqToX(x, r byte) {
	a.B = append(a.B, PPD)
	a.rex(true, x, r)
	a.B = append(a.B, 0x0F, 0x6E, 0xC0|(x&7)<<3|r&7)
}

// VMovqToX emits vmovq x, r, MovqToX in its VEX encoding (which zeroes
// the upper half of the register): code that also runs 256-bit
// instructions uses it, since a legacy-SSE instruction after them
// stalls on the change of state.
func (a *Asm) VMovqToX(x, r byte) {
	b1 := byte(Map0F) | 0x40 // X̄
	if x&8 == 0 {
		b1 |= 0x80 // R̄
	}
	if r&8 == 0 {
		b1 |= 0x20 // B̄
	}
	a.B = append(a.B, 0xC4, b1, 0x80|0x78|VexPP66, 0x6E, 0xC0|(x&7)<<3|r&7) // W1, vvvv unused, L0
}

// Lea emits lea r, [m] (64-bit).
func (a *Asm) Lea(r byte, m Mem) {
	a.rex(true, r, m.Base)
	a.B = append(a.B, 0x8D)
	a.modrmMem(r, m)
}

// Load64 emits mov r, [m].
func (a *Asm) Load64(r byte, m Mem) {
	a.rex(true, r, m.Base)
	a.B = append(a.B, 0x8B)
	a.modrmMem(r, m)
}

// JmpReg emits jmp r.
func (a *Asm) JmpReg(r byte) {
	a.rex(false, 0, r)
	a.B = append(a.B, 0xFF, 0xE0|r&7)
}

// Ret emits ret.
func (a *Asm) Ret() { a.B = append(a.B, 0xC3) }

// The VEX forms used: the implied prefix (pp) and opcode map.
const (
	VexPP66 = 1 // 66: packed double
	VexPPF2 = 3 // F2: scalar double
	Map0F   = 1
	Map0F38 = 2
	Map0F3A = 3
)

// vex emits a three-byte VEX prefix: reg and rm as in ModRM, v the
// extra source register (vvvv), l256 for 256-bit operands.
func (a *Asm) vex(pp, mmmmm byte, l256 bool, reg, v, rm byte) {
	b1 := mmmmm
	if reg&8 == 0 {
		b1 |= 0x80 // R̄
	}
	b1 |= 0x40 // X̄: no index register
	if rm&8 == 0 {
		b1 |= 0x20 // B̄
	}
	b2 := (^v&15)<<3 | pp
	if l256 {
		b2 |= 4
	}
	a.B = append(a.B, 0xC4, b1, b2)
}

// VRR emits a VEX instruction dst = op(src1, src2) on vector registers.
func (a *Asm) VRR(pp, mmmmm byte, l256 bool, op, dst, src1, src2 byte) {
	a.vex(pp, mmmmm, l256, dst, src1, src2)
	a.B = append(a.B, op, 0xC0|(dst&7)<<3|src2&7)
}

// VRM emits a VEX instruction dst = op(src1, [m]); src1 is 0 for the
// forms that have none (loads, stores, broadcasts).
func (a *Asm) VRM(pp, mmmmm byte, l256 bool, op, dst, src1 byte, m Mem) {
	a.vex(pp, mmmmm, l256, dst, src1, m.Base)
	a.B = append(a.B, op)
	a.modrmMem(dst, m)
}

// Vzeroupper emits vzeroupper, which ends AVX code before a return to
// code that uses the legacy SSE encodings.
func (a *Asm) Vzeroupper() { a.B = append(a.B, 0xC5, 0xF8, 0x77) }

// MovRR emits mov dst, src (64-bit general registers).
func (a *Asm) MovRR(dst, src byte) {
	a.rex(true, src, dst)
	a.B = append(a.B, 0x89, 0xC0|(src&7)<<3|dst&7)
}

// More opcodes of the VEX forms (packed double unless noted): minimum,
// maximum, the sign mask into a general register (vmovmskpd), the
// integer and, or and 64-bit equality of the 256-bit lanes (AVX2), the
// broadcast of a 64-bit integer (vpbroadcastq, AVX2), rounding
// (vroundpd) and the variable blend (vblendvpd).
const (
	OpMin     = 0x5D // map 0F
	OpMax     = 0x5F // map 0F
	OpMovmsk  = 0x50 // map 0F: vmovmskpd r32, ymm (reg = the general register)
	OpPAnd    = 0xDB // map 0F
	OpPOr     = 0xEB // map 0F
	OpPCmpEqQ = 0x29 // map 0F38
	OpBcastQ  = 0x59 // map 0F38: vpbroadcastq ymm, m64
	OpRound   = 0x09 // map 0F3A, with the rounding mode as immediate
	OpBlendv  = 0x4B // map 0F3A, with the mask register in imm8[7:4]
)

// VRRI emits VRR with an 8-bit immediate (vcmppd's predicate,
// vroundpd's mode).
func (a *Asm) VRRI(pp, mmmmm byte, l256 bool, op, dst, src1, src2, imm byte) {
	a.VRR(pp, mmmmm, l256, op, dst, src1, src2)
	a.B = append(a.B, imm)
}

// VRMI emits VRM with an 8-bit immediate.
func (a *Asm) VRMI(pp, mmmmm byte, l256 bool, op, dst, src1 byte, m Mem, imm byte) {
	a.VRM(pp, mmmmm, l256, op, dst, src1, m)
	a.B = append(a.B, imm)
}

// VBlendv emits vblendvpd dst, src1, src2, mask (256-bit): each 64-bit
// lane of dst is src2's where mask's sign bit is set, else src1's.
func (a *Asm) VBlendv(dst, src1, src2, mask byte) {
	a.VRRI(VexPP66, Map0F3A, true, OpBlendv, dst, src1, src2, mask<<4)
}

// The ModRM reg fields that select the shift by an immediate of
// opcode 73 (map 0F, 66): vpsrlq and vpsllq.
const (
	ShiftRightQ = 2
	ShiftLeftQ  = 6
)

// VShiftQ emits the 256-bit shift of each 64-bit lane of src by imm
// into dst (AVX2): kind is ShiftRightQ (logical) or ShiftLeftQ.
func (a *Asm) VShiftQ(kind, dst, src, imm byte) { a.VShiftQL(kind, dst, src, imm, true) }

// VShiftQL is VShiftQ in its 256-bit form (l256, AVX2) or its 128-bit
// one (AVX).
func (a *Asm) VShiftQL(kind, dst, src, imm byte, l256 bool) {
	a.vex(VexPP66, Map0F, l256, kind, dst, src)
	a.B = append(a.B, 0x73, 0xC0|kind<<3|src&7, imm)
}

// Store64 emits mov [m], r.
func (a *Asm) Store64(m Mem, r byte) {
	a.rex(true, r, m.Base)
	a.B = append(a.B, 0x89)
	a.modrmMem(r, m)
}

// VPtest emits vptest y, x (256-bit): ZF is set where x AND y is zero
// in every bit.
func (a *Asm) VPtest(x, y byte) { a.VRR(VexPP66, Map0F38, true, 0x17, x, 0, y) }

// DecMem64 emits dec qword [m]: ZF is set where the count reaches zero.
func (a *Asm) DecMem64(m Mem) {
	a.rex(true, 0, m.Base)
	a.B = append(a.B, 0xFF)
	a.modrmMem(1, m)
}

// Jnz32 emits jnz with a 32-bit displacement to target, an offset in B
// (a backward jump), or, where target is negative, to be set later by
// Patch32 (a forward jump); it returns the offset of the displacement.
func (a *Asm) Jnz32(target int) int { return a.jcc32(0x85, target) }

// Jz32 is Jnz32 for jz: the jump is taken where ZF is set.
func (a *Asm) Jz32(target int) int { return a.jcc32(0x84, target) }

// jcc32 emits the conditional jump 0F op with a 32-bit displacement (see
// Jnz32).
func (a *Asm) jcc32(op byte, target int) int {
	a.B = append(a.B, 0x0F, op, 0, 0, 0, 0)
	at := len(a.B) - 4
	if target >= 0 {
		a.Patch32(at, target)
	}
	return at
}

// Patch32 sets the 32-bit displacement at offset at (of a jump that
// ends there) to reach target, an offset in B.
func (a *Asm) Patch32(at, target int) {
	binary.LittleEndian.PutUint32(a.B[at:], uint32(int32(target-(at+4))))
}

// The 64-bit lanes of a 256-bit register moved one at a time, between
// it and memory or general registers: what code that gathers four
// lanes' values from four addresses uses instead of four 64-bit stores
// and a 256-bit load of what they stored (a load the processor cannot
// forward from the stores, so that it waits for them to reach the
// cache), and what it scatters them with.

// VMovsdLoad emits vmovsd x, [m]: the 64 bits at m into x's first
// lane, the rest of x (all 256 bits) cleared.
func (a *Asm) VMovsdLoad(x byte, m Mem) { a.VRM(VexPPF2, Map0F, false, OpLoad, x, 0, m) }

// VMovhpdLoad emits vmovhpd x, lo, [m]: lo's first lane, then the 64
// bits at m, into x's first 128 bits (its upper 128 cleared).
func (a *Asm) VMovhpdLoad(x, lo byte, m Mem) { a.VRM(VexPP66, Map0F, false, 0x16, x, lo, m) }

// VMovsdStore emits vmovsd [m], x: x's first lane.
func (a *Asm) VMovsdStore(m Mem, x byte) { a.VRM(VexPPF2, Map0F, false, OpSt, x, 0, m) }

// VMovhpdStore emits vmovhpd [m], x: x's second lane.
func (a *Asm) VMovhpdStore(m Mem, x byte) { a.VRM(VexPP66, Map0F, false, 0x17, x, 0, m) }

// VInsertHigh emits vinsertf128 dst, lo, x, 1: lo's first 128 bits,
// then x's.
func (a *Asm) VInsertHigh(dst, lo, x byte) { a.VRRI(VexPP66, Map0F3A, true, 0x18, dst, lo, x, 1) }

// VExtractHigh emits vextractf128 x, y, 1: y's upper 128 bits into x.
func (a *Asm) VExtractHigh(x, y byte) { a.VRRI(VexPP66, Map0F3A, true, 0x19, y, 0, x, 1) }

// VMovqFromX emits vmovq r, x: x's first lane into a general register.
func (a *Asm) VMovqFromX(r, x byte) {
	a.vex(VexPP66, Map0F, false, x, 0, r)
	a.B[len(a.B)-1] |= 0x80 // W1: 64 bits
	a.B = append(a.B, 0x7E, 0xC0|(x&7)<<3|r&7)
}

// VPextrq1 emits vpextrq r, x, 1: x's second lane into a general
// register.
func (a *Asm) VPextrq1(r, x byte) {
	a.vex(VexPP66, Map0F3A, false, x, 0, r)
	a.B[len(a.B)-1] |= 0x80 // W1
	a.B = append(a.B, 0x16, 0xC0|(x&7)<<3|r&7, 1)
}

// Prefetch emits prefetcht0 [m]: a hint to bring m's cache line into
// every level of the cache.
func (a *Asm) Prefetch(m Mem) {
	a.rex(false, 1, m.Base)
	a.B = append(a.B, 0x0F, 0x18)
	a.modrmMem(1, m)
}
