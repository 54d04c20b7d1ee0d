package control

import (
	"math"
	"sync"
	"unsafe"

	"github.com/gradsolve/gradsolve/internal/jit"
)

// The machine code of NextLanes: Next for four lanes in the 64-bit
// lanes of 256-bit registers (AVX2), built once per process.
//
// Each lane performs Next's arithmetic in Next's order, product by
// product, without fused multiply–adds, so every lane the code
// completes has the bits of Next (TestNextLanes):
//
//   - log2: frexp by bits for normal x (the exponent field by a 64-bit
//     shift, made a double exactly as (2⁵² + be) − (2⁵² + 1022) from the
//     bits 0x433<<52 | be; the mantissa by and/or), m < √½ doubled with
//     e − 1 by blends, then log2's Estrin polynomial;
//   - the exponent y = β1·log₂err − β2·log₂errOld (accepted lanes) or
//     β1·log₂err (rejected ones), blended;
//   - exp2: n = math.Round(y) — vroundpd has no half-away-from-zero
//     mode, so n = trunc(y), and trunc(y) ± 1 (the sign of y) where
//     |y − trunc(y)| ≥ ½ (y − trunc(y) is exact), which is math.Round
//     for every y, the sign of a zero included; exp2's polynomial; and
//     2ⁿ as the bits of (n + 2⁵² + 1023) shifted left by 52;
//   - the verdicts: accept where err ≤ 1, err = 0, 1 < err ≤ MaxFloat64,
//     the rest (NaN, +Inf) rejected by QMin, the cap at 1 after a
//     rejection, all as masks and blends.
//
// vminpd and vmaxpd return their second operand when the operands are
// unordered or both zeros, where math.Min and math.Max have rules of
// their own (NaN, the sign of zero); on the operands that reach them in
// a lane the code completes they agree: min(1/QMin, err^β1/errOld^β2/γ)
// and max(1/QMax, ·) compare positive numbers (QMin, QMax and Safety are
// positive and finite, laneCodeFits; 2^y is positive and normal on the
// fast path), and max(log₂err, log₂QOldInit) compares two finite
// numbers (lanes with a NaN log₂QOldInit are deferred), of which
// neither is −0 (log2 never returns −0: its result is e + lnm·log₂e,
// which is zero only as +0 + +0).
//
// A lane leaves the fast path, and is deferred to Next (left untouched,
// its bit set in io[2]), where err is negative, −Inf or subnormal (math.
// Frexp's ground), where exp2 is needed and n = round(y) lies outside
// [−1021, 1022] (NaN included: exp2 then saturates or calls math.Ldexp),
// or where log₂QOldInit is NaN. The error norms of a solve are zero,
// normal or +Inf; the controller's y stays within ±1022 unless err is
// below about 2^(−1022/β1); so deferred lanes are rare.
//
// The code is entered by jit.Call with (see nextCode): DI err, SI
// log2ErrOld, DX log2QOld, R8 rejected, R9 factor (four lanes each from
// the first), R10 LaneStates.io, R11 the *PI, CX laneConsts. The code of
// eight lanes judges the next four after the first, every block 32 bytes
// on and io's second triple.

// useLaneCode says NextLanes may run the machine code (tests take the
// Go route by clearing it).
var useLaneCode = jit.HasAVX2()

var laneCode struct {
	once          sync.Once
	code, code8   *jit.Code
	entry, entry8 uintptr
}

// laneEntry returns the address of the machine code for four lanes,
// built on first use, or 0 where it could not be made executable
// (NextLanes then runs in Go).
func laneEntry() uintptr {
	laneCode.once.Do(func() {
		b4, b8 := emitLaneCode(1), emitLaneCode(2)
		code, err := jit.NewCode(b4)
		if err != nil {
			return
		}
		code8, err := jit.NewCode(b8)
		if err != nil {
			return
		}
		code.Name(len(b4), "control.pi-lanes4", nil)
		code8.Name(len(b8), "control.pi-lanes8", nil)
		laneCode.code, laneCode.entry = code, code.Addr(0)
		laneCode.code8, laneCode.entry8 = code8, code8.Addr(0)
	})
	return laneCode.entry
}

