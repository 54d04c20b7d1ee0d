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
//
// Where the stepper takes them (ReverseRounds.SetPartials), the partial
// steps of the save times inside a step are round items of their lane
// too: Go lists them when it loads the step (the size ts − t of each
// and the address of its cotangent, in Walk.Reverse's order), and after
// the full step the lane takes one a round — the same start state and
// time, h = ts − t, the save's cotangent as that of the end state, and
// the start state's cotangent added to the one the lane holds
// (the stepper's accumulate mask) where a full step clears it first —
// before it moves to the step before. That is Walk.step's order of
// ReverseStep, then each ReversePartial, each adding into ȳ and p̄.
// Go also lists, as records, the steps before that own save times with
// cotangents, up to the first with two or more at its end: the lane
// moves to such a step in the code too, with the cotangent of its end
// state the start state's just computed plus that of the save at the
// step's end, if there is one (prepare's sum), and then takes the
// step's partial steps; the lane comes back to Go at the end of its
// walk or at a step no record lets it take.

// The arrays of a ReverseRounds block, L values each.
const (
	rwActive = iota // mask: the lane holds a job
	rwK             // the step the lane reverses
	rwOwner         // the step that owns the next save time with a cotangent (−2: none; without SetPartials)
	rwReturn        // mask: the step has save times inside it: Go completes it
	rwTP            // the address of the mesh's t of the lane's step
	rwHP            // … of its h
	rwYP            // … of its start state
	rwSlow          // mask: Go completes the lane's step
	rwNP            // the partial steps left in the lane's step (SetPartials)
	rwPP            // the address of its next partial step's entry (h, cotangent address)
	rwHQ            // the address the round's h is read from: the step's, or a partial's entry
	rwNext          // the last save time not yet reversed (laneJob.next), as the code leaves it
	rwEP            // the address of the lane's next save step's record (SetPartials)
	// The words of the record at rwEP, as the code copies them: the step
	// and the simple mask each round, the rest in a round where a lane
	// of the group needs them (EmitRest).
	rwEStep
	rwECot
	rwEEnd
	rwENP
	rwEPP
	rwENext
	rwESimple
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
	rcwEntry         // the integer 16: one partial step's entry on
	rcwRecord        // the integer 64: one save step's record on
	rwConsts
)

// The block's tail after its constants: the zero row (dim values), an
// entry of no partial step (h = 0 and the zero row's address: the
// entry a lane without partial steps points at), and the staged
// cotangents of the partial steps, lane-major (L·dim values).
const (
	rtZero = 0
)

// The words of a save step's record (ReverseRounds.SetPartials), eight
// words each: the step that owns the save times, the address of the
// cotangent of the one at its end (the zero row's for none), a mask:
// there is one, the number of partial steps, the address of their
// entries, the last save time before the step's (laneJob.next once it
// is reversed), a mask: the code takes the step (at most one save at
// its end).
const (
	evStep = iota
	evCot
	evEnd
	evNP
	evPP
	evNext
	evSimple
	evWords = 8
)

// rtEntry, rtRecord, rtStage and rtStageEnd are the offsets in the
// tail of the entry of no partial step, of the record of no save step
// (step −2), and of the staged cotangents of the partial steps and of
// the saves at a step's end (L·dim values each).
func rtEntry(dim int) int       { return dim }
func rtRecord(dim int) int      { return dim + 2 }
func rtStage(dim int) int       { return dim + 2 + evWords }
func rtStageEnd(dim, L int) int { return rtStage(dim) + L*dim }

