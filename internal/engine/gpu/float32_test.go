package gpu_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/engine"
	"github.com/gradsolve/gradsolve/method"
)

// Float32 through the engine (gradsolve.Solve with Options.Precision
// Float32 on the emulated device) is tested against truth as
// sym/emitcuda's TestFloat32Kernels tests the kernels, with its bound
// and its reasons (see float32_test.go there): the float32 solve and
// cpu-erk's float64 solve, at the same float32-sensible tolerances
// (rtol 1e-5, atol 1e-6), are compared with a reference (cpu-erk, DP8
// at rtol 1e-12, atol 1e-14) in units of the tolerance, e = max_d
// |y_d − ref_d| / (atol + rtol·|ref_d|), and e32 must be at most
// 3·max(e64, 1) + n·S·δ: the float64 solve's truncation error twice
// (the float32 solve may take other steps), one unit of rounding, and
// the roundings of the n·S stages of the float32 solve each amplified
// as the reference amplifies one rounding of y0 (δ, measured). The
// ensemble's parameters and initial states are floats, so that all
// three solve one problem.
const (
	f32RTol = 1e-5
	f32ATol = 1e-6
)

// floatEnsemble is n trajectories of pr with their own parameters and
// initial states (rounded to float32), spans of about span (every
// fourth backwards) and save times inside.
func floatEnsemble(pr *gradsolve.Problem, n int, span float64) *gradsolve.Ensemble {
	rng := rand.New(rand.NewPCG(7, 23))
	e := &gradsolve.Ensemble{N: n, SavePerTrajectory: true}
	for i := range n {
		for j := range pr.NumParams {
			e.P = append(e.P, float64(float32(pr.P[j]*(1+0.2*(rng.Float64()-0.5)))))
		}
		for d := range pr.Dim {
			e.Y0 = append(e.Y0, float64(float32(pr.Y0[d]*(1+0.1*(rng.Float64()-0.5)))))
		}
		t0, t1 := 0.0, span*(0.5+rng.Float64())
		if i%4 == 1 {
			t0, t1 = t1, t0
		}
		e.T0, e.T1 = append(e.T0, t0), append(e.T1, t1)
		e.Save = append(e.Save, t0+0.3*(t1-t0), t0+0.7*(t1-t0))
	}
	return e
}

// tolUnits returns max_d |y_d − ref_d| / (atol + rtol·|ref_d|) (+Inf
// for a NaN).
func tolUnits(y, ref []float64) float64 {
	e := 0.0
	for d := range ref {
		if math.IsNaN(y[d]) {
			return math.Inf(1)
		}
		e = math.Max(e, math.Abs(y[d]-ref[d])/(f32ATol+f32RTol*math.Abs(ref[d])))
	}
	return e
}

// TestEmulatedFloat32: float32 solves through the engine are within
// the bound above of the truth, for Lorenz and the halo orbit with
// Tsit5 and DP5 (and the halo's sensitivities to a parameter and an
// initial value, compared as the state is), in chunks of 1, 7 and the batch (with the same bits
// in each); the float32 solve
// is not the float64 one (its bits differ); and Record in float32 is
// refused with the reason.
func TestEmulatedFloat32(t *testing.T) {
	e := engine.Lookup("emu-test-chunk1").(engine.Availability)
	if err := e.Available(); err != nil {
		t.Skipf("the emulated device cannot run here: %v", err)
	}
	lz, halo := lorenz(t), exampleProblem(t, "halo.ode")
	const n = 12
	for _, c := range []struct {
		name string
		pr   *gradsolve.Problem
		span float64
		m    *method.Tableau
		sens bool // with sensitivity columns (in the error test, so that they are as accurate as the state)
	}{
		{"lorenz Tsit5", lz, 1, method.Tsit5, false},
		{"halo Tsit5", halo, 5, method.Tsit5, false},
		{"halo DP5", halo, 5, method.DP5, false},
		{"halo Tsit5 sensitivities", halo, 5, method.Tsit5, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ens := floatEnsemble(c.pr, n, c.span)
			o := gradsolve.Options{Method: c.m, RTol: f32RTol, ATol: f32ATol, MaxSteps: 20000}
			refOpts := gradsolve.Options{Engine: "cpu-erk", Method: method.DP8, RTol: 1e-12, ATol: 1e-14, MaxSteps: 1 << 20}
			if c.sens {
				sens := &gradsolve.Sensitivity{Wrt: []gradsolve.Wrt{gradsolve.Param(0), gradsolve.InitialValue(1)}, ErrorTest: true}
				o.Sens, refOpts.Sens = sens, sens
			}
			o.Engine = "cpu-erk"
			want := solve(t, c.pr, ens, o)
			ref := solve(t, c.pr, ens, refOpts)
			pert := *ens
			pert.Y0 = append([]float64(nil), ens.Y0...)
			for i := range pert.Y0 {
				pert.Y0[i] *= 1 + 0x1p-24
			}
			refPert := solve(t, c.pr, &pert, refOpts)
			float32Rows(t, c.pr, ens, o, want, ref, c.sens, func(r f32Row) float64 {
				steps := float64(r.got.Stats[r.i].Accepted * c.m.Stages())
				y32, y64, yr := r.row(r.got), r.row(want), r.row(ref)
				e32, e64, delta := tolUnits(y32, yr), tolUnits(y64, yr), tolUnits(r.row(refPert), yr)
				if bound := 3*math.Max(e64, 1) + steps*delta; !(e32 <= bound) {
					t.Errorf("%s: trajectory %d, row %d: float32 error %.3g tolerances, float64 %.3g, one rounding grows to %.3g, %v stages: want at most %.3g",
						r.name, r.i, r.q, e32, e64, delta, steps, bound)
				}
				return e32
			})
		})
	}
	_, err := gradsolve.Record(context.Background(), lz, floatEnsemble(lz, 2, 1),
		&gradsolve.Options{Engine: "emu-test-chunk1", Method: method.Tsit5, Precision: gradsolve.Float32})
	if err == nil {
		t.Errorf("Record in float32 on the engine: no error")
	} else {
		t.Logf("Record in float32: %v", err)
	}
}

