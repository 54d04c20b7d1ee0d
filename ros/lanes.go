package ros

import (
	"fmt"
	"math"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/internal/lanecheck"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/ode"
)

// Lanes: L trajectories of one configuration side by side, each with
// its own time, step size, controller, Jacobian and factorisation
// (ivp.SolveLanes). Where the processor has AVX2 and L is a multiple of
// ode.LaneWidth, an attempt of every lane runs as machine code
// (lanesjit.go): with f's body in it where the problem's f is lane code
// of one piece (one function per attempt), else in pieces with f for
// all lanes at once (an ode.LaneFunc) or lane by lane between them; J
// and f_t (and with sensitivities the tangents, M_c and its ∂_t) are
// evaluated for a group of lanes at once where the problem has their
// lane forms, else lane by lane. Elsewhere each lane runs on a scalar
// Solver of its own. Either way each trajectory gets the bits the scalar
// Solver gives it alone (TestLanesMatchScalar, TestLanesSensMatchScalar).

// LaneSolver is the ivp.LaneStepper of Rosenbrock methods: one worker's
// L lanes.
type LaneSolver struct {
	cfg       Config
	L, dim, m int
	s         int
	fsal      bool
	// ns is the number of sensitivity columns, na = Dim·(1+ns) the
	// size of a lane's (augmented) state.
	ns, na int
	// sv holds one scalar Solver per lane where the lanes run on them
	// (code nil); with the machine code, sv[0] computes save times from
	// a lane's values.
	sv     []*Solver
	code   *laneCode
	lp     LanePrograms // the lane forms in use
	driver *ivp.LaneDriver

	// The machine code's arrays (slices of arena, laneLayout), and per
	// lane: whether J and f_t belong to its (t, y), whether its W
	// factored, its parameters.
	arena             []float64
	y, y1, f0, yt, ft []float64
	jac, h, tt, t     []float64
	p, ok, moved, err []float64
	k, fs             [][]float64
	fresh, factored   []bool
	// Whole rounds of the forward replay (lanesrounds.go): their code,
	// block and arguments, where BindReplayRounds bound them.
	rcode             *roundsCode
	rblock            *ivp.ReplayRounds
	rargs             [16]unsafe.Pointer
	pl                [][]float64
	ys, fv, jacS, ftS []float64 // one lane's state, f, J and f_t
	jacG, ftG         []float64 // J and f_t of a group (lp.JacY)
	// The sensitivity columns: each one's stage input and tangent (the
	// code's sIn and g), M_c and its ∂_t, and parameter direction w_c
	// lane-major (wl); one lane's S_c and tangent.
	sIn, gc, mc, ftc [][]float64
	wl               [][]float64
	sv1, gv          []float64
}

// LanePrograms are the lane forms of a problem's programs that a lane
// solver uses where they are set: f for ode.LaneWidth lanes at once, its
// machine code, and J and f_t for ode.LaneWidth lanes at once (lane-major:
// value i·Dim + j of J of lane l at [(i·Dim + j)·LaneWidth + l]). Each
// must give, lane by lane, the bits of the scalar program (Config.F,
// JacY, DfDt); the lane forms are checked on a few inputs and not used
// where they differ.
type LanePrograms struct {
	F          ode.LaneFunc
	Kernel     *ode.LaneKernel
	JacY, DfDt ode.LaneFunc
	// JVP, JVPJacY and JVPDfDt are Config's for ode.LaneWidth lanes at
	// once (with sensitivities; ode.Programs.JVPLanes, JVPJacYLanes,
	// JVPDfDtLanes).
	JVP, JVPJacY, JVPDfDt func(t, y, p, v, w, out []float64)
	// JVPKernel is JVP's machine code (ode.Programs.JVPKernel): with
	// sensitivities, where it, JVP, F and Kernel are all set (and agree),
	// the tangents at the stages are copied into the attempt with f's
	// body, so that the whole attempt is one function.
	JVPKernel *ode.LaneKernel
}

