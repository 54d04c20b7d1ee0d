package method

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
)

// Rosenbrock is a linearly implicit Rosenbrock (Rosenbrock–Wanner, ROW)
// method with an embedded error estimate, in the increment form that the
// stepper uses. With J = ∂f/∂y(t, y) and f_t = ∂f/∂t(t, y), both taken
// once per step at its start, and the stage increments K_1..K_s, a step
// of size h from (t, y) is
//
//	(I − h·γ·J)·K_i = h·f(t + c_i·h, y + Σ_{j<i} α_ij·K_j)
//	                  + h·J·Σ_{j<i} Γ_ij·K_j + h²·d_i·f_t,   i = 1..s,
//	y_new = y + Σ_i m_i·K_i,      err = Σ_i e_i·K_i.
//
// One matrix W = I − h·γ·J serves all stages. This is the form (7.4) of
// Hairer & Wanner, Solving Ordinary Differential Equations II, 2nd ed.,
// Springer 1996, §IV.7 (doi:10.1007/978-3-642-05221-7), with their
// k_i = K_i, α_ij = Alpha, γ_ij = GammaOff (j < i), γ_ii = γ = Gamma,
// b_i = M, α_i = C and γ_i = D. A method that is consistent for
// non-autonomous problems has, as HW (7.4') require,
//
//	c_i = Σ_{j<i} α_ij,    d_i = γ + Σ_{j<i} Γ_ij,
//
// which Validate checks. The error weights are stored directly as
// e = m − m̂, where m̂ are the weights of the embedded solution ŷ; the
// error vector err = y_new − ŷ already contains h (the K_i do).
//
// Methods published in the transformed "a/C" form of HW (7.25), which
// avoids the matrix–vector products with J, are converted with
// RosenbrockAC.Increment.
//
// The zero value is not usable; build one with its fields and call
// Validate. The built-in methods Rosenbrock23 and Rodas5P are shared by
// every solve; treat them as read-only.
type Rosenbrock struct {
	// Name is the method's published name ("Rosenbrock23", "Rodas5P").
	Name string
	// Source cites where the coefficients come from, with a DOI.
	Source string
	// Order is the order of the solution weights M (with the exact J).
	Order int
	// ErrOrder is the order of the embedded solution m̂ = M − E. It may
	// be above Order (Rosenbrock23: 2 and 3) or below it (Rodas5P: 5 and
	// 4); EstimateOrder gives the order of the error estimate itself.
	ErrOrder int
	// Gamma is γ, the diagonal coefficient: W = I − h·γ·J. Must be > 0.
	Gamma float64
	// C holds the nodes c_i, one per stage; stage i evaluates f at
	// t + c_i·h. C[0] must be 0.
	C []float64
	// Alpha holds α_ij row by row, strictly lower triangular: Alpha[i]
	// has length i (0-based), so Alpha[0] is empty.
	Alpha [][]float64
	// GammaOff holds the off-diagonal Γ_ij (j < i) row by row, like
	// Alpha; the diagonal Γ_ii = Gamma is not stored.
	GammaOff [][]float64
	// D holds d_i, the coefficient of h²·f_t in stage i.
	D []float64
	// M holds the solution weights m_i.
	M []float64
	// E holds the error weights e_i = m_i − m̂_i (not m̂ itself).
	E []float64
	// Dense holds the weights of the continuous extension in the
	// increment form, or nil if the method has none. When set it has
	// exactly 3 rows of length s, and with D_r = Σ_i Dense[r][i]·K_i
	//
	//	y(t + θ·h) ≈ (1 − θ)·y + θ·(y_new + (1 − θ)·(D_1 + θ·(D_2 + θ·D_3))),  0 ≤ θ ≤ 1,
	//
	// which gives y at θ = 0 and y_new at θ = 1 exactly. Each row sums
	// to zero (a linear solution is interpolated exactly).
	Dense [][]float64
	// QMin and QMax bound the step-size ratio h_new/h that the method's
	// authors recommend for its controller. Zero means the controller's
	// own defaults.
	QMin, QMax float64
}

// Stages returns the number of stages s.
func (r *Rosenbrock) Stages() int { return len(r.C) }

