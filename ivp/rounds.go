package ivp

import (
	"math"
	"unsafe"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/ode"
)

// Whole rounds in machine code. Where a lane stepper can run its
// attempt as one function of machine code (erk's fused lanes), the
// driver's common path runs there too, after the attempt and the
// controller's verdicts, for every lane at once: a rejection, or a step
// accepted inside the span with no save time in it and no mesh,
// followed by the checks before the next attempt. The code then starts
// the next round itself, and returns to Go only when some lane needs
// the rest of the driver — a trajectory that ends, a save time, a mesh,
// a non-finite attempt, a controller lane off its fast path, the step
// budget or a poll of the stop flag — or after a bounded number of
// rounds. Go then runs Solve's loop (judge, prepare) for those lanes
// alone. Each lane performs the driver's operations in the driver's
// order, so the bits are those of the Go loop, which are Solve's.
//
// The lanes' state lies in one block of memory, LaneRounds.Block: L
// values per array (lane l at [k·L + l] for array k, the round* indices
// below), then the code's constants, four each.

// The arrays of a LaneRounds block, L values each. Masks are 64-bit
// lanes, all ones or all zeros.
const (
	roundT        = iota // the lanes' times (the attempt's input, then the next one's)
	roundH               // their step sizes, likewise
	roundErr             // the attempts' error norms (the stepper writes them)
	roundFactor          // the controller's factors
	roundMoved           // mask: the lane completes an accepted step first (the stepper's)
	roundPending         // mask: the lane's accepted proposal is yet to become its state (the stepper's)
	roundActive          // mask: the lane holds a trajectory
	roundLast            // mask: the attempt lands on t1
	roundPlain           // mask: the trajectory records no mesh
	roundNoSave          // mask: no save time is left
	roundNextSave        // the next save time
	roundDir             // ±1, the direction of the span
	roundHMax            // the bound on |h|
	roundT1              // the end of the span
	roundLeft            // attempts the code may judge before the driver's checks are due
	roundNAtt            // attempts made since the driver last saw the lane
	roundNMov            // … of which completed an accepted step first
	roundNAcc            // steps the code accepted since then
	roundNRej            // attempts it rejected since then
	roundAccept          // mask: the controller accepted the attempt
	roundDefer           // mask: the controller left the lane to NextLane
	roundSlowA           // mask: the driver judges the attempt (the code did nothing)
	roundSlowB           // mask: the code judged it; the driver's checks before the next attempt are due
	roundIO              // the controller's exchange words, four per group of four lanes
	roundArrays
)

// The code's constants, four values each, after the arrays.
const (
	rcLaneBit  = iota // 1, 2, 4, 8
	rcOne             // 1.0
	rcZero            // 0.0
	rcAbs             // the bits other than the sign
	rcMaxFloat        // math.MaxFloat64
	rc101             // 1.01
	rcMinScale        // 4·2⁻⁵², MinStep's factor
	rcTiny            // 2⁻¹⁰²², MinStep's floor
	rcRounds          // the rounds left in this call (the first value, an integer)
	roundConsts
)

// maxRounds bounds the rounds of one call of the code: the code is not
// preempted while it runs, so each call returns within about 0.1 ms.
const maxRounds = 256

// LaneRounds is the lanes' state as the machine code of whole rounds
// reads and writes it (see above), with what the code needs of the
// controller. A LaneRounder binds its attempt's arrays to it.
type LaneRounds struct {
	laneBlock
	// args holds the addresses the code loads through R15: the
	// controller's lane arrays, the *PI and its constants.
	args [5]unsafe.Pointer
	ctl  *control.PI
}

// LaneRounder is a LaneStepper that runs whole rounds as machine code.
type LaneRounder interface {
	LaneStepper
	// BindRounds makes r's arrays the stepper's: its attempts read the
	// lanes' times, step sizes and the two masks of moved and pending
	// lanes from r (T, H, Moved, Pending) and write their error norms
	// there (Err). It then builds the code of a whole round — its
	// attempt, then r.EmitRest — and reports whether it could; where it
	// could not, the stepper's arrays may still be r's, and its Attempt
	// works on them as before.
	BindRounds(r *LaneRounds) bool
	// Rounds runs up to n rounds (n ≥ 1) of the code BindRounds built.
	Rounds(n int)
	// RoundEvals adds to st the evaluations of a lane's attempts made
	// by Rounds: attempts in all, of which moved completed an
	// accepted step first.
	RoundEvals(attempts, moved int, st *ode.Stats)
}

// newLaneRounds returns the block of L lanes (a multiple of four) for
// controller ctl, or nil where the controller's machine code does not
// fit it (LaneCodeFits) or L is not a multiple of four.
func newLaneRounds(L int, ctl *control.PI, cst *control.LaneStates) *LaneRounds {
	if L%ode.LaneWidth != 0 || !ctl.LaneCodeFits() {
		return nil
	}
	r := &LaneRounds{laneBlock: newLaneBlock(L, roundArrays, roundConsts, 0, rcRounds, roundMoved), ctl: ctl}
	eo, qo, rej := cst.LaneArrays()
	r.args = [5]unsafe.Pointer{unsafe.Pointer(&eo[0]), unsafe.Pointer(&qo[0]), unsafe.Pointer(&rej[0]),
		unsafe.Pointer(ctl), control.LaneConsts()}
	for i := range 4 {
		r.Block[roundArrays*L+4*rcLaneBit+i] = math.Float64frombits(1 << i)
	}
	r.setConst(rcOne, 1)
	r.setConst(rcAbs, math.Float64frombits(1<<63-1))
	r.setConst(rcMaxFloat, math.MaxFloat64)
	r.setConst(rc101, 1.01)
	r.setConst(rcMinScale, 4*0x1p-52)
	r.setConst(rcTiny, 0x1p-1022)
	return r
}

