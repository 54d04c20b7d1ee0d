package ivp

import (
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/ode"
)

// Whole rounds of the forward replay in machine code (as LaneRounds is
// for the lane driver): after each fused attempt, for every lane whose
// step is the common one — usable, not the mesh's last, no save time in
// (t, tn] that the lane computes itself (a lane whose saves are owed,
// LaneForward.fresh, has none), a mesh without stages — the code writes
// the proposal into
// the mesh's next row, moves the lane to its next recorded step (t and
// h from the mesh) and starts the next attempt itself. The other lanes
// come back to Go, which runs LaneForward's after for them. The code
// copies and compares exactly what after does, so the bits are
// Forward's (TestLaneForwardMatchesScalar).

// The arrays of a ReplayRounds block, L values each.
const (
	fwT        = iota // the lanes' times (the attempt's input)
	fwH               // their step sizes
	fwErr             // the attempts' error norms (their verdict: usable or not)
	fwMoved           // mask: the lane completes an accepted step first (the stepper's)
	fwPending         // mask: its proposal is yet to become its state (the stepper's)
	fwActive          // mask: the lane holds a job
	fwPlain           // mask: the mesh keeps no stages
	fwTP              // the address of the mesh's t of the lane's step
	fwHP              // … of its h
	fwYP              // … of the row its proposal goes to
	fwLeft            // the mesh's steps after this one
	fwK               // the steps the code took since Go last saw the lane
	fwNoSave          // mask: no save time is left
	fwNextSave        // the next save time
	fwSlow            // mask: Go completes the lane's step
	fwArrays
)

// The code's constants, four values each, after the arrays; then two
// zeros (the mesh an idle lane reads) and a scratch row of the state's
// size (where the proposal of a lane Go completes is written).
const (
	fcZero     = iota // 0.0
	fcOne             // 1.0
	fcMinusOne        // −1.0
	fcAllOnes         // all bits
	fcMaxFloat        // math.MaxFloat64
	fcEight           // the integer 8: one value on
	fcRow             // the integer 8·dim: one row on
	fcScratch         // the address of the scratch row
	fcRounds          // the rounds left in this call (the first value)
	fwConsts
)

// ReplayRounds is the lanes' state of a forward replay as the machine
// code of its whole rounds reads and writes it.
type ReplayRounds struct {
	laneBlock
	dim int
	// args holds what the code loads through R15: the address of the
	// stepper's proposals (lane-major, groups of four lanes of dim
	// values each).
	args [1]unsafe.Pointer
}

// ReplayRounder is a LaneStepper that runs whole rounds of the forward
// replay as machine code.
type ReplayRounder interface {
	LaneStepper
	// BindReplayRounds makes r's arrays the stepper's (T, H, Err and the
	// masks, as LaneRounder.BindRounds), tells r where its proposals
	// lie (SetProposals) and builds the code of a whole round — its
	// attempt, then r.EmitRest — reporting whether it could.
	BindReplayRounds(r *ReplayRounds) bool
	// ReplayRounds runs up to n rounds (n ≥ 1) of that code.
	ReplayRounds(n int)
}

// newReplayRounds returns the block of L lanes (a multiple of four) of
// states of dim values, or nil where L is not a multiple of four.
func newReplayRounds(L, dim int) *ReplayRounds {
	if L%ode.LaneWidth != 0 || !jit.HasAVX2() {
		return nil
	}
	r := &ReplayRounds{laneBlock: newLaneBlock(L, fwArrays, fwConsts, 2+dim, fcRounds, fwMoved), dim: dim}
	r.setConst(fcOne, 1)
	r.setConst(fcMinusOne, -1)
	r.setConst(fcMaxFloat, math.MaxFloat64)
	r.setConst(fcEight, math.Float64frombits(8))
	r.setConst(fcRow, math.Float64frombits(uint64(8*dim)))
	r.setConst(fcScratch, math.Float64frombits(uint64(uintptr(unsafe.Pointer(r.tail(fwConsts, 2))))))
	for l := range L {
		r.idle(l)
	}
	return r
}

