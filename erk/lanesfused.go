package erk

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"unsafe"

	"github.com/gradsolve/gradsolve/ivp"

	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/ode"
)

// A fused lane attempt: where f is lane code of one piece
// (ode.LaneKernel: a problem compiled from formulas whose f calls no
// math function), the whole attempt of the four lanes — every stage
// sum, the stage times t + c_i·h, f at each stage (its body copied in),
// the error sums and the norms — is one function of machine code,
// entered once per attempt instead of once per sum and once per
// evaluation. Each operation is the one the separate pieces do, in the
// same order, so the bits are the same (TestLanesMatchScalar).

// The further arguments of the fused code, after those of the stage
// code (argRTol, argATol, argErr): the lanes' times, f's register
// file, the lanes' parameters and the table of the stages' addresses.
const (
	argT     = 11
	argFRegs = 12
	argP     = 13
	argKs    = 14
	argMoved = 15 // all-ones in the lanes completing a step, else zero
	// The code of whole rounds (buildFusedLanes with rounds) has two
	// more: the block of ivp.LaneRounds and its Args.
	argRoundBase = 16
	argRoundArgs = 17
)

// roundTail is what follows the fused attempt in the code of whole
// rounds: ivp.LaneRounds (the lane driver's) or ivp.ReplayRounds (the
// forward replay's).
type roundTail interface {
	EmitRest(a *jit.Asm, loop int)
}

// fusedLanes is a fused attempt's code.
type fusedLanes struct {
	code  *jit.Code
	entry uintptr
	coefs []float64
	size  int
}

