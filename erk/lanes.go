package erk

import (
	"fmt"
	"math"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/internal/lanecheck"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/ode"
)

// Lanes: L trajectories of one configuration side by side, in
// lane-major arrays (component d of lane l at [d·L + l]), each with its
// own time, step size and controller (ivp.SolveLanes). An attempt runs
// every lane's stage sums together — where L is ode.LaneWidth and the
// processor has AVX, as the machine code of the scalar solver (jitstages.go)
// built for dim·L components with a vector of the lanes' step sizes, so
// that one instruction does one component of four lanes — and evaluates
// f for all lanes in one call of an ode.LaneFunc where the problem has
// one (the tape's packed code), else lane by lane. Every lane performs
// genericStages's operations in its order, so each trajectory gets the
// bits the scalar Solver gives it (TestLanesMatchScalar).
//
// A lane cannot exchange its arrays with another's as the scalar solver
// exchanges y and y1, or k_0 and k_{s−1} after an FSAL step: the lane's
// column is copied instead (Dim values a step).

// LaneSolver is the ivp.LaneStepper of explicit Runge–Kutta methods:
// one worker's L lanes.
type LaneSolver struct {
	sv     *Solver // the configuration, the coefficients, and the per-lane work of save times
	L, dim int
	// W is the width of a group of lanes (laneGroup), m the number of
	// parameters; base[l] is where lane l's first state component lies
	// (at(dim, 0, l)).
	W, m   int
	base   []int
	flanes ode.LaneFunc // f for every lane at once, or nil (f lane by lane)

	k              [][]float64 // stages, lane-major, contiguous: k_j at j·dim·L
	y, y1, yt      []float64
	ev, ev3        []float64
	adv            []float64 // f for the lanes completing a step (Attempt with Moved)
	p              []float64 // the lanes' parameters, lane-major
	pl             [][]float64
	tt, hv         []float64 // the stage time and step size of each lane
	errv           []float64 // the lanes' error norms, from the machine code
	norm           control.LaneNorm
	ys, fs         []float64 // one lane's state and f (f lane by lane)
	keep           [][]float64
	jit            *jitStages // lane-major stage sums as machine code, or nil
	jargs          [16]unsafe.Pointer
	rtolL, atolL   []float64 // the tolerances tiled over the lanes, for the machine code's norm
	active, moving []bool    // the lanes of the current attempt (the driver's), and those completing a step
	driver         *ivp.LaneDriver
	// fused is the whole attempt as one function of machine code
	// (lanesfused.go), or nil; fargs its arguments, fregs f's register
	// file, kptrs the stages' addresses and tIn the lanes' times.
	fused *fusedLanes
	fargs [16]unsafe.Pointer
	fregs [][]float64 // one register file per group of four lanes
	fregp []unsafe.Pointer
	kptrs []unsafe.Pointer
	tIn   []float64
	// moved is all-ones in the lanes completing a step (the fused code's
	// mask), then (moved[L:]) in the lanes whose accepted proposal is
	// yet to become their state (pending: Accept left it to the fused
	// code, which blends y1 into y).
	moved []uint64
	// kernel and cols are f's body and the columns of the fused code,
	// for the code of whole rounds (BindRounds: rounds, rcode, rargs).
	kernel *ode.LaneKernel
	cols   *laneCols
	rounds *ivp.LaneRounds
	replay *ivp.ReplayRounds
	rcode  *fusedLanes
	rargs  [18]unsafe.Pointer
	// lp and nState are newLanes's arguments, for the lanes of the
	// queued saves (QueueSave), saves.
	lp     ode.LaneProgram
	nState int
	saves  *laneSaves
}

// NewLanes returns the lane stepper of cfg for L ≥ 1 lanes of
// trajectories with m parameters each. flanes, when not nil and L is a
// multiple of ode.LaneWidth, evaluates f for four lanes at once; it must
// give each lane the bits of cfg.F (checked on a few inputs:
// lanecheck.FuncAgrees; where it does not, f runs lane by lane). kernel is ode.Programs.Kernel of the same
// Programs (nil for none): where it is set and the processor has AVX2,
// the whole attempt runs as one function of machine code.
func NewLanes(cfg Config, L, m int, flanes ode.LaneFunc, kernel *ode.LaneKernel) (*LaneSolver, error) {
	return newLanes(cfg, L, m, ode.LaneProgram{F: flanes, Kernel: kernel}, 0)
}

