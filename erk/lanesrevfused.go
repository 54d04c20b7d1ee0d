package erk

import (
	"fmt"
	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/ode"
)

// A fused reversed step: where f and the cotangent program are lane
// code of one piece (ode.LaneKernel), a reversed step of every lane —
// the stages rebuilt (f's body at each stage, unless the mesh keeps
// them), the stage inputs, and the sweep back through the stages with
// the cotangent program's body — is one function of machine code. Each
// value is formed by ReverseSteps's operations in ReverseSteps's order
// (the sums of the sweep are gathered where ReverseSteps scatters them,
// term by term the same), so the bits are ReverseSteps's.

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
	// coefAt appends v to the coefficients and returns its place, the
	// coefficients' address in base.
	coefAt := func(base byte, v float64) jit.Mem {
		g.coefs = append(g.coefs, v)
		return jit.Mem{Base: base, Disp: int32(8 * (len(g.coefs) - 1))}
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
			a.VRM(pp, jit.Map0F38, true, 0x19, yT1, 0, coefAt(jit.R12, c))
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
			a.Lea(jit.CX, jit.Mem{Base: jit.CX, Disp: int32(8 * (i*m*L + grp*m*W))})
		}
		a.B = append(a.B, k.Body...)
	}
	// sumInto emits, over count values from offset dstOff + from (in
	// values) of the array at argument dst, dst = init + Σ terms: init
	// 0 or dst's own values (initOwn, initBlend), each term the values
	// of the array at argument src from off + from, scaled by h·a where
	// scaled (with group grp's step sizes: the values lie in that
	// group), added in the order given — the bits of as many separate
	// additions into dst (dst + (h·a)·v, revSum's; dst + v, addTo's),
	// with the sum in registers, up to accRegs vectors of it at a time.
	type term struct {
		src, off int
		a        float64
		scaled   bool
	}
	const accRegs, yHa, yProd, yHl = 8, 8, 9, 10
	const (
		initZero  = iota // the sum starts from 0
		initOwn          // … from dst's values
		initBlend        // … from dst's values where the lane's accumulate mask (rvAcc) is set, else 0
	)
	sumInto := func(dst, dstOff, from, count int, init int, grp int, terms []term) {
		for c0 := 0; c0 < count; c0 += 4 * accRegs {
			nv := min(accRegs, (count-c0)/4)
			a.Load64(jit.R12, arg(dst))
			if init == initBlend {
				a.Load64(jit.R11, arg(rvAcc))
				a.VRR(pp, m0, true, jit.OpXor, yZero, yZero, yZero)
			}
			for v := range nv {
				own := jit.Mem{Base: jit.R12, Disp: int32(8 * (dstOff + from + c0 + 4*v))}
				switch init {
				case initZero:
					a.VRR(pp, m0, true, jit.OpXor, byte(v), byte(v), byte(v))
				case initOwn:
					a.VRM(pp, m0, true, jit.OpLoad, byte(v), 0, own)
				case initBlend: // the lane's own where its mask is set, else 0
					e := from + c0 + 4*v // the values of one group: the mask's four
					a.VRM(pp, m0, true, jit.OpLoad, yProd, 0, jit.Mem{Base: jit.R11, Disp: int32(32 * (e / gdim))})
					a.VRM(pp, m0, true, jit.OpLoad, yHl, 0, own)
					a.VBlendv(byte(v), yZero, yHl, yProd)
				}
			}
			hLoaded, src := false, -1
			for _, t := range terms {
				if t.src != src {
					a.Load64(jit.AX, arg(t.src))
					src = t.src
				}
				at := func(v int) jit.Mem { return jit.Mem{Base: jit.AX, Disp: int32(8 * (t.off + from + c0 + 4*v))} }
				if !t.scaled {
					for v := range nv {
						a.VRM(pp, m0, true, jit.OpAdd, byte(v), byte(v), at(v)) // acc + v
					}
					continue
				}
				if !hLoaded { // the group's step sizes, and the coefficients' address
					a.Load64(jit.R11, arg(rvH))
					a.VRM(pp, m0, true, jit.OpLoad, yHl, 0, jit.Mem{Base: jit.R11, Disp: int32(32 * grp)})
					a.Load64(jit.R11, arg(rvCoefs))
					hLoaded = true
				}
				a.VRM(pp, jit.Map0F38, true, 0x19, yHa, 0, coefAt(jit.R11, t.a))
				a.VRR(pp, m0, true, jit.OpMul, yHa, yHl, yHa) // h·a
				for v := range nv {
					a.VRM(pp, m0, true, jit.OpMul, yProd, yHa, at(v))       // (h·a)·v
					a.VRR(pp, m0, true, jit.OpAdd, byte(v), byte(v), yProd) // acc + (h·a)·v
				}
			}
			for v := range nv {
				a.VRM(pp, m0, true, jit.OpSt, byte(v), 0, jit.Mem{Base: jit.R12, Disp: int32(8 * (dstOff + from + c0 + 4*v))})
			}
		}
	}
	// weight returns the coefficient of stage j in row (false where it
	// has none).
	weight := func(row []coef, j int) (float64, bool) {
		for _, c := range row {
			if c.j == j {
				return c.a, true
			}
		}
		return 0, false
	}
	// The code's sections, for profiles (jit.Code.Name).
	var secs []jit.Section
	mark := func(name string, i int) {
		secs = append(secs, jit.Section{Off: len(a.B), Name: fmt.Sprintf("%s%d", name, i)})
	}
	emit := func(evalStages bool) int {
		start, loop := len(a.B), 0
		mark("entry", 0)
		if rounds != nil {
			a.Load64(jit.R14, jit.Mem{Base: jit.BX, Disp: 8 * argRoundBase})
			a.Load64(jit.R15, jit.Mem{Base: jit.BX, Disp: 8 * argRoundArgs})
			loop = len(a.B) // BX stays the arguments' address throughout
		}
		a.MovRR(jit.R13, jit.BX)
		mark("recf", 0)
		if evalStages { // k_0 = f(t, y)
			for grp := range G {
				kernel(fk, rvFRegs, grp, 0, -1, rvK, 0, false)
			}
		}
		for i := 1; i < nb; i++ {
			mark("recsum", i)
			regs(rvK, rvY)
			a.Load64(regYT, arg(rvYS))
			a.Load64(regYT, jit.Mem{Base: regYT, Disp: int32(8 * i)})
			g.sum(regYT, sv.rows[i], gdim, true)
			mark("recf", i)
			if evalStages {
				for grp := range G {
					kernel(fk, rvFRegs, grp, i, sv.c[i], rvK, i, false)
				}
			}
		}
		// The sweep, from the last stage to the first: k̄_i, then the
		// cotangent program at stage i, with its outputs (the cotangents
		// of the stage's input, v_i, and of the parameters, g_i) each in
		// a block of its own. ReverseSteps clears k̄, adds b's terms,
		// then after the program at each stage l adds its row's terms
		// (h·a_lj)·v_l into the k̄_j; here each k̄_i is summed just
		// before it is needed, from the blocks of the stages after it,
		// with the same terms in the same order: 0 + (h·b_i)·ȳ_new, then
		// (h·a_li)·v_l for l from the last stage down. Likewise
		// ȳ = 0 + ȳ_new + v_last + … + v_0 and gp + g_last + … + g_0
		// after the sweep, ReverseSteps's additions after each stage
		// (ȳ from the one a lane holds where it takes a partial step).
		for i := nb - 1; i >= 0; i-- {
			mark("kbar", i)
			for grp := range G {
				var ts []term
				if w, ok := weight(sv.b, i); ok {
					ts = append(ts, term{src: rvYNew, a: w, scaled: true})
				}
				for l := nb - 1; l > i; l-- {
					if w, ok := weight(sv.rows[l], i); ok {
						ts = append(ts, term{src: rvGY, off: l * n, a: w, scaled: true})
					}
				}
				sumInto(rvKBar, i*n, grp*gdim, gdim, initZero, grp, ts)
			}
			mark("vk", i)
			for grp := range G {
				kernel(vk, rvVRegs, grp, i, sv.c[i], rvGY, i, true)
			}
		}
		mark("ybar", 0)
		ts := []term{{src: rvYNew}}
		for i := nb - 1; i >= 0; i-- {
			ts = append(ts, term{src: rvGY, off: i * n})
		}
		// With rounds, a lane taking a partial step (its accumulate
		// mask set) adds to the ȳ it holds, as reverseStep adds into
		// ybarOut: ȳ + ȳ_new + …; a full step's ȳ starts from 0.
		init := initZero
		if rounds != nil {
			init = initBlend
		}
		sumInto(rvYBar, 0, 0, n, init, 0, ts)
		mark("gp", 0)
		if m > 0 {
			ts = ts[:0]
			for i := nb - 1; i >= 0; i-- {
				ts = append(ts, term{src: rvGPTmp, off: i * m * L})
			}
			sumInto(rvGP, 0, 0, m*L, initOwn, 0, ts)
		}
		mark("tail", 0)
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
		code.Name(len(a.B), "erk.reverse-rounds", secs)
		return &fusedReverse{code: code, eval: code.Addr(0), coefs: g.coefs, size: len(a.B)}
	}
	offEval := emit(true)
	evalSecs := len(secs)
	offStored := emit(false)
	code, err := jit.NewCode(a.B)
	if err != nil {
		return nil
	}
	for i := evalSecs; i < len(secs); i++ {
		secs[i].Name = "stored_" + secs[i].Name
	}
	code.Name(len(a.B), "erk.reverse", secs)
	return &fusedReverse{code: code, eval: code.Addr(offEval), stored: code.Addr(offStored), coefs: g.coefs, size: len(a.B)}
}
