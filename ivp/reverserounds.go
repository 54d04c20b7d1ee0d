package ivp

import (
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/ode"
)

// Whole rounds of the reverse walk in machine code (as ReplayRounds is
// for the forward replay): after each fused reversed step, every lane
// whose next step is the common one — the walk not at its end, no save
// time inside the step just reversed, none owned by the next — moves to
// that step without Go: the cotangent of its end state is the start
// state's just computed (Walk.Reverse copies it, with no save cotangent
// to add), its state, time and step size come from the mesh, and the
// parameters' cotangents stay in the lanes. The other lanes come back to
// LaneWalk's Go loop, which takes their cotangents out of the lanes
// (ReverseRounder.StoreLane), runs after and prepare for them, and puts
// them back (LoadLane). The arithmetic is the fused step's, and the
// copies are exact, so the bits are Walk.Reverse's
// (TestLaneReverseMatchesScalar).

// The arrays of a ReverseRounds block, L values each.
const (
	rwActive = iota // mask: the lane holds a job
	rwK             // the step the lane reverses
	rwOwner         // the step that owns the next save time with a cotangent (−2: none)
	rwReturn        // mask: the step has save times inside it: Go completes it
	rwTP            // the address of the mesh's t of the lane's step
	rwHP            // … of its h
	rwYP            // … of its start state
	rwSlow          // mask: Go completes the lane's step
	rwArrays
)

// The code's constants, four values each, after the arrays; then a zero
// row of the state's size (the mesh an idle lane reads).
const (
	rcwZero   = iota // 0.0
	rcwOne           // 1.0
	rcwEight         // the integer 8: one value back
	rcwRow           // the integer 8·dim: one row back
	rcwRounds        // the rounds left in this call (the first value)
	rwConsts
)

// ReverseRounds is the lanes' state of a reverse walk as the machine
// code of its whole rounds reads and writes it.
type ReverseRounds struct {
	laneBlock
	dim int
	// args holds what the code loads through R15: the addresses of the
	// stepper's lane-major step start states, end-state and start-state
	// cotangents, and the lanes' times and step sizes (SetArrays).
	args [5]unsafe.Pointer
}

// ReverseRounder is a LaneReverser that runs whole rounds of the
// reverse walk as machine code.
type ReverseRounder interface {
	LaneReverser
	// BindReverseRounds builds the code of a whole round — the fused
	// reversed step of every lane, with the stages evaluated, then
	// r.EmitRest — and gives r its arrays (SetArrays), reporting
	// whether it could.
	BindReverseRounds(r *ReverseRounds) bool
	// ReverseRounds runs up to n rounds (n ≥ 1) of that code.
	ReverseRounds(n int)
	// LoadLane puts lane l's step as r holds it (Y, P, YNewBar, GP, T,
	// H) into the stepper's lanes, as ReverseSteps does before it
	// reverses the step; StoreLane takes the step's results out (YBar,
	// GP), as ReverseSteps does after.
	LoadLane(l int, r *LaneReverse)
	StoreLane(l int, r *LaneReverse)
}

// newReverseRounds returns the block of L lanes (a multiple of four) of
// states of dim values, or nil where L is not a multiple of four.
func newReverseRounds(L, dim int) *ReverseRounds {
	if L%ode.LaneWidth != 0 || !jit.HasAVX2() {
		return nil
	}
	r := &ReverseRounds{laneBlock: newLaneBlock(L, rwArrays, rwConsts, dim, rcwRounds, 0), dim: dim}
	r.setConst(rcwOne, 1)
	r.setConst(rcwEight, math.Float64frombits(8))
	r.setConst(rcwRow, math.Float64frombits(uint64(8*dim)))
	for l := range L {
		r.idle(l)
	}
	return r
}

// SetArrays gives the addresses of the stepper's lane-major step start
// states y, cotangents ynew (of the end states, read) and ybar (of the
// start states, written), and of the lanes' times t and step sizes h.
func (r *ReverseRounds) SetArrays(y, ynew, ybar, t, h unsafe.Pointer) {
	r.args = [5]unsafe.Pointer{y, ynew, ybar, t, h}
}

// Args returns the address the code expects in R15 (Base, in R14, is
// the block's).
func (r *ReverseRounds) Args() unsafe.Pointer { return unsafe.Pointer(&r.args[0]) }

// Active reports whether lane l holds a job, for the work a stepper
// does in Go between rounds (as ros's Jacobians, which have no machine
// code).
func (r *ReverseRounds) Active(l int) bool { return r.mask(rwActive, l) }

// idle points lane l, which holds no job, at the zero row.
func (r *ReverseRounds) idle(l int) {
	r.setMask(rwActive, l, false)
	z := r.tail(rwConsts, 0)
	r.setAddr(rwTP, l, z)
	r.setAddr(rwHP, l, z)
	r.setAddr(rwYP, l, z)
}

// reverseRounds is Reverse with whole rounds in machine code.
func (w *LaneWalk) reverseRounds(src ReverseSource, stop *atomic.Bool) {
	r := &w.r
	any := false
	for l := range w.lanes {
		r.Active[l] = w.fill(src, l)
		w.loadLane(l)
		any = any || r.Active[l]
	}
	n := maxRounds
	if stop != nil {
		n = 16 // the flag is polled between calls
	}
	for any {
		if stop != nil && stop.Load() {
			return
		}
		w.rr.ReverseRounds(n)
		any = false
		for l, on := range r.Active {
			if !on {
				continue
			}
			if w.rounds.mask(rwSlow, l) {
				// The step the code left to Go: its place in the mesh,
				// its results out of the lanes, then Walk.Reverse's
				// bookkeeping.
				k, ms := int(*w.rounds.at(rwK, l)), r.Mesh[l]
				r.K[l], r.T[l], r.H[l], r.Y[l] = k, ms.T[k], ms.H[k], ms.Y[k*w.dim:(k+1)*w.dim]
				w.rr.StoreLane(l, r)
				if !w.after(l) {
					src.Done(l)
					r.Active[l] = w.fill(src, l)
				}
				w.loadLane(l)
			}
			any = any || r.Active[l]
		}
	}
}

