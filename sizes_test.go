package gradsolve_test

import (
	"context"
	"errors"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/router"
	"github.com/gradsolve/gradsolve/systems"
)

// Sizes that overflow an int or do not fit in memory are refused before
// anything is allocated, with an error wrapping ErrInput that names the
// Go fields, the bytes needed and the bytes available.
func TestSolveRefusesHugeSizes(t *testing.T) {
	pr := systems.Lorenz()
	save := make([]float64, 200_000)
	for k := range save {
		save[k] = float64(k+1) / float64(len(save))
	}
	ctx := context.Background()
	all := []gradsolve.Wrt{gradsolve.Param(0), gradsolve.Param(1), gradsolve.Param(2), gradsolve.InitialValue(0), gradsolve.InitialValue(1), gradsolve.InitialValue(2)}
	sens := &gradsolve.Options{Sens: &gradsolve.Sensitivity{Wrt: all}}
	cases := []struct {
		name string
		call func() error
		want []string
	}{
		{"N·Dim overflows", func() error {
			_, err := gradsolve.Solve(ctx, pr, &gradsolve.Ensemble{N: 6148914691236517206}, nil)
			return err
		}, []string{"Ensemble.N = 6148914691236517206", "Result.Y (N·Dim = 6148914691236517206·3, 8 bytes each) overflows an int"}},
		{"N·K·Dim overflows", func() error {
			_, err := gradsolve.Solve(ctx, pr, &gradsolve.Ensemble{N: 1 << 50, Save: save}, nil)
			return err
		}, []string{"K = 200000 save times (Ensemble.Save)", "Result.Saved (N·K·Dim", "overflows an int"}},
		{"sensitivities overflow", func() error {
			_, err := gradsolve.Solve(ctx, pr, &gradsolve.Ensemble{N: 1 << 57}, sens)
			return err
		}, []string{"NS = 6 sensitivity columns (Options.Sens.Wrt)", "overflows an int"}},
		{"too large for memory", func() error {
			_, err := gradsolve.Solve(ctx, pr, &gradsolve.Ensemble{N: 10_000_000_000_000}, nil)
			return err
		}, []string{"Ensemble.N = 10000000000000", "the result arrays need 810 TB (Result.Stats 400 TB, Result.Y 240 TB, Result.T 160 TB, Result.Status 10.0 TB, …)", "lower Ensemble.N"}},
		{"record overflows", func() error {
			_, err := gradsolve.Record(ctx, pr, &gradsolve.Ensemble{N: 6148914691236517206}, nil)
			return err
		}, []string{"Ensemble.N = 6148914691236517206", "overflows an int"}},
		{"forward gradient too large", func() error {
			_, _, _, err := gradsolve.LossGradient(ctx, pr, &gradsolve.Ensemble{N: 1 << 46}, &gradsolve.Options{Mode: router.Forward}, gradsolve.SumSquares())
			return err
		}, []string{"Ensemble.N = 70368744177664", "NS = 6 sensitivity columns", "Result.S "}},
		{"reverse gradient too large", func() error {
			_, _, _, err := gradsolve.LossGradient(ctx, pr, &gradsolve.Ensemble{N: 1 << 46}, &gradsolve.Options{Mode: router.Reverse}, gradsolve.SumSquares())
			return err
		}, []string{"Ensemble.N = 70368744177664", "recording's 40 B per accepted step"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			err := c.call()
			if !errors.Is(err, gradsolve.ErrInput) {
				t.Fatalf("err = %v, want ErrInput", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v\nlacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("not one line: %q", err)
			}
			if d := time.Since(start); d > 5*time.Second { // refused before any work: milliseconds
				t.Errorf("took %v", d)
			}
		})
	}

	// 100 000 trajectories with 200 000 save times need 480 GB: refused
	// under a 1 GiB Go memory limit on any machine.
	old := debug.SetMemoryLimit(1 << 30)
	_, err := gradsolve.Solve(ctx, pr, &gradsolve.Ensemble{N: 100_000, Save: save}, nil)
	debug.SetMemoryLimit(old)
	if !errors.Is(err, gradsolve.ErrInput) || !strings.Contains(err.Error(), "Result.Saved 480 GB") || !strings.Contains(err.Error(), "(GOMEMLIMIT)") {
		t.Errorf("100 000 × 200 000 save times: %v", err)
	}
}

// The footprint is the sum of the arrays Solve allocates.
func TestFootprint(t *testing.T) {
	statsSize := uint64(unsafe.Sizeof(gradsolve.Stats{}))
	n, dim, m, k, ns := 10, 3, 2, 4, 5
	f, err := gradsolve.Sizes{N: n, Dim: dim, NumParams: m, K: k, NS: ns, Workers: 2}.Footprint()
	if err != nil {
		t.Fatal(err)
	}
	// Results, sensitivities, and per worker (2) its stack, 34 state
	// vectors and the sensitivity buffers.
	want := uint64(8*(n*dim+n*k*dim+2*n+n*dim*ns+n*k*dim*ns+2*(k+2)*dim*(ns+1)+2*34*dim*(ns+1))) + uint64(n) + uint64(n)*statsSize + 2*16<<10
	if f.Bytes != want || f.PerStep != 0 {
		t.Errorf("footprint %+v, want %d bytes", f, want)
	}
	// A recording: the results, per worker (2) its stack and 34 state
	// vectors, each trajectory's mesh (its header, pointer, start time
	// and initial state), the current and the recording point, and the
	// gradient's arrays with the final states' cotangents.
	r, err := gradsolve.Sizes{N: n, Dim: dim, NumParams: m, Record: true, Workers: 2}.Footprint()
	if err != nil {
		t.Fatal(err)
	}
	results := uint64(8*(n*dim+2*n)) + uint64(n) + uint64(n)*statsSize
	workers := uint64(2*16<<10 + 8*2*34*dim)
	mesh := uint64(n) * (uint64(unsafe.Sizeof(ivp.Mesh{})) + 8 + uint64(8*(dim+1)))
	points := uint64(8 * 2 * n * (dim + m))
	grad := uint64(8 * (n*m + n*dim + n*dim))
	if want := results + workers + mesh + points + grad; r.Bytes != want || r.PerStep != uint64(8*(dim+2)) {
		t.Errorf("recording footprint %+v, want %d bytes and %d per step", r, want, 8*(dim+2))
	}
	// LossGradient's reverse route with save times adds the saved
	// states and their cotangents (a loss of the saved states returns
	// them), N·K·Dim each.
	g, err := gradsolve.Sizes{N: n, Dim: dim, NumParams: m, K: k, Record: true, Gradient: true, Workers: 2}.Footprint()
	if err != nil {
		t.Fatal(err)
	}
	if want := r.Bytes + uint64(2*8*n*k*dim); g.Bytes != want {
		t.Errorf("gradient footprint with %d save times: %d bytes, want %d", k, g.Bytes, want)
	}
	imp, err := gradsolve.Sizes{N: n, Dim: dim, NumParams: m, Workers: 2, Implicit: true}.Footprint()
	exp, err2 := gradsolve.Sizes{N: n, Dim: dim, NumParams: m, Workers: 2}.Footprint()
	if err != nil || err2 != nil || imp.Bytes-exp.Bytes != uint64(2*8*dim*dim*2) {
		t.Errorf("a Rosenbrock method's Jacobians: %d − %d bytes, want %d", imp.Bytes, exp.Bytes, 2*8*dim*dim*2)
	}
	// Initial states computed from each trajectory's parameters: N·Dim
	// more numbers.
	ini, err := gradsolve.Sizes{N: n, Dim: dim, NumParams: m, Workers: 2, InitialFromParams: true}.Footprint()
	if err != nil || ini.Bytes-exp.Bytes != uint64(8*n*dim) {
		t.Errorf("initial states from the parameters: %d − %d bytes, want %d", ini.Bytes, exp.Bytes, 8*n*dim)
	}
	if _, err := (gradsolve.Sizes{N: 1 << 62, Dim: 3}).Footprint(); !errors.Is(err, gradsolve.ErrInput) {
		t.Errorf("overflow: %v", err)
	}
}

// A recording whose meshes outgrow the memory available stops with an
// error instead of exhausting the machine.
func TestRecordStopsAtMemoryLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("solves until 32 MiB of meshes are recorded")
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	old := debug.SetMemoryLimit(int64(ms.Sys) + 32<<20)
	defer debug.SetMemoryLimit(old)
	pr := systems.Lorenz()
	// Lorenz at ρ = 28 over t ∈ [0, 200] at rtol 1e-12: about 10⁵
	// accepted DP8 steps, 4 MB of mesh per trajectory.
	ens := &gradsolve.Ensemble{N: 200, Y0: []float64{1, 0, 0}, P: []float64{10, 28, 8.0 / 3}, T0: []float64{0}, T1: []float64{200}}
	_, err := gradsolve.Record(context.Background(), pr, ens, &gradsolve.Options{Method: method.DP8, RTol: 1e-12, ATol: 1e-12, MaxSteps: 1_000_000, Workers: 2})
	if !errors.Is(err, gradsolve.ErrInput) || !strings.Contains(err.Error(), "the recorded meshes need") {
		t.Fatalf("err = %v, want the recording refused", err)
	}
}

