package main

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/gradsolve/gradsolve/npy"
)

// roberRef is ROBER's state at t = 1e11 from the IVP test set: F. Mazzia
// and F. Iavernaro (with C. Magherini), "Test Set for IVP Solvers",
// Release 2.4, University of Bari, problem ROBER (src/problems/rober.f,
// subroutine solut); the root package's TestROBERLongSpan cites the same.
var roberRef = []float64{0.2083340149701255e-07, 0.8333360770334713e-13, 0.9999999791665050}

// robertsonFinal solves examples/robertson.ode to t = 1e11 with the extra
// flags and returns its final state, failing unless the run succeeded.
func robertsonFinal(t *testing.T, extra ...string) []float64 {
	t.Helper()
	dir := t.TempDir()
	var out, errb bytes.Buffer
	args := append([]string{"solve", "../../examples/robertson.ode", "--t1", "1e11", "--out", dir, "-q"}, extra...)
	if err := run(context.Background(), args, &out, &errb); err != nil {
		t.Fatalf("%v: %v\n%s%s", extra, err, out.String(), errb.String())
	}
	st, err := npy.ReadFile(filepath.Join(dir, "status.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Data) != 1 || st.Data[0] != 0 {
		t.Fatalf("%v: status.npy = %v, want [0] (success)", extra, st.Data)
	}
	yf, err := npy.ReadFile(filepath.Join(dir, "y_final.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if len(yf.Data) != 3 {
		t.Fatalf("%v: y_final.npy has %d values", extra, len(yf.Data))
	}
	return yf.Data
}

// `gradsolve solve examples/robertson.ode --t1 1e11` runs ROBER over the
// IVP test set's span in one call (before the step-size floor was
// measured at t, it stopped at t ≈ 1e-4 with StepUnderflow).
//
// At --rtol 1e-8 with a scalar --atol of 1e-20, far below the smallest
// component's rtol·|y| (y2 ≈ 8e-14: 8e-22), every component is controlled
// relatively to the end, and all three match the reference to 7
// significant digits (relative error ≤ 1e-7, the test set's scd ≥ 7):
// ten units of rtol for the error the steps accumulate, which the
// dissipative stiff dynamics damp (measured: 1.5e-9).
//
// At the default tolerances (rtol 1e-8, atol 1e-11) y2 lies below atol for
// the whole run and is only absolutely controlled, so only y1 and y3 are
// checked, each to one tolerance unit atol + rtol·|y| (measured: below
// 0.004 of a unit).
func TestRobertsonFileLongSpan(t *testing.T) {
	y := robertsonFinal(t, "--rtol", "1e-8", "--atol", "1e-20")
	for d, want := range roberRef {
		if e := math.Abs(y[d]-want) / want; e > 1e-7 {
			t.Errorf("--atol 1e-20: y%d(1e11) = %.16g, reference %.16g (relative error %.2g > 1e-7)", d+1, y[d], want, e)
		}
		t.Logf("--atol 1e-20: y%d(1e11) = %.16g, relative error %.2g", d+1, y[d], math.Abs(y[d]-want)/want)
	}
	y = robertsonFinal(t)
	for _, d := range []int{0, 2} {
		want := roberRef[d]
		unit := 1e-11 + 1e-8*want
		if e := math.Abs(y[d] - want); e > unit {
			t.Errorf("defaults: y%d(1e11) = %.16g, reference %.16g (error %.2g > atol + rtol·|y| = %.2g)", d+1, y[d], want, e, unit)
		}
		t.Logf("defaults: y%d(1e11) = %.16g, error %.2g of a tolerance unit", d+1, y[d], math.Abs(y[d]-want)/unit)
	}
}