// NewSensLanes is NewLanes for a forward sensitivity system of n states
// (cfg.Dim = n·(1 + columns)) in lane form: lp.F evaluates the whole
// system for four lanes at once, and where lp gives the machine code by
// columns (lp.Columns, with lp.Kernel f's), the whole attempt runs as
// one function of machine code with each column's program in it.
func NewSensLanes(cfg Config, L, m int, lp ode.LaneProgram, n int) (*LaneSolver, error) {
	return newLanes(cfg, L, m, lp, n)
}

// newLanes is NewLanes with the lane program lp, of a sensitivity
// system of nState states where nState > 0.
func newLanes(cfg Config, L, m int, lp ode.LaneProgram, nState int) (*LaneSolver, error) {
	flanes, kernel := lp.F, lp.Kernel
	var cols *laneCols
	if lp.Columns != nil {
		if cols = newLaneCols(lp.Columns, cfg.Dim, nState, m); cols == nil {
			kernel = nil // not a system of the columns' shape: no fused attempt
		}
	}
	if L < 1 {
		return nil, fmt.Errorf("erk: %d lanes: must be ≥ 1", L)
	}
	if m < 0 {
		return nil, fmt.Errorf("erk: %d parameters: must be ≥ 0", m)
	}
	sv, err := New(cfg)
	if err != nil {
		return nil, err
	}
	W := laneGroup(L)
	if W != ode.LaneWidth || flanes != nil && !lanecheck.FuncAgrees(cfg.F, flanes, cfg.Dim, m) {
		flanes, kernel = nil, nil
	}
	dim, s := sv.dim, sv.s
	ls := &LaneSolver{sv: sv, L: L, dim: dim, W: W, m: m, flanes: flanes, base: make([]int, L), lp: lp, nState: nState}
	for l := range L {
		ls.base[l] = ls.at(dim, 0, l)
	}
	n := dim * L
	flat := make([]float64, s*n+6*n+m*L+3*L+2*dim)
	ls.k, flat = split(flat, s, n)
	ls.y, ls.y1, ls.yt, ls.ev, ls.ev3, ls.adv = flat[:n], flat[n:2*n], flat[2*n:3*n], flat[3*n:4*n], flat[4*n:5*n], flat[5*n:6*n]
	flat = flat[6*n:]
	ls.p, flat = flat[:m*L], flat[m*L:]
	ls.tt, ls.hv, ls.errv, flat = flat[:L], flat[L:2*L], flat[2*L:3*L], flat[3*L:]
	ls.ys, ls.fs = flat[:dim], flat[dim:2*dim]
	ls.pl = make([][]float64, L)
	ls.keep = make([][]float64, sv.lastB+1)
	for j := range ls.keep {
		ls.keep[j] = make([]float64, dim)
	}
	ls.moving = make([]bool, L)
	nd := sv.cfg.NormDim
	ls.norm = control.LaneNorm{E: ls.ev, ATol: sv.cfg.ATol, RTol: sv.cfg.RTol, N: nd, L: L, W: W}
	if sv.e3 != nil {
		ls.norm.E3 = ls.ev3
	}
	if W == ode.LaneWidth && jit.HasAVX() && !sv.generic && jitCodeEstimate(sv)*L <= jitMaxCode {
		ls.jit = buildJITStages(sv, cfg.Tableau, L)
	}
	if ls.jit != nil {
		ls.rtolL, ls.atolL = make([]float64, n), make([]float64, n)
		for d := range dim {
			for l := range L {
				i := ls.at(dim, d, l)
				ls.rtolL[i], ls.atolL[i] = sv.cfg.RTol[d], sv.cfg.ATol[d]
			}
		}
		ptr := func(s []float64) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(s)) }
		ls.jargs = [16]unsafe.Pointer{
			ptr(ls.k[0]), ptr(ls.y), ptr(ls.yt), ptr(ls.y1), ptr(ls.ev), ptr(ls.ev3),
			ptr(ls.hv), ptr(ls.jit.coefs),
		}
		ls.jargs[argRTol], ls.jargs[argATol], ls.jargs[argErr] = ptr(ls.rtolL), ptr(ls.atolL), ptr(ls.errv)
	}
	if k := kernel; k != nil && ls.jit != nil && flanes != nil && jit.HasAVX2() {
		if ls.fused = cachedFusedLanes(sv, k, cols, L, m, nil); ls.fused != nil {
			ls.tIn = make([]float64, L)
			ls.setFused(k.Registers, cols)
			ls.kernel, ls.cols = k, cols
		}
	}
	ls.driver = ivp.NewLaneDriver(ls, &sv.loop)
	return ls, nil
}

