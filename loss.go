package gradsolve

import (
	"context"
	"fmt"
	"math"

	"github.com/gradsolve/gradsolve/router"
)

// Loss computes a scalar loss L of what a solve returned and its
// cotangents ∂L/∂Y (and ∂L/∂Saved, or nil). A user loss is any function
// of this type; SumSquares and LeastSquares are ready-made.
type Loss func(res *Result) (float64, Cotangents, error)

// SumSquares returns the loss L = ½ Σ_i ‖y_i(t1)‖² over the final states
// of the successful trajectories, whose cotangent is y_i(t1) itself.
func SumSquares() Loss {
	return func(res *Result) (float64, Cotangents, error) {
		cot := Cotangents{Y: make([]float64, len(res.Y))}
		var l float64
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
}

// LeastSquares returns the weighted least-squares loss against data for
// the final states,
//
//	L = ½ Σ_i Σ_d w_id·(y_id(t1) − data_id)²,   ∂L/∂y_id = w_id·(y_id − data_id),
//
// over the successful trajectories. data is N×Dim (or Dim, shared);
// weights is nil (all 1), Dim (per component) or N×Dim.
func LeastSquares(data, weights []float64) Loss {
	return func(res *Result) (float64, Cotangents, error) {
		n, dim := res.N, res.Dim
		if len(data) != dim && len(data) != n*dim {
			return 0, Cotangents{}, inputErr("LeastSquares: data has length %d: want Dim = %d or N·Dim = %d", len(data), dim, n*dim)
		}
		if weights != nil && len(weights) != dim && len(weights) != n*dim {
			return 0, Cotangents{}, inputErr("LeastSquares: weights have length %d: want Dim = %d or N·Dim = %d", len(weights), dim, n*dim)
		}
		cot := Cotangents{Y: make([]float64, n*dim)}
		var l float64
		for i := range n {
			if res.Status[i] != Success {
				continue
			}
			di := pick(data, i, dim)
			for d, v := range res.Row(i) {
				w := 1.0
				if weights != nil {
					w = pick(weights, i, dim)[d]
				}
				r := v - di[d]
				l += 0.5 * w * r * r
				cot.Y[i*dim+d] = w * r
			}
		}
		if math.IsNaN(l) || math.IsInf(l, 0) {
			return 0, Cotangents{}, fmt.Errorf("gradsolve: LeastSquares: the loss is %g", l)
		}
		return l, cot, nil
	}
}

// LossGradient solves the ensemble, evaluates the loss and returns it
// with its gradient ∂L/∂p and ∂L/∂y0 in one call. The router
// (Options.Mode) chooses between the reverse replay — a recording, then
// the discrete adjoint; the recording is returned so the caller can
// Replay and take further gradients near the same point — and forward
// sensitivities with respect to every parameter and initial value (no
// recording: the returned *Recording is nil). Both give the exact
// derivative of the discrete solution; Gradient.Decision says which ran
// and why.
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
	d := router.Choose(router.Request{NumWrt: prob.NumParams + prob.Dim, NumOutputs: 1, Stiff: prob.Stiff, Mode: o.Mode})
	if err := checkLossSizes(prob, ens, &o, d.Mode == router.Forward, prob.NumParams+prob.Dim); err != nil {
		return 0, nil, nil, err
	}
	if d.Mode == router.Forward {
		l, g, err := forwardLossGradient(ctx, prob, ens, o, loss)
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
	}
	return l, g, rec, err
}

// forwardLossGradient contracts the loss's cotangents with forward
// sensitivities to every parameter and initial value.
func forwardLossGradient(ctx context.Context, prob *Problem, ens *Ensemble, o Options, loss Loss) (float64, *Gradient, error) {
	m, dim := prob.NumParams, prob.Dim
	wrt := make([]Wrt, 0, m+dim)
	for j := range m {
		wrt = append(wrt, Param(j))
	}
	for i := range dim {
		wrt = append(wrt, InitialValue(i))
	}
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
	if len(cot.Y) != n*dim || (cot.Saved != nil && len(cot.Saved) != n*K*dim) {
		return 0, nil, inputErr("the loss returned cotangents of lengths %d and %d: want N·Dim = %d and N·K·Dim = %d", len(cot.Y), len(cot.Saved), n*dim, n*K*dim)
	}
	g := &Gradient{P: make([]float64, n*m), Y0: make([]float64, n*dim), Status: res.Status, Elapsed: res.Elapsed, Workers: res.Workers}
	for i := range n {
		if res.Status[i] != Success {
			fillNaN(g.P[i*m : (i+1)*m])
			fillNaN(g.Y0[i*dim : (i+1)*dim])
			continue
		}
		for c := range ns {
			var s float64
			for d := range dim {
				s += cot.Y[i*dim+d] * res.S[(i*dim+d)*ns+c]
				for k := 0; cot.Saved != nil && k < K; k++ {
					s += cot.Saved[(i*K+k)*dim+d] * res.SavedS[((i*K+k)*dim+d)*ns+c]
				}
			}
			if c < m {
				g.P[i*m+c] = s
			} else {
				g.Y0[i*dim+c-m] = s
			}
		}
	}
	return l, g, nil
}
