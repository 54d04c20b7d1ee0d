package ros

import (
	"fmt"

	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/ode"
)

// Replayer walks a recorded mesh of a Rosenbrock solve again with the
// step sizes held fixed: Forward re-runs the same arithmetic (bitwise
// equal at the recording point), Reverse runs the discrete adjoint of
// the Rosenbrock steps — the exact gradient of the replayed map. It is
// not safe for concurrent use.
type Replayer struct {
	sv      *Solver
	m       int
	vjp     func(t float64, y, p, u, gy, gp []float64)
	jvpvjp  func(t float64, y, p, v, w, u, gy, gp []float64)
	dfdtvjp func(t float64, y, p, u, gy, gp []float64)

	kbar        [][]float64
	rbar, v, yi []float64
	gy, ynew    []float64
	gpTmp, zero []float64
	st          ode.Stats
	walk        ivp.Walk
}

// NewReplayer returns a Replayer for cfg (as New, without sensitivity
// columns) whose right-hand side has m parameters, with the cotangent
// programs it needs: uᵀJ (VJP), the second derivatives uᵀ·∂(J·v)/∂(y, p)
// (JVPVJP) and, for a non-autonomous problem, uᵀ·∂f_t/∂(y, p) (DfDtVJP).
func NewReplayer(cfg Config, m int, pg *ode.Programs) (*Replayer, error) {
	cfg.NS = 0
	sv, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if pg == nil || pg.VJP == nil || pg.JVPVJP == nil || (cfg.DfDt != nil && pg.DfDtVJP == nil) {
		return nil, fmt.Errorf("ros: the reverse replay of %s needs the cotangent programs VJP and JVPVJP (and DfDtVJP for a non-autonomous problem); every problem compiled from formulas has them", cfg.Tableau.Name)
	}
	n := sv.dim
	mk := func(k int) []float64 { return make([]float64, k) }
	rp := &Replayer{sv: sv, m: m, vjp: pg.VJP, jvpvjp: pg.JVPVJP, dfdtvjp: pg.DfDtVJP,
		rbar: mk(n), v: mk(n), yi: mk(n), gy: mk(n), ynew: mk(n),
		gpTmp: mk(m), zero: mk(m)}
	for range sv.s {
		rp.kbar = append(rp.kbar, mk(n))
	}
	return rp, nil
}

// start prepares a step from (t, y): the state, f, J and f_t there.
func (rp *Replayer) start(t float64, y, p []float64) {
	sv := rp.sv
	copy(sv.y, y)
	sv.cfg.F(t, y, p, sv.f0)
	sv.cfg.JacY(t, y, p, sv.jac)
	sv.fillFt(t, y, p)
}

// Forward recomputes the states of ms from y0 at parameters p with the
// recorded step sizes, overwriting ms.Y, and writes the final state into
// yOut and the states at the save times into saved (ivp.Walk.Forward:
// on a checkpointed mesh it overwrites the checkpoints).
func (rp *Replayer) Forward(ms *ivp.Mesh, y0, p, save, yOut, saved []float64) {
	rp.walk.Forward(replayStep{rp}, ms, rp.sv.dim, y0, p, save, yOut, saved)
}

// Reverse runs the discrete adjoint of the replay of ms at parameters p
// (ms.Y must hold the states at p), as erk.Replayer.Reverse does: given
// the cotangents of the final state and of the saved states, it writes
// ∂L/∂y0 into gy0 and ∂L/∂p into gp (ivp.Walk.Reverse). With DenseSave
// the save times inside a step are part of the step's reverse sweep. On
// a checkpointed mesh the walk recomputes each segment's states from
// its checkpoint first: one Rosenbrock step (f, J, f_t, the LU, the
// stages) for each step but a segment's last.
func (rp *Replayer) Reverse(ms *ivp.Mesh, p, save, cotY, cotSaved, gy0, gp []float64) {
	rp.walk.Reverse(replayStep{rp}, ms, rp.sv.dim, rp.sv.cfg.DenseSave, p, save, cotY, cotSaved, gy0, gp[:rp.m])
}

// replayStep is the Replayer's step for the walks (ivp.ForwardStepper,
// ivp.ReverseStepper).
type replayStep struct{ *Replayer }

// Step recomputes an accepted step from (t, y): f, J and f_t there, then
// the step.
func (r replayStep) Step(_ *ivp.Mesh, _ int, t, h float64, y, yn, p []float64) {
	r.start(t, y, p)
	r.sv.attempt(t, h, p, r.sv.k, r.sv.fs, nil, yn, false, &r.st)
}

// Save computes a save time inside the step as the recording solve did.
func (r replayStep) Save(dst []float64, t, h, ts float64, _, p []float64) {
	r.sv.saveAt(dst, t, h, ts, p, &r.st)
}

// ReverseStep recomputes the step's increments and reverses it, the
// dense saves inside it included.
func (r replayStep) ReverseStep(_ *ivp.Mesh, _ int, t, h float64, y, p, ynewBar, ybar, gp []float64, dense []ivp.SaveCot) {
	sv := r.sv
	r.start(t, y, p)
	sv.attempt(t, h, p, sv.k, sv.fs, nil, r.ynew, false, &r.st)
	r.reverseStep(t, h, y, p, sv.k, ynewBar, ybar, gp, dense)
}

