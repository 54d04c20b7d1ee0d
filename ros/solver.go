package ros

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/erk"
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
	w      []float64 // LU factors of W
	piv    []int
	f0     []float64 // f(t, y)
	kSave  [][]float64
	fsSave [][]float64
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
	case cfg.HMax < 0 || math.IsNaN(cfg.HMax):
		return nil, fmt.Errorf("ros: HMax = %g: must be ≥ 0", cfg.HMax)
	case cfg.H0 < 0 || math.IsNaN(cfg.H0) || math.IsInf(cfg.H0, 0):
		return nil, fmt.Errorf("ros: H0 = %g: must be finite and ≥ 0", cfg.H0)
	}
	if cfg.HMax == 0 {
		cfg.HMax = math.Inf(1)
	}
	s, n := tb.Stages(), cfg.Dim
	sv := &Solver{cfg: cfg, tb: tb, s: s, dim: n, fsal: tb.FSAL()}
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
	sv.jac, sv.w = make([]float64, n*n), make([]float64, n*n)
	sv.piv = make([]int, n)
	return sv, nil
}

const stopEvery = 64

// Solve integrates one trajectory and writes its results into out, as
// erk.Solver.Solve does; out.Stats.JacEvals and LUs count Jacobian
// evaluations and factorisations.
func (sv *Solver) Solve(tr *erk.Trajectory, out *erk.Output, stop *atomic.Bool) {
	cfg := &sv.cfg
	f, p, dim := cfg.F, tr.P, sv.dim
	t0, t1 := tr.T0, tr.T1
	dir := 1.0
	if t1 < t0 {
		dir = -1
	}
	span := math.Abs(t1 - t0)
	hmin := 4 * 0x1p-52 * math.Max(math.Max(math.Abs(t0), math.Abs(t1)), span)
	hmax := math.Min(cfg.HMax, span)

	y, y1 := sv.y, sv.y1
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

	f(t0, y, p, sv.f0)
	st.FEvals++
	if !finite(sv.f0) {
		finish(ode.NonFinite, t0, 0)
		return
	}
	h := cfg.H0
	if h == 0 {
		var n int
		h, n = control.InitialStep(f, p, t0, dir, y, sv.f0, sv.tb.Order, cfg.ATol, cfg.RTol, hmax, y1, sv.yt)
		st.FEvals += n
	}
	h = dir * math.Min(h, hmax)

	ctl := &cfg.Controller
	var cst control.State
	ctl.Init(&cst)
	t := t0
	nonFinite := false
	fresh := false // J and f_t belong to (t, y)
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
		if math.Abs(h) < hmin || t+h == t || math.IsNaN(h) {
			if nonFinite {
				finish(ode.NonFinite, t, h)
			} else {
				finish(ode.StepUnderflow, t, h)
			}
			return
		}
		if !fresh {
			cfg.JacY(t, y, p, sv.jac)
			sv.fillFt(t, y, p)
			st.JacEvals++
			fresh = true
		}
		err, ok := sv.attempt(t, h, p, sv.k, sv.fs, y1, true, st)
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
		for isave < nsave && dir*(tr.Save[isave]-tn) <= 0 {
			dst := out.Saved[isave*dim : (isave+1)*dim]
			if tr.Save[isave] == tn {
				copy(dst, y1)
			} else {
				sv.attempt(t, tr.Save[isave]-t, p, sv.kSave, sv.fsSave, dst, false, st)
			}
			isave++
		}
		if sv.fsal {
			copy(sv.f0, sv.fs[sv.s-1])
		}
		sv.y, sv.y1 = y1, y
		y, y1 = sv.y, sv.y1
		t = tn
		fresh = false
		if out.Mesh != nil {
			out.Mesh.Push(h, t, y)
		}
		if last {
			finish(ode.Success, t, h)
			return
		}
		if !sv.fsal {
			f(t, y, p, sv.f0)
			st.FEvals++
		}
		h *= factor
		if math.Abs(h) > hmax {
			h = dir * hmax
		}
	}
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
// f_t in sv.jac and sv.ft, writing the increments into k, the stage
// values of f into fs and the result into ynew. With the error test it
// returns the scaled error norm; ok is false if W is singular or a value
// is not finite.
func (sv *Solver) attempt(t, h float64, p []float64, k, fs [][]float64, ynew []float64, errTest bool, st *ode.Stats) (err float64, ok bool) {
	tb, n, f := sv.tb, sv.dim, sv.cfg.F
	y := sv.y
	// W = I − h·γ·J, factored once for all stages.
	hg := h * tb.Gamma
	for i := range n {
		for j := range n {
			v := -float64(hg * sv.jac[i*n+j])
			if i == j {
				v += 1
			}
			sv.w[i*n+j] = v
		}
	}
	st.LUs++
	if !luFactor(sv.w, n, sv.piv) {
		return math.Inf(1), false
	}
	h2 := h * h
	for i := range sv.s {
		// Stage input and f there (the first stage reuses f(t, y)).
		if i == 0 {
			copy(fs[0], sv.f0)
		} else {
			copy(sv.yt, y)
			for j, a := range tb.Alpha[i] {
				if a != 0 {
					kj := k[j]
					for d := range sv.yt {
						sv.yt[d] += float64(a * kj[d])
					}
				}
			}
			f(t+tb.C[i]*h, sv.yt, p, fs[i])
			st.FEvals++
		}
		// Right-hand side h·f + h·J·Σ Γ_ij K_j + h²·d_i·f_t.
		clear(sv.acc)
		anyG := false
		for j, g := range tb.GammaOff[i] {
			if g != 0 {
				anyG = true
				kj := k[j]
				for d := range sv.acc {
					sv.acc[d] += float64(g * kj[d])
				}
			}
		}
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
		if di := tb.D[i]; di != 0 {
			c := h2 * di
			for d := range ki {
				ki[d] += float64(c * sv.ft[d])
			}
		}
		luSolve(sv.w, n, sv.piv, ki)
	}
	copy(ynew, y)
	for i, m := range tb.M {
		if m != 0 {
			for d := range ynew {
				ynew[d] += float64(m * k[i][d])
			}
		}
	}
	var fin float64
	for _, v := range ynew {
		fin += v - v
	}
	if fin != 0 {
		return math.Inf(1), false
	}
	if !errTest {
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
	rtol, atol := sv.cfg.RTol, sv.cfg.ATol
	var sum float64
	for d, e := range sv.ev {
		sc := atol[d] + float64(rtol[d]*math.Max(math.Abs(y[d]), math.Abs(ynew[d])))
		r := e / sc
		sum += float64(r * r)
	}
	err = math.Sqrt(sum / float64(n))
	if math.IsNaN(err) || math.IsInf(err, 0) {
		return math.Inf(1), false
	}
	return err, true
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

func finite(v []float64) bool {
	var s float64
	for _, x := range v {
		s += x - x
	}
	return s == 0
}
