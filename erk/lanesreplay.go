package erk

import (
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/internal/lanecheck"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/ode"
)

// The reverse replay in lanes: the discrete adjoint of L trajectories'
// recorded steps at once (ivp.LaneWalk), each lane at its own step of
// its own mesh. A reversed step is Replayer.ReverseStep's arithmetic
// lane by lane — the stages rebuilt (from the mesh's stages, or by
// evaluating f), then the cotangents swept back through the stages with
// the cotangent program — on lane-major arrays, with f and the
// cotangent program evaluated for all lanes at once where the problem
// has their lane forms (ode.Programs.FLanes, VJPLanes). So each
// trajectory gets the scalar replayer's gradient bit for bit
// (TestLaneReverseMatchesScalar). Save times inside a step are partial
// steps in the lanes too where whole rounds run as machine code
// (BindReverseRounds), else on the scalar replayer lane by lane. The forward replay runs in lanes too
// (ForwardLanes), on a lane solver's attempts.

// LaneReplayer is a Replayer whose Reverse also runs in lanes
// (ReverseLanes).
type LaneReplayer struct {
	*Replayer
	ls       *LaneSolver // the lane arrays, their layout and f in lanes
	vjpLanes func(t, y, p, u, gy, gp []float64)
	walk     *ivp.LaneWalk

	ys             [][]float64 // the stages' inputs, lane-major
	kbar           [][]float64 // the stages' cotangents
	ynew, ybar, gy []float64   // lane-major states' cotangents
	gp, gpTmp      []float64   // lane-major parameters' cotangents
	// gys and gps are the fused code's outputs of the cotangent
	// program, a block for each stage: the cotangents of the stage's
	// input (lane-major states) and of the parameters.
	gys, gps         []float64
	uS, gyS, gpS, yS []float64 // one lane's, for the cotangent program lane by lane
	t                []float64 // the lanes' step start times
	// rev is the cotangent sums as machine code, or nil; rargs its
	// arguments (k̄, v, h, coefficients), sargs the stage code's with
	// its output pointed at each stage input in turn.
	rev          *revSums
	rargs, sargs [16]unsafe.Pointer
	// fused is the fused reversed step (lanesrevfused.go), or nil;
	// fargs its arguments, with the tables they point at.
	fused                *fusedReverse
	fargs                [16]unsafe.Pointer
	ysPtrs, fregs, vregs []unsafe.Pointer
	regFiles             [][]float64
	// fwd is the forward replay in lanes, on fls (a lane solver with f's
	// kernel, so that its attempts are the fused code), made on first
	// use; fk is that kernel.
	fwd *ivp.LaneForward
	fls *LaneSolver
	fk  *ode.LaneKernel
	// vk is the cotangent program's kernel of the fused code; rfused
	// the code of whole rounds of the reverse walk (BindReverseRounds),
	// with its arguments rfargs and its block rrounds.
	vk      *ode.LaneKernel
	rfused  *fusedReverse
	rfargs  [18]unsafe.Pointer
	rrounds *ivp.ReverseRounds
	// acc is the lanes' accumulate mask of that code: set where a
	// lane's item is a partial step (ivp.ReverseRounds.SetPartials).
	acc []float64
}

// ForwardLanes replays forward every job src hands out, L at a time
// (ivp.LaneForward): the attempts of a lane solver, whose arithmetic is
// the scalar step's, with the step sizes of each job's mesh; each job
// gets Forward's bits (TestLaneForwardMatchesScalar).
func (lr *LaneReplayer) ForwardLanes(src ivp.ForwardSource, stop *atomic.Bool) {
	if lr.fwd == nil {
		lr.fls = lr.ls
		var saves *LaneSolver
		if lr.fk != nil {
			if ls, err := NewLanes(lr.ls.sv.cfg, lr.ls.L, lr.m, lr.ls.flanes, lr.fk); err == nil {
				lr.fls = ls
			}
			// The saves the whole replay rounds owe, in lanes of
			// their own: an attempt of size ts − t from the save's
			// step start is the scalar SaveFresh's step.
			if ls, err := NewLanes(lr.ls.sv.cfg, lr.ls.L, lr.m, lr.ls.flanes, lr.fk); err == nil {
				saves = ls
			}
		}
		lr.fwd = ivp.NewLaneForward(lr.fls, lr.sv.cfg.F, lr.ls.dim, replayStep{lr.Replayer})
		if saves != nil {
			lr.fwd.SaveLanes(saves)
		}
	}
	lr.fwd.Run(src, stop)
}

