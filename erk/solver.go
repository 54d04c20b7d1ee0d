package erk

import (
	"fmt"
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
)

// Config fixes everything about a solve except the trajectory's own data.
type Config struct {
	// Tableau is the method. Required; it must pass Validate.
	Tableau *method.Tableau
	// F is the right-hand side, Dim the state dimension.
	F   ode.Func
	Dim int
	// RTol and ATol are per-component tolerances (length Dim), all > 0.
	RTol, ATol []float64
	// NormDim is the number of leading components that take part in the
	// error norm and the initial-step norms; 0 means all Dim. The others
	// (sensitivities appended to the state) are integrated on the mesh
	// the leading ones choose, and checked only for being finite.
	NormDim int
	// HMax bounds |h|; +Inf or 0 means no bound beyond |t1 − t0|.
	HMax float64
	// H0 is the first step size to try; 0 means automatic (see
	// control.InitialStep).
	H0 float64
	// MaxSteps is the step budget: accepted plus rejected attempts. It
	// must be ≥ 1.
	MaxSteps int
	// Controller is the step-size controller.
	Controller control.PI
}

// coef is one nonzero coefficient of a tableau row.
type coef struct {
	j int
	a float64
}

// Solver holds a configuration and the work arrays of one trajectory.
type Solver struct {
	cfg Config
	s   int // stages
	dim int

	rows  [][]coef // nonzero a_ij per stage i
	b     []coef   // nonzero b_i
	e, e3 []coef   // nonzero error weights
	c     []float64
	fsal  bool
	// stages is the generated kernel of the method (kernels.go), nil for
	// a tableau without one; generic makes attempt ignore it (tests).
	stages  func(sv *Solver, t, h float64, p []float64, nd int)
	generic bool
	defer_  bool // FSAL with zero error weight on the last stage: evaluate it only once accepted
	// attemptEvals is the number of f evaluations of one step attempt:
	// the stages after the first, less a deferred last one.
	attemptEvals int
	lastB        int // last stage with b_i ≠ 0 (stages after it only feed the error)

	k     [][]float64 // stages, k[i] has length dim
	kSave [][]float64 // stages of save-time re-steps
	y     []float64
	y1    []float64
	yt    []float64 // stage input
	ev    []float64 // error vector (DOP853: 5th-order part)
	ev3   []float64 // DOP853: 3rd-order part

	// jit is the stage sums as machine code (jitstages.go), or nil;
	// jargs the addresses its code reads; h, t and plen the step size,
	// time and len(p) it reads.
	jit   *jitStages
	jargs [16]unsafe.Pointer
	h, t  float64
	plen  int
	// squared: the stages left the terms of the error norm in ev and
	// ev3 (see stageGen.norm).
	squared bool
}

