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
	kbar  [][]float64 // cotangents of the stages k_i
	ybar  []float64   // cotangent of the state at the start of the step
	ynext []float64   // cotangent of the state at its end
	gy    []float64
	gp    []float64
	owner []int // the step each save time belongs to (−1: t0)
	kview [][]float64
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
	flat := make([]float64, 2*s*dim+3*dim+m)
	rp := &Replayer{sv: sv, vjp: vjp, m: m}
	rp.ys, flat = split(flat, s, dim)
	rp.kbar, flat = split(flat, s, dim)
	rp.ybar, rp.ynext, rp.gy, rp.gp = flat[:dim], flat[dim:2*dim], flat[2*dim:3*dim], flat[3*dim:3*dim+m]
	rp.kview = make([][]float64, s)
	return rp, nil
}

// Forward recomputes the states of ms from y0 at parameters p with the
// recorded step sizes, overwriting ms.Y, and writes the final state into
// yOut and the states at the save times (ordered as in the recording
// solve) into saved. At the recording's own y0 and p it reproduces the
// recorded states bit for bit.
func (rp *Replayer) Forward(ms *ivp.Mesh, y0, p, save, yOut, saved []float64) {
	sv := rp.sv
	dim := sv.dim
	f := sv.cfg.F
	copy(ms.Y[:dim], y0)
	isave := 0
	for isave < len(save) && save[isave] == ms.T[0] {
		copy(saved[isave*dim:], y0)
		isave++
	}
	k := sv.k
	for step, h := range ms.H {
		t, tn := ms.T[step], ms.T[step+1]
		y := ms.Y[step*dim : (step+1)*dim]
		yn := ms.Y[(step+1)*dim : (step+2)*dim]
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
		isave = rp.saves(ms, step, t, tn, p, save, saved, isave, func(dst []float64, hs float64) {
			sv.y = append(sv.y[:0], y...) // restep reads sv.y and sv.k[0]
			sv.restep(t, hs, p, dst)
		})
	}
	last := len(ms.H)
	copy(yOut, ms.Y[last*dim:(last+1)*dim])
}

// saves visits the save times inside step (t, tn]: a save at tn is the
// step's result, others are computed by partial(dst, τ − t).
func (rp *Replayer) saves(ms *ivp.Mesh, step int, t, tn float64, p, save, saved []float64, isave int, partial func(dst []float64, hs float64)) int {
	dim := rp.sv.dim
	dir := 1.0
	if tn < t {
		dir = -1
	}
	for isave < len(save) && dir*(save[isave]-tn) <= 0 {
		dst := saved[isave*dim : (isave+1)*dim]
		if save[isave] == tn {
			copy(dst, ms.Y[(step+1)*dim:(step+2)*dim])
		} else {
			partial(dst, save[isave]-t)
		}
		isave++
	}
	return isave
}

// Reverse runs the discrete adjoint of the replay of ms at parameters p
// (ms.Y must hold the states at p: those of the recording, or of a
// Forward at p). Given the cotangents of the final state (cotY, length
// Dim) and of the states at the save times (cotSaved, len(save)·Dim; nil
// means zero), it writes the gradient with respect to y0 into gy0 and
// with respect to p into gp. With L = Σ cotY·y_final + Σ cotSaved·y_saved,
// gy0 = ∂L/∂y0 and gp = ∂L/∂p of the discrete map with the step sizes
// held fixed.
func (rp *Replayer) Reverse(ms *ivp.Mesh, p, save, cotY, cotSaved, gy0, gp []float64) {
	sv := rp.sv
	dim := sv.dim
	ybar := rp.ybar
	copy(ybar, cotY)
	clear(gp[:rp.m])
	// The save times of each step, found as the forward pass found them.
	rp.owner = ms.SaveOwners(save, rp.owner)
	owner := rp.owner
	nextSave := len(save) - 1
	for step := len(ms.H) - 1; step >= 0; step-- {
		t, h, tn := ms.T[step], ms.H[step], ms.T[step+1]
		y := ms.Y[step*dim : (step+1)*dim]
		// Saves at the end of this step are its result: their cotangents
		// join that of y_{k+1} before the step is reversed.
		first := nextSave
		for first >= 0 && owner[first] == step {
			first--
		}
		for q := nextSave; q > first; q-- {
			if save[q] == tn && cotSaved != nil {
				addTo(ybar, cotSaved[q*dim:(q+1)*dim])
			}
		}
		if ms.KeepStages {
			rp.storedStages(ms, step, h, y)
		} else {
			rp.stages(t, h, y, p)
		}
		copy(rp.ynext, ybar) // cotangent of y_{k+1}
		clear(ybar)
		rp.reverseStep(t, h, p, rp.ynext, ybar, gp)
		// Saves inside the step: partial steps from y_k.
		for q := nextSave; q > first; q-- {
			if save[q] != tn && cotSaved != nil {
				rp.stages(t, save[q]-t, y, p)
				rp.reverseStep(t, save[q]-t, p, cotSaved[q*dim:(q+1)*dim], ybar, gp)
			}
		}
		nextSave = first
	}
	for q := nextSave; q >= 0; q-- { // saves at t0 are y0
		if cotSaved != nil {
			addTo(ybar, cotSaved[q*dim:(q+1)*dim])
		}
	}
	copy(gy0, ybar)
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
// given ynewBar, the cotangent of y_new, and the stage inputs from
// stages:
//
//	k̄_i = h·b_i·ȳ_new + h·Σ_{l>i} a_li·Ȳ_l,   Ȳ_i = J_yᵀ(Y_i)·k̄_i,
//	ȳ = ȳ_new + Σ_i Ȳ_i,                       p̄ += Σ_i J_pᵀ(Y_i)·k̄_i.
func (rp *Replayer) reverseStep(t, h float64, p, ynewBar, ybarOut, gp []float64) {
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
		rp.vjp(t+float64(sv.c[i]*h), rp.ys[i], p, rp.kbar[i], rp.gy, gpTmp)
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
