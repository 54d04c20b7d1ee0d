package gradsolve

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/gradsolve/gradsolve/router"
)

// Loss computes a scalar loss L of what a solve returned and its
// cotangents ∂L/∂Y (and ∂L/∂Saved, or nil). A user loss is any function
// of this type; SumSquares and LeastSquares are ready-made.
type Loss func(res *Result) (float64, Cotangents, error)

// SumSquares returns the loss L = ½ Σ_i ‖y_i(t1)‖² over the final states
// of the successful trajectories, whose cotangent is y_i(t1) itself.
func SumSquares() Loss {
	return func(res *Result) (float64, Cotangents, error) { return sumSquares(0, res, 0) }
}

// SumSquaresChunks is SumSquares for GradientChunks: the terms of each
// chunk's trajectories are added to the sum before it, one after
// another, so the loss has SumSquares's bits for any chunking.
func SumSquaresChunks() ChunkLoss { return sumSquares }

// sumSquares adds the terms of SumSquares for the trajectories of res
// to acc.
func sumSquares(_ int, res *Result, acc float64) (float64, Cotangents, error) {
	cot := Cotangents{Y: make([]float64, len(res.Y))}
	l := acc
	for i := range res.N {
		if res.Status[i] != Success {
			continue
		}
		for d, v := range res.Row(i) {
			l += 0.5 * v * v
			cot.Y[i*res.Dim+d] = v
		}
	}
	return l, cot, nil
}

// ChunkLoss is a loss that is a sum over the trajectories, evaluated
// one chunk of them at a time (GradientChunks): given the result of the
// chunk of trajectories lo, lo+1, … of the ensemble and acc, the sum of
// the terms of the trajectories before it, it returns the sum with the
// chunk's terms added, and the chunk's cotangents. A loss that adds its
// terms one trajectory after another onto acc gives the same bits for
// any chunking (SumSquaresChunks, LeastSquaresChunks).
type ChunkLoss func(lo int, res *Result, acc float64) (float64, Cotangents, error)

// LeastSquares returns the weighted least-squares loss against data for
// the final states,
//
//	L = ½ Σ_i Σ_d w_id·(y_id(t1) − data_id)²,   ∂L/∂y_id = w_id·(y_id − data_id),
//
// over the successful trajectories. data is N×Dim (or Dim, shared);
// weights is nil (all 1), Dim (per component) or N×Dim, finite and ≥ 0.
// It is LeastSquaresFit(FitData{Final: data, FinalWeights: weights}).
func LeastSquares(data, weights []float64) Loss {
	return leastSquares("LeastSquares", "data", "weights", "", "", FitData{Final: data, FinalWeights: weights})
}

// FitData holds the targets and weights of a least-squares loss over
// the final states, the saved states or both (see LeastSquaresFit).
// Each array's length says its shape.
type FitData struct {
	// Final holds the targets of the final states: N×Dim, or Dim shared
	// by every trajectory. Nil leaves the final states out of the loss.
	Final []float64
	// FinalWeights weights the residuals of the final states: nil (all
	// 1), Dim (per component) or N×Dim. Only with Final.
	FinalWeights []float64
	// Saved holds the targets of the states at the save times: N×K×Dim,
	// or K×Dim shared by every trajectory (row k: save time k). Nil
	// leaves the saved states out of the loss.
	Saved []float64
	// SavedWeights weights the residuals of the saved states: nil (all
	// 1), Dim (per component), K×Dim (per save time and component) or
	// N×K×Dim. Only with Saved.
	SavedWeights []float64
}

