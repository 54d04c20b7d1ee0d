package ros

import (
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/internal/kernelgen"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
)

// A Rosenbrock attempt of every lane as machine code.
//
// Where the processor has AVX2, an attempt — the completion of the
// lanes' accepted steps (f0), W = I − hγJ, its LU factorisation with
// partial pivoting, the solves of the stages (on registers, for systems
// of up to regMaxDim components, else from memory), the products with
// J, the stage inputs, the proposal, the error vector and its norm, and
// with sensitivities each column's stages (in the same form as the
// state's: columnStage, columnMemory) — runs as straight-line code
// generated for the tableau, the dimension and the lane count, one
// instruction doing one value of four lanes. f is copied in at each
// stage where it is lane code of one piece (ode.LaneKernel), else
// evaluated between pieces of the code from Go (the problem's lane
// form, or lane by lane), as are the sensitivities' tangents. Every lane performs the
// scalar solver's operations (factor, solve, matVec, genericStages) on
// the same operands in the same order, without fused multiply–add:
//
//   - the pivot search keeps, lane by lane, the first row of largest
//     |a_ik| (a compare "greater than", as the scalar loop's, and a blend
//     of the magnitude and of the row's index); the row exchange is a
//     blend of the two rows under the mask of the lanes whose pivot row
//     it is, and a solve exchanges b's values under the same masks;
//   - an elimination row whose multiplier is zero keeps its old values
//     (a blend), as the scalar loop skips it;
//   - a lane whose W is singular to working precision (a pivot zero or
//     not finite) is marked in a mask, and its attempt is rejected as
//     the scalar solver rejects it; its values are computed on and
//     never read;
//   - sums start where the scalar code starts them: a dot product from
//     +0, so that 0 + (−0) is +0 as there.
//
// So each lane gets the bits the scalar solver gives that trajectory
// alone (TestLanesMatchScalar). Every array lives in one block (the
// arena, laneLayout), addressed from one register.

// laneMaxCode bounds the machine code of one attempt (laneCodeEstimate).
// The LU is unrolled, so the code grows as Dim³, and each sensitivity
// column adds its stages (Rodas5P for eight lanes: about 29 KB on 3
// components, 0.37 MB on 12, 0.7 MB on 16 and 1.2 MB on 16 with one
// column); larger systems run lane by lane on the scalar solver, which
// gives the same bits (LaneCodeFits).
const laneMaxCode = 2 << 20

// laneArray is an array of an arena: n values per lane, lane-major in
// groups of ode.LaneWidth lanes (value d of lane l at off +
// (l/W)·n·W + d·W + l mod W), addressed from register base (the
// forward arena's, laneBase, unless set: the reverse replay's arena,
// revBase).
type laneArray struct {
	off, n int
	base   byte
}

// laneLayout places the arrays of an attempt in the arena.
type laneLayout struct {
	dim, s, m, L, G                int
	y, y1, f0, yt, acc, jv, ev, ft laneArray
	fadv                           laneArray // f at the new (t, y) of the lanes that moved on (a method without FSAL)
	jac, lu                        laneArray // Dim×Dim, row-major per lane
	piv, inv                       laneArray // the pivot rows (as float64) and U's reciprocal diagonal
	ok                             laneArray // all ones where W factored, else zero
	moved, err                     laneArray // all ones where the lane's step moved on (FSAL), the error norms
	rtol, atol                     laneArray // the tolerances, tiled over the lanes
	h, tt, t                       laneArray // the step sizes, the stage times, the lanes' times
	// files is where f's register files lie (one per group, fileLen
	// values each) where f's body is in the code (fused), else 0; with
	// sensitivity columns, jfiles those of the tangent program's body
	// (jfileLen values each).
	files, fileLen   int
	jfiles, jfileLen int
	p                laneArray // the parameters
	k, fs            []laneArray
	// The sensitivity columns (ns of them): each one's increments
	// l[c][i], stage input sIn[c], tangent at the stage input g[c]
	// (from Go), M_c = ∂(J·S_c + J_p·w_c)/∂y (Dim×Dim) and its ∂_t;
	// accL is the scratch of the columns' stages from memory
	// (columnMemory: the scalar solver's accL).
	ns          int
	l           [][]laneArray
	sIn, g, ftc []laneArray
	mc          []laneArray
	accL        laneArray
	// wc holds each column's parameter direction w_c, tiled over the
	// lanes (m values per lane): the tangent program's w.
	wc     []laneArray
	consts int // the constants: one vector of W equal values each
	size   int // values in all
}

// newLaneLayout lays out the arena of dim components with ns
// sensitivity columns, s stages, m parameters and L lanes (a multiple of
// ode.LaneWidth), with register files of fileLen values for f's body and
// of jfileLen for the tangent program's (0: none); the constants follow,
// as many as the code uses (size is set once they are known).
func newLaneLayout(dim, s, m, L, fileLen, ns, jfileLen int) *laneLayout {
	lay := &laneLayout{dim: dim, s: s, m: m, L: L, G: L / ode.LaneWidth, ns: ns}
	next := 0
	arr := func(n int) laneArray {
		a := laneArray{off: next, n: n}
		next += n * L
		return a
	}
	lay.h, lay.tt, lay.t, lay.ok, lay.moved, lay.err = arr(1), arr(1), arr(1), arr(1), arr(1), arr(1)
	lay.rtol, lay.atol = arr(dim), arr(dim)
	na := dim * (1 + ns) // the state and its columns
	lay.y, lay.y1 = arr(na), arr(na)
	lay.f0, lay.yt, lay.acc, lay.jv, lay.ev, lay.ft, lay.fadv = arr(dim), arr(dim), arr(dim), arr(dim), arr(dim), arr(dim), arr(dim)
	lay.piv, lay.inv = arr(dim), arr(dim)
	for range s {
		lay.k = append(lay.k, arr(dim))
		lay.fs = append(lay.fs, arr(dim))
	}
	lay.jac, lay.lu = arr(dim*dim), arr(dim*dim)
	for range ns {
		var lc []laneArray
		for range s {
			lc = append(lc, arr(dim))
		}
		lay.l = append(lay.l, lc)
		lay.sIn, lay.g, lay.ftc = append(lay.sIn, arr(dim)), append(lay.g, arr(dim)), append(lay.ftc, arr(dim))
		lay.mc = append(lay.mc, arr(dim*dim))
		lay.wc = append(lay.wc, arr(m))
	}
	if ns > 0 {
		lay.accL = arr(dim)
	}
	lay.p = arr(m)
	if fileLen > 0 {
		lay.fileLen = (fileLen + 3) &^ 3 // whole vectors
		lay.files = next
		next += lay.G * lay.fileLen
	}
	if jfileLen > 0 {
		lay.jfileLen = (jfileLen + 3) &^ 3
		lay.jfiles = next
		next += lay.G * lay.jfileLen
	}
	lay.consts = next
	return lay
}