// New validates cfg and returns a Solver with its work arrays allocated.
func New(cfg Config) (*Solver, error) {
	tb := cfg.Tableau
	if err := tb.Validate(); err != nil {
		return nil, err
	}
	switch {
	case cfg.F == nil:
		return nil, fmt.Errorf("erk: nil right-hand side")
	case cfg.Dim < 1:
		return nil, fmt.Errorf("erk: Dim = %d: must be ≥ 1", cfg.Dim)
	case len(cfg.RTol) != cfg.Dim || len(cfg.ATol) != cfg.Dim:
		return nil, fmt.Errorf("erk: %d rtol and %d atol values for Dim = %d", len(cfg.RTol), len(cfg.ATol), cfg.Dim)
	case cfg.NormDim < 0 || cfg.NormDim > cfg.Dim:
		return nil, fmt.Errorf("erk: NormDim = %d: must be in [0, Dim = %d]", cfg.NormDim, cfg.Dim)
	case cfg.MaxSteps < 1:
		return nil, fmt.Errorf("erk: MaxSteps = %d: must be ≥ 1", cfg.MaxSteps)
	case cfg.HMax < 0 || math.IsNaN(cfg.HMax):
		return nil, fmt.Errorf("erk: HMax = %g: must be ≥ 0", cfg.HMax)
	case cfg.H0 < 0 || math.IsNaN(cfg.H0) || math.IsInf(cfg.H0, 0):
		return nil, fmt.Errorf("erk: H0 = %g: must be finite and ≥ 0", cfg.H0)
	}
	for i := range cfg.Dim {
		if !(cfg.RTol[i] > 0) || !(cfg.ATol[i] > 0) || math.IsInf(cfg.RTol[i], 0) || math.IsInf(cfg.ATol[i], 0) {
			return nil, fmt.Errorf("erk: component %d: rtol = %g, atol = %g: both must be finite and > 0", i, cfg.RTol[i], cfg.ATol[i])
		}
	}
	if cfg.HMax == 0 {
		cfg.HMax = math.Inf(1)
	}
	if cfg.NormDim == 0 {
		cfg.NormDim = cfg.Dim
	}
	s, dim := tb.Stages(), cfg.Dim
	sv := &Solver{cfg: cfg, s: s, dim: dim, c: tb.C, fsal: tb.FSAL()}
	sv.rows = make([][]coef, s)
	for i := 1; i < s; i++ {
		sv.rows[i] = nonzero(tb.A[i])
	}
	sv.b = nonzero(tb.B)
	sv.e = nonzero(tb.E)
	if tb.Kind == method.ErrorDOP853 {
		sv.e3 = nonzero(tb.E3)
	}
	sv.stages = kernelFor(tb)
	sv.defer_ = sv.fsal && tb.E[s-1] == 0 && (tb.E3 == nil || tb.E3[s-1] == 0)
	sv.lastB = sv.b[len(sv.b)-1].j
	sv.attemptEvals = s - 1
	if sv.defer_ {
		sv.attemptEvals--
	}
	flat := make([]float64, 2*s*dim+5*dim)
	sv.k, flat = split(flat, s, dim)
	sv.kSave, flat = split(flat, s, dim)
	sv.y, sv.y1, sv.yt, sv.ev, sv.ev3 = flat[:dim], flat[dim:2*dim], flat[2*dim:3*dim], flat[3*dim:4*dim], flat[4*dim:5*dim]
	if sv.jit = stagesJITFor(sv, tb); sv.jit != nil {
		sv.setJITArgs()
		sv.stages = (*Solver).stagesJIT
	}
	return sv, nil
}

func nonzero(v []float64) []coef {
	var out []coef
	for j, a := range v {
		if a != 0 {
			out = append(out, coef{j, a})
		}
	}
	return out
}

func split(flat []float64, s, dim int) ([][]float64, []float64) {
	k := make([][]float64, s)
	for i := range k {
		k[i] = flat[i*dim : (i+1)*dim : (i+1)*dim]
	}
	return k, flat[s*dim:]
}

// stopEvery is how many step attempts pass between checks of the stop
// flag: often enough to stop within microseconds, rarely enough to cost
// nothing.
const stopEvery = 64

