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
	ybar, ynext []float64
	gpTmp, zero []float64
	owner       []int
	st          ode.Stats
	extra       []denseCot // dense saves of the step being reversed
}

// denseCot is the cotangent of a dense save at θ within a step.
type denseCot struct {
	theta float64
	cot   []float64
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
		rbar: mk(n), v: mk(n), yi: mk(n), gy: mk(n), ynew: mk(n), ybar: mk(n), ynext: mk(n),
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
// yOut and the states at the save times into saved.
func (rp *Replayer) Forward(ms *ivp.Mesh, y0, p, save, yOut, saved []float64) {
	sv := rp.sv
	n := sv.dim
	copy(ms.Y[:n], y0)
	isave := 0
	for isave < len(save) && save[isave] == ms.T[0] {
		copy(saved[isave*n:], y0)
		isave++
	}
	for step, h := range ms.H {
		t, tn := ms.T[step], ms.T[step+1]
		y := ms.Y[step*n : (step+1)*n]
		yn := ms.Y[(step+1)*n : (step+2)*n]
		rp.start(t, y, p)
		sv.attempt(t, h, p, sv.k, sv.fs, nil, yn, false, &rp.st)
		dir := 1.0
		if tn < t {
			dir = -1
		}
		for isave < len(save) && dir*(save[isave]-tn) <= 0 {
			dst := saved[isave*n : (isave+1)*n]
			switch {
			case save[isave] == tn:
				copy(dst, yn)
			case sv.cfg.DenseSave:
				sv.dense(dst, (save[isave]-t)/h, sv.k, nil)
			default:
				sv.attempt(t, save[isave]-t, p, sv.kSave, sv.fsSave, nil, dst, false, &rp.st)
			}
			isave++
		}
	}
	last := len(ms.H)
	copy(yOut, ms.Y[last*n:(last+1)*n])
}

// Reverse runs the discrete adjoint of the replay of ms at parameters p
// (ms.Y must hold the states at p), as erk.Replayer.Reverse does: given
// the cotangents of the final state and of the saved states, it writes
// ∂L/∂y0 into gy0 and ∂L/∂p into gp.
func (rp *Replayer) Reverse(ms *ivp.Mesh, p, save, cotY, cotSaved, gy0, gp []float64) {
	sv := rp.sv
	n := sv.dim
	copy(rp.ybar, cotY)
	clear(gp[:rp.m])
	rp.owner = ms.SaveOwners(save, rp.owner)
	owner := rp.owner
	next := len(save) - 1
	for step := len(ms.H) - 1; step >= 0; step-- {
		t, h, tn := ms.T[step], ms.H[step], ms.T[step+1]
		y := ms.Y[step*n : (step+1)*n]
		first := next
		for first >= 0 && owner[first] == step {
			first--
		}
		for q := next; q > first; q-- {
			if save[q] == tn && cotSaved != nil {
				addTo(rp.ybar, cotSaved[q*n:(q+1)*n])
			}
		}
		rp.start(t, y, p)
		sv.attempt(t, h, p, sv.k, sv.fs, nil, rp.ynew, false, &rp.st)
		copy(rp.ynext, rp.ybar)
		clear(rp.ybar)
		// Dense saves inside the step are y + Σ b_i(θ)·K_i of the step's own
		// increments: their cotangents enter its reverse sweep.
		rp.extra = rp.extra[:0]
		if sv.cfg.DenseSave && cotSaved != nil {
			for q := next; q > first; q-- {
				if save[q] != tn {
					rp.extra = append(rp.extra, denseCot{(save[q] - t) / h, cotSaved[q*n : (q+1)*n]})
				}
			}
		}
		rp.reverseStep(t, h, y, p, sv.k, rp.ynext, rp.ybar, gp)
		for q := next; q > first; q-- {
			if save[q] != tn && cotSaved != nil && !sv.cfg.DenseSave {
				hs := save[q] - t
				sv.attempt(t, hs, p, sv.kSave, sv.fsSave, nil, rp.ynew, false, &rp.st)
				rp.extra = rp.extra[:0]
				rp.reverseStep(t, hs, y, p, sv.kSave, cotSaved[q*n:(q+1)*n], rp.ybar, gp)
			}
		}
		next = first
	}
	for q := next; q >= 0; q-- {
		if cotSaved != nil {
			addTo(rp.ybar, cotSaved[q*n:(q+1)*n])
		}
	}
	copy(gy0, rp.ybar)
}

// reverseStep adds to ybarOut and gp the cotangents of y and p through
// one Rosenbrock step of size h from (t, y) whose increments are k, with
// W = I − hγJ factored in sv.lu (by the attempt that computed k):
//
//	K̄_i = m_i·ȳ_new + Σ_{l>i} (α_li·Ȳ_l + Γ_li·Ā_l),  R̄_i = W⁻ᵀ·K̄_i,
//	Ȳ_i = J(Y_i)ᵀ·(h·R̄_i)                 (and p̄ += J_p(Y_i)ᵀ·h·R̄_i)
//	Ā_i = h·Jᵀ·R̄_i
//	ȳ, p̄ += ∂/∂(y, p) of R̄_iᵀ·J·(h·γ·K_i + h·Σ_j Γ_ij·K_j)   (J and W depend on y, p)
//	ȳ, p̄ += ∂/∂(y, p) of h²·d_i·R̄_iᵀ·f_t
//	ȳ += ȳ_new + Σ_i Ȳ_i
func (rp *Replayer) reverseStep(t, h float64, y, p []float64, k [][]float64, ynewBar, ybarOut, gp []float64) {
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
	for _, e := range rp.extra { // dense saves: y + Σ b_i(θ)·K_i
		b := sv.denseWeights(e.theta)
		for i := range sv.s {
			addScaled(rp.kbar[i], b[i], e.cot)
		}
		addTo(ybarOut, e.cot)
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
		rp.vjp(t+tb.C[i]*h, rp.yi, p, rp.v, rp.gy, rp.gpTmp)
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
			rp.v[d] = h * (rp.v[d] + tb.Gamma*k[i][d])
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

func addScaled(dst []float64, a float64, src []float64) {
	src = src[:len(dst)]
	for i := range dst {
		dst[i] += a * src[i]
	}
}

// matTVec sets dst = aᵀ·x for the n×n row-major a.
func matTVec(dst, a, x []float64, n int) {
	clear(dst)
	for i := range n {
		xi := x[i]
		row := a[i*n : (i+1)*n]
		for j, v := range row {
			dst[j] += v * xi
		}
	}
}