// buildFusedLanes returns the fused attempt of sv's tableau for L lanes
// (a multiple of ode.LaneWidth: groups of four, each laid out as four
// lanes are) of trajectories with m parameters, with f's body k, or nil
// where the code would pass jitMaxCode or cannot be made executable.
// Each stage's sums run for every group, then f for each group in turn:
// the groups' chains are independent, so the processor overlaps them.
//
// With cols (a sensitivity system by columns, ode.LaneColumns), each
// evaluation is f's body followed, for each column, by the tangent
// program's body on the column's block, with its own register file
// (laneCols).
//
// With rounds, the code is that of whole rounds (ivp.LaneRounds, or
// ivp.ReplayRounds for the forward replay): its entry loads R14 and R15
// from arguments 16 and 17 (rounds.Base() and rounds.Args()), and the
// attempt is followed by rounds.EmitRest, which jumps back to it for
// the next round.
func buildFusedLanes(sv *Solver, k *ode.LaneKernel, cols *laneCols, L, m int, rounds roundTail) *fusedLanes {
	const W = ode.LaneWidth
	s := sv.s
	end := s
	if sv.fsal {
		end = s - 1
	}
	G := L / W
	per := len(k.Body) + 160
	if cols != nil {
		per += cols.ns * (len(cols.k.Body) + 80)
	}
	if jitCodeEstimate(sv)*L+G*(s+1)*per > jitMaxCode {
		return nil
	}
	gdim := sv.dim * W // a group's values of an array of states
	dim, nd := gdim, sv.cfg.NormDim*W
	g := &stageGen{dim: gdim * G, slot: make([]int, s), hLanes: true, groups: G, gdim: gdim}
	for j := range g.slot {
		g.slot[j] = j
	}
	a := &g.a
	arg := func(i int) jit.Mem { return jit.Mem{Base: jit.R13, Disp: int32(8 * i)} }
	loop := 0
	if rounds != nil {
		a.Load64(jit.R14, jit.Mem{Base: jit.BX, Disp: 8 * argRoundBase})
		a.Load64(jit.R15, jit.Mem{Base: jit.BX, Disp: 8 * argRoundArgs})
		loop = len(a.B) // BX stays the arguments' address throughout
	}
	// The code's sections, for profiles (jit.Code.Name).
	var secs []jit.Section
	mark := func(name string, i int) {
		secs = append(secs, jit.Section{Off: len(a.B), Name: fmt.Sprintf("%s%d", name, i)})
	}
	mark("entry", 0)
	a.MovRR(jit.R13, jit.BX) // the arguments, for the reloads after each f
	reload := func() {
		for i, r := range argRegs {
			a.Load64(r, arg(i))
		}
	}
	// f for group grp at the stage time t + c·h (t + h where unit: the
	// scalar code's t + h; t itself where at), of the input at argument
	// in, into stage j (index s: the spare stage).
	const pp, m0 = jit.VexPP66, jit.Map0F
	f := func(grp, in, j int, c float64, unit, at bool) {
		a.Load64(jit.R12, arg(argT))
		a.VRM(pp, m0, true, jit.OpLoad, yT0, 0, jit.Mem{Base: jit.R12, Disp: int32(32 * grp)})
		switch {
		case at:
		case unit:
			g.laneH(grp)
			a.VRR(pp, m0, true, jit.OpAdd, yT0, yT0, yH)
		default:
			g.laneH(grp)
			g.coefs = append(g.coefs, c)
			a.VRM(pp, jit.Map0F38, true, 0x19, yT1, 0, jit.Mem{Base: regCoefs, Disp: int32(8 * (len(g.coefs) - 1))})
			a.VRR(pp, m0, true, jit.OpMul, yT1, yT1, yH)  // c·h
			a.VRR(pp, m0, true, jit.OpAdd, yT0, yT0, yT1) // t + c·h
		}
		if cols != nil { // the times into the columns' register file too
			a.Load64(jit.DI, arg(argFRegs))
			a.Load64(jit.DI, jit.Mem{Base: jit.DI, Disp: int32(8 * (G + grp))})
			a.VRM(pp, m0, true, jit.OpSt, yT0, 0, jit.Mem{Base: jit.DI})
		}
		a.Load64(jit.DI, arg(argFRegs))
		a.Load64(jit.DI, jit.Mem{Base: jit.DI, Disp: int32(8 * grp)}) // the group's register file
		a.VRM(pp, m0, true, jit.OpSt, yT0, 0, jit.Mem{Base: jit.DI})
		a.Load64(jit.SI, arg(in))
		a.Lea(jit.SI, jit.Mem{Base: jit.SI, Disp: int32(8 * grp * gdim)})
		a.Load64(jit.DX, arg(argP))
		a.Lea(jit.DX, jit.Mem{Base: jit.DX, Disp: int32(8 * grp * m * W)})
		a.Load64(jit.R11, arg(argKs))
		a.Load64(jit.R11, jit.Mem{Base: jit.R11, Disp: int32(8 * j)})
		a.Lea(jit.R11, jit.Mem{Base: jit.R11, Disp: int32(8 * grp * gdim)})
		a.MovRR(jit.CX, jit.R11)
		a.MovRR(jit.AX, jit.R11) // the output, kept for the columns (the bodies keep AX, SI and DX)
		a.B = append(a.B, k.Body...)
		if cols != nil {
			n := cols.n * W // a group's values of one block of the state
			for c := range cols.ns {
				a.Load64(jit.DI, arg(argFRegs))
				a.Load64(jit.DI, jit.Mem{Base: jit.DI, Disp: int32(8 * (G + grp))})
				a.Lea(jit.R8, jit.Mem{Base: jit.SI, Disp: int32(8 * n * (1 + c))}) // v: the column's block
				a.Lea(jit.R9, jit.Mem{Base: jit.DI, Disp: int32(8 * (cols.fileLen + c*m*W))})
				a.Lea(jit.R11, jit.Mem{Base: jit.AX, Disp: int32(8 * n * (1 + c))}) // the column's derivative
				a.MovRR(jit.CX, jit.R11)
				a.B = append(a.B, cols.k.Body...)
			}
		}
		reload()
	}
	reload()
	// The lanes' accepted proposals become their states (Accept leaves
	// it here): y = y1 under the mask at moved[L:], before anything
	// reads y.
	for grp := range G {
		a.Load64(jit.R12, arg(argMoved))
		a.VRM(pp, m0, true, jit.OpLoad, yMask, 0, jit.Mem{Base: jit.R12, Disp: int32(8*L + 32*grp)})
		for d := grp * gdim; d < (grp+1)*gdim; d += 4 {
			yv := jit.Mem{Base: regY, Disp: int32(8 * d)}
			a.VRM(pp, m0, true, jit.OpLoad, yT0, 0, jit.Mem{Base: regY1, Disp: int32(8 * d)})
			a.VRR(pp, m0, true, jit.OpAnd, yT0, yT0, yMask) // y1 where pending
			a.VRM(pp, m0, true, jit.OpAndN, yT1, yMask, yv) // y elsewhere
			a.VRR(pp, m0, true, jit.OpOr, yT0, yT0, yT1)
			a.VRM(pp, m0, true, jit.OpSt, yT0, 0, yv)
		}
	}
	// The completion of the lanes' accepted steps (Stepper.Advance):
	// k_0 of a lane that moved becomes its FSAL stage, or f at its new
	// point, evaluated for every lane into the spare stage (index s of
	// the table) and kept where the lane moved.
	from := s - 1
	if !sv.fsal || sv.defer_ {
		from = s
		for grp := range G {
			f(grp, 1, s, 0, false, true)
		}
	}
	a.Load64(jit.AX, arg(argKs))
	a.Load64(jit.AX, jit.Mem{Base: jit.AX, Disp: int32(8 * from)})
	for grp := range G {
		a.Load64(jit.R12, arg(argMoved))
		a.VRM(pp, m0, true, jit.OpLoad, yMask, 0, jit.Mem{Base: jit.R12, Disp: int32(32 * grp)})
		for d := grp * gdim; d < (grp+1)*gdim; d += 4 {
			k0 := jit.Mem{Base: regK, Disp: int32(8 * d)}
			a.VRM(pp, m0, true, jit.OpLoad, yT0, 0, jit.Mem{Base: jit.AX, Disp: int32(8 * d)})
			a.VRR(pp, m0, true, jit.OpAnd, yT0, yT0, yMask) // the new k_0 where moved
			a.VRM(pp, m0, true, jit.OpAndN, yT1, yMask, k0) // the old one elsewhere
			a.VRR(pp, m0, true, jit.OpOr, yT0, yT0, yT1)
			a.VRM(pp, m0, true, jit.OpSt, yT0, 0, k0)
		}
	}
	// The forward replay uses of an attempt its proposal, the stages
	// that make it (the mesh keeps them), the FSAL stage (the next
	// step's k_0) and the verdict usable: it evaluates no stage after
	// lastB that feeds the error estimate alone, and forms no error
	// estimate (replayVerdict).
	_, replay := rounds.(*ivp.ReplayRounds)
	if replay {
		end = min(end, sv.lastB+1)
	}
	for i := 1; i < end; i++ {
		mark("sum", i)
		g.sum(regYT, sv.rows[i], dim, true)
		mark("f", i)
		for grp := range G {
			f(grp, 2, i, sv.c[i], false, false)
		}
	}
	mark("last", 0)
	if sv.fsal {
		g.sum(regY1, sv.rows[s-1], dim, true)
		if !sv.defer_ {
			for grp := range G {
				f(grp, 3, s-1, 1, true, false)
			}
		}
	} else {
		g.sum(regY1, sv.b, dim, true)
	}
	mark("verdict", 0)
	switch {
	case replay:
		g.replayVerdict(sv.fsal && !sv.defer_, s-1)
	default:
		g.sum(regEV, sv.e, nd, false)
		if sv.e3 != nil {
			g.sum(regEV3, sv.e3, nd, false)
		}
		g.norm(nd, sv.e3 != nil)
	}
	mark("tail", 0)
	if rounds != nil {
		rounds.EmitRest(a, loop)
	} else {
		g.finish()
	}
	code, err := jit.NewCode(a.B)
	if err != nil {
		return nil
	}
	name := "erk.attempt"
	switch {
	case replay:
		name = "erk.replay-rounds"
	case rounds != nil:
		name = "erk.solve-rounds"
	}
	code.Name(len(a.B), name, secs)
	return &fusedLanes{code: code, entry: code.Addr(0), coefs: g.coefs, size: len(a.B)}
}