// LeastSquaresFit returns the weighted least-squares loss against the
// targets of fit,
//
//	L = ½ Σ_i [ Σ_d wF_id·(y_id(t1) − F_id)² + Σ_k Σ_d wS_ikd·(y_id(τ_ik) − S_ikd)² ],
//
// with cotangents ∂L/∂y_id(t1) = wF_id·(y_id(t1) − F_id) and
// ∂L/∂y_id(τ_ik) = wS_ikd·(y_id(τ_ik) − S_ikd), over the successful
// trajectories (failed ones contribute nothing and get zero
// cotangents). F = fit.Final, S = fit.Saved, wF and wS their weights; a
// part whose targets are nil is left out. Targets and weights must be
// finite, weights ≥ 0; at least one of Final and Saved must be set, and
// Saved needs save times (Ensemble.Save).
func LeastSquaresFit(fit FitData) Loss {
	return leastSquares("LeastSquaresFit", "FitData.Final", "FitData.FinalWeights", "FitData.Saved", "FitData.SavedWeights", fit)
}

// leastSquares is the loss of LeastSquares and LeastSquaresFit; the
// names say what to call each array in messages. The terms are summed
// trajectory by trajectory, the final state's components first, then
// the saved states' in time order.
func leastSquares(fn, finalName, finalWName, savedName, savedWName string, fit FitData) Loss {
	return func(res *Result) (float64, Cotangents, error) {
		return lsqTerms(fn, finalName, finalWName, savedName, savedWName, fit, res, 0)
	}
}

// LeastSquaresChunks is LeastSquaresFit for GradientChunks: data(lo,
// hi) returns the targets and weights of the chunk's trajectories
// [lo, hi) — arrays of hi − lo rows, or the shared forms FitData
// allows — so that no array of the whole ensemble need exist. The terms
// are added one trajectory after another onto the sum of the chunks
// before, so the loss has LeastSquaresFit's bits for any chunking.
func LeastSquaresChunks(data func(lo, hi int) (FitData, error)) ChunkLoss {
	return func(lo int, res *Result, acc float64) (float64, Cotangents, error) {
		if data == nil {
			return 0, Cotangents{}, inputErr("LeastSquaresChunks: nil data")
		}
		fit, err := data(lo, lo+res.N)
		if err != nil {
			return 0, Cotangents{}, err
		}
		return lsqTerms("LeastSquaresChunks", "FitData.Final", "FitData.FinalWeights", "FitData.Saved", "FitData.SavedWeights", fit, res, acc)
	}
}

// lsqTerms checks fit against res and adds the least-squares terms of
// res's trajectories to acc.
func lsqTerms(fn, finalName, finalWName, savedName, savedWName string, fit FitData, res *Result, acc float64) (float64, Cotangents, error) {
	n, dim, K := res.N, res.Dim, res.K
	if fit.Final == nil && fit.Saved == nil {
		return 0, Cotangents{}, inputErr("%s: neither %s nor %s is set: the loss has no terms", fn, finalName, savedName)
	}
	if fit.Final != nil {
		if err := checkFitArray(fn, finalName, fit.Final, false, []fitShape{{dim, "Dim"}, {n * dim, "N·Dim"}}); err != nil {
			return 0, Cotangents{}, err
		}
	}
	if fit.FinalWeights != nil {
		if fit.Final == nil {
			return 0, Cotangents{}, inputErr("%s: %s is set without %s", fn, finalWName, finalName)
		}
		if err := checkFitArray(fn, finalWName, fit.FinalWeights, true, []fitShape{{dim, "Dim"}, {n * dim, "N·Dim"}}); err != nil {
			return 0, Cotangents{}, err
		}
	}
	if fit.Saved != nil {
		if K == 0 {
			return 0, Cotangents{}, inputErr("%s: %s is set but the solve has no save times (Ensemble.Save)", fn, savedName)
		}
		if err := checkFitArray(fn, savedName, fit.Saved, false, []fitShape{{K * dim, "K·Dim"}, {n * K * dim, "N·K·Dim"}}); err != nil {
			return 0, Cotangents{}, err
		}
	}
	if fit.SavedWeights != nil {
		if fit.Saved == nil {
			return 0, Cotangents{}, inputErr("%s: %s is set without %s", fn, savedWName, savedName)
		}
		if err := checkFitArray(fn, savedWName, fit.SavedWeights, true, []fitShape{{dim, "Dim"}, {K * dim, "K·Dim"}, {n * K * dim, "N·K·Dim"}}); err != nil {
			return 0, Cotangents{}, err
		}
	}
	cot := Cotangents{Y: make([]float64, n*dim)}
	if fit.Saved != nil {
		cot.Saved = make([]float64, n*K*dim)
	}
	l := acc
	for i := range n {
		if res.Status[i] != Success {
			continue
		}
		if fit.Final != nil {
			di := pick(fit.Final, i, dim)
			for d, v := range res.Row(i) {
				w := 1.0
				if fit.FinalWeights != nil {
					w = pick(fit.FinalWeights, i, dim)[d]
				}
				r := v - di[d]
				l += 0.5 * w * r * r
				cot.Y[i*dim+d] = w * r
			}
		}
		if fit.Saved != nil {
			si := pick(fit.Saved, i, K*dim)
			var wi []float64
			if fit.SavedWeights != nil && len(fit.SavedWeights) != dim {
				wi = pick(fit.SavedWeights, i, K*dim)
			}
			for k := range K {
				for d, v := range res.SavedRow(i, k) {
					w := 1.0
					switch {
					case wi != nil:
						w = wi[k*dim+d]
					case fit.SavedWeights != nil:
						w = fit.SavedWeights[d]
					}
					r := v - si[k*dim+d]
					l += 0.5 * w * r * r
					cot.Saved[(i*K+k)*dim+d] = w * r
				}
			}
		}
	}
	if math.IsNaN(l) || math.IsInf(l, 0) {
		return 0, Cotangents{}, fmt.Errorf("gradsolve: %s: the loss is %g", fn, l)
	}
	return l, cot, nil
}

