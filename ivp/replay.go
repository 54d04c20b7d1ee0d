package ivp

// ForwardStepper is one method family's step on a recorded mesh, for
// Forward.
type ForwardStepper interface {
	// Step recomputes step k of ms, of size h from (t, y) (row k of
	// ms.Y), and writes its result into yn (row k+1) with the same
	// arithmetic as the recording solve's accepted step.
	Step(ms *Mesh, k int, t, h float64, y, yn, p []float64)
	// Save writes into dst the solution at ts strictly inside the step
	// of size h from (t, y) that Step just took, as the recording solve
	// computed it (Stepper.Save).
	Save(dst []float64, t, h, ts float64, y, p []float64)
}

// Forward walks ms again from y0 at parameters p with the recorded step
// sizes held fixed: it overwrites the states of ms.Y (rows of dim
// values), writes the final state into yOut and the states at the save
// times (ordered as in the recording solve, a save at t0 being y0) into
// saved, row by row. At the recording's own y0 and p it reproduces the
// recorded states bit for bit. ms must keep every state (Checkpoint ≤
// 1); Walk.Forward walks any mesh.
func Forward(fs ForwardStepper, ms *Mesh, dim int, y0, p, save, yOut, saved []float64) {
	copy(ms.Y[:dim], y0)
	isave := savesAtStart(ms, dim, y0, save, saved)
	for k, h := range ms.H {
		t := ms.T[k]
		y := ms.Y[k*dim : (k+1)*dim]
		yn := ms.Y[(k+1)*dim : (k+2)*dim]
		fs.Step(ms, k, t, h, y, yn, p)
		isave = savesInStep(fs, t, h, ms.T[k+1], dim, y, yn, p, save, saved, isave)
	}
	last := len(ms.H)
	copy(yOut, ms.Y[last*dim:(last+1)*dim])
}

// savesAtStart writes the saves at t0 (y0) and returns the index of
// the first save after t0.
func savesAtStart(ms *Mesh, dim int, y0, save, saved []float64) int {
	isave := 0
	for isave < len(save) && save[isave] == ms.T[0] {
		copy(saved[isave*dim:], y0)
		isave++
	}
	return isave
}

// savesInStep writes the saves inside (t, tn] of the step of size h
// from t to tn, which went from y to yn, and returns the index of the
// first save after it.
func savesInStep(fs ForwardStepper, t, h, tn float64, dim int, y, yn, p, save, saved []float64, isave int) int {
	dir := 1.0
	if tn < t {
		dir = -1
	}
	// Save times inside (t, tn]: a save at tn is the step's result.
	for isave < len(save) && dir*(save[isave]-tn) <= 0 {
		dst := saved[isave*dim : (isave+1)*dim]
		if save[isave] == tn {
			copy(dst, yn)
		} else {
			fs.Save(dst, t, h, save[isave], y, p)
		}
		isave++
	}
	return isave
}

// Forward is the package's Forward for any mesh. On a checkpointed one
// (Mesh.Checkpoint = c ≥ 2) it walks the steps on two states of its
// own, forming the times as the recording did (Mesh.Times), and writes
// the state at every c-th step into its row of ms.Y: the same steps,
// so the same bits, as Forward on a mesh that keeps every state.
func (w *Walk) Forward(fs ForwardStepper, ms *Mesh, dim int, y0, p, save, yOut, saved []float64) {
	c := ms.Every()
	if c == 1 {
		Forward(fs, ms, dim, y0, p, save, yOut, saved)
		return
	}
	if len(w.fa) != dim {
		w.fa, w.fb = make([]float64, dim), make([]float64, dim)
	}
	y, yn := w.fa, w.fb
	copy(y, y0)
	copy(ms.Y[:dim], y0)
	isave := savesAtStart(ms, dim, y0, save, saved)
	t := ms.T[0]
	for k, h := range ms.H {
		tn := ms.next(k, t)
		fs.Step(ms, k, t, h, y, yn, p)
		isave = savesInStep(fs, t, h, tn, dim, y, yn, p, save, saved, isave)
		if (k+1)%c == 0 {
			copy(ms.State(k+1, dim), yn)
		}
		y, yn = yn, y
		t = tn
	}
	copy(yOut, y)
}

// SaveCot is the cotangent Cot of the saved state at time T.
type SaveCot struct {
	T   float64
	Cot []float64
}