// replayVerdict writes, for each group of four lanes, the verdict of
// the forward replay's attempt into the lanes' four values at argErr:
// 0 where it is usable, +Inf where not — where a value of the proposal
// y1 is not finite, or (fsal set) one of the stage at index j, f at the
// new point, which becomes the lane's next k_0.
//
// It is control.Norm.Of's verdict without the norm: a non-finite stage
// with a nonzero weight in y1's row makes y1 non-finite (its term is
// ±Inf or NaN, and so is every sum with it), so the stages the norm
// weighs are covered but for those that only feed the error estimate
// (Vern7's last, which the replay does not evaluate) and the FSAL
// stage, checked here. Where the two verdicts differ — a norm that
// overflows, an error-only stage that is not finite — the proposal is
// finite, so the lanes' proposal is the scalar step's bits either way
// (the fallback on a verdict of not usable only guards against the
// operands of a NaN, which the lanes' code and Go's may order
// differently).
func (g *stageGen) replayVerdict(fsal bool, j int) {
	a := &g.a
	const pp, m0 = jit.VexPP66, jit.Map0F
	i := len(g.coefs)
	g.coefs = append(g.coefs, math.Inf(1))
	a.VRR(pp, m0, true, jit.OpXor, yZero, yZero, yZero)
	for grp := range g.groups {
		base := grp * g.gdim
		first := true
		fin := func(m jit.Mem) {
			a.VRM(pp, m0, true, jit.OpLoad, yT0, 0, m)
			a.VRR(pp, m0, true, jit.OpSub, yT0, yT0, yT0) // 0 if finite, NaN otherwise
			if first {
				a.VRR(pp, m0, true, jit.OpMov, yFin, 0, yT0)
				first = false
			} else {
				a.VRR(pp, m0, true, jit.OpAdd, yFin, yFin, yT0)
			}
		}
		for d := 0; d < g.gdim; d += 4 {
			fin(jit.Mem{Base: regY1, Disp: int32(8 * (base + d))})
		}
		if fsal {
			for d := 0; d < g.gdim; d += 4 {
				fin(jit.Mem{Base: regK, Disp: int32(8 * (g.slot[j]*g.dim + base + d))})
			}
		}
		a.VRR(pp, m0, true, jit.OpCmp, yMask, yFin, yZero)
		a.B = append(a.B, cmpEQOQ) // usable
		a.VRM(pp, jit.Map0F38, true, 0x19, yErr, 0, jit.Mem{Base: regCoefs, Disp: int32(8 * i)})
		a.VRR(pp, m0, true, jit.OpAndN, yErr, yMask, yErr) // +Inf where not usable, else 0
		a.Load64(jit.R12, jit.Mem{Base: jit.R13, Disp: 8 * argErr})
		a.VRM(pp, m0, true, jit.OpSt, yErr, 0, jit.Mem{Base: jit.R12, Disp: int32(32 * grp)})
	}
}

