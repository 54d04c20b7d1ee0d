package erk

import (
	"encoding/binary"
	"math"
	"runtime"
	"sync"
	"unsafe"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/internal/kernelgen"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
)

// Stage sums as machine code.
//
// On systems of jitMinDim components or more, where the processor has
// AVX (jit.HasAVX), the sums of a step — each stage input
// y + h·Σ a_ij·k_j, the proposed state and the error vectors — run as
// machine code generated for the tableau and the dimension: fully
// unrolled, four components per instruction, every coefficient and h
// held in a vector register. Each lane performs the scalar operations of
// genericStages in the same order (products rounded, then summed left to
// right, no fused multiply–add), so the results are the same to the bit
// (TestJITStagesMatchGeneric). The right-hand side is called from Go
// between the sums, whatever it is (Go code, or the tape's machine code
// through its own entry). On the 18 components of the halo with two
// sensitivity columns a Vern7 step costs about 30% less than with the
// generated Go kernels, which do one component per instruction.

// jitMinDim is the smallest system whose stage sums run as machine code
// when f is Go code. BenchmarkJITStages (Vern7 on Lorenz-96, ns per
// attempt, Go kernels against machine code, this 2-core AMD EPYC) gave
// 395/381 at 4 components, 491/404 at 6, 1053/751 at 18 and 1870/1216
// at 36; on the 6-component halo orbit Vern7 and DP8 gain 0–10%
// (BenchmarkHalo). Below 6 the calls between sums eat the gain. (A
// fused attempt, the calls of a machine-code f made from the stage
// code, measured no better on whole solves: see
// bench/results/abi-2026-12-01.txt.)
const jitMinDim = 6

// jitMaxCode bounds the machine code of one tableau and dimension. The
// sums are unrolled, so the code grows with the dimension (Tsit5 312
// bytes a component, Vern7 519, DP8 720) and each attempt streams all of
// it through the processor; it is kept (jitCache) for the process's
// life. BenchmarkJITStagesLarge (Lorenz-96, ns per attempt and
// component, Go kernels against machine code, this 2-core AMD EPYC)
// gave Tsit5 24/14 at 4 096 components (1.3 MB of code), 24/21 at
// 10 000 (3.1 MB) and 23/24 at 32 768 (10 MB); DP8 59/34 at 4 096
// (2.9 MB), 49/46 at 10 000 (7.2 MB) and 54/90 at 32 768 (24 MB): past
// a few megabytes the unrolled code loses its lead, and it would grow
// without bound. Above this size (Tsit5 beyond about 13 000 components,
// Vern7 8 000, DP8 5 800) the sums run on the Go kernels, which give
// the same bits.
const jitMaxCode = 4 << 20

// jitCodeEstimate returns the size of sv's stage code in bytes, within
// a few percent (TestJITCodeEstimate): for each of the two arrangements
// of the stages (jitStages.entries), per component 3.5 bytes a term, 4 a
// sum and 30 for the error norm, from the instructions sum and norm emit
// for every four components.
func jitCodeEstimate(sv *Solver) int {
	end := sv.s
	if sv.fsal {
		end--
	}
	terms, sums := len(sv.e), 2
	for i := 1; i < end; i++ {
		terms += len(sv.rows[i])
		sums++
	}
	if sv.fsal {
		terms += len(sv.rows[sv.s-1])
	} else {
		terms += len(sv.b)
	}
	if sv.e3 != nil {
		terms += len(sv.e3)
		sums++
	}
	return sv.dim * (7*terms + 8*sums + 60)
}

// The general registers of the code (loaded by jit.Call from
// Solver.jargs): the stages k (contiguous, k_j at j·dim), y, the
// stage input yt, the proposed state y1, the error vectors ev and ev3,
// h, and the coefficients.
const (
	regK     = jit.DI
	regY     = jit.SI
	regYT    = jit.DX
	regY1    = jit.R8
	regEV    = jit.R9
	regEV3   = jit.R10
	regH     = jit.R11
	regCoefs = jit.CX
)

