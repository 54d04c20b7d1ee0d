package erk

import (
	"fmt"

	"github.com/gradsolve/gradsolve/ivp"
)

// VJPFunc writes uᵀJ_y into gy and uᵀJ_p into gp at (t, y, p).
type VJPFunc func(t float64, y, p, u, gy, gp []float64)

// Replayer walks a recorded Mesh again with its step sizes held fixed:
// forwards (Forward: the same arithmetic as the recording solve, so at
// the recording point it reproduces it bit for bit) and backwards
// (Reverse: the discrete adjoint of the Runge–Kutta steps, i.e. the exact
// gradient of the replayed map). Like a Solver it owns its work arrays
// and is not safe for concurrent use.
type Replayer struct {
	sv  *Solver // the stepper's coefficients and stage arrays
	vjp VJPFunc
	m   int // number of parameters

	ys    [][]float64 // stage inputs Y_i of the step being reversed
	kys   [][]float64 // views of the stage inputs a segment's step kept (ReverseKept)
	kbar  [][]float64 // cotangents of the stages k_i
	gy    []float64
	gp    []float64
	kview [][]float64
	walk  ivp.Walk
}

// NewReplayer returns a Replayer for cfg (as New) whose right-hand side
// has m parameters and the cotangent program vjp.
func NewReplayer(cfg Config, m int, vjp VJPFunc) (*Replayer, error) {
	sv, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if vjp == nil {
		return nil, fmt.Errorf("erk: the reverse replay needs a cotangent program (VJP)")
	}
	if m < 0 {
		return nil, fmt.Errorf("erk: %d parameters", m)
	}
	s, dim := sv.s, sv.dim
	flat := make([]float64, 2*s*dim+dim+m)
	rp := &Replayer{sv: sv, vjp: vjp, m: m}
	rp.ys, flat = split(flat, s, dim)
	rp.kbar, flat = split(flat, s, dim)
	rp.gy, rp.gp = flat[:dim], flat[dim:dim+m]
	rp.kview = make([][]float64, s)
	rp.kys = make([][]float64, s)
	return rp, nil
}

// Forward recomputes the states of ms from y0 at parameters p with the
// recorded step sizes, overwriting ms.Y, and writes the final state into
// yOut and the states at the save times (ordered as in the recording
// solve) into saved. At the recording's own y0 and p it reproduces the
// recorded states bit for bit. The walk is ivp.Walk.Forward's (on a
// checkpointed mesh it overwrites the checkpoints).
func (rp *Replayer) Forward(ms *ivp.Mesh, y0, p, save, yOut, saved []float64) {
	rp.walk.Forward(replayStep{rp}, ms, rp.sv.dim, y0, p, save, yOut, saved)
}

// Reverse runs the discrete adjoint of the replay of ms at parameters p
// (ms.Y must hold the states at p: those of the recording, or of a
// Forward at p). Given the cotangents of the final state (cotY, length
// Dim) and of the states at the save times (cotSaved, len(save)·Dim; nil
// means zero), it writes the gradient with respect to y0 into gy0 and
// with respect to p into gp. With L = Σ cotY·y_final + Σ cotSaved·y_saved,
// gy0 = ∂L/∂y0 and gp = ∂L/∂p of the discrete map with the step sizes
// held fixed. The walk is ivp.Walk.Reverse's; save times inside a step
// are partial steps from its start. On a checkpointed mesh the walk
// recomputes each segment's steps and keeps their stage inputs
// (ivp.SegmentStepper), so the reversed steps evaluate no f again.
func (rp *Replayer) Reverse(ms *ivp.Mesh, p, save, cotY, cotSaved, gy0, gp []float64) {
	rp.walk.Reverse(replayStep{rp}, ms, rp.sv.dim, false, p, save, cotY, cotSaved, gy0, gp[:rp.m])
}

// replayStep is the Replayer's step for the walks (ivp.ForwardStepper,
// ivp.ReverseStepper).
type replayStep struct{ *Replayer }

// Step recomputes an accepted step's stages and result from (t, y) and
// keeps its stages in ms when it keeps them.
func (r replayStep) Step(ms *ivp.Mesh, step int, t, h float64, y, yn, p []float64) {
	sv := r.sv
	f, k := sv.cfg.F, sv.k
	f(t, y, p, k[0])
	for i := 1; i <= sv.lastB; i++ {
		stageInput(sv.yt, y, h, sv.rows[i], k)
		f(t+float64(sv.c[i]*h), sv.yt, p, k[i])
	}
	// The proposal as the recording built it: through the last row
	// of A for FSAL methods (equal to b), else through b.
	if sv.fsal {
		stageInput(yn, y, h, sv.rows[sv.s-1], k)
	} else {
		stageInput(yn, y, h, sv.b, k)
	}
	if ms.KeepStages {
		if step == 0 {
			ms.K = ms.K[:0]
		}
		ms.PushStages(k[:sv.lastB+1])
	}
}

// Save re-steps from (t, y) to ts, as the recording solve did.
func (r replayStep) Save(dst []float64, t, _, ts float64, y, p []float64) {
	sv := r.sv
	copy(sv.y, y) // restep reads sv.y and sv.k[0]
	sv.restep(t, ts-t, p, dst)
}

// SaveFresh is Step's first stage, f(t, y), then Save
// (ivp.FreshSaver): the bits of a save after Step, with no Step.
func (r replayStep) SaveFresh(dst []float64, t, _, ts float64, y, p []float64) {
	sv := r.sv
	sv.cfg.F(t, y, p, sv.k[0])
	copy(sv.y, y)
	sv.restep(t, ts-t, p, dst)
}

