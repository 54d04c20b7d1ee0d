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
	if ls.fused == nil {
		return false
	}
	code := cachedFusedLanes(ls.sv, ls.kernel, ls.cols, ls.L, ls.m, r)
	if code == nil {
		return false
	}
	ptr := func(s []float64) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(s)) }
	ls.tIn, ls.hv, ls.errv = r.F(ivp.RoundT), r.F(ivp.RoundH), r.F(ivp.RoundErr)
	masks := r.Masks()
	copy(masks, ls.moved)
	ls.moved = masks
	for _, args := range []*[16]unsafe.Pointer{&ls.jargs, &ls.fargs} {
		args[6], args[argErr] = ptr(ls.hv), ptr(ls.errv)
	}
	ls.fargs[argT], ls.fargs[argMoved] = ptr(ls.tIn), unsafe.Pointer(unsafe.SliceData(ls.moved))
	copy(ls.rargs[:16], ls.fargs[:])
	ls.rargs[7] = ptr(code.coefs)
	ls.rargs[argRoundBase], ls.rargs[argRoundArgs] = r.Base(), r.Args()
	ls.rounds, ls.rcode = r, code
	return true
}

// Rounds runs up to n rounds of the code BindRounds built.
func (ls *LaneSolver) Rounds(n int) {
	ls.rounds.SetRounds(n)
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