// ReverseRounds is the lanes' state of a reverse walk as the machine
// code of its whole rounds reads and writes it.
type ReverseRounds struct {
	laneBlock
	dim int
	// args holds what the code loads through R15: the addresses of the
	// stepper's lane-major step start states, end-state and start-state
	// cotangents, and the lanes' times and step sizes (SetArrays), then
	// that of its accumulate mask (SetPartials).
	args [ReverseArgAcc + 1]unsafe.Pointer
	// partials says whether the code takes the partial steps
	// (SetPartials).
	partials bool
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
	r := &ReverseRounds{laneBlock: newLaneBlock(L, rwArrays, rwConsts, rtStageEnd(dim, L)+L*dim, rcwRounds, 0), dim: dim}
	r.setConst(rcwOne, 1)
	r.setConst(rcwEight, math.Float64frombits(8))
	r.setConst(rcwRow, math.Float64frombits(uint64(8*dim)))
	r.setConst(rcwEntry, math.Float64frombits(16))
	r.setConst(rcwRecord, math.Float64frombits(8*evWords))
	zero := addrBits(r.tail(rwConsts, rtZero))
	*r.tail(rwConsts, rtEntry(dim)+1) = zero
	rec := r.tail(rwConsts, rtRecord(dim))
	*rec = -2 // no step
	rs := unsafe.Slice(rec, evWords)
	rs[evCot], rs[evPP] = zero, addrBits(r.tail(rwConsts, rtEntry(dim)))
	for l := range L {
		r.idle(l)
	}
	return r
}

// SetArrays gives the addresses of the stepper's lane-major step start
// states y, cotangents ynew (of the end states, read) and ybar (of the
// start states, written), and of the lanes' times t and step sizes h.
func (r *ReverseRounds) SetArrays(y, ynew, ybar, t, h unsafe.Pointer) {
	r.args[0], r.args[1], r.args[2], r.args[3], r.args[4] = y, ynew, ybar, t, h
}

// SetPartials makes the partial steps of the save times inside a step
// round items of their lane, and lets the lanes move to the steps that
// own save times without Go (see above); acc is the address of the
// stepper's accumulate mask, L words the code writes after each round:
// all ones where the lane's next item is a partial step, whose
// start-state cotangent the stepper's code then adds to the one the
// lane holds (ȳ + ȳ_new where a full step has 0 + ȳ_new), else zero.
// The stepper calls it before EmitRest, and clears lane l's word in
// LoadLane.
func (r *ReverseRounds) SetPartials(acc unsafe.Pointer) {
	r.args[ReverseArgAcc], r.partials = acc, true
}

// ReverseArgAcc is the index in Args of the accumulate mask's address
// (SetPartials), for a stepper's code that reads it through R15.
const ReverseArgAcc = 5

// Partials reports whether SetPartials was called: whether the code of
// the rounds takes the partial steps (the code differs with it).
func (r *ReverseRounds) Partials() bool { return r.partials }

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
	*r.at(rwNP, l) = 0
	r.setAddr(rwPP, l, r.tail(rwConsts, rtEntry(r.dim)))
	r.setAddr(rwEP, l, r.tail(rwConsts, rtRecord(r.dim)))
}

func addrBits(p *float64) float64 { return math.Float64frombits(uint64(uintptr(unsafe.Pointer(p)))) }

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
				w.lanes[l].next = int(*w.rounds.at(rwNext, l)) // past the save steps the code took
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
	*rb.at(rwNext, l) = float64(ln.next)
	rb.setAddr(rwEP, l, rb.tail(rwConsts, rtRecord(w.dim)))
	if rb.partials {
		w.schedule(l)
	}
	rb.setMask(rwReturn, l, len(ln.inner) > 0)
	rb.setAddr(rwTP, l, &ms.T[k])
	rb.setAddr(rwHP, l, &ms.H[k])
	rb.setAddr(rwYP, l, &ms.Y[k*w.dim])
}

