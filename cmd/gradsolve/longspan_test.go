package main

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/gradsolve/gradsolve/npy"
)

// `gradsolve solve examples/robertson.ode --t1 1e11` runs ROBER over the
// IVP test set's span in one call (before the step-size floor was
// measured at t, it stopped at t ≈ 1e-4 with StepUnderflow), and its
// final state matches the test set's reference (F. Mazzia and F.
// Iavernaro / C. Magherini, "Test Set for IVP Solvers", Release 2.4,
// University of Bari, problem ROBER, subroutine solut) to what the
// command's default tolerances allow, one tolerance unit atol + rtol·|y|
// with rtol 1e-8 and atol 1e-11 (measured: below 0.004 of a unit). With that scalar atol, y2 ≈ 8e-14 is below atol and
// only absolutely controlled; the Go API test TestROBERLongSpan sets a
// per-component atol and checks 7 digits of every component.
func TestRobertsonFileLongSpan(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"solve", "../../examples/robertson.ode", "--t1", "1e11", "--out", dir, "-q"}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s%s", err, out.String(), errb.String())
	}
	st, err := npy.ReadFile(filepath.Join(dir, "status.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Data) != 1 || st.Data[0] != 0 {
		t.Fatalf("status.npy = %v, want [0] (success)", st.Data)
	}
	yf, err := npy.ReadFile(filepath.Join(dir, "y_final.npy"))
	if err != nil {
		t.Fatal(err)
	}
	ref := []float64{0.2083340149701255e-07, 0.8333360770334713e-13, 0.9999999791665050}
	if len(yf.Data) != 3 {
		t.Fatalf("y_final.npy has %d values", len(yf.Data))
	}
	for d, want := range ref {
		unit := 1e-11 + 1e-8*want
		if e := math.Abs(yf.Data[d] - want); e > unit {
			t.Errorf("y%d(1e11) = %.16g, reference %.16g (error %.2g > atol + rtol·|y| = %.2g)", d+1, yf.Data[d], want, e, unit)
		}
		t.Logf("y%d(1e11) = %.16g, error %.2g of a tolerance unit", d+1, yf.Data[d], math.Abs(yf.Data[d]-want)/unit)
	}
}
