package emitcuda_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/sym/emitcuda"
)

// The float32 kernels are tested against truth, not against bits: each
// final and saved state of the float32 kernel (gs_erk_<method>_f32) and
// of cpu-erk in float64, both at the same float32-sensible tolerances
// (rtol 1e-5, atol 1e-6), is compared with a reference solution (cpu-erk
// with DP8 at rtol 1e-12, atol 1e-14, whose own error is some 10⁻¹⁰ of
// the scale: negligible here). The ensemble's parameters and initial
// states are rounded to float32 first, so that all three solve the same
// problem (the float32 kernel's inputs are float). Trajectory 5, forty
// spans long (a budget test in the bitwise tests), is left out of the
// comparison: over forty spans the chaotic and orbital problems amplify
// any error, the float64 solve's included, far beyond the tolerance.
// In units of the tolerance, e = max_d
// |y_d − ref_d| / (atol + rtol·|ref_d|).
//
// Why 3·max(e64, 1) + n·S·δ bounds e32: an adaptive method's global error is
// proportional to the tolerance, and the float64 solve's e64 (a few
// units) is what this method at this tolerance gives on this
// trajectory. The float32 solve takes the same kind of steps (the
// controller and the time are double; only the states, stages, f and
// the norm are float), so its truncation error is of the same size —
// not the same number, since float rounding of the norm may choose
// other steps: at most about e64 again. Float rounding adds about
// u_f·|y| per operation chain of a step, u_f = 2⁻²⁴ ≈ 6·10⁻⁸, that is
// 6·10⁻³ of rtol·|y| per step, which over the ≲ 200 steps here is at
// most about one unit even if every rounding adds up — before the
// problem amplifies it. The amplification is measured: δ is the
// reference solution's change, in tolerances, when y0 moves by one
// float rounding (relative 2⁻²⁴ in every component); each of the n
// accepted float32 steps adds the roundings of its S stages (each stage
// input and f evaluated in float, with f's constants rounded to float:
// about one rounding of the state each), amplified by at most the whole
// span's growth, so they add at most n·S·δ. (High-order
// methods at rtol 1e-5 overachieve, e64 ≪ 1, and on lorenz and the
// eccentric orbits the roundings grow to several tolerances: that term
// is what bounds them.) So e32 ≤ e64 + e64 + 1 + n·S·δ ≤ 3·max(e64, 1) + n·S·δ.
const (
	f32RTol = 1e-5
	f32ATol = 1e-6
)

// float32Cases are the forward cases of the float32 test.
var float32Cases = []string{"lorenz", "halo", "kepler_ecc"}