// at returns the arena index of value d of group grp's first lane in
// array x.
func (lay *laneLayout) at(x laneArray, d, grp int) int {
	const W = ode.LaneWidth
	return x.off + grp*x.n*W + d*W
}

// slice returns array x of the arena.
func (x laneArray) slice(arena []float64, L int) []float64 { return arena[x.off : x.off+x.n*L] }

// laneCode is the generated code of one tableau, dimension, parameter
// count and lane count: entry i is the piece that ends stage i (piece
// 0 also forms and factors W), after which f is evaluated for stage
// i+1; the last piece writes the proposal and the error vector. Where
// f is lane code of one piece (ode.LaneKernel), its body is copied in
// between the stages, once per group, and the whole attempt is one
// function.
type laneCode struct {
	code *jit.Code
	// entries are the pieces; with f's body in the code (fused), the
	// one entry is the whole attempt.
	entries []uintptr
	fused   bool
	consts  []float64 // the constants' values, by index, for the arena
	lay     *laneLayout
	size    int
	// body is the fused attempt's machine code without its return (nil
	// where not fused), for the code of whole rounds of the reverse
	// walk to copy in (lanesrounds.go).
	body []byte
}

// The registers of the generated code: the arena's address, and the
// vector registers each emitter uses as it needs them.
const laneBase = jit.AX

const (
	pp66 = jit.VexPP66
	m0F  = jit.Map0F
	// vcmppd predicates (ordered: false where a value is NaN, as Go's
	// comparisons are).
	cmpEQ = 0x00
	cmpLT = 0x11
	cmpGT = 0x1E
)

// laneGen emits the code of an attempt.
type laneGen struct {
	a      jit.Asm
	lay    *laneLayout
	consts []float64
	cidx   map[uint64]int
	// cbase and coff place the constants: at [cbase + 8·(coff + i·W)]
	// (the forward arena's laneBase and lay.consts unless set).
	cbase byte
	coff  int
}

// mem returns the operand of arena index i.
func (g *laneGen) mem(i int) jit.Mem { return jit.Mem{Base: laneBase, Disp: int32(8 * i)} }

// of returns the operand of value d of group grp in array x.
func (g *laneGen) of(x laneArray, d, grp int) jit.Mem {
	return jit.Mem{Base: x.base, Disp: int32(8 * g.lay.at(x, d, grp))}
}

// c returns the operand of the constant vector of v (every lane v).
func (g *laneGen) c(v float64) jit.Mem {
	b := math.Float64bits(v)
	i, ok := g.cidx[b]
	if !ok {
		i = len(g.consts)
		g.consts = append(g.consts, v)
		g.cidx[b] = i
	}
	if g.cbase == laneBase && g.coff == 0 {
		g.coff = g.lay.consts
	}
	return jit.Mem{Base: g.cbase, Disp: int32(8 * (g.coff + i*ode.LaneWidth))}
}

// cbits is c of the float64 with bits b (the masks).
func (g *laneGen) cbits(b uint64) jit.Mem { return g.c(math.Float64frombits(b)) }

func (g *laneGen) ld(r byte, m jit.Mem)           { g.a.VRM(pp66, m0F, true, jit.OpLoad, r, 0, m) }
func (g *laneGen) st(m jit.Mem, r byte)           { g.a.VRM(pp66, m0F, true, jit.OpSt, r, 0, m) }
func (g *laneGen) op(op, dst, x, y byte)          { g.a.VRR(pp66, m0F, true, op, dst, x, y) }
func (g *laneGen) opm(op, dst, x byte, m jit.Mem) { g.a.VRM(pp66, m0F, true, op, dst, x, m) }
func (g *laneGen) zero(r byte)                    { g.op(jit.OpXor, r, r, r) }
func (g *laneGen) cmp(dst, x, y, pred byte)       { g.a.VRRI(pp66, m0F, true, jit.OpCmp, dst, x, y, pred) }
func (g *laneGen) cmpm(dst, x byte, m jit.Mem, pred byte) {
	g.a.VRMI(pp66, m0F, true, jit.OpCmp, dst, x, m, pred)
}

// blend sets dst to y where mask's lane is set, else x.
func (g *laneGen) blend(dst, x, y, mask byte) { g.a.VBlendv(dst, x, y, mask) }

// The masks of the sign bit and of the rest.
const (
	signBit = 1 << 63
	absBits = signBit - 1
	allOnes = ^uint64(0)
)

// begin starts a piece: the arena's address from DI (jit.Call5's first
// argument).
func (g *laneGen) begin() { g.a.MovRR(laneBase, jit.DI) }

// end ends a piece.
func (g *laneGen) end() {
	g.a.Vzeroupper()
	g.a.Ret()
}

// withoutReturn returns a copy of the code of one piece b without the
// vzeroupper and ret that end emits (nil where b does not end so).
func withoutReturn(b []byte) []byte {
	tail := []byte{0xC5, 0xF8, 0x77, 0xC3}
	if len(b) < len(tail) || string(b[len(b)-len(tail):]) != string(tail) {
		return nil
	}
	return append([]byte(nil), b[:len(b)-len(tail)]...)
}

// formW writes W = I − hγJ into lu: −(hγ·J_ij), plus 1 on the
// diagonal, as attempt forms it.
func (g *laneGen) formW(gamma float64) {
	lay, n := g.lay, g.lay.dim
	for grp := range lay.G {
		g.ld(0, g.of(lay.h, 0, grp))
		g.opm(jit.OpMul, 0, 0, g.c(gamma)) // hγ
		for i := range n {
			for j := range n {
				g.opm(jit.OpMul, 1, 0, g.of(lay.jac, i*n+j, grp))
				g.opm(jit.OpXor, 1, 1, g.cbits(signBit))
				if i == j {
					g.opm(jit.OpAdd, 1, 1, g.c(1))
				}
				g.st(g.of(lay.lu, i*n+j, grp), 1)
			}
		}
	}
}

