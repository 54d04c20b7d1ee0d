package ros

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
)

// Config fixes everything about a solve except the trajectory's data.
type Config struct {
	// Tableau is the method; it must pass Validate.
	Tableau *method.Rosenbrock
	// F is the right-hand side, JacY writes ∂f/∂y row-major and DfDt
	// writes ∂f/∂t (nil: the problem is autonomous, f_t = 0).
	F    ode.Func
	JacY func(t float64, y, p, jac []float64)
	DfDt func(t float64, y, p, out []float64)
	Dim  int
	// RTol, ATol, HMax, H0, MaxSteps and Controller mean what they mean
	// for the explicit engine (erk.Config).
	RTol, ATol []float64
	HMax, H0   float64
	MaxSteps   int
	Controller control.PI

	// NS is the number of forward-sensitivity columns (0: none). With
	// NS > 0 the state Solve integrates is augmented — y, then NS blocks
	// of Dim values, block c holding S_c = ∂y/∂θ_c — and JVP, JVPJacY
	// and SensW (the parameter direction w_c of each column: a unit
	// vector, or zero for an initial value) must be set; JVPDfDt may be
	// nil only when DfDt is. Each step is the derivative of the
	// Rosenbrock step: applying the method to (y, S) with the augmented
	// Jacobian [[J, 0], [M_c, J]], M_c = ∂(J·S_c + J_p·w_c)/∂y, gives
	// exactly the derivative of the discrete map, and its block-triangular
	// W is solved block by block with the LU of W = I − hγJ alone, so the
	// state's arithmetic, error norm and mesh are those of a plain solve.
	NS int
	// DenseSave computes save times inside a step from the method's
	// continuous extension instead of a re-step: y(t + θh) =
	// y + Σ b_i(θ)·K_i with b_i(θ) = θ·m_i + θ(1−θ)·(H1_i + θ·H2_i + θ²·H3_i)
	// (method.Rosenbrock.Dense; order 4 for Rodas5P, 2 for Rosenbrock23).
	// It costs no evaluation and no factorisation; sensitivities and the
	// reverse replay differentiate the same formula.
	DenseSave bool
	JVP       func(t float64, y, p, v, w, out []float64)
	JVPJacY   func(t float64, y, p, v, w, jac []float64)
	JVPDfDt   func(t float64, y, p, v, w, out []float64)
	SensW     [][]float64
}

// Solver holds a configuration and the work arrays of one trajectory.
type Solver struct {
	cfg  Config
	tb   *method.Rosenbrock
	s    int
	dim  int
	fsal bool // the last stage's input is y_new at t + h: its f starts the next step

	k      [][]float64 // increments K_i
	fs     [][]float64 // f at each stage input
	y, y1  []float64
	yt     []float64 // stage input
	acc    []float64 // Σ Γ_ij K_j, then the right-hand side of a stage
	jv     []float64 // J·acc
	ev     []float64
	jac    []float64 // J at (t, y)
	ft     []float64 // ∂f/∂t at (t, y)
	lu     lu        // W = I − hγJ and its LU factors
	f0     []float64 // f(t, y)
	kSave  [][]float64
	fsSave [][]float64

	// Sensitivities, per column c: increments l[c][i], M_c, ∂_t of the
	// tangent, and scratch.
	l, lSave [][][]float64
	mc       [][]float64
	ftc      [][]float64
	accL, g  []float64
	sIn      []float64
	bTheta   []float64 // dense-output weights b_i(θ)

	// stages is the generated kernel of the method (kernels.go), nil for
	// a method without one; generic makes attempt ignore it (tests).
	stages  func(sv *Solver, t, h float64, p []float64, k, fs [][]float64, ynew []float64)
	generic bool

	loop  ivp.Loop     // the driver's part of the configuration (ivp.Solve)
	norm  control.Norm // the error norm, of ev
	fresh bool         // J and f_t belong to (t, y)
}

