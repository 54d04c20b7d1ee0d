package ros

import (
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/internal/lanecheck"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
)

// The reverse replay in lanes: the discrete adjoint of L trajectories'
// recorded Rosenbrock steps at once (ivp.LaneWalk), each lane at its own
// step of its own mesh. A reversed step is Replayer.ReverseStep's
// arithmetic lane by lane: the step recomputed by the lane solver's
// attempt (f, J and f_t at the step's start, W, its LU, the stages),
// then reverseStep's sweep back through the stages — W⁻ᵀ by the
// transposed solve with the lane's pivots, the stage inputs, the sums
// into the stages' cotangents, Jᵀ·R̄ — as machine code, with the
// cotangent programs (uᵀJ at each stage input, the second derivatives
// of J·v and of f_t) called from Go between its pieces, for every group
// of lanes at once where the problem has their lane forms. So each
// trajectory gets the scalar replayer's gradient bit for bit
// (TestLaneReverseMatchesScalar). Where the cotangent programs are lane
// code of one piece (ode.LaneKernel: Programs.VJPKernel, JVPVJPKernel
// and, for a non-autonomous problem, DfDtVJPKernel), their bodies are
// copied into the sweep at each stage, for every group, and the whole
// sweep is one function. Save times inside a step run on the scalar
// replayer lane by lane.

// revBase is the register of the reverse code's own arena.
const revBase = jit.R13

// revLayout places the reverse sweep's arrays in their arena.
type revLayout struct {
	kbar                     []laneArray // the stages' cotangents
	rb, v, gy, ybar, yi, ynb laneArray   // R̄_i, the programs' v, their ∂/∂y, ȳ, Y_i, ȳ_new
	gpT, gp, zero            laneArray   // their ∂/∂p, p̄, and zeros (JVPVJP's w)
	// files[kind] is where the register files of the cotangent program
	// kind's body lie (one per group, fileLen[kind] values each) where
	// it is in the code.
	files, fileLen [3]int
	consts, size   int
}

// revKernels are the bodies of the cotangent programs the sweep copies
// in: uᵀJ (VJP), the second derivatives of J·v (JVPVJP) and, for a
// non-autonomous problem, of f_t (DfDtVJP; nil otherwise), indexed by
// the calls' kinds.
type revKernels [3]*ode.LaneKernel

func newRevLayout(dim, s, m, L int, ks *revKernels) *revLayout {
	rl := &revLayout{}
	next := 0
	arr := func(n int) laneArray {
		a := laneArray{off: next, n: n, base: revBase}
		next += n * L
		return a
	}
	for range s {
		rl.kbar = append(rl.kbar, arr(dim))
	}
	rl.rb, rl.v, rl.gy, rl.ybar, rl.yi, rl.ynb = arr(dim), arr(dim), arr(dim), arr(dim), arr(dim), arr(dim)
	rl.gpT, rl.gp, rl.zero = arr(m), arr(m), arr(m)
	if ks != nil {
		for kind, k := range ks {
			if k != nil {
				rl.fileLen[kind] = (len(k.Registers()) + 3) &^ 3 // whole vectors
				rl.files[kind] = next
				next += L / ode.LaneWidth * rl.fileLen[kind]
			}
		}
	}
	rl.consts = next
	return rl
}

// The programs the reverse code's pieces wait for, in order: after
// piece k, revCalls[k].
const (
	callVJP     = iota // uᵀJ at the stage input Y_i: v = h·R̄_i
	callJVPVJP         // R̄_iᵀ·∂(J·v)/∂(y, p): v = h·(ΣΓK + γ·K_i)
	callDfDtVJP        // ∂(f_t)/∂(y, p)ᵀ·v: v = h²·d_i·R̄_i
)

type revCall struct{ kind, stage int }

// revCode is the reverse sweep of one tableau, dimension, parameter
// count and lane count as pieces of machine code, entered with the
// forward arena's address in DI and the reverse arena's in SI; with the
// cotangent programs' bodies in it (fused), one piece, calls empty.
type revCode struct {
	fused   bool
	code    *jit.Code
	entries []uintptr
	calls   []revCall
	consts  []float64
	lay     *revLayout
	size    int
	body    []byte // the fused sweep without its return (withoutReturn)
}

