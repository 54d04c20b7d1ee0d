package erk

import (
	"runtime"
	"unsafe"

	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/ode"
)

// The fused attempt: where the right-hand side is itself the tape's
// machine code (jit.ClosureOf), a whole attempt — every stage sum and
// every call of f — is one call of machine code. The strategy is this
// file (fusedStepper and the code it runs) and the fused flag of
// jitStages that buildJITStages and setJITArgs read.

// fusedStepper runs a whole attempt, the calls of f included, as one
// call of machine code (the right-hand side is machine code too:
// jit.ClosureOf).
type fusedStepper struct{ stepper }

// Attempt runs the fused code and finishes the norm (normOfSquares).
func (s fusedStepper) Attempt(t, h float64, p []float64, moved bool, st *ode.Stats) (float64, bool) {
	if s.cfg.NormDim != s.jit.nd { // code for another norm: not this solver's
		return s.stepper.Attempt(t, h, p, moved, st)
	}
	sv := s.begin(t, p, moved, st)
	e := sv.jitEntries(h)
	// The driver evaluated f(t0, y0, p) in Go first, so a p too short
	// for f panicked there and cannot reach the machine code.
	a := &sv.jargs
	sv.t, sv.plen = t, len(p)
	a[argP] = unsafe.Pointer(unsafe.SliceData(p))
	jit.Call16(e.attempt, a)
	runtime.KeepAlive(sv.jit) // it owns the code
	return sv.normOfSquares()
}

// fusedAttempt writes one function for a whole attempt whose right-hand
// side is machine code (see jit.ClosureOf): each stage's sum, then a
// call of f's code, as genericStages does them. Solver.jargs stays in
// R13, which f's code leaves alone. It returns the function's offset.
func (g *stageGen) fusedAttempt(sv *Solver, end, nd int) int {
	a := &g.a
	start := len(a.B)
	a.MovRR(jit.R13, jit.BX)
	s := sv.s
	for i := 1; i < end; i++ {
		g.begin()
		g.sum(regYT, sv.rows[i], sv.dim, true)
		g.callF(sv.c[i], false, 2, g.slot[i])
	}
	g.begin()
	if sv.fsal {
		g.sum(regY1, sv.rows[s-1], sv.dim, true)
	} else {
		g.sum(regY1, sv.b, sv.dim, true)
	}
	if sv.fsal && !sv.defer_ {
		g.callF(1, true, 3, g.slot[s-1])
		g.begin()
	}
	g.sum(regEV, sv.e, nd, false)
	if sv.e3 != nil {
		g.sum(regEV3, sv.e3, nd, false)
	}
	g.norm(nd, sv.e3 != nil)
	g.finish()
	return start
}

// callF writes a call of f's code in Go's register convention:
// f(t + float64(c·h), in, p, k) with in Solver.jargs[in] (yt or y1) and
// k the stage in place slot; last means t + h. Then it reloads the
// registers f's code changed.
func (g *stageGen) callF(c float64, last bool, in int, slot int) {
	a := &g.a
	arg := func(i int) jit.Mem { return jit.Mem{Base: jit.R13, Disp: int32(8 * i)} }
	a.Vzeroupper() // f's code uses the legacy SSE encodings
	// X0 = t + float64(c·h), from memory: t at argT, h at regH's address.
	a.Load64(jit.R12, arg(argT))
	a.VRM(jit.VexPPF2, jit.Map0F, false, jit.OpLoad, 0, 0, jit.Mem{Base: jit.R12})
	a.VRM(jit.VexPPF2, jit.Map0F, false, jit.OpLoad, yTmp, 0, jit.Mem{Base: regH})
	if !last {
		i := len(g.coefs)
		g.coefs = append(g.coefs, c)
		a.VRM(jit.VexPPF2, jit.Map0F, false, jit.OpMul, yTmp, yTmp, jit.Mem{Base: regCoefs, Disp: int32(8 * i)})
	}
	a.VRR(jit.VexPPF2, jit.Map0F, false, jit.OpAdd, 0, 0, yTmp)
	// y: AX (pointer), BX (length); p: DI, SI; out: R9, R10; DX the closure.
	n := uint64(g.dim)
	a.Load64(jit.AX, arg(in))
	a.MovImm64(jit.BX, n)
	a.Load64(jit.DI, arg(argP))
	a.Load64(jit.SI, arg(argPLen))
	a.Load64(jit.SI, jit.Mem{Base: jit.SI})
	a.Load64(jit.R9, arg(0))
	a.Lea(jit.R9, jit.Mem{Base: jit.R9, Disp: int32(8 * slot * g.dim)})
	a.MovImm64(jit.R10, n)
	a.Load64(jit.DX, arg(argClosure))
	a.CallMem(jit.Mem{Base: jit.DX})
	for i, r := range argRegs {
		a.Load64(r, arg(i))
	}
}