// EstimateOrder returns q + 1 where q = min(Order, ErrOrder): the error
// estimate Σ e_i·K_i behaves like h^(q+1) as h → 0, so an I-controller
// uses the exponent 1/(q+1) (Rosenbrock23: 1/3, Rodas5P: 1/5).
func (r *Rosenbrock) EstimateOrder() int { return min(r.Order, r.ErrOrder) + 1 }

// FSAL reports whether the last stage evaluates f at (t + h, y_new), so
// that an accepted step hands f(t + h, y_new) to the next step's first
// stage (which needs f at its own start) without a new evaluation. That
// holds when c_s = 1 and the last stage's input y + Σ_{j<s} α_sj·K_j is
// y_new for every problem: α_sj = m_j for j < s and m_s = 0. Only f is
// shared; J and f_t must still be evaluated at the new point. It is
// derived from the coefficients, never trusted from a flag.
func (r *Rosenbrock) FSAL() bool {
	s := len(r.C)
	if s < 2 || len(r.M) != s || len(r.Alpha) != s || r.C[s-1] != 1 || r.M[s-1] != 0 {
		return false
	}
	for j, a := range r.Alpha[s-1] {
		if a != r.M[j] {
			return false
		}
	}
	return true
}

// StifflyAccurate reports whether y_new equals the last stage's input
// plus its own linear correction for every problem: with β_ij = α_ij +
// Γ_ij,
//
//	m_j = β_sj (j < s)   and   m_s = γ,
//
// so that y_new = y + Σ_{j<s} α_sj·K_j + (Σ_{j<s} Γ_sj·K_j + γ·K_s): the
// last stage's input plus its own transformed stage, as in the
// construction of RODAS in Hairer & Wanner II, §IV.7 (in the a/C form:
// b_j = a_sj, b_s = 1). Such a method has R(∞) = 0 (for y' = λy the last
// transformed stage tends to minus the last stage input as hλ → −∞),
// and on index-1 problems its solution satisfies the algebraic part. The
// float64 sums are compared with a tolerance of 1e-12 (each is a sum of
// two rounded coefficients of size below 100).
func (r *Rosenbrock) StifflyAccurate() bool {
	s := len(r.C)
	if s < 1 || len(r.M) != s || len(r.Alpha) != s || len(r.GammaOff) != s ||
		len(r.Alpha[s-1]) != s-1 || len(r.GammaOff[s-1]) != s-1 {
		return false
	}
	const tol = 1e-12
	for j := range s - 1 {
		if math.Abs(r.M[j]-(r.Alpha[s-1][j]+r.GammaOff[s-1][j])) > tol {
			return false
		}
	}
	return math.Abs(r.M[s-1]-r.Gamma) <= tol
}

// rosSumTol bounds the consistency residuals that Validate accepts for a
// Rosenbrock method: |Σ_j α_ij − c_i|, |γ + Σ_j Γ_ij − d_i|, |Σ m − 1|,
// |Σ e| and the row sums of Dense. Coefficients converted from the
// transformed a/C form pass through Γ = (I/γ − C)⁻¹ (cond(Γ⁻¹) ≈ 2.6e3
// for Rodas5P), so the float64 roundings of the published 16–17 digit
// data, about 1e-16 relative, come out amplified; Rodas5P's largest
// residual is 6.2e-15 (Σ m − 1). 1e-11, the bound the JAX reference
// checks (gradsolve-jax.md §2.5), leaves room for other published
// tableaus with fewer digits while still catching a coefficient wrong in
// its 11th digit.
const rosSumTol = 1e-11