// factor is lu.factor for every lane: the pivots into piv, U's
// reciprocal diagonal into inv, and the lanes whose W is singular to
// working precision cleared in ok.
func (g *laneGen) factor() {
	lay, n := g.lay, g.lay.dim
	const (
		rBig, rP, rV, rM, rT, rInv, rL, rZ = 0, 1, 2, 3, 4, 5, 6, 7
		rA, rB, rC, rD                     = 8, 9, 10, 11
	)
	a := func(i, j, grp int) jit.Mem { return g.of(lay.lu, i*n+j, grp) }
	for grp := range lay.G {
		g.ld(rT, g.cbits(allOnes))
		g.st(g.of(lay.ok, 0, grp), rT)
	}
	for k := range n {
		for grp := range lay.G {
			// The pivot: the first row of largest |a_ik|, i ≥ k.
			g.ld(rBig, a(k, k, grp))
			g.opm(jit.OpAnd, rBig, rBig, g.cbits(absBits))
			g.ld(rP, g.c(float64(k)))
			for i := k + 1; i < n; i++ {
				g.ld(rV, a(i, k, grp))
				g.opm(jit.OpAnd, rV, rV, g.cbits(absBits))
				g.cmp(rM, rV, rBig, cmpGT)
				g.blend(rBig, rBig, rV, rM)
				g.ld(rT, g.c(float64(i)))
				g.blend(rP, rP, rT, rM)
			}
			// W factors where 0 < |pivot| < ∞.
			g.zero(rT)
			g.cmp(rV, rBig, rT, cmpGT)
			g.cmpm(rM, rBig, g.c(math.Inf(1)), cmpLT)
			g.op(jit.OpAnd, rV, rV, rM)
			g.opm(jit.OpAnd, rV, rV, g.of(lay.ok, 0, grp))
			g.st(g.of(lay.ok, 0, grp), rV)
			g.st(g.of(lay.piv, k, grp), rP)
			// The exchange of rows k and p.
			for i := k + 1; i < n; i++ {
				g.cmpm(rM, rP, g.c(float64(i)), cmpEQ)
				for j := range n {
					g.ld(rA, a(k, j, grp))
					g.ld(rB, a(i, j, grp))
					g.blend(rC, rA, rB, rM)
					g.blend(rD, rB, rA, rM)
					g.st(a(k, j, grp), rC)
					g.st(a(i, j, grp), rD)
				}
			}
			g.ld(rInv, g.c(1))
			g.opm(jit.OpDiv, rInv, rInv, a(k, k, grp))
			g.st(g.of(lay.inv, k, grp), rInv)
			for i := k + 1; i < n; i++ {
				g.ld(rL, a(i, k, grp))
				g.op(jit.OpMul, rL, rL, rInv)
				g.st(a(i, k, grp), rL)
				g.zero(rT)
				g.cmp(rZ, rL, rT, cmpEQ) // l = 0: the row is kept
				for j := k + 1; j < n; j++ {
					g.ld(rA, a(i, j, grp))
					g.opm(jit.OpMul, rB, rL, a(k, j, grp))
					g.op(jit.OpSub, rC, rA, rB)
					g.blend(rC, rC, rA, rZ)
					g.st(a(i, j, grp), rC)
				}
			}
		}
	}
}

// solve is lu.solve of array b for every lane.
func (g *laneGen) solve(b laneArray) {
	lay, n := g.lay, g.lay.dim
	const rP, rM, rA, rB, rC, rD, rS = 0, 1, 2, 3, 4, 5, 6
	a := func(i, j, grp int) jit.Mem { return g.of(lay.lu, i*n+j, grp) }
	for grp := range lay.G {
		for k := range n - 1 {
			g.ld(rP, g.of(lay.piv, k, grp))
			for i := k + 1; i < n; i++ {
				g.cmpm(rM, rP, g.c(float64(i)), cmpEQ)
				g.ld(rA, g.of(b, k, grp))
				g.ld(rB, g.of(b, i, grp))
				g.blend(rC, rA, rB, rM)
				g.blend(rD, rB, rA, rM)
				g.st(g.of(b, k, grp), rC)
				g.st(g.of(b, i, grp), rD)
			}
		}
	}
	for i := 1; i < n; i++ { // L·z = b, unit diagonal
		for grp := range lay.G {
			g.zero(rS)
			for j := range i {
				g.ld(rA, a(i, j, grp))
				g.opm(jit.OpMul, rA, rA, g.of(b, j, grp))
				g.op(jit.OpAdd, rS, rS, rA)
			}
			g.ld(rB, g.of(b, i, grp))
			g.op(jit.OpSub, rB, rB, rS)
			g.st(g.of(b, i, grp), rB)
		}
	}
	for i := n - 1; i >= 0; i-- { // U·x = z
		for grp := range lay.G {
			g.zero(rS)
			for j := i + 1; j < n; j++ {
				g.ld(rA, a(i, j, grp))
				g.opm(jit.OpMul, rA, rA, g.of(b, j, grp))
				g.op(jit.OpAdd, rS, rS, rA)
			}
			g.ld(rB, g.of(b, i, grp))
			g.op(jit.OpSub, rB, rB, rS)
			g.opm(jit.OpMul, rB, rB, g.of(lay.inv, i, grp))
			g.st(g.of(b, i, grp), rB)
		}
	}
}

// combine is combineInto for every lane: dst = base + Σ w_j·k_j over
// the nonzero weights; with base nil, the sum from +0 (the error
// vector, which attempt clears first).
func (g *laneGen) combine(dst laneArray, base *laneArray, w []float64) {
	g.combineAt(dst, 0, base, 0, w, g.lay.k)
}

// combineAt is combine into values off… of dst, from values boff… of
// base, of the increments v (a column's L_c): dst[off+d] = base[boff+d]
// + Σ w_j·v_j[d].
func (g *laneGen) combineAt(dst laneArray, off int, base *laneArray, boff int, w []float64, v []laneArray) {
	lay := g.lay
	for d := range lay.dim {
		for grp := range lay.G {
			if base != nil {
				g.ld(0, g.of(*base, boff+d, grp))
			} else {
				g.zero(0)
			}
			for j, c := range w {
				if c != 0 {
					g.ld(1, g.of(v[j], d, grp))
					g.opm(jit.OpMul, 1, 1, g.c(c))
					g.op(jit.OpAdd, 0, 0, 1)
				}
			}
			g.st(g.of(dst, off+d, grp), 0)
		}
	}
}

// matVec is matVec for every lane: dst = a·x, each row's sum from +0 in
// the order of its columns.
func (g *laneGen) matVec(dst, a, x laneArray) {
	lay, n := g.lay, g.lay.dim
	for r := range n {
		for grp := range lay.G {
			g.zero(0)
			for j := range n {
				g.ld(1, g.of(a, r*n+j, grp))
				g.opm(jit.OpMul, 1, 1, g.of(x, j, grp))
				g.op(jit.OpAdd, 0, 0, 1)
			}
			g.st(g.of(dst, r, grp), 0)
		}
	}
}

