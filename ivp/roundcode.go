package ivp

import (
	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/internal/jit"
)

// The code of a round after the attempt (EmitRest), for each group of
// four lanes in 256-bit registers: the controller's verdicts
// (control.EmitNextLanes), then the driver's common path, each lane
// doing what the Go loop of LaneDriver.Solve does, operation by
// operation:
//
//   - the attempt is judged here where it is usable (err ≤ MaxFloat64),
//     the controller did not defer the lane, and it was either rejected
//     or accepted with !last, no mesh, and no save time in (t, t + h]:
//     a rejection sets h = h·factor; an accepted step t = t + h, h =
//     h·factor, then h = dir·hmax where |h| > hmax;
//   - for a lane judged here, the checks before the next attempt:
//     the attempts left before the budget or a poll of the stop flag,
//     the landing (dir·((t + 1.01·h) − t1) ≥ 0: h = t1 − t), and the
//     step floor (|h| < MinStep(t), t + h = t, or h NaN).
//
// A lane the code does not judge is marked SlowA; one whose checks fail
// SlowB (its t and h are then those after the judgement, before the
// landing, as the Go loop's prepare expects them). If any lane is
// either, or the rounds are used up, the code returns; else it jumps
// back to the attempt.

// Registers of the code: R14 the block, R15 the controller's addresses
// (LaneRounds.args), ymm15 the slow lanes of the round, gathered.
const (
	rBlock = jit.R14
	rArgs  = jit.R15
	ySlow  = 15
)

// EmitRest appends to a the rest of a round after the attempt, whose
// code starts at offset loop of a.B, and the code's return. The code of
// the attempt must leave R14 and R15 as the code's entry set them:
// R14 = r.Base(), R15 = r.Args().
func (r *LaneRounds) EmitRest(a *jit.Asm, loop int) {
	for grp := range r.L / 4 {
		g := blockGen{a, &r.laneBlock, grp}
		io := func(word int) jit.Mem { return g.lane(roundIO, 4*grp+word) }
		// io[0]: the active lanes as bits.
		g.ld(0, roundActive)
		a.VRR(bpp, bm0, true, jit.OpMovmsk, jit.AX, 0, 0)
		a.Store64(io(0), jit.AX)
		a.Lea(jit.DI, g.mem(roundErr))
		for i, reg := range []byte{jit.SI, jit.DX, jit.R8} {
			a.Load64(reg, jit.Mem{Base: rArgs, Disp: int32(8 * i)})
			a.Lea(reg, jit.Mem{Base: reg, Disp: int32(32 * grp)})
		}
		a.Lea(jit.R9, g.mem(roundFactor))
		a.Lea(jit.R10, io(0))
		a.Load64(jit.R11, jit.Mem{Base: rArgs, Disp: 24})
		a.Load64(jit.CX, jit.Mem{Base: rArgs, Disp: 32})
		control.EmitNextLanes(a)
	}
	a.VRR(bpp, bm0, true, jit.OpXor, ySlow, ySlow, ySlow)
	for grp := range r.L / 4 {
		r.emitDriver(blockGen{a, &r.laneBlock, grp})
	}
	r.loop(a, loop)
}

