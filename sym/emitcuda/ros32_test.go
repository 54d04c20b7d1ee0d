package emitcuda_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/sym/emitcuda"
)

// TestRosenbrockFloat32 tests the float32 Rosenbrock kernels
// (gs_ros_<method>_f32[_sens<k>]) against truth as TestFloat32Kernels
// tests the explicit ones: on each Rosenbrock case (robertson, stiff
// van der Pol, the t-dependent forced problem) the final and saved
// states of the float32 kernel and of cpu-ros in float64, both at rtol
// 1e-5, atol 1e-6, are compared with a reference (cpu-ros with Rodas5P
// at rtol 1e-11, atol 1e-13, whose own error, some 10⁻¹⁰ of the scale,
// is negligible in these units), in units of the tolerance as tolUnits
// measures them, with the save times re-stepped and, where the method
// has one, from the continuous extension. The inputs are rounded to
// float32 first, so that all three solve one problem.
//
// The bound, per component d of a row, in tolerances sc_d = atol +
// rtol·|ref_d|. Beside the roundings of the explicit kernels (the state,
// the stage inputs, f, the norm in float), a float32 Rosenbrock step
// has J and ∂f/∂t evaluated in float and W = I − hγJ factorised and
// solved in float: its factors are those of W + δW, |δW| ≲ γ_N·|L̂||Û|
// (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed.,
// Thm. 9.4; γ_N ≈ N·u_f, u_f = 2⁻²⁴), a Jacobian off by a few N·u_f
// relative, and for the dissipative Jacobians here ‖W⁻¹‖ ≲ 1 and
// ‖W⁻¹·hγJ‖ = ‖W⁻¹ − I‖ ≲ 2, so each increment moves by a few N·u_f
// relative, like a rounding of f. The error estimate is formed from the
// same increments, so the double controller still holds the local error
// at the tolerance: the truncation error is again about the float64
// solve's e64 (≥ 1 for the rounding of the float norm), counted for
// each solve and once for a saved state's interpolation, 3·max(e64, 1).
// The roundings, (2N + 1) per stage (f, the products J·ΣΓK, the solve),
// each at most one rounding of the state, enter like perturbations of
// the state that the problem carries to the end as it carries one of
// y0: δ is the reference's change, in tolerances, when y0 moves by one
// float rounding (relative 2⁻²⁴), so the n·S stages of the n accepted
// steps add at most (2N + 1)·n·S·δ.
//
// One more term is the method's own: in the stiff limit (hγJ ≫ 1) the
// increments solve the triangular recursion of Γ (the lower-triangular
// matrix of γ and GammaOff), whose condition κ = ‖Γ‖∞·‖Γ⁻¹‖∞ (testutil.LowerCond:
// about 144 for Rosenbrock23, 4439 for Rodas5P, whose cond₂ is 2557 by
// package method) amplifies the float roundings of the terms that
// cancel in it: the stiff components carry a relative error κ·u_f of
// the magnitude m_d of those terms, not damped away (L-stability damps
// the earlier steps' share). For a state component m_d = |ref_d|. For a
// column ∂y/∂p_j the cancelling terms are its forcing J_p·e_j against
// J_y·S (on rosforced, k·t·sin(w t) against −k·S): m_d = max(|ref_d|,
// F_j·T·(1 + L·T)), F_j the largest |J_p·e_j| along the reference, T
// the span, L the largest off-diagonal |J_y| entry (the error injected
// into one component drives the others at rate ≤ L over the span).
// So |y32_d − ref_d|/sc_d ≤ 3·max(e64, 1) + (2N + 1)·n·S·δ + κ·u_f·m_d/sc_d.
// (In float64 the last term is κ·2⁻⁵³: nothing. In float32 it limits
// Rodas5P's forward sensitivities on rosforced to about 10⁻² absolute
// in the column of w, whose forcing is some 50: float32 Rodas5P resolves
// a column only to κ·u_f ≈ 3·10⁻⁴ of its forcing times the span.)
//
// The statuses must be float64's: the trajectories that fail do so for
// reasons (a budget, the step floor at t0 = 1e17, a singular W) that do
// not depend on the precision, with two exceptions of float's range
// (3.4e38 against double's 1.8e308): at the floor rejected proposals
// may overflow float sooner, so StepUnderflow and NonFinite are one
// failure there; and where the solution blows up (rosforced's backward
// spans, whose v grows without bound) the float32 attempts overflow
// once the state passes √MaxFloat32 (a product of two state values
// overflows), so a float64 StepUnderflow at a state beyond it is a
// float32 NonFinite.
func TestRosenbrockFloat32(t *testing.T) {
	for _, c := range rosCases {
		if testing.Short() && !rosShort[c.name] {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rp := rosCompile(t, c)
			prob, dim := rp.prob, rp.prob.Dim
			fc := forwardCase{name: c.name, span: c.span, maxSteps: c.maxSteps, special: c.special}
			ens := makeEnsemble(prob, fc, 7)
			for _, v := range [][]float64{ens.p, ens.y0} {
				for j := range v {
					v[j] = float64(float32(v[j]))
				}
			}
			pert := *ens
			pert.y0 = make([]float64, len(ens.y0))
			for j, v := range ens.y0 {
				pert.y0[j] = v * (1 + 0x1p-24)
			}
			budget := 20 * c.maxSteps
			np := len(prob.P)
			pg := rp.set.Programs()
			refs := map[bool][2]*result{} // with sensitivities: the reference and its perturbed twin
			reference := func(sens bool) [2]*result {
				if r, ok := refs[sens]; ok {
					return r
				}
				o := gradsolve.Options{RTol: 1e-11, ATol: 1e-13, MaxSteps: 1000 * budget}
				if sens {
					o.Sens = &gradsolve.Sensitivity{Wrt: c.wrt}
				}
				r := [2]*result{expected(rosCPUSolve(t, prob, ens, method.Rodas5P, o)), expected(rosCPUSolve(t, prob, &pert, method.Rodas5P, o))}
				refs[sens] = r
				return r
			}
			kernels := 0
			for ki, kern := range rp.src.RosKernels {
				if !kern.Float32 {
					continue
				}
				kernels++
				for _, dense := range []bool{false, true}[:1+b2i(kern.Dense)] {
					o64 := gradsolve.Options{RTol: f32RTol, ATol: f32ATol, MaxSteps: budget, DenseSave: dense}
					y0 := ens.y0
					if kern.Sens >= 0 {
						o64.Sens = &gradsolve.Sensitivity{Wrt: c.wrt}
						y0 = augmented(ens.y0, dim, c.wrt)
					}
					ref := reference(kern.Sens >= 0)
					res := rosCPUSolve(t, prob, ens, kern.Method, o64)
					want := expected(res)
					got := rp.solve(t, rosKernelJob(ki, kern, &res.Options, ens, y0))
					what := fmt.Sprintf("%s dense %t", kern.Name, dense)
					na := kern.Dim
					roundings := float64((2*dim + 1) * kern.Method.Stages())
					stiff := testutil.LowerCond(kern.Method.Gamma, kern.Method.GammaOff) * 0x1p-24
					worst32, worst64, compared := 0.0, 0.0, 0
					for i := range ensembleSize {
						st32, st64 := ode.Status(got.status[i]), res.Status[i]
						floorFail := func(s ode.Status) bool { return s == ode.StepUnderflow || s == ode.NonFinite }
						blowUp := st32 == ode.NonFinite && st64 == ode.StepUnderflow && maxAbs(want.y[i*na:(i+1)*na]) > math.Sqrt(math.MaxFloat32)
						if st32 != st64 && !(ens.t0[i] == 1e17 && floorFail(st32) && floorFail(st64)) && !blowUp {
							t.Errorf("%s: trajectory %d: status %v, float64 %v", what, i, st32, st64)
							continue
						}
						if st64 != ode.Success || ode.Status(ref[0].status[i]) != ode.Success {
							continue
						}
						if got.t[i] != ens.t1[i] {
							t.Errorf("%s: trajectory %d: reached %v, want t1 = %v", what, i, got.t[i], ens.t1[i])
						}
						row := func(r *result, q int) []float64 { // q < 0: the final state
							if q < 0 {
								return r.y[i*na : (i+1)*na]
							}
							o := (i*ens.k + q) * na
							return r.saved[o : o+na]
						}
						n := float64(got.accepted[i])
						p := ens.p[i*np : (i+1)*np]
						times := append([]float64{ens.t1[i]}, ens.save[i*ens.k:(i+1)*ens.k]...)
						forcing := make([]float64, len(c.wrt)) // F_c: the largest |J_p e_j| along the reference
						coupling := 0.0                        // the largest off-diagonal |J_y| entry along it
						for q := -1; q < ens.k; q++ {
							coupling = math.Max(coupling, offDiagonal(pg, times[q+1], row(ref[0], q)[:dim], p))
							for ci, w := range c.wrt {
								if !w.Y0 {
									forcing[ci] = math.Max(forcing[ci], paramForcing(pg, times[q+1], row(ref[0], q)[:dim], p, w.Index))
								}
							}
						}
						span := math.Abs(ens.t1[i] - ens.t0[i])
						for q := -1; q < ens.k; q++ {
							y32, y64, yr, yp := row(&got.result, q), row(want, q), row(ref[0], q), row(ref[1], q)
							e32, e64, delta := tolUnits(y32, yr), tolUnits(y64, yr), tolUnits(yp, yr)
							base := 3*math.Max(e64, 1) + roundings*n*delta
							for d := range yr {
								m := math.Abs(yr[d]) // the magnitude the stage recursion carries
								if b := d/dim - 1; b >= 0 {
									m = math.Max(m, forcing[b]*span*(1+coupling*span))
								}
								sc := f32ATol + f32RTol*math.Abs(yr[d])
								if ed, bound := math.Abs(y32[d]-yr[d])/sc, base+stiff*m/sc; !(ed <= bound) {
									t.Errorf("%s: trajectory %d, %s, component %d: float32 error %.3g tolerances (float32 %v, reference %v), float64 %.3g, one rounding grows to %.3g, %v steps: want at most %.3g",
										what, i, rowName(q+1), d, ed, y32[d], yr[d], e64, delta, n, bound)
								}
							}
							worst32, worst64 = math.Max(worst32, e32), math.Max(worst64, e64)
							compared++
						}
					}
					if compared < ensembleSize {
						t.Errorf("%s: only %d states compared", what, compared)
					}
					t.Logf("%s: %d states, worst error in tolerances: float32 %.3g, float64 %.3g", what, compared, worst32, worst64)
				}
			}
			want := 0 // a float32 twin of each forward and sensitivity kernel
			for _, k := range rp.src.RosKernels {
				if !k.Float32 && !k.Record && !k.Adjoint {
					want++
				}
			}
			if kernels == 0 || kernels != want {
				t.Errorf("%d float32 kernels, want %d", kernels, want)
			}
		})
	}
}