// Vector registers: the sum, a scratch, h, and the coefficients of up
// to numCoefRegs terms (further terms broadcast theirs into X15).
const (
	yAcc        = 0
	yTmp        = 1
	yH          = 14
	yExtra      = 15
	yCoef0      = 2
	numCoefRegs = 12
)

// jitStages is a tableau's stage sums as machine code for one dimension.
type jitStages struct {
	code  *jit.Code
	coefs []float64 // the coefficients the code reads, by index
	// The entries of the code for the stages in their places (0), and
	// with k_0 and k_{s−1} swapped, as an FSAL step leaves them (1).
	entries [2]jitEntries
	end     int // stages whose input is yt: 1…end−1
	size    int // bytes of machine code
	nd      int // the components of the error vectors
}

// jitEntries are the functions of one arrangement of the stages.
type jitEntries struct {
	inputs []uintptr // the code of stage input i+1 (i = 0…end−2)
	tail   uintptr   // y1, then ev and ev3 unless f is evaluated in between
	errs   uintptr   // ev and ev3 after f(t+h, y1) (FSAL not deferred), else 0
}

var (
	jitMu    sync.Mutex
	jitCache = map[jitKey]*jitStages{}
)

// jitKey identifies generated code: the tableau by the bits of all its
// coefficients (kernelgen.Explicit), so that equal tableaux share code
// and a changed one gets its own.
type jitKey struct {
	tab     string
	dim, nd int
	lanes   int // 1: one trajectory; LaneWidth: lane-major (laneJIT)
}

// stagesJITFor returns sv's stage sums as machine code, or nil where
// there is none (no AVX, machine code turned off, a small system, or one
// whose code would pass jitMaxCode).
func stagesJITFor(sv *Solver, tb *method.Tableau) *jitStages {
	if !jit.HasAVX() || sv.dim < jitMinDim || jitCodeEstimate(sv) > jitMaxCode {
		return nil
	}
	return buildJITStages(sv, tb, 1)
}

// buildJITStages generates (or finds in the cache) the code for sv's
// tableau, dimension and error-norm dimension: for one trajectory
// (lanes = 1), or for ode.LaneWidth trajectories in lane-major arrays
// (lanes = ode.LaneWidth): then the arrays hold dim·lanes values, every
// group of four is one component of the four lanes, and h is a vector of
// the lanes' step sizes instead of one value broadcast.
func buildJITStages(sv *Solver, tb *method.Tableau, lanes int) *jitStages {
	coefs := kernelgen.Explicit(tb)
	tab := make([]byte, 0, 8*len(coefs))
	for _, c := range coefs {
		tab = binary.LittleEndian.AppendUint64(tab, math.Float64bits(c))
	}
	dim, nd := sv.dim*lanes, sv.cfg.NormDim*lanes
	key := jitKey{string(tab), dim, nd, lanes}
	// What sum and norm take: all the values, or in lane code a
	// group's (groups of four lanes, one after another).
	sumDim, sumND := dim, nd
	if lanes > 1 {
		sumDim, sumND = sv.dim*4, sv.cfg.NormDim*4
	}
	jitMu.Lock()
	defer jitMu.Unlock()
	if js := jitCache[key]; js != nil {
		return js
	}
	js := &jitStages{nd: nd}
	s := sv.s
	js.end = s
	if sv.fsal {
		js.end = s - 1
	}
	g := &stageGen{dim: dim, slot: make([]int, s), hLanes: lanes > 1, groups: max(1, lanes/4), gdim: sv.dim * 4}
	type offsets struct {
		inputs     []int
		tail, errs int
	}
	var offs [2]offsets
	for v := range offs {
		for j := range g.slot {
			g.slot[j] = j
		}
		if v == 1 {
			g.slot[0], g.slot[s-1] = s-1, 0
		}
		o := &offs[v]
		for i := 1; i < js.end; i++ {
			o.inputs = append(o.inputs, len(g.a.B))
			g.begin()
			g.sum(regYT, sv.rows[i], sumDim, true)
			g.finish()
		}
		o.tail = len(g.a.B)
		g.begin()
		if sv.fsal {
			g.sum(regY1, sv.rows[s-1], sumDim, true)
		} else {
			g.sum(regY1, sv.b, sumDim, true)
		}
		o.errs = -1
		if sv.fsal && !sv.defer_ {
			g.finish()
			o.errs = len(g.a.B)
			g.begin()
		}
		g.sum(regEV, sv.e, sumND, false)
		if sv.e3 != nil {
			g.sum(regEV3, sv.e3, sumND, false)
		}
		g.a.MovRR(jit.R13, jit.BX)
		g.norm(sumND, sv.e3 != nil)
		g.finish()
	}
	code, err := jit.NewCode(g.a.B)
	if err != nil {
		return nil
	}
	code.Name(len(g.a.B), "erk.stages", nil)
	js.code, js.coefs = code, g.coefs
	js.size = len(g.a.B)
	for v, o := range offs {
		e := &js.entries[v]
		for _, off := range o.inputs {
			e.inputs = append(e.inputs, code.Addr(off))
		}
		e.tail = code.Addr(o.tail)
		if o.errs >= 0 {
			e.errs = code.Addr(o.errs)
		}
	}
	jitCache[key] = js
	return js
}