// NewLaneReplayer returns the replayer of cfg (as NewReplayer) for L
// lanes of trajectories with m parameters; flanes and vjpLanes are the
// lane forms of cfg.F and vjp (nil: lane by lane), used where they give
// those functions' bits (checked on a few inputs).
//
// fk and vk are the lane kernels of f and of the cotangent program (nil
// for none): where both are set, the processor has AVX2 and L is a
// multiple of four, a reversed step of every lane runs as one function
// of machine code (buildFusedReverse).
func NewLaneReplayer(cfg Config, L, m int, vjp VJPFunc, flanes ode.LaneFunc, vjpLanes func(t, y, p, u, gy, gp []float64),
	fk, vk *ode.LaneKernel) (*LaneReplayer, error) {
	rp, err := NewReplayer(cfg, m, vjp)
	if err != nil {
		return nil, err
	}
	ls, err := NewLanes(cfg, L, m, flanes, nil)
	if err != nil {
		return nil, err
	}
	if ls.W != ode.LaneWidth || vjpLanes != nil && !lanecheck.VJPAgrees(vjp, vjpLanes, ls.dim, m) {
		vjpLanes = nil
	}
	lr := &LaneReplayer{Replayer: rp, ls: ls, vjpLanes: vjpLanes, t: make([]float64, L), fk: fk}
	s, n := ls.sv.lastB+1, ls.dim*L
	flat := make([]float64, 2*s*n+3*n+2*m*L+3*ls.dim+m)
	lr.ys, flat = split(flat, s, n)
	lr.kbar, flat = split(flat, s, n)
	lr.ynew, lr.ybar, lr.gy, flat = flat[:n], flat[n:2*n], flat[2*n:3*n], flat[3*n:]
	lr.gp, lr.gpTmp, flat = flat[:m*L], flat[m*L:2*m*L], flat[2*m*L:]
	d := ls.dim
	lr.uS, lr.gyS, lr.yS, lr.gpS = flat[:d], flat[d:2*d], flat[2*d:3*d], flat[3*d:3*d+m]
	lr.walk = ivp.NewLaneWalk(lr, ls.dim)
	if ls.jit != nil {
		if lr.rev = cachedRevSums(ls.sv, L); lr.rev != nil {
			ptr := func(s []float64) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(s)) }
			lr.rargs[0], lr.rargs[6], lr.rargs[7] = ptr(lr.kbar[0]), ptr(ls.hv), ptr(lr.rev.coefs)
			lr.sargs = ls.jargs
		}
	}
	if ls.flanes != nil && vjpLanes != nil && ls.W == ode.LaneWidth {
		if lr.fused = cachedFusedReverse(ls.sv, fk, vk, L, m, nil); lr.fused != nil {
			lr.vk = vk
			lr.setFused(fk, vk)
		}
	}
	return lr, nil
}

// setFused points the fused reverse code's arguments at lr's arrays,
// with register files of f and of the cotangent program for each group
// of lanes.
func (lr *LaneReplayer) setFused(fk, vk *ode.LaneKernel) {
	ls := lr.ls
	ptr := func(s []float64) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(s)) }
	G := ls.L / ode.LaneWidth
	lr.ysPtrs = make([]unsafe.Pointer, len(lr.ys))
	lr.ysPtrs[0] = ptr(ls.y)
	for i := 1; i < len(lr.ys); i++ {
		lr.ysPtrs[i] = ptr(lr.ys[i])
	}
	lr.fregs, lr.vregs = make([]unsafe.Pointer, G), make([]unsafe.Pointer, G)
	keep := make([][]float64, 0, 2*G) // the register files, kept alive by lr
	for g := range G {
		fr, vr := fk.Registers(), vk.Registers()
		keep = append(keep, fr, vr)
		lr.fregs[g], lr.vregs[g] = ptr(fr), ptr(vr)
	}
	lr.regFiles = keep
	f := &lr.fargs
	f[rvK], f[rvY], f[rvYS], f[rvKBar] = ptr(ls.k[0]), ptr(ls.y), unsafe.Pointer(unsafe.SliceData(lr.ysPtrs)), ptr(lr.kbar[0])
	f[rvYNew], f[rvYBar], f[rvH], f[rvCoefs] = ptr(lr.ynew), ptr(lr.ybar), ptr(ls.hv), ptr(lr.fused.coefs)
	nb := ls.sv.lastB + 1
	lr.gys, lr.gps = make([]float64, nb*ls.dim*ls.L), make([]float64, nb*ls.m*ls.L)
	f[rvGY], f[rvGP], f[rvGPTmp], f[rvT] = ptr(lr.gys), ptr(lr.gp), ptr(lr.gps), ptr(lr.t)
	f[rvFRegs], f[rvP], f[rvVRegs] = unsafe.Pointer(unsafe.SliceData(lr.fregs)), ptr(ls.p), unsafe.Pointer(unsafe.SliceData(lr.vregs))
}