// ReversePartial reverses the step of size ts − t from (t, y) that
// computed a save time, with the save-time arrays (J and f_t are the
// step's, from ReverseStep).
func (r replayStep) ReversePartial(t, ts float64, y, p, cot, ybar, gp []float64) {
	sv := r.sv
	hs := ts - t
	sv.attempt(t, hs, p, sv.kSave, sv.fsSave, nil, r.ynew, false, &r.st)
	r.reverseStep(t, hs, y, p, sv.kSave, cot, ybar, gp, nil)
}

// reverseStep adds to ybarOut and gp the cotangents of y and p through
// one Rosenbrock step of size h from (t, y) whose increments are k, with
// W = I − hγJ factored in sv.lu (by the attempt that computed k), and
// through the dense saves inside the step (y + Σ b_i(θ)·K_i at
// θ = (T − t)/h, whose cotangents dense lists):
//
//	K̄_i = m_i·ȳ_new + Σ_{l>i} (α_li·Ȳ_l + Γ_li·Ā_l),  R̄_i = W⁻ᵀ·K̄_i,
//	Ȳ_i = J(Y_i)ᵀ·(h·R̄_i)                 (and p̄ += J_p(Y_i)ᵀ·h·R̄_i)
//	Ā_i = h·Jᵀ·R̄_i
//	ȳ, p̄ += ∂/∂(y, p) of R̄_iᵀ·J·(h·γ·K_i + h·Σ_j Γ_ij·K_j)   (J and W depend on y, p)
//	ȳ, p̄ += ∂/∂(y, p) of h²·d_i·R̄_iᵀ·f_t
//	ȳ += ȳ_new + Σ_i Ȳ_i
func (rp *Replayer) reverseStep(t, h float64, y, p []float64, k [][]float64, ynewBar, ybarOut, gp []float64, dense []ivp.SaveCot) {
	sv := rp.sv
	tb, n := sv.tb, sv.dim
	for i := range sv.s {
		kb := rp.kbar[i]
		m := tb.M[i]
		for d := range kb {
			kb[d] = m * ynewBar[d]
		}
	}
	addTo(ybarOut, ynewBar)
	for _, e := range dense { // dense saves: y + Σ b_i(θ)·K_i
		b := sv.denseWeights((e.T - t) / h)
		for i := range sv.s {
			addScaled(rp.kbar[i], b[i], e.Cot)
		}
		addTo(ybarOut, e.Cot)
	}
	for i := sv.s - 1; i >= 0; i-- {
		rb := rp.rbar
		copy(rb, rp.kbar[i])
		sv.lu.solveT(rb)
		// The stage's f term: Y_i = y + Σ α_ij K_j.
		combineInto(rp.yi, y, tb.Alpha[i], k)
		for d := range rb {
			rp.v[d] = h * rb[d]
		}
		rp.vjp(t+float64(tb.C[i]*h), rp.yi, p, rp.v, rp.gy, rp.gpTmp)
		addTo(ybarOut, rp.gy)
		addTo(gp, rp.gpTmp)
		for j, a := range tb.Alpha[i] {
			if a != 0 {
				addScaled(rp.kbar[j], a, rp.gy)
			}
		}
		// The J·ΣΓK term: Ā_i = h·Jᵀ·R̄_i reaches the earlier increments.
		anyG := false
		for _, g := range tb.GammaOff[i] {
			if g != 0 {
				anyG = true
			}
		}
		if anyG {
			matTVec(rp.gy, sv.jac, rb, n)
			for j, g := range tb.GammaOff[i] {
				if g != 0 {
					addScaled(rp.kbar[j], h*g, rp.gy)
				}
			}
		}
		// J's own dependence on (y, p), through W and the J·ΣΓK term:
		// v = h·(γ·K_i + Σ_j Γ_ij·K_j).
		gammaSum(rp.v, tb.GammaOff[i], k)
		for d := range rp.v {
			rp.v[d] = h * (rp.v[d] + float64(tb.Gamma*k[i][d]))
		}
		rp.jvpvjp(t, y, p, rp.v, rp.zero, rb, rp.gy, rp.gpTmp)
		addTo(ybarOut, rp.gy)
		addTo(gp, rp.gpTmp)
		// The h²·d_i·f_t term.
		if di := tb.D[i]; di != 0 && rp.dfdtvjp != nil {
			c := h * h * di
			for d := range rp.v {
				rp.v[d] = c * rb[d]
			}
			rp.dfdtvjp(t, y, p, rp.v, rp.gy, rp.gpTmp)
			addTo(ybarOut, rp.gy)
			addTo(gp, rp.gpTmp)
		}
	}
}

func addTo(dst, src []float64) {
	src = src[:len(dst)]
	for i := range dst {
		dst[i] += src[i]
	}
}

// addScaled sets dst += a·src, each product rounded before the sum (no
// fused multiply–add under any GOAMD64: the lane replay's bits).
func addScaled(dst []float64, a float64, src []float64) {
	src = src[:len(dst)]
	for i := range dst {
		dst[i] += float64(a * src[i])
	}
}

// matTVec sets dst = aᵀ·x for the n×n row-major a.
func matTVec(dst, a, x []float64, n int) {
	clear(dst)
	for i := range n {
		xi := x[i]
		row := a[i*n : (i+1)*n]
		for j, v := range row {
			dst[j] += float64(v * xi)
		}
	}
}