// SolveLanes integrates the trajectories src hands out (ivp.SolveLanes).
func (ls *LaneSolver) SolveLanes(src ivp.LaneSource, stop *atomic.Bool) {
	ls.driver.Solve(src, stop)
}

// Lanes returns L.
func (ls *LaneSolver) Lanes() int { return ls.L }

// Size returns the state dimension.
func (ls *LaneSolver) Size() int { return ls.dim }

// Load puts a trajectory's state, first stage and parameters into lane
// l.
func (ls *LaneSolver) Load(l int, y, f0, p []float64) {
	if ls.moved != nil {
		ls.moved[ls.L+l] = 0
	}
	ls.scatter(ls.y, y, l)
	ls.scatter(ls.k[0], f0, l)
	for j, v := range p {
		ls.p[ls.at(ls.m, j, l)] = v
	}
	ls.pl[l] = p
}

// laneGroup returns the width of the groups in which L lanes lie in the
// arrays: four (the lanes of a 256-bit register) where L is a multiple
// of four, else L, one group. Eight lanes are then two groups of four,
// each laid out as four lanes are, so that f's lane code serves each
// and the machine code interleaves the two.
func laneGroup(L int) int {
	if L%ode.LaneWidth == 0 {
		return ode.LaneWidth
	}
	return L
}

// at returns the index of value d of lane l in an array of n values per
// lane: lane-major within each group of W lanes, the groups one after
// another ((l/W)·n·W + d·W + l mod W; d·L + l for one group).
func (ls *LaneSolver) at(n, d, l int) int {
	W := ls.W
	return (l/W)*n*W + d*W + l%W
}

// scatter copies the scalar state-sized v into lane l of the lane-major
// dst.
func (ls *LaneSolver) scatter(dst, v []float64, l int) {
	base, W := ls.base[l], ls.W
	for d, x := range v {
		dst[base+d*W] = x
	}
}

// gather copies lane l of the lane-major src into the scalar
// state-sized dst.
func (ls *LaneSolver) gather(dst, src []float64, l int) {
	base, W := ls.base[l], ls.W
	for d := range dst {
		dst[d] = src[base+d*W]
	}
}

// Proposal copies lane l's proposal into dst.
func (ls *LaneSolver) Proposal(l int, dst []float64) { ls.gather(dst, ls.y1, l) }

// State copies lane l's state into dst.
func (ls *LaneSolver) State(l int, dst []float64) {
	ls.settle(l)
	ls.gather(dst, ls.y, l)
}

// Accept makes lane l's proposal its state.
// With the fused code the copy is left to the next attempt's code
// (pending), which blends it in; anything else that reads the state
// first settles it.
func (ls *LaneSolver) Accept(l int) {
	if ls.fused != nil {
		ls.moved[ls.L+l] = ^uint64(0)
		return
	}
	ls.copyLane(ls.y, ls.y1, l)
}

// settle makes lane l's accepted proposal its state where Accept left
// that to the fused code.
func (ls *LaneSolver) settle(l int) {
	if ls.moved != nil && ls.moved[ls.L+l] != 0 {
		ls.copyLane(ls.y, ls.y1, l)
		ls.moved[ls.L+l] = 0
	}
}