// Lanes returns L.
func (lr *LaneReplayer) Lanes() int { return lr.ls.L }

// ReverseLanes runs the reverse replay of every job src hands out, L at
// a time (ivp.LaneWalk.Reverse).
func (lr *LaneReplayer) ReverseLanes(src ivp.ReverseSource, stop *atomic.Bool) {
	lr.walk.Reverse(src, stop)
}

// ReversePartial reverses a save time inside a lane's step on the
// scalar replayer.
func (lr *LaneReplayer) ReversePartial(t, ts float64, y, p, cot, ybar, gp []float64) {
	replayStep{lr.Replayer}.ReversePartial(t, ts, y, p, cot, ybar, gp)
}

// scatterN copies the scalar v of n values per lane into lane l of the
// lane-major dst.
func (ls *LaneSolver) scatterN(dst, v []float64, n, l int) {
	base, W := ls.at(n, 0, l), ls.W
	for d, x := range v[:n] {
		dst[base+d*W] = x
	}
}

// gatherN copies lane l of the lane-major src of n values per lane into
// the scalar dst.
func (ls *LaneSolver) gatherN(dst, src []float64, n, l int) {
	base, W := ls.at(n, 0, l), ls.W
	for d := range dst[:n] {
		dst[d] = src[base+d*W]
	}
}

// ReverseSteps reverses one step in every active lane: Replayer's
// ReverseStep (stages or storedStages, then reverseStep) on lane-major
// arrays.
func (lr *LaneReplayer) ReverseSteps(r *ivp.LaneReverse) {
	ls := lr.ls
	sv, m := ls.sv, ls.m
	keep := false
	for l, on := range r.Active {
		ls.hv[l] = 0 // an idle lane computes on what it holds, harmlessly
		if !on {
			continue
		}
		ls.scatter(ls.y, r.Y[l], l)
		ls.scatterN(ls.p, r.P[l], m, l)
		ls.pl[l] = r.P[l]
		ls.scatter(lr.ynew, r.YNewBar[l], l)
		ls.scatterN(lr.gp, r.GP[l], m, l)
		ls.hv[l], lr.t[l] = r.H[l], r.T[l]
		keep = r.Mesh[l].KeepStages
	}
	t := lr.t
	if lr.fused != nil {
		entry := lr.fused.eval
		if keep {
			entry = lr.fused.stored
			lr.storedStages(r)
		}
		jit.Call16(entry, &lr.fargs)
		runtime.KeepAlive(lr.fused)
		lr.results(r)
		return
	}
	// The stages: from the mesh where it keeps them, else by evaluating
	// f (Replayer.stages, storedStages).
	copy(lr.ys[0], ls.y)
	if keep {
		lr.storedStages(r)
		for i := 1; i <= sv.lastB; i++ {
			lr.input(i)
		}
	} else {
		ls.eval(t, ls.y, ls.k[0], r.Active)
		for i := 1; i <= sv.lastB; i++ {
			lr.input(i)
			ls.stageTimes(t, sv.c[i])
			ls.eval(ls.tt, lr.ys[i], ls.k[i], r.Active)
		}
	}
	// The sweep (reverseStep), each lane with its own h.
	last := sv.lastB
	for i := 0; i <= last; i++ {
		clear(lr.kbar[i])
	}
	lr.sums(-1, lr.ynew)
	clear(lr.ybar)
	addTo(lr.ybar, lr.ynew)
	for i := last; i >= 0; i-- {
		ls.stageTimes(t, sv.c[i])
		lr.cotangents(r.Active, lr.ys[i], lr.kbar[i])
		addTo(lr.ybar, lr.gy)
		addTo(lr.gp, lr.gpTmp)
		lr.sums(i, lr.gy)
	}
	lr.results(r)
}