// jitStepper runs the stage sums of an attempt, and the per-component
// part of its error norm, as machine code, with the right-hand side
// called from Go between the sums.
type jitStepper struct{ stepper }

// Attempt runs the stages (stagesJIT) and finishes the norm from the
// squared terms the code left (normOfSquares).
func (s jitStepper) Attempt(t, h float64, p []float64, moved bool, st *ode.Stats) (float64, bool) {
	if s.cfg.NormDim != s.jit.nd { // code for another norm: not this solver's
		return s.stepper.Attempt(t, h, p, moved, st)
	}
	sv := s.begin(t, p, moved, st)
	sv.stagesJIT(t, h, p, sv.cfg.NormDim)
	return sv.normOfSquares()
}

// jitEntries points the code's arguments at the current y, y1 and h
// and returns the entries for the current arrangement of the stages:
// an accepted FSAL step swaps k_0 and k_{s−1}, and every accepted step
// y and y1.
func (sv *Solver) jitEntries(h float64) *jitEntries {
	js, a := sv.jit, &sv.jargs
	e := &js.entries[0]
	if unsafe.Pointer(unsafe.SliceData(sv.k[0])) != a[0] {
		e = &js.entries[1]
	}
	a[1], a[3] = unsafe.Pointer(unsafe.SliceData(sv.y)), unsafe.Pointer(unsafe.SliceData(sv.y1))
	sv.h = h
	return e
}

// stagesJIT is the stage computation of a jitStepper's attempt:
// genericStages, operation for operation, except that ev and ev3 end up
// holding the squared terms of the error norm (stageGen.norm). nd must
// be the code's (jitStages.nd).
func (sv *Solver) stagesJIT(t, h float64, p []float64, nd int) {
	js := sv.jit
	f, k, a := sv.cfg.F, sv.k, &sv.jargs
	e := sv.jitEntries(h)
	for i := 1; i < js.end; i++ {
		jit.Call16(e.inputs[i-1], a)
		f(t+float64(sv.c[i]*h), sv.yt, p, k[i])
	}
	jit.Call16(e.tail, a)
	if e.errs != 0 {
		f(t+h, sv.y1, p, k[sv.s-1])
		jit.Call16(e.errs, a)
	}
	runtime.KeepAlive(js) // it owns the code
}