// emitDriver emits the driver's common path for group grp (see above).
func (r *LaneRounds) emitDriver(g blockGen) {
	a := g.a
	ld, st, rr, rc, cmp, cmpC := g.ld, g.st, g.rr, g.rc, g.cmp, g.cmpC
	// bits turns the controller's word (bits 0–3) into lane masks.
	bits := func(d byte, word int) {
		a.VRM(bpp, jit.Map0F38, true, jit.OpBcastQ, d, 0, g.lane(roundIO, 4*g.grp+word))
		rc(jit.OpPAnd, d, d, rcLaneBit)
		a.VRM(bpp, jit.Map0F38, true, jit.OpPCmpEqQ, d, d, g.kc(rcLaneBit))
	}
	const (
		act, ok, acc, def, rejF, t, h, tn, sv, dir, accF, fast = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11
		hn, tmp, tmp2                                          = 12, 13, 14
	)
	ld(act, roundActive)
	ld(ok, roundErr)
	cmpC(ok, ok, rcMaxFloat, cmpLE) // usable: err ≤ MaxFloat64
	bits(acc, 1)
	bits(def, 2)
	st(roundAccept, acc)
	st(roundDefer, def)
	rr(jit.OpAnd, ok, ok, act)
	rr(jit.OpAndN, ok, def, ok)   // judged here, unless accepted in a special step
	rr(jit.OpAndN, rejF, acc, ok) // rejected
	ld(t, roundT)
	ld(h, roundH)
	rr(jit.OpAdd, tn, t, h) // t + h
	// No save time in the step: dir·(save − (t + h)) > 0, or none left.
	ld(sv, roundNextSave)
	rr(jit.OpSub, sv, sv, tn)
	ld(dir, roundDir)
	rr(jit.OpMul, sv, dir, sv)
	cmpC(sv, sv, rcZero, cmpGT)
	g.rm(jit.OpOr, sv, sv, roundNoSave)
	g.rm(jit.OpAnd, sv, sv, roundPlain)
	ld(tmp, roundLast)
	rr(jit.OpAndN, sv, tmp, sv)
	rr(jit.OpAnd, accF, sv, acc)
	rr(jit.OpAnd, accF, accF, ok) // accepted here
	rr(jit.OpOr, fast, accF, rejF)
	rr(jit.OpAndN, tmp, fast, act) // SlowA: active, not judged here
	st(roundSlowA, tmp)
	rr(jit.OpOr, ySlow, ySlow, tmp)

	// The judgement: h·factor, clamped to hmax where accepted; t + h.
	g.rm(jit.OpMul, hn, h, roundFactor)
	rc(jit.OpAnd, tmp, hn, rcAbs)
	ld(tmp2, roundHMax)
	cmp(tmp, tmp, tmp2, cmpGT) // |h| > hmax
	rr(jit.OpMul, tmp2, dir, tmp2)
	rr(jit.OpAnd, tmp, tmp, accF)
	a.VBlendv(hn, hn, tmp2, tmp)
	a.VBlendv(tn, t, tn, accF)

	// The counts: attempts (and moved ones) of every active lane, the
	// steps accepted and rejected here, the attempts left.
	add := func(k int, mask byte) {
		rc(jit.OpAnd, tmp, mask, rcOne)
		g.rm(jit.OpAdd, tmp, tmp, k)
		st(k, tmp)
	}
	add(roundNAtt, act)
	ld(tmp2, roundMoved)
	rr(jit.OpAnd, acc, act, tmp2) // (acc is free now) moved and active
	add(roundNMov, acc)
	add(roundNAcc, accF)
	add(roundNRej, rejF)
	rc(jit.OpAnd, tmp, fast, rcOne)
	ld(acc, roundLeft)
	rr(jit.OpSub, acc, acc, tmp)
	st(roundLeft, acc)
	cmpC(acc, acc, rcZero, cmpGT) // attempts left: acc is now "left > 0"
	a.VBlendv(tmp2, tmp2, accF, fast)
	st(roundMoved, tmp2)
	st(roundPending, accF)

	// The checks before the next attempt.
	const last, hl, ms, bad = 3, 8, 9, 4 // (def, sv, dir and rejF are free now)
	ld(tmp2, roundT1)
	rc(jit.OpMul, last, hn, rc101)
	rr(jit.OpAdd, last, tn, last)
	rr(jit.OpSub, last, last, tmp2)
	ld(dir, roundDir)
	rr(jit.OpMul, last, dir, last)
	cmpC(last, last, rcZero, cmpGE) // lands on t1
	rr(jit.OpSub, hl, tmp2, tn)     // t1 − t
	a.VBlendv(hl, hn, hl, last)
	rc(jit.OpAnd, ms, tn, rcAbs)
	rc(jit.OpMul, ms, ms, rcMinScale)
	cmpC(tmp, ms, rcTiny, cmpLT)
	g.ldC(tmp2, rcTiny)
	a.VBlendv(ms, ms, tmp2, tmp) // MinStep(t)
	rc(jit.OpAnd, bad, hl, rcAbs)
	cmp(bad, bad, ms, cmpLT) // |h| < MinStep(t)
	rr(jit.OpAdd, tmp, tn, hl)
	cmp(tmp, tmp, tn, cmpEQ) // t + h = t
	rr(jit.OpOr, bad, bad, tmp)
	cmp(tmp, hl, hl, cmpUnord) // h NaN
	rr(jit.OpOr, bad, bad, tmp)
	rr(jit.OpAndN, acc, bad, acc) // ready for the next attempt
	rr(jit.OpAndN, tmp, acc, fast)
	st(roundSlowB, tmp)
	rr(jit.OpOr, ySlow, ySlow, tmp)
	rr(jit.OpAnd, tmp, acc, fast)
	ld(tmp2, roundLast)
	a.VBlendv(tmp2, tmp2, last, tmp)
	st(roundLast, tmp2)
	a.VBlendv(hl, hn, hl, acc)
	a.VBlendv(h, h, hl, fast)
	st(roundH, h)
	st(roundT, tn)
}