// Validate checks the shapes and the consistency conditions of the
// method: at least one stage, every row of the right length, every
// coefficient finite, γ > 0, C[0] = 0, c_i = Σ_j α_ij, d_i = γ + Σ_j Γ_ij
// (so that the method is as accurate on non-autonomous problems as on
// autonomous ones), Σ m = 1, Σ e = 0 (e ≠ 0), Dense rows of zero sum,
// orders ≥ 1 with ErrOrder ≠ Order, and 0 < QMin < 1 < QMax where set.
// Sums are compared to within rosSumTol. It returns an error naming the
// first rule broken; the order conditions themselves are checked by this
// package's tests.
func (r *Rosenbrock) Validate() error {
	if r == nil {
		return errors.New("method: nil Rosenbrock method")
	}
	s := len(r.C)
	name := r.Name
	if name == "" {
		name = "unnamed Rosenbrock method"
	}
	if s < 1 {
		return fmt.Errorf("method: %s: %d stages: need at least 1", name, s)
	}
	if len(r.Alpha) != s || len(r.GammaOff) != s || len(r.D) != s || len(r.M) != s || len(r.E) != s {
		return fmt.Errorf("method: %s: len(Alpha) = %d, len(GammaOff) = %d, len(D) = %d, len(M) = %d, len(E) = %d: each must equal len(C) = %d",
			name, len(r.Alpha), len(r.GammaOff), len(r.D), len(r.M), len(r.E), s)
	}
	if r.Order < 1 || r.ErrOrder < 1 || r.ErrOrder == r.Order {
		return fmt.Errorf("method: %s: Order = %d, ErrOrder = %d: need both ≥ 1 and different", name, r.Order, r.ErrOrder)
	}
	if !finite(r.Gamma) || !(r.Gamma > 0) {
		return fmt.Errorf("method: %s: Gamma = %g: must be finite and > 0", name, r.Gamma)
	}
	if r.C[0] != 0 {
		return fmt.Errorf("method: %s: C[0] = %g: must be 0", name, r.C[0])
	}
	for i := range s {
		if len(r.Alpha[i]) != i || len(r.GammaOff[i]) != i {
			return fmt.Errorf("method: %s: len(Alpha[%d]) = %d, len(GammaOff[%d]) = %d: both must be %d (strictly lower triangular)",
				name, i, len(r.Alpha[i]), i, len(r.GammaOff[i]), i)
		}
		if !finite(r.C[i]) || !finite(r.D[i]) {
			return fmt.Errorf("method: %s: C[%d] = %g, D[%d] = %g: must be finite", name, i, r.C[i], i, r.D[i])
		}
		sa, sg := 0.0, r.Gamma
		for j := range i {
			a, g := r.Alpha[i][j], r.GammaOff[i][j]
			if !finite(a) || !finite(g) {
				return fmt.Errorf("method: %s: Alpha[%d][%d] = %g, GammaOff[%d][%d] = %g: must be finite", name, i, j, a, i, j, g)
			}
			sa += a
			sg += g
		}
		if math.Abs(sa-r.C[i]) > rosSumTol {
			return fmt.Errorf("method: %s: row %d of Alpha sums to %.17g, node C[%d] = %.17g", name, i, sa, i, r.C[i])
		}
		if math.Abs(sg-r.D[i]) > rosSumTol {
			return fmt.Errorf("method: %s: γ + row %d of GammaOff sums to %.17g, D[%d] = %.17g", name, i, sg, i, r.D[i])
		}
	}
	if err := checkSumTol(name, "M", r.M, 1, rosSumTol); err != nil {
		return err
	}
	if err := checkSumTol(name, "E", r.E, 0, rosSumTol); err != nil {
		return err
	}
	nonzero := false
	for _, e := range r.E {
		nonzero = nonzero || e != 0
	}
	if !nonzero {
		return fmt.Errorf("method: %s: E is zero: the method has no error estimate", name)
	}
	if r.Dense != nil {
		if len(r.Dense) != 3 {
			return fmt.Errorf("method: %s: Dense has %d rows: must be nil or 3", name, len(r.Dense))
		}
		for k, row := range r.Dense {
			if len(row) != s {
				return fmt.Errorf("method: %s: len(Dense[%d]) = %d: must be %d", name, k, len(row), s)
			}
			if err := checkSumTol(name, fmt.Sprintf("Dense[%d]", k), row, 0, rosSumTol); err != nil {
				return err
			}
		}
	}
	if r.QMin < 0 || r.QMax < 0 || (r.QMin > 0 && r.QMin >= 1) || (r.QMax > 0 && r.QMax <= 1) {
		return fmt.Errorf("method: %s: QMin = %g, QMax = %g: need 0 < QMin < 1 < QMax (or zero for defaults)", name, r.QMin, r.QMax)
	}
	return nil
}

func checkSumTol(name, row string, v []float64, want, tol float64) error {
	sum := 0.0
	for i, x := range v {
		if !finite(x) {
			return fmt.Errorf("method: %s: %s[%d] = %g is not finite", name, row, i, x)
		}
		sum += x
	}
	if math.Abs(sum-want) > tol {
		return fmt.Errorf("method: %s: %s sums to %.17g, want %g", name, row, sum, want)
	}
	return nil
}