var (
	revMu    sync.Mutex
	revCache = map[laneKey]*revCode{}
)

// revCodeFor returns the reverse code of the forward code fc (whose
// layout it reads) for tb, with the h²·d_i·f_t terms where dfdt is set,
// and with the cotangent programs' bodies ks copied in where ks is not
// nil; nil where there is no forward code or the system is larger than
// the registers hold (regMaxDim).
func revCodeFor(tb *method.Rosenbrock, fc *laneCode, m int, dfdt bool, ks *revKernels) *revCode {
	if fc == nil || fc.lay.ns != 0 || fc.lay.dim > regMaxDim {
		return nil
	}
	fl := fc.lay
	k := laneKey{coefs: fmt.Sprintf("%p %v", fc, dfdt), dim: fl.dim, m: m, lanes: fl.L}
	if ks != nil {
		for _, kk := range ks {
			if kk != nil {
				k.body += strconv.Itoa(len(kk.Body)) + ":" + string(kk.Body)
				k.fileLen = k.fileLen*1000 + len(kk.Registers())
			}
		}
	}
	revMu.Lock()
	defer revMu.Unlock()
	if c, ok := revCache[k]; ok {
		return c
	}
	c, err := buildRevCode(tb, fl, m, dfdt, ks)
	if err != nil {
		c = nil
	}
	revCache[k] = c
	return c
}

// revMaxCode bounds the fused sweep's machine code (the programs'
// bodies at every stage, for every group): beyond it the programs run
// from Go between the pieces.
const revMaxCode = 2 << 20