// Keep returns lane l's stages k_0…k_lastB, as the scalar solver's mesh
// keeps them.
func (ls *LaneSolver) Keep(l int) [][]float64 {
	for j, kj := range ls.keep {
		ls.gather(kj, ls.k[j], l)
	}
	return ls.keep
}

// Save re-steps lane l from the start of its accepted step to ts
// (stepper.Save), on the scalar solver's arrays.
func (ls *LaneSolver) Save(l int, dst []float64, t, _, ts float64, p []float64, st *ode.Stats) {
	ls.settle(l)
	sv := ls.sv
	ls.gather(sv.y, ls.y, l)
	ls.gather(sv.k[0], ls.k[0], l)
	sv.restep(t, ts-t, p, dst)
	st.FEvals += sv.lastB
}

// laneSaves are the saves inside accepted steps that the lanes put off
// (QueueSave), computed by FlushSaves in lanes of their own (ls): save
// i in lane i, from its step's start state and first stage (copied
// there from the queuing lane) at t[i], an attempt of size ts[i] − t[i],
// whose proposal is restep's result.
type laneSaves struct {
	ls      *LaneSolver
	n       int
	t, ts   []float64
	p, dst  [][]float64
	a       ivp.LaneAttempt
	st      ode.Stats // what the attempts count (Save's count is kept instead)
	unbuilt bool      // the lanes could not be made: Save at once
}

// QueueSave is Save put off (ivp.SaveQueuer): the lane's step start
// and first stage go into a lane of the saves' solver for FlushSaves,
// which computes the save with the same bits; the evaluations are
// counted now, as Save counts them.
func (ls *LaneSolver) QueueSave(l int, dst []float64, t, h, ts float64, p []float64, st *ode.Stats) {
	q := ls.saves
	if q == nil {
		q = ls.newSaves()
	}
	if q.unbuilt {
		ls.Save(l, dst, t, h, ts, p, st)
		return
	}
	ls.settle(l)
	i, sl := q.n, q.ls
	for d := range ls.dim { // the lanes lie alike in the two solvers
		from, to := ls.base[l]+d*ls.W, sl.base[i]+d*sl.W
		sl.y[to], sl.k[0][to] = ls.y[from], ls.k[0][from]
	}
	q.t[i], q.ts[i], q.p[i], q.dst[i] = t, ts, p, dst
	q.n++
	st.FEvals += ls.sv.lastB
	if q.n == len(q.t) {
		ls.FlushSaves()
	}
}

// newSaves makes the lanes of the queued saves: a lane stepper of the
// same configuration and lane program, whose attempts are never judged.
func (ls *LaneSolver) newSaves() *laneSaves {
	q := &laneSaves{}
	ls.saves = q
	sl, err := newLanes(ls.sv.cfg, ls.L, ls.m, ls.lp, ls.nState)
	if err != nil {
		q.unbuilt = true
		return q
	}
	L := ls.L
	q.ls = sl
	q.t, q.ts, q.p, q.dst = make([]float64, L), make([]float64, L), make([][]float64, L), make([][]float64, L)
	q.a = ivp.NewLaneAttempt(L)
	for i := range L {
		q.a.Stats[i] = &q.st
	}
	return q
}

// FlushSaves computes the queued saves (ivp.SaveQueuer): one attempt of
// the saves' lanes, each from its step's start with the step's first
// stage and h = ts − t, the bits of restep (the stage sums and f at
// t + c_i·h, then y + h·Σ b_j·k_j, which is the last row of A for an FSAL
// method); a lane whose proposal is not finite takes restep itself, from
// the state and k_0 the attempt left as they were (it changes neither
// in a lane that did not move).
func (ls *LaneSolver) FlushSaves() {
	q := ls.saves
	if q == nil || q.n == 0 {
		return
	}
	sl, a := q.ls, &q.a
	for i := range a.Active {
		a.Active[i] = i < q.n
		if !a.Active[i] {
			continue
		}
		// Load's part but the state and k_0, which QueueSave copied.
		if sl.moved != nil {
			sl.moved[sl.L+i] = 0
		}
		for j, v := range q.p[i] {
			sl.p[sl.at(sl.m, j, i)] = v
		}
		sl.pl[i] = q.p[i]
		a.T[i], a.H[i], a.Moved[i] = q.t[i], q.ts[i]-q.t[i], false
	}
	sl.Attempt(a)
	sv := ls.sv
	for i := range q.n {
		if a.OK[i] {
			sl.Proposal(i, q.dst[i])
		} else {
			sl.gather(sv.y, sl.y, i)
			sl.gather(sv.k[0], sl.k[0], i)
			sv.restep(q.t[i], q.ts[i]-q.t[i], q.p[i], q.dst[i])
		}
		q.p[i], q.dst[i] = nil, nil
	}
	q.n = 0
}

