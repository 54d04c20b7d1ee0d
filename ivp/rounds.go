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
	L     int
	Block []float64
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
	r := &LaneRounds{L: L, Block: make([]float64, roundArrays*L+4*roundConsts), ctl: ctl}
	eo, qo, rej := cst.LaneArrays()
	r.args = [5]unsafe.Pointer{unsafe.Pointer(&eo[0]), unsafe.Pointer(&qo[0]), unsafe.Pointer(&rej[0]),
		unsafe.Pointer(ctl), control.LaneConsts()}
	c := r.Block[roundArrays*L:]
	for i := range 4 {
		set := func(k int, v float64) { c[4*k+i] = v }
		set(rcLaneBit, math.Float64frombits(1<<i))
		set(rcOne, 1)
		set(rcZero, 0)
		set(rcAbs, math.Float64frombits(1<<63-1))
		set(rcMaxFloat, math.MaxFloat64)
		set(rc101, 1.01)
		set(rcMinScale, 4*0x1p-52)
		set(rcTiny, 0x1p-1022)
	}
	return r
}

// F returns array k of the block (its L values), for the stepper's
// arrays: T, H and Err (see LaneRounder).
func (r *LaneRounds) F(k RoundArray) []float64 {
	i := int(k) * r.L
	return r.Block[i : i+r.L : i+r.L]
}

// Masks returns the moved and pending masks, 2L words: moved lanes at
// [0, L), pending ones at [L, 2L).
func (r *LaneRounds) Masks() []uint64 {
	return unsafe.Slice((*uint64)(unsafe.Pointer(&r.Block[roundMoved*r.L])), 2*r.L)
}

// Base returns the address of the block, which the code of a round
// expects in R14; Args returns the address the code expects in R15.
func (r *LaneRounds) Base() unsafe.Pointer { return unsafe.Pointer(&r.Block[0]) }

// Args: see Base.
func (r *LaneRounds) Args() unsafe.Pointer { return unsafe.Pointer(&r.args[0]) }

// SetRounds sets the number of rounds the next call of the code runs.
func (r *LaneRounds) SetRounds(n int) {
	r.Block[roundArrays*r.L+4*rcRounds] = math.Float64frombits(uint64(n))
}

// RoundArray names an array of a LaneRounds block that a stepper binds.
type RoundArray int

// The arrays a stepper binds (LaneRounder.BindRounds).
const (
	RoundT   RoundArray = roundT
	RoundH   RoundArray = roundH
	RoundErr RoundArray = roundErr
)

func (r *LaneRounds) at(k, l int) *float64 { return &r.Block[k*r.L+l] }

func (r *LaneRounds) mask(k, l int) bool { return math.Float64bits(r.Block[k*r.L+l]) != 0 }

func (r *LaneRounds) setMask(k, l int, on bool) {
	var v uint64
	if on {
		v = ^uint64(0)
	}
	r.Block[k*r.L+l] = math.Float64frombits(v)
}

// solveRounds is Solve's loop with whole rounds in machine code (see
// above): the lanes the code could not complete come back here and take
// the Go loop's path, judge and prepare.
func (d *LaneDriver) solveRounds() {
	r, L := d.rounds, len(d.lanes)
	any := false
	for l := range L {
		d.lanes[l].live = d.fill(l)
		any = d.prepare(l) || any
		d.store(l)
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