// buildRevCode emits reverseStep's sweep (see revCode), with the
// cotangent programs' bodies ks in it where ks is not nil.
func buildRevCode(tb *method.Rosenbrock, fl *laneLayout, m int, dfdt bool, ks *revKernels) (*revCode, error) {
	s, n := tb.Stages(), fl.dim
	rl := newRevLayout(n, s, m, fl.L, ks)
	g := &laneGen{lay: fl, cidx: map[uint64]int{}, cbase: revBase, coff: rl.consts}
	rc := &revCode{lay: rl, fused: ks != nil}
	var offs []int
	begin := func() {
		offs = append(offs, len(g.a.B))
		g.a.MovRR(laneBase, jit.DI)
		g.a.MovRR(revBase, jit.SI)
	}
	call := func(kind, i int) {
		if ks != nil {
			g.cotangent(rl, ks[kind].Body, kind, tb.C[i])
			return
		}
		g.end()
		rc.calls = append(rc.calls, revCall{kind, i})
		begin()
	}
	// add emits dst += src over n values per lane (addTo).
	add := func(dst, src laneArray) {
		for d := range dst.n {
			for grp := range fl.G {
				g.ld(0, g.of(dst, d, grp))
				g.opm(jit.OpAdd, 0, 0, g.of(src, d, grp))
				g.st(g.of(dst, d, grp), 0)
			}
		}
	}
	// spread emits kbar[j] += a_j·gy for every j with a_j ≠ 0 (addScaled
	// for each in turn), a_j a constant, or (h·a_j) where byH (the
	// lanes' own h times a_j): each group's gy in registers 0…n−1, read
	// once, and h·a_j formed once per group, the same products and sums
	// (in the same operand order) as the scalar replayer's.
	spread := func(a []float64, byH bool) {
		for grp := range fl.G {
			for d := range n {
				g.ld(byte(d), g.of(rl.gy, d, grp))
			}
			for j, c := range a {
				if c == 0 {
					continue
				}
				if byH {
					g.ld(rgX, g.h(grp))
					g.opm(jit.OpMul, rgX, rgX, g.c(c))
				}
				for d := range n {
					if byH {
						g.op(jit.OpMul, rgT, rgX, byte(d))
					} else {
						g.opm(jit.OpMul, rgT, byte(d), g.c(c))
					}
					g.ld(rgA, g.of(rl.kbar[j], d, grp))
					g.op(jit.OpAdd, rgA, rgA, rgT)
					g.st(g.of(rl.kbar[j], d, grp), rgA)
				}
			}
		}
	}
	// spreadBoth is spread(alpha, false), then Jᵀ·R̄ into gy (matTVec's
	// sums: each from +0, over the rows in order), then spread(gam,
	// true), for systems of at most rgX/2 components: per group gy in
	// registers 0…n−1 and Jᵀ·R̄ in n…2n−1 (not stored: nothing reads
	// it), and each K̄_j gets its α term, then its h·Γ term, as there.
	spreadBoth := func(alpha, gam []float64) {
		for grp := range fl.G {
			for d := range n {
				g.ld(byte(d), g.of(rl.gy, d, grp))
			}
			for j := range n {
				acc := byte(n + j)
				g.zero(acc)
				for r := range n {
					g.ld(rgT, g.of(fl.jac, r*n+j, grp))
					g.opm(jit.OpMul, rgT, rgT, g.of(rl.rb, r, grp))
					g.op(jit.OpAdd, acc, acc, rgT)
				}
			}
			for j := range max(len(alpha), len(gam)) {
				var a, c float64
				if j < len(alpha) {
					a = alpha[j]
				}
				if j < len(gam) {
					c = gam[j]
				}
				if a == 0 && c == 0 {
					continue
				}
				if c != 0 {
					g.ld(rgX, g.h(grp))
					g.opm(jit.OpMul, rgX, rgX, g.c(c))
				}
				for d := range n {
					g.ld(rgA, g.of(rl.kbar[j], d, grp))
					if a != 0 {
						g.opm(jit.OpMul, rgT, byte(d), g.c(a))
						g.op(jit.OpAdd, rgA, rgA, rgT)
					}
					if c != 0 {
						g.op(jit.OpMul, rgT, rgX, byte(n+d))
						g.op(jit.OpAdd, rgA, rgA, rgT)
					}
					g.st(g.of(rl.kbar[j], d, grp), rgA)
				}
			}
		}
	}
	begin()
	for d := range n { // K̄_i = m_i·ȳ_new, ȳ_new read once
		for grp := range fl.G {
			g.ld(rgX, g.of(rl.ynb, d, grp))
			for i := range s {
				g.opm(jit.OpMul, 0, rgX, g.c(tb.M[i]))
				g.st(g.of(rl.kbar[i], d, grp), 0)
			}
		}
	}
	add(rl.ybar, rl.ynb)
	for i := s - 1; i >= 0; i-- {
		g.solveTRegs(rl.kbar[i], rl.rb)
		g.combine(rl.yi, &fl.y, tb.Alpha[i])
		for grp := range fl.G { // v = h·R̄_i
			g.ld(rgX, g.h(grp))
			for d := range n {
				g.opm(jit.OpMul, 0, rgX, g.of(rl.rb, d, grp))
				g.st(g.of(rl.v, d, grp), 0)
			}
		}
		call(callVJP, i)
		add(rl.ybar, rl.gy)
		add(rl.gp, rl.gpT)
		gam := tb.GammaOff[i]
		anyG := anyNonzero(gam)
		switch {
		case anyG && 2*n <= rgX:
			// Ā_i = h·Jᵀ·R̄_i reaches the earlier increments too: both
			// spreads at once, each K̄_j read and written once.
			spreadBoth(tb.Alpha[i], gam)
		case anyG:
			spread(tb.Alpha[i], false)
			for j := range n { // gy = Jᵀ·R̄ (matTVec: each sum from +0, over the rows in order)
				for grp := range fl.G {
					g.zero(0)
					for r := range n {
						g.ld(1, g.of(fl.jac, r*n+j, grp))
						g.opm(jit.OpMul, 1, 1, g.of(rl.rb, r, grp))
						g.op(jit.OpAdd, 0, 0, 1)
					}
					g.st(g.of(rl.gy, j, grp), 0)
				}
			}
			spread(gam, true)
		default:
			spread(tb.Alpha[i], false)
		}
		for d := range n { // v = h·(ΣΓK + γ·K_i)
			for grp := range fl.G {
				if anyG {
					g.gammaSum(rgA, gam, fl.k, d, grp)
				} else {
					g.zero(rgA)
				}
				g.ld(rgT, g.of(fl.k[i], d, grp))
				g.opm(jit.OpMul, rgT, rgT, g.c(tb.Gamma))
				g.op(jit.OpAdd, rgA, rgA, rgT)
				g.opm(jit.OpMul, rgA, rgA, g.h(grp))
				g.st(g.of(rl.v, d, grp), rgA)
			}
		}
		call(callJVPVJP, i)
		add(rl.ybar, rl.gy)
		add(rl.gp, rl.gpT)
		if di := tb.D[i]; di != 0 && dfdt {
			for grp := range fl.G { // v = (h·h·d_i)·R̄_i, h·h·d_i formed once
				g.ld(rgX, g.h(grp))
				g.opm(jit.OpMul, rgX, rgX, g.h(grp))
				g.opm(jit.OpMul, rgX, rgX, g.c(di))
				for d := range n {
					g.opm(jit.OpMul, 0, rgX, g.of(rl.rb, d, grp))
					g.st(g.of(rl.v, d, grp), 0)
				}
			}
			call(callDfDtVJP, i)
			add(rl.ybar, rl.gy)
			add(rl.gp, rl.gpT)
		}
	}
	g.end()
	if len(g.a.B) > revMaxCode {
		return nil, fmt.Errorf("ros: the fused reverse sweep has %d bytes of code", len(g.a.B))
	}
	rl.size = rl.consts + len(g.consts)*ode.LaneWidth
	code, err := jit.NewCode(g.a.B)
	if err != nil {
		return nil, err
	}
	code.Name(len(g.a.B), "ros.reverse", nil)
	rc.code, rc.consts, rc.size = code, g.consts, len(g.a.B)
	if rc.fused {
		rc.body = withoutReturn(g.a.B)
	}
	for _, o := range offs {
		rc.entries = append(rc.entries, code.Addr(o))
	}
	return rc, nil
}

