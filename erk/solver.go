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
	// The stage-sum strategy New chose (see stepper): jit, else stages,
	// else the generic loops. stages is the generated kernel of the
	// method (kernels.go), nil for a tableau without one; generic
	// (tests) makes Solve use the generic loops whatever New chose.
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
	// norm is the error norm over the NormDim components of ev (and
	// ev3 for a DOP853 norm).
	norm control.Norm

	// jit is the stage sums as machine code (jitstages.go), or nil;
	// jargs the addresses its code reads (jit.Call16 loads the first
	// eight into registers); h the step size it reads.
	jit   *jitStages
	jargs [16]unsafe.Pointer
	h     float64

	// loop is the driver's part of the configuration (ivp.Solve).
	loop ivp.Loop
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
	}
	nd := cfg.NormDim
	sv.norm = control.Norm{E: sv.ev[:nd], ATol: cfg.ATol[:nd], RTol: cfg.RTol[:nd]}
	if sv.e3 != nil {
		sv.norm.E3 = sv.ev3[:nd]
	}
	sv.loop = ivp.Loop{F: cfg.F, Dim: dim, Order: tb.Order, RTol: cfg.RTol[:nd], ATol: cfg.ATol[:nd],
		HMax: cfg.HMax, H0: cfg.H0, MaxSteps: cfg.MaxSteps, Controller: cfg.Controller}
	return sv, nil
}

func nonzero(v []float64) []coef {
	n := 0
	for _, a := range v {
		if a != 0 {
			n++
		}
	}
	out := make([]coef, 0, n)
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

// Solve integrates one trajectory and writes its results into out. stop,
// if not nil, is polled every few steps; when it is set the solve ends
// with status Cancelled. On failure out.Y holds the last accepted state
// and save times not reached hold NaN. The adaptive loop is ivp.Solve's;
// the stepper is the stage-sum strategy New chose (see stepper).
func (sv *Solver) Solve(tr *ivp.Trajectory, out *ivp.Output, stop *atomic.Bool) {
	ivp.Solve(sv.stepper(), &sv.loop, tr, out, stop)
}

// attempt is one step attempt through the chosen strategy (tests).
func (sv *Solver) attempt(t, h float64, p []float64, st *ode.Stats) (err float64, ok bool) {
	return sv.stepper().Attempt(t, h, p, false, st)
}

// stepper returns the Solver as the driver's ivp.Stepper, with the
// stage-sum strategy New chose: machine code (jitStepper), a generated kernel
// (kernelStepper) or the generic loops (stepper). Each strategy is a
// type of its own whose Attempt computes the stages and returns the
// error norm through control; they share Start, Save and Advance. The
// value is a single pointer, so handing it out allocates nothing.
// generic (tests) selects the generic loops whatever New chose.
func (sv *Solver) stepper() ivp.Stepper {
	base := stepper{sv}
	switch {
	case sv.generic:
		return base
	case sv.jit != nil:
		return jitStepper{base}
	case sv.stages != nil:
		return kernelStepper{base}
	}
	return base
}

// stepper is the Solver's part of the adaptive loop (ivp.Stepper), with
// the generic loops as its stage sums.
type stepper struct{ *Solver }

// Start hands the driver the state, the proposal, k_0 for f(t0, y0), the
// stage input as InitialStep's scratch, and the stages a mesh keeps.
func (s stepper) Start() ivp.Arrays {
	sv := s.Solver
	return ivp.Arrays{Y: &sv.y, Y1: &sv.y1, F0: sv.k[0], Work: sv.yt, Keep: sv.k[:sv.lastB+1]}
}

// Attempt runs the generic loops (genericStages) and the error norm
// over the first NormDim components (control.Norm; ok is false
// when it or any component of the proposal is not finite).
func (s stepper) Attempt(t, h float64, p []float64, moved bool, st *ode.Stats) (float64, bool) {
	sv := s.begin(t, p, moved, st)
	sv.genericStages(t, h, p, sv.cfg.NormDim)
	return sv.norm.Of(h, sv.y, sv.y1)
}

// begin starts an attempt: it completes the accepted step that ended at
// t when moved (ivp.Stepper) and counts the attempt's evaluations.
func (s stepper) begin(t float64, p []float64, moved bool, st *ode.Stats) *Solver {
	if moved {
		s.Advance(t, p, true, st)
	}
	st.FEvals += s.attemptEvals
	return s.Solver
}

// Save takes one step of the method from (t, y) to ts (restep).
func (s stepper) Save(dst []float64, t, _, ts float64, p []float64, st *ode.Stats) {
	s.restep(t, ts-t, p, dst)
	st.FEvals += s.lastB
}

// Advance evaluates a deferred last stage and moves the FSAL stage into
// k_0, or for a method without FSAL evaluates k_0 at the new point.
func (s stepper) Advance(tEnd float64, p []float64, next bool, st *ode.Stats) {
	sv := s.Solver
	k := sv.k
	switch {
	case sv.fsal:
		if sv.defer_ {
			sv.cfg.F(tEnd, sv.y, p, k[sv.s-1])
			st.FEvals++
		}
		k[0], k[sv.s-1] = k[sv.s-1], k[0]
	case next:
		sv.cfg.F(tEnd, sv.y, p, k[0])
		st.FEvals++
	}
}

// kernelStepper runs the stages of an attempt in the method's generated
// kernel (kernels.go).
type kernelStepper struct{ stepper }

// Attempt runs the kernel and the error norm.
func (s kernelStepper) Attempt(t, h float64, p []float64, moved bool, st *ode.Stats) (float64, bool) {
	sv := s.begin(t, p, moved, st)
	sv.stages(sv, t, h, p, sv.cfg.NormDim)
	return sv.norm.Of(h, sv.y, sv.y1)
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
