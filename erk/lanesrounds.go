package erk

import (
	"runtime"
	"unsafe"

	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/ode"
)

// Whole rounds: where the attempt is fused (lanesfused.go), the lane
// driver's common path and the controller follow it in the same machine
// code, which starts the next attempt itself (ivp.LaneRounder).

// BindRounds makes r's arrays the lanes' times, step sizes, error norms
// and masks, and builds the code of whole rounds (ivp.LaneRounder). It
// reports false, binding nothing, where the attempt is not fused.
func (ls *LaneSolver) BindRounds(r *ivp.LaneRounds) bool {
	if !ls.bindRounds(r, r.F(ivp.RoundT), r.F(ivp.RoundH), r.F(ivp.RoundErr), r.Masks(), r.Base(), r.Args()) {
		return false
	}
	ls.rounds = r
	return true
}

// BindReplayRounds is BindRounds for the forward replay
// (ivp.ReplayRounder): the code of whole rounds of ivp.LaneForward.
func (ls *LaneSolver) BindReplayRounds(r *ivp.ReplayRounds) bool {
	if !ls.bindRounds(r, r.F(ivp.RoundT), r.F(ivp.RoundH), r.F(ivp.RoundErr), r.Masks(), r.Base(), r.Args()) {
		return false
	}
	r.SetProposals(unsafe.Pointer(unsafe.SliceData(ls.y1)))
	ls.replay = r
	return true
}

// bindRounds builds the code of whole rounds with tail after the fused
// attempt and makes t, h, errv and masks the lanes' arrays. A lane
// solver binds one kind of rounds at most.
func (ls *LaneSolver) bindRounds(tail roundTail, t, h, errv []float64, masks []uint64, base, args unsafe.Pointer) bool {
	if ls.fused == nil || ls.rcode != nil {
		return false
	}
	code := cachedFusedLanes(ls.sv, ls.kernel, ls.cols, ls.L, ls.m, tail)
	if code == nil {
		return false
	}
	ptr := func(s []float64) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(s)) }
	ls.tIn, ls.hv, ls.errv = t, h, errv
	copy(masks, ls.moved)
	ls.moved = masks
	for _, args := range []*[16]unsafe.Pointer{&ls.jargs, &ls.fargs} {
		args[6], args[argErr] = ptr(ls.hv), ptr(ls.errv)
	}
	ls.fargs[argT], ls.fargs[argMoved] = ptr(ls.tIn), unsafe.Pointer(unsafe.SliceData(ls.moved))
	copy(ls.rargs[:16], ls.fargs[:])
	ls.rargs[7] = ptr(code.coefs)
	ls.rargs[argRoundBase], ls.rargs[argRoundArgs] = base, args
	ls.rcode = code
	return true
}

// roundBytes bounds the machine code one call of whole rounds runs:
// the code is not preempted (the goroutine cannot stop for the
// collector) until it returns, so a call runs at most about this many
// bytes of straight-line code — some 0.2 ms — whatever the problem's
// size: rounds(n, size) rounds of a code of size bytes.
const roundBytes = 2 << 20

func rounds(n, size int) int { return max(1, min(n, roundBytes/max(size, 1))) }

// Rounds runs up to n rounds of the code BindRounds built (fewer for a
// large code: roundBytes).
func (ls *LaneSolver) Rounds(n int) {
	ls.rounds.SetRounds(rounds(n, ls.rcode.size))
	ls.callRounds()
}

// ReplayRounds runs up to n rounds of the code BindReplayRounds built
// (fewer for a large code: roundBytes).
func (ls *LaneSolver) ReplayRounds(n int) {
	ls.replay.SetRounds(rounds(n, ls.rcode.size))
	ls.callRounds()
}

func (ls *LaneSolver) callRounds() {
	jit.Call16(ls.rcode.entry, (*[16]unsafe.Pointer)(unsafe.Pointer(&ls.rargs)))
	runtime.KeepAlive(ls.rcode)
	runtime.KeepAlive(ls.fregs)
}

// RoundEvals counts the evaluations of a lane's attempts made by
// Rounds: each attempt's, and for a method that evaluates f at the new
// point of an accepted step, one more for each attempt that completed
// one (as attemptFused counts them).
func (ls *LaneSolver) RoundEvals(attempts, moved int, st *ode.Stats) {
	sv := ls.sv
	st.FEvals += attempts * sv.attemptEvals
	if !sv.fsal || sv.defer_ {
		st.FEvals += moved
	}
}