// Solve integrates one trajectory and writes its results into out. stop,
// if not nil, is polled every few steps; when it is set the solve ends
// with status Cancelled. On failure out.Y holds the last accepted state
// and save times not reached hold NaN.
func (sv *Solver) Solve(tr *ivp.Trajectory, out *ivp.Output, stop *atomic.Bool) {
	cfg := &sv.cfg
	f, p, dim := cfg.F, tr.P, sv.dim
	t0, t1 := tr.T0, tr.T1
	dir := 1.0
	if t1 < t0 {
		dir = -1
	}
	span := math.Abs(t1 - t0)
	hmax := math.Min(cfg.HMax, span)

	y, y1, k := sv.y, sv.y1, sv.k
	copy(y, tr.Y0)
	out.Stats = ode.Stats{}
	out.T, out.H = t0, 0
	st := &out.Stats
	for i := range out.Saved {
		out.Saved[i] = math.NaN()
	}
	if out.Mesh != nil {
		out.Mesh.Reset(t0, y)
	}
	nsave, isave := len(tr.Save), 0
	for isave < nsave && tr.Save[isave] == t0 {
		copy(out.Saved[isave*dim:(isave+1)*dim], y)
		isave++
	}

	finish := func(status ode.Status, t, h float64) {
		copy(out.Y, y)
		out.T, out.H, out.Status = t, h, status
	}

	f(t0, y, p, k[0])
	st.FEvals++
	if !allFinite(k[0]) {
		finish(ode.NonFinite, t0, 0)
		return
	}

	h := cfg.H0
	if h == 0 {
		var n int
		nd := cfg.NormDim
		h, n = control.InitialStep(f, p, t0, dir, y, k[0], sv.cfg.Tableau.Order, cfg.ATol[:nd], cfg.RTol[:nd], hmax, y1, sv.yt)
		st.FEvals += n
	}
	h = dir * math.Min(h, hmax)

	ctl := &cfg.Controller
	var cst control.State
	ctl.Init(&cst)
	t := t0
	nonFinite := false // the last rejection was a non-finite trial
	for {
		if st.Accepted+st.Rejected >= cfg.MaxSteps {
			finish(ode.MaxStepsReached, t, h)
			return
		}
		if stop != nil && (st.Accepted+st.Rejected)%stopEvery == 0 && stop.Load() {
			finish(ode.Cancelled, t, h)
			return
		}
		last := false
		if rem := t1 - t; dir*(t+1.01*h-t1) >= 0 {
			h, last = rem, true
		}
		// The step-size floor is measured at the current time: a step
		// below control.MinStep(t) (4ε·|t|, a few ulps of t; 2^−1022 near
		// t = 0) no longer changes t meaningfully. It only decides
		// failure: the steps taken above it are those of the controller.
		if math.Abs(h) < control.MinStep(t) || t+h == t || math.IsNaN(h) {
			if nonFinite {
				finish(ode.NonFinite, t, h)
			} else {
				finish(ode.StepUnderflow, t, h)
			}
			return
		}

		err, ok := sv.attempt(t, h, p, st)
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
		// Save times inside (t, tn]: one step of the method from (t, y).
		for isave < nsave && dir*(tr.Save[isave]-tn) <= 0 {
			dst := out.Saved[isave*dim : (isave+1)*dim]
			if tr.Save[isave] == tn {
				copy(dst, y1)
			} else {
				sv.restep(t, tr.Save[isave]-t, p, dst)
				st.FEvals += sv.lastB
			}
			isave++
		}
		recorded := true
		if out.Mesh != nil && out.Mesh.KeepStages {
			recorded = out.Mesh.PushStages(k[:sv.lastB+1])
		}
		if sv.fsal {
			if sv.defer_ {
				f(t+h, y1, p, k[sv.s-1])
				st.FEvals++
			}
			k[0], k[sv.s-1] = k[sv.s-1], k[0]
		}
		sv.y, sv.y1 = y1, y
		y, y1 = sv.y, sv.y1
		t = tn
		if out.Mesh != nil && !(recorded && out.Mesh.Push(h, t, y)) {
			// The mesh may not grow (Mesh.Grow refused): the
			// recording, and the solve with it, stops here.
			finish(ode.Cancelled, t, h)
			return
		}
		if last {
			finish(ode.Success, t, h)
			return
		}
		if !sv.fsal {
			f(t, y, p, k[0])
			st.FEvals++
		}
		h *= factor
		if math.Abs(h) > hmax {
			h = dir * hmax
		}
	}
}

// attempt computes the stages of one step of size h from (t, sv.y) into
// sv.k and the proposed state into sv.y1, and returns the scaled error
// norm. ok is false when the proposed state or the error is not finite.
func (sv *Solver) attempt(t, h float64, p []float64, st *ode.Stats) (err float64, ok bool) {
	dim, nd := sv.dim, sv.cfg.NormDim
	st.FEvals += sv.attemptEvals
	sv.squared = false
	if sv.stages != nil && !sv.generic {
		sv.stages(sv, t, h, p, nd)
	} else {
		sv.genericStages(t, h, p, nd)
	}
	rtol, atol := sv.cfg.RTol[:nd], sv.cfg.ATol[:nd]
	ev, ev3 := sv.ev[:nd], sv.ev3[:nd]
	y, y1 := sv.y[:nd], sv.y1[:dim]
	var sum5, sum3, fin float64
	for _, v := range y1[nd:] {
		fin += v - v // components outside the norm must still be finite
	}
	switch {
	case sv.squared:
		// The machine code left r² in ev and ev3 (stageGen.norm).
		for d := range ev {
			sum5 += ev[d]
			fin += y1[d] - y1[d]
		}
		if sv.e3 != nil {
			for _, r2 := range ev3 {
				sum3 += r2
			}
		}
	case sv.e3 == nil:
		for d := range ev {
			sc := atol[d] + float64(rtol[d]*control.MaxAbs(y[d], y1[d]))
			r := float64(h*ev[d]) / sc
			sum5 += float64(r * r)
			fin += y1[d] - y1[d] // 0 if finite, NaN otherwise
		}
	default:
		for d := range ev {
			sc := atol[d] + float64(rtol[d]*control.MaxAbs(y[d], y1[d]))
			r := float64(h*ev[d]) / sc
			r3 := float64(h*ev3[d]) / sc
			sum5 += float64(r * r)
			sum3 += float64(r3 * r3)
			fin += y1[d] - y1[d]
		}
	}
	n := float64(nd)
	if sv.e3 == nil {
		err = math.Sqrt(sum5 / n)
	} else {
		// Hairer's DOP853 norm (method.ErrorDOP853).
		den := sum5 + 0.01*sum3
		if den > 0 {
			err = sum5 / math.Sqrt(n*den)
		}
	}
	if fin != 0 || math.IsNaN(err) || math.IsInf(err, 0) {
		return math.Inf(1), false
	}
	return err, true
}