// The constants of the code, each four times (one 256-bit operand),
// by index into laneConsts.
const (
	kLaneBit = iota // 1, 2, 4, 8: lane i's bit of io[0]
	kOne
	kHalf
	kZero
	kAllOnes
	kAbs
	kSign
	kMant     // the bits other than the exponent field
	kHalfExp  // 1022<<52: the exponent field of [0.5, 1)
	kExpBias  // 0x433<<52: the bits of 2⁵²
	kExpSub   // 2⁵² + 1022
	kPow2Bias // 2⁵² + 1023
	kSqrtHalf
	kMaxFloat
	kMinNormal
	kNMin
	kNMax
	kLog2E
	kLn2
	kL3 // log2's coefficients 1/3 … 1/17
	kL5
	kL7
	kL9
	kL11
	kL13
	kL15
	kL17
	kE6 // exp2's coefficients 1/3! … 1/13!
	kE24
	kE120
	kE720
	kE5040
	kE40320
	kE362880
	kE3628800
	kE39916800
	kE479001600
	kE6227020800
	numLaneConsts
)

// laneConsts holds the constants, read by the code through CX.
var laneConsts = func() (t [4 * numLaneConsts]uint64) {
	f := math.Float64bits
	v := [numLaneConsts]uint64{
		kOne:         f(1),
		kHalf:        f(0.5),
		kZero:        0,
		kAllOnes:     ^uint64(0),
		kAbs:         1<<63 - 1,
		kSign:        1 << 63,
		kMant:        ^uint64(0x7ff << 52),
		kHalfExp:     1022 << 52,
		kExpBias:     0x433 << 52,
		kExpSub:      f(0x1p52 + 1022),
		kPow2Bias:    f(0x1p52 + 1023),
		kSqrtHalf:    f(math.Sqrt2 / 2),
		kMaxFloat:    f(math.MaxFloat64),
		kMinNormal:   f(0x1p-1022),
		kNMin:        f(-1021),
		kNMax:        f(1022),
		kLog2E:       f(math.Log2E),
		kLn2:         f(math.Ln2),
		kL3:          f(1.0 / 3),
		kL5:          f(1.0 / 5),
		kL7:          f(1.0 / 7),
		kL9:          f(1.0 / 9),
		kL11:         f(1.0 / 11),
		kL13:         f(1.0 / 13),
		kL15:         f(1.0 / 15),
		kL17:         f(1.0 / 17),
		kE6:          f(1.0 / 6),
		kE24:         f(1.0 / 24),
		kE120:        f(1.0 / 120),
		kE720:        f(1.0 / 720),
		kE5040:       f(1.0 / 5040),
		kE40320:      f(1.0 / 40320),
		kE362880:     f(1.0 / 362880),
		kE3628800:    f(1.0 / 3628800),
		kE39916800:   f(1.0 / 39916800),
		kE479001600:  f(1.0 / 479001600),
		kE6227020800: f(1.0 / 6227020800),
	}
	for k, x := range v {
		for i := range 4 {
			t[4*k+i] = x
		}
	}
	for i := range 4 {
		t[4*kLaneBit+i] = 1 << i
	}
	return t
}()

// The vcmppd predicates used.
const (
	cmpEQ    = 0x00 // ordered, false with NaN
	cmpLT    = 0x01
	cmpLE    = 0x02
	cmpUnord = 0x03
	cmpNEQ   = 0x0C // ordered: false with NaN
	cmpGE    = 0x0D
	cmpGT    = 0x0E
)

// laneGen emits 256-bit packed-double instructions.
type laneGen struct{ a jit.Asm }

const (
	pp  = jit.VexPP66
	m0F = jit.Map0F
)

func (g *laneGen) rr(op, d, s1, s2 byte) { g.a.VRR(pp, m0F, true, op, d, s1, s2) }

// rk is d = s1 op constant k.
func (g *laneGen) rk(op, d, s1 byte, k int) {
	g.a.VRM(pp, m0F, true, op, d, s1, jit.Mem{Base: jit.CX, Disp: int32(32 * k)})
}