// TestFloat32Kernels runs the float32 forward kernels, and the float32
// sensitivity kernels where the case has columns (their augmented
// states, the columns compared as the state is), under the bound above.
func TestFloat32Kernels(t *testing.T) {
	for _, c := range forwardCases {
		if !contains(float32Cases, c.name) || testing.Short() && c.name != "halo" { // -short: the halo alone (lorenz's references take longest)
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			set := readModel(t, casePath(t, c.file))
			opts := emitcuda.Options{Float32: true}
			if c.wrt != nil && !c.y0FromP {
				opts.Sens = []emitcuda.Sens{{Cols: c.cols(), ErrorTest: c.errorTest}}
			}
			src, err := emitcuda.Generate(set, opts)
			if err != nil {
				t.Fatal(err)
			}
			prog := compile(t, src)
			prob := set.Problem()
			ens := makeEnsemble(prob, c, 11)
			for _, v := range [][]float64{ens.p, ens.y0} {
				for j := range v {
					v[j] = float64(float32(v[j]))
				}
			}
			dim := prob.Dim
			budget := 20 * c.maxSteps
			pert := *ens
			pert.y0 = make([]float64, len(ens.y0))
			for j, v := range ens.y0 {
				pert.y0[j] = v * (1 + 0x1p-24)
			}
			for ki, kern := range src.Kernels {
				if !kern.Float32 {
					continue
				}
				// The reference (with the columns in its error test, so
				// that they are as accurate as the state) and the float64
				// solve at the float32 tolerances.
				refOpts := gradsolve.Options{RTol: 1e-12, ATol: 1e-14, MaxSteps: 100 * budget}
				o64 := gradsolve.Options{RTol: f32RTol, ATol: f32ATol, MaxSteps: budget}
				y0 := ens.y0
				if kern.Kind == emitcuda.Sensitivities {
					refOpts.Sens = &gradsolve.Sensitivity{Wrt: c.wrt, ErrorTest: true}
					o64.Sens = &gradsolve.Sensitivity{Wrt: c.wrt, ErrorTest: c.errorTest}
					y0 = augmented(ens.y0, dim, c.wrt)
				}
				ref := expected(cpuSolve(t, prob, ens, method.DP8, refOpts))
				refPert := expected(cpuSolve(t, prob, &pert, method.DP8, refOpts))
				res := cpuSolve(t, prob, ens, kern.Method, o64)
				want := expected(res)
				got := prog.solve(t, kernelJob(ki, kern, &res.Options, ens, y0))
				na := kern.Dim
				worst32, worst64, compared := 0.0, 0.0, 0
				for i := range ensembleSize {
					st32, st64 := ode.Status(got.status[i]), res.Status[i]
					// At t0 = 1e17 (trajectories 6 and 10) the step floor is
					// 89 and the method cannot cross the span: both solves
					// fail, with StepUnderflow or, where the rejected
					// proposals overflow (float's range ends at 3.4e38,
					// double's at 1.8e308), NonFinite.
					floorFail := func(s ode.Status) bool { return s == ode.StepUnderflow || s == ode.NonFinite }
					if st32 != st64 && !(ens.t0[i] == 1e17 && floorFail(st32) && floorFail(st64)) {
						t.Errorf("%s: trajectory %d: status %v, float64 %v", kern.Name, i, st32, st64)
						continue
					}
					if i == 5 || st64 != ode.Success || ode.Status(ref.status[i]) != ode.Success {
						continue
					}
					if got.t[i] != ens.t1[i] {
						t.Errorf("%s: trajectory %d: reached %v, want t1 = %v", kern.Name, i, got.t[i], ens.t1[i])
					}
					row := func(r *result, q int) []float64 { // q < 0: the final state
						if q < 0 {
							return r.y[i*na : (i+1)*na]
						}
						o := (i*ens.k + q) * na
						return r.saved[o : o+na]
					}
					n := float64(got.accepted[i] * int64(kern.Method.Stages()))
					for q := -1; q < ens.k; q++ {
						y32, y64, yr, yp := row(got, q), row(want, q), row(ref, q), row(refPert, q)
						e32, e64, delta := tolUnits(y32, yr), tolUnits(y64, yr), tolUnits(yp, yr)
						if bound := 3*math.Max(e64, 1) + n*delta; !(e32 <= bound) {
							t.Errorf("%s: trajectory %d, %s: float32 error %.3g tolerances, float64 %.3g, one rounding grows to %.3g, %v stages: want at most %.3g",
								kern.Name, i, rowName(q+1), e32, e64, delta, n, bound)
						}
						worst32, worst64 = math.Max(worst32, e32), math.Max(worst64, e64)
						compared++
					}
				}
				if compared < ensembleSize {
					t.Errorf("%s: only %d states compared", kern.Name, compared)
				}
				t.Logf("%s: %d states, worst error in tolerances: float32 %.3g, float64 %.3g", kern.Name, compared, worst32, worst64)
			}
		})
	}
}

// augmented returns the augmented initial states of the columns wrt:
// y0, then each column's start, e_i for y0[i] and zero for a parameter
// (the initial states do not depend on the parameters here).
func augmented(y0 []float64, dim int, wrt []gradsolve.Wrt) []float64 {
	na := dim * (1 + len(wrt))
	n := len(y0) / dim
	out := make([]float64, n*na)
	for i := range n {
		row := out[i*na : (i+1)*na]
		copy(row, y0[i*dim:(i+1)*dim])
		for q, w := range wrt {
			if w.Y0 {
				row[dim*(1+q)+w.Index] = 1
			}
		}
	}
	return out
}

// tolUnits returns max_d |y_d − ref_d| / (atol + rtol·|ref_d|).
func tolUnits(y, ref []float64) float64 {
	e := 0.0
	for d := range ref {
		e = math.Max(e, math.Abs(y[d]-ref[d])/(f32ATol+f32RTol*math.Abs(ref[d])))
		if math.IsNaN(y[d]) {
			return math.Inf(1)
		}
	}
	return e
}

func rowName(r int) string {
	if r == 0 {
		return "final state"
	}
	return fmt.Sprintf("save %d", r-1)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
