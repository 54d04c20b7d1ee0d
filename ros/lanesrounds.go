package ros

import (
	"math"
	"runtime"
	"sync"
	"unsafe"

	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/ode"
)

// Whole rounds of the reverse walk (ivp.ReverseRounder). Where the
// reversed step is two functions of machine code — the attempt with f's
// body in it, and the sweep with the cotangent programs' — the code of
// a round is the two copied one after the other, then the walk's rest
// of the round (ivp.ReverseRounds.EmitRest): the lanes that go on to
// their next step take its state, time and step size from the mesh and
// the cotangent of its end state from the step just reversed, without
// Go. J and f_t have no machine code: each round, Go evaluates them at
// the lanes' step starts (as the attempt's jacobians does), then calls
// the code for one round; a lane whose step the code leaves to Go ends
// the call. The arithmetic is ReverseSteps', lane by lane, so the bits
// are the Go walk's.

// roundsCode is the code of a round for one forward code and sweep.
type roundsCode struct {
	code  *jit.Code
	entry uintptr
}

var (
	roundsMu    sync.Mutex
	roundsCache = map[roundsKey]*roundsCode{}
)

// roundsKey names the code of a round: the rest of the round depends
// on the block's lane count and state size only (its addresses are the
// block's, through R14), which fc fixes.
type roundsKey struct {
	fc       *laneCode
	rc       *revCode
	partials bool // the rounds take partial steps (ivp.ReverseRounds.SetPartials)
}

// The arguments of the code of a round (jit.Call16, in BX throughout):
// the forward arena, the reverse arena, the rounds' block and their
// arguments.
const (
	rdFwd = iota
	rdRev
	rdBase
	rdArgs
)

// buildRounds returns the code of a round: R14 and R15 from the
// arguments, then, at each round, the fused attempt (its arena in DI),
// ȳ cleared (ReverseSteps puts the walk's cleared ȳ there), the fused
// sweep (the forward arena in DI, the reverse one in SI), and r's rest
// of the round; nil where either piece is not fused. Where r takes
// partial steps (ivp.ReverseRounds.SetPartials), ȳ is cleared only in
// the lanes whose accumulate mask is clear: a lane taking a partial
// step adds its cotangents to the ȳ it holds, as ReversePartial adds
// into the walk's ȳ after the full step.
func buildRounds(fc *laneCode, rc *revCode, r *ivp.ReverseRounds) *roundsCode {
	if fc.body == nil || rc.body == nil {
		return nil
	}
	var a jit.Asm
	arg := func(i int) jit.Mem { return jit.Mem{Base: jit.BX, Disp: int32(8 * i)} }
	a.Load64(jit.R14, arg(rdBase))
	a.Load64(jit.R15, arg(rdArgs))
	loop := len(a.B)
	a.Load64(jit.DI, arg(rdFwd))
	a.B = append(a.B, fc.body...)
	a.Load64(jit.DI, arg(rdFwd))
	a.Load64(jit.SI, arg(rdRev))
	a.MovRR(revBase, jit.SI)
	fl, rl := fc.lay, rc.lay
	a.VRR(pp66, m0F, true, jit.OpXor, 0, 0, 0)
	if r.Partials() {
		a.Load64(jit.AX, jit.Mem{Base: jit.R15, Disp: 8 * ivp.ReverseArgAcc})
	}
	for grp := range fl.G {
		if r.Partials() {
			a.VRM(pp66, m0F, true, jit.OpLoad, 1, 0, jit.Mem{Base: jit.AX, Disp: int32(32 * grp)})
		}
		for d := range rl.ybar.n {
			at := jit.Mem{Base: revBase, Disp: int32(8 * fl.at(rl.ybar, d, grp))}
			v := byte(0)
			if r.Partials() { // the lane's own where its mask is set, else 0
				a.VRM(pp66, m0F, true, jit.OpLoad, 2, 0, at)
				a.VBlendv(2, 0, 2, 1)
				v = 2
			}
			a.VRM(pp66, m0F, true, jit.OpSt, v, 0, at)
		}
	}
	a.B = append(a.B, rc.body...)
	r.EmitRest(&a, loop)
	code, err := jit.NewCode(a.B)
	if err != nil {
		return nil
	}
	code.Name(len(a.B), "ros.reverse-rounds", nil)
	return &roundsCode{code: code, entry: code.Addr(0)}
}