// Args returns the address the code expects in R15 (Base, in R14, is
// the block's).
func (r *ReplayRounds) Args() unsafe.Pointer { return unsafe.Pointer(&r.args[0]) }

// SetProposals gives the address of the stepper's lane-major proposals.
func (r *ReplayRounds) SetProposals(y1 unsafe.Pointer) { r.args[0] = y1 }

// Active reports whether lane l holds a job, for the work a stepper
// does in Go between rounds (as ros's Jacobians, which have no machine
// code).
func (r *ReplayRounds) Active(l int) bool { return r.mask(fwActive, l) }

// idle points lane l, which holds no job, at the two zeros.
func (r *ReplayRounds) idle(l int) {
	r.setMask(fwActive, l, false)
	r.setAddr(fwTP, l, r.tail(fwConsts, 0))
	r.setAddr(fwHP, l, r.tail(fwConsts, 0))
}

// runRounds is Run with whole rounds in machine code.
func (w *LaneForward) runRounds(src ForwardSource, stop *atomic.Bool) {
	r, a := w.rounds, &w.a
	any := false
	for l := range w.jobs {
		a.Active[l] = w.fill(src, l)
		w.storeLane(l)
		any = any || a.Active[l]
	}
	n := maxRounds
	if stop != nil {
		n = 16 // the flag is polled between calls
	}
	for any {
		if stop != nil && stop.Load() {
			return
		}
		w.rr.ReplayRounds(n)
		any = false
		for l, on := range a.Active {
			if !on {
				continue
			}
			if r.mask(fwSlow, l) {
				w.k[l] += int(*r.at(fwK, l))
				*r.at(fwK, l) = 0
				a.OK[l] = *r.at(fwErr, l) <= math.MaxFloat64
				if !w.after(l) {
					if w.fresh != nil {
						w.owedSaves(l)
					}
					src.Done(l)
					a.Active[l] = w.fill(src, l)
				}
				w.storeLane(l)
			}
			any = any || a.Active[l]
		}
	}
}

// storeLane writes lane l's state into the block for the code.
func (w *LaneForward) storeLane(l int) {
	r := w.rounds
	if !w.a.Active[l] {
		r.idle(l)
		return
	}
	job, k, dim := w.jobs[l], w.k[l], w.dim
	ms := job.Mesh
	r.setMask(fwActive, l, true)
	r.setMask(fwPlain, l, !ms.KeepStages)
	r.setMask(fwMoved, l, w.a.Moved[l])
	*r.at(fwT, l), *r.at(fwH, l) = ms.T[k], ms.H[k]
	r.setAddr(fwTP, l, &ms.T[k])
	r.setAddr(fwHP, l, &ms.H[k])
	r.setAddr(fwYP, l, &ms.Y[(k+1)*dim])
	*r.at(fwLeft, l) = float64(len(ms.H) - k - 1)
	*r.at(fwK, l) = 0
	// A lane that owes its saves (fresh) has none left for the code.
	r.setMask(fwNoSave, l, w.fresh != nil || w.isave[l] == len(job.Save))
	if w.fresh == nil && w.isave[l] < len(job.Save) {
		*r.at(fwNextSave, l) = job.Save[w.isave[l]]
	}
}