// NewLanes returns the lane stepper of cfg for L ≥ 1 lanes of
// trajectories with m parameters each, with the lane forms of lp where
// they are set. With sensitivity columns (cfg.NS > 0) each lane's state
// is the augmented one; f's machine code is used there only with the
// tangent program's (lp.JVPKernel), both copied into the attempt, else f
// and the tangents are evaluated from Go between the pieces of code.
func NewLanes(cfg Config, L, m int, lp LanePrograms) (*LaneSolver, error) {
	switch {
	case L < 1:
		return nil, fmt.Errorf("ros: %d lanes: must be ≥ 1", L)
	case m < 0:
		return nil, fmt.Errorf("ros: %d parameters: must be ≥ 0", m)
	}
	sv0, err := New(cfg)
	if err != nil {
		return nil, err
	}
	ls := &LaneSolver{cfg: sv0.cfg, L: L, dim: cfg.Dim, m: m, s: sv0.s, fsal: sv0.fsal, sv: []*Solver{sv0}, pl: make([][]float64, L),
		ns: cfg.NS, na: cfg.Dim * (1 + cfg.NS)}
	n := cfg.Dim
	if cfg.NS > 0 {
		if lp.JVP != nil && !lanecheck.JVPAgrees(cfg.JVP, lp.JVP, n, m, n) {
			lp.JVP = nil
		}
		if lp.JVPJacY != nil && !lanecheck.JVPAgrees(cfg.JVPJacY, lp.JVPJacY, n, m, n*n) {
			lp.JVPJacY = nil
		}
		if cfg.JVPDfDt == nil || lp.JVPDfDt != nil && !lanecheck.JVPAgrees(cfg.JVPDfDt, lp.JVPDfDt, n, m, n) {
			lp.JVPDfDt = nil
		}
		if cfg.JVPDfDt != nil && lp.JVPDfDt == nil {
			lp.JVPJacY = nil // M_c and its ∂_t lane by lane together
		}
	} else {
		lp.JVP, lp.JVPJacY, lp.JVPDfDt, lp.JVPKernel = nil, nil, nil, nil
	}
	if !jit.Enabled() || lp.F != nil && !lanecheck.FuncAgrees(cfg.F, lp.F, n, m) {
		lp.F, lp.Kernel = nil, nil
	}
	if lp.F == nil {
		lp.Kernel = nil
	}
	if cfg.NS > 0 && (lp.JVP == nil || lp.Kernel == nil || lp.JVPKernel == nil) {
		// The tangents in the code need f's body there too, and their
		// lane form checked (JVPAgrees) as the machine code they copy.
		lp.Kernel, lp.JVPKernel = nil, nil
	}
	if lp.JacY != nil && !lanecheck.OutputsAgree(cfg.JacY, lp.JacY, n, m, n*n) {
		lp.JacY = nil
	}
	if cfg.DfDt == nil || lp.DfDt != nil && !lanecheck.FuncAgrees(cfg.DfDt, lp.DfDt, n, m) {
		lp.DfDt = nil
	}
	if cfg.DfDt != nil && lp.DfDt == nil {
		lp.JacY = nil // J and f_t lane by lane together
	}
	ls.lp = lp
	if ls.code = laneCodeFor(cfg.Tableau, n, m, L, cfg.NS, lp.Kernel, lp.JVPKernel); ls.code == nil && lp.Kernel != nil {
		ls.code = laneCodeFor(cfg.Tableau, n, m, L, cfg.NS, nil, nil)
	}
	if ls.code == nil {
		for range L - 1 {
			sv, err := New(cfg)
			if err != nil {
				return nil, err
			}
			ls.sv = append(ls.sv, sv)
		}
	} else {
		ls.setArena()
	}
	ls.driver = ivp.NewLaneDriver(ls, &sv0.loop)
	return ls, nil
}