// ReverseStepper is one method family's adjoint step, for Walk.Reverse.
// Each call adds to ybar (the cotangent of the step's start state y)
// and to gp (that of the parameters).
type ReverseStepper interface {
	// ReverseStep reverses step k of ms, of size h from (t, y): given
	// ynewBar, the cotangent of its end state, it adds the cotangents of
	// y and p. dense lists the save times strictly inside the step when
	// the family computes them from the step's own stages (a continuous
	// extension: Walk.Reverse's dense), whose cotangents the step then
	// carries too; otherwise it is empty.
	ReverseStep(ms *Mesh, k int, t, h float64, y, p, ynewBar, ybar, gp []float64, dense []SaveCot)
	// ReversePartial reverses a save time ts strictly inside the step
	// from (t, y), computed as a step of its own from there: it adds
	// the cotangents of y and p through the saved state, whose
	// cotangent is cot.
	ReversePartial(t, ts float64, y, p, cot, ybar, gp []float64)
}

// SegmentStepper is a family's step pair for the segments of a
// checkpointed mesh: a forward step that also keeps what the reversed
// step needs besides its start state (erk: the stage inputs), and the
// reversed step from what it kept. Where the family has one, the
// reverse walk of a checkpointed mesh recomputes each segment with
// KeepStep and reverses it with ReverseKept, so that no step's stages
// are evaluated twice.
type SegmentStepper interface {
	// SegmentValues is the number of values KeepStep keeps per step.
	SegmentValues() int
	// KeepStep is ForwardStepper.Step, with its arithmetic, of the step
	// of size h from (t, y) into yn; it also writes into keep
	// (SegmentValues() values) what ReverseKept needs.
	KeepStep(t, h float64, y, yn, p, keep []float64)
	// ReverseKept is ReverseStepper.ReverseStep of that step, with its
	// bits, from what KeepStep kept.
	ReverseKept(t, h float64, y, p, keep, ynewBar, ybar, gp []float64, dense []SaveCot)
}

// Walk holds the work arrays of the walks over a mesh (Reverse, and
// Forward on a checkpointed mesh). Its zero value is ready; it
// allocates on first use, and again only for a larger dimension, more
// save times or (checkpointed meshes) a longer segment, so a Walk kept
// with its replayer allocates nothing per trajectory.
type Walk struct {
	ybar, ynext []float64
	owner       []int // the step each save time belongs to (−1: t0)
	inner       []SaveCot
	// seg is the segment of a checkpointed mesh being reversed, a mesh
	// that keeps every state and time: T the segment's times formed
	// again (Mesh.Times), H a view of the mesh's, Y the states
	// recomputed from the segment's checkpoint; keep, for a
	// SegmentStepper, what its KeepStep kept of each step.
	seg  Mesh
	keep []float64
	// fa and fb are the two states of Forward on a checkpointed mesh.
	fa, fb []float64
}

// Reverse runs the discrete adjoint of the replay of ms at parameters p
// with rs's steps (ms.Y must hold the states at p: those of the
// recording, or of a Forward at p). Given the cotangents of the final
// state (cotY, length dim) and of the states at the save times
// (cotSaved, len(save)·dim; nil means zero), it writes the gradient
// with respect to y0 into gy0 and with respect to p into gp (cleared
// first). With L = Σ cotY·y_final + Σ cotSaved·y_saved, gy0 = ∂L/∂y0
// and gp = ∂L/∂p of the discrete map with the step sizes held fixed.
//
// The steps are reversed from the last to the first. Save times are
// assigned to steps as the forward pass assigned them
// (Mesh.SaveOwners): one at the end of a step is the step's result, and
// its cotangent joins that of the end state before the step is
// reversed; one inside a step is, with dense set, part of the step
// (ReverseStep's dense), else a partial step of its own, reversed after
// the step (ReversePartial); one at t0 is y0.
//
// A checkpointed mesh (Checkpoint = c ≥ 2) is reversed segment by
// segment from the last: the steps [jc, jc + c) are recomputed forward
// from the checkpoint at step jc with rs's Step (rs must be a
// ForwardStepper too), with the recorded step sizes and times
// (Mesh.Times), into the Walk's own rows — the states Forward
// computes, so the recorded ones bit for bit — and then reversed as
// above. Each step's arithmetic and every sum are those of
// the walk on a mesh that keeps every state, in the same order, so the
// gradients are its bits. Where rs is a SegmentStepper the
// recomputation keeps what each reversed step needs (KeepStep, then
// ReverseKept): the walk then evaluates f as often as the walk of a
// full mesh. Otherwise it adds c − 1 forward steps of every c.
func (w *Walk) Reverse(rs ReverseStepper, ms *Mesh, dim int, dense bool, p, save, cotY, cotSaved, gy0, gp []float64) {
	if len(w.ybar) != dim {
		w.ybar, w.ynext = make([]float64, dim), make([]float64, dim)
	}
	copy(w.ybar, cotY)
	clear(gp)
	w.owner = ms.SaveOwners(save, w.owner)
	next := lastReached(w.owner) // the last save time not yet reversed
	if c := ms.Every(); c == 1 {
		for k := len(ms.H) - 1; k >= 0; k-- {
			next = w.step(rs, ms.T[k], ms.H[k], ms.T[k+1], k, ms.Y[k*dim:(k+1)*dim], ms, k, nil, nil, dense, p, save, cotSaved, gp, next)
		}
	} else {
		fs := rs.(ForwardStepper)
		ss, _ := rs.(SegmentStepper)
		n := len(ms.H)
		for a := (n - 1) / c * c; n > 0 && a >= 0; a -= c {
			b := min(a+c, n)
			seg, nk := w.segment(fs, ss, ms, a, b, dim, p)
			for j := b - a - 1; j >= 0; j-- {
				var keep []float64
				if nk > 0 {
					keep = w.keep[j*nk : (j+1)*nk]
				}
				next = w.step(rs, seg.T[j], seg.H[j], seg.T[j+1], a+j, seg.Y[j*dim:(j+1)*dim], seg, j, ss, keep, dense, p, save, cotSaved, gp, next)
			}
		}
	}
	ybar := w.ybar
	if cotSaved != nil {
		for q := next; q >= 0; q-- { // saves at t0 are y0
			addTo(ybar, cotSaved[q*dim:(q+1)*dim])
		}
	}
	copy(gy0, ybar)
}