// cotangent emits the body of the cotangent program kind for every
// group, into gy and gpT, with the inputs program gives it from Go:
// uᵀJ at the stage time t + c·h (the scalar replayer's t + float64(c·h))
// and the stage input Y_i with u = v; the second derivatives of J·v at
// (t, y) with v, w = zero and u = R̄_i; those of f_t at (t, y) with
// u = v. Under ode.LaneKernel's contract: the group's register file in DI
// (the times in its first values), y in SI, p in DX, the seeds in R8,
// R9 and R10, gy in R11 and gp in CX.
func (g *laneGen) cotangent(rl *revLayout, body []byte, kind int, c float64) {
	fl := g.lay
	addr := func(r byte, x laneArray, grp int) { g.a.Lea(r, g.of(x, 0, grp)) }
	for grp := range fl.G {
		file := jit.Mem{Base: revBase, Disp: int32(8 * (rl.files[kind] + grp*rl.fileLen[kind]))}
		g.ld(0, g.of(fl.t, 0, grp))
		if kind == callVJP {
			g.ld(1, g.h(grp))
			g.opm(jit.OpMul, 1, 1, g.c(c))
			g.op(jit.OpAdd, 0, 0, 1) // t + c·h
		}
		g.st(file, 0)
		g.a.Lea(jit.DI, file)
		addr(jit.DX, fl.p, grp)
		addr(jit.R11, rl.gy, grp)
		addr(jit.CX, rl.gpT, grp)
		switch kind {
		case callVJP:
			addr(jit.SI, rl.yi, grp)
			addr(jit.R10, rl.v, grp)
		case callJVPVJP:
			addr(jit.SI, fl.y, grp)
			addr(jit.R8, rl.v, grp)
			addr(jit.R9, rl.zero, grp)
			addr(jit.R10, rl.rb, grp)
		case callDfDtVJP:
			addr(jit.SI, fl.y, grp)
			addr(jit.R10, rl.v, grp)
		}
		g.a.B = append(g.a.B, body...)
	}
}