// maxAbs returns the largest |v_i|.
func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}

// paramForcing returns max_d |(J_p e_j)_d| at (t, y, p): the size of
// the forcing of the sensitivity column of parameter j.
func paramForcing(pg *ode.Programs, t float64, y, p []float64, j int) float64 {
	v, w, out := make([]float64, len(y)), make([]float64, len(p)), make([]float64, len(y))
	w[j] = 1
	pg.JVP(t, y, p, v, w, out)
	return maxAbs(out)
}

// offDiagonal returns the largest |∂f_r/∂y_c|, r ≠ c, at (t, y, p).
func offDiagonal(pg *ode.Programs, t float64, y, p []float64) float64 {
	n := len(y)
	jac := make([]float64, n*n)
	pg.JacY(t, y, p, jac)
	m := 0.0
	for r := range n {
		for c := range n {
			if r != c {
				m = math.Max(m, math.Abs(jac[r*n+c]))
			}
		}
	}
	return m
}

// TestGenerateRosenbrockFloat32 checks the float32 Rosenbrock kernels
// as RosKernels describes them: after the double forward and
// sensitivity kernels and before the record kernels, named
// gs_ros_<method>_f32[_sens<k>], taking gs_ros_job_f32; and that a
// source without Options.Float32 has none of it.
func TestGenerateRosenbrockFloat32(t *testing.T) {
	set := readModel(t, "testdata/rosforced.ode")
	opts := emitcuda.Options{Methods: []*method.Tableau{}, Rosenbrock: rosMethods, Sens: []emitcuda.Sens{{Cols: []int{1, -1}}},
		Float32: true, RosRecord: true}
	src, err := emitcuda.Generate(set, opts)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range src.RosKernels {
		names = append(names, k.Name)
		job := "gs_ros_job"
		if k.Float32 {
			job = "gs_ros_job_f32"
		}
		if !k.Record && !strings.Contains(string(src.Code), "extern \"C\" __global__ void "+k.Name+"("+job+" job)") {
			t.Errorf("kernel %s(%s) is not in the source", k.Name, job)
		}
		if k.Float32 && (k.Record || k.Adjoint || k.Dim != 2*(1+len(k.SensCols))) {
			t.Errorf("float32 kernel %+v", k)
		}
	}
	want := "gs_ros_rosenbrock23 gs_ros_rodas5p gs_ros_rosenbrock23_sens0 gs_ros_rodas5p_sens0 " +
		"gs_ros_rosenbrock23_f32 gs_ros_rodas5p_f32 gs_ros_rosenbrock23_f32_sens0 gs_ros_rodas5p_f32_sens0 " +
		"gs_ros_rosenbrock23_record gs_ros_rodas5p_record"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("RosKernels %s, want %s", got, want)
	}
	opts.Float32 = false
	plain, err := emitcuda.Generate(set, opts)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(plain.Code), "struct gs_ros_job_f32") || strings.Contains(string(plain.Code), "(gs_ros_job_f32 job)") || len(plain.RosKernels) != 6 {
		t.Errorf("a source without Options.Float32 has float32 Rosenbrock code or %d kernels", len(plain.RosKernels))
	}
}