// step reverses step k, of size h from (t, y) to tn; sm and sk are the
// mesh and step index ReverseStep is given (the mesh and k, or a
// checkpointed mesh's segment and the step's index in it), or, with
// keep set, ss.ReverseKept reverses it from keep. next is the last
// save time not yet reversed; step returns the one before the step's.
func (w *Walk) step(rs ReverseStepper, t, h, tn float64, k int, y []float64, sm *Mesh, sk int, ss SegmentStepper, keep []float64,
	dense bool, p, save, cotSaved, gp []float64, next int) int {
	dim := len(w.ybar)
	ybar, owner := w.ybar, w.owner
	first := next
	for first >= 0 && owner[first] == k {
		first--
	}
	w.inner = w.inner[:0]
	if cotSaved != nil {
		for q := next; q > first; q-- {
			if cot := cotSaved[q*dim : (q+1)*dim]; save[q] == tn {
				addTo(ybar, cot)
			} else {
				w.inner = append(w.inner, SaveCot{save[q], cot})
			}
		}
	}
	copy(w.ynext, ybar) // the cotangent of y_{k+1}
	clear(ybar)
	var inner []SaveCot
	if dense {
		inner = w.inner
	}
	if keep != nil {
		ss.ReverseKept(t, h, y, p, keep, w.ynext, ybar, gp, inner)
	} else {
		rs.ReverseStep(sm, sk, t, h, y, p, w.ynext, ybar, gp, inner)
	}
	if !dense {
		for _, sc := range w.inner {
			rs.ReversePartial(t, sc.T, y, p, sc.Cot, ybar, gp)
		}
	}
	return first
}

// segment recomputes the states of steps [a, b) of the checkpointed ms
// at p from the state at step a (its checkpoint), with the recorded
// step sizes and times, into w.seg, whose step j is step a + j of ms:
// with fs's Step, or where ss is not nil with its KeepStep, which then
// takes step b − 1 too and keeps nk values of every step in w.keep.
func (w *Walk) segment(fs ForwardStepper, ss SegmentStepper, ms *Mesh, a, b, dim int, p []float64) (seg *Mesh, nk int) {
	seg = &w.seg
	seg.T, seg.H = ms.Times(a, b, seg.T), ms.H[a:b]
	rows := b - a // the states y_a … y_{b−1}
	steps := rows - 1
	if ss != nil {
		nk = ss.SegmentValues()
		rows, steps = rows+1, rows // and y_b, from the step whose values it keeps
		if len(w.keep) < steps*nk {
			w.keep = make([]float64, steps*nk)
		}
	}
	if cap(seg.Y) < rows*dim {
		seg.Y = make([]float64, rows*dim)
	}
	seg.Y = seg.Y[:rows*dim]
	copy(seg.Y[:dim], ms.State(a, dim))
	for j := range steps {
		y, yn := seg.Y[j*dim:(j+1)*dim], seg.Y[(j+1)*dim:(j+2)*dim]
		if ss != nil {
			ss.KeepStep(seg.T[j], seg.H[j], y, yn, p, w.keep[j*nk:(j+1)*nk])
		} else {
			fs.Step(seg, j, seg.T[j], seg.H[j], y, yn, p)
		}
	}
	return seg, nk
}

func addTo(dst, src []float64) {
	src = src[:len(dst)]
	for i := range dst {
		dst[i] += src[i]
	}
}