// EmitRest appends to a the rest of a replay round after the attempt,
// whose code starts at offset loop, and the code's return (as
// LaneRounds.EmitRest): the code of the attempt must leave R14 = Base()
// and R15 = Args().
func (r *ReplayRounds) EmitRest(a *jit.Asm, loop int) {
	dim := r.dim
	a.VRR(bpp, bm0, true, jit.OpXor, ySlow, ySlow, ySlow)
	a.Load64(jit.CX, jit.Mem{Base: rArgs}) // the proposals
	// The general registers of the lanes' addresses (gather, scatter).
	p := [4]byte{jit.SI, jit.DI, jit.R8, jit.R9}
	for grp := range r.L / 4 {
		g := blockGen{a, &r.laneBlock, grp}
		ld, st, rr, rm, rc, cmpC := g.ld, g.st, g.rr, g.rm, g.rc, g.cmpC
		const act, ok, t, tn, dir, x, sv, fast, tmp, tmp2, xs = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10
		// The step's end, from the mesh.
		ld(tmp, fwTP)
		g.addrs(p, tmp, xs)
		g.gather(tn, xs, p, 8)
		g.prefetch(p, 8*prefetchSteps)
		ld(act, fwActive)
		ld(ok, fwErr)
		cmpC(ok, ok, fcMaxFloat, cmpLE) // usable
		ld(t, fwT)
		g.cmp(tmp, tn, t, cmpLT) // tn < t
		g.ldC(dir, fcOne)
		g.ldC(tmp2, fcMinusOne)
		a.VBlendv(dir, dir, tmp2, tmp) // dir
		// A save time in (t, tn]: dir·(save − tn) ≤ 0.
		ld(x, fwNextSave)
		rr(jit.OpSub, x, x, tn)
		rr(jit.OpMul, x, dir, x)
		cmpC(x, x, fcZero, cmpLE)
		rr(jit.OpAndN, sv, x, act)
		rm(jit.OpAnd, tmp, act, fwNoSave)
		rr(jit.OpOr, sv, sv, tmp) // no save time in the step
		ld(tmp, fwLeft)
		cmpC(tmp, tmp, fcZero, cmpGT) // not the mesh's last step
		rr(jit.OpAnd, fast, sv, ok)
		rr(jit.OpAnd, fast, fast, tmp)
		rm(jit.OpAnd, fast, fast, fwPlain)
		rr(jit.OpAndN, tmp, fast, act) // Go completes the step
		st(fwSlow, tmp)
		rr(jit.OpOr, ySlow, ySlow, tmp)
		// The proposals: into their rows, or the scratch row.
		g.ldC(tmp, fcScratch)
		ld(tmp2, fwYP)
		a.VBlendv(tmp, tmp, tmp2, fast)
		g.addrs(p, tmp, xs)
		g.prefetch(p, 8*dim*prefetchSteps)
		for d := range dim {
			a.VRM(bpp, bm0, true, jit.OpLoad, tmp, 0, jit.Mem{Base: jit.CX, Disp: int32(8 * (grp*4*dim + 4*d))})
			g.scatter(tmp, xs, p, int32(8*d))
		}
		// The next step: the addresses on by one value (one row), its
		// time and step size from the mesh, the counts, the masks.
		const paddq = 0xD4
		rc(jit.OpAnd, tmp, fast, fcEight)
		for _, k := range [][2]int{{fwTP, fwT}, {fwHP, fwH}} {
			rm(paddq, tmp2, tmp, k[0])
			st(k[0], tmp2)
			g.addrs(p, tmp2, xs)
			g.gather(tmp2, xs, p, 0)
			if k[0] == fwHP {
				g.prefetch(p, 8*prefetchSteps)
			}
			st(k[1], tmp2)
		}
		rc(jit.OpAnd, tmp, fast, fcRow)
		rm(paddq, tmp2, tmp, fwYP)
		st(fwYP, tmp2)
		rc(jit.OpAnd, tmp, fast, fcOne)
		rm(jit.OpAdd, tmp2, tmp, fwK)
		st(fwK, tmp2)
		ld(tmp2, fwLeft)
		rr(jit.OpSub, tmp2, tmp2, tmp)
		st(fwLeft, tmp2)
		rm(jit.OpOr, tmp, fast, fwMoved)
		st(fwMoved, tmp)
		st(fwPending, fast)
	}
	r.loop(a, loop)
}