// increment writes K_i before its solve: h·f_i + h·J·ΣΓK (h·f_i where
// no Γ_ij is nonzero), plus h²·d_i·f_t where d_i ≠ 0, as genericStages
// does; then solves for it.
func (g *laneGen) increment(tb *method.Rosenbrock, i int) {
	lay, n := g.lay, g.lay.dim
	gam := tb.GammaOff[i]
	anyG := false
	for _, c := range gam {
		anyG = anyG || c != 0
	}
	if anyG {
		// acc = Σ Γ_ij·K_j from the first nonzero term (gammaSum).
		for d := range n {
			for grp := range lay.G {
				first := true
				for j, c := range gam {
					if c == 0 {
						continue
					}
					if first {
						g.ld(0, g.of(lay.k[j], d, grp))
						g.opm(jit.OpMul, 0, 0, g.c(c))
						first = false
						continue
					}
					g.ld(1, g.of(lay.k[j], d, grp))
					g.opm(jit.OpMul, 1, 1, g.c(c))
					g.op(jit.OpAdd, 0, 0, 1)
				}
				g.st(g.of(lay.acc, d, grp), 0)
			}
		}
		g.matVec(lay.jv, lay.jac, lay.acc) // jv = J·acc
	}
	fs := lay.fs[i]
	if i == 0 {
		fs = lay.f0
	}
	di := tb.D[i]
	for d := range n {
		for grp := range lay.G {
			g.ld(2, g.of(lay.h, 0, grp))
			g.opm(jit.OpMul, 0, 2, g.of(fs, d, grp)) // h·f
			if anyG {
				g.opm(jit.OpMul, 1, 2, g.of(lay.jv, d, grp))
				g.op(jit.OpAdd, 0, 0, 1)
			}
			if di != 0 {
				g.op(jit.OpMul, 3, 2, 2)        // h² = h·h
				g.opm(jit.OpMul, 3, 3, g.c(di)) // h²·d_i
				g.opm(jit.OpMul, 1, 3, g.of(lay.ft, d, grp))
				g.op(jit.OpAdd, 0, 0, 1)
			}
			g.st(g.of(lay.k[i], d, grp), 0)
		}
	}
	g.solve(lay.k[i])
}

// columnMemory is columnStage with the stages in memory (after
// increment, for systems above regMaxDim components): genericStages's
// column loop for every lane, array by array, with the operations and
// the order of the scalar solver's. For each column c, with G_ci (the
// tangent at the stage's input, from Go) in g[c]:
//
//	accL = ΣΓK + γ·K_i             (ΣΓK in acc; +0 where no Γ_ij is)
//	jv   = M_c·accL                (matVec)
//	L_ci = h·G_ci + h·jv
//	accL = ΣΓL_c, jv = J·accL, L_ci += h·jv   (where some Γ_ij is not 0)
//	L_ci += (h·h·d_i)·∂_t(tangent)            (where d_i ≠ 0)
//
// then W·L_ci = … by the stage's solve, and the column's next stage
// input sIn[c] = S_c + Σ α·L_c (or its part of the proposal).
func (g *laneGen) columnMemory(tb *method.Rosenbrock, i int) {
	lay, n, s := g.lay, g.lay.dim, tb.Stages()
	gam := tb.GammaOff[i]
	anyG := anyNonzero(gam)
	di := tb.D[i]
	for c := range lay.ns {
		lc := lay.l[c]
		li := lc[i]
		for d := range n {
			for grp := range lay.G {
				if anyG {
					g.ld(0, g.of(lay.acc, d, grp))
				} else {
					g.zero(0)
				}
				g.ld(1, g.of(lay.k[i], d, grp))
				g.opm(jit.OpMul, 1, 1, g.c(tb.Gamma)) // γ·K_i
				g.op(jit.OpAdd, 0, 0, 1)
				g.st(g.of(lay.accL, d, grp), 0)
			}
		}
		g.matVec(lay.jv, lay.mc[c], lay.accL)
		for d := range n {
			for grp := range lay.G {
				g.ld(2, g.h(grp))
				g.opm(jit.OpMul, 0, 2, g.of(lay.g[c], d, grp)) // h·G
				g.opm(jit.OpMul, 1, 2, g.of(lay.jv, d, grp))   // h·(M_c·accL)
				g.op(jit.OpAdd, 0, 0, 1)
				g.st(g.of(li, d, grp), 0)
			}
		}
		if anyG {
			for d := range n {
				for grp := range lay.G {
					g.gammaSum(0, gam, lc, d, grp)
					g.st(g.of(lay.accL, d, grp), 0)
				}
			}
			g.matVec(lay.jv, lay.jac, lay.accL)
			for d := range n {
				for grp := range lay.G {
					g.ld(0, g.of(li, d, grp))
					g.ld(2, g.h(grp))
					g.opm(jit.OpMul, 1, 2, g.of(lay.jv, d, grp)) // h·(J·ΣΓL_c)
					g.op(jit.OpAdd, 0, 0, 1)
					g.st(g.of(li, d, grp), 0)
				}
			}
		}
		if di != 0 {
			for d := range n {
				for grp := range lay.G {
					g.ld(2, g.h(grp))
					g.op(jit.OpMul, 3, 2, 2)        // h² = h·h
					g.opm(jit.OpMul, 3, 3, g.c(di)) // h²·d_i
					g.opm(jit.OpMul, 1, 3, g.of(lay.ftc[c], d, grp))
					g.ld(0, g.of(li, d, grp))
					g.op(jit.OpAdd, 0, 0, 1)
					g.st(g.of(li, d, grp), 0)
				}
			}
		}
		g.solve(li)
		col := n * (1 + c) // the column's first value in y and y1
		if i+1 < s {
			g.combineAt(lay.sIn[c], 0, &lay.y, col, tb.Alpha[i+1], lc)
		} else {
			g.combineAt(lay.y1, col, &lay.y, col, tb.M, lc)
		}
	}
}

// regMaxDim is the largest system whose stages run in registers
// (stageRegs): the increment's values of one group, and four more.
const regMaxDim = 12

// The shared registers of stageRegs, after the increments' values.
const (
	rgX = 12 // scratch: the swap, h²·d_i
	rgA = 13 // a value of ΣΓK, then a solve's sums
	rgT = 14 // scratch
	rgZ = 15 // zero
)

// mov emits vmovapd dst, src.
func (g *laneGen) mov(dst, src byte) { g.op(jit.OpMov, dst, 0, src) }

