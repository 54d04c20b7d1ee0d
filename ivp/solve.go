package ivp

import (
	"math"
	"sync/atomic"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/ode"
)

// Loop is what the adaptive driver needs of a configuration: the part
// every method family shares. The families' New functions validate it.
type Loop struct {
	// F is the right-hand side of the state's first Dim components:
	// the driver evaluates f(t0, y0) with it and gives it to
	// control.InitialStep, whose Euler probe moves those components.
	// The stepper's state may be longer (Rosenbrock sensitivities).
	F   ode.Func
	Dim int
	// Order is the method's order, for the initial step.
	Order int
	// RTol and ATol are the tolerances of the components in the error
	// norm, the first len(ATol) of the state; InitialStep measures its
	// norms over them.
	RTol, ATol []float64
	// HMax bounds |h| (+Inf: no bound beyond |t1 − t0|), H0 is the
	// first step to try (0: control.InitialStep), MaxSteps the budget
	// of accepted plus rejected attempts (≥ 1).
	HMax, H0 float64
	MaxSteps int
	// Controller judges each attempt.
	Controller control.PI
}

// Arrays are the stepper's arrays that the driver reads and writes,
// handed over by Stepper.Start.
type Arrays struct {
	// Y and Y1 address the state at the start of the step and the
	// proposal an attempt writes. The driver copies the initial state
	// into *Y and exchanges *Y and *Y1 when a step is accepted (after
	// its save times, before Stepper.Advance). Their length is the
	// stepper's state size: rows of
	// Output.Saved and of Mesh.Y have that length.
	Y, Y1 *[]float64
	// F0 receives f(t0, y0) (Loop.F on the first Loop.Dim components of
	// Y), where the first attempt reads it. Work is scratch of length
	// Loop.Dim for control.InitialStep.
	F0, Work []float64
	// Keep are the stages a Mesh with KeepStages records after each
	// accepted step (Mesh.PushStages); nil for a family that keeps none.
	Keep [][]float64
}

// Stepper is one method family's part of an adaptive solve: the
// driver (Solve) owns the loop — budget, cancellation, landing on t1,
// the step floor and the statuses, the controller, save times, the
// mesh, the hmax clamp — and calls the stepper for the numerics. A
// stepper counts its own evaluations, Jacobians and factorisations in
// st.
//
// An accepted step is completed (Advance: FSAL stages, a stage
// evaluated only once the step is accepted, f at the new point, a stale
// Jacobian) by the next Attempt, which is told so by moved, or by an
// explicit Advance when the solve ends there. That keeps the loop at one
// call per attempt, and the evaluations come in the same order either
// way: nothing evaluates f between an accepted step and the next
// attempt.
type Stepper interface {
	// Start prepares a solve and returns the arrays the driver uses.
	Start() Arrays
	// Attempt tries a step of size h from (t, *Y), writing the proposal
	// into *Y1, and returns the scaled error norm (control.Norm).
	// ok is false when the attempt is not usable (a value not finite, a
	// singular matrix): the driver then rejects it and shrinks h by the
	// controller's QMin. moved reports that the previous attempt was
	// accepted and ended at (t, *Y) (its t + h is t): the stepper first
	// does what Advance(t, p, true, st) does.
	Attempt(t, h float64, p []float64, moved bool, st *ode.Stats) (err float64, ok bool)
	// Save writes into dst the solution at ts, strictly inside the
	// accepted step of size h from (t, *Y) just attempted, from the
	// step's start (a re-step or a continuous extension) so that the
	// accepted step stays intact. It is called before the step's
	// Advance, before *Y and *Y1 are exchanged.
	Save(dst []float64, t, h, ts float64, p []float64, st *ode.Stats)
	// Advance completes an accepted step from t of size h, tEnd = t + h
	// (on the last step tEnd may differ from t1 in the last bit), once
	// the driver has exchanged *Y and *Y1 so that *Y is its end state.
	// next is false when no step follows (the last step, or a mesh that
	// refused to grow): f at the new point must not be evaluated then.
	Advance(tEnd float64, p []float64, next bool, st *ode.Stats)
}

// stopEvery is how many step attempts pass between checks of the stop
// flag: often enough to stop within microseconds, rarely enough to cost
// nothing.
const stopEvery = 64

