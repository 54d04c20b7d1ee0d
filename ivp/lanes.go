package ivp

import (
	"math"
	"sync/atomic"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/ode"
)

// The lane driver: L trajectories side by side on one worker, as a SIMD
// lane engine holds them (one trajectory per lane of a vector register),
// each with its own time, step size, controller state, status, step
// count, save times and mesh. Every lane runs Solve's loop — the same
// checks in the same order, the same controller, the same save-time and
// mesh rules — and only the attempts are made for all lanes at once, so
// each trajectory gets the bits Solve gives it alone. A lane whose
// trajectory ends takes the next one from its source at once: lanes
// never wait for one another.

// LaneSource hands a lane driver its trajectories.
type LaneSource interface {
	// Next returns the next trajectory for lane l and the output it
	// writes, or ok false when there is none left (or the run is
	// stopping). The two stay the lane's until Done(l).
	Next(l int) (tr *Trajectory, out *Output, ok bool)
	// Done reports that lane l's trajectory has ended: its Output is
	// complete.
	Done(l int)
}

// LaneAttempt is one attempt of every lane at once: its inputs (lanes
// with Active set, each at time T[l] with step size H[l]; Moved[l]: the
// lane's previous attempt was accepted, so the stepper first completes
// that step, as Stepper.Attempt does when moved) and its results (the
// error norm Err[l] and the verdict OK[l], as Stepper.Attempt returns
// them). A stepper counts each lane's evaluations in Stats[l].
type LaneAttempt struct {
	T, H          []float64
	Moved, Active []bool
	Stats         []*ode.Stats
	Err           []float64
	OK            []bool
}

// NewLaneAttempt returns an attempt of L lanes, its arrays allocated.
func NewLaneAttempt(L int) LaneAttempt {
	return LaneAttempt{T: make([]float64, L), H: make([]float64, L), Moved: make([]bool, L), Active: make([]bool, L),
		Stats: make([]*ode.Stats, L), Err: make([]float64, L), OK: make([]bool, L)}
}

// LaneStepper is one method family's part of a lane solve: Stepper for
// L trajectories whose states lie side by side. The per-lane methods
// read and write lane l alone, in scalar arrays of the state's size.
type LaneStepper interface {
	// Lanes is the number of lanes L, Size the size of one lane's
	// state (the length of the scalar arrays of the other methods).
	Lanes() int
	Size() int
	// Load starts a trajectory in lane l at state y, whose derivative
	// at t0 is f0 (the stepper's first stage), with parameters p.
	Load(l int, y, f0, p []float64)
	// Attempt tries a step in every active lane (see LaneAttempt).
	Attempt(a *LaneAttempt)
	// Proposal copies lane l's proposal (the state at the end of the
	// step just attempted) into dst.
	Proposal(l int, dst []float64)
	// Save is Stepper.Save for lane l: the solution at ts inside the
	// accepted step of size h from t, into dst.
	Save(l int, dst []float64, t, h, ts float64, p []float64, st *ode.Stats)
	// Keep returns lane l's stages that a Mesh with KeepStages records
	// (Arrays.Keep), copied into scalar arrays; nil for a family that
	// keeps none.
	Keep(l int) [][]float64
	// Accept makes lane l's proposal its state (Solve's exchange of Y
	// and Y1).
	Accept(l int)
	// State copies lane l's state into dst.
	State(l int, dst []float64)
	// Advance is Stepper.Advance for lane l, after Accept.
	Advance(l int, tEnd float64, p []float64, next bool, st *ode.Stats)
}

// lane is one lane's trajectory in flight: Solve's local variables.
type lane struct {
	tr        *Trajectory
	out       *Output
	t, h      float64
	t1        float64 // the end of the span (Trajectory.T1)
	dir, hmax float64
	isave     int
	nonFinite bool // the last rejection was a non-finite attempt
	moved     bool // the last attempt was accepted; Advance is due
	last      bool // the attempt lands on t1
	live      bool // the lane holds a trajectory
	// stats are the trajectory's statistics while it runs (near the
	// rest of the lane's state, not in the caller's Output), copied to
	// its Output when it ends.
	stats ode.Stats
}