// BindReverseRounds builds the code of whole rounds of the reverse walk
// (ivp.ReverseRounder) and gives r the lanes' arrays. It reports false
// where the attempt or the sweep is not one function of machine code,
// or f at the steps' starts is not in the attempt's code (an FSAL
// method).
func (lr *LaneReplayer) BindReverseRounds(r *ivp.ReverseRounds) bool {
	ls := lr.ls
	if lr.rounds != nil || !ls.code.fused || ls.fsal || !lr.rc.fused || ls.ns != 0 {
		return false
	}
	// The partial steps in the rounds too: every code built here takes
	// them, so the cached ones agree.
	if lr.acc == nil {
		lr.acc = make([]float64, ls.L)
	}
	r.SetPartials(unsafe.Pointer(unsafe.SliceData(lr.acc)))
	k := roundsKey{ls.code, lr.rc, r.Partials()}
	roundsMu.Lock()
	rc, ok := roundsCache[k]
	if !ok {
		rc = buildRounds(ls.code, lr.rc, r)
		roundsCache[k] = rc
	}
	roundsMu.Unlock()
	if rc == nil {
		return false
	}
	ptr := func(s []float64) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(s)) }
	r.SetArrays(ptr(ls.y), ptr(lr.ynb), ptr(lr.ybar), ptr(ls.t), ptr(ls.h))
	lr.rargs[rdFwd], lr.rargs[rdRev] = ptr(ls.arena), ptr(lr.arena)
	lr.rargs[rdBase], lr.rargs[rdArgs] = r.Base(), r.Args()
	lr.rounds, lr.rblock = rc, r
	return true
}

// Rounds reports whether the reverse walk runs whole rounds as machine
// code (BindReverseRounds bound them).
func (lr *LaneReplayer) Rounds() bool { return lr.rounds != nil }

// ReverseRounds runs up to n rounds of the code BindReverseRounds
// built, each after J and f_t at the lanes' step starts, until some
// lane needs Go.
func (lr *LaneReplayer) ReverseRounds(n int) {
	ls, r := lr.ls, lr.rblock
	ones := math.Float64frombits(allOnes)
	for l := range ls.moved {
		// f at each lane's (t, y): the code's (ReverseSteps' inCode).
		ls.moved[l] = ones
	}
	for range n {
		lr.roundJacobians()
		r.SetRounds(1)
		jit.Call16(lr.rounds.entry, &lr.rargs)
		runtime.KeepAlive(lr.rounds)
		runtime.KeepAlive(lr.arena)
		runtime.KeepAlive(ls.arena)
		if r.RoundsLeft() != 0 {
			break
		}
	}
	// The lanes' J are not those of states the lane solver knows of.
	for l := range ls.fresh {
		ls.fresh[l] = false
	}
}

// roundJacobians evaluates J and f_t at the active lanes' step starts
// into the lanes, as jacobians does for a reversed step's attempt.
func (lr *LaneReplayer) roundJacobians() {
	ls := lr.ls
	ls.groupJacobians(ls.t, lr.rblock.Active)
}