// Advance completes lane l's accepted step as stepper.Advance does: the
// FSAL stage (evaluated now if deferred) becomes the lane's k_0, or for
// a method without FSAL f at the new point.
func (ls *LaneSolver) Advance(l int, tEnd float64, p []float64, next bool, st *ode.Stats) {
	ls.settle(l)
	sv := ls.sv
	switch {
	case sv.fsal && !sv.defer_:
		ls.copyLane(ls.k[0], ls.k[sv.s-1], l)
	case sv.fsal || next:
		ls.gather(ls.ys, ls.y, l)
		sv.cfg.F(tEnd, ls.ys, p, ls.fs)
		ls.scatter(ls.k[0], ls.fs, l)
		st.FEvals++
	}
}

// copyLane copies lane l of src into dst (lane-major, Dim values).
func (ls *LaneSolver) copyLane(dst, src []float64, l int) {
	W := ls.W
	n := ls.base[l] + (ls.dim-1)*W + 1 // past the lane's last value
	dst, src = dst[:n], src[:n]
	for i := ls.base[l]; i < n; i += W {
		dst[i] = src[i]
	}
}

// Attempt completes the steps of the lanes that moved (Advance, with f
// for all of them in one evaluation), then tries a step in every active
// lane and writes each lane's error norm.
func (ls *LaneSolver) Attempt(a *ivp.LaneAttempt) {
	if ls.fused != nil {
		ls.attemptFused(a)
		return
	}
	sv := ls.sv
	L := ls.L
	ls.active = a.Active
	needAdv := false
	for l := range L {
		ls.moving[l] = a.Active[l] && a.Moved[l]
		if !a.Active[l] {
			ls.hv[l] = 0 // an idle lane computes on what it holds, harmlessly
			continue
		}
		ls.hv[l] = a.H[l]
		a.Stats[l].FEvals += sv.attemptEvals
		if ls.moving[l] {
			if sv.fsal && !sv.defer_ {
				ls.copyLane(ls.k[0], ls.k[sv.s-1], l)
			} else {
				needAdv = true
			}
		}
	}
	if needAdv {
		// f(t, y) at the lanes' new points: into adv, then k_0 of the
		// lanes that moved (the others keep theirs).
		ls.eval(a.T, ls.y, ls.adv, ls.moving)
		for l := range L {
			if ls.moving[l] {
				ls.copyLane(ls.k[0], ls.adv, l)
				a.Stats[l].FEvals++
			}
		}
	}
	if ls.jit != nil {
		// The machine code finishes the norms too (normLanes): +Inf
		// marks an attempt that is not usable, as Norm.Of's verdict.
		ls.stagesJIT(a.T)
		ls.verdicts(a)
		return
	}
	ls.stages(a.T)
	ls.norm.Of(ls.hv, ls.y, ls.y1, a.Active, a.Err, a.OK)
}

// attemptFused is Attempt as one call of the fused code, which also
// completes the steps of the lanes that moved (the mask moved): only the
// counts stay here.
func (ls *LaneSolver) attemptFused(a *ivp.LaneAttempt) {
	sv := ls.sv
	evals := sv.attemptEvals
	advEval := !sv.fsal || sv.defer_ // completing a step evaluates f
	L := ls.L
	for l, on := range a.Active {
		ls.moved[l] = 0
		if !on {
			continue
		}
		n := evals
		if a.Moved[l] {
			ls.moved[l] = ^uint64(0)
			if advEval {
				n++
			}
		}
		a.Stats[l].FEvals += n
	}
	copy(ls.hv, a.H)
	copy(ls.tIn, a.T)
	jit.Call16(ls.fused.entry, &ls.fargs)
	runtime.KeepAlive(ls.fused)
	clear(ls.moved[L:]) // the code made the pending proposals the lanes' states
	ls.verdicts(a)
}

