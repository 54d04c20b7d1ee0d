package erk

import (
	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/ode"
)

// A fused reversed step: where f and the cotangent program are lane
// code of one piece (ode.LaneKernel), a reversed step of every lane —
// the stages rebuilt (f's body at each stage, unless the mesh keeps
// them), the stage inputs, and the sweep back through the stages with
// the cotangent program's body — is one function of machine code, with
// ReverseSteps's operations in ReverseSteps's order.

// The arguments of the fused reverse code (its own table, read through
// R13).
const (
	rvK     = 0  // the stages k_j, contiguous
	rvY     = 1  // the lanes' step start states
	rvYS    = 2  // a table of the stage inputs' addresses (ys[0] is y)
	rvKBar  = 3  // the stages' cotangents, contiguous
	rvYNew  = 4  // the cotangents of the steps' end states
	rvYBar  = 5  // out: the cotangents of the start states
	rvH     = 6  // the lanes' step sizes
	rvCoefs = 7  // the coefficients
	rvGY    = 8  // scratch: the cotangent program's first block
	rvGP    = 9  // the parameters' cotangents, accumulated
	rvGPTmp = 10 // scratch: the cotangent program's second block
	rvT     = 11 // the lanes' step start times
	rvFRegs = 12 // table: f's register file per group
	rvP     = 13 // the lanes' parameters
	rvVRegs = 14 // table: the cotangent program's register file per group
	rvAcc   = 15 // with rounds: the lanes' accumulate mask (ivp.ReverseRounds.SetPartials)
)

// fusedReverse is a fused reversed step's code, with the stages
// evaluated (eval) and with the stages from the mesh (stored).
type fusedReverse struct {
	code         *jit.Code
	eval, stored uintptr
	coefs        []float64
	size         int // bytes of code
}

// revSum emits Σ over row: k̄_j += (h·a_j)·v for every lane (revSums's
// sums), with k̄'s block at regK, v at regY, h at regH and the
// coefficients at regCoefs.
func (g *stageGen) revSum(row []coef) {
	a := &g.a
	const pp, m0 = jit.VexPP66, jit.Map0F
	base := len(g.coefs)
	for _, c := range row {
		g.coefs = append(g.coefs, c.a)
	}
	for grp := range g.groups {
		g.laneH(grp)
		for d := grp * g.gdim; d < (grp+1)*g.gdim; d += 4 {
			a.VRM(pp, m0, true, jit.OpLoad, yTmp, 0, jit.Mem{Base: regY, Disp: int32(8 * d)}) // v
			for t, c := range row {
				a.VRM(pp, jit.Map0F38, true, 0x19, yExtra, 0, jit.Mem{Base: regCoefs, Disp: int32(8 * (base + t))})
				a.VRR(pp, m0, true, jit.OpMul, yAcc, yH, yExtra) // h·a
				a.VRR(pp, m0, true, jit.OpMul, yAcc, yAcc, yTmp) // (h·a)·v
				kb := jit.Mem{Base: regK, Disp: int32(8 * (c.j*g.dim + d))}
				a.VRM(pp, m0, true, jit.OpLoad, yCoef0, 0, kb)
				a.VRR(pp, m0, true, jit.OpAdd, yCoef0, yCoef0, yAcc) // k̄ + (h·a)·v
				a.VRM(pp, m0, true, jit.OpSt, yCoef0, 0, kb)
			}
		}
	}
}