// setArena allocates the machine code's arena (aligned to 64 bytes)
// with its constants, and the slices into it.
func (ls *LaneSolver) setArena() {
	lay, L, n := ls.code.lay, ls.L, ls.dim
	buf := make([]float64, lay.size+8)
	skip := int((64 - uintptr(unsafe.Pointer(&buf[0]))%64) % 64 / 8)
	ls.arena = buf[skip : skip+lay.size]
	for i, c := range ls.code.consts {
		for w := range ode.LaneWidth {
			ls.arena[lay.consts+i*ode.LaneWidth+w] = c
		}
	}
	a := ls.arena
	ls.y, ls.y1, ls.f0, ls.yt, ls.ft = lay.y.slice(a, L), lay.y1.slice(a, L), lay.f0.slice(a, L), lay.yt.slice(a, L), lay.ft.slice(a, L)
	ls.jac, ls.h, ls.tt, ls.t = lay.jac.slice(a, L), lay.h.slice(a, L), lay.tt.slice(a, L), lay.t.slice(a, L)
	ls.p, ls.ok, ls.moved, ls.err = lay.p.slice(a, L), lay.ok.slice(a, L), lay.moved.slice(a, L), lay.err.slice(a, L)
	rtol, atol := lay.rtol.slice(a, L), lay.atol.slice(a, L)
	for l := range L {
		scatter(rtol, ls.cfg.RTol[:n], l)
		scatter(atol, ls.cfg.ATol[:n], l)
	}
	if lay.fileLen > 0 {
		for grp := range lay.G {
			copy(a[lay.files+grp*lay.fileLen:], ls.lp.Kernel.Registers())
		}
	}
	if lay.jfileLen > 0 {
		for grp := range lay.G {
			copy(a[lay.jfiles+grp*lay.jfileLen:], ls.lp.JVPKernel.Registers())
		}
	}
	if ls.lp.JacY != nil || ls.lp.JVPJacY != nil {
		ls.jacG, ls.ftG = make([]float64, n*n*ode.LaneWidth), make([]float64, n*ode.LaneWidth)
	}
	for c := range ls.ns {
		ls.sIn = append(ls.sIn, lay.sIn[c].slice(a, L))
		ls.gc = append(ls.gc, lay.g[c].slice(a, L))
		ls.mc = append(ls.mc, lay.mc[c].slice(a, L))
		ls.ftc = append(ls.ftc, lay.ftc[c].slice(a, L))
		w := lay.wc[c].slice(a, L)
		for l := range L {
			scatter(w, ls.cfg.SensW[c], l)
		}
		ls.wl = append(ls.wl, w)
	}
	if ls.ns > 0 {
		ls.sv1, ls.gv = make([]float64, n), make([]float64, n)
	}
	for i := range ls.s {
		ls.k = append(ls.k, lay.k[i].slice(a, L))
		ls.fs = append(ls.fs, lay.fs[i].slice(a, L))
	}
	ls.fresh, ls.factored = make([]bool, L), make([]bool, L)
	ls.ys, ls.fv, ls.ftS, ls.jacS = make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n*n)
}

// SolveLanes integrates the trajectories src hands out (ivp.SolveLanes).
func (ls *LaneSolver) SolveLanes(src ivp.LaneSource, stop *atomic.Bool) {
	ls.driver.Solve(src, stop)
}

// Lanes returns L.
func (ls *LaneSolver) Lanes() int { return ls.L }

// Size returns the size of a lane's state: Dim·(1 + NS).
func (ls *LaneSolver) Size() int { return ls.na }

// MachineCode reports whether the attempts run as machine code (else
// each lane on a scalar Solver), and fused whether f's body is in it
// (the whole attempt one function).
func (ls *LaneSolver) MachineCode() (code, fused bool) {
	return ls.code != nil, ls.code != nil && ls.code.fused
}

// index returns where value d of lane l lies in an array of n values
// per lane (laneLayout).
func index(n, d, l int) int {
	const W = ode.LaneWidth
	return (l/W)*n*W + d*W + l%W
}

// scatter copies the scalar v into lane l of the lane-major dst of
// len(v) values per lane.
func scatter(dst, v []float64, l int) { scatterAt(dst, v, len(v), 0, l) }

// gather copies lane l of the lane-major src into the scalar dst.
func gather(dst, src []float64, l int) { gatherAt(dst, src, len(dst), 0, l) }

// scatterAt copies v into values off… of lane l of dst, an array of per
// values per lane.
// (Value off+d of lane l lies at index(per, off+d, l) = b + d·W, b
// that of value off: one stride from one base, bounds checked once.)
func scatterAt(dst, v []float64, per, off, l int) {
	const W = ode.LaneWidth
	if len(v) == 0 {
		return
	}
	b := index(per, off, l)
	dst = dst[b : b+(len(v)-1)*W+1]
	for d, x := range v {
		dst[d*W] = x
	}
}