// ReverseStep rebuilds the step's stage inputs (from the stages kept in
// ms, or by evaluating them again) and reverses the step.
func (r replayStep) ReverseStep(ms *ivp.Mesh, step int, t, h float64, y, p, ynewBar, ybar, gp []float64, _ []ivp.SaveCot) {
	if ms.KeepStages {
		r.storedStages(ms, step, h, y)
	} else {
		r.stages(t, h, y, p)
	}
	r.reverseStep(r.ys, t, h, p, ynewBar, ybar, gp)
}

// ReversePartial reverses the partial step from (t, y) to ts.
func (r replayStep) ReversePartial(t, ts float64, y, p, cot, ybar, gp []float64) {
	r.stages(t, ts-t, y, p)
	r.reverseStep(r.ys, t, ts-t, p, cot, ybar, gp)
}

// SegmentValues is the number of values KeepStep keeps per step: the
// stage inputs Y_1 … Y_lastB (ivp.SegmentStepper).
func (r replayStep) SegmentValues() int { return r.sv.lastB * r.sv.dim }

// KeepStep is Step, with its arithmetic, keeping the stage inputs
// Y_1 … Y_lastB in keep: they are computed there and f evaluated at
// them where Step uses one scratch array.
func (r replayStep) KeepStep(t, h float64, y, yn, p, keep []float64) {
	sv := r.sv
	f, k, dim := sv.cfg.F, sv.k, sv.dim
	f(t, y, p, k[0])
	for i := 1; i <= sv.lastB; i++ {
		yi := keep[(i-1)*dim : i*dim]
		stageInput(yi, y, h, sv.rows[i], k)
		f(t+float64(sv.c[i]*h), yi, p, k[i])
	}
	if sv.fsal {
		stageInput(yn, y, h, sv.rows[sv.s-1], k)
	} else {
		stageInput(yn, y, h, sv.b, k)
	}
}

// ReverseKept reverses the step KeepStep took from (t, y), from the
// stage inputs it kept: ReverseStep's sweep on the same stage inputs,
// so its bits, without evaluating f.
func (r replayStep) ReverseKept(t, h float64, y, p, keep, ynewBar, ybar, gp []float64, _ []ivp.SaveCot) {
	dim := r.sv.dim
	r.kys[0] = y
	for i := 1; i <= r.sv.lastB; i++ {
		r.kys[i] = keep[(i-1)*dim : i*dim]
	}
	r.reverseStep(r.kys, t, h, p, ynewBar, ybar, gp)
}

// stages recomputes the stage inputs Y_i and stages k_i of a step of
// size h from (t, y), up to the last stage with a nonzero weight in b.
func (rp *Replayer) stages(t, h float64, y, p []float64) {
	sv := rp.sv
	f := sv.cfg.F
	copy(rp.ys[0], y)
	f(t, y, p, sv.k[0])
	for i := 1; i <= sv.lastB; i++ {
		stageInput(rp.ys[i], y, h, sv.rows[i], sv.k)
		f(t+float64(sv.c[i]*h), rp.ys[i], p, sv.k[i])
	}
}

// storedStages rebuilds the stage inputs of step from the stages kept in
// the mesh: Y_i = y + h·Σ a_ij k_j, no evaluation of f.
func (rp *Replayer) storedStages(ms *ivp.Mesh, step int, h float64, y []float64) {
	sv := rp.sv
	n := (sv.lastB + 1) * sv.dim
	ks := ms.K[step*n : (step+1)*n]
	for i := range sv.lastB + 1 {
		rp.kview[i] = ks[i*sv.dim : (i+1)*sv.dim]
	}
	copy(rp.ys[0], y)
	for i := 1; i <= sv.lastB; i++ {
		stageInput(rp.ys[i], y, h, sv.rows[i], rp.kview)
	}
}

// reverseStep adds to ybarOut and gp the cotangents of y and p through
// y_new = y + h·Σ b_i k_i, k_i = f(t + c_i h, Y_i), Y_i = y + h·Σ a_ij k_j,
// given ynewBar, the cotangent of y_new, and the stage inputs ys (from
// stages, storedStages or a segment's KeepStep):
//
//	k̄_i = h·b_i·ȳ_new + h·Σ_{l>i} a_li·Ȳ_l,   Ȳ_i = J_yᵀ(Y_i)·k̄_i,
//	ȳ = ȳ_new + Σ_i Ȳ_i,                       p̄ += Σ_i J_pᵀ(Y_i)·k̄_i.
func (rp *Replayer) reverseStep(ys [][]float64, t, h float64, p, ynewBar, ybarOut, gp []float64) {
	sv := rp.sv
	L := sv.lastB
	for i := 0; i <= L; i++ {
		clear(rp.kbar[i])
	}
	for _, c := range sv.b {
		hb := h * c.a
		kb := rp.kbar[c.j]
		for d, v := range ynewBar {
			kb[d] += hb * v
		}
	}
	addTo(ybarOut, ynewBar)
	gpTmp := rp.gp
	for i := L; i >= 0; i-- {
		rp.vjp(t+float64(sv.c[i]*h), ys[i], p, rp.kbar[i], rp.gy, gpTmp)
		addTo(ybarOut, rp.gy)
		addTo(gp, gpTmp)
		for _, c := range sv.rows[i] {
			ha := h * c.a
			kb := rp.kbar[c.j]
			for d, v := range rp.gy {
				kb[d] += ha * v
			}
		}
	}
}

func addTo(dst, src []float64) {
	src = src[:len(dst)]
	for i := range dst {
		dst[i] += src[i]
	}
}