// buildFusedReverse returns the fused reversed step of sv for L lanes
// (a multiple of four) of trajectories with m parameters, with f's body
// fk and the cotangent program's vk, or nil where the code would pass
// jitMaxCode or cannot be made executable.
//
// With rounds (ivp.ReverseRounds), the code is that of whole rounds of
// the reverse walk, with the stages evaluated: its entry loads R14 and
// R15 from arguments 16 and 17, and the reversed step is followed by
// rounds.EmitRest, which jumps back to it (eval is then the entry, and
// there is no stored variant); the start states' cotangents then begin
// from the ones the lanes hold where the accumulate mask (argument
// rvAcc) is set: partial steps (ivp.ReverseRounds.SetPartials).
func buildFusedReverse(sv *Solver, fk, vk *ode.LaneKernel, L, m int, rounds roundTail) *fusedReverse {
	const W = ode.LaneWidth
	if L%W != 0 || fk == nil || vk == nil || !jit.HasAVX2() {
		return nil
	}
	G, gdim, nb := L/W, sv.dim*W, sv.lastB+1
	if 2*(jitCodeEstimate(sv)*L+G*nb*(len(fk.Body)+len(vk.Body)+400)) > jitMaxCode {
		return nil
	}
	n := gdim * G // the values of a lane-major state array
	g := &stageGen{dim: n, slot: make([]int, sv.s), hLanes: true, groups: G, gdim: gdim}
	for j := range g.slot {
		g.slot[j] = j
	}
	a := &g.a
	const pp, m0 = jit.VexPP66, jit.Map0F
	arg := func(i int) jit.Mem { return jit.Mem{Base: jit.R13, Disp: int32(8 * i)} }
	regs := func(k, y int) { // the registers of stageGen's code
		a.Load64(regK, arg(k))
		a.Load64(regY, arg(y))
		a.Load64(regH, arg(rvH))
		a.Load64(regCoefs, arg(rvCoefs))
	}
	coef := func(v float64) jit.Mem {
		g.coefs = append(g.coefs, v)
		return jit.Mem{Base: jit.R12, Disp: int32(8 * (len(g.coefs) - 1))}
	}
	// kernel runs body for group grp: its time t (exact, where c < 0)
	// or t + c·h, its state the input of stage i, its first output
	// block at the argument out offset by outStage stages (−1: none),
	// and for the cotangent program the seed k̄_i and the second block
	// into gpTmp.
	kernel := func(k *ode.LaneKernel, regsArg, grp, i int, c float64, out, outStage int, seeded bool) {
		a.Load64(jit.R12, arg(rvT))
		a.VRM(pp, m0, true, jit.OpLoad, yT0, 0, jit.Mem{Base: jit.R12, Disp: int32(32 * grp)})
		if c >= 0 {
			a.Load64(jit.R12, arg(rvH))
			a.VRM(pp, m0, true, jit.OpLoad, yT2, 0, jit.Mem{Base: jit.R12, Disp: int32(32 * grp)})
			a.Load64(jit.R12, arg(rvCoefs))
			a.VRM(pp, jit.Map0F38, true, 0x19, yT1, 0, coef(c))
			a.VRR(pp, m0, true, jit.OpMul, yT1, yT1, yT2) // c·h
			a.VRR(pp, m0, true, jit.OpAdd, yT0, yT0, yT1) // t + c·h
		}
		a.Load64(jit.DI, arg(regsArg))
		a.Load64(jit.DI, jit.Mem{Base: jit.DI, Disp: int32(8 * grp)})
		a.VRM(pp, m0, true, jit.OpSt, yT0, 0, jit.Mem{Base: jit.DI})
		a.Load64(jit.SI, arg(rvYS))
		a.Load64(jit.SI, jit.Mem{Base: jit.SI, Disp: int32(8 * i)})
		a.Lea(jit.SI, jit.Mem{Base: jit.SI, Disp: int32(8 * grp * gdim)})
		a.Load64(jit.DX, arg(rvP))
		a.Lea(jit.DX, jit.Mem{Base: jit.DX, Disp: int32(8 * grp * m * W)})
		a.Load64(jit.R11, arg(out))
		a.Lea(jit.R11, jit.Mem{Base: jit.R11, Disp: int32(8 * (max(outStage, 0)*n + grp*gdim))})
		a.MovRR(jit.CX, jit.R11)
		if seeded {
			a.Load64(jit.R10, arg(rvKBar))
			a.Lea(jit.R10, jit.Mem{Base: jit.R10, Disp: int32(8 * (i*n + grp*gdim))})
			a.Load64(jit.CX, arg(rvGPTmp))
			a.Lea(jit.CX, jit.Mem{Base: jit.CX, Disp: int32(8 * grp * m * W)})
		}
		a.B = append(a.B, k.Body...)
	}
	// add emits dst += src over count values (dst + src, as addTo).
	add := func(dst, src, count int) {
		a.Load64(jit.R12, arg(dst))
		a.Load64(jit.AX, arg(src))
		for e := 0; e < count; e += 4 {
			at := jit.Mem{Base: jit.R12, Disp: int32(8 * e)}
			a.VRM(pp, m0, true, jit.OpLoad, yT0, 0, at)
			a.VRM(pp, m0, true, jit.OpAdd, yT0, yT0, jit.Mem{Base: jit.AX, Disp: int32(8 * e)})
			a.VRM(pp, m0, true, jit.OpSt, yT0, 0, at)
		}
	}
	emit := func(evalStages bool) int {
		start, loop := len(a.B), 0
		if rounds != nil {
			a.Load64(jit.R14, jit.Mem{Base: jit.BX, Disp: 8 * argRoundBase})
			a.Load64(jit.R15, jit.Mem{Base: jit.BX, Disp: 8 * argRoundArgs})
			loop = len(a.B) // BX stays the arguments' address throughout
		}
		a.MovRR(jit.R13, jit.BX)
		if evalStages { // k_0 = f(t, y)
			for grp := range G {
				kernel(fk, rvFRegs, grp, 0, -1, rvK, 0, false)
			}
		}
		for i := 1; i < nb; i++ {
			regs(rvK, rvY)
			a.Load64(regYT, arg(rvYS))
			a.Load64(regYT, jit.Mem{Base: regYT, Disp: int32(8 * i)})
			g.sum(regYT, sv.rows[i], gdim, true)
			if evalStages {
				for grp := range G {
					kernel(fk, rvFRegs, grp, i, sv.c[i], rvK, i, false)
				}
			}
		}
		// The sweep: k̄ cleared, then b's terms; ȳ = 0 + ȳ_new.
		a.Load64(jit.R12, arg(rvKBar))
		a.VRR(pp, m0, true, jit.OpXor, yZero, yZero, yZero)
		for e := 0; e < nb*n; e += 4 {
			a.VRM(pp, m0, true, jit.OpSt, yZero, 0, jit.Mem{Base: jit.R12, Disp: int32(8 * e)})
		}
		regs(rvKBar, rvYNew)
		g.revSum(sv.b)
		a.Load64(jit.R12, arg(rvYBar))
		a.Load64(jit.AX, arg(rvYNew))
		a.VRR(pp, m0, true, jit.OpXor, yZero, yZero, yZero)
		if rounds != nil {
			// A lane taking a partial step (its accumulate mask set)
			// adds to the ȳ it holds: ȳ + ȳ_new, as reverseStep adds
			// into ybarOut; a full step's ȳ is cleared, 0 + ȳ_new.
			a.Load64(jit.R11, arg(rvAcc))
		}
		for e := 0; e < n; e += 4 {
			if rounds != nil {
				a.VRM(pp, m0, true, jit.OpLoad, yT1, 0, jit.Mem{Base: jit.R11, Disp: int32(32 * (e / gdim))})
				a.VRM(pp, m0, true, jit.OpLoad, yT2, 0, jit.Mem{Base: jit.R12, Disp: int32(8 * e)})
				a.VBlendv(yT0, yZero, yT2, yT1)
				a.VRM(pp, m0, true, jit.OpAdd, yT0, yT0, jit.Mem{Base: jit.AX, Disp: int32(8 * e)})
			} else {
				a.VRM(pp, m0, true, jit.OpAdd, yT0, yZero, jit.Mem{Base: jit.AX, Disp: int32(8 * e)})
			}
			a.VRM(pp, m0, true, jit.OpSt, yT0, 0, jit.Mem{Base: jit.R12, Disp: int32(8 * e)})
		}
		for i := nb - 1; i >= 0; i-- {
			for grp := range G {
				kernel(vk, rvVRegs, grp, i, sv.c[i], rvGY, -1, true)
			}
			add(rvYBar, rvGY, n)
			if m > 0 {
				add(rvGP, rvGPTmp, m*L)
			}
			if len(sv.rows[i]) > 0 {
				regs(rvKBar, rvGY)
				g.revSum(sv.rows[i])
			}
		}
		if rounds != nil {
			rounds.EmitRest(a, loop)
		} else {
			g.finish()
		}
		return start
	}
	if rounds != nil {
		emit(true)
		code, err := jit.NewCode(a.B)
		if err != nil {
			return nil
		}
		return &fusedReverse{code: code, eval: code.Addr(0), coefs: g.coefs, size: len(a.B)}
	}
	offEval, offStored := emit(true), emit(false)
	code, err := jit.NewCode(a.B)
	if err != nil {
		return nil
	}
	return &fusedReverse{code: code, eval: code.Addr(offEval), stored: code.Addr(offStored), coefs: g.coefs, size: len(a.B)}
}