// New validates cfg and returns a Solver with its work arrays.
func New(cfg Config) (*Solver, error) {
	tb := cfg.Tableau
	if tb == nil {
		return nil, fmt.Errorf("ros: nil tableau")
	}
	if err := tb.Validate(); err != nil {
		return nil, err
	}
	switch {
	case cfg.F == nil || cfg.JacY == nil:
		return nil, fmt.Errorf("ros: %s needs the right-hand side and its Jacobian (ode.Programs.JacY)", tb.Name)
	case cfg.Dim < 1:
		return nil, fmt.Errorf("ros: Dim = %d: must be ≥ 1", cfg.Dim)
	case len(cfg.RTol) != cfg.Dim || len(cfg.ATol) != cfg.Dim:
		return nil, fmt.Errorf("ros: %d rtol and %d atol values for Dim = %d", len(cfg.RTol), len(cfg.ATol), cfg.Dim)
	case cfg.MaxSteps < 1:
		return nil, fmt.Errorf("ros: MaxSteps = %d: must be ≥ 1", cfg.MaxSteps)
	case cfg.DenseSave && len(tb.Dense) != 3:
		return nil, fmt.Errorf("ros: DenseSave: %s has no continuous extension", tb.Name)
	case cfg.HMax < 0 || math.IsNaN(cfg.HMax):
		return nil, fmt.Errorf("ros: HMax = %g: must be ≥ 0", cfg.HMax)
	case cfg.H0 < 0 || math.IsNaN(cfg.H0) || math.IsInf(cfg.H0, 0):
		return nil, fmt.Errorf("ros: H0 = %g: must be finite and ≥ 0", cfg.H0)
	}
	if cfg.HMax == 0 {
		cfg.HMax = math.Inf(1)
	}
	s, n := tb.Stages(), cfg.Dim
	sv := &Solver{cfg: cfg, tb: tb, s: s, dim: n, fsal: tb.FSAL(), stages: kernelFor(tb)}
	mk := func() []float64 { return make([]float64, n) }
	mks := func() [][]float64 {
		v := make([][]float64, s)
		for i := range v {
			v[i] = mk()
		}
		return v
	}
	sv.k, sv.fs, sv.kSave, sv.fsSave = mks(), mks(), mks(), mks()
	sv.y, sv.y1, sv.yt, sv.acc, sv.jv, sv.ev, sv.ft, sv.f0 = mk(), mk(), mk(), mk(), mk(), mk(), mk(), mk()
	sv.jac, sv.lu = make([]float64, n*n), newLU(n)
	sv.bTheta = make([]float64, s)
	if ns := cfg.NS; ns > 0 {
		if cfg.JVP == nil || cfg.JVPJacY == nil || (cfg.DfDt != nil && cfg.JVPDfDt == nil) || len(cfg.SensW) != ns {
			return nil, fmt.Errorf("ros: %d sensitivity columns need JVP, JVPJacY (the second-derivative program), JVPDfDt for a non-autonomous problem, and %d parameter directions", ns, ns)
		}
		na := n * (1 + ns)
		sv.y, sv.y1 = make([]float64, na), make([]float64, na)
		for range ns {
			sv.l, sv.lSave = append(sv.l, mks()), append(sv.lSave, mks())
			sv.mc = append(sv.mc, make([]float64, n*n))
			sv.ftc = append(sv.ftc, mk())
		}
		sv.accL, sv.g, sv.sIn = mk(), mk(), mk()
	}
	sv.norm = control.Norm{E: sv.ev, ATol: cfg.ATol, RTol: cfg.RTol}
	sv.loop = ivp.Loop{F: cfg.F, Dim: n, Order: tb.Order, RTol: cfg.RTol, ATol: cfg.ATol,
		HMax: cfg.HMax, H0: cfg.H0, MaxSteps: cfg.MaxSteps, Controller: cfg.Controller}
	return sv, nil
}

// Solve integrates one trajectory and writes its results into out, as
// erk.Solver.Solve does (the adaptive loop is ivp.Solve's);
// out.Stats.JacEvals and LUs count Jacobian evaluations and
// factorisations.
func (sv *Solver) Solve(tr *ivp.Trajectory, out *ivp.Output, stop *atomic.Bool) {
	ivp.Solve(stepper{sv}, &sv.loop, tr, out, stop)
}

// stepper is the Solver's part of the adaptive loop (ivp.Stepper).
type stepper struct{ *Solver }

// Start marks J stale and hands the driver the (augmented) state, the
// proposal, f0 for f(t0, y0) and the stage input as scratch.
func (s stepper) Start() ivp.Arrays {
	sv := s.Solver
	sv.fresh = false
	return ivp.Arrays{Y: &sv.y, Y1: &sv.y1, F0: sv.f0, Work: sv.yt}
}

// Attempt completes the accepted step that ended at t when moved,
// evaluates J and f_t (and the sensitivities' M_c, ∂_t of the tangents)
// at (t, y) unless they are already there, then tries the step.
func (s stepper) Attempt(t, h float64, p []float64, moved bool, st *ode.Stats) (float64, bool) {
	sv := s.Solver
	if moved {
		s.Advance(t, p, true, st)
	}
	if !sv.fresh {
		cfg, dim, y := &sv.cfg, sv.dim, sv.y
		cfg.JacY(t, y[:dim], p, sv.jac)
		sv.fillFt(t, y[:dim], p)
		for c := range cfg.NS {
			sc := y[dim*(1+c) : dim*(2+c)]
			cfg.JVPJacY(t, y[:dim], p, sc, cfg.SensW[c], sv.mc[c])
			if cfg.JVPDfDt != nil {
				cfg.JVPDfDt(t, y[:dim], p, sc, cfg.SensW[c], sv.ftc[c])
			}
		}
		st.JacEvals++
		sv.fresh = true
	}
	return sv.attempt(t, h, p, sv.k, sv.fs, sv.l, sv.y1, true, st)
}