// fitShape is one allowed length of a FitData array and its name.
type fitShape struct {
	length int
	name   string
}

// checkFitArray checks that v has one of the allowed lengths and holds
// finite numbers (≥ 0 for weights).
func checkFitArray(fn, name string, v []float64, weights bool, shapes []fitShape) error {
	ok := false
	var want []string
	for _, s := range shapes {
		ok = ok || len(v) == s.length
		want = append(want, fmt.Sprintf("%s = %d", s.name, s.length))
	}
	if !ok {
		return inputErr("%s: %s has length %d: want %s", fn, name, len(v), strings.Join(want, " or "))
	}
	for k, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) || (weights && x < 0) {
			what := "finite"
			if weights {
				what = "finite and ≥ 0"
			}
			return inputErr("%s: %s[%d] = %g: must be %s", fn, name, k, x, what)
		}
	}
	return nil
}

// LossGradient solves the ensemble, evaluates the loss and returns it
// with its gradient ∂L/∂p and ∂L/∂y0 in one call. The router
// (Options.Mode) chooses between the reverse replay — a recording, then
// the discrete adjoint; the recording is returned so the caller can
// Replay and take further gradients near the same point — and forward
// sensitivities with respect to the quantities Options.GradientWrt
// names (every parameter and initial value when it is nil; no
// recording: the returned *Recording is nil). A mode whose derivative
// programs the problem lacks is not chosen (a problem without a
// cotangent program is differentiated forward). Both give the exact
// derivative of the discrete solution; Gradient.Decision says which
// ran, on which engine, and why. The loss may use the final states and
// the states at the save times (Cotangents.Saved).
func LossGradient(ctx context.Context, prob *Problem, ens *Ensemble, opts *Options, loss Loss) (float64, *Gradient, *Recording, error) {
	if loss == nil {
		return 0, nil, nil, inputErr("nil loss")
	}
	if err := prob.Validate(); err != nil {
		return 0, nil, nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	// The router picks the mode from what the engines serve, and each
	// mode's engine as Solve and Record pick it (the same request), so
	// the Decision names the engine that runs.
	n := 0
	if ens != nil {
		n = ens.N
	}
	d, wrt, err := gradientDecision(prob, &o, n)
	if err != nil {
		return 0, nil, nil, err
	}
	if err := checkLossSizes(prob, ens, &o, d.Mode == router.Forward, len(wrt)); err != nil {
		return 0, nil, nil, err
	}
	if d.Mode == router.Forward {
		l, g, err := forwardLossGradient(ctx, prob, ens, o, loss, wrt)
		if g != nil {
			g.Decision = d
		}
		return l, g, nil, err
	}
	rec, err := Record(ctx, prob, ens, &o)
	if err != nil {
		return 0, nil, nil, err
	}
	l, cot, err := loss(rec.Result)
	if err != nil {
		return 0, nil, rec, err
	}
	g, err := rec.Gradient(ctx, cot)
	if g != nil {
		g.Decision = d
		if o.GradientWrt != nil {
			keepColumns(g, prob, wrt)
		}
	}
	return l, g, rec, err
}

// gradientWrt returns the columns LossGradient differentiates by:
// every parameter, then every initial value, when wrt is nil;
// otherwise wrt, checked.
func gradientWrt(prob *Problem, wrt []Wrt) ([]Wrt, error) {
	if wrt == nil {
		all := make([]Wrt, 0, prob.NumParams+prob.Dim)
		for j := range prob.NumParams {
			all = append(all, Param(j))
		}
		for i := range prob.Dim {
			all = append(all, InitialValue(i))
		}
		return all, nil
	}
	if len(wrt) == 0 {
		return nil, inputErr("Options.GradientWrt is empty: list at least one Wrt, or leave it nil for every parameter and initial value")
	}
	if err := checkWrt(prob, wrt, "Options.GradientWrt"); err != nil {
		return nil, err
	}
	return wrt, nil
}

// keepColumns sets the entries of g that wrt does not name to NaN, so a
// gradient holds the same numbers whichever mode computed it.
func keepColumns(g *Gradient, prob *Problem, wrt []Wrt) {
	m, dim := prob.NumParams, prob.Dim
	keepP, keepY := make([]bool, m), make([]bool, dim)
	for _, w := range wrt {
		if w.Y0 {
			keepY[w.Index] = true
		} else {
			keepP[w.Index] = true
		}
	}
	for i := range len(g.Status) {
		for j, k := range keepP {
			if !k {
				g.P[i*m+j] = math.NaN()
			}
		}
		for d, k := range keepY {
			if !k {
				g.Y0[i*dim+d] = math.NaN()
			}
		}
	}
}

// forwardLossGradient contracts the loss's cotangents with forward
// sensitivities to the columns wrt, and only those.
func forwardLossGradient(ctx context.Context, prob *Problem, ens *Ensemble, o Options, loss Loss, wrt []Wrt) (float64, *Gradient, error) {
	m, dim := prob.NumParams, prob.Dim
	o.Sens = &Sensitivity{Wrt: wrt}
	res, err := Solve(ctx, prob, ens, &o)
	if err != nil {
		return 0, nil, err
	}
	l, cot, err := loss(res)
	if err != nil {
		return 0, nil, err
	}
	n, ns, K := res.N, res.NS, res.K
	if err := checkCotangents(cot, n, dim, K); err != nil {
		return 0, nil, err
	}
	g := &Gradient{P: make([]float64, n*m), Y0: make([]float64, n*dim), Status: res.Status, Elapsed: res.Elapsed, Workers: res.Workers}
	if len(wrt) < m+dim {
		fillNaN(g.P) // the columns not asked for
		fillNaN(g.Y0)
	}
	for i := range n {
		if res.Status[i] != Success {
			fillNaN(g.P[i*m : (i+1)*m])
			fillNaN(g.Y0[i*dim : (i+1)*dim])
			continue
		}
		for c, w := range wrt {
			var s float64
			for d := range dim {
				s += cot.Y[i*dim+d] * res.S[(i*dim+d)*ns+c]
				for k := 0; cot.Saved != nil && k < K; k++ {
					s += cot.Saved[(i*K+k)*dim+d] * res.SavedS[((i*K+k)*dim+d)*ns+c]
				}
			}
			if w.Y0 {
				g.Y0[i*dim+w.Index] = s
			} else {
				g.P[i*m+w.Index] = s
			}
		}
	}
	return l, g, nil
}