// normOfSquares finishes the error norm from the squared terms r² the
// machine code left in ev (and ev3), through control.OfSquares, which
// sums them in ascending order as control.Norm does; ok is false when
// the norm or any component of the proposal is not finite.
func (sv *Solver) normOfSquares() (float64, bool) {
	nd := sv.cfg.NormDim
	var r3 []float64
	if sv.e3 != nil {
		r3 = sv.ev3[:nd]
	}
	return control.OfSquares(sv.ev[:nd], r3, sv.y1)
}

// The addresses after the eight registers' in Solver.jargs, read by the
// norm's code through R13: the tolerances.
const (
	argRTol = 8
	argATol = 9
)

// setJITArgs points the code's registers at sv's arrays: the stages'
// block starts where New put k_0.
func (sv *Solver) setJITArgs() {
	ptr := func(s []float64) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(s)) }
	sv.jargs = [16]unsafe.Pointer{
		ptr(sv.k[0]), ptr(sv.y), ptr(sv.yt), ptr(sv.y1), ptr(sv.ev), ptr(sv.ev3),
		unsafe.Pointer(&sv.h), ptr(sv.jit.coefs),
	}
	sv.jargs[argRTol], sv.jargs[argATol] = ptr(sv.cfg.RTol), ptr(sv.cfg.ATol)
}

// argRegs are the registers the trampoline loads from the first eight
// addresses of Solver.jargs.
var argRegs = [8]byte{regK, regY, regYT, regY1, regEV, regEV3, regH, regCoefs}

// norm writes the per-component part of the error norm
// (control.Norm) over the first nd components, in place of the
// error vectors: ev[d] becomes r², r = (h·ev[d]) / (atol[d] +
// rtol[d]·max(|y[d]|, |y1[d]|)), and ev3[d] likewise when e3 is set.
// normOfSquares then sums them in order. This stays inside the machine
// code strategies: no other code reads ev after them. R13
// holds Solver.jargs. max is vmaxpd(|y|, |y1|), which is
// control.MaxAbs(y, y1) wherever |y| is not NaN; where it is, y1 is NaN
// too (y1 = y + h·…) and both give NaN.
func (g *stageGen) norm(nd int, e3 bool) {
	a := &g.a
	arg := func(i int) jit.Mem { return jit.Mem{Base: jit.R13, Disp: int32(8 * i)} }
	a.Load64(jit.R12, arg(argRTol))
	a.Load64(jit.AX, arg(argATol))
	i := len(g.coefs)
	g.coefs = append(g.coefs, math.Float64frombits(1<<63-1)) // |x| mask
	a.VRM(jit.VexPP66, jit.Map0F38, true, 0x19, yExtra, 0, jit.Mem{Base: regCoefs, Disp: int32(8 * i)})
	if !g.hLanes {
		g.normChunks(0, nd, e3)
		return
	}
	// Lanes: group by group (nd is a group's count), each finished on
	// its own (normLanes).
	for grp := range g.groups {
		g.laneH(grp)
		g.normChunks(grp*g.gdim, nd, e3)
		g.normLanes(grp, nd, e3)
	}
}

// laneH loads group grp's step sizes into yH (lane-major code).
func (g *stageGen) laneH(grp int) {
	g.a.VRM(jit.VexPP66, jit.Map0F, true, jit.OpLoad, yH, 0, jit.Mem{Base: regH, Disp: int32(32 * grp)}) // vmovupd
}