// loadLane prepares lane l's step K[l] (prepare) and puts it into the
// stepper's lanes and the block.
func (w *LaneWalk) loadLane(l int) {
	r, rb := &w.r, w.rounds
	if !r.Active[l] {
		rb.idle(l)
		return
	}
	w.prepare(l)
	w.rr.LoadLane(l, r)
	ln, ms, k := &w.lanes[l], r.Mesh[l], r.K[l]
	rb.setMask(rwActive, l, true)
	*rb.at(rwK, l) = float64(k)
	owner := -2
	if ln.job.CotSaved != nil && ln.next >= 0 {
		owner = ln.owner[ln.next]
	}
	*rb.at(rwOwner, l) = float64(owner)
	rb.setMask(rwReturn, l, len(ln.inner) > 0)
	rb.setAddr(rwTP, l, &ms.T[k])
	rb.setAddr(rwHP, l, &ms.H[k])
	rb.setAddr(rwYP, l, &ms.Y[k*w.dim])
}

// EmitRest appends to a the rest of a reverse round after the reversed
// step, whose code starts at offset loop, and the code's return (as
// LaneRounds.EmitRest): the code of the step must leave R14 = Base() and
// R15 = Args().
func (r *ReverseRounds) EmitRest(a *jit.Asm, loop int) {
	dim := r.dim
	a.VRR(bpp, bm0, true, jit.OpXor, ySlow, ySlow, ySlow)
	for i, reg := range []byte{jit.CX, jit.SI, jit.DI, jit.R8, jit.R9} { // y, ynew, ybar, t, h
		a.Load64(reg, jit.Mem{Base: rArgs, Disp: int32(8 * i)})
	}
	for grp := range r.L / 4 {
		g := blockGen{a, &r.laneBlock, grp}
		at, ld, st, rr, rc := g.lane, g.ld, g.st, g.rr, g.rc
		const act, k, next, fast, tmp, tmp2 = 0, 1, 2, 3, 4, 5
		ld(act, rwActive)
		ld(k, rwK)
		rc(jit.OpSub, next, k, rcwOne)     // k − 1
		g.cmpC(fast, next, rcwZero, cmpGE) // the walk goes on
		g.cmpM(tmp, next, rwOwner, cmpEQ)  // the next step owns a save time
		rr(jit.OpAndN, fast, tmp, fast)
		ld(tmp, rwReturn)
		rr(jit.OpAndN, fast, tmp, fast)
		rr(jit.OpAnd, fast, fast, act)
		rr(jit.OpAndN, tmp, fast, act) // Go completes the step
		st(rwSlow, tmp)
		rr(jit.OpOr, ySlow, ySlow, tmp)
		// The next step: k − 1, the addresses one value (one row) back.
		rc(jit.OpAnd, tmp, fast, rcwOne)
		rr(jit.OpSub, k, k, tmp)
		st(rwK, k)
		const psubq = 0xFB
		rc(jit.OpAnd, tmp, fast, rcwEight)
		for _, kk := range []int{rwTP, rwHP} {
			ld(tmp2, kk)
			rr(psubq, tmp2, tmp2, tmp)
			st(kk, tmp2)
		}
		rc(jit.OpAnd, tmp, fast, rcwRow)
		ld(tmp2, rwYP)
		rr(psubq, tmp2, tmp2, tmp)
		st(rwYP, tmp2)
		// The cotangent of the next step's end state: this step's of its
		// start state, where the lane goes on.
		for d := range dim {
			off := int32(8 * (grp*4*dim + 4*d))
			a.VRM(bpp, bm0, true, jit.OpLoad, tmp, 0, jit.Mem{Base: jit.SI, Disp: off})
			a.VRM(bpp, bm0, true, jit.OpLoad, tmp2, 0, jit.Mem{Base: jit.DI, Disp: off})
			a.VBlendv(tmp, tmp, tmp2, fast)
			a.VRM(bpp, bm0, true, jit.OpSt, tmp, 0, jit.Mem{Base: jit.SI, Disp: off})
		}
		// Each lane's state, time and step size from its mesh.
		for i := range 4 {
			l := 4*grp + i
			a.Load64(jit.DX, at(rwYP, l))
			for d := range dim {
				a.Load64(jit.AX, jit.Mem{Base: jit.DX, Disp: int32(8 * d)})
				a.Store64(jit.Mem{Base: jit.CX, Disp: int32(8 * (grp*4*dim + 4*d + i))}, jit.AX)
			}
			for _, kk := range [][2]byte{{rwTP, jit.R8}, {rwHP, jit.R9}} {
				a.Load64(jit.AX, at(int(kk[0]), l))
				a.Load64(jit.AX, jit.Mem{Base: jit.AX})
				a.Store64(jit.Mem{Base: kk[1], Disp: int32(8 * l)}, jit.AX)
			}
		}
	}
	r.loop(a, loop)
}
