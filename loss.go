package gradsolve

import (
	"context"
	"fmt"
	"math"
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

// LossGradient solves the ensemble with a recording, evaluates the loss
// and returns it with its gradient ∂L/∂p and ∂L/∂y0 in one call. The
// recording is returned too, so the caller can Replay and take further
// gradients near the same point without solving again.
func LossGradient(ctx context.Context, prob *Problem, ens *Ensemble, opts *Options, loss Loss) (float64, *Gradient, *Recording, error) {
	if loss == nil {
		return 0, nil, nil, inputErr("nil loss")
	}
	rec, err := Record(ctx, prob, ens, opts)
	if err != nil {
		return 0, nil, nil, err
	}
	l, cot, err := loss(rec.Result)
	if err != nil {
		return 0, nil, rec, err
	}
	g, err := rec.Gradient(ctx, cot)
	return l, g, rec, err
}