// stageRegs is increment followed by the next stage's input (or the
// proposal and the error vector after the last stage), for systems of
// at most regMaxDim components, with the increments in registers: as
// many groups at once as their values fit in twelve registers, each
// statement emitted for each of them in turn, so that the processor
// overlaps the groups' chains (the scratch registers they share are
// renamed). J·ΣΓK is summed column by column as each value of ΣΓK is
// formed (each row's terms still in matVec's order), the solve works on
// the registers, and the sums that follow read K_i from them. The
// operations and their order are increment's, solve's and combine's.
// With sensitivity columns ΣΓK is also stored (acc), for columnStage.
func (g *laneGen) stageRegs(tb *method.Rosenbrock, i int) {
	lay, n, s := g.lay, g.lay.dim, tb.Stages()
	gam := tb.GammaOff[i]
	anyG := anyNonzero(gam)
	fs := lay.fs[i]
	if i == 0 {
		fs = lay.f0
	}
	g.zero(rgZ)
	for _, grps := range g.chunks() {
		each := func(f func(grp int, b byte)) { eachGroup(grps, n, f) }
		if anyG {
			for d := range n {
				each(func(grp int, b byte) {
					g.gammaSum(rgA, gam, lay.k, d, grp)
					if lay.ns > 0 {
						g.st(g.of(lay.acc, d, grp), rgA)
					}
					g.matCol(b, rgA, lay.jac, d, grp)
				})
			}
			each(func(grp int, b byte) {
				for r := range n {
					g.opm(jit.OpMul, b+byte(r), b+byte(r), g.h(grp)) // h·(J·ΣΓK)
					g.ld(rgT, g.h(grp))
					g.opm(jit.OpMul, rgT, rgT, g.of(fs, r, grp)) // h·f
					g.op(jit.OpAdd, b+byte(r), rgT, b+byte(r))
				}
			})
		} else {
			each(func(grp int, b byte) {
				g.ld(rgT, g.h(grp))
				for r := range n {
					g.opm(jit.OpMul, b+byte(r), rgT, g.of(fs, r, grp))
				}
			})
		}
		g.dTerm(grps, tb.D[i], lay.ft)
		g.solveRegs(grps)
		each(func(grp int, b byte) {
			for r := range n {
				g.st(g.of(lay.k[i], r, grp), b+byte(r))
			}
		})
		if i+1 < s {
			g.sumRegs(grps, lay.yt, 0, &lay.y, 0, tb.Alpha[i+1], lay.k, i)
		} else {
			g.sumRegs(grps, lay.y1, 0, &lay.y, 0, tb.M, lay.k, i)
			g.sumRegs(grps, lay.ev, 0, nil, 0, tb.E, lay.k, i)
		}
	}
}

// columnStage is stageRegs for each sensitivity column c, after the
// state's stage (genericStages's column loop): with S_c the column's
// values in y and L_c its increments,
//
//	W·L_ci = h·G_ci + h·M_c·(ΣΓK + γ·K_i) + h·J·ΣΓL_c + h²·d_i·∂_t(tangent)
//
// where G_ci (the tangent at the stage's input, from Go) is in g[c],
// then the column's next stage input sIn[c] = S_c + Σ α·L_c (or its
// part of the proposal).
func (g *laneGen) columnStage(tb *method.Rosenbrock, i int) {
	lay, n, s := g.lay, g.lay.dim, tb.Stages()
	gam := tb.GammaOff[i]
	anyG := anyNonzero(gam)
	g.zero(rgZ)
	for _, grps := range g.chunks() {
		each := func(f func(grp int, b byte)) { eachGroup(grps, n, f) }
		for c := range lay.ns {
			lc := lay.l[c]
			if anyG {
				// J·ΣΓL_c, kept in jv.
				for d := range n {
					each(func(grp int, b byte) {
						g.gammaSum(rgA, gam, lc, d, grp)
						g.matCol(b, rgA, lay.jac, d, grp)
					})
				}
				each(func(grp int, b byte) {
					for r := range n {
						g.st(g.of(lay.jv, r, grp), b+byte(r))
					}
				})
			}
			// M_c·(ΣΓK + γ·K_i): ΣΓK is zero where no Γ_ij is.
			for d := range n {
				each(func(grp int, b byte) {
					if anyG {
						g.ld(rgA, g.of(lay.acc, d, grp))
					} else {
						g.mov(rgA, rgZ)
					}
					g.ld(rgT, g.of(lay.k[i], d, grp))
					g.opm(jit.OpMul, rgT, rgT, g.c(tb.Gamma))
					g.op(jit.OpAdd, rgA, rgA, rgT)
					g.matCol(b, rgA, lay.mc[c], d, grp)
				})
			}
			each(func(grp int, b byte) {
				for r := range n {
					g.opm(jit.OpMul, b+byte(r), b+byte(r), g.h(grp)) // h·(M_c·…)
					g.ld(rgT, g.h(grp))
					g.opm(jit.OpMul, rgT, rgT, g.of(lay.g[c], r, grp)) // h·G
					g.op(jit.OpAdd, b+byte(r), rgT, b+byte(r))
					if anyG {
						g.ld(rgT, g.h(grp))
						g.opm(jit.OpMul, rgT, rgT, g.of(lay.jv, r, grp)) // h·J·ΣΓL
						g.op(jit.OpAdd, b+byte(r), b+byte(r), rgT)
					}
				}
			})
			g.dTerm(grps, tb.D[i], lay.ftc[c])
			g.solveRegs(grps)
			each(func(grp int, b byte) {
				for r := range n {
					g.st(g.of(lc[i], r, grp), b+byte(r))
				}
			})
			col := n * (1 + c) // the column's first value in y and y1
			if i+1 < s {
				g.sumRegs(grps, lay.sIn[c], 0, &lay.y, col, tb.Alpha[i+1], lc, i)
			} else {
				g.sumRegs(grps, lay.y1, col, &lay.y, col, tb.M, lc, i)
			}
		}
	}
}

// anyNonzero reports whether some value of w is not zero.
func anyNonzero(w []float64) bool {
	for _, c := range w {
		if c != 0 {
			return true
		}
	}
	return false
}

// chunks returns the groups in the chunks stageRegs runs at once.
func (g *laneGen) chunks() [][]int {
	at := max(1, regMaxDim/g.lay.dim)
	var out [][]int
	for g0 := 0; g0 < g.lay.G; g0 += at {
		var grps []int
		for grp := g0; grp < min(g0+at, g.lay.G); grp++ {
			grps = append(grps, grp)
		}
		out = append(out, grps)
	}
	return out
}

// eachGroup runs f for every group of a chunk, with the group and the
// base of its registers (value r of n in register base+r).
func eachGroup(grps []int, n int, f func(grp int, b byte)) {
	for q, grp := range grps {
		f(grp, byte(q*n))
	}
}

// h returns the operand of group grp's step sizes.
func (g *laneGen) h(grp int) jit.Mem { return g.of(g.lay.h, 0, grp) }