// One trajectory whose mesh alone outgrows the memory available is
// stopped as its mesh grows, not after it finishes: Tsit5 on Robertson
// over [0, 1e11] takes steps bounded by stability (about 1e-4), so its
// budget of 10⁸ steps would record 4 GB; under a Go memory limit 32 MiB
// above what the process holds, Record returns the refusal, and what it
// allocated stays within what was available.
func TestRecordStopsGrowingMesh(t *testing.T) {
	pr := systems.Robertson()
	ens := &gradsolve.Ensemble{N: 1, T0: []float64{0}, T1: []float64{1e11}}
	base := gradsolve.Options{Method: method.Tsit5, MaxSteps: 100_000_000, Workers: 1}
	keep := base
	keep.KeepStages = true
	rev := base
	rev.Mode = router.Reverse
	cases := []struct {
		name string
		call func() error
	}{
		{"Record", func() error { _, err := gradsolve.Record(context.Background(), pr, ens, &base); return err }},
		{"Record with KeepStages", func() error { _, err := gradsolve.Record(context.Background(), pr, ens, &keep); return err }},
		{"LossGradient, reverse", func() error {
			_, _, _, err := gradsolve.LossGradient(context.Background(), pr, ens, &rev, gradsolve.SumSquares())
			return err
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ms runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms)
			live := ms.HeapAlloc
			limit := ms.Sys + 32<<20
			old := debug.SetMemoryLimit(int64(limit))
			defer debug.SetMemoryLimit(old)
			before := ms.TotalAlloc
			err := c.call()
			runtime.ReadMemStats(&ms)
			if !errors.Is(err, gradsolve.ErrInput) || !strings.Contains(err.Error(), "the recorded meshes need") ||
				!strings.Contains(err.Error(), "lower Options.MaxSteps") {
				t.Fatalf("err = %v, want the recording refused", err)
			}
			// What the limit leaves (memory.Available) is the limit less
			// what the runtime holds, at least the live heap, which the
			// GC above brought to its least: so the recording's meshes,
			// counted as they grew, took at most limit − live. Add 1 MiB
			// for the job's small arrays (solver buffers, programs).
			if got, room := ms.TotalAlloc-before, limit-live; got > room+1<<20 {
				t.Errorf("allocated %d bytes with at most %d left by the limit", got, room)
			} else {
				t.Logf("allocated %d bytes with at most %d left by the limit", got, room)
			}
		})
	}
}

// A problem without a name gets one in messages.
func TestUnnamedProblemMessage(t *testing.T) {
	pr := systems.Lorenz()
	pr.Name, pr.Programs, pr.SensF = "", nil, nil
	_, err := gradsolve.Solve(context.Background(), pr, &gradsolve.Ensemble{N: 1},
		&gradsolve.Options{Sens: &gradsolve.Sensitivity{Wrt: []gradsolve.Wrt{gradsolve.Param(0)}}})
	if err == nil || strings.Contains(err.Error(), ": :") || !strings.Contains(err.Error(), "unnamed problem: sensitivities need") {
		t.Errorf("err = %v", err)
	}
}
