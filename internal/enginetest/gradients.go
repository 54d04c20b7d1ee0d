package enginetest

import (
	"context"
	"math"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/engine"
	"github.com/gradsolve/gradsolve/router"
)

const (
	// modeBound bounds the difference of the forward and the reverse
	// gradient, relative to the largest entry. Both are the exact
	// derivative of the same discrete map; they differ only in the
	// order of their roundings — forward mode carries J·S through the
	// steps, reverse mode uᵀJ back through them — each a sum of a few
	// thousand products (steps × stages × columns), so of order
	// 10³·ε ≈ 1e−13 times the condition of the sums. Measured: at
	// most 1.9e−15 (Rodas5P; go test -v shows each); 1e−10 leaves room
	// for long meshes and ill-conditioned sums without admitting a
	// wrong term, which shows at the size of the term (≫ 1e−6 here).
	modeBound = 1e-10
	// fdBound bounds the difference of the reverse gradient and
	// central differences of the replay on the recorded mesh, relative
	// to the largest entry. The replayed map is smooth in the inputs
	// (the steps are held fixed), so central differences with step
	// δ = 1e−5 err by δ²/6·|L'''| ≈ 1e−11 (truncation) plus
	// ε·|L|/δ ≈ 2e−11 (rounding), relative to gradients of order 0.01:
	// measured at most 3.3e−9, every method. 1e−7.
	fdBound = 1e-7
	fdStep  = 1e-5
)

// Gradients checks, for every method whose sensitivities and recording
// the engine serves, that LossGradient's forward and reverse modes
// give the same gradient (to rounding), that Decision names the engine,
// and that the reverse gradient is the derivative of the replayed map:
// central differences of the replay at nearby parameters and initial
// states, on the recorded mesh.
func Gradients(t T, e engine.Engine) {
	ctx := context.Background()
	pr := mustProblem(t)
	ens := ensemble(n)
	// A loss of the final and the saved states, with weights.
	data := make([]float64, n*dim)
	savedData := make([]float64, n*len(saves)*dim)
	for i := range data {
		data[i] = 0.1 * float64(i%7)
	}
	for i := range savedData {
		savedData[i] = 0.05 * float64(i%5)
	}
	fit := gradsolve.FitData{Final: data, Saved: savedData, SavedWeights: []float64{2, 0.5}}
	loss := gradsolve.LeastSquaresFit(fit)
	for _, m := range Methods(e) {
		name := m.MethodName()
		fo, ro := options(e, m), options(e, m)
		fo.Mode, ro.Mode = router.Forward, router.Reverse
		if !serves(t, e, m, engine.Sensitivities, &gradsolve.Options{Sens: &gradsolve.Sensitivity{Wrt: allColumns}}) ||
			!serves(t, e, m, engine.Record, &gradsolve.Options{}) {
			continue
		}
		lf, gf, _, err := gradsolve.LossGradient(ctx, pr, ens, fo, loss)
		if err != nil {
			t.Fatalf("%s: forward mode: %v", name, err)
		}
		lr, gr, rec, err := gradsolve.LossGradient(ctx, pr, ens, ro, loss)
		if err != nil {
			t.Fatalf("%s: reverse mode: %v", name, err)
		}
		for _, g := range []*gradsolve.Gradient{gf, gr} {
			if g.Decision.Engine != e.Name() || g.Decision.EngineReason == "" {
				t.Errorf("%s: %s mode: Decision %+v names another engine than %s", name, g.Decision.Mode, g.Decision, e.Name())
			}
		}
		if lf != lr {
			t.Errorf("%s: the loss is %.17g by forward mode, %.17g by reverse: the solves differ", name, lf, lr)
		}
		if err := relErr(gf.P, gr.P, 0); err > modeBound {
			t.Errorf("%s: ∂L/∂p: forward and reverse differ by %.2g relative, bound %.0g", name, err, modeBound)
		}
		if err := relErr(gf.Y0, gr.Y0, 0); err > modeBound {
			t.Errorf("%s: ∂L/∂y0: forward and reverse differ by %.2g relative, bound %.0g", name, err, modeBound)
		}
		// Central differences of the replay, trajectory by trajectory
		// (each trajectory's loss depends on its own inputs alone, so
		// one replay per direction serves every trajectory).
		p0 := params(n)
		fdP := make([]float64, n*numParams)
		for j := range numParams {
			lp, lm := make([]float64, n), make([]float64, n)
			for _, side := range []struct {
				sign float64
				l    []float64
			}{{1, lp}, {-1, lm}} {
				p := append([]float64(nil), p0...)
				for i := range n {
					p[i*numParams+j] += side.sign * fdStep
				}
				res, err := rec.Replay(ctx, &gradsolve.Point{P: p})
				if err != nil {
					t.Fatalf("%s: Replay: %v", name, err)
				}
				perTrajectory(t, res, fit, side.l)
			}
			for i := range n {
				fdP[i*numParams+j] = (lp[i] - lm[i]) / (2 * fdStep)
			}
		}
		if err := relErr(gr.P, fdP, 0); err > fdBound {
			t.Errorf("%s: ∂L/∂p: reverse and central differences of the replay differ by %.2g relative, bound %.0g", name, err, fdBound)
		}
		// ∂L/∂y0 at the recording's parameters: the initial states as
		// inputs of their own (Point.Y0).
		y00 := make([]float64, n*dim)
		for i := range n {
			y00[i*dim], y00[i*dim+1] = 1, p0[i*numParams+3]
		}
		fdY := make([]float64, n*dim)
		for d := range dim {
			lp, lm := make([]float64, n), make([]float64, n)
			for _, side := range []struct {
				sign float64
				l    []float64
			}{{1, lp}, {-1, lm}} {
				y0 := append([]float64(nil), y00...)
				for i := range n {
					y0[i*dim+d] += side.sign * fdStep
				}
				res, err := rec.Replay(ctx, &gradsolve.Point{Y0: y0, P: p0})
				if err != nil {
					t.Fatalf("%s: Replay: %v", name, err)
				}
				perTrajectory(t, res, fit, side.l)
			}
			for i := range n {
				fdY[i*dim+d] = (lp[i] - lm[i]) / (2 * fdStep)
			}
		}
		if err := relErr(gr.Y0, fdY, 0); err > fdBound {
			t.Errorf("%s: ∂L/∂y0: reverse and central differences of the replay differ by %.2g relative, bound %.0g", name, err, fdBound)
		}
		measured(t, "modes "+name, math.Max(relErr(gf.P, gr.P, 0), relErr(gf.Y0, gr.Y0, 0)))
		measured(t, "fd "+name, math.Max(relErr(gr.P, fdP, 0), relErr(gr.Y0, fdY, 0)))
	}
}

// perTrajectory writes each trajectory's share of the least-squares
// loss of fit into l, in LeastSquaresFit's order of summation: the
// loss of a one-trajectory ensemble.
func perTrajectory(t T, res *gradsolve.Result, fit gradsolve.FitData, l []float64) {
	t.Helper()
	K := res.K
	for i := range res.N {
		one := &gradsolve.Result{N: 1, Dim: res.Dim, K: K, Y: res.Row(i), Saved: res.Saved[i*K*dim : (i+1)*K*dim],
			Status: res.Status[i : i+1]}
		f := gradsolve.FitData{Final: fit.Final[i*dim : (i+1)*dim], Saved: fit.Saved[i*K*dim : (i+1)*K*dim], SavedWeights: fit.SavedWeights}
		v, _, err := gradsolve.LeastSquaresFit(f)(one)
		if err != nil {
			t.Fatal(err)
		}
		l[i] = v
	}
}