// gammaSum sets register dst to Σ_j Γ_j·v_j[d] from the first nonzero
// term (gammaSum's order); w has a nonzero value.
func (g *laneGen) gammaSum(dst byte, w []float64, v []laneArray, d, grp int) {
	first := true
	for j, c := range w {
		if c == 0 {
			continue
		}
		if first {
			g.ld(dst, g.of(v[j], d, grp))
			g.opm(jit.OpMul, dst, dst, g.c(c))
			first = false
			continue
		}
		g.ld(rgT, g.of(v[j], d, grp))
		g.opm(jit.OpMul, rgT, rgT, g.c(c))
		g.op(jit.OpAdd, dst, dst, rgT)
	}
}

// matCol adds column d of the n×n matrix a times register x into the
// registers b…b+n−1 (the first column starts each row's sum from +0),
// so that column by column each row is matVec's sum.
func (g *laneGen) matCol(b, x byte, a laneArray, d, grp int) {
	n := g.lay.dim
	for r := range n {
		g.opm(jit.OpMul, rgT, x, g.of(a, r*n+d, grp))
		if d == 0 {
			g.op(jit.OpAdd, b+byte(r), rgZ, rgT)
		} else {
			g.op(jit.OpAdd, b+byte(r), b+byte(r), rgT)
		}
	}
}

// dTerm adds (h²·d_i)·ft to the registers where d_i ≠ 0.
func (g *laneGen) dTerm(grps []int, di float64, ft laneArray) {
	if di == 0 {
		return
	}
	n := g.lay.dim
	eachGroup(grps, n, func(grp int, b byte) {
		g.ld(rgX, g.h(grp))
		g.opm(jit.OpMul, rgX, rgX, g.h(grp))
		g.opm(jit.OpMul, rgX, rgX, g.c(di)) // h²·d_i
		for r := range n {
			g.opm(jit.OpMul, rgT, rgX, g.of(ft, r, grp))
			g.op(jit.OpAdd, b+byte(r), b+byte(r), rgT)
		}
	})
}

// solveRegs is solve on the registers of each group of the chunk.
func (g *laneGen) solveRegs(grps []int) {
	lay, n := g.lay, g.lay.dim
	lu := func(r, c, grp int) jit.Mem { return g.of(lay.lu, r*n+c, grp) }
	each := func(f func(grp int, b byte)) { eachGroup(grps, n, f) }
	ks := make([]int, 0, n)
	for k := range n - 1 {
		ks = append(ks, k)
	}
	g.swapRegs(grps, ks)
	for r := 1; r < n; r++ {
		each(func(grp int, b byte) {
			sum := g.dot(b, 0, r, func(j int) jit.Mem { return lu(r, j, grp) })
			g.op(jit.OpSub, b+byte(r), b+byte(r), sum)
		})
	}
	for r := n - 1; r >= 0; r-- {
		each(func(grp int, b byte) {
			sum := g.dot(b, r+1, n, func(j int) jit.Mem { return lu(r, j, grp) })
			g.op(jit.OpSub, b+byte(r), b+byte(r), sum)
			g.opm(jit.OpMul, b+byte(r), b+byte(r), g.of(lay.inv, r, grp))
		})
	}
}

// dot sums registers b+j times the operands a(j), j from lo to hi − 1,
// from +0 (a solve's row sum, in its order), and returns the register
// that holds the sum: rgA, or rgZ (zero) for an empty range.
func (g *laneGen) dot(b byte, lo, hi int, a func(j int) jit.Mem) byte {
	if lo >= hi {
		return rgZ
	}
	for j := lo; j < hi; j++ {
		g.opm(jit.OpMul, rgT, b+byte(j), a(j))
		if j == lo {
			g.op(jit.OpAdd, rgA, rgZ, rgT)
		} else {
			g.op(jit.OpAdd, rgA, rgA, rgT)
		}
	}
	return rgA
}

// swapRegs exchanges, for k from each of ks in turn, registers b+k and
// b+r (r > k) in the lanes whose pivot row for k is r (piv), as a
// solve's row exchanges.
func (g *laneGen) swapRegs(grps []int, ks []int) {
	lay, n := g.lay, g.lay.dim
	for _, k := range ks {
		eachGroup(grps, n, func(grp int, b byte) {
			g.ld(rgA, g.of(lay.piv, k, grp))
			for r := k + 1; r < n; r++ {
				g.cmpm(rgT, rgA, g.c(float64(r)), cmpEQ)
				g.blend(rgX, b+byte(k), b+byte(r), rgT)
				g.blend(b+byte(r), b+byte(r), b+byte(k), rgT)
				g.mov(b+byte(k), rgX)
			}
		})
	}
}

// sumRegs writes dst[off+d] = base[boff+d] + Σ_j w_j·v_j[d] (from +0
// where base is nil), combine's sum, with v_i from the registers.
func (g *laneGen) sumRegs(grps []int, dst laneArray, off int, base *laneArray, boff int, w []float64, v []laneArray, i int) {
	n := g.lay.dim
	for d := range n {
		eachGroup(grps, n, func(grp int, b byte) {
			if base != nil {
				g.ld(rgA, g.of(*base, boff+d, grp))
			} else {
				g.mov(rgA, rgZ)
			}
			for j, c := range w {
				if c == 0 {
					continue
				}
				if j == i {
					g.opm(jit.OpMul, rgT, b+byte(d), g.c(c))
				} else {
					g.ld(rgT, g.of(v[j], d, grp))
					g.opm(jit.OpMul, rgT, rgT, g.c(c))
				}
				g.op(jit.OpAdd, rgA, rgA, rgT)
			}
			g.st(g.of(dst, off+d, grp), rgA)
		})
	}
}

// memoryStages makes every system's stages run from memory (increment,
// columnMemory and combine) as those above regMaxDim do: the tests set
// it to check that form on small systems too.
var memoryStages = false

// laneKey identifies generated code: the tableau by the bits of its
// coefficients, and the shape.
type laneKey struct {
	coefs             string
	dim, m, lanes, ns int
	memory            bool   // memoryStages
	body              string // f's body in the code, or ""
	fileLen           int    // its register file's length
	jbody             string // the tangent program's body (with columns), or ""
	jfileLen          int
}

var (
	laneMu    sync.Mutex
	laneCache = map[laneKey]*laneCode{}
)

// The code is kept for the process's life (laneCache), one per tableau,
// shape and f body, as erk's stage code is.

