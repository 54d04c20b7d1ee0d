package systems

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/gradsolve/gradsolve/ode"
)

// LinearSystem is the constant-coefficient linear system y' = A·y, with
// its closed-form solution. Build one with Linear, LinearDefault,
// LinearStiff or LinearStiffDefault.
type LinearSystem struct {
	// Problem is the ODE, ready to solve; its F reads a private copy of
	// A that is never written.
	Problem *ode.Problem

	n int
	a []float64 // row-major n×n, read-only after construction

	// For LinearStiff only (nil otherwise): A = V·diag(eigs)·Vᵀ with V
	// orthogonal (up to rounding), row-major n×n; Exact uses this form.
	eigs []float64
	v    []float64
}

// Linear returns the linear system
//
//	y' = A·y,   (A·y)_i = Σ_j a[i·n + j]·y_j,
//
// with A the n×n matrix stored row-major in a (a is copied). It has no
// parameters; the states y0, …, y{n−1} are dimensionless. Default initial
// state (1, 1, …, 1), default span [0, 1]. The problem is named "linear".
//
// The exact solution y(t) = exp((t − t0)·A)·y(t0) is given by Exact.
//
// It returns an error wrapping ErrInvalid if n < 1, len(a) ≠ n·n, or an
// entry of a is not finite.
//
// Source: the standard linear test problem, e.g. E. Hairer, S. P. Nørsett
// & G. Wanner, Solving Ordinary Differential Equations I, 2nd ed.,
// Springer 1993, ch. I (linear systems with constant coefficients),
// doi:10.1007/978-3-540-78862-1.
func Linear(a []float64, n int) (*LinearSystem, error) {
	if n < 1 {
		return nil, fmt.Errorf("%w: Linear: n = %d: must be ≥ 1", ErrInvalid, n)
	}
	if len(a) != n*n {
		return nil, fmt.Errorf("%w: Linear: len(a) = %d: must be n·n = %d for n = %d", ErrInvalid, len(a), n*n, n)
	}
	for k, v := range a {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%w: Linear: a[%d] (row %d, column %d) = %g: must be finite", ErrInvalid, k, k/n, k%n, v)
		}
	}
	ac := append([]float64(nil), a...)
	names := make([]string, n)
	y0 := make([]float64, n)
	for i := range n {
		names[i] = fmt.Sprintf("y%d", i)
		y0[i] = 1
	}
	f := func(_ float64, y, _, dy []float64) {
		y = y[:n]
		dy = dy[:n]
		for i := range n {
			row := ac[i*n : i*n+n]
			var s float64
			for j, aij := range row {
				s += float64(aij * y[j]) // rounded product: no FMA on any architecture
			}
			dy[i] = s
		}
	}
	pg := linearPrograms{n: n, a: ac}
	return &LinearSystem{
		Problem: &ode.Problem{
			Name:       "linear",
			Dim:        n,
			NumParams:  0,
			F:          f,
			StateNames: names,
			Y0:         y0,
			T0:         0,
			T1:         1,
			Programs: func() *ode.Programs {
				return &ode.Programs{F: f, JVP: pg.jvp, VJP: pg.vjp, JacY: pg.jacY, DfDt: zeroDfDt}
			},
			Offers: builtinPrograms,
		},
		n: n,
		a: ac,
	}, nil
}

// linearPrograms holds the derivative programs of Linear: y' = A·y has
// J_y = A and no parameters. A is the read-only copy that F reads, so
// the programs are safe for concurrent use.
type linearPrograms struct {
	n int
	a []float64 // row-major n×n, never written
}

// jvp writes J_y·v = A·v into out (w is empty: there are no parameters),
// out_i = Σ_j a_ij·v_j, summed in the order F sums A·y.
func (lp linearPrograms) jvp(_ float64, _, _, v, _, out []float64) {
	n := lp.n
	v, out = v[:n], out[:n]
	for i := range n {
		row := lp.a[i*n : i*n+n]
		var s float64
		for j, aij := range row {
			s += float64(aij * v[j]) // rounded product: no FMA on any architecture
		}
		out[i] = s
	}
}

