package gpu_test

import (
	"math"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/engine"
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
// solve's stages, κ the condition of the method's Γ (rosGammaCond);
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
			d, k := rob.Dim, len(ens.Save)/n
			ds := d * want.NS
			stiff := rosGammaCond(c.m) * 0x1p-24
			var first *gradsolve.Result
			for name := range chunkEngines {
				o32 := o
				o32.Engine, o32.Precision = name, gradsolve.Float32
				got := solve(t, rob, ens, o32)
				if first == nil {
					first = got
				} else {
					sameResults(t, name+" float32", got, first)
				}
				differ, worst, compared := false, 0.0, 0
				for i := range n {
					if got.Status[i] != want.Status[i] {
						t.Errorf("%s: trajectory %d: float32 %v, float64 %v", name, i, got.Status[i], want.Status[i])
					}
					if got.Status[i] != gradsolve.Success || want.Status[i] != gradsolve.Success || ref.Status[i] != gradsolve.Success {
						continue
					}
					compared++
					steps := float64(got.Stats[i].Accepted * c.m.Stages() * (2*d + 1))
					rows := k
					if c.sens {
						rows = k + 1 + k
					}
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
						y32, y64, yr := row(got), row(want), row(ref)
						e64, delta := tolUnits(y64, yr), tolUnits(row(refPert), yr)
						for j := range yr {
							sc := f32ATol + f32RTol*math.Abs(yr[j])
							if ej, bound := math.Abs(y32[j]-yr[j])/sc, 3*math.Max(e64, 1)+steps*delta+stiff*math.Abs(yr[j])/sc; !(ej <= bound) {
								t.Errorf("%s: trajectory %d, row %d, component %d: float32 error %.3g tolerances, float64 %.3g, one rounding grows to %.3g: want at most %.3g",
									name, i, q, j, ej, e64, delta, bound)
							}
							worst = math.Max(worst, math.Abs(y32[j]-yr[j])/sc)
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
		})
	}
}

// rosGammaCond returns ‖Γ‖∞·‖Γ⁻¹‖∞ of the method's lower-triangular Γ
// (γ on the diagonal, GammaOff below), as sym/emitcuda's gammaCond.
func rosGammaCond(m *method.Rosenbrock) float64 {
	s := m.Stages()
	g, inv := make([][]float64, s), make([][]float64, s)
	for i := range s {
		g[i], inv[i] = make([]float64, s), make([]float64, s)
		copy(g[i], m.GammaOff[i])
		g[i][i] = m.Gamma
	}
	norm := func(a [][]float64) float64 {
		n := 0.0
		for _, r := range a {
			rs := 0.0
			for _, v := range r {
				rs += math.Abs(v)
			}
			n = math.Max(n, rs)
		}
		return n
	}
	for c := range s {
		for i := range s {
			v := 0.0
			if i == c {
				v = 1
			}
			for j := range i {
				v -= g[i][j] * inv[j][c]
			}
			inv[i][c] = v / g[i][i]
		}
	}
	return norm(g) * norm(inv)
}