// solveTRegs writes into dst lu.solveT of src for every lane (Wᵀ·x =
// b with the factors of W), on registers: Uᵀ·z = b from the first row,
// Lᵀ·u = z from the last, then the row exchanges in reverse order, as
// blends under the masks of the lanes whose pivot row each is.
func (g *laneGen) solveTRegs(src, dst laneArray) {
	lay, n := g.lay, g.lay.dim
	lu := func(r, c, grp int) jit.Mem { return g.of(lay.lu, r*n+c, grp) }
	g.zero(rgZ)
	for _, grps := range g.chunks() {
		each := func(f func(grp int, b byte)) { eachGroup(grps, n, f) }
		each(func(grp int, b byte) {
			for r := range n {
				g.ld(b+byte(r), g.of(src, r, grp))
			}
		})
		for r := range n { // Uᵀ·z = b
			each(func(grp int, b byte) {
				sum := g.dot(b, 0, r, func(j int) jit.Mem { return lu(j, r, grp) })
				g.op(jit.OpSub, b+byte(r), b+byte(r), sum)
				g.opm(jit.OpMul, b+byte(r), b+byte(r), g.of(lay.inv, r, grp))
			})
		}
		for r := n - 1; r >= 0; r-- { // Lᵀ·u = z, unit diagonal
			each(func(grp int, b byte) {
				sum := g.dot(b, r+1, n, func(j int) jit.Mem { return lu(j, r, grp) })
				g.op(jit.OpSub, b+byte(r), b+byte(r), sum)
			})
		}
		var ks []int // x = Pᵀ·u (the last row has no exchange)
		for k := n - 2; k >= 0; k-- {
			ks = append(ks, k)
		}
		g.swapRegs(grps, ks)
		each(func(grp int, b byte) {
			for r := range n {
				g.st(g.of(dst, r, grp), b+byte(r))
			}
		})
	}
}

// LaneReplayer is a Replayer whose Reverse also runs in lanes
// (ReverseLanes).
type LaneReplayer struct {
	*Replayer
	ls   *LaneSolver // the forward arrays and code, f and J in lanes
	rc   *revCode
	ks   revKernels // the programs' bodies in rc (where fused)
	walk *ivp.LaneWalk
	// The cotangent programs' lane forms (nil: lane by lane).
	vjpL, dfdtvjpL func(t, y, p, u, gy, gp []float64)
	jvpvjpL        func(t, y, p, v, w, u, gy, gp []float64)

	arena                       []float64 // the reverse code's (revLayout)
	rb, v, gy, ybar, yi, ynb    []float64
	gpT, gp, zero               []float64
	att                         ivp.LaneAttempt // the forward recomputation's attempt
	st                          []ode.Stats
	ys, vs, us, gyS, gpS, zeroS []float64 // one lane's, for the programs lane by lane
	fwd                         *ivp.LaneForward
	// Whole rounds of the reverse walk (lanesrounds.go): their code,
	// block and arguments, where BindReverseRounds bound them.
	rounds *roundsCode
	rblock *ivp.ReverseRounds
	rargs  [16]unsafe.Pointer
	// acc is the rounds' accumulate mask: set where a lane's item is a
	// partial step (ivp.ReverseRounds.SetPartials).
	acc []float64
}