// laneCols is a sensitivity system by columns (ode.LaneColumns) as the
// fused code runs it: ns columns of n states, the tangent program's body
// k, and the length of its register file, after which each group's
// file holds every column's w (m·W values, lane-major).
type laneCols struct {
	k       *ode.LaneKernel
	w       [][]float64
	n, ns   int
	fileLen int
}

// newLaneCols returns c as the fused code runs it for a system of n
// states and m parameters, or nil where it does not fit it: no kernel,
// columns that do not fill the state, or a direction of another length.
func newLaneCols(c *ode.LaneColumns, dim, n, m int) *laneCols {
	if c == nil || c.Kernel == nil || n < 1 || dim != n*(1+len(c.W)) {
		return nil
	}
	for _, w := range c.W {
		if len(w) != m {
			return nil
		}
	}
	return &laneCols{k: c.Kernel, w: c.W, n: n, ns: len(c.W), fileLen: len(c.Kernel.Registers())}
}

// setFused points the fused code's arguments at ls's arrays; regs
// makes a register file of f's lane code, one per group of lanes (and
// with columns, each group's file of the column program after them).
func (ls *LaneSolver) setFused(regs func() []float64, cols *laneCols) {
	const W = ode.LaneWidth
	ptr := func(s []float64) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(s)) }
	G := ls.L / W
	ls.fregs = make([][]float64, G)
	ls.fregp = make([]unsafe.Pointer, G)
	for grp := range G {
		ls.fregs[grp] = regs()
		ls.fregp[grp] = ptr(ls.fregs[grp])
	}
	if cols != nil {
		for range G {
			f := make([]float64, cols.fileLen+cols.ns*ls.m*W)
			copy(f, cols.k.Registers())
			for c, w := range cols.w {
				for j, v := range w {
					for l := range W {
						f[cols.fileLen+c*ls.m*W+j*W+l] = v
					}
				}
			}
			ls.fregs = append(ls.fregs, f)
			ls.fregp = append(ls.fregp, ptr(f))
		}
	}
	ls.kptrs = make([]unsafe.Pointer, len(ls.k)+1)
	for j, kj := range ls.k {
		ls.kptrs[j] = ptr(kj)
	}
	ls.kptrs[len(ls.k)] = ptr(ls.adv)
	ls.moved = make([]uint64, 2*ls.L)
	ls.fargs = ls.jargs
	ls.fargs[7] = ptr(ls.fused.coefs)
	ls.fargs[argT], ls.fargs[argP] = ptr(ls.tIn), ptr(ls.p)
	ls.fargs[argFRegs] = unsafe.Pointer(unsafe.SliceData(ls.fregp))
	ls.fargs[argKs] = unsafe.Pointer(unsafe.SliceData(ls.kptrs))
	ls.fargs[argMoved] = unsafe.Pointer(unsafe.SliceData(ls.moved))
}