func (g *laneGen) load(d, base byte) { g.a.VRM(pp, m0F, true, jit.OpLoad, d, 0, jit.Mem{Base: base}) }
func (g *laneGen) store(base, s byte) {
	g.a.VRM(pp, m0F, true, jit.OpSt, s, 0, jit.Mem{Base: base})
}
func (g *laneGen) cmpK(d, s byte, k int, pred byte) {
	g.a.VRMI(pp, m0F, true, jit.OpCmp, d, s, jit.Mem{Base: jit.CX, Disp: int32(32 * k)}, pred)
}

// bcast is vbroadcastsd d, [R11 + off]: a field of the *PI.
func (g *laneGen) bcast(d byte, off uintptr) {
	g.a.VRM(pp, jit.Map0F38, true, 0x19, d, 0, jit.Mem{Base: jit.R11, Disp: int32(off)})
}

// poly is d = c0 + t·c1 (the constants k0, k1): the pairs of Estrin's
// scheme, the product rounded before the add.
func (g *laneGen) poly(d, t byte, k0, k1 int) {
	g.rk(jit.OpMul, d, t, k1)
	g.rk(jit.OpAdd, d, d, k0)
}

// emitLaneCode returns the machine code described above. The comments
// give each register's value in terms of Next's variables.
func emitLaneCode(groups int) []byte {
	var g laneGen
	for grp := range groups {
		if grp > 0 {
			// The next four lanes: every block 32 bytes on, io's
			// triple 24.
			for _, r := range []byte{jit.DI, jit.SI, jit.DX, jit.R8, jit.R9} {
				g.a.Lea(r, jit.Mem{Base: r, Disp: 32})
			}
			g.a.Lea(jit.R10, jit.Mem{Base: jit.R10, Disp: 24})
		}
		g.body()
	}
	g.a.Vzeroupper()
	g.a.Ret()
	return g.a.B
}