// AllRosenbrock returns the built-in Rosenbrock methods in a fixed order:
// Rosenbrock23, Rodas5P.
func AllRosenbrock() []*Rosenbrock { return []*Rosenbrock{Rosenbrock23, Rodas5P} }

// RosenbrockByName returns the built-in Rosenbrock method with the given
// name, compared case-insensitively ("rosenbrock23", "rodas5p").
func RosenbrockByName(name string) (*Rosenbrock, error) {
	for _, r := range AllRosenbrock() {
		if strings.EqualFold(r.Name, name) {
			return r, nil
		}
	}
	return nil, fmt.Errorf("method: unknown Rosenbrock method %q: known Rosenbrock methods are rosenbrock23, rodas5p", name)
}

// RosenbrockAC is a Rosenbrock method in the transformed form of Hairer
// & Wanner II, §IV.7, (7.25)–(7.26), in which most Rodas-type methods
// are published (and in which OrdinaryDiffEq.jl stores them): with the
// transformed stages U_i,
//
//	(I/(h·γ) − J)·U_i = f(t + c_i·h, y + Σ_{j<i} a_ij·U_j) + Σ_{j<i} (c_ij/h)·U_j + h·d_i·f_t,
//	y_new = y + Σ_i b_i·U_i,      err = Σ_i b̃_i·U_i,
//
// and, for a dense output, D_r = Σ_i H_ri·U_i in the formula of
// Rosenbrock.Dense. Here a_ij is A, c_ij is CMat, c_i is C, d_i is D, b
// is B (HW's m), b̃ is BTilde and H is H.
//
// The two forms are related by U = Γ·K stage-wise, U_i = Σ_{j≤i} Γ_ij·K_j,
// where Γ is the lower-triangular matrix with γ on its diagonal and
// Γ_ij below it. Substituting K = Γ⁻¹·U in the increment form
// (I − h·γ·J)·K_i = h·f(…) + h·J·Σ_{j<i} Γ_ij·K_j + h²·d_i·f_t gives
// K_i = h·f(…) + h·J·U_i + h²·d_i·f_t; dividing by h and writing
// Γ⁻¹ = I/γ − CMat gives the transformed form above, with
//
//	Γ = (I/γ − CMat)⁻¹,   α = A·Γ,   m = B·Γ,   e = BTilde·Γ,   Dense = H·Γ,
//
// and C and D unchanged. The error weights follow because err = Σ b̃_i·U_i
// = Σ (b̃·Γ)_j·K_j, so e = m − m̂ with m̂ = (B − BTilde)·Γ.
type RosenbrockAC struct {
	Name, Source    string
	Order, ErrOrder int
	Gamma           float64
	// C holds the nodes c_i; D the coefficients d_i of h·f_t.
	C, D []float64
	// A and CMat are strictly lower triangular, row i of length i.
	A, CMat [][]float64
	// B and BTilde are the solution and error weights of the U_i.
	B, BTilde []float64
	// H is the dense output on the U_i: nil or 3 rows of length s.
	H [][]float64
	// QMin and QMax carry over unchanged.
	QMin, QMax float64
}

// acPrec is the working precision of RosenbrockAC.Increment in bits:
// enough that the conversion, whose matrices have condition numbers of a
// few thousand, returns the float64 values nearest to the exact
// transformation of the stored float64 coefficients.
const acPrec = 256