// Save computes a save time inside the step (saveAt).
func (s stepper) Save(dst []float64, t, h, ts float64, p []float64, st *ode.Stats) {
	s.saveAt(dst, t, h, ts, p, st)
}

// Advance carries the last stage's f into the next step (FSAL), or
// evaluates f at the new point, and marks J stale.
func (s stepper) Advance(tEnd float64, p []float64, next bool, st *ode.Stats) {
	sv := s.Solver
	switch {
	case sv.fsal:
		copy(sv.f0, sv.fs[sv.s-1])
	case next:
		sv.cfg.F(tEnd, sv.y[:sv.dim], p, sv.f0)
		st.FEvals++
	}
	sv.fresh = false
}

// saveAt writes into dst the solution at ts inside the step of size h
// from (t, sv.y) whose increments are sv.k (and sv.l for the
// sensitivity columns): the continuous extension with DenseSave, else a
// step of size ts − t from (t, sv.y) with the save-time arrays.
func (sv *Solver) saveAt(dst []float64, t, h, ts float64, p []float64, st *ode.Stats) {
	if sv.cfg.DenseSave {
		sv.dense(dst, (ts-t)/h, sv.k, sv.l)
		return
	}
	sv.attempt(t, ts-t, p, sv.kSave, sv.fsSave, sv.lSave, dst, false, st)
}

// fillFt sets f_t at (t, y): zero for an autonomous problem.
func (sv *Solver) fillFt(t float64, y, p []float64) {
	if sv.cfg.DfDt == nil {
		clear(sv.ft)
		return
	}
	sv.cfg.DfDt(t, y, p, sv.ft)
}

// attempt takes one step of size h from (t, sv.y) with the Jacobian and
// f_t in sv.jac and sv.ft (and M_c, ∂_t of the tangents in sv.mc,
// sv.ftc), writing the increments into k (and l), the stage values of f
// into fs and the result into ynew. With the error test it returns the
// scaled error norm of the state; ok is false if W is singular or a
// value is not finite.
func (sv *Solver) attempt(t, h float64, p []float64, k, fs [][]float64, l [][][]float64, ynew []float64, errTest bool, st *ode.Stats) (err float64, ok bool) {
	tb, n := sv.tb, sv.dim
	y := sv.y[:n]
	// W = I − h·γ·J, factored once for all stages (and all columns).
	hg := h * tb.Gamma
	for i := range n {
		for j := range n {
			v := -float64(hg * sv.jac[i*n+j])
			if i == j {
				v += 1
			}
			sv.lu.a[i*n+j] = v
		}
	}
	st.LUs++
	if !sv.lu.factor() {
		return math.Inf(1), false
	}
	if sv.cfg.NS == 0 && sv.stages != nil && !sv.generic {
		sv.stages(sv, t, h, p, k, fs, ynew)
		st.FEvals += sv.s - 1
	} else {
		sv.genericStages(t, h, p, k, fs, l, ynew, st)
	}
	if !errTest {
		if !control.Finite(ynew) {
			return math.Inf(1), false
		}
		return 0, true
	}
	clear(sv.ev)
	for i, e := range tb.E {
		if e != 0 {
			for d := range sv.ev {
				sv.ev[d] += float64(e * k[i][d])
			}
		}
	}
	// The increments include h already: the norm's h is 1. A proposal
	// with a value that is not finite is rejected there.
	return sv.norm.Of(1, y, ynew)
}