// LaneDriver is the lane driver of one stepper, with its per-lane
// state allocated once (NewLaneDriver), so that each Solve allocates
// nothing.
type LaneDriver struct {
	s     LaneStepper
	lp    *Loop
	src   LaneSource
	stop  *atomic.Bool
	lanes []lane
	// cst holds the lanes' controller states, judged together once per
	// round (PI.NextLanes), into accepts and factors.
	cst     *control.LaneStates
	accepts []bool
	factors []float64
	// Scalar scratch of one lane: the state (begin's y, the proposal
	// of an accepted step), f0 and InitialStep's work arrays.
	y, y1, f0, work []float64
	a               LaneAttempt
	// rounds, where the stepper runs whole rounds as machine code
	// (LaneRounder, rs), holds the lanes' state for that code; factors
	// is then its array of the controller's factors. The first Solve
	// binds them (bound), so that a stepper changed after NewLaneDriver
	// (tests take its machine code away) is asked as it is.
	rounds *LaneRounds
	rs     LaneRounder
	bound  bool
	// sq, where the stepper can put off its saves (SaveQueuer), takes
	// them instead of Save.
	sq SaveQueuer
}

// SolveLanes integrates the trajectories src hands out, L = s.Lanes() at
// a time (NewLaneDriver(s, lp).Solve(src, stop)).
func SolveLanes(s LaneStepper, lp *Loop, src LaneSource, stop *atomic.Bool) {
	NewLaneDriver(s, lp).Solve(src, stop)
}

// NewLaneDriver returns the lane driver of stepper s under lp.
func NewLaneDriver(s LaneStepper, lp *Loop) *LaneDriver {
	L, n := s.Lanes(), s.Size()
	d := &LaneDriver{s: s, lp: lp, lanes: make([]lane, L), cst: control.NewLaneStates(L),
		accepts: make([]bool, L), factors: make([]float64, L)}
	d.y, d.y1, d.f0, d.work = make([]float64, n), make([]float64, n), make([]float64, lp.Dim), make([]float64, lp.Dim)
	d.a = NewLaneAttempt(L)
	if rs, ok := s.(LaneRounder); ok && useRounds {
		d.rs = rs
	}
	if sq, ok := s.(SaveQueuer); ok {
		d.sq = sq
	}
	return d
}

// SaveQueuer is a LaneStepper that can put off the saves strictly
// inside accepted steps and compute many at once, in lanes of its own:
// QueueSave takes what Save takes (lane l as it is now: the step's
// start and first stage), and FlushSaves writes every queued save into
// its dst with Save's bits (and Save's count of evaluations). The driver
// flushes before it reports a trajectory Done and before Solve returns.
type SaveQueuer interface {
	QueueSave(l int, dst []float64, t, h, ts float64, p []float64, st *ode.Stats)
	FlushSaves()
}

// done reports lane l's trajectory Done, its queued saves written.
func (d *LaneDriver) done(l int) {
	if d.sq != nil {
		d.sq.FlushSaves()
	}
	d.src.Done(l)
}