// Args returns the address the code of a round expects in R15 (Base, in
// R14, is the block's).
func (r *LaneRounds) Args() unsafe.Pointer { return unsafe.Pointer(&r.args[0]) }

// RoundArray names an array of a LaneRounds block that a stepper binds.
type RoundArray int

// The arrays a stepper binds (LaneRounder.BindRounds).
const (
	RoundT   RoundArray = roundT
	RoundH   RoundArray = roundH
	RoundErr RoundArray = roundErr
)

// solveRounds is Solve's loop with whole rounds in machine code (see
// above), after Solve filled and prepared the lanes (any: some lane
// holds a trajectory): the lanes the code could not complete come back
// here and take the Go loop's path, judge and prepare.
func (d *LaneDriver) solveRounds(any bool) {
	r, L := d.rounds, len(d.lanes)
	for l := range L {
		d.store(l) // (Solve filled and prepared the lanes)
	}
	for any {
		d.rs.Rounds(maxRounds)
		any = false
		for l := range L {
			switch {
			case r.mask(roundSlowA, l):
				d.roundJudge(l)
			case r.mask(roundSlowB, l):
				d.absorb(l)
				d.prepare(l)
				d.store(l)
			}
			any = any || r.mask(roundActive, l)
		}
	}
}

// roundJudge completes lane l's attempt, which the code left to the
// driver, as the Go loop does: the controller's verdict (NextLane for a
// lane the code deferred), judge and prepare.
func (d *LaneDriver) roundJudge(l int) {
	r, a := d.rounds, &d.a
	d.absorb(l)
	err := r.F(RoundErr)
	a.OK[l] = err[l] <= math.MaxFloat64
	if r.mask(roundDefer, l) {
		d.lp.Controller.NextLane(err, d.cst, l, d.accepts, d.factors)
	} else {
		d.accepts[l] = r.mask(roundAccept, l)
	}
	d.judge(l)
	d.prepare(l)
	d.store(l)
}

// absorb takes what the code did in lane l since the driver last saw
// it: the counts into the lane's statistics, its time, step size and
// flags into the lane.
func (d *LaneDriver) absorb(l int) {
	r, ln := d.rounds, &d.lanes[l]
	nAcc, nRej := int(*r.at(roundNAcc, l)), int(*r.at(roundNRej, l))
	ln.stats.Accepted += nAcc
	ln.stats.Rejected += nRej
	if nAcc+nRej > 0 {
		ln.nonFinite = false
	}
	d.rs.RoundEvals(int(*r.at(roundNAtt, l)), int(*r.at(roundNMov, l)), &ln.stats)
	for _, k := range [...]int{roundNAtt, roundNMov, roundNAcc, roundNRej} {
		*r.at(k, l) = 0
	}
	ln.t, ln.h = *r.at(roundT, l), *r.at(roundH, l)
	ln.moved, ln.last = r.mask(roundMoved, l), r.mask(roundLast, l)
}

// store writes lane l's state, after the driver's prepare, into the
// block for the code.
func (d *LaneDriver) store(l int) {
	r, ln := d.rounds, &d.lanes[l]
	r.setMask(roundActive, l, ln.live)
	if !ln.live {
		r.setMask(roundMoved, l, false)
		return
	}
	*r.at(roundT, l), *r.at(roundH, l) = ln.t, ln.h
	r.setMask(roundMoved, l, ln.moved)
	r.setMask(roundLast, l, ln.last)
	r.setMask(roundPlain, l, ln.out.Mesh == nil)
	save := ln.tr.Save
	r.setMask(roundNoSave, l, ln.isave == len(save))
	if ln.isave < len(save) {
		*r.at(roundNextSave, l) = save[ln.isave]
	}
	*r.at(roundDir, l), *r.at(roundHMax, l), *r.at(roundT1, l) = ln.dir, ln.hmax, ln.t1
	// The attempts before prepare's fast check fails: the step budget,
	// and with a stop flag its next poll (Solve polls it before every
	// stopEvery-th attempt).
	n := ln.stats.Accepted + ln.stats.Rejected
	next := d.lp.MaxSteps
	if d.stop != nil {
		next = min(next, (n/stopEvery+1)*stopEvery)
	}
	*r.at(roundLeft, l) = float64(next - n)
}

// useRounds says whether lane drivers made from now on run whole rounds
// as machine code where their stepper can (UseRounds).
var useRounds = true

// UseRounds sets whether lane drivers made from now on run whole
// rounds as machine code where their stepper can, and returns the
// previous setting; tests and benchmarks compare the two routes, which
// give the same bits.
func UseRounds(on bool) (was bool) {
	was, useRounds = useRounds, on
	return was
}