// body emits the judgement of four lanes (emitLaneCode).
func (g *laneGen) body() {
	a := &g.a
	const (
		err, act, l, acc = 0, 1, 2, 6 // kept throughout
		lo               = 5          // log2ErrOld
	)
	g.load(err, jit.DI)
	// The active lanes: io[0]'s bits as masks.
	a.VRM(pp, jit.Map0F38, true, jit.OpBcastQ, act, 0, jit.Mem{Base: jit.R10})
	g.rk(jit.OpPAnd, act, act, kLaneBit)
	a.VRM(pp, jit.Map0F38, true, jit.OpPCmpEqQ, act, act, jit.Mem{Base: jit.CX, Disp: 32 * kLaneBit})

	// l = log2(err).
	a.VShiftQ(jit.ShiftRightQ, l, err, 52) // be
	g.rk(jit.OpPOr, l, l, kExpBias)        // the double 2⁵² + be
	g.rk(jit.OpSub, l, l, kExpSub)         // e = be − 1022
	g.rk(jit.OpAnd, 3, err, kMant)
	g.rk(jit.OpOr, 3, 3, kHalfExp) // m ∈ [0.5, 1)
	g.cmpK(4, 3, kSqrtHalf, cmpLT) // m < √½
	g.rr(jit.OpAdd, 7, 3, 3)       // m·2
	a.VBlendv(3, 3, 7, 4)          // m
	g.rk(jit.OpAnd, 4, 4, kOne)
	g.rr(jit.OpSub, l, l, 4) // e
	g.rk(jit.OpSub, 4, 3, kOne)
	g.rk(jit.OpAdd, 7, 3, kOne)
	g.rr(jit.OpDiv, 4, 4, 7)   // s
	g.rr(jit.OpMul, 7, 4, 4)   // z
	g.rr(jit.OpMul, 8, 7, 7)   // z2
	g.rr(jit.OpMul, 9, 8, 8)   // z4
	g.rr(jit.OpMul, 10, 9, 9)  // z8
	g.poly(11, 7, kOne, kL3)   // p01
	g.poly(12, 7, kL5, kL7)    // p23
	g.poly(13, 7, kL9, kL11)   // p45
	g.poly(14, 7, kL13, kL15)  // p67
	g.rr(jit.OpMul, 12, 8, 12) // z2·p23
	g.rr(jit.OpAdd, 11, 11, 12)
	g.rr(jit.OpMul, 14, 8, 14) // z2·p67
	g.rr(jit.OpAdd, 13, 13, 14)
	g.rr(jit.OpMul, 13, 9, 13)  // z4·q1
	g.rr(jit.OpAdd, 11, 11, 13) // r0
	g.rk(jit.OpMul, 10, 10, kL17)
	g.rr(jit.OpAdd, 11, 11, 10) // p
	g.rr(jit.OpAdd, 4, 4, 4)    // 2·s
	g.rr(jit.OpMul, 4, 4, 11)   // lnm
	g.rk(jit.OpMul, 4, 4, kLog2E)
	g.rr(jit.OpAdd, l, l, 4) // l

	// y: β1·l − β2·log2ErrOld where err ≤ 1, else β1·l.
	g.bcast(3, unsafe.Offsetof(PI{}.Beta1))
	g.rr(jit.OpMul, 3, 3, l)
	g.bcast(4, unsafe.Offsetof(PI{}.Beta2))
	g.load(lo, jit.SI)
	g.rr(jit.OpMul, 4, 4, lo)
	g.rr(jit.OpSub, 4, 3, 4)
	g.cmpK(acc, err, kOne, cmpLE) // accept
	a.VBlendv(3, 3, 4, acc)       // y

	// exp2(y).
	const y, n, g1, g2, g4, g8 = 3, 4, 7, 8, 9, 10
	a.VRRI(pp, jit.Map0F3A, true, jit.OpRound, n, 0, y, 0x0B) // trunc(y), precision exception suppressed
	g.rr(jit.OpSub, g1, y, n)
	g.rk(jit.OpAnd, g1, g1, kAbs)
	g.cmpK(g1, g1, kHalf, cmpGE) // |y − trunc(y)| ≥ ½
	g.rk(jit.OpAnd, g2, y, kSign)
	g.rk(jit.OpOr, g2, g2, kOne) // ±1, the sign of y
	g.rr(jit.OpAdd, g2, n, g2)
	a.VBlendv(n, n, g2, g1) // n = math.Round(y)
	g.rr(jit.OpSub, g1, y, n)
	g.rk(jit.OpMul, g1, g1, kLn2) // g
	g.rr(jit.OpMul, g2, g1, g1)   // g2
	g.rr(jit.OpMul, g4, g2, g2)   // g4
	g.rr(jit.OpMul, g8, g4, g4)   // g8
	g.rk(jit.OpAdd, 11, g1, kOne) // p01
	g.poly(12, g1, kHalf, kE6)    // p23
	g.rr(jit.OpMul, 12, g2, 12)
	g.rr(jit.OpAdd, 11, 11, 12)   // q0
	g.poly(12, g1, kE24, kE120)   // p45
	g.poly(13, g1, kE720, kE5040) // p67
	g.rr(jit.OpMul, 13, g2, 13)
	g.rr(jit.OpAdd, 12, 12, 13) // q1
	g.rr(jit.OpMul, 12, g4, 12)
	g.rr(jit.OpAdd, 11, 11, 12)           // r0
	g.poly(12, g1, kE40320, kE362880)     // p89
	g.poly(13, g1, kE3628800, kE39916800) // p1011
	g.rr(jit.OpMul, 13, g2, 13)
	g.rr(jit.OpAdd, 12, 12, 13)               // q2
	g.poly(13, g1, kE479001600, kE6227020800) // p1213
	g.rr(jit.OpMul, 13, g4, 13)
	g.rr(jit.OpAdd, 12, 12, 13) // r1
	g.rr(jit.OpMul, 12, g8, 12)
	g.rr(jit.OpAdd, 11, 11, 12) // p
	g.rk(jit.OpAdd, 12, n, kPow2Bias)
	a.VShiftQ(jit.ShiftLeftQ, 12, 12, 52) // 2ⁿ
	g.rr(jit.OpMul, 11, 11, 12)           // exp2(y)
	const ok = 13
	g.cmpK(ok, n, kNMin, cmpGE)
	g.cmpK(14, n, kNMax, cmpLE)
	g.rr(jit.OpAnd, ok, ok, 14) // −1021 ≤ n ≤ 1022: exp2's fast path

	// The factor.
	const one, zero, f, rej = 9, 14, 12, 10
	g.bcast(7, unsafe.Offsetof(PI{}.Safety))
	g.rr(jit.OpDiv, 11, 11, 7) // exp2(y)/γ
	a.VRM(pp, m0F, true, jit.OpLoad, one, 0, jit.Mem{Base: jit.CX, Disp: 32 * kOne})
	g.bcast(7, unsafe.Offsetof(PI{}.QMin)) // QMin
	g.rr(jit.OpDiv, 8, one, 7)             // 1/QMin
	g.bcast(10, unsafe.Offsetof(PI{}.QMax))
	g.rr(jit.OpDiv, 10, one, 10) // 1/QMax
	g.rr(jit.OpMin, 11, 8, 11)   // min(1/QMin, q): rejected lanes' q
	g.rr(jit.OpMax, f, 10, 11)   // max(1/QMax, ·): accepted lanes' q
	a.VBlendv(f, 11, f, acc)
	g.cmpK(zero, err, kZero, cmpEQ)
	a.VBlendv(f, f, 10, zero)  // err = 0: q = 1/QMax
	g.rr(jit.OpDiv, f, one, f) // 1/q
	g.cmpK(15, err, kOne, cmpGT)
	g.cmpK(10, err, kMaxFloat, cmpLE)
	g.rr(jit.OpAnd, 15, 15, 10) // 1 < err ≤ MaxFloat64
	g.rr(jit.OpOr, 10, 15, acc) // err ≤ MaxFloat64, not NaN
	a.VBlendv(f, 7, f, 10)      // else QMin
	g.load(rej, jit.R8)
	g.cmpK(8, f, kOne, cmpGT)
	g.rr(jit.OpAnd, 8, 8, rej)
	g.rr(jit.OpAnd, 8, 8, acc)
	a.VBlendv(f, f, one, 8) // accepted after a rejection: at most 1

	// The deferred lanes.
	const slow, done, lq = 7, 8, 11
	g.cmpK(slow, err, kMinNormal, cmpLT)
	g.cmpK(8, err, kZero, cmpNEQ)
	g.rr(jit.OpAnd, slow, slow, 8) // err < 0 or subnormal
	g.cmpK(lq, err, kMaxFloat, cmpLE)
	g.cmpK(8, err, kZero, cmpGT)
	g.rr(jit.OpAnd, 8, 8, lq)  // exp2 needed
	g.rr(jit.OpAndN, 8, ok, 8) // … outside its fast path
	g.rr(jit.OpOr, slow, slow, 8)
	g.load(lq, jit.DX)
	a.VRRI(pp, m0F, true, jit.OpCmp, 8, lq, lq, cmpUnord)
	g.rr(jit.OpOr, slow, slow, 8)
	g.rr(jit.OpAnd, slow, slow, act)
	g.rr(jit.OpAndN, done, slow, act) // the lanes the code completes

	// The state and the outputs of the completed lanes.
	g.rr(jit.OpMax, 13, l, lq)  // max(l, log2QOld)
	a.VBlendv(13, 13, lq, zero) // err = 0: log2QOld
	g.rr(jit.OpAnd, 15, acc, done)
	a.VBlendv(13, lo, 13, 15) // log2ErrOld, changed where accepted
	g.store(jit.SI, 13)
	g.rk(jit.OpAndN, 15, acc, kAllOnes) // rejected = !accept
	a.VBlendv(15, rej, 15, done)
	g.store(jit.R8, 15)
	g.load(13, jit.R9)
	a.VBlendv(13, 13, f, done)
	g.store(jit.R9, 13)
	a.VRR(pp, m0F, true, jit.OpMovmsk, jit.AX, 0, acc)
	a.Store64(jit.Mem{Base: jit.R10, Disp: 8}, jit.AX)
	a.VRR(pp, m0F, true, jit.OpMovmsk, jit.AX, 0, slow)
	a.Store64(jit.Mem{Base: jit.R10, Disp: 16}, jit.AX)
}