// storedStages copies the stages each active lane's mesh keeps for its
// step into the lane-major stages.
func (lr *LaneReplayer) storedStages(r *ivp.LaneReverse) {
	ls := lr.ls
	dim, nb := ls.dim, ls.sv.lastB+1
	for l, on := range r.Active {
		if !on {
			continue
		}
		ks := r.Mesh[l].K[r.K[l]*nb*dim : (r.K[l]+1)*nb*dim]
		for j := range nb {
			ls.scatter(ls.k[j], ks[j*dim:(j+1)*dim], l)
		}
	}
}

// results copies each active lane's cotangents of its start state and
// of the parameters out of the lane-major arrays.
func (lr *LaneReplayer) results(r *ivp.LaneReverse) {
	ls := lr.ls
	for l, on := range r.Active {
		if on {
			ls.gather(r.YBar[l], lr.ybar, l)
			ls.gatherN(r.GP[l], lr.gp, ls.m, l)
		}
	}
}

// input sets the input of stage i, y + h·Σ a_ij·k_j, lane by lane: the
// stage code's (machine code, its output pointed at ys[i]) where there
// is one.
func (lr *LaneReplayer) input(i int) {
	ls := lr.ls
	if lr.rev == nil {
		ls.input(lr.ys[i], ls.sv.rows[i])
		return
	}
	lr.sargs[2] = unsafe.Pointer(unsafe.SliceData(lr.ys[i]))
	jit.Call16(ls.jit.entries[0].inputs[i-1], &lr.sargs)
	runtime.KeepAlive(ls.jit)
}

// sums adds (h·a_j)·v to k̄_j for the terms of row i of A (b for i < 0).
func (lr *LaneReplayer) sums(i int, v []float64) {
	sv := lr.ls.sv
	if lr.rev == nil {
		row := sv.b
		if i >= 0 {
			row = sv.rows[i]
		}
		for _, c := range row {
			lr.addScaled(lr.kbar[c.j], v, c.a)
		}
		return
	}
	entry := lr.rev.b
	if i >= 0 {
		entry = lr.rev.rows[i]
	}
	if entry == 0 {
		return
	}
	lr.rargs[1] = unsafe.Pointer(unsafe.SliceData(v))
	jit.Call16(entry, &lr.rargs)
	runtime.KeepAlive(lr.rev)
}

// addScaled adds (h_l·a)·v to dst lane by lane, as reverseStep adds
// h·a_ij times a cotangent: the product h·a rounded first.
func (lr *LaneReplayer) addScaled(dst, v []float64, a float64) {
	ls := lr.ls
	W, n := ls.W, ls.dim*ls.W
	for g := range ls.L / W {
		hg, lo := ls.hv[g*W:(g+1)*W], g*n
		for i := lo; i < lo+n; i += W {
			for w := range W {
				ha := hg[w] * a
				dst[i+w] += ha * v[i+w]
			}
		}
	}
}

// cotangents evaluates the cotangent program at the stage times ls.tt, states
// y and cotangents u into lr.gy and lr.gpTmp: for every lane at once
// where the problem has its lane form, else lane by lane for the active
// lanes.
func (lr *LaneReplayer) cotangents(active []bool, y, u []float64) {
	ls := lr.ls
	dim, m := ls.dim, ls.m
	if lr.vjpLanes != nil {
		const W = ode.LaneWidth
		n, np := dim*W, m*W
		for g := range ls.L / W {
			lr.vjpLanes(ls.tt[g*W:(g+1)*W], y[g*n:(g+1)*n], ls.p[g*np:(g+1)*np], u[g*n:(g+1)*n],
				lr.gy[g*n:(g+1)*n], lr.gpTmp[g*np:(g+1)*np])
		}
		return
	}
	for l, on := range active {
		if !on {
			continue
		}
		ls.gather(lr.yS, y, l)
		ls.gather(lr.uS, u, l)
		lr.Replayer.vjp(ls.tt[l], lr.yS, ls.pl[l], lr.uS, lr.gyS, lr.gpS)
		ls.scatter(lr.gy, lr.gyS, l)
		ls.scatterN(lr.gpTmp, lr.gpS, m, l)
	}
}

// revSums is the cotangent sums of the reverse sweep as machine code
// for L lanes (a multiple of four): for b and for each row i of A, the
// function that adds (h·a_j)·v to the cotangent k̄_j of every stage j
// of the row, with v the array the code's second argument points at —
// Replayer.reverseStep's sums, product by product, lane by lane.
type revSums struct {
	code  *jit.Code
	coefs []float64
	b     uintptr
	rows  []uintptr // by stage i ≤ lastB; 0 for a row without terms
	size  int       // bytes of code
}

