package systems

import (
	"fmt"
	"math"
)

// linearStiffDefaultEigs are the eigenvalues of LinearStiffDefault: five
// decades, −1 to −1e5.
var linearStiffDefaultEigs = [6]float64{-1, -10, -100, -1e3, -1e4, -1e5}

// LinearStiff returns the linear system y' = A·y with the symmetric
// matrix
//
//	A = V·diag(λ₀, …, λ_{n−1})·Vᵀ,   V = I − (2/n)·𝟙𝟙ᵀ,
//
// whose eigenvalues are exactly the given eigs = (λ₀, …, λ_{n−1}) (up to
// the rounding of A's entries, a few eps·max|λ|). V is the Householder
// reflection that maps the all-ones vector 𝟙 to −𝟙: orthogonal and
// symmetric (V⁻¹ = Vᵀ = V), so A is symmetric and as well conditioned as
// its eigenvalues allow, and its k-th eigenvector is the column
// e_k − (2/n)·𝟙. A is dense for n ≥ 3 (for n = 2, V swaps the two
// coordinates and A is diagonal). The entries are
//
//	a_ij = Σ_k v_ik·λ_k·v_jk,
//
// summed for i ≤ j and mirrored, so A is exactly symmetric.
//
// The default initial state (1, 1, …, 1) = 𝟙 has Vᵀ·𝟙 = −𝟙: it excites
// every mode equally, and the exact solution is
//
//	y(t) = −Σ_k e^{λ_k·t}·(e_k − (2/n)·𝟙),   y_i(t) = −e^{λ_i·t} + (2/n)·Σ_k e^{λ_k·t}.
//
// Default span [0, 1]. There are no parameters; the states y0, …, y{n−1}
// are dimensionless. The problem is named "linear_stiff" and marked
// Stiff: with eigenvalues spread over decades an explicit method's step
// is bounded by about 3/max|λ| long after the fast modes have decayed.
// Its derivative programs are Linear's (J_y = A). Exact uses the
// eigen-decomposition rather than a matrix exponential (see
// LinearSystem.Exact), and Eigenvalues returns eigs.
//
// It returns an error wrapping ErrInvalid if eigs is empty or an
// eigenvalue is not negative and finite; the error names the index and
// the value.
//
// Source: the stiff linear test problem y' = A·y with a spread of
// negative eigenvalues, e.g. E. Hairer & G. Wanner, Solving Ordinary
// Differential Equations II, 2nd ed., Springer 1996, §IV.1–IV.2,
// doi:10.1007/978-3-642-05221-7; the Householder reflection as in G. H.
// Golub & C. F. Van Loan, Matrix Computations, 4th ed., Johns Hopkins
// 2013, §5.1.
func LinearStiff(eigs []float64) (*LinearSystem, error) {
	n := len(eigs)
	if n == 0 {
		return nil, fmt.Errorf("%w: LinearStiff: no eigenvalues: need at least one", ErrInvalid)
	}
	for k, l := range eigs {
		if !(l < 0) || math.IsInf(l, 0) {
			return nil, fmt.Errorf("%w: LinearStiff: eigs[%d] = %g: every eigenvalue must be negative and finite", ErrInvalid, k, l)
		}
	}
	lam := append([]float64(nil), eigs...)
	// V = I − (2/n)·𝟙𝟙ᵀ, row-major.
	v := make([]float64, n*n)
	c := 2 / float64(n)
	for i := range n {
		for j := range n {
			v[i*n+j] = -c
		}
		v[i*n+i] = 1 - c
	}
	a := make([]float64, n*n)
	for i := range n {
		for j := i; j < n; j++ {
			var s float64
			for k := range n {
				s += float64(float64(v[i*n+k]*lam[k]) * v[j*n+k]) // rounded products: no FMA on any architecture
			}
			a[i*n+j], a[j*n+i] = s, s
		}
	}
	ls, err := Linear(a, n)
	if err != nil {
		// The entries are finite: |a_ij| ≤ Σ|λ_k|·(1 + 2/n)² and every λ is finite.
		return nil, fmt.Errorf("systems: internal error: LinearStiff: %w", err)
	}
	ls.Problem.Name = "linear_stiff"
	ls.Problem.Stiff = true
	ls.eigs, ls.v = lam, v
	return ls, nil
}

// LinearStiffDefault returns LinearStiff with the six eigenvalues
// −1, −10, −100, −1e3, −1e4, −1e5 (five decades): stiffness ratio 1e5,
// default state (1, …, 1), span [0, 1], named "linear_stiff". By t = 1
// every mode but the slowest has decayed below e^{−10}, and an explicit
// method is still held to steps of about 3e-5.
func LinearStiffDefault() *LinearSystem {
	ls, err := LinearStiff(linearStiffDefaultEigs[:])
	if err != nil {
		// The eigenvalues are negative finite constants.
		panic("systems: internal error: LinearStiffDefault: " + err.Error())
	}
	return ls
}

// Eigenvalues returns a copy of the eigenvalues a LinearStiff system was
// built from, in the order given; nil for a system from Linear or
// LinearDefault.
func (ls *LinearSystem) Eigenvalues() []float64 {
	if ls.eigs == nil {
		return nil
	}
	return append([]float64(nil), ls.eigs...)
}

// exactEigen writes V·diag(e^{λ·h})·Vᵀ·y0 into dst (which may alias y0).
func (ls *LinearSystem) exactEigen(h float64, y0, dst []float64) {
	n, v := ls.n, ls.v
	c := make([]float64, n) // Vᵀ·y0, then scaled by e^{λ·h}
	for i := range n {
		yi := y0[i]
		row := v[i*n : i*n+n]
		for k, vik := range row {
			c[k] += float64(vik * yi)
		}
	}
	for k, l := range ls.eigs {
		c[k] *= math.Exp(l * h)
	}
	for i := range n {
		row := v[i*n : i*n+n]
		var s float64
		for k, vik := range row {
			s += float64(vik * c[k])
		}
		dst[i] = s
	}
}
