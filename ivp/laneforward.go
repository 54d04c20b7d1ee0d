package ivp

import (
	"sync/atomic"

	"github.com/gradsolve/gradsolve/ode"
)

// The forward replay in lanes: L trajectories' recorded meshes walked
// again side by side with their step sizes held fixed, each lane at its
// own step of its own mesh, the steps of every lane made at once by a
// LaneStepper's Attempt (whose verdict is ignored: every recorded step
// is taken). Every lane does Forward's bookkeeping — the states written
// into the mesh, the save times inside a step re-stepped, the stages
// kept where the mesh keeps them — and a lane's attempt is the scalar
// step's arithmetic, so each trajectory gets the bits Forward gives it
// alone. A lane whose walk ends takes the next job from its source.

// ForwardJob is one trajectory's forward replay (the arguments of
// Forward): its mesh, initial state, parameters and save times, and
// where the final state (YOut) and the saved states (Saved) go.
type ForwardJob struct {
	Mesh                     *Mesh
	Y0, P, Save, YOut, Saved []float64
}

// ForwardSource hands a lane forward replay its jobs (as LaneSource
// does a lane solve's trajectories).
type ForwardSource interface {
	// Next returns lane l's next job, or ok false when there is none.
	Next(l int) (job *ForwardJob, ok bool)
	// Done reports that lane l's job has ended: the mesh's states,
	// YOut and Saved are written.
	Done(l int)
}

// LaneForward is the forward replay of one LaneStepper with its
// per-lane state allocated once (NewLaneForward): Run allocates nothing.
type LaneForward struct {
	s     LaneStepper
	f     ode.Func
	fb    ForwardStepper // the scalar step, for attempts the lanes cannot use
	dim   int
	jobs  []*ForwardJob
	k     []int // each lane's step in its mesh
	isave []int // each lane's next save time
	stats []ode.Stats
	f0    []float64
	a     LaneAttempt
	// rounds, where the stepper runs whole replay rounds as machine
	// code (ReplayRounder, rr), holds the lanes' state for that code;
	// the first Run binds it (bound).
	rounds *ReplayRounds
	rr     ReplayRounder
	bound  bool
	// fresh, where the rounds run and fb's saves need no step before
	// them (FreshSaver), makes the lanes owe their save times: the
	// code does not stop for them, and each job's saves are computed
	// from its finished mesh before it is reported Done (owedSaves).
	fresh FreshSaver
	// ss, where set (SaveLanes), computes a finished job's owed saves
	// in its lanes, each a step of its own from its step's start
	// (Stepper.Attempt's bits, which are SaveFresh's), with sa its
	// attempt, owed the saves' places and sst the statistics its
	// attempts count into (a save counts none, as SaveFresh's).
	ss   LaneStepper
	sa   LaneAttempt
	owed []owedSave
	sst  ode.Stats
}

// owedSave is a save time strictly inside a step, owed to a finished
// job: the save's index and its step.
type owedSave struct{ i, k int }

// SaveLanes makes ss, a stepper of the same method with lanes of its
// own (not bound to rounds), compute the saves a finished job is owed
// (see fresh), in batches of its lanes rather than one fresh scalar
// step each. An attempt the lanes cannot use (a non-finite proposal)
// falls back to the scalar SaveFresh.
func (w *LaneForward) SaveLanes(ss LaneStepper) {
	L := ss.Lanes()
	w.ss = ss
	w.sa = NewLaneAttempt(L)
	for l := range w.sa.Stats {
		w.sa.Stats[l] = &w.sst
	}
}

// FreshSaver is a ForwardStepper whose save needs no Step before it.
type FreshSaver interface {
	// SaveFresh writes into dst the solution at ts strictly inside the
	// step of size h from (t, y), with the bits of Step followed by
	// Save: it computes the step's first stage itself.
	SaveFresh(dst []float64, t, h, ts float64, y, p []float64)
}

// NewLaneForward returns the forward replay of stepper s, whose lanes
// hold states of dim values (s.Size() must be dim), with f the scalar
// right-hand side (for each trajectory's first stage). fb, when not
// nil, is the scalar replay's step: a lane whose attempt is not usable
// (LaneAttempt.OK false: a non-finite proposal, or a Rosenbrock W the
// lanes did not factor) takes that step with fb instead, with fb's
// bits, and is loaded again at the step's end.
func NewLaneForward(s LaneStepper, f ode.Func, dim int, fb ForwardStepper) *LaneForward {
	L := s.Lanes()
	w := &LaneForward{s: s, f: f, fb: fb, dim: dim, jobs: make([]*ForwardJob, L), k: make([]int, L), isave: make([]int, L),
		stats: make([]ode.Stats, L), f0: make([]float64, dim),
		a: NewLaneAttempt(L)}
	if rr, ok := s.(ReplayRounder); ok && useRounds {
		w.rr = rr
	}
	return w
}

