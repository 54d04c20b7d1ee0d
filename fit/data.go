package fit

import (
	"fmt"
	"math"
	"strings"

	"github.com/gradsolve/gradsolve"
)

// lsq is the weighted least-squares loss of a checked FitData, as
// gradsolve.LeastSquaresFit defines it, computed trajectory by
// trajectory so that each group has its own loss and the residuals are
// at hand for the Jacobian.
type lsq struct {
	d         gradsolve.FitData
	n, dim, k int
}

// newLSQ checks the shapes and values of d (the rules of
// gradsolve.LeastSquaresFit) with messages naming Spec.Data's fields.
func newLSQ(d gradsolve.FitData, n, dim, k int) (*lsq, error) {
	if d.Final == nil && d.Saved == nil {
		return nil, inputErr("Spec.Data: neither Final nor Saved is set: the loss has no terms")
	}
	type shape struct {
		length int
		name   string
	}
	check := func(name string, v []float64, weights bool, shapes []shape) error {
		ok := false
		var want []string
		for _, s := range shapes {
			ok = ok || len(v) == s.length
			want = append(want, fmt.Sprintf("%s = %d", s.name, s.length))
		}
		if !ok {
			return inputErr("Spec.Data.%s has length %d: want %s", name, len(v), strings.Join(want, " or "))
		}
		for j, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) || (weights && x < 0) {
				rule := "finite"
				if weights {
					rule = "finite and ≥ 0"
				}
				return inputErr("Spec.Data.%s[%d] = %g: must be %s", name, j, x, rule)
			}
		}
		return nil
	}
	if d.Final != nil {
		if err := check("Final", d.Final, false, []shape{{dim, "Dim"}, {n * dim, "N·Dim"}}); err != nil {
			return nil, err
		}
	}
	if d.FinalWeights != nil {
		if d.Final == nil {
			return nil, inputErr("Spec.Data.FinalWeights is set without Spec.Data.Final")
		}
		if err := check("FinalWeights", d.FinalWeights, true, []shape{{dim, "Dim"}, {n * dim, "N·Dim"}}); err != nil {
			return nil, err
		}
	}
	if d.Saved != nil {
		if k == 0 {
			return nil, inputErr("Spec.Data.Saved is set but the ensemble has no save times (Spec.Ensemble.Save)")
		}
		if err := check("Saved", d.Saved, false, []shape{{k * dim, "K·Dim"}, {n * k * dim, "N·K·Dim"}}); err != nil {
			return nil, err
		}
	}
	if d.SavedWeights != nil {
		if d.Saved == nil {
			return nil, inputErr("Spec.Data.SavedWeights is set without Spec.Data.Saved")
		}
		if err := check("SavedWeights", d.SavedWeights, true, []shape{{dim, "Dim"}, {k * dim, "K·Dim"}, {n * k * dim, "N·K·Dim"}}); err != nil {
			return nil, err
		}
	}
	return &lsq{d: d, n: n, dim: dim, k: k}, nil
}

// pickRow returns row i of a shared (one row) or per-trajectory array.
func pickRow(v []float64, i, width int) []float64 {
	if len(v) == width {
		return v
	}
	return v[i*width : (i+1)*width]
}

// finalWeight and savedWeight return the weight of a residual.
func (l *lsq) finalWeight(i, d int) float64 {
	if l.d.FinalWeights == nil {
		return 1
	}
	return pickRow(l.d.FinalWeights, i, l.dim)[d]
}

func (l *lsq) savedWeight(i, k, d int) float64 {
	w := l.d.SavedWeights
	switch {
	case w == nil:
		return 1
	case len(w) == l.dim:
		return w[d]
	}
	return pickRow(w, i, l.k*l.dim)[k*l.dim+d]
}

// residuals calls fn for every residual of trajectory i of res: the
// final state's components first, then the saved states' in time
// order; r is the state minus its target, w its weight, and sens the
// offset of its sensitivity row (component d at the final time: (i·Dim
// + d); at save time k: ((i·K + k)·Dim + d), into SavedS).
func (l *lsq) residuals(res *gradsolve.Result, i int, fn func(saved bool, row int, r, w float64)) {
	if l.d.Final != nil {
		t := pickRow(l.d.Final, i, l.dim)
		for d, v := range res.Row(i) {
			fn(false, i*l.dim+d, v-t[d], l.finalWeight(i, d))
		}
	}
	if l.d.Saved != nil {
		t := pickRow(l.d.Saved, i, l.k*l.dim)
		for k := range l.k {
			for d, v := range res.SavedRow(i, k) {
				fn(true, (i*l.k+k)*l.dim+d, v-t[k*l.dim+d], l.savedWeight(i, k, d))
			}
		}
	}
}

// eval returns each trajectory's loss ½Σw·r² (0 for failed
// trajectories) and the cotangents w·r.
func (l *lsq) eval(res *gradsolve.Result) ([]float64, gradsolve.Cotangents) {
	per := make([]float64, l.n)
	cot := gradsolve.Cotangents{Y: make([]float64, l.n*l.dim)}
	if l.d.Saved != nil {
		cot.Saved = make([]float64, l.n*l.k*l.dim)
	}
	for i := range l.n {
		if res.Status[i] != gradsolve.Success {
			continue
		}
		var s float64
		l.residuals(res, i, func(saved bool, row int, r, w float64) {
			s += 0.5 * w * r * r
			if saved {
				cot.Saved[row] = w * r
			} else {
				cot.Y[row] = w * r
			}
		})
		per[i] = s
	}
	return per, cot
}