// The fused codes built, shared by every lane solver of the same
// tableau, dimensions and f (an engine builds one lane solver per worker
// and solve): the code reads everything else through its arguments, so
// one copy serves them all. Bounded by fusedCacheBytes of code, after
// which it starts again empty.
var fusedCache codeCache

const fusedCacheBytes = 32 << 20

// codeCache holds built machine codes by key, up to fusedCacheBytes of
// code, after which it starts again empty.
type codeCache struct {
	sync.Mutex
	m     map[string]any
	bytes int
}

// cachedCode returns the code c holds under key, else builds it (nil:
// none to build), caches it with its size in bytes and returns it.
func cachedCode[T any](c *codeCache, key string, build func() (*T, int)) *T {
	c.Lock()
	v, ok := c.m[key].(*T)
	c.Unlock()
	if ok {
		return v
	}
	v, size := build()
	if v == nil {
		return nil
	}
	c.Lock()
	defer c.Unlock()
	if c.m == nil || c.bytes+size > fusedCacheBytes {
		c.m, c.bytes = map[string]any{}, 0
	}
	c.m[key] = v
	c.bytes += size
	return v
}

// cachedFusedLanes is buildFusedLanes through fusedCache.
func cachedFusedLanes(sv *Solver, k *ode.LaneKernel, cols *laneCols, L, m int, rounds roundTail) *fusedLanes {
	tail := 0
	switch rounds.(type) {
	case *ivp.LaneRounds:
		tail = 1
	case *ivp.ReplayRounds:
		tail = 2
	}
	return cachedCode(&fusedCache, fusedKey(sv, k, cols, L, m, tail), func() (*fusedLanes, int) {
		f := buildFusedLanes(sv, k, cols, L, m, rounds)
		if f == nil {
			return nil, 0
		}
		return f, f.size
	})
}

// fusedKey is everything buildFusedLanes's code depends on: the
// tableau's coefficients as the solver holds them, the dimensions, f's
// body and the columns', and which rounds follow the attempt (tail: 0
// none, 1 the driver's, 2 the replay's, whose code depends on L and the
// dimension alone besides).
func fusedKey(sv *Solver, k *ode.LaneKernel, cols *laneCols, L, m, tail int) string {
	words := 16 + 2*len(sv.c) + 2*len(sv.b) + 2*len(sv.e) + 2*len(sv.e3) + len(sv.rows)
	for _, r := range sv.rows {
		words += 1 + 2*len(r)
	}
	n := 8*words + len(k.Body)
	if cols != nil {
		n += 32 + len(cols.k.Body)
	}
	b := make([]byte, 0, n)
	u := func(v uint64) { b = binary.LittleEndian.AppendUint64(b, v) }
	f := func(v float64) { u(math.Float64bits(v)) }
	flag := func(on bool) {
		if on {
			u(1)
		} else {
			u(0)
		}
	}
	cs := func(row []coef) {
		u(uint64(len(row)))
		for _, c := range row {
			u(uint64(c.j))
			f(c.a)
		}
	}
	u(uint64(sv.s))
	u(uint64(sv.dim))
	u(uint64(sv.cfg.NormDim))
	u(uint64(L))
	u(uint64(m))
	flag(sv.fsal)
	flag(sv.defer_)
	u(uint64(tail))
	flag(sv.e3 != nil)
	u(uint64(len(sv.rows)))
	for _, r := range sv.rows {
		cs(r)
	}
	cs(sv.b)
	cs(sv.e)
	cs(sv.e3)
	u(uint64(len(sv.c)))
	for _, c := range sv.c {
		f(c)
	}
	u(uint64(len(k.Body)))
	b = append(b, k.Body...)
	if cols != nil {
		u(uint64(cols.n))
		u(uint64(cols.ns))
		u(uint64(cols.fileLen))
		u(uint64(len(cols.k.Body)))
		b = append(b, cols.k.Body...)
	}
	return string(b)
}