// laneCodeFor returns the attempt code of tb for dim components, m
// parameters and L lanes (a multiple of ode.LaneWidth), with f's body
// k copied in where k is not nil — and with ns sensitivity columns the
// tangent program's body jk too (both or neither) — building it on first
// use; nil where the processor has no AVX2, the code would pass
// laneMaxCode, or it cannot be made executable.
func laneCodeFor(tb *method.Rosenbrock, dim, m, L, ns int, k, jk *ode.LaneKernel) *laneCode {
	if ns == 0 {
		jk = nil
	}
	if ns > 0 && (k == nil) != (jk == nil) {
		return nil // columns: f and the tangents both in the code, or both from Go
	}
	est := bodiesEstimate(tb, dim, ns, L, k, jk)
	var body, jbody []byte
	fileLen, jfileLen := 0, 0
	if k != nil {
		body = k.Body
		fileLen = len(k.Registers())
	}
	if jk != nil {
		jbody = jk.Body
		jfileLen = len(jk.Registers())
	}
	if !jit.HasAVX2() || L%ode.LaneWidth != 0 || est > laneMaxCode {
		return nil
	}
	var key strings.Builder
	key.WriteString(tb.Name)
	for _, c := range kernelgen.Rosenbrock(tb) {
		key.WriteString(" " + strconv.FormatUint(math.Float64bits(c), 16))
	}
	ck := laneKey{key.String(), dim, m, L, ns, memoryStages, string(body), fileLen, string(jbody), jfileLen}
	laneMu.Lock()
	defer laneMu.Unlock()
	if c, ok := laneCache[ck]; ok {
		return c
	}
	c, err := buildLaneCode(tb, dim, m, L, ns, body, fileLen, jbody, jfileLen)
	if err != nil {
		c = nil
	}
	laneCache[ck] = c
	return c
}

// laneCodeEstimate returns an upper bound of the size in bytes of the
// attempt code of tb for dim components, ns sensitivity columns and L
// lanes, without f's body: per group of ode.LaneWidth lanes, 38·Dim³
// for W and its LU (unrolled: Dim³/2 row exchanges and Dim³/3
// eliminations, about 7.5 bytes an instruction), and for every stage,
// for the state and for each column, 85 and 96·Dim² + 700 and 400·Dim
// for the products with J (and M_c), the solve and the sums. The
// coefficients lie a few percent above the code's measured sizes, both
// forms, both tableaus, Dim 1–32, NS 0–5 (TestLaneCodeEstimate).
func laneCodeEstimate(tb *method.Rosenbrock, dim, ns, L int) int {
	n, s := dim, tb.Stages()
	per := 38*n*n*n + s*n*n*(85+96*ns) + s*n*(700+400*ns) + 2000
	return per * (L / ode.LaneWidth)
}

// bodiesEstimate is laneCodeEstimate with f's body k and the tangent
// program's jk (either may be nil) copied in at every stage, for every
// group (and column).
func bodiesEstimate(tb *method.Rosenbrock, dim, ns, L int, k, jk *ode.LaneKernel) int {
	est := laneCodeEstimate(tb, dim, ns, L)
	if k != nil {
		est += tb.Stages() * L / ode.LaneWidth * (len(k.Body) + 64)
	}
	if jk != nil {
		est += tb.Stages() * ns * L / ode.LaneWidth * (len(jk.Body) + 96)
	}
	return est
}

// LaneCodeFits reports whether the lane attempt of tb for dim
// components with ns forward-sensitivity columns on L lanes stays
// within the bound on its generated code (laneMaxCode: 2 MiB; the LU is
// unrolled, so the code grows as Dim³, and each column adds its stages).
// Where it does (and the processor has AVX2, L a multiple of
// ode.LaneWidth), LaneSolver's attempts run as machine code; beyond it
// each lane runs on a scalar Solver, with the same bits, one trajectory
// at a time.
func LaneCodeFits(tb *method.Rosenbrock, dim, ns, L int) bool {
	return L > 0 && L%ode.LaneWidth == 0 && dim > 0 && ns >= 0 && laneCodeEstimate(tb, dim, ns, L) <= laneMaxCode
}

// buildLaneCode generates the pieces of an attempt (laneCode), or with
// f's body (and with sensitivity columns the tangent program's, jbody)
// the whole attempt.
func buildLaneCode(tb *method.Rosenbrock, dim, m, L, ns int, body []byte, fileLen int, jbody []byte, jfileLen int) (*laneCode, error) {
	s := tb.Stages()
	g := &laneGen{lay: newLaneLayout(dim, s, m, L, fileLen, ns, jfileLen), cidx: map[uint64]int{}}
	lay := g.lay
	fused := body != nil
	var offs []int
	for i := range s {
		if i == 0 || !fused {
			offs = append(offs, len(g.a.B))
			g.begin()
		}
		if i == 0 && fused && ns > 0 {
			g.tangents(jbody, tb.C[0], 0) // at (t, y) and S_c themselves
		}
		if i == 0 {
			switch {
			case tb.FSAL():
				g.advance(lay.fs[s-1])
			case fused:
				g.f(body, 0, -1) // f at (t, y): into fadv
				g.advance(lay.fadv)
			default:
				g.advance(lay.fadv) // (Go evaluated it)
			}
			g.formW(tb.Gamma)
			g.factor()
		}
		switch {
		case dim <= regMaxDim && !memoryStages:
			g.stageRegs(tb, i)
			if ns > 0 {
				g.columnStage(tb, i)
			}
		default:
			g.increment(tb, i)
			if ns > 0 {
				g.columnMemory(tb, i)
			}
			if i+1 < s {
				g.combine(lay.yt, &lay.y, tb.Alpha[i+1])
			} else {
				g.combine(lay.y1, &lay.y, tb.M)
				g.combine(lay.ev, nil, tb.E)
			}
		}
		if fused && i+1 < s {
			g.f(body, tb.C[i+1], i+1)
			if ns > 0 {
				g.tangents(jbody, tb.C[i+1], i+1)
			}
			continue
		}
		if i+1 == s {
			g.norm()
		}
		g.end()
	}
	lay.size = lay.consts + len(g.consts)*ode.LaneWidth
	code, err := jit.NewCode(g.a.B)
	if err != nil {
		return nil, err
	}
	code.Name(len(g.a.B), "ros.attempt", nil)
	lc := &laneCode{code: code, consts: g.consts, lay: g.lay, size: len(g.a.B), fused: fused}
	if fused {
		lc.body = withoutReturn(g.a.B)
	}
	for _, o := range offs {
		lc.entries = append(lc.entries, code.Addr(o))
	}
	return lc, nil
}

// advance makes src f0 in the lanes whose step moved on (the mask
// moved), as stepper.Advance does: the last stage's f for an FSAL
// method, else f at the new (t, y) (fadv).
func (g *laneGen) advance(src laneArray) {
	lay := g.lay
	for grp := range lay.G {
		g.ld(0, g.of(lay.moved, 0, grp))
		for d := range lay.dim {
			g.ld(1, g.of(lay.f0, d, grp))
			g.ld(2, g.of(src, d, grp))
			g.blend(1, 1, 2, 0)
			g.st(g.of(lay.f0, d, grp), 1)
		}
	}
}