// genericStages is attempt's stage computation for any tableau: the
// stages of a step of size h from (t, sv.y) into sv.k, the proposed
// state into sv.y1 and the error vector(s) over the first nd components
// into sv.ev (and sv.ev3). The generated kernels (kernels_gen.go) do the
// same operations in the same order.
func (sv *Solver) genericStages(t, h float64, p []float64, nd int) {
	f, s := sv.cfg.F, sv.s
	y, y1, yt, k := sv.y, sv.y1, sv.yt, sv.k
	// Stages 2..s (stage 1 is k[0], already known). For an FSAL method
	// the last stage's input is the proposed state itself, since its row
	// of A equals b; it is built into y1 directly.
	end := s
	if sv.fsal {
		end = s - 1
	}
	for i := 1; i < end; i++ {
		stageInput(yt, y, h, sv.rows[i], k)
		f(t+float64(sv.c[i]*h), yt, p, k[i])
	}
	if sv.fsal {
		stageInput(y1, y, h, sv.rows[s-1], k)
		if !sv.defer_ {
			f(t+h, y1, p, k[s-1])
		}
	} else {
		stageInput(y1, y, h, sv.b, k)
	}
	combine(sv.ev[:nd], sv.e, k)
	if sv.e3 != nil {
		combine(sv.ev3[:nd], sv.e3, k)
	}
}

// combine sets dst = Σ a_j·k_j over the given coefficients (at least
// one), summing over j in ascending order, one coefficient at a time so
// the inner loop walks contiguous memory. dst must not alias any k_j.
func combine(dst []float64, row []coef, k [][]float64) {
	n := len(dst)
	c0 := row[0]
	k0 := k[c0.j][:n]
	for d := range dst {
		dst[d] = float64(c0.a * k0[d])
	}
	for _, c := range row[1:] {
		kj := k[c.j][:n]
		for d := range dst {
			dst[d] += float64(c.a * kj[d])
		}
	}
}

// stageInput sets dst = y + h·Σ a_j·k_j (see combine). dst must not
// alias y or any k_j.
func stageInput(dst, y []float64, h float64, row []coef, k [][]float64) {
	combine(dst, row, k)
	y = y[:len(dst)]
	for d := range dst {
		dst[d] = y[d] + float64(h*dst[d])
	}
}

// restep takes one step of size hs from (t, sv.y), whose first stage is
// sv.k[0], and writes the solution into dst. It uses its own stage
// arrays, so the accepted step's stages stay intact. Stages after the
// last nonzero weight of b are skipped.
func (sv *Solver) restep(t, hs float64, p []float64, dst []float64) {
	f, y, ks := sv.cfg.F, sv.y, sv.kSave
	ks[0] = sv.k[0]
	for i := 1; i <= sv.lastB; i++ {
		stageInput(sv.yt, y, hs, sv.rows[i], ks)
		f(t+float64(sv.c[i]*hs), sv.yt, p, ks[i])
	}
	stageInput(dst, y, hs, sv.b, ks)
}

func allFinite(v []float64) bool {
	var s float64
	for _, x := range v {
		s += x - x
	}
	return s == 0
}
