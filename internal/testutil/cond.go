package testutil

import "math"

// LowerCond returns the condition number ‖L‖∞·‖L⁻¹‖∞ of the
// lower-triangular matrix L with diag on its diagonal and, below it,
// row i's entries lower[i][0..i) (a Rosenbrock method's Γ from its
// Gamma and GammaOff), L⁻¹ by forward substitution. diag must be
// nonzero.
func LowerCond(diag float64, lower [][]float64) float64 {
	s := len(lower)
	l, inv := make([][]float64, s), make([][]float64, s)
	for i := range s {
		l[i], inv[i] = make([]float64, s), make([]float64, s)
		copy(l[i], lower[i][:i])
		l[i][i] = diag
	}
	for c := range s {
		for i := range s {
			v := 0.0
			if i == c {
				v = 1
			}
			for j := range i {
				v -= l[i][j] * inv[j][c]
			}
			inv[i][c] = v / diag
		}
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
	return norm(l) * norm(inv)
}