// NewLaneReplayer returns the replayer of cfg (as NewReplayer, with the
// programs of pg) for L lanes of trajectories with m parameters, with
// the lane forms of lp and of pg's cotangent programs where they give
// the scalar programs' bits. Where the reverse sweep cannot run as
// machine code here (no AVX2, L not a multiple of four, more than
// regMaxDim components) it returns an error: use NewReplayer. With
// DenseSave the steps that hold save-time cotangents are reversed on
// the scalar replayer (ReverseDense), the others in lanes.
func NewLaneReplayer(cfg Config, L, m int, pg *ode.Programs, lp LanePrograms) (*LaneReplayer, error) {
	rp, err := NewReplayer(cfg, m, pg)
	if err != nil {
		return nil, err
	}
	cfg.NS = 0
	ls, err := NewLanes(cfg, L, m, lp)
	if err != nil {
		return nil, err
	}
	lr := &LaneReplayer{Replayer: rp, ls: ls, st: make([]ode.Stats, L)}
	n := cfg.Dim
	if v := pg.VJPLanes; v != nil && lanecheck.VJPAgrees(pg.VJP, v, n, m) {
		lr.vjpL = v
	}
	if v := pg.JVPVJPLanes; v != nil && lanecheck.JVPVJPAgrees(pg.JVPVJP, v, n, m) {
		lr.jvpvjpL = v
	}
	if v := pg.DfDtVJPLanes; v != nil && rp.dfdtvjp != nil && lanecheck.VJPAgrees(rp.dfdtvjp, v, n, m) {
		lr.dfdtvjpL = v
	}
	dfdt := rp.dfdtvjp != nil
	var rc *revCode
	if ks := lr.kernels(pg, dfdt); ks != nil {
		rc = revCodeFor(cfg.Tableau, ls.code, m, dfdt, ks)
	}
	if rc == nil {
		lr.ks = revKernels{}
		rc = revCodeFor(cfg.Tableau, ls.code, m, dfdt, nil)
	}
	if rc == nil {
		return nil, fmt.Errorf("ros: no lane reverse replay here (AVX2, lanes a multiple of %d, at most %d components)", ode.LaneWidth, regMaxDim)
	}
	lr.rc = rc
	rl := rc.lay
	buf := make([]float64, rl.size+8)
	skip := int((64 - uintptr(unsafe.Pointer(&buf[0]))%64) % 64 / 8)
	lr.arena = buf[skip : skip+rl.size]
	for i, c := range rc.consts {
		for w := range ode.LaneWidth {
			lr.arena[rl.consts+i*ode.LaneWidth+w] = c
		}
	}
	for kind, k := range lr.ks {
		for grp := range L / ode.LaneWidth {
			if rl.fileLen[kind] > 0 {
				copy(lr.arena[rl.files[kind]+grp*rl.fileLen[kind]:], k.Registers())
			}
		}
	}
	a := lr.arena
	lr.rb, lr.v, lr.gy, lr.ybar, lr.yi, lr.ynb = rl.rb.slice(a, L), rl.v.slice(a, L), rl.gy.slice(a, L), rl.ybar.slice(a, L), rl.yi.slice(a, L), rl.ynb.slice(a, L)
	lr.gpT, lr.gp, lr.zero = rl.gpT.slice(a, L), rl.gp.slice(a, L), rl.zero.slice(a, L)
	lr.att = ivp.LaneAttempt{Moved: make([]bool, L), Stats: make([]*ode.Stats, L), Err: make([]float64, L), OK: make([]bool, L)}
	for l := range L {
		lr.att.Stats[l] = &lr.st[l]
	}
	lr.ys, lr.vs, lr.us, lr.gyS = make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	lr.gpS, lr.zeroS = make([]float64, m), make([]float64, m)
	lr.walk = ivp.NewLaneWalk(lr, n)
	return lr, nil
}

// kernels returns the bodies of the cotangent programs the sweep needs
// (revKernels), kept in lr.ks, where every one of them is lane code of
// one piece whose lane form agrees with the scalar program (the
// checked lane forms run the same code), else nil.
func (lr *LaneReplayer) kernels(pg *ode.Programs, dfdt bool) *revKernels {
	get := func(f func() *ode.LaneKernel, lane bool) *ode.LaneKernel {
		if f == nil || !lane {
			return nil
		}
		return f()
	}
	ks := &revKernels{get(pg.VJPKernel, lr.vjpL != nil), get(pg.JVPVJPKernel, lr.jvpvjpL != nil), nil}
	if dfdt {
		ks[callDfDtVJP] = get(pg.DfDtVJPKernel, lr.dfdtvjpL != nil)
	}
	if ks[callVJP] == nil || ks[callJVPVJP] == nil || dfdt && ks[callDfDtVJP] == nil {
		return nil
	}
	lr.ks = *ks
	return ks
}

// Fused reports whether the reverse sweep runs as one function of
// machine code, with the cotangent programs' bodies in it.
func (lr *LaneReplayer) Fused() bool { return lr.rc.fused }