// Solve integrates one trajectory with stepper s under lp and writes
// its results into out. stop, if not nil, is polled every 64 attempts;
// when it is set the solve ends with status Cancelled. On failure out.Y
// holds the last accepted state and save times not reached hold NaN.
//
// The loop, per attempt: the budget (MaxStepsReached), the stop flag,
// then the step is stretched to land on t1 when t + 1.01·h would reach
// it, then the floor — |h| < control.MinStep(t), or t + h == t, or h NaN
// ends the solve with StepUnderflow (NonFinite when the last rejection
// was a non-finite attempt) — then the attempt and the controller's
// verdict. An accepted step computes the save times inside it, records
// itself in out.Mesh (a refused Grow ends the solve with Cancelled),
// and the next step size is clamped to hmax. It allocates nothing.
func Solve(s Stepper, lp *Loop, tr *Trajectory, out *Output, stop *atomic.Bool) {
	p := tr.P
	t1 := tr.T1
	a := s.Start()
	y, y1 := *a.Y, *a.Y1
	n := len(y)
	h, dir, hmax, isave, started := begin(lp, tr, out, y, a.F0, y1, a.Work)
	if !started {
		return
	}
	st := &out.Stats
	ms := out.Mesh
	save := tr.Save

	ctl := &lp.Controller
	var cst control.State
	ctl.Init(&cst)
	t := tr.T0
	nonFinite := false // the last rejection was a non-finite attempt
	moved := false     // the last attempt was accepted; Advance is due
	for {
		if st.Accepted+st.Rejected >= lp.MaxSteps {
			out.end(s, moved, p, y, ode.MaxStepsReached, t, h)
			return
		}
		if stop != nil && (st.Accepted+st.Rejected)%stopEvery == 0 && stop.Load() {
			out.end(s, moved, p, y, ode.Cancelled, t, h)
			return
		}
		last := false
		if rem := t1 - t; dir*(t+float64(1.01*h)-t1) >= 0 { // the product rounded: no fused multiply–add in any build
			h, last = rem, true
		}
		// The step-size floor is measured at the current time: a step
		// below control.MinStep(t) (4ε·|t|, a few ulps of t; 2^−1022 near
		// t = 0) no longer changes t meaningfully. It only decides
		// failure: the steps taken above it are those of the controller.
		if math.Abs(h) < control.MinStep(t) || t+h == t || math.IsNaN(h) {
			status := ode.StepUnderflow
			if nonFinite {
				status = ode.NonFinite
			}
			out.end(s, moved, p, y, status, t, h)
			return
		}

		err, ok := s.Attempt(t, h, p, moved, st)
		moved = false
		accept, factor := ctl.Next(err, &cst)
		if !ok {
			accept, factor = false, ctl.QMin
		}
		if !accept {
			st.Rejected++
			nonFinite = !ok
			h *= factor
			continue
		}
		st.Accepted++
		nonFinite = false
		tn := t + h
		if last {
			tn = t1
		}
		// Save times inside (t, tn].
		for isave < len(save) && dir*(save[isave]-tn) <= 0 {
			dst := out.Saved[isave*n : (isave+1)*n]
			if save[isave] == tn {
				copy(dst, y1)
			} else {
				s.Save(dst, t, h, save[isave], p, st)
			}
			isave++
		}
		// The mesh may refuse to grow (Mesh.Grow): the recording, and
		// the solve with it, then stops at tn.
		recorded := true
		if ms != nil {
			if ms.KeepStages && a.Keep != nil {
				recorded = ms.PushStages(a.Keep)
			}
			recorded = recorded && ms.Push(h, tn, y1)
		}
		y, y1 = y1, y
		*a.Y, *a.Y1 = y, y1
		if !recorded || last {
			s.Advance(t+h, p, false, st)
			status := ode.Success
			if !recorded {
				status = ode.Cancelled
			}
			out.finish(y, status, tn, h)
			return
		}
		t = tn
		moved = true
		h *= factor
		if math.Abs(h) > hmax {
			h = dir * hmax
		}
	}
}

// begin starts a trajectory's solve, for both drivers (Solve and
// SolveLanes): the direction and hmax of its span, y set to the initial
// state, out reset (statistics, NaN save rows, the mesh), the save
// times at t0 written, f0 = f(t0, y0) and, unless Loop.H0 is set, the
// initial step (control.InitialStep, with y1 and work as its scratch).
// It returns the first step size to try (signed) and the index of the
// first save time after t0; started is false when the solve ended at t0
// (f0 not finite), out then being complete.
func begin(lp *Loop, tr *Trajectory, out *Output, y, f0, y1, work []float64) (h, dir, hmax float64, isave int, started bool) {
	p := tr.P
	t0, t1 := tr.T0, tr.T1
	dir = 1.0
	if t1 < t0 {
		dir = -1
	}
	hmax = math.Min(lp.HMax, math.Abs(t1-t0))
	n := len(y)
	copy(y, tr.Y0)
	out.Stats = ode.Stats{}
	out.T, out.H = t0, 0
	st := &out.Stats
	for i := range out.Saved {
		out.Saved[i] = math.NaN()
	}
	if ms := out.Mesh; ms != nil {
		ms.Reset(t0, y)
	}
	save := tr.Save
	for isave < len(save) && save[isave] == t0 {
		copy(out.Saved[isave*n:(isave+1)*n], y)
		isave++
	}

	lp.F(t0, y[:lp.Dim], p, f0)
	st.FEvals++
	if !control.Finite(f0) {
		out.finish(y, ode.NonFinite, t0, 0)
		return 0, dir, hmax, isave, false
	}
	h = lp.H0
	if h == 0 {
		var nev int
		h, nev = control.InitialStep(lp.F, p, t0, dir, y[:lp.Dim], f0, lp.Order, lp.ATol, lp.RTol, hmax, y1[:lp.Dim], work)
		st.FEvals += nev
	}
	return dir * math.Min(h, hmax), dir, hmax, isave, true
}

// end ends a solve at the top of the loop: it completes the step
// accepted last (if moved) and finishes.
func (out *Output) end(s Stepper, moved bool, p, y []float64, status ode.Status, t, h float64) {
	if moved {
		s.Advance(t, p, true, &out.Stats)
	}
	out.finish(y, status, t, h)
}

// finish ends a solve: the state y reached at time t, the last step
// size tried and the status.
func (out *Output) finish(y []float64, status ode.Status, t, h float64) {
	copy(out.Y, y)
	out.T, out.H, out.Status = t, h, status
}