// schedule hands lane l's partial steps of its step K[l] to the code,
// and the save steps after it that the code takes on its own: their
// records, up to the first it does not take (two saves or more at its
// end), and their partial steps. An entry is h = ts − t, as
// ReversePartial forms it, and the cotangent's address; each step's
// entries end with the entry of none, where the lane points once it has
// taken them; after then has none left to reverse. The records are
// Walk.Reverse's bookkeeping of those steps (prepare's), done here.
func (w *LaneWalk) schedule(l int) {
	r, rb, ln, dim := &w.r, w.rounds, &w.lanes[l], w.dim
	job, ms := ln.job, r.Mesh[l]
	none := rb.tail(rwConsts, rtEntry(dim))
	noneCot := *rb.tail(rwConsts, rtEntry(dim)+1)
	zero := addrBits(rb.tail(rwConsts, rtZero))
	// At most one entry per save time and one of none per step.
	nEnts := len(ln.inner) + 1
	if job.CotSaved != nil {
		nEnts += 2 * (ln.next + 1)
	}
	if cap(ln.ents) < 2*nEnts {
		ln.ents = make([]float64, 2*nEnts)
	}
	ln.ents = ln.ents[:2*nEnts]
	ents := ln.ents[:0]
	entry := func(h float64, cot []float64) {
		ents = append(ents, h, math.Float64frombits(uint64(uintptr(unsafe.Pointer(&cot[0])))))
	}
	for _, sc := range ln.inner {
		entry(sc.T-r.T[l], sc.Cot)
	}
	ents = append(ents, *none, noneCot)
	*rb.at(rwNP, l) = float64(len(ln.inner))
	rb.setAddr(rwPP, l, &ln.ents[0])
	ln.inner = ln.inner[:0]
	if job.CotSaved == nil {
		return
	}
	// One record per save step at most, and the one of none.
	if cap(ln.recs) < evWords*(ln.next+2) {
		ln.recs = make([]float64, evWords*(ln.next+2))
	}
	ln.recs = ln.recs[:evWords*(ln.next+2)]
	recs := ln.recs[:0]
	for q := ln.next; q >= 0 && ln.owner[q] >= 0; {
		s := ln.owner[q]
		t, tn := ms.T[s], ms.T[s+1]
		ends, cot, np, pp := 0, zero, 0, len(ents)
		for ; q >= 0 && ln.owner[q] == s; q-- {
			c := job.CotSaved[q*dim : (q+1)*dim]
			if job.Save[q] == tn {
				ends++
				cot = addrBits(&c[0])
			} else {
				entry(job.Save[q]-t, c)
				np++
			}
		}
		ents = append(ents, *none, noneCot)
		var end, simple float64
		if ends == 1 {
			end = math.Float64frombits(^uint64(0))
		}
		if ends <= 1 {
			simple = math.Float64frombits(^uint64(0))
		}
		recs = append(recs, float64(s), cot, end, float64(np), addrBits(&ln.ents[pp]), float64(q), simple, 0)
		if ends > 1 {
			break // the lane goes back to Go there, which adds the cotangents (prepare)
		}
	}
	recs = append(recs, unsafe.Slice(rb.tail(rwConsts, rtRecord(dim)), evWords)...) // of no step
	rb.setAddr(rwEP, l, &ln.recs[0])
}