// Lanes returns L.
func (lr *LaneReplayer) Lanes() int { return lr.ls.L }

// ForwardLanes replays forward every job src hands out, L at a time
// (ivp.LaneForward): the lane solver's attempts with the step sizes of
// each job's mesh — the arithmetic the reverse sweep's recomputation
// relies on — and, for a lane whose attempt is not usable (a W the lanes
// did not factor, a non-finite proposal), the scalar replay's step; each
// job gets Forward's bits (TestLaneForwardMatchesScalar).
func (lr *LaneReplayer) ForwardLanes(src ivp.ForwardSource, stop *atomic.Bool) {
	if lr.fwd == nil {
		lr.fwd = ivp.NewLaneForward(lr.ls, lr.sv.cfg.F, lr.sv.dim, replayStep{lr.Replayer})
	}
	lr.fwd.Run(src, stop)
}

// ReverseLanes runs the reverse replay of every job src hands out, L at
// a time (ivp.LaneWalk.Reverse).
func (lr *LaneReplayer) ReverseLanes(src ivp.ReverseSource, stop *atomic.Bool) {
	lr.walk.Reverse(src, stop)
}

// ReversePartial reverses a save time inside a lane's step on the
// scalar replayer, after recomputing f, J and f_t at the step's start
// there (the scalar walk's ReverseStep leaves them in place).
func (lr *LaneReplayer) ReversePartial(t, ts float64, y, p, cot, ybar, gp []float64) {
	lr.start(t, y, p)
	replayStep{lr.Replayer}.ReversePartial(t, ts, y, p, cot, ybar, gp)
}

// ReverseSteps reverses a step of every active lane (ivp.LaneReverse):
// the step recomputed in lanes, then the sweep.
func (lr *LaneReplayer) ReverseSteps(r *ivp.LaneReverse) {
	const W = ode.LaneWidth
	ls, n, m := lr.ls, lr.ls.dim, lr.ls.m
	for l, on := range r.Active {
		if !on {
			continue
		}
		scatter(ls.y, r.Y[l][:n], l)
		scatter(ls.p, r.P[l][:m], l)
		ls.pl[l] = r.P[l]
		ls.t[l], ls.h[l] = r.T[l], r.H[l]
		ls.fresh[l] = false
		scatter(lr.ynb, r.YNewBar[l][:n], l)
		scatter(lr.ybar, r.YBar[l][:n], l)
		scatter(lr.gp, r.GP[l][:m], l)
	}
	// f at the steps' starts (start), then the attempt. Where f's body
	// is in the attempt's code and the method has no FSAL, the code
	// evaluates f at (t, y) itself for the lanes marked as having moved
	// on (as the forward replay's steps do): the same machine code as
	// the lane form ls.lp.F (LanePrograms), so the same bits.
	inCode := ls.code.fused && !ls.fsal
	switch fl := ls.lp.F; {
	case inCode:
	case fl != nil:
		for grp := range ls.L / W {
			fl(ls.t[grp*W:(grp+1)*W], ls.y[grp*n*W:(grp+1)*n*W], ls.p[grp*m*W:(grp+1)*m*W], ls.f0[grp*n*W:(grp+1)*n*W])
		}
	default:
		for l, on := range r.Active {
			if on {
				gather(ls.ys, ls.y, l)
				ls.cfg.F(ls.t[l], ls.ys, ls.pl[l], ls.fv)
				scatter(ls.f0, ls.fv, l)
			}
		}
	}
	for l, on := range r.Active {
		lr.att.Moved[l] = on && inCode
	}
	a := &lr.att
	a.Active, a.T, a.H = r.Active, r.T, r.H
	ls.Attempt(a)
	rc := lr.rc
	fwd, rev := unsafe.Pointer(unsafe.SliceData(ls.arena)), unsafe.Pointer(unsafe.SliceData(lr.arena))
	for k, e := range rc.entries {
		jit.Call5(e, fwd, rev, nil, nil, nil)
		if k < len(rc.calls) {
			lr.program(rc.calls[k], r.Active)
		}
	}
	runtime.KeepAlive(rc)
	for l, on := range r.Active {
		if on {
			gather(r.YBar[l][:n], lr.ybar, l)
			gather(r.GP[l][:m], lr.gp, l)
			if k := r.K[l] - prefetchSteps; k >= 0 {
				ms := r.Mesh[l]
				prefetch(unsafe.Pointer(&ms.Y[k*n]))
				prefetch(unsafe.Pointer(&ms.T[k]))
				prefetch(unsafe.Pointer(&ms.H[k]))
			}
		}
	}
}