// verdicts copies the norms the machine code left in errv into a, +Inf
// marking an attempt that is not usable (Norm.Of's verdict).
func (ls *LaneSolver) verdicts(a *ivp.LaneAttempt) {
	for l, e := range ls.errv {
		a.Err[l], a.OK[l] = e, e <= math.MaxFloat64
	}
}

// eval writes f at times t and lane-major states y into out, for every
// lane at once (flanes) or for the lanes in which lane by lane.
func (ls *LaneSolver) eval(t, y, out []float64, which []bool) {
	if ls.flanes != nil {
		const W = ode.LaneWidth
		n, np := ls.dim*W, ls.m*W
		for g := range ls.L / W {
			ls.flanes(t[g*W:(g+1)*W], y[g*n:(g+1)*n], ls.p[g*np:(g+1)*np], out[g*n:(g+1)*n])
		}
		return
	}
	f := ls.sv.cfg.F
	for l, on := range which {
		if !on {
			continue
		}
		ls.gather(ls.ys, y, l)
		f(t[l], ls.ys, ls.pl[l], ls.fs)
		ls.scatter(out, ls.fs, l)
	}
}

// stageTimes sets the lanes' stage time t + c·h, as the scalar solver
// computes it.
func (ls *LaneSolver) stageTimes(t []float64, c float64) {
	for l, h := range ls.hv {
		ls.tt[l] = t[l] + float64(c*h)
	}
}

// stages is genericStages for every lane: the same sums, each lane with
// its own h, and f between them.
func (ls *LaneSolver) stages(t []float64) {
	sv := ls.sv
	s, k := sv.s, ls.k
	end := s
	if sv.fsal {
		end = s - 1
	}
	for i := 1; i < end; i++ {
		ls.input(ls.yt, sv.rows[i])
		ls.stageTimes(t, sv.c[i])
		ls.eval(ls.tt, ls.yt, k[i], ls.active)
	}
	if sv.fsal {
		ls.input(ls.y1, sv.rows[s-1])
		if !sv.defer_ {
			ls.stageTimes(t, 1)
			ls.eval(ls.tt, ls.y1, k[s-1], ls.active)
		}
	} else {
		ls.input(ls.y1, sv.b)
	}
	// The error vectors of every component: in groups, the norm's
	// components are not the first of the arrays.
	combine(ls.ev, sv.e, k)
	if sv.e3 != nil {
		combine(ls.ev3, sv.e3, k)
	}
}

// input sets dst = y + h·Σ a_j·k_j lane by lane (stageInput with each
// lane's h).
func (ls *LaneSolver) input(dst []float64, row []coef) {
	combine(dst, row, ls.k)
	W, y, h := ls.W, ls.y[:len(dst)], ls.hv
	n := ls.dim * W
	for g := range ls.L / W {
		hg, lo := h[g*W:(g+1)*W], g*n
		for i := lo; i < lo+n; i += W {
			for w := range W {
				dst[i+w] = y[i+w] + float64(hg[w]*dst[i+w])
			}
		}
	}
}

// stagesJIT is stages with the sums in machine code.
func (ls *LaneSolver) stagesJIT(t []float64) {
	sv, js := ls.sv, ls.jit
	e, a := &js.entries[0], &ls.jargs
	for i := 1; i < js.end; i++ {
		jit.Call16(e.inputs[i-1], a)
		ls.stageTimes(t, sv.c[i])
		ls.eval(ls.tt, ls.yt, ls.k[i], ls.active)
	}
	jit.Call16(e.tail, a)
	if e.errs != 0 {
		ls.stageTimes(t, 1)
		ls.eval(ls.tt, ls.y1, ls.k[sv.s-1], ls.active)
		jit.Call16(e.errs, a)
	}
	runtime.KeepAlive(js)
}