// groupJacobians evaluates J and f_t at the times t and the states of
// the lanes active reports into the lanes, as jacobians does: for every
// group holding an active lane at once where the problem has the lane
// forms (which give the scalar programs' bits lane by lane), else lane
// by lane.
func (ls *LaneSolver) groupJacobians(t []float64, active func(l int) bool) {
	const W = ode.LaneWidth
	if ls.lp.JacY == nil {
		for l := range ls.L {
			if active(l) {
				ls.jacobian(l, t[l], ls.pl[l])
			}
		}
		return
	}
	n, m := ls.dim, ls.m
	for grp := range ls.L / W {
		if !active(grp*W) && !active(grp*W+1) && !active(grp*W+2) && !active(grp*W+3) {
			continue
		}
		tg, y, p := t[grp*W:(grp+1)*W], ls.y[grp*n*W:(grp+1)*n*W], ls.p[grp*m*W:(grp+1)*m*W]
		jac, ft := ls.jac[grp*n*n*W:(grp+1)*n*n*W], ls.ft[grp*n*W:(grp+1)*n*W]
		ls.lp.JacY(tg, y, p, jac)
		if ls.lp.DfDt != nil {
			ls.lp.DfDt(tg, y, p, ft)
		} else {
			clear(ft)
		}
	}
}

// LoadLane puts lane l's step of r into the lanes, as ReverseSteps does
// for each active lane.
func (lr *LaneReplayer) LoadLane(l int, r *ivp.LaneReverse) {
	ls, n, m := lr.ls, lr.ls.dim, lr.ls.m
	scatter(ls.y, r.Y[l][:n], l)
	scatter(ls.p, r.P[l][:m], l)
	ls.pl[l] = r.P[l]
	ls.t[l], ls.h[l] = r.T[l], r.H[l]
	scatter(lr.ynb, r.YNewBar[l][:n], l)
	scatter(lr.ybar, r.YBar[l][:n], l)
	scatter(lr.gp, r.GP[l][:m], l)
	if lr.acc != nil {
		lr.acc[l] = 0 // a full step: its ȳ starts cleared
	}
}

// StoreLane takes lane l's results out of the lanes into r, as
// ReverseSteps does after the sweep.
func (lr *LaneReplayer) StoreLane(l int, r *ivp.LaneReverse) {
	n, m := lr.ls.dim, lr.ls.m
	gather(r.YBar[l][:n], lr.ybar, l)
	gather(r.GP[l][:m], lr.gp, l)
}

// Whole rounds of the forward replay (ivp.ReplayRounder), in the same
// way: the code of a round copies the block's times, step sizes and
// masks of the lanes that moved on into the attempt's arrays, runs the
// fused attempt, gives the block the attempts' verdicts (the error
// norm, +Inf where W did not factor, as Attempt gives them), then
// ivp's rest of the round. Between rounds Go completes the proposals
// the code accepted (the pending lanes: Accept) and evaluates J and
// f_t at the lanes' (t, y), as Attempt does before its code.

// replayCache holds the code of a forward replay round for each
// forward code (which fixes the lanes and the state's size, all the
// block's layout depends on).
var (
	replayMu    sync.Mutex
	replayCache = map[*laneCode]*roundsCode{}
)