// prefetchSteps is how many steps ahead of a lane's step ReverseSteps
// asks for the lines of the lane's mesh (its state, time and step
// size): a walk reads the meshes backwards, after the forward replay of
// the whole ensemble has passed over them, so they come from memory,
// and a load that waits for memory holds up the walk's bookkeeping
// (the prefetch leaves every value as it is).
const prefetchSteps = 2

// program runs the cotangent program the sweep waits for, into gy and
// gpT: for every group at once where it has its lane form, else lane by
// lane for the active lanes.
func (lr *LaneReplayer) program(c revCall, active []bool) {
	const W = ode.LaneWidth
	ls, n, m := lr.ls, lr.ls.dim, lr.ls.m
	tb := ls.cfg.Tableau
	y := ls.y
	t := ls.t
	if c.kind == callVJP {
		ls.stageTimes(tb.C[c.stage])
		y, t = lr.yi, ls.tt
	}
	grp := func(x []float64, k, g int) []float64 { return x[g*k*W : (g+1)*k*W] }
	switch {
	case c.kind == callVJP && lr.vjpL != nil:
		for g := range ls.L / W {
			lr.vjpL(grp(t, 1, g), grp(y, n, g), grp(ls.p, m, g), grp(lr.v, n, g), grp(lr.gy, n, g), grp(lr.gpT, m, g))
		}
		return
	case c.kind == callJVPVJP && lr.jvpvjpL != nil:
		for g := range ls.L / W {
			lr.jvpvjpL(grp(t, 1, g), grp(y, n, g), grp(ls.p, m, g), grp(lr.v, n, g), grp(lr.zero, m, g), grp(lr.rb, n, g), grp(lr.gy, n, g), grp(lr.gpT, m, g))
		}
		return
	case c.kind == callDfDtVJP && lr.dfdtvjpL != nil:
		for g := range ls.L / W {
			lr.dfdtvjpL(grp(t, 1, g), grp(y, n, g), grp(ls.p, m, g), grp(lr.v, n, g), grp(lr.gy, n, g), grp(lr.gpT, m, g))
		}
		return
	}
	for l, on := range active {
		if !on {
			continue
		}
		gather(lr.ys, y, l)
		gather(lr.vs, lr.v, l)
		p := ls.pl[l]
		switch c.kind {
		case callVJP:
			lr.vjp(t[l], lr.ys, p, lr.vs, lr.gyS, lr.gpS)
		case callJVPVJP:
			gather(lr.us, lr.rb, l)
			lr.jvpvjp(t[l], lr.ys, p, lr.vs, lr.zeroS, lr.us, lr.gyS, lr.gpS)
		case callDfDtVJP:
			lr.dfdtvjp(t[l], lr.ys, p, lr.vs, lr.gyS, lr.gpS)
		}
		scatter(lr.gy, lr.gyS, l)
		scatter(lr.gpT, lr.gpS, l)
	}
}

// Dense reports whether the replayer's save times come from the steps'
// continuous extension (Config.DenseSave): the lane walk then reverses
// the steps holding save-time cotangents with ReverseDense.
func (lr *LaneReplayer) Dense() bool { return lr.sv.cfg.DenseSave }

// ReverseDense reverses step k of ms with its dense saves on the scalar
// replayer (Walk.Reverse's step with dense set), for a lane whose step
// holds save-time cotangents.
func (lr *LaneReplayer) ReverseDense(ms *ivp.Mesh, k int, t, h float64, y, p, ynewBar, ybar, gp []float64, dense []ivp.SaveCot) {
	replayStep{lr.Replayer}.ReverseStep(ms, k, t, h, y, p, ynewBar, ybar, gp, dense)
}
