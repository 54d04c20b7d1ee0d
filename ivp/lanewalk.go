package ivp

import "sync/atomic"

// The reverse walk in lanes: L trajectories' recorded meshes walked
// backwards side by side, each lane at its own step of its own mesh,
// with the steps of every lane reversed at once (LaneReverser). Every
// lane does exactly Walk.Reverse's bookkeeping — the save times' owners,
// the cotangents of saves at a step's end, inside it (partial steps) and
// at t0 — so each trajectory gets the bits Walk.Reverse gives it alone.
// A lane whose walk ends takes the next job from its source.

// ReverseJob is one trajectory's reverse walk (the arguments of
// Walk.Reverse): its mesh (states at P), parameters, save times, the
// cotangents of the final state (CotY) and of the saved states
// (CotSaved, nil for none), and where the gradients go (GY0, GP).
type ReverseJob struct {
	Mesh                    *Mesh
	P, Save, CotY, CotSaved []float64
	GY0, GP                 []float64
}

// ReverseSource hands a lane walk its jobs (as LaneSource does a lane
// solve's trajectories).
type ReverseSource interface {
	// Next returns lane l's next job, or ok false when there is none.
	Next(l int) (job *ReverseJob, ok bool)
	// Done reports that lane l's job has ended: GY0 and GP are written.
	Done(l int)
}

// LaneReverse is one reversed step of every lane at once: for each lane
// with Active[l], step K[l] of its mesh Mesh[l], of size H[l] from
// (T[l], Y[l]) (the mesh's row K[l]), at parameters P[l]; given the
// cotangent YNewBar[l] of the step's end state, the stepper adds the
// cotangents of its start state to YBar[l] (cleared by the walk) and of
// the parameters to GP[l], as ReverseStepper.ReverseStep does.
type LaneReverse struct {
	Active            []bool
	Mesh              []*Mesh
	K                 []int
	T, H              []float64
	Y, P              [][]float64
	YNewBar, YBar, GP [][]float64
}

// LaneReverser is one method family's adjoint step for L lanes.
type LaneReverser interface {
	Lanes() int
	// ReverseSteps reverses a step in every active lane (LaneReverse).
	ReverseSteps(r *LaneReverse)
	// ReversePartial is ReverseStepper.ReversePartial, for one lane's
	// save time inside its step.
	ReversePartial(t, ts float64, y, p, cot, ybar, gp []float64)
}

// laneJob is one lane's walk in flight: Walk.Reverse's local variables.
type laneJob struct {
	job   *ReverseJob
	next  int // the last save time not yet reversed
	owner []int
	inner []SaveCot
	// ents lists the partial steps of the lane's step for the code of
	// whole rounds (ReverseRounds.SetPartials): h and the cotangent's
	// address of each, then an entry of none.
	ents []float64
	// recs holds the records of the save steps after it that the code
	// takes on its own (ReverseRounds.schedule).
	recs []float64
}

// LaneWalk is the reverse walk of one LaneReverser with its per-lane
// state allocated once (NewLaneWalk): its Reverse allocates nothing
// once the lanes' arrays have grown to the largest job.
type LaneWalk struct {
	rs    LaneReverser
	dim   int
	lanes []laneJob
	r     LaneReverse
	ynext [][]float64
	// rounds, where the stepper runs whole rounds of the walk as
	// machine code (ReverseRounder, rr), holds the lanes' state for that
	// code; the first Reverse binds it (bound).
	rounds *ReverseRounds
	rr     ReverseRounder
	bound  bool
	// ds, where the family computes save times from a step's own stages
	// (DenseReverser with Dense set), reverses on its scalar replayer
	// the steps that hold save times with cotangents, their cotangents
	// in the step (Walk.Reverse's dense); scalar marks those lanes in a
	// round.
	ds     DenseReverser
	scalar []bool
}

// DenseReverser is a LaneReverser whose save times may come from a
// step's continuous extension (a Rosenbrock method with DenseSave):
// where Dense is set, a step with save-time cotangents inside it is
// reversed by ReverseDense, the scalar replayer's ReverseStep with its
// dense saves, and the other steps in lanes.
type DenseReverser interface {
	Dense() bool
	ReverseDense(ms *Mesh, k int, t, h float64, y, p, ynewBar, ybar, gp []float64, dense []SaveCot)
}

// NewLaneWalk returns the lane walk of rs for states of dim values.
func NewLaneWalk(rs LaneReverser, dim int) *LaneWalk {
	L := rs.Lanes()
	w := &LaneWalk{rs: rs, dim: dim, lanes: make([]laneJob, L)}
	w.r = LaneReverse{Active: make([]bool, L), Mesh: make([]*Mesh, L), K: make([]int, L),
		T: make([]float64, L), H: make([]float64, L), Y: make([][]float64, L), P: make([][]float64, L),
		YNewBar: make([][]float64, L), YBar: make([][]float64, L), GP: make([][]float64, L)}
	w.ynext = make([][]float64, L)
	for l := range L {
		w.r.YBar[l], w.ynext[l] = make([]float64, dim), make([]float64, dim)
		w.r.YNewBar[l] = w.ynext[l]
	}
	if ds, ok := rs.(DenseReverser); ok && ds.Dense() {
		w.ds, w.scalar = ds, make([]bool, L)
	} else if rr, ok := rs.(ReverseRounder); ok && useRounds {
		w.rr = rr
	}
	return w
}