// buildReplayRounds returns the code of a forward replay round (see
// above) for the block r, whose arrays lie at the offsets t, h, moved
// and errv (in values) from its base; nil where the attempt is not
// fused.
func buildReplayRounds(fc *laneCode, r *ivp.ReplayRounds, t, h, moved, errv int) *roundsCode {
	if fc.body == nil {
		return nil
	}
	const W = ode.LaneWidth
	fl := fc.lay
	var a jit.Asm
	arg := func(i int) jit.Mem { return jit.Mem{Base: jit.BX, Disp: int32(8 * i)} }
	blk := func(off, grp int) jit.Mem { return jit.Mem{Base: jit.R14, Disp: int32(8 * (off + grp*W))} }
	are := func(x laneArray, grp int) jit.Mem { return jit.Mem{Base: laneBase, Disp: int32(8 * fl.at(x, 0, grp))} }
	a.Load64(jit.R14, arg(rdBase))
	a.Load64(jit.R15, arg(rdArgs))
	loop := len(a.B)
	a.Load64(laneBase, arg(rdFwd))
	for grp := range fl.G {
		for _, c := range [][2]int{{t, 0}, {h, 1}, {moved, 2}} {
			dst := []laneArray{fl.t, fl.h, fl.moved}[c[1]]
			a.VRM(pp66, m0F, true, jit.OpLoad, 0, 0, blk(c[0], grp))
			a.VRM(pp66, m0F, true, jit.OpSt, 0, 0, are(dst, grp))
		}
	}
	a.Load64(jit.DI, arg(rdFwd))
	a.B = append(a.B, fc.body...)
	a.Load64(laneBase, arg(rdFwd))
	inf := -1 // the attempt's constant +Inf (factor's bound on a pivot)
	for i, c := range fc.consts {
		if math.IsInf(c, 1) {
			inf = i
		}
	}
	if inf < 0 {
		return nil
	}
	a.VRM(pp66, m0F, true, jit.OpLoad, 1, 0, jit.Mem{Base: laneBase, Disp: int32(8 * (fl.consts + inf*W))})
	for grp := range fl.G { // err where W factored, else +Inf
		a.VRM(pp66, m0F, true, jit.OpLoad, 0, 0, are(fl.err, grp))
		a.VRM(pp66, m0F, true, jit.OpLoad, 2, 0, are(fl.ok, grp))
		a.VBlendv(0, 1, 0, 2)
		a.VRM(pp66, m0F, true, jit.OpSt, 0, 0, blk(errv, grp))
	}
	r.EmitRest(&a, loop)
	code, err := jit.NewCode(a.B)
	if err != nil {
		return nil
	}
	code.Name(len(a.B), "ros.replay-rounds", nil)
	return &roundsCode{code: code, entry: code.Addr(0)}
}

// BindReplayRounds builds the code of whole rounds of the forward
// replay (ivp.ReplayRounder) and tells r where the proposals lie. It
// reports false where the attempt is not one function of machine code
// or f at the steps' starts is not in it (FSAL), or with sensitivity
// columns; the stepper's own arrays stay its own (the code copies the
// block's in), so its Attempt is as before.
func (ls *LaneSolver) BindReplayRounds(r *ivp.ReplayRounds) bool {
	if ls.code == nil || !ls.code.fused || ls.fsal || ls.ns != 0 || ls.rblock != nil {
		return false
	}
	base := uintptr(r.Base())
	off := func(p unsafe.Pointer) int { return int((uintptr(p) - base) / 8) }
	t, h := off(unsafe.Pointer(&r.F(ivp.RoundT)[0])), off(unsafe.Pointer(&r.F(ivp.RoundH)[0]))
	errv, moved := off(unsafe.Pointer(&r.F(ivp.RoundErr)[0])), off(unsafe.Pointer(&r.Masks()[0]))
	replayMu.Lock()
	rc, ok := replayCache[ls.code]
	if !ok {
		rc = buildReplayRounds(ls.code, r, t, h, moved, errv)
		replayCache[ls.code] = rc
	}
	replayMu.Unlock()
	if rc == nil {
		return false
	}
	r.SetProposals(unsafe.Pointer(unsafe.SliceData(ls.y1)))
	ls.rargs[rdFwd] = unsafe.Pointer(unsafe.SliceData(ls.arena))
	ls.rargs[rdBase], ls.rargs[rdArgs] = r.Base(), r.Args()
	ls.rcode, ls.rblock = rc, r
	return true
}

// ReplayRounds runs up to n rounds of the code BindReplayRounds built,
// each after the proposals the last one accepted became their lanes'
// states and J and f_t at the lanes' (t, y), until some lane needs Go.
func (ls *LaneSolver) ReplayRounds(n int) {
	r, L := ls.rblock, ls.L
	pending := r.Masks()[L : 2*L]
	for range n {
		for l, p := range pending {
			if p != 0 {
				ls.Accept(l)
			}
		}
		ls.groupJacobians(r.F(ivp.RoundT), r.Active) // (the code copies the block's t after)
		r.SetRounds(1)
		jit.Call16(ls.rcode.entry, &ls.rargs)
		runtime.KeepAlive(ls.rcode)
		runtime.KeepAlive(ls.arena)
		if r.RoundsLeft() != 0 {
			break
		}
	}
	for l := range ls.fresh {
		ls.fresh[l] = false
	}
}