// Increment converts the method to the increment form and validates the
// result. The arithmetic is done in math/big at acPrec bits and each
// coefficient is rounded to float64 once at the end, so the result does
// not depend on the order of float64 operations (and is the same on
// every platform). It returns an error if a row has the wrong length, a
// coefficient is not finite, γ ≤ 0, or the converted method fails
// Validate.
func (w *RosenbrockAC) Increment() (*Rosenbrock, error) {
	if w == nil {
		return nil, errors.New("method: nil RosenbrockAC")
	}
	s := len(w.C)
	name := w.Name
	if name == "" {
		name = "unnamed Rosenbrock method"
	}
	if s < 1 || len(w.D) != s || len(w.A) != s || len(w.CMat) != s || len(w.B) != s || len(w.BTilde) != s {
		return nil, fmt.Errorf("method: %s (a/C form): len(C) = %d, len(D) = %d, len(A) = %d, len(CMat) = %d, len(B) = %d, len(BTilde) = %d: need s ≥ 1 of each",
			name, s, len(w.D), len(w.A), len(w.CMat), len(w.B), len(w.BTilde))
	}
	if !finite(w.Gamma) || !(w.Gamma > 0) {
		return nil, fmt.Errorf("method: %s (a/C form): Gamma = %g: must be finite and > 0", name, w.Gamma)
	}
	for i := range s {
		if len(w.A[i]) != i || len(w.CMat[i]) != i {
			return nil, fmt.Errorf("method: %s (a/C form): len(A[%d]) = %d, len(CMat[%d]) = %d: both must be %d", name, i, len(w.A[i]), i, len(w.CMat[i]), i)
		}
		for j := range i {
			if !finite(w.A[i][j]) || !finite(w.CMat[i][j]) {
				return nil, fmt.Errorf("method: %s (a/C form): A[%d][%d] = %g, CMat[%d][%d] = %g: must be finite", name, i, j, w.A[i][j], i, j, w.CMat[i][j])
			}
		}
	}
	if w.H != nil {
		for k, row := range w.H {
			if len(row) != s {
				return nil, fmt.Errorf("method: %s (a/C form): len(H[%d]) = %d: must be %d", name, k, len(row), s)
			}
		}
	}
	for _, v := range [][]float64{w.B, w.BTilde} {
		for _, x := range v {
			if !finite(x) {
				return nil, fmt.Errorf("method: %s (a/C form): weight %g is not finite", name, x)
			}
		}
	}

	bigf := func(x float64) *big.Float { return new(big.Float).SetPrec(acPrec).SetFloat64(x) }
	zero := func() *big.Float { return new(big.Float).SetPrec(acPrec) }
	// L = Γ⁻¹ = I/γ − CMat, lower triangular with diagonal 1/γ. Γ = L⁻¹
	// by forward substitution, column by column: for i > j,
	// Γ_ij = γ·Σ_{j≤k<i} CMat_ik·Γ_kj (from Σ_k L_ik·Γ_kj = 0).
	g := bigf(w.Gamma)
	G := make([][]*big.Float, s) // G[i][j] = Γ_ij for j ≤ i
	for i := range s {
		G[i] = make([]*big.Float, i+1)
		G[i][i] = bigf(w.Gamma)
		for j := range i {
			sum := zero()
			for k := j; k < i; k++ {
				sum.Add(sum, zero().Mul(bigf(w.CMat[i][k]), G[k][j]))
			}
			G[i][j] = sum.Mul(sum, g)
		}
	}
	// rowTimesGamma returns (v·Γ)_j = Σ_{k≥j} v_k·Γ_kj for j < n, using
	// the first n entries of v.
	rowTimesGamma := func(v []float64, n int) []float64 {
		out := make([]float64, n)
		for j := range n {
			sum := zero()
			for k := j; k < len(v); k++ {
				sum.Add(sum, zero().Mul(bigf(v[k]), G[k][j]))
			}
			out[j], _ = sum.Float64()
		}
		return out
	}
	r := &Rosenbrock{
		Name: w.Name, Source: w.Source, Order: w.Order, ErrOrder: w.ErrOrder,
		Gamma: w.Gamma,
		C:     append([]float64(nil), w.C...),
		D:     append([]float64(nil), w.D...),
		Alpha: make([][]float64, s), GammaOff: make([][]float64, s),
		M:    rowTimesGamma(w.B, s),
		E:    rowTimesGamma(w.BTilde, s),
		QMin: w.QMin, QMax: w.QMax,
	}
	for i := range s {
		// Row i of α = A·Γ: Σ_{j≤k<i} A_ik·Γ_kj, strictly lower.
		r.Alpha[i] = rowTimesGamma(w.A[i], i)
		r.GammaOff[i] = make([]float64, i)
		for j := range i {
			r.GammaOff[i][j], _ = G[i][j].Float64()
		}
	}
	if w.H != nil {
		r.Dense = make([][]float64, len(w.H))
		for k, row := range w.H {
			r.Dense[k] = rowTimesGamma(row, s)
		}
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return r, nil
}

// mustIncrement converts a built-in a/C tableau at package
// initialisation. It panics if the stored coefficients are inconsistent,
// which the package tests rule out.
func mustIncrement(w *RosenbrockAC) *Rosenbrock {
	r, err := w.Increment()
	if err != nil {
		panic("method: built-in tableau: " + err.Error())
	}
	return r
}
