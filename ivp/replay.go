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
// recorded states bit for bit.
func Forward(fs ForwardStepper, ms *Mesh, dim int, y0, p, save, yOut, saved []float64) {
	copy(ms.Y[:dim], y0)
	isave := 0
	for isave < len(save) && save[isave] == ms.T[0] {
		copy(saved[isave*dim:], y0)
		isave++
	}
	for k, h := range ms.H {
		t, tn := ms.T[k], ms.T[k+1]
		y := ms.Y[k*dim : (k+1)*dim]
		yn := ms.Y[(k+1)*dim : (k+2)*dim]
		fs.Step(ms, k, t, h, y, yn, p)
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
	}
	last := len(ms.H)
	copy(yOut, ms.Y[last*dim:(last+1)*dim])
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

// Walk holds the work arrays of the reverse walk (Reverse). Its zero
// value is ready; it allocates on first use, and again only for a
// larger dimension or more save times, so a Walk kept with its
// replayer allocates nothing per trajectory.
type Walk struct {
	ybar, ynext []float64
	owner       []int // the step each save time belongs to (−1: t0)
	inner       []SaveCot
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
func (w *Walk) Reverse(rs ReverseStepper, ms *Mesh, dim int, dense bool, p, save, cotY, cotSaved, gy0, gp []float64) {
	if len(w.ybar) != dim {
		w.ybar, w.ynext = make([]float64, dim), make([]float64, dim)
	}
	ybar := w.ybar
	copy(ybar, cotY)
	clear(gp)
	w.owner = ms.SaveOwners(save, w.owner)
	owner := w.owner
	next := len(save) - 1 // the last save time not yet reversed
	for k := len(ms.H) - 1; k >= 0; k-- {
		t, h, tn := ms.T[k], ms.H[k], ms.T[k+1]
		y := ms.Y[k*dim : (k+1)*dim]
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
		if dense {
			rs.ReverseStep(ms, k, t, h, y, p, w.ynext, ybar, gp, w.inner)
		} else {
			rs.ReverseStep(ms, k, t, h, y, p, w.ynext, ybar, gp, nil)
			for _, sc := range w.inner {
				rs.ReversePartial(t, sc.T, y, p, sc.Cot, ybar, gp)
			}
		}
		next = first
	}
	if cotSaved != nil {
		for q := next; q >= 0; q-- { // saves at t0 are y0
			addTo(ybar, cotSaved[q*dim:(q+1)*dim])
		}
	}
	copy(gy0, ybar)
}

func addTo(dst, src []float64) {
	src = src[:len(dst)]
	for i := range dst {
		dst[i] += src[i]
	}
}