// EmitRest appends to a the rest of a reverse round after the reversed
// step, whose code starts at offset loop, and the code's return (as
// LaneRounds.EmitRest): the code of the step must leave R14 = Base() and
// R15 = Args().
//
// With SetPartials, a lane with partial steps left (rwNP) takes the
// next (at rwPP) in the next round, at the same state and time: h from
// the entry (rwHQ points there), the cotangent of its end state staged
// from the entry's address, the accumulate mask set; it neither moves
// nor goes back to Go.
func (r *ReverseRounds) EmitRest(a *jit.Asm, loop int) {
	dim := r.dim
	stage := 8 * (r.arrays*r.L + 4*rwConsts + rtStage(dim))
	stageEnd := 8 * (r.arrays*r.L + 4*rwConsts + rtStageEnd(dim, r.L))
	a.VRR(bpp, bm0, true, jit.OpXor, ySlow, ySlow, ySlow)
	for i, reg := range []byte{jit.CX, jit.SI, jit.DI, jit.R8, jit.R9} { // y, ynew, ybar, t, h
		a.Load64(reg, jit.Mem{Base: rArgs, Disp: int32(8 * i)})
	}
	// The general registers of the lanes' addresses (gather).
	p := [4]byte{jit.DX, jit.R10, jit.R11, jit.R12}
	for grp := range r.L / 4 {
		g := blockGen{a, &r.laneBlock, grp}
		ld, st, rr, rc := g.ld, g.st, g.rr, g.rc
		const act, k, next, fast, tmp, tmp2, part, np, ev, cons, tmp3, endm, xv, xs = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13
		// gatherTo gathers the values at p[i] + 8·d, d < dim, into the
		// lane-major rows of the group at [base + off].
		gatherTo := func(base byte, off int) {
			for d := range dim {
				g.gather(xv, xs, p, int32(8*d))
				a.VRM(bpp, bm0, true, jit.OpSt, xv, 0, jit.Mem{Base: base, Disp: int32(off + 8*(grp*4*dim+4*d))})
			}
		}
		// prefetch asks for the values of the mesh some steps back of
		// the lanes' addresses p, of size bytes a step: the walk reads
		// the meshes backwards, one step of each lane a round, from
		// memory the forward replay wrote long before.
		prefetch := func(size int) { g.prefetch(p, -prefetchSteps*size) }
		ld(act, rwActive)
		ld(k, rwK)
		if r.partials { // the lanes whose next item is a partial step
			// The words of each lane's record that say whether the
			// lane moves to its step (the rest below, where one does).
			ld(xv, rwEP)
			g.addrs(p, xv, xs)
			for _, w := range []int{evStep, evSimple} {
				g.gather(xv, xs, p, int32(8*w))
				st(rwEStep+w, xv)
			}
			ld(np, rwNP)
			g.cmpC(part, np, rcwZero, cmpGT)
			rr(jit.OpAnd, part, part, act)
		}
		rc(jit.OpSub, next, k, rcwOne)     // k − 1
		g.cmpC(fast, next, rcwZero, cmpGE) // the walk goes on
		if r.partials {
			// The next step is the record's (ev); the code takes it
			// where the record says so, else Go does.
			g.cmpM(ev, next, rwEStep, cmpEQ)
			rr(jit.OpAnd, ev, ev, act)
			ld(tmp, rwESimple)
			rr(jit.OpAndN, tmp, tmp, ev)
			rr(jit.OpAndN, fast, tmp, fast)
		} else {
			g.cmpM(tmp, next, rwOwner, cmpEQ) // the next step owns a save time
			rr(jit.OpAndN, fast, tmp, fast)
		}
		ld(tmp, rwReturn)
		rr(jit.OpAndN, fast, tmp, fast)
		rr(jit.OpAnd, fast, fast, act)
		if r.partials {
			rr(jit.OpAndN, fast, part, fast)
		}
		rr(jit.OpAndN, tmp, fast, act) // Go completes the step
		if r.partials {
			rr(jit.OpAndN, tmp, part, tmp)
		}
		st(rwSlow, tmp)
		rr(jit.OpOr, ySlow, ySlow, tmp)
		// The next step: k − 1, the addresses one value (one row) back.
		rc(jit.OpAnd, tmp, fast, rcwOne)
		rr(jit.OpSub, k, k, tmp)
		st(rwK, k)
		const psubq, paddq = 0xFB, 0xD4
		// Each lane's state, time and step size from its mesh (or its
		// partial step's entry), and the cotangent its entry points at:
		// the lanes' addresses, each gathered from.
		rc(jit.OpAnd, tmp, fast, rcwEight)
		for _, kk := range []int{rwTP, rwHP} {
			ld(tmp2, kk)
			rr(psubq, tmp2, tmp2, tmp)
			st(kk, tmp2)
		}
		g.addrs(p, tmp2, xs) // the step sizes'
		rc(jit.OpAnd, tmp, fast, rcwRow)
		ld(tmp2, rwYP)
		rr(psubq, tmp2, tmp2, tmp)
		st(rwYP, tmp2)
		if r.partials { // one partial step fewer; h from its entry
			rc(jit.OpAnd, tmp, part, rcwOne)
			rr(jit.OpSub, np, np, tmp)
			st(rwNP, np)
			ld(tmp, rwHP)
			ld(xv, rwPP)
			a.VBlendv(tmp, tmp, xv, part)
			st(rwHQ, tmp)
			g.addrs(p, tmp, xs)
		}
		g.gather(xv, xs, p, 0)
		a.VRM(bpp, bm0, true, jit.OpSt, xv, 0, jit.Mem{Base: jit.R9, Disp: int32(32 * grp)})
		prefetch(8)
		g.addrs(p, tmp2, xs) // the states'
		gatherTo(jit.CX, 0)
		prefetch(8 * dim)
		ld(xv, rwTP)
		g.addrs(p, xv, xs)
		g.gather(xv, xs, p, 0)
		prefetch(8)
		a.VRM(bpp, bm0, true, jit.OpSt, xv, 0, jit.Mem{Base: jit.R8, Disp: int32(32 * grp)})
		if r.partials {
			// Where a lane of the group takes a partial step or moves
			// to its record's step (rare: a few per walk), the rest of
			// the records' words, the partial steps' cotangents and the
			// saves' at the steps' ends; elsewhere the values left from
			// before are masked out below (part, ev and cons clear).
			rr(jit.OpOr, xv, part, ev)
			a.VPtest(xv, xv)
			skip := a.Jz32(-1)
			ld(xv, rwEP)
			g.addrs(p, xv, xs)
			for w := range evSimple + 1 {
				if w != evStep && w != evSimple {
					g.gather(xv, xs, p, int32(8*w))
					st(rwEStep+w, xv)
				}
			}
			ld(xv, rwPP) // the partial steps' entries, and their cotangents'
			g.addrs(p, xv, xs)
			for _, r := range p {
				a.Load64(r, jit.Mem{Base: r, Disp: 8})
			}
			gatherTo(rBlock, stage)
			ld(xv, rwECot)
			g.addrs(p, xv, xs)
			gatherTo(rBlock, stageEnd)
			a.Patch32(skip, len(a.B))
		}
		// The cotangent of the next item's end state: this step's of its
		// start state, where the lane goes on; the staged one where it
		// takes a partial step.
		if r.partials {
			g.rm(jit.OpAnd, endm, ev, rwEEnd)
		}
		for d := range dim {
			off := int32(8 * (grp*4*dim + 4*d))
			a.VRM(bpp, bm0, true, jit.OpLoad, tmp, 0, jit.Mem{Base: jit.SI, Disp: off})
			a.VRM(bpp, bm0, true, jit.OpLoad, tmp2, 0, jit.Mem{Base: jit.DI, Disp: off})
			if r.partials { // and the cotangent of the save at the next step's end
				a.VRM(bpp, bm0, true, jit.OpAdd, tmp3, tmp2, jit.Mem{Base: rBlock, Disp: int32(stageEnd) + off})
				a.VBlendv(tmp2, tmp2, tmp3, endm)
			}
			a.VBlendv(tmp, tmp, tmp2, fast)
			if r.partials {
				a.VRM(bpp, bm0, true, jit.OpLoad, tmp2, 0, jit.Mem{Base: rBlock, Disp: int32(stage) + off})
				a.VBlendv(tmp, tmp, tmp2, part)
			}
			a.VRM(bpp, bm0, true, jit.OpSt, tmp, 0, jit.Mem{Base: jit.SI, Disp: off})
		}
		if r.partials { // the entry on, or the record's; the accumulate mask
			rr(jit.OpAnd, cons, fast, ev) // the lane takes the record's step
			rc(jit.OpAnd, tmp, part, rcwEntry)
			ld(tmp2, rwPP)
			rr(paddq, tmp2, tmp2, tmp)
			ld(tmp, rwEPP)
			a.VBlendv(tmp2, tmp2, tmp, cons)
			st(rwPP, tmp2)
			ld(tmp, rwENP)
			a.VBlendv(np, np, tmp, cons)
			st(rwNP, np)
			ld(tmp, rwNext)
			ld(tmp2, rwENext)
			a.VBlendv(tmp, tmp, tmp2, cons)
			st(rwNext, tmp)
			rc(jit.OpAnd, tmp, cons, rcwRecord)
			ld(tmp2, rwEP)
			rr(paddq, tmp2, tmp2, tmp)
			st(rwEP, tmp2)
			a.Load64(jit.AX, jit.Mem{Base: rArgs, Disp: 8 * ReverseArgAcc})
			a.VRM(bpp, bm0, true, jit.OpSt, part, 0, jit.Mem{Base: jit.AX, Disp: int32(32 * grp)})
		}
	}
	r.loop(a, loop)
}