// normChunks emits norm's per-component part for the nd values from
// base.
func (g *stageGen) normChunks(base, nd int, e3 bool) {
	a := &g.a
	const (
		yM  = 1 // max(|y|, |y1|), then the scale
		yR  = 2 // |y1|, then r for ev
		yR3 = 3 // loads, then r for ev3
	)
	chunks(nd, func(d0 int, pp byte, wide bool) {
		d := base + d0
		at := func(base byte) jit.Mem { return jit.Mem{Base: base, Disp: int32(8 * d)} }
		a.VRM(pp, jit.Map0F, wide, jit.OpLoad, yM, 0, at(regY))
		a.VRR(jit.VexPP66, jit.Map0F, wide, jit.OpAnd, yM, yM, yExtra) // |y|
		a.VRM(pp, jit.Map0F, wide, jit.OpLoad, yR, 0, at(regY1))
		a.VRR(jit.VexPP66, jit.Map0F, wide, jit.OpAnd, yR, yR, yExtra) // |y1|
		a.VRR(pp, jit.Map0F, wide, opMax, yM, yM, yR)
		a.VRM(pp, jit.Map0F, wide, jit.OpLoad, yR3, 0, at(jit.R12))
		a.VRR(pp, jit.Map0F, wide, jit.OpMul, yM, yR3, yM) // rtol·max
		a.VRM(pp, jit.Map0F, wide, jit.OpLoad, yR3, 0, at(jit.AX))
		a.VRR(pp, jit.Map0F, wide, jit.OpAdd, yM, yR3, yM) // atol + rtol·max
		for _, v := range []struct {
			on  bool
			reg byte
			dst byte
			acc byte
		}{{true, yR, regEV, ySum5}, {e3, yR3, regEV3, ySum3}} {
			if !v.on {
				continue
			}
			a.VRM(pp, jit.Map0F, wide, jit.OpMul, v.reg, yH, at(v.dst)) // h·ev
			a.VRR(pp, jit.Map0F, wide, jit.OpDiv, v.reg, v.reg, yM)     // r
			a.VRR(pp, jit.Map0F, wide, jit.OpMul, v.reg, v.reg, v.reg)  // r·r
			if !g.hLanes {
				a.VRM(pp, jit.Map0F, wide, jit.OpSt, v.reg, 0, at(v.dst))
				continue
			}
			// Lanes: each chunk is one component of the four lanes, so
			// the sums in ascending order are vertical additions; the
			// first term starts the sum (0 + r² = r², as Of's first
			// addition gives).
			if d0 == 0 {
				a.VRR(pp, jit.Map0F, wide, jit.OpMov, v.acc, 0, v.reg)
			} else {
				a.VRR(pp, jit.Map0F, wide, jit.OpAdd, v.acc, v.acc, v.reg)
			}
		}
	})
}

// Registers of the lanes' norm (normLanes): the sums of the squared
// terms, the finiteness sum, scratch.
const (
	ySum5 = 4
	ySum3 = 5
	yFin  = 6
	yT0   = 7
	yErr  = 8
	yT1   = 9
	yMask = 10
	yZero = 11
	yT2   = 12
)

// argErr is the address in the code's arguments of the lanes' error
// norms, which normLanes writes.
const argErr = 10