// genericStages is attempt's stage loop for any method, with the
// sensitivity columns: the increments into k (and l), f at the stage
// inputs into fs and y_new into ynew, with W's factors in sv.lu. The
// generated kernels (kernels_gen.go) do the same operations in the same
// order for the state alone.
func (sv *Solver) genericStages(t, h float64, p []float64, k, fs [][]float64, l [][][]float64, ynew []float64, st *ode.Stats) {
	tb, n, f := sv.tb, sv.dim, sv.cfg.F
	y := sv.y[:n]
	h2 := h * h
	for i := range sv.s {
		// Stage input and f there (the first stage reuses f(t, y)).
		if i == 0 {
			copy(fs[0], sv.f0)
		} else {
			combineInto(sv.yt, y, tb.Alpha[i], k)
			f(t+float64(tb.C[i]*h), sv.yt, p, fs[i])
			st.FEvals++
		}
		// Σ Γ_ij K_j, then K_i from h·f + h·J·ΣΓK + h²·d_i·f_t.
		anyG := gammaSum(sv.acc, tb.GammaOff[i], k)
		ki := k[i]
		if anyG {
			matVec(sv.jv, sv.jac, sv.acc, n)
			for d := range ki {
				ki[d] = float64(h*fs[i][d]) + float64(h*sv.jv[d])
			}
		} else {
			for d := range ki {
				ki[d] = h * fs[i][d]
			}
		}
		di := tb.D[i]
		if di != 0 {
			c := h2 * di
			for d := range ki {
				ki[d] += float64(c * sv.ft[d])
			}
		}
		sv.lu.solve(ki)
		// Sensitivity columns: the same stage, differentiated.
		//   W·L_i = h·G_i + h·M_c·(ΣΓK + γ·K_i) + h·J·ΣΓL + h²·d_i·∂_t(tangent)
		// with G_i = J(Y_i)·S_i + J_p(Y_i)·w_c at the stage's input.
		for c := range sv.cfg.NS {
			lc := l[c]
			sc := sv.y[n*(1+c) : n*(2+c)]
			stageY := y
			if i > 0 {
				stageY = sv.yt
			}
			combineInto(sv.sIn, sc, tb.Alpha[i], lc)
			sv.cfg.JVP(t+float64(tb.C[i]*h), stageY, p, sv.sIn, sv.cfg.SensW[c], sv.g)
			st.FEvals++
			li := lc[i]
			for d := range li { // sv.acc is ΣΓK (zero when no Γ_ij)
				sv.accL[d] = sv.acc[d] + float64(tb.Gamma*ki[d])
			}
			matVec(sv.jv, sv.mc[c], sv.accL, n)
			for d := range li {
				li[d] = float64(h*sv.g[d]) + float64(h*sv.jv[d])
			}
			if gammaSum(sv.accL, tb.GammaOff[i], lc) {
				matVec(sv.jv, sv.jac, sv.accL, n)
				for d := range li {
					li[d] += float64(h * sv.jv[d])
				}
			}
			if di != 0 {
				cc := h2 * di
				for d := range li {
					li[d] += float64(cc * sv.ftc[c][d])
				}
			}
			sv.lu.solve(li)
		}
	}
	combineInto(ynew[:n], y, tb.M, k)
	for c := range sv.cfg.NS {
		combineInto(ynew[n*(1+c):n*(2+c)], sv.y[n*(1+c):n*(2+c)], tb.M, l[c])
	}
}

// denseWeights sets sv.bTheta to the continuous extension's weights
// b_i(θ) = θ·m_i + θ(1−θ)·(H1_i + θ·H2_i + θ²·H3_i).
func (sv *Solver) denseWeights(theta float64) []float64 {
	tb := sv.tb
	for i := range sv.s {
		// Every product is rounded on its own (float64(…)): Go may
		// otherwise fuse a product and a sum into one multiply–add on
		// targets that have it (arm64, amd64 v3), and the bits would
		// then differ between machines and from the CUDA kernels.
		h := tb.Dense[0][i] + float64(theta*(tb.Dense[1][i]+float64(theta*tb.Dense[2][i])))
		sv.bTheta[i] = float64(theta*tb.M[i]) + float64(float64(theta*(1-theta))*h)
	}
	return sv.bTheta
}

// dense writes the continuous extension at θ of the step whose
// increments are k (and l for the sensitivity columns) into dst.
func (sv *Solver) dense(dst []float64, theta float64, k [][]float64, l [][][]float64) {
	n := sv.dim
	b := sv.denseWeights(theta)
	combineInto(dst[:n], sv.y[:n], b, k)
	for c := range sv.cfg.NS {
		combineInto(dst[n*(1+c):n*(2+c)], sv.y[n*(1+c):n*(2+c)], b, l[c])
	}
}

// combineInto sets dst = base + Σ_j w_j·v_j over the nonzero weights.
func combineInto(dst, base, w []float64, v [][]float64) {
	copy(dst, base)
	for j, a := range w {
		if a != 0 {
			vj := v[j]
			for d := range dst {
				dst[d] += float64(a * vj[d])
			}
		}
	}
}

// gammaSum sets acc = Σ_j g_j·v_j, summed from the first nonzero term
// (as the generated kernels do), and reports whether any g_j ≠ 0; with
// none, acc is zero.
func gammaSum(acc, g []float64, v [][]float64) bool {
	any := false
	for j, a := range g {
		if a == 0 {
			continue
		}
		vj := v[j]
		if !any {
			for d := range acc {
				acc[d] = float64(a * vj[d])
			}
			any = true
			continue
		}
		for d := range acc {
			acc[d] += float64(a * vj[d])
		}
	}
	if !any {
		clear(acc)
	}
	return any
}

func matVec(dst, a, x []float64, n int) {
	for i := range n {
		var s float64
		row := a[i*n : (i+1)*n]
		for j, v := range row {
			s += float64(v * x[j])
		}
		dst[i] = s
	}
}
