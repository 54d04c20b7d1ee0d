package gpu_test

import (
	"math"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/engine"
	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/method"
)

// TestEmulatedRosFloat32: float32 Rosenbrock solves through the engine
// (Options.Precision Float32 with Rodas5P and Rosenbrock23 on the
// emulated device, forward and with the sensitivities to two initial
// values, in chunks of 1, 7 and the batch with the same bits in each)
// are within the bound of sym/emitcuda's TestRosenbrockFloat32 (see its
// reasons) of the truth on Robertson's stiff kinetics: per component,
// in tolerances sc_d = atol + rtol·|ref_d| at rtol 1e-5, atol 1e-6,
//
//	|y32_d − ref_d|/sc_d ≤ 3·max(e64, 1) + (2N + 1)·n·S·δ + κ·u_f·|ref_d|/sc_d,
//
// e64 the float64 solve's error (cpu-ros, the same tolerances), δ the
// reference's response to one float rounding of y0, n·S the float32
// solve's stages, κ the condition of the method's Γ
// (testutil.LowerCond);
// columns of initial values have no forcing, so their magnitude is
// their own. The reference is cpu-ros with Rodas5P at rtol 1e-11,
// atol 1e-13. The statuses are float64's, and the float32 bits are not.
func TestEmulatedRosFloat32(t *testing.T) {
	e := engine.Lookup("emu-test-chunk1").(engine.Availability)
	if err := e.Available(); err != nil {
		t.Skipf("the emulated device cannot run here: %v", err)
	}
	rob := exampleProblem(t, "robertson.ode")
	const n = 12
	for _, c := range []struct {
		name string
		m    *method.Rosenbrock
		sens bool
	}{
		{"Rodas5P", method.Rodas5P, false},
		{"Rosenbrock23", method.Rosenbrock23, false},
		{"Rodas5P sensitivities", method.Rodas5P, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ens := floatEnsemble(rob, n, 10)
			o := gradsolve.Options{Engine: "cpu-ros", Method: c.m, RTol: f32RTol, ATol: f32ATol, MaxSteps: 20000}
			refOpts := gradsolve.Options{Engine: "cpu-ros", Method: method.Rodas5P, RTol: 1e-11, ATol: 1e-13, MaxSteps: 1 << 20}
			if c.sens {
				sens := &gradsolve.Sensitivity{Wrt: []gradsolve.Wrt{gradsolve.InitialValue(0), gradsolve.InitialValue(1)}}
				o.Sens, refOpts.Sens = sens, sens
			}
			want := solve(t, rob, ens, o)
			ref := solve(t, rob, ens, refOpts)
			pert := *ens
			pert.Y0 = append([]float64(nil), ens.Y0...)
			for i := range pert.Y0 {
				pert.Y0[i] *= 1 + 0x1p-24
			}
			refPert := solve(t, rob, &pert, refOpts)
			d := rob.Dim
			stiff := testutil.LowerCond(c.m.Gamma, c.m.GammaOff) * 0x1p-24
			float32Rows(t, rob, ens, o, want, ref, c.sens, func(r f32Row) float64 {
				steps := float64(r.got.Stats[r.i].Accepted * c.m.Stages() * (2*d + 1))
				y32, y64, yr := r.row(r.got), r.row(want), r.row(ref)
				e64, delta := tolUnits(y64, yr), tolUnits(r.row(refPert), yr)
				worst := 0.0
				for j := range yr {
					sc := f32ATol + f32RTol*math.Abs(yr[j])
					ej := math.Abs(y32[j]-yr[j]) / sc
					if bound := 3*math.Max(e64, 1) + steps*delta + stiff*math.Abs(yr[j])/sc; !(ej <= bound) {
						t.Errorf("%s: trajectory %d, row %d, component %d: float32 error %.3g tolerances, float64 %.3g, one rounding grows to %.3g: want at most %.3g",
							r.name, r.i, r.q, j, ej, e64, delta, bound)
					}
					worst = math.Max(worst, ej)
				}
				return worst
			})
		})
	}
}