// normLanes finishes the error norm of the four lanes of group grp in
// machine code after norm has summed their squared terms (lane-major
// code only): it writes each lane's norm into the group's four values
// at argErr, or +Inf where control.Norm.Of says the attempt is not
// usable (the norm or any of the components of the lane's y1 not
// finite), with Of's operations in Of's order: sqrt(Σr²/n), or
// Hairer's DOP853 form, and the test fin + (err − err) == 0 with
// fin = Σ (y1_d − y1_d). nd counts a group's values of the norm
// (components × 4).
func (g *stageGen) normLanes(grp, nd int, e3 bool) {
	dim, base := g.gdim, grp*g.gdim
	a := &g.a
	pp, m0 := byte(jit.VexPP66), byte(jit.Map0F)
	coef := func(v float64) jit.Mem {
		g.coefs = append(g.coefs, v)
		return jit.Mem{Base: regCoefs, Disp: int32(8 * (len(g.coefs) - 1))}
	}
	broadcast := func(dst byte, v float64) { a.VRM(pp, jit.Map0F38, true, 0x19, dst, 0, coef(v)) }
	for d := 0; d < dim; d += 4 {
		a.VRM(pp, m0, true, jit.OpLoad, yT0, 0, jit.Mem{Base: regY1, Disp: int32(8 * (base + d))})
		a.VRR(pp, m0, true, jit.OpSub, yT0, yT0, yT0) // 0 if finite, NaN otherwise
		if d == 0 {
			a.VRR(pp, m0, true, jit.OpMov, yFin, 0, yT0)
		} else {
			a.VRR(pp, m0, true, jit.OpAdd, yFin, yFin, yT0)
		}
	}
	nf := float64(nd / 4)
	a.VRR(pp, m0, true, jit.OpXor, yZero, yZero, yZero)
	if !e3 {
		broadcast(yT0, nf)
		a.VRR(pp, m0, true, jit.OpDiv, yErr, ySum5, yT0) // Σr²/n
		a.VRR(pp, m0, true, jit.OpSqrt, yErr, 0, yErr)
	} else {
		broadcast(yT0, 0.01)
		a.VRR(pp, m0, true, jit.OpMul, yT1, yT0, ySum3)   // 0.01·Σr3²
		a.VRR(pp, m0, true, jit.OpAdd, yT1, ySum5, yT1)   // den
		a.VRR(pp, m0, true, jit.OpCmp, yMask, yT1, yZero) // den > 0
		a.B = append(a.B, cmpGTOQ)
		broadcast(yT0, nf)
		a.VRR(pp, m0, true, jit.OpMul, yT2, yT0, yT1) // n·den
		a.VRR(pp, m0, true, jit.OpSqrt, yT2, 0, yT2)
		a.VRR(pp, m0, true, jit.OpDiv, yErr, ySum5, yT2)
		a.VRR(pp, m0, true, jit.OpAnd, yErr, yErr, yMask) // 0 where den ≤ 0 or NaN
	}
	a.VRR(pp, m0, true, jit.OpSub, yT0, yErr, yErr) // err − err
	a.VRR(pp, m0, true, jit.OpAdd, yT0, yFin, yT0)  // fin + (err − err)
	a.VRR(pp, m0, true, jit.OpCmp, yMask, yT0, yZero)
	a.B = append(a.B, cmpEQOQ) // usable
	broadcast(yT2, math.Inf(1))
	a.VRR(pp, m0, true, jit.OpAndN, yT2, yMask, yT2) // +Inf where not usable
	a.VRR(pp, m0, true, jit.OpAnd, yErr, yErr, yMask)
	a.VRR(pp, m0, true, jit.OpOr, yErr, yErr, yT2)
	a.Load64(jit.R12, jit.Mem{Base: jit.R13, Disp: 8 * argErr})
	a.VRM(pp, m0, true, jit.OpSt, yErr, 0, jit.Mem{Base: jit.R12, Disp: int32(32 * grp)})
	a.Load64(jit.R12, jit.Mem{Base: jit.R13, Disp: 8 * argRTol}) // norm's, for the next group
}

// The predicates of vcmppd used: ordered equal, ordered greater than
// (both false where an operand is NaN, as Go's == and > are).
const (
	cmpEQOQ = 0x00
	cmpGTOQ = 0x1E
)

// chunks calls emit for the components d of [0, n) four at a time
// (256-bit packed: pp 66, wide), then two (128-bit packed), then one
// (scalar: pp F2): the lanes of the code for component d onwards.
func chunks(n int, emit func(d int, pp byte, wide bool)) {
	for d := 0; d < n; {
		switch {
		case n-d >= 4:
			emit(d, jit.VexPP66, true)
			d += 4
		case n-d >= 2:
			emit(d, jit.VexPP66, false)
			d += 2
		default:
			emit(d, jit.VexPPF2, false)
			d++
		}
	}
}

// opMax is the opcode of maxpd/maxsd.
const opMax = 0x5F