// gatherAt copies values off… of lane l of src, an array of per values
// per lane, into dst.
func gatherAt(dst, src []float64, per, off, l int) {
	const W = ode.LaneWidth
	if len(dst) == 0 {
		return
	}
	b := index(per, off, l)
	src = src[b : b+(len(dst)-1)*W+1]
	for d := range dst {
		dst[d] = src[d*W]
	}
}

// copyLane copies lane l of src into dst (lane-major, n values per
// lane).
func copyLane(dst, src []float64, n, l int) {
	for d := range n {
		i := index(n, d, l)
		dst[i] = src[i]
	}
}

// Load puts a trajectory's state, f(t0, y0) and parameters into lane l;
// its J is due.
func (ls *LaneSolver) Load(l int, y, f0, p []float64) {
	ls.pl[l] = p
	if ls.code == nil {
		sv := ls.sv[l]
		copy(sv.y, y)
		copy(sv.f0, f0)
		sv.fresh = false
		return
	}
	scatter(ls.y, y, l)
	scatter(ls.f0, f0, l)
	for j, v := range p {
		ls.p[index(ls.m, j, l)] = v
	}
	ls.fresh[l] = false
}

// Proposal copies lane l's proposal into dst.
func (ls *LaneSolver) Proposal(l int, dst []float64) {
	if ls.code == nil {
		copy(dst, ls.sv[l].y1)
		return
	}
	gather(dst, ls.y1, l)
}

// State copies lane l's state into dst.
func (ls *LaneSolver) State(l int, dst []float64) {
	if ls.code == nil {
		copy(dst, ls.sv[l].y)
		return
	}
	gather(dst, ls.y, l)
}

// Accept makes lane l's proposal its state.
func (ls *LaneSolver) Accept(l int) {
	if ls.code == nil {
		sv := ls.sv[l]
		sv.y, sv.y1 = sv.y1, sv.y
		return
	}
	copyLane(ls.y, ls.y1, ls.na, l)
}

// Keep returns nil: a Rosenbrock mesh keeps no stages.
func (ls *LaneSolver) Keep(int) [][]float64 { return nil }

// Advance completes lane l's accepted step as stepper.Advance does: the
// last stage's f becomes f(t, y) of the next step (FSAL), or f is
// evaluated at the new point; J is due.
func (ls *LaneSolver) Advance(l int, tEnd float64, p []float64, next bool, st *ode.Stats) {
	if ls.code == nil {
		stepper{ls.sv[l]}.Advance(tEnd, p, next, st)
		return
	}
	switch {
	case ls.fsal:
		copyLane(ls.f0, ls.fs[ls.s-1], ls.dim, l)
	case next:
		gatherAt(ls.ys, ls.y, ls.na, 0, l)
		ls.cfg.F(tEnd, ls.ys, p, ls.fv)
		scatter(ls.f0, ls.fv, l)
		st.FEvals++
	}
	ls.fresh[l] = false
}

// Save computes lane l's save time ts inside its accepted step
// (stepper.Save), on sv[0] with the lane's values.
func (ls *LaneSolver) Save(l int, dst []float64, t, h, ts float64, p []float64, st *ode.Stats) {
	if ls.code == nil {
		stepper{ls.sv[l]}.Save(dst, t, h, ts, p, st)
		return
	}
	sv := ls.sv[0]
	gather(sv.y, ls.y, l)
	gather(sv.f0, ls.f0, l)
	gather(sv.jac, ls.jac, l)
	gather(sv.ft, ls.ft, l)
	for i, k := range ls.k {
		gather(sv.k[i], k, l)
	}
	for c := range ls.ns {
		for i, lc := range ls.code.lay.l[c] {
			gather(sv.l[c][i], lc.slice(ls.arena, ls.L), l)
		}
		gather(sv.mc[c], ls.mc[c], l)
		gather(sv.ftc[c], ls.ftc[c], l)
	}
	sv.saveAt(dst, t, h, ts, p, st)
}