// f32Row is one row of one trajectory of a float32 solve on a chunk
// engine: row(r) is its values in result r (the float32 solve got, the
// float64 one, the reference): the final state (q = −1), a saved state
// (q < K), the final sensitivities (q = K) or saved ones.
type f32Row struct {
	name string // the engine
	i, q int
	got  *gradsolve.Result
	row  func(*gradsolve.Result) []float64
}

// float32Rows solves ens in float32 with the options o of the float64
// solve want on each chunk engine, checks that every chunk gives the
// same bits and the statuses of want, and calls check on every row of
// every trajectory that the float32, float64 and reference solves all
// finished (check returns its error in tolerances, for the log). Most
// trajectories must be compared, and the float32 bits must not be the
// float64 ones.
func float32Rows(t *testing.T, pr *gradsolve.Problem, ens *gradsolve.Ensemble, o gradsolve.Options, want, ref *gradsolve.Result,
	sens bool, check func(f32Row) float64) {
	t.Helper()
	n, d := ens.N, pr.Dim
	k, ds := len(ens.Save)/n, d*want.NS
	rows := k
	if sens {
		rows = k + 1 + k // and the final and saved sensitivities
	}
	var first *gradsolve.Result
	for name := range chunkEngines {
		o32 := o
		o32.Engine, o32.Precision = name, gradsolve.Float32
		got := solve(t, pr, ens, o32)
		if first == nil {
			first = got
		} else {
			// Whatever the chunk, the same float32 bits.
			sameResults(t, name+" float32", got, first)
		}
		differ, worst, compared := false, 0.0, 0
		for i := range n {
			if got.Status[i] != want.Status[i] {
				t.Errorf("%s: trajectory %d: float32 %v, float64 %v", name, i, got.Status[i], want.Status[i])
			}
			if got.Status[i] != gradsolve.Success || want.Status[i] != gradsolve.Success || ref.Status[i] != gradsolve.Success {
				// (Lorenz backwards grows fast enough that both solves
				// at these tolerances spend the budget.)
				continue
			}
			compared++
			for q := -1; q < rows; q++ {
				row := func(r *gradsolve.Result) []float64 {
					switch {
					case q < 0:
						return r.Y[i*d : (i+1)*d]
					case q < k:
						return r.Saved[(i*k+q)*d : (i*k+q+1)*d]
					case q == k:
						return r.S[i*ds : (i+1)*ds]
					}
					j := q - k - 1
					return r.SavedS[(i*k+j)*ds : (i*k+j+1)*ds]
				}
				worst = math.Max(worst, check(f32Row{name: name, i: i, q: q, got: got, row: row}))
				y32, y64 := row(got), row(want)
				for j := range y32 {
					differ = differ || y32[j] != y64[j]
				}
			}
		}
		if compared < n/2 {
			t.Errorf("%s: %d of %d trajectories compared: want most", name, compared, n)
		}
		if !differ {
			t.Errorf("%s: the float32 solve gives the float64 solve's bits: it did not run in float", name)
		}
		t.Logf("%s: %d trajectories, worst float32 error %.3g tolerances", name, compared, worst)
	}
}
