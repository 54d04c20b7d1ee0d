package tape

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/sym"
)

// Direct entry: machine code that Go calls as an ode.Func.
//
// A program of one piece of machine code that reads no seeds is also
// written a second time, as a function in Go's own register calling
// convention on amd64 (ABIInternal: funcBases, jitgen.go), and NewFunc
// hands it out as the ode.Func itself, so that a solver's call of f
// reaches the code with no Go in between. Go calls that convention
// unstable between releases, so this route is guarded twice:
//
//   - at build time, by the constraint of direct_abi.go: only a
//     toolchain whose convention this code was written and checked
//     against (Go 1.26 on linux/amd64) compiles it in; any other build
//     has directSupported false and never generates such code;
//   - at run time, before the first direct function is handed out, by a
//     self-test (directProbe): a program that reads t, every component of
//     y and p and writes every output, called through an ode.Func on
//     random inputs, must give the interpreter's bits.
//
// Where either says no, NewFunc returns a Go closure over EvalF, which
// enters the same program's machine code through jit.Call5, an ABI0
// assembly trampoline (a stable convention), or runs the interpreter;
// every route gives the same bits. The direct route is worth having:
// on BenchmarkLorenzF it costs 4.7 ns a call against 12 ns through
// EvalF, and 14–19% of a whole solve of a problem file
// (bench/results/abi-2026-12-01.txt).

// direct holds the outcome of the self-test, run once per process.
var direct struct {
	once sync.Once
	err  error // nil: direct functions are handed out
}

// directEntry reports whether NewFunc may hand out machine code as an
// ode.Func (nil), or why not.
func directEntry() error {
	direct.once.Do(func() { direct.err = directProbe() })
	return direct.err
}

// errNoDirect says why this build has no direct entry.
var errNoDirect = errors.New("tape: no direct calls of machine code in this build (" + directBuild + ")")

// directProbe builds the self-test's program and checks its direct
// function against the interpreter.
func directProbe() error {
	if !directSupported {
		return errNoDirect
	}
	if !jit.Enabled() {
		return errors.New("tape: machine code is off (GRADSOLVE_JIT)")
	}
	pg, err := probeProgram()
	if err != nil {
		return fmt.Errorf("tape: direct-call self-test: %v", err)
	}
	if pg.jit == nil || pg.jit.fentry == 0 {
		return errors.New("tape: direct-call self-test: the probe program has no direct entry")
	}
	return directCheck(pg, directFunc(pg.jit, &pg.NewRegisters()[0]))
}

// probeProgram is the self-test's program: 13 states and 3 parameters,
// every output reading t, its own state, a neighbour, a parameter and a
// running sum, so that the values outlive the vector registers and go
// through the register file.
func probeProgram() (*Program, error) {
	const n, m = 13, 3
	g := sym.NewGraph()
	t := g.Time()
	sum := g.Const(0.5)
	outs := make([]sym.Expr, n)
	for i := range n {
		y, next, p := g.State(i), g.State((i+5)%n), g.Param(i%m)
		sum = sum.Add(y.Mul(p))
		outs[i] = t.Mul(y).Sub(next.Div(p)).Add(sym.Sqrt(sym.Abs(sum))).Mul(g.Param((i + 1) % m))
	}
	return Compile("probe", g, outs, n, m)
}

// directCheck calls f, which should be pg's machine code as an ode.Func,
// on random inputs (slices longer than needed among them) and compares
// each output, bit for bit, with the interpreter's.
func directCheck(pg *Program, f ode.Func) error {
	l := pg.layout
	ref := *pg
	ref.jit, ref.entry = nil, 0 // the interpreter
	rr := ref.NewRegisters()
	rng := rand.New(rand.NewPCG(0x5eed, 13))
	for trial := range 32 {
		extra := trial % 3 // slices longer than the program reads
		y := make([]float64, l.Dim+extra)
		p := make([]float64, l.NumParams+extra)
		for i := range y {
			y[i] = 4*rng.Float64() - 2
		}
		for i := range p {
			p[i] = 0.5 + rng.Float64() // away from 0: p divides
		}
		tt := 10*rng.Float64() - 5
		got, want := make([]float64, len(pg.outs)+extra), make([]float64, len(pg.outs)+extra)
		f(tt, y, p, got)
		ref.EvalF(rr, tt, y, p, want)
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				return fmt.Errorf("tape: direct-call self-test: output %d is %v, the interpreter gives %v: the calling convention is not the one this code was written for", i, got[i], want[i])
			}
		}
	}
	return nil
}