// Attempt completes the steps of the lanes that moved, evaluates J and
// f_t where they are due, then tries a step in every active lane.
func (ls *LaneSolver) Attempt(a *ivp.LaneAttempt) {
	if ls.code == nil {
		for l, on := range a.Active {
			if on {
				a.Err[l], a.OK[l] = stepper{ls.sv[l]}.Attempt(a.T[l], a.H[l], ls.pl[l], a.Moved[l], a.Stats[l])
			}
		}
		return
	}
	need := false     // some lane's J is due
	anyMoved := false // some lane needs f at its new point
	for l, on := range a.Active {
		if !on {
			ls.h[l] = 0 // an idle lane computes on what it holds, harmlessly
			continue
		}
		st := a.Stats[l]
		ls.moved[l] = 0
		if a.Moved[l] {
			// The code makes the last stage's f the lane's f0 (FSAL), or
			// f at its new (t, y) (fadv: the code's, or advanceF's).
			ls.moved[l] = math.Float64frombits(^uint64(0))
			ls.fresh[l] = false
			if !ls.fsal {
				st.FEvals++
				anyMoved = true
			}
		}
		if !ls.fresh[l] {
			need = true
			st.JacEvals++
		}
		ls.h[l] = a.H[l]
		ls.t[l] = a.T[l]
		st.LUs++
	}
	lc, tb := ls.code, ls.cfg.Tableau
	if anyMoved && !lc.fused {
		ls.advanceF(a)
	}
	if need {
		ls.jacobians(a.Active)
	}
	arena := unsafe.Pointer(unsafe.SliceData(ls.arena))
	if ls.ns > 0 && !lc.fused {
		ls.stageTimes(tb.C[0])
		ls.tangents(0, a.Active)
	}
	jit.Call5(lc.entries[0], arena, nil, nil, nil, nil)
	for l, on := range a.Active {
		ls.factored[l] = on && math.Float64bits(ls.ok[l]) != 0
	}
	if !lc.fused {
		for i := 1; i < ls.s; i++ {
			ls.stageTimes(tb.C[i])
			ls.eval(ls.tt, ls.yt, ls.fs[i])
			if ls.ns > 0 {
				ls.tangents(i, ls.factored)
			}
			jit.Call5(lc.entries[i], arena, nil, nil, nil, nil)
		}
	}
	runtime.KeepAlive(lc)
	// The code's norms: +Inf marks an attempt that is not usable
	// (Norm.Of's verdict).
	for l, on := range a.Active {
		switch {
		case !on:
		case !ls.factored[l]:
			a.Err[l], a.OK[l] = math.Inf(1), false
		default:
			e := ls.err[l]
			a.Err[l], a.OK[l] = e, e <= math.MaxFloat64
			a.Stats[l].FEvals += ls.s - 1 + ls.ns*ls.s // f at stages 1…, a tangent per column at every stage
		}
	}
}

// advanceF writes f at (t, y) of the lanes that moved on into the
// code's fadv, for a method without FSAL whose code does not evaluate f
// itself: for every group at once (lp.F), or lane by lane.
func (ls *LaneSolver) advanceF(a *ivp.LaneAttempt) {
	const W = ode.LaneWidth
	n, na, m := ls.dim, ls.na, ls.m
	fadv := ls.code.lay.fadv.slice(ls.arena, ls.L)
	if fl := ls.lp.F; fl != nil {
		for grp := range ls.L / W {
			b := grp * na * W
			fl(ls.t[grp*W:(grp+1)*W], ls.y[b:b+n*W], ls.p[grp*m*W:(grp+1)*m*W], fadv[grp*n*W:(grp+1)*n*W])
		}
		return
	}
	for l, on := range a.Active {
		if on && a.Moved[l] {
			gatherAt(ls.ys, ls.y, na, 0, l)
			ls.cfg.F(ls.t[l], ls.ys, ls.pl[l], ls.fv)
			scatter(fadv, ls.fv, l)
		}
	}
}

// stageTimes sets tt to each lane's stage time t + c·h, as the scalar
// solver computes it.
func (ls *LaneSolver) stageTimes(c float64) {
	for l, h := range ls.h {
		ls.tt[l] = ls.t[l] + float64(c*h)
	}
}