// norm writes each lane's error norm into err, with Norm.Of's
// operations in Norm.Of's order for h = 1 (the increments include h):
// sqrt(Σ r²/n) over the state with r = (1·e)/(atol + rtol·MaxAbs(y,
// y1)), or +Inf where the norm or a value of the lane's y1 (its
// sensitivity columns included) is not finite.
func (g *laneGen) norm() {
	lay, n := g.lay, g.lay.dim
	const rS, rF, rA, rB, rM, rN, rR = 0, 1, 2, 3, 4, 5, 6
	const cmpUnord = 0x03
	for grp := range lay.G {
		g.zero(rS)
		g.zero(rF)
		for d := range n {
			g.ld(rA, g.of(lay.y, d, grp))
			g.opm(jit.OpAnd, rA, rA, g.cbits(absBits))
			g.ld(rB, g.of(lay.y1, d, grp))
			g.opm(jit.OpAnd, rB, rB, g.cbits(absBits))
			g.cmp(rM, rB, rA, cmpGT)
			g.cmp(rN, rB, rB, cmpUnord)
			g.op(jit.OpOr, rM, rM, rN)
			g.blend(rA, rA, rB, rM) // MaxAbs(y, y1)
			g.opm(jit.OpMul, rA, rA, g.of(lay.rtol, d, grp))
			g.opm(jit.OpAdd, rA, rA, g.of(lay.atol, d, grp)) // the scale
			g.ld(rR, g.of(lay.ev, d, grp))
			g.opm(jit.OpMul, rR, rR, g.c(1))
			g.op(jit.OpDiv, rR, rR, rA)
			g.op(jit.OpMul, rR, rR, rR)
			g.op(jit.OpAdd, rS, rS, rR)
			g.ld(rB, g.of(lay.y1, d, grp))
			g.op(jit.OpSub, rB, rB, rB) // 0 if finite, NaN otherwise
			g.op(jit.OpAdd, rF, rF, rB)
		}
		for d := n; d < lay.y1.n; d++ { // the sensitivity columns: finite or not
			g.ld(rB, g.of(lay.y1, d, grp))
			g.op(jit.OpSub, rB, rB, rB)
			g.op(jit.OpAdd, rF, rF, rB)
		}
		g.opm(jit.OpDiv, rS, rS, g.c(float64(n)))
		g.op(jit.OpSqrt, rS, 0, rS)
		g.op(jit.OpSub, rA, rS, rS)
		g.op(jit.OpAdd, rA, rF, rA) // fin + (err − err)
		g.zero(rB)
		g.cmp(rM, rA, rB, cmpEQ) // usable
		g.op(jit.OpAnd, rS, rS, rM)
		g.ld(rA, g.c(math.Inf(1)))
		g.op(jit.OpAndN, rA, rM, rA) // +Inf where not usable
		g.op(jit.OpOr, rS, rS, rA)
		g.st(g.of(lay.err, 0, grp), rS)
	}
}

// f emits f's body for every group at the stage time t + c·h (the
// scalar solver's t + float64(c·h)) of the input yt, into stage j's
// fs — or with j < 0 at (t, y) into fadv — under ode.LaneKernel's
// contract: the group's register file in DI
// (the lanes' times in its first values), yt in SI, p in DX, the output
// in R11 (and CX); the body keeps AX, the arena's address.
func (g *laneGen) f(body []byte, c float64, j int) {
	lay := g.lay
	const W = ode.LaneWidth
	in, out := lay.yt, lay.fadv
	if j >= 0 {
		out = lay.fs[j]
	}
	for grp := range lay.G {
		file := g.mem(lay.files + grp*lay.fileLen)
		g.ld(0, g.of(lay.t, 0, grp))
		if j >= 0 {
			g.ld(1, g.of(lay.h, 0, grp))
			g.opm(jit.OpMul, 1, 1, g.c(c))
			g.op(jit.OpAdd, 0, 0, 1) // t + c·h
		} else {
			in = lay.y // f at (t, y) itself
		}
		g.st(file, 0)
		g.a.Lea(jit.DI, file)
		g.a.Lea(jit.SI, g.mem(in.off+grp*in.n*W))
		g.a.Lea(jit.DX, g.mem(lay.p.off+grp*lay.p.n*W))
		g.a.Lea(jit.R11, g.mem(out.off+grp*out.n*W))
		g.a.MovRR(jit.CX, jit.R11)
		g.a.B = append(g.a.B, body...)
	}
}

// tangents emits the tangent program's body for every column and group
// at stage i: J·v + J_p·w_c at the stage time t + c·h (the scalar
// solver's t + float64(c·h)) and the stage's input — at stage 0 the
// state y and the column S_c themselves, else yt and the column's stage
// input sIn[c] — into g[c], as LaneSolver.tangents computes them from
// Go: under ode.LaneKernel's contract, the group's register file in DI
// (the times in its first values), y in SI, p in DX, v in R8, w (wc[c])
// in R9, the output in R11 (and CX).
func (g *laneGen) tangents(body []byte, c float64, i int) {
	lay := g.lay
	const W = ode.LaneWidth
	n := lay.dim
	for col := range lay.ns {
		for grp := range lay.G {
			file := g.mem(lay.jfiles + grp*lay.jfileLen)
			g.ld(0, g.of(lay.t, 0, grp))
			g.ld(1, g.of(lay.h, 0, grp))
			g.opm(jit.OpMul, 1, 1, g.c(c))
			g.op(jit.OpAdd, 0, 0, 1) // t + c·h
			g.st(file, 0)
			g.a.Lea(jit.DI, file)
			if i == 0 {
				b := lay.y.off + grp*lay.y.n*W
				g.a.Lea(jit.SI, g.mem(b))
				g.a.Lea(jit.R8, g.mem(b+n*(1+col)*W))
			} else {
				g.a.Lea(jit.SI, g.mem(lay.yt.off+grp*lay.yt.n*W))
				g.a.Lea(jit.R8, g.mem(lay.sIn[col].off+grp*lay.sIn[col].n*W))
			}
			g.a.Lea(jit.DX, g.mem(lay.p.off+grp*lay.p.n*W))
			g.a.Lea(jit.R9, g.mem(lay.wc[col].off+grp*lay.wc[col].n*W))
			out := lay.g[col]
			g.a.Lea(jit.R11, g.mem(out.off+grp*out.n*W))
			g.a.MovRR(jit.CX, jit.R11)
			g.a.B = append(g.a.B, body...)
		}
	}
}