// buildRevSums returns the cotangent sums of sv for L lanes, or nil
// where there is no machine code.
func buildRevSums(sv *Solver, L int) *revSums {
	const W = ode.LaneWidth
	if !jit.HasAVX() || L%W != 0 {
		return nil
	}
	G, gdim := L/W, sv.dim*W
	g := &stageGen{dim: gdim * G, hLanes: true, groups: G, gdim: gdim}
	a := &g.a
	emit := func(row []coef) int {
		start := len(a.B)
		g.revSum(row)
		g.finish()
		return start
	}
	offB := emit(sv.b)
	offs := make([]int, sv.lastB+1)
	for i := range offs {
		offs[i] = -1
		if len(sv.rows[i]) > 0 {
			offs[i] = emit(sv.rows[i])
		}
	}
	code, err := jit.NewCode(a.B)
	if err != nil {
		return nil
	}
	code.Name(len(a.B), "erk.reverse-sums", nil)
	rs := &revSums{code: code, coefs: g.coefs, b: code.Addr(offB), rows: make([]uintptr, len(offs)), size: len(a.B)}
	for i, o := range offs {
		if o >= 0 {
			rs.rows[i] = code.Addr(o)
		}
	}
	return rs
}

// BindReverseRounds builds the code of whole rounds of the reverse walk
// (ivp.ReverseRounder): the fused reversed step, its stages evaluated,
// then r's rest of the round. It reports false where the step is not
// fused.
func (lr *LaneReplayer) BindReverseRounds(r *ivp.ReverseRounds) bool {
	if lr.fused == nil || lr.rfused != nil {
		return false
	}
	ls := lr.ls
	ptr := func(s []float64) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(s)) }
	lr.acc = make([]float64, ls.L)
	// The partial steps in the rounds too: every code of the reverse
	// walk's rounds built here takes them, so the cached ones agree.
	r.SetPartials(ptr(lr.acc))
	code := cachedFusedReverse(ls.sv, lr.fk, lr.vk, ls.L, ls.m, r)
	if code == nil {
		return false
	}
	r.SetArrays(ptr(ls.y), ptr(lr.ynew), ptr(lr.ybar), ptr(lr.t), ptr(ls.hv))
	copy(lr.rfargs[:16], lr.fargs[:])
	lr.rfargs[rvCoefs], lr.rfargs[rvAcc] = ptr(code.coefs), ptr(lr.acc)
	lr.rfargs[argRoundBase], lr.rfargs[argRoundArgs] = r.Base(), r.Args()
	lr.rfused, lr.rrounds = code, r
	return true
}

// ReverseRounds runs up to n rounds of the code BindReverseRounds built
// (fewer for a large code: roundBytes).
func (lr *LaneReplayer) ReverseRounds(n int) {
	lr.rrounds.SetRounds(rounds(n, lr.rfused.size))
	jit.Call16(lr.rfused.eval, (*[16]unsafe.Pointer)(unsafe.Pointer(&lr.rfargs)))
	runtime.KeepAlive(lr.rfused)
	runtime.KeepAlive(lr.regFiles)
}

// LoadLane puts lane l's step of r into the lanes, as ReverseSteps does
// for each active lane.
func (lr *LaneReplayer) LoadLane(l int, r *ivp.LaneReverse) {
	ls := lr.ls
	ls.scatter(ls.y, r.Y[l], l)
	ls.scatterN(ls.p, r.P[l], ls.m, l)
	ls.pl[l] = r.P[l]
	ls.scatter(lr.ynew, r.YNewBar[l], l)
	ls.scatterN(lr.gp, r.GP[l], ls.m, l)
	ls.hv[l], lr.t[l] = r.H[l], r.T[l]
	if lr.acc != nil {
		lr.acc[l] = 0 // a full step: its ȳ starts cleared
	}
}

// StoreLane takes lane l's results out of the lanes into r, as results
// does for each active lane.
func (lr *LaneReplayer) StoreLane(l int, r *ivp.LaneReverse) {
	ls := lr.ls
	ls.gather(r.YBar[l], lr.ybar, l)
	ls.gatherN(r.GP[l], lr.gp, ls.m, l)
}