// tangents writes each column's tangent at stage i's input into gc:
// J·v + J_p·w_c at (tt, Y_i) with v the column's stage input (at stage
// 0, y and S_c themselves) — for every group at once (lp.JVP), or lane
// by lane for the lanes in which.
func (ls *LaneSolver) tangents(i int, which []bool) {
	const W = ode.LaneWidth
	n, na, m := ls.dim, ls.na, ls.m
	for c := range ls.ns {
		if jl := ls.lp.JVP; jl != nil {
			for grp := range ls.L / W {
				y, v := ls.yt[grp*n*W:(grp+1)*n*W], ls.sIn[c][grp*n*W:(grp+1)*n*W]
				if i == 0 {
					b := grp * na * W
					y, v = ls.y[b:b+n*W], ls.y[b+n*(1+c)*W:b+n*(2+c)*W]
				}
				jl(ls.tt[grp*W:(grp+1)*W], y, ls.p[grp*m*W:(grp+1)*m*W], v, ls.wl[c][grp*m*W:(grp+1)*m*W], ls.gc[c][grp*n*W:(grp+1)*n*W])
			}
			continue
		}
		for l, on := range which {
			if !on {
				continue
			}
			if i == 0 {
				gatherAt(ls.ys, ls.y, na, 0, l)
				gatherAt(ls.sv1, ls.y, na, n*(1+c), l)
			} else {
				gather(ls.ys, ls.yt, l)
				gather(ls.sv1, ls.sIn[c], l)
			}
			ls.cfg.JVP(ls.tt[l], ls.ys, ls.pl[l], ls.sv1, ls.cfg.SensW[c], ls.gv)
			scatter(ls.gc[c], ls.gv, l)
		}
	}
}

// jacobians evaluates J and f_t at (t, y) of every active lane whose J
// is due — for a group at once where the problem has their lane forms
// (into the arena directly where every lane of the group is due), else
// lane by lane — and each sensitivity column's M_c and its ∂_t, lane
// by lane.
func (ls *LaneSolver) jacobians(active []bool) {
	const W = ode.LaneWidth
	if ls.ns > 0 {
		ls.columnsDue(active)
	}
	if ls.lp.JacY == nil {
		for l, on := range active {
			if on && !ls.fresh[l] {
				ls.jacobian(l, ls.t[l], ls.pl[l])
			}
		}
		return
	}
	n, na := ls.dim, ls.na
	for grp := range ls.L / W {
		due := ls.due(grp, active)
		if due == 0 {
			continue
		}
		t, y, p := ls.t[grp*W:(grp+1)*W], ls.y[grp*na*W:grp*na*W+n*W], ls.p[grp*ls.m*W:(grp+1)*ls.m*W]
		jac, ft := ls.jac[grp*n*n*W:(grp+1)*n*n*W], ls.ft[grp*n*W:(grp+1)*n*W]
		if due < W {
			jac, ft = ls.jacG, ls.ftG
		}
		ls.lp.JacY(t, y, p, jac)
		if ls.lp.DfDt != nil {
			ls.lp.DfDt(t, y, p, ft)
		} else {
			clear(ft)
		}
		for l := grp * W; l < (grp+1)*W; l++ {
			if !active[l] || ls.fresh[l] {
				continue
			}
			ls.fresh[l] = true
			if due == W {
				continue
			}
			w := l % W
			for i := range n * n {
				ls.jac[index(n*n, i, l)] = jac[i*W+w]
			}
			for i := range n {
				ls.ft[index(n, i, l)] = ft[i*W+w]
			}
		}
	}
}

// jacobian evaluates J and f_t at lane l's (t, y) into its lanes of
// jac and ft.
func (ls *LaneSolver) jacobian(l int, t float64, p []float64) {
	gatherAt(ls.ys, ls.y, ls.na, 0, l)
	ls.cfg.JacY(t, ls.ys, p, ls.jacS)
	scatter(ls.jac, ls.jacS, l)
	if ls.cfg.DfDt == nil {
		clear(ls.ftS)
	} else {
		ls.cfg.DfDt(t, ls.ys, p, ls.ftS)
	}
	scatter(ls.ft, ls.ftS, l)
	ls.fresh[l] = true
}