// vjp writes uᵀJ_y = uᵀA into gy, gy_j = Σ_i u_i·a_ij (accumulated row
// by row, so A is read in storage order); gp has length 0.
func (lp linearPrograms) vjp(_ float64, _, _, u, gy, _ []float64) {
	n := lp.n
	u, gy = u[:n], gy[:n]
	clear(gy)
	for i := range n {
		row := lp.a[i*n : i*n+n]
		ui := u[i]
		for j, aij := range row {
			gy[j] += float64(ui * aij)
		}
	}
}

// jacY writes J_y = A row-major into jac.
func (lp linearPrograms) jacY(_ float64, _, _, jac []float64) {
	copy(jac[:lp.n*lp.n], lp.a)
}

// linearDefaultA is the matrix of LinearDefault, row-major.
var linearDefaultA = [16]float64{
	-0.5, 2.0, 1.0, 0.0,
	-2.0, -0.5, 0.0, 0.5,
	0.0, 0.0, -1.0, 1.5,
	0.0, 0.0, 0.0, 0.3,
}

// LinearDefault returns the 4×4 linear system y' = A·y with
//
//	    ⎡ −0.5   2.0   1.0   0.0 ⎤
//	A = ⎢ −2.0  −0.5   0.0   0.5 ⎥
//	    ⎢  0.0   0.0  −1.0   1.5 ⎥
//	    ⎣  0.0   0.0   0.0   0.3 ⎦
//
// A is block upper triangular, so its eigenvalues are those of the
// diagonal blocks: −0.5 ± 2i (a damped rotation), −1 and 0.3 (one growing
// mode). The off-diagonal entries (1.5 inside the lower block and the
// coupling 1.0, 0.5 between the blocks) make A non-normal, so ‖exp(tA)‖
// is not set by the eigenvalues alone. Default initial state (1, 1, 1, 1),
// default span [0, 1]; see Linear.
func LinearDefault() *LinearSystem {
	ls, err := Linear(linearDefaultA[:], 4)
	if err != nil {
		// The matrix is a finite 4×4 constant.
		panic("systems: internal error: LinearDefault: " + err.Error())
	}
	return ls
}

// Dim returns n, the size of A.
func (ls *LinearSystem) Dim() int { return ls.n }

// Matrix returns a copy of A, n×n row-major.
func (ls *LinearSystem) Matrix() []float64 { return append([]float64(nil), ls.a...) }

// Exact writes into dst the exact solution at time t of y' = A·y from the
// state y0 at time t0:
//
//	y(t) = exp((t − t0)·A)·y0.
//
// For a system from Linear or LinearDefault the matrix exponential is
// computed with gonum's mat.Dense.Exp (Padé approximation with scaling
// and squaring, Higham, Functions of Matrices, SIAM 2008, Algorithm
// 10.20, doi:10.1137/1.9780898717778). For one from LinearStiff it is
// the eigen-decomposition A = V·diag(λ)·Vᵀ the system was built from:
//
//	y(t) = V·diag(e^{λ_k·(t − t0)})·Vᵀ·y0,
//
// exact up to the rounding of V, of each exponential and of the two
// products (a few eps relative to |Vᵀ·y0|), however stiff A is. For
// t < t0 the fast modes grow like e^{|λ|·(t0 − t)} and overflow (to ±Inf
// or NaN) once |λ|·(t0 − t) exceeds about 709.
//
// At t == t0 dst is an exact copy of y0. dst may alias y0. Exact
// allocates; it is meant for tests and error measurement, not inner
// loops.
//
// If len(y0) or len(dst) differs from n, or t0 or t is not finite, every
// element of dst is set to NaN (it does not panic).
func (ls *LinearSystem) Exact(t0 float64, y0 []float64, t float64, dst []float64) {
	n := ls.n
	if len(y0) != n || len(dst) != n || !isFinite(t0) || !isFinite(t) {
		for i := range dst {
			dst[i] = math.NaN()
		}
		return
	}
	if t == t0 {
		copy(dst, y0)
		return
	}
	h := t - t0
	if ls.v != nil {
		ls.exactEigen(h, y0, dst)
		return
	}
	ha := make([]float64, n*n)
	for k, v := range ls.a {
		ha[k] = h * v
	}
	var e mat.Dense
	e.Exp(mat.NewDense(n, n, ha))
	var out mat.VecDense
	out.MulVec(&e, mat.NewVecDense(n, append([]float64(nil), y0...)))
	for i := range n {
		dst[i] = out.AtVec(i)
	}
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
