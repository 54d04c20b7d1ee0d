package erk

import (
	"sync/atomic"

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
// (TestLaneReverseMatchesScalar). Save times inside a step, and the
// forward replay, run on the scalar replayer lane by lane.

// LaneReplayer is a Replayer whose Reverse also runs in lanes
// (ReverseLanes).
type LaneReplayer struct {
	*Replayer
	ls       *LaneSolver // the lane arrays, their layout and f in lanes
	vjpLanes func(t, y, p, u, gy, gp []float64)
	walk     *ivp.LaneWalk

	ys               [][]float64 // the stages' inputs, lane-major
	kbar             [][]float64 // the stages' cotangents
	ynew, ybar, gy   []float64   // lane-major states' cotangents
	gp, gpTmp        []float64   // lane-major parameters' cotangents
	uS, gyS, gpS, yS []float64   // one lane's, for the cotangent program lane by lane
	t                []float64   // the lanes' step start times
}

// NewLaneReplayer returns the replayer of cfg (as NewReplayer) for L
// lanes of trajectories with m parameters; flanes and vjpLanes are the
// lane forms of cfg.F and vjp (nil: lane by lane).
func NewLaneReplayer(cfg Config, L, m int, vjp VJPFunc, flanes ode.LaneFunc, vjpLanes func(t, y, p, u, gy, gp []float64)) (*LaneReplayer, error) {
	rp, err := NewReplayer(cfg, m, vjp)
	if err != nil {
		return nil, err
	}
	ls, err := NewLanes(cfg, L, m, flanes, nil)
	if err != nil {
		return nil, err
	}
	if ls.W != ode.LaneWidth {
		vjpLanes = nil
	}
	lr := &LaneReplayer{Replayer: rp, ls: ls, vjpLanes: vjpLanes, t: make([]float64, L)}
	s, n := ls.sv.lastB+1, ls.dim*L
	flat := make([]float64, 2*s*n+3*n+2*m*L+3*ls.dim+m)
	lr.ys, flat = split(flat, s, n)
	lr.kbar, flat = split(flat, s, n)
	lr.ynew, lr.ybar, lr.gy, flat = flat[:n], flat[n:2*n], flat[2*n:3*n], flat[3*n:]
	lr.gp, lr.gpTmp, flat = flat[:m*L], flat[m*L:2*m*L], flat[2*m*L:]
	d := ls.dim
	lr.uS, lr.gyS, lr.yS, lr.gpS = flat[:d], flat[d:2*d], flat[2*d:3*d], flat[3*d:3*d+m]
	lr.walk = ivp.NewLaneWalk(lr, ls.dim)
	return lr, nil
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
	sv, dim, m := ls.sv, ls.dim, ls.m
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
	// The stages: from the mesh where it keeps them, else by evaluating
	// f (Replayer.stages, storedStages).
	copy(lr.ys[0], ls.y)
	if keep {
		n := (sv.lastB + 1) * dim
		for l, on := range r.Active {
			if !on {
				continue
			}
			ks := r.Mesh[l].K[r.K[l]*n : (r.K[l]+1)*n]
			for j := range sv.lastB + 1 {
				ls.scatter(ls.k[j], ks[j*dim:(j+1)*dim], l)
			}
		}
		for i := 1; i <= sv.lastB; i++ {
			ls.input(lr.ys[i], sv.rows[i])
		}
	} else {
		ls.eval(t, ls.y, ls.k[0], r.Active)
		for i := 1; i <= sv.lastB; i++ {
			ls.input(lr.ys[i], sv.rows[i])
			ls.stageTimes(t, sv.c[i])
			ls.eval(ls.tt, lr.ys[i], ls.k[i], r.Active)
		}
	}
	// The sweep (reverseStep), each lane with its own h.
	last := sv.lastB
	for i := 0; i <= last; i++ {
		clear(lr.kbar[i])
	}
	for _, c := range sv.b {
		lr.addScaled(lr.kbar[c.j], lr.ynew, c.a)
	}
	clear(lr.ybar)
	addTo(lr.ybar, lr.ynew)
	for i := last; i >= 0; i-- {
		ls.stageTimes(t, sv.c[i])
		lr.cotangents(r.Active, lr.ys[i], lr.kbar[i])
		addTo(lr.ybar, lr.gy)
		addTo(lr.gp, lr.gpTmp)
		for _, c := range sv.rows[i] {
			lr.addScaled(lr.kbar[c.j], lr.gy, c.a)
		}
	}
	for l, on := range r.Active {
		if on {
			ls.gather(r.YBar[l], lr.ybar, l)
			ls.gatherN(r.GP[l], lr.gp, m, l)
		}
	}
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