// columnsDue evaluates M_c and its ∂_t for every column of every
// active lane whose J is due: for a group at once where the problem has
// their lane forms (into the arena directly where every lane of the
// group is due), else lane by lane.
func (ls *LaneSolver) columnsDue(active []bool) {
	const W = ode.LaneWidth
	if ls.lp.JVPJacY == nil {
		for l, on := range active {
			if on && !ls.fresh[l] {
				ls.columns(l, ls.t[l], ls.pl[l])
			}
		}
		return
	}
	n, na, m := ls.dim, ls.na, ls.m
	for grp := range ls.L / W {
		due := ls.due(grp, active)
		if due == 0 {
			continue
		}
		b := grp * na * W
		t, y, p := ls.t[grp*W:(grp+1)*W], ls.y[b:b+n*W], ls.p[grp*m*W:(grp+1)*m*W]
		for c := range ls.ns {
			v, w := ls.y[b+n*(1+c)*W:b+n*(2+c)*W], ls.wl[c][grp*m*W:(grp+1)*m*W]
			mc, ftc := ls.mc[c][grp*n*n*W:(grp+1)*n*n*W], ls.ftc[c][grp*n*W:(grp+1)*n*W]
			if due < W {
				mc, ftc = ls.jacG, ls.ftG
			}
			ls.lp.JVPJacY(t, y, p, v, w, mc)
			if ls.lp.JVPDfDt != nil {
				ls.lp.JVPDfDt(t, y, p, v, w, ftc)
			} else if due < W {
				clear(ftc) // (the arena's ∂_t stay zero)
			}
			if due == W {
				continue
			}
			for l := grp * W; l < (grp+1)*W; l++ {
				if !active[l] || ls.fresh[l] {
					continue
				}
				lw := l % W
				for i := range n * n {
					ls.mc[c][index(n*n, i, l)] = mc[i*W+lw]
				}
				if ls.lp.JVPDfDt != nil {
					for i := range n {
						ls.ftc[c][index(n, i, l)] = ftc[i*W+lw]
					}
				}
			}
		}
	}
}

// due counts the active lanes of group grp whose J is due.
func (ls *LaneSolver) due(grp int, active []bool) int {
	const W = ode.LaneWidth
	n := 0
	for l := grp * W; l < (grp+1)*W; l++ {
		if active[l] && !ls.fresh[l] {
			n++
		}
	}
	return n
}

// columns evaluates lane l's M_c = ∂(J·S_c + J_p·w_c)/∂y and its ∂_t
// at (t, y) for every column, as the scalar Attempt does.
func (ls *LaneSolver) columns(l int, t float64, p []float64) {
	cfg, n := &ls.cfg, ls.dim
	gatherAt(ls.ys, ls.y, ls.na, 0, l)
	for c := range ls.ns {
		gatherAt(ls.sv1, ls.y, ls.na, n*(1+c), l)
		cfg.JVPJacY(t, ls.ys, p, ls.sv1, cfg.SensW[c], ls.jacS)
		scatter(ls.mc[c], ls.jacS, l)
		if cfg.JVPDfDt != nil {
			cfg.JVPDfDt(t, ls.ys, p, ls.sv1, cfg.SensW[c], ls.ftS)
			scatter(ls.ftc[c], ls.ftS, l)
		}
	}
}

// eval writes f at the stage times t and lane-major inputs y into out:
// for every group of lanes at once (lp.F), or lane by lane for the
// lanes whose W factored (the others' inputs are not used).
func (ls *LaneSolver) eval(t, y, out []float64) {
	const W = ode.LaneWidth
	if fl := ls.lp.F; fl != nil {
		n, np := ls.dim*W, ls.m*W
		for g := range ls.L / W {
			fl(t[g*W:(g+1)*W], y[g*n:(g+1)*n], ls.p[g*np:(g+1)*np], out[g*n:(g+1)*n])
		}
		return
	}
	for l, on := range ls.factored {
		if on {
			gather(ls.ys, y, l)
			ls.cfg.F(t[l], ls.ys, ls.pl[l], ls.fv)
			scatter(out, ls.fv, l)
		}
	}
}