// Run replays every job src hands out, L at a time; each job's mesh
// states, final state and saved states are Forward's for it, bit for
// bit. stop, if not nil, is polled once per round; when it is set the
// lanes stop where they are (their jobs are then incomplete, and not
// reported Done).
func (w *LaneForward) Run(src ForwardSource, stop *atomic.Bool) {
	if w.rr != nil && !w.bound {
		w.bound = true
		if r := newReplayRounds(len(w.jobs), w.dim); r != nil && w.rr.BindReplayRounds(r) {
			w.rounds = r
			w.fresh, _ = w.fb.(FreshSaver)
		}
	}
	if w.rounds != nil {
		w.runRounds(src, stop)
		return
	}
	a := &w.a
	any := false
	for l := range w.jobs {
		a.Active[l] = w.fill(src, l)
		any = any || a.Active[l]
	}
	for any {
		if stop != nil && stop.Load() {
			return
		}
		for l, on := range a.Active {
			if on {
				ms := w.jobs[l].Mesh
				a.T[l], a.H[l] = ms.T[w.k[l]], ms.H[w.k[l]]
			}
		}
		w.s.Attempt(a)
		any = false
		for l, on := range a.Active {
			if !on {
				continue
			}
			if !w.after(l) {
				src.Done(l)
				a.Active[l] = w.fill(src, l)
			}
			any = any || a.Active[l]
		}
	}
}

// fill starts lane l's next job (Forward's start: the mesh's first
// state, the saves at t0); a job of no steps ends at once. It returns
// false when src has none left.
func (w *LaneForward) fill(src ForwardSource, l int) bool {
	dim := w.dim
	for {
		job, ok := src.Next(l)
		if !ok {
			return false
		}
		ms := job.Mesh
		copy(ms.Y[:dim], job.Y0)
		i := 0
		for i < len(job.Save) && job.Save[i] == ms.T[0] {
			copy(job.Saved[i*dim:], job.Y0)
			i++
		}
		if len(ms.H) == 0 {
			copy(job.YOut, job.Y0)
			src.Done(l)
			continue
		}
		w.jobs[l], w.k[l], w.isave[l] = job, 0, i
		w.f(ms.T[0], job.Y0, job.P, w.f0)
		w.s.Load(l, job.Y0, w.f0, job.P)
		w.a.Moved[l], w.a.Stats[l] = false, &w.stats[l]
		return true
	}
}

// after completes lane l's step as Forward does after a step: its
// result into the mesh, the stages where the mesh keeps them, the save
// times inside (t, tn]; it returns false when the walk has ended (YOut
// written).
func (w *LaneForward) after(l int) bool {
	dim, job, k := w.dim, w.jobs[l], w.k[l]
	ms := job.Mesh
	t, h, tn := ms.T[k], ms.H[k], ms.T[k+1]
	yn := ms.Y[(k+1)*dim : (k+2)*dim]
	if w.fb != nil && !w.a.OK[l] {
		return w.scalarStep(l)
	}
	w.s.Proposal(l, yn)
	if ms.KeepStages {
		if k == 0 {
			ms.K = ms.K[:0]
		}
		if st := w.s.Keep(l); st != nil {
			ms.PushStages(st)
		}
	}
	if w.fresh == nil {
		w.saves(l, t, tn, yn, func(dst []float64, ts float64) { w.s.Save(l, dst, t, h, ts, job.P, &w.stats[l]) })
	}
	w.s.Accept(l)
	w.k[l]++
	w.a.Moved[l] = true
	if w.k[l] < len(ms.H) {
		return true
	}
	copy(job.YOut, yn)
	return false
}