// stageGen writes the code of the sums.
type stageGen struct {
	a     jit.Asm
	dim   int
	slot  []int // where stage j lies in the block, in units of dim
	coefs []float64
	// hLanes: h is four values, one per lane (lane-major arrays), not
	// one value for every component; the arrays then hold groups of
	// four lanes (groups of them, gdim values each), each group with
	// its own four step sizes.
	hLanes       bool
	groups, gdim int
}

// begin starts a function: h into every lane of its register, or the
// lanes' four step sizes.
func (g *stageGen) begin() {
	if g.hLanes {
		g.a.VRM(jit.VexPP66, jit.Map0F, true, jit.OpLoad, yH, 0, jit.Mem{Base: regH}) // vmovupd
		return
	}
	g.a.VRM(jit.VexPP66, jit.Map0F38, true, 0x19, yH, 0, jit.Mem{Base: regH}) // vbroadcastsd
}

// finish ends a function.
func (g *stageGen) finish() {
	g.a.Vzeroupper()
	g.a.Ret()
}

// sum writes dst[d] = Σ_j a_j·k_j[d] for d < n, or with input set
// dst[d] = y[d] + h·Σ_j a_j·k_j[d]: four components per instruction,
// then two, then one.
func (g *stageGen) sum(dst byte, row []coef, n int, input bool) {
	a := &g.a
	// The coefficients, each broadcast once into a register (the first
	// numCoefRegs) or before each use.
	base := len(g.coefs)
	for _, c := range row {
		g.coefs = append(g.coefs, c.a)
	}
	coefMem := func(t int) jit.Mem { return jit.Mem{Base: regCoefs, Disp: int32(8 * (base + t))} }
	for t := range min(len(row), numCoefRegs) {
		a.VRM(jit.VexPP66, jit.Map0F38, true, 0x19, byte(yCoef0+t), 0, coefMem(t))
	}
	if !g.hLanes {
		g.sumChunks(dst, row, 0, n, input, coefMem)
		return
	}
	// Lanes: n is a group's count; each group with its step sizes.
	for grp := range g.groups {
		if input {
			g.laneH(grp)
		}
		g.sumChunks(dst, row, grp*g.gdim, n, input, coefMem)
	}
}

// sumChunks emits sum's chunks for the n values from from.
func (g *stageGen) sumChunks(dst byte, row []coef, from, n int, input bool, coefMem func(int) jit.Mem) {
	a := &g.a
	chunks(n, func(d0 int, pp byte, wide bool) {
		d := from + d0
		off := int32(8 * d)
		for t, c := range row {
			cr := byte(yCoef0 + t)
			if t >= numCoefRegs {
				cr = yExtra
				a.VRM(jit.VexPP66, jit.Map0F38, true, 0x19, yExtra, 0, coefMem(t))
			}
			m := jit.Mem{Base: regK, Disp: int32(8*g.slot[c.j]*g.dim) + off}
			if t == 0 {
				a.VRM(pp, jit.Map0F, wide, jit.OpMul, yAcc, cr, m) // acc = a·k
			} else {
				a.VRM(pp, jit.Map0F, wide, jit.OpMul, yTmp, cr, m)      // tmp = a·k
				a.VRR(pp, jit.Map0F, wide, jit.OpAdd, yAcc, yAcc, yTmp) // acc = acc + tmp
			}
		}
		if input {
			a.VRR(pp, jit.Map0F, wide, jit.OpMul, yAcc, yH, yAcc)                           // acc = h·acc
			a.VRM(pp, jit.Map0F, wide, jit.OpLoad, yTmp, 0, jit.Mem{Base: regY, Disp: off}) // tmp = y
			a.VRR(pp, jit.Map0F, wide, jit.OpAdd, yAcc, yTmp, yAcc)                         // acc = y + acc
		}
		a.VRM(pp, jit.Map0F, wide, jit.OpSt, yAcc, 0, jit.Mem{Base: dst, Disp: off})
	})
}
