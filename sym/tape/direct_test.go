package tape

import (
	"errors"
	"math"
	"testing"
	"unsafe"

	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/ode"
)

// codeOf returns the address of the code a func value calls.
func codeOf(f ode.Func) uintptr { return **(**uintptr)(unsafe.Pointer(&f)) }

// The self-test passes in a build that allows direct entry and has
// machine code, and then NewFunc hands out the code itself; elsewhere it
// says why not.
func TestDirectEntry(t *testing.T) {
	err := directEntry()
	if !directSupported || !jit.Enabled() {
		if err == nil {
			t.Fatal("direct entry in a build or environment without it")
		}
		t.Logf("no direct entry: %v", err)
		return
	}
	if err != nil {
		t.Fatalf("the self-test failed on the toolchain it was written for: %v", err)
	}
	s, err := Build(lorenzModel())
	if err != nil {
		t.Fatal(err)
	}
	pg := s.F()
	if pg.jit == nil || pg.jit.fentry == 0 {
		t.Fatal("Lorenz's f has no direct entry")
	}
	if got := codeOf(pg.NewFunc()); got != pg.jit.fentry {
		t.Errorf("NewFunc's code is at %#x, the direct entry at %#x", got, pg.jit.fentry)
	}
}

// The self-test's check is not vacuous: a function that differs from the
// program in one output by one ulp, that reads t wrong, or that writes
// nothing fails it.
func TestDirectCheckCatchesMismatch(t *testing.T) {
	pg, err := probeProgram()
	if err != nil {
		t.Fatal(err)
	}
	ip := interpreted(pg)
	r := ip.NewRegisters()
	if err := directCheck(pg, func(t float64, y, p, out []float64) { ip.EvalF(r, t, y, p, out) }); err != nil {
		t.Fatalf("the interpreter fails its own check: %v", err)
	}
	for name, f := range map[string]ode.Func{
		"one ulp": func(t float64, y, p, out []float64) {
			ip.EvalF(r, t, y, p, out)
			out[7] = math.Nextafter(out[7], math.Inf(1))
		},
		"nothing":   func(float64, []float64, []float64, []float64) {},
		"t negated": func(t float64, y, p, out []float64) { ip.EvalF(r, -t, y, p, out) },
	} {
		if directCheck(pg, f) == nil {
			t.Errorf("%s: the check passed", name)
		}
	}
}

// When the self-test fails, NewFunc falls back to EvalF (the ABI0
// trampoline or the interpreter), with the same bits.
func TestDirectEntryFallback(t *testing.T) {
	directEntry() // run the real self-test first
	saved := direct.err
	direct.err = errors.New("simulated failure")
	defer func() { direct.err = saved }()
	s, err := Build(lorenzModel())
	if err != nil {
		t.Fatal(err)
	}
	pg := s.F()
	f := pg.NewFunc()
	if pg.jit != nil && codeOf(f) == pg.jit.fentry && pg.jit.fentry != 0 {
		t.Fatal("NewFunc handed out the direct entry after a failed self-test")
	}
	ip := interpreted(pg)
	y, p := []float64{1, 2, 3}, []float64{10, 28, 8.0 / 3}
	got, want := make([]float64, 3), make([]float64, 3)
	f(0.5, y, p, got)
	ip.EvalF(ip.NewRegisters(), 0.5, y, p, want)
	testutil.CheckBits(t, "fallback f", got, want)
}