// scalarStep takes lane l's step k with the scalar step fb (after an
// attempt the lanes could not use) and its save times, then loads the
// lane again at the step's end; it returns as after does.
func (w *LaneForward) scalarStep(l int) bool {
	dim, job, k := w.dim, w.jobs[l], w.k[l]
	ms := job.Mesh
	t, h, tn := ms.T[k], ms.H[k], ms.T[k+1]
	y, yn := ms.Y[k*dim:(k+1)*dim], ms.Y[(k+1)*dim:(k+2)*dim]
	w.fb.Step(ms, k, t, h, y, yn, job.P)
	if w.fresh == nil {
		w.saves(l, t, tn, yn, func(dst []float64, ts float64) { w.fb.Save(dst, t, h, ts, y, job.P) })
	}
	w.k[l]++
	if w.k[l] == len(ms.H) {
		copy(job.YOut, yn)
		return false
	}
	w.f(tn, yn, job.P, w.f0)
	w.s.Load(l, yn, w.f0, job.P)
	w.a.Moved[l] = false
	return true
}

// saves writes lane l's save times inside the step from t to tn, as
// Forward does: a save at tn is the step's result yn, one strictly
// inside is restep's (a step of its own from the step's start).
func (w *LaneForward) saves(l int, t, tn float64, yn []float64, restep func(dst []float64, ts float64)) {
	dim, job := w.dim, w.jobs[l]
	dir := 1.0
	if tn < t {
		dir = -1
	}
	save := job.Save
	for w.isave[l] < len(save) && dir*(save[w.isave[l]]-tn) <= 0 {
		i := w.isave[l]
		dst := job.Saved[i*dim : (i+1)*dim]
		if save[i] == tn {
			copy(dst, yn)
		} else {
			restep(dst, save[i])
		}
		w.isave[l]++
	}
}

// owedSaves writes the save times of lane l's finished job that the
// lanes owe it (fresh): each belongs to the step Forward gives it (the
// first whose end it does not pass: dir·(ts − tn) ≤ 0, dir·x being x
// or −x exactly); a save at the step's end is the mesh's state, one
// strictly inside SaveFresh's from the step's start row, so the bits
// are Forward's. The walk over the mesh's times is the tight loop.
func (w *LaneForward) owedSaves(l int) {
	dim, job := w.dim, w.jobs[l]
	ms, save := job.Mesh, job.Save
	n := len(ms.H)
	T := ms.T[:n+1]
	i, k := w.isave[l], 0
	for ; i < len(save); i++ {
		ts := save[i]
		for ; k < n; k++ {
			t, tn := T[k], T[k+1]
			d := ts - tn
			if tn < t {
				d = -d
			}
			if d <= 0 {
				break
			}
		}
		if k == n {
			break
		}
		dst := job.Saved[i*dim : (i+1)*dim]
		switch {
		case ts == T[k+1]:
			copy(dst, ms.Y[(k+1)*dim:(k+2)*dim])
		case w.ss != nil:
			w.owed = append(w.owed, owedSave{i, k})
		default:
			w.fresh.SaveFresh(dst, T[k], ms.H[k], ts, ms.Y[k*dim:(k+1)*dim], job.P)
		}
	}
	w.isave[l] = i
	if len(w.owed) > 0 {
		w.saveLanes(job)
	}
}

// saveLanes computes job's owed saves (owed) with ss, a batch of its
// lanes at a time: each lane at its save's step start (t, y), with f
// there evaluated as SaveFresh evaluates it, takes one attempt of size
// ts − t, whose proposal is the save.
func (w *LaneForward) saveLanes(job *ForwardJob) {
	dim, ms, a, L := w.dim, job.Mesh, &w.sa, len(w.sa.T)
	for start := 0; start < len(w.owed); start += L {
		batch := w.owed[start:min(start+L, len(w.owed))]
		for l := range L {
			a.Active[l] = l < len(batch)
			if !a.Active[l] {
				continue
			}
			o := batch[l]
			t, y := ms.T[o.k], ms.Y[o.k*dim:(o.k+1)*dim]
			w.f(t, y, job.P, w.f0)
			w.ss.Load(l, y, w.f0, job.P)
			a.T[l], a.H[l], a.Moved[l] = t, job.Save[o.i]-t, false
		}
		w.ss.Attempt(a)
		for l, o := range batch {
			dst := job.Saved[o.i*dim : (o.i+1)*dim]
			if a.OK[l] {
				w.ss.Proposal(l, dst)
				continue
			}
			k := o.k
			w.fresh.SaveFresh(dst, ms.T[k], ms.H[k], job.Save[o.i], ms.Y[k*dim:(k+1)*dim], job.P)
		}
	}
	w.owed = w.owed[:0]
}