// Solve integrates the trajectories src hands out, L at a time, until
// src has no more and every lane has ended; each trajectory's Output is
// what Solve (the one-trajectory driver) would write for it, bit for
// bit: states, save times, statistics, status, mesh. stop, if not nil,
// is polled by each lane every 64 of its attempts, as Solve polls it. It
// allocates nothing.
func (d *LaneDriver) Solve(src LaneSource, stop *atomic.Bool) {
	d.src, d.stop = src, stop
	defer func() {
		if d.sq != nil { // a stopped solve's lanes end without done
			d.sq.FlushSaves()
		}
		d.src, d.stop = nil, nil
	}()
	if d.rs != nil && !d.bound {
		d.bound = true
		if r := newLaneRounds(len(d.lanes), &d.lp.Controller, d.cst); r != nil && d.rs.BindRounds(r) {
			d.rounds, d.factors = r, r.F(roundFactor)
		}
	}
	s, lp, a, L := d.s, d.lp, &d.a, len(d.lanes)
	any, meshes := false, false
	for l := range L {
		d.lanes[l].live = d.fill(l)
		any = d.prepare(l) || any
		meshes = meshes || d.lanes[l].live && d.lanes[l].out.Mesh != nil
	}
	// Whole rounds, except for a recording: every accepted step of a
	// lane with a mesh is the Go loop's, so the rounds would hand back
	// nearly every step (measured: a recording of 10⁴ Lorenz
	// trajectories 20% slower in rounds than in the Go loop).
	if d.rounds != nil && lp.Controller.LaneCodeFits() && !meshes {
		d.solveRounds(any)
		return
	}
	ctl := &lp.Controller
	for any {
		s.Attempt(a)
		ctl.NextLanes(a.Err, d.cst, a.Active, d.accepts, d.factors)
		any = false
		for l := range L {
			// judge and prepare, with their common cases written out
			// here: a rejection, or a step accepted inside the span with
			// no save time in it and no mesh; then the checks before the
			// next attempt when none fails.
			ln := &d.lanes[l]
			if a.Active[l] {
				switch {
				case !a.OK[l] || !d.accepts[l]:
					d.judge(l)
				case !ln.last && ln.out.Mesh == nil && (ln.isave == len(ln.tr.Save) || ln.dir*(ln.tr.Save[ln.isave]-(ln.t+ln.h)) > 0):
					ln.stats.Accepted++
					ln.nonFinite = false
					s.Accept(l)
					ln.t += ln.h
					ln.moved = true
					ln.h *= d.factors[l]
					if math.Abs(ln.h) > ln.hmax {
						ln.h = ln.dir * ln.hmax
					}
				default:
					d.judge(l)
				}
			}
			if ln.live {
				t, h := ln.t, ln.h
				if n := ln.stats.Accepted + ln.stats.Rejected; n < lp.MaxSteps && (stop == nil || n%stopEvery != 0) {
					last := ln.dir*(t+float64(1.01*h)-ln.t1) >= 0
					if last {
						h = ln.t1 - t
					}
					if !(math.Abs(h) < control.MinStep(t) || t+h == t || math.IsNaN(h)) {
						ln.h, ln.last = h, last
						a.Active[l], a.T[l], a.H[l], a.Moved[l], a.Stats[l] = true, t, h, ln.moved, &ln.stats
						any = true
						continue
					}
				}
			}
			any = d.prepare(l) || any
		}
	}
}

// judge completes lane l's attempt as Solve does after Stepper.Attempt:
// the controller's verdict (from NextLanes), a rejection, or an
// accepted step (accepted), which may end the trajectory and refill the
// lane.
func (d *LaneDriver) judge(l int) {
	a, ctl, ln := &d.a, &d.lp.Controller, &d.lanes[l]
	ln.moved = false
	st := &ln.stats
	accept, factor := d.accepts[l], d.factors[l]
	if !a.OK[l] {
		accept, factor = false, ctl.QMin
	}
	if !accept {
		st.Rejected++
		ln.nonFinite = !a.OK[l]
		ln.h *= factor
		return
	}
	st.Accepted++
	ln.nonFinite = false
	if !d.accepted(l) {
		ln.live = d.fill(l)
		return
	}
	ln.moved = true
	ln.h *= factor
	if math.Abs(ln.h) > ln.hmax {
		ln.h = ln.dir * ln.hmax
	}
}

// prepare readies lane l for the next attempt: Solve's checks before
// an attempt (ready), refilling the lane while its trajectory ends
// there, and the lane's part of the attempt. It returns whether the
// lane takes part. The common case — within the budget, not a poll of
// the stop flag, above the step floor — is checked here without a
// call.
func (d *LaneDriver) prepare(l int) bool {
	a, ln := &d.a, &d.lanes[l]
	fast := false
	if ln.live {
		t, h := ln.t, ln.h
		n := ln.stats.Accepted + ln.stats.Rejected
		if n < d.lp.MaxSteps && (d.stop == nil || n%stopEvery != 0) {
			last := ln.dir*(t+float64(1.01*h)-ln.t1) >= 0
			if last {
				h = ln.t1 - t
			}
			if !(math.Abs(h) < control.MinStep(t) || t+h == t || math.IsNaN(h)) {
				ln.h, ln.last = h, last
				fast = true
			}
		}
	}
	if !fast {
		for ln.live && !d.ready(l) {
			ln.live = d.fill(l)
		}
	}
	a.Active[l] = ln.live
	if ln.live {
		a.T[l], a.H[l], a.Moved[l], a.Stats[l] = ln.t, ln.h, ln.moved, &ln.stats
	}
	return ln.live
}