// Reverse runs the reverse walk of every job src hands out, L at a
// time; each job's gradients are Walk.Reverse's for it, bit for bit.
// stop, if not nil, is polled once per round; when it is set the lanes
// stop where they are (their jobs' gradients are then incomplete, and
// not reported Done).
func (w *LaneWalk) Reverse(src ReverseSource, stop *atomic.Bool) {
	if w.rr != nil && !w.bound {
		w.bound = true
		if rb := newReverseRounds(len(w.lanes), w.dim); rb != nil && w.rr.BindReverseRounds(rb) {
			w.rounds = rb
		}
	}
	if w.rounds != nil {
		w.reverseRounds(src, stop)
		return
	}
	r := &w.r
	any := false
	for l := range w.lanes {
		r.Active[l] = w.fill(src, l)
		any = any || r.Active[l]
	}
	for any {
		if stop != nil && stop.Load() {
			return
		}
		for l, on := range r.Active {
			if on {
				w.prepare(l)
			}
		}
		if w.ds != nil {
			w.reverseDense()
		}
		w.rs.ReverseSteps(r)
		if w.ds != nil {
			for l, sc := range w.scalar {
				if sc {
					r.Active[l], w.scalar[l] = true, false
				}
			}
		}
		any = false
		for l, on := range r.Active {
			if !on {
				continue
			}
			if !w.after(l) {
				src.Done(l)
				r.Active[l] = w.fill(src, l)
			}
			any = any || r.Active[l]
		}
	}
}

// fill starts lane l's next job (Walk.Reverse's start); a job of no
// steps ends at once. It returns false when src has none left.
func (w *LaneWalk) fill(src ReverseSource, l int) bool {
	r, ln := &w.r, &w.lanes[l]
	for {
		job, ok := src.Next(l)
		if !ok {
			return false
		}
		ms := job.Mesh
		ybar := r.YBar[l]
		copy(ybar, job.CotY)
		clear(job.GP)
		ln.job = job
		ln.owner = ms.SaveOwners(job.Save, ln.owner)
		ln.next = lastReached(ln.owner)
		r.Mesh[l], r.P[l], r.GP[l] = ms, job.P, job.GP
		r.K[l] = len(ms.H) - 1
		if r.K[l] >= 0 {
			return true
		}
		w.finish(l)
		src.Done(l)
	}
}

// prepare readies lane l's step K[l] as Walk.Reverse does before
// ReverseStep: the cotangents of the saves at the step's end join
// YBar, those inside it are kept for ReversePartial, and YBar becomes
// the cotangent of the step's end state (YNewBar) and is cleared.
func (w *LaneWalk) prepare(l int) {
	r, ln, dim := &w.r, &w.lanes[l], w.dim
	job, ms, k := ln.job, r.Mesh[l], r.K[l]
	tn := ms.T[k+1]
	r.T[l], r.H[l], r.Y[l] = ms.T[k], ms.H[k], ms.Y[k*dim:(k+1)*dim]
	first := ln.next
	for first >= 0 && ln.owner[first] == k {
		first--
	}
	ybar := r.YBar[l]
	ln.inner = ln.inner[:0]
	if job.CotSaved != nil {
		for q := ln.next; q > first; q-- {
			if cot := job.CotSaved[q*dim : (q+1)*dim]; job.Save[q] == tn {
				addTo(ybar, cot)
			} else {
				ln.inner = append(ln.inner, SaveCot{job.Save[q], cot})
			}
		}
	}
	ln.next = first
	copy(w.ynext[l], ybar)
	clear(ybar)
}

// after completes lane l's reversed step: the save times inside it, as
// partial steps, and the move to the step before; it returns false
// when the walk has ended (GY0 written).
func (w *LaneWalk) after(l int) bool {
	r, ln := &w.r, &w.lanes[l]
	if w.ds == nil { // (with dense saves the step carried them)
		for _, sc := range ln.inner {
			w.rs.ReversePartial(r.T[l], sc.T, r.Y[l], r.P[l], sc.Cot, r.YBar[l], r.GP[l])
		}
	}
	r.K[l]--
	if r.K[l] >= 0 {
		return true
	}
	w.finish(l)
	return false
}

// finish ends lane l's walk: the saves at t0 are y0's, and YBar is ∂L/∂y0.
func (w *LaneWalk) finish(l int) {
	ln, ybar, dim := &w.lanes[l], w.r.YBar[l], w.dim
	job := ln.job
	if job.CotSaved != nil {
		for q := ln.next; q >= 0; q-- {
			addTo(ybar, job.CotSaved[q*dim:(q+1)*dim])
		}
	}
	copy(job.GY0, ybar)
}

// reverseDense reverses, on the family's scalar replayer, the steps of
// this round that hold save-time cotangents inside them (with dense
// saves they are part of the step), and takes those lanes out of the
// round's lane step.
func (w *LaneWalk) reverseDense() {
	r := &w.r
	for l, on := range r.Active {
		if ln := &w.lanes[l]; on && len(ln.inner) > 0 {
			k := r.K[l]
			w.ds.ReverseDense(r.Mesh[l], k, r.T[l], r.H[l], r.Y[l], r.P[l], r.YNewBar[l], r.YBar[l], r.GP[l], ln.inner)
			r.Active[l], w.scalar[l] = false, true
		}
	}
}