// fill gives lane l its next trajectory and starts it (begin); a
// trajectory that ends at its start is done at once and the next one
// taken. It returns false when the source has none left.
func (d *LaneDriver) fill(l int) bool {
	ln := &d.lanes[l]
	for {
		tr, out, ok := d.src.Next(l)
		if !ok {
			return false
		}
		h, dir, hmax, isave, started := begin(d.lp, tr, out, d.y, d.f0, d.y1, d.work)
		if !started {
			d.done(l)
			continue
		}
		*ln = lane{tr: tr, out: out, t: tr.T0, t1: tr.T1, h: h, dir: dir, hmax: hmax, isave: isave, live: true, stats: out.Stats}
		d.lp.Controller.InitLane(d.cst, l)
		d.s.Load(l, d.y, d.f0, tr.P)
		return true
	}
}

// ready runs Solve's checks before an attempt for lane l: the budget,
// the stop flag, the landing on t1 and the step floor. It returns false
// when the lane's trajectory ended there.
func (d *LaneDriver) ready(l int) bool {
	ln := &d.lanes[l]
	st := &ln.stats
	if st.Accepted+st.Rejected >= d.lp.MaxSteps {
		d.end(l, ode.MaxStepsReached)
		return false
	}
	if d.stop != nil && (st.Accepted+st.Rejected)%stopEvery == 0 && d.stop.Load() {
		d.end(l, ode.Cancelled)
		return false
	}
	t, t1 := ln.t, ln.t1
	ln.last = false
	if rem := t1 - t; ln.dir*(t+float64(1.01*ln.h)-t1) >= 0 {
		ln.h, ln.last = rem, true
	}
	if h := ln.h; math.Abs(h) < control.MinStep(t) || t+h == t || math.IsNaN(h) {
		status := ode.StepUnderflow
		if ln.nonFinite {
			status = ode.NonFinite
		}
		d.end(l, status)
		return false
	}
	return true
}

// end ends lane l's trajectory before an attempt (Output.end).
func (d *LaneDriver) end(l int, status ode.Status) {
	ln := &d.lanes[l]
	if ln.moved {
		d.s.Advance(l, ln.t, ln.tr.P, true, &ln.stats)
	}
	ln.out.Stats = ln.stats
	d.s.State(l, d.y)
	ln.out.finish(d.y, status, ln.t, ln.h)
	d.done(l)
}

// accepted completes lane l's accepted step as Solve does: the save
// times inside it, the mesh, the exchange of state and proposal, and on
// the last step (or a mesh that refused to grow) the end of the
// trajectory, when it returns false; else it moves the lane's time on.
func (d *LaneDriver) accepted(l int) bool {
	ln := &d.lanes[l]
	tr, out, st := ln.tr, ln.out, &ln.stats
	t, h, p := ln.t, ln.h, tr.P
	tn := t + h
	if ln.last {
		tn = tr.T1
	}
	save := tr.Save
	// (The common step — inside the span, no save time in it, no mesh —
	// is completed in Solve's loop and does not come here.)
	y1 := d.y1
	n := len(y1)
	d.s.Proposal(l, y1)
	for ln.isave < len(save) && ln.dir*(save[ln.isave]-tn) <= 0 {
		i := ln.isave
		dst := out.Saved[i*n : (i+1)*n]
		switch {
		case save[i] == tn:
			copy(dst, y1)
		case d.sq != nil:
			d.sq.QueueSave(l, dst, t, h, save[i], p, st)
		default:
			d.s.Save(l, dst, t, h, save[i], p, st)
		}
		ln.isave++
	}
	recorded := true
	if ms := out.Mesh; ms != nil {
		if ms.KeepStages {
			if k := d.s.Keep(l); k != nil {
				recorded = ms.PushStages(k)
			}
		}
		recorded = recorded && ms.Push(h, tn, y1)
	}
	d.s.Accept(l)
	if !recorded || ln.last {
		d.s.Advance(l, t+h, p, false, st)
		status := ode.Success
		if !recorded {
			status = ode.Cancelled
		}
		out.Stats = ln.stats
		out.finish(y1, status, tn, h)
		d.done(l)
		return false
	}
	ln.t = tn
	return true
}
