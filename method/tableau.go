package method

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// ErrorKind says how a tableau's error weights combine into one scaled
// error norm.
type ErrorKind int

const (
	// ErrorRMS is the usual estimate: the weighted RMS norm of
	// h·Σ e_i·k_i.
	ErrorRMS ErrorKind = iota
	// ErrorDOP853 is Hairer's combined estimate of DOP853 (Hairer,
	// Nørsett & Wanner I, §II.10, and dop853.f): with the scaled sums
	//
	//	Σ₅ = Σ_j (h·Σ_i E_i·k_ij / sc_j)²,  Σ₃ = Σ_j (h·Σ_i E3_i·k_ij / sc_j)²,
	//
	// the norm is Σ₅ / sqrt(N·(Σ₅ + 0.01·Σ₃)). It behaves like an error of
	// order 8 and lets the step grow beyond what the 5th-order estimate
	// alone would allow.
	ErrorDOP853
)

// Tableau is an explicit embedded Runge–Kutta method. The zero value is
// not usable; build one with its fields and call Validate.
type Tableau struct {
	// Name is the method's published name ("Tsit5", "DP5", ...).
	Name string
	// Source cites where the coefficients come from, with a DOI or URL.
	Source string
	// Order is the order of the solution weights B.
	Order int
	// ErrOrder is the order of the embedded solution b̂ = B − E.
	ErrOrder int
	// C holds the nodes c_i, one per stage; C[0] must be 0.
	C []float64
	// A holds the strictly lower-triangular coefficients row by row:
	// A[i] has length i and A[i][j] = a_ij (0-based).
	A [][]float64
	// B holds the solution weights b_i.
	B []float64
	// E holds the error weights e_i = b_i − b̂_i (not b̂ itself).
	E []float64
	// E3 holds the second error row of ErrorDOP853 (b − b̂₃); nil otherwise.
	E3 []float64
	// Kind selects how E (and E3) form the error norm.
	Kind ErrorKind
	// QMin and QMax bound the step-size ratio h_new/h that the method's
	// authors recommend for its controller. Zero means the controller's
	// own defaults (0.2 and 10).
	QMin, QMax float64
}

// Stages returns the number of stages s.
func (tb *Tableau) Stages() int { return len(tb.C) }

// FSAL reports whether the method is first-same-as-last: the last stage
// is evaluated at (t+h, y₁), so that it equals the first stage of the next
// step. That holds when c_s = 1, the last row of A equals B and b_s = 0.
// It is derived from the coefficients, never trusted from a flag.
func (tb *Tableau) FSAL() bool {
	s := len(tb.C)
	if s < 2 || tb.C[s-1] != 1 || tb.B[s-1] != 0 || len(tb.A) != s {
		return false
	}
	for j, a := range tb.A[s-1] {
		if a != tb.B[j] {
			return false
		}
	}
	return true
}

// rowSumTol bounds |Σ_j a_ij − c_i| and |Σ b_i − 1| for a valid tableau:
// coefficients are float64 roundings of the published values, whose
// magnitudes stay below 100, so sums carry errors of a few hundred ulps
// at most.
const rowSumTol = 1e-12

// Validate checks the shapes and the simplest consistency conditions of
// the tableau: C[0] = 0, each row of A sums to its node, B sums to 1, E
// sums to 0 (and E3 too), orders are positive with ErrOrder < Order, and
// every coefficient is finite. It returns an error naming the first rule
// broken. The full order conditions are checked by this package's tests.
func (tb *Tableau) Validate() error {
	if tb == nil {
		return errors.New("method: nil tableau")
	}
	s := len(tb.C)
	name := tb.Name
	if name == "" {
		name = "unnamed tableau"
	}
	if s < 2 {
		return fmt.Errorf("method: %s: %d stages: need at least 2", name, s)
	}
	if len(tb.A) != s || len(tb.B) != s || len(tb.E) != s {
		return fmt.Errorf("method: %s: len(A) = %d, len(B) = %d, len(E) = %d: each must equal len(C) = %d",
			name, len(tb.A), len(tb.B), len(tb.E), s)
	}
	if tb.Kind == ErrorDOP853 && len(tb.E3) != s {
		return fmt.Errorf("method: %s: ErrorDOP853 needs len(E3) = %d, have %d", name, s, len(tb.E3))
	}
	if tb.Kind != ErrorDOP853 && tb.Kind != ErrorRMS {
		return fmt.Errorf("method: %s: unknown error kind %d", name, tb.Kind)
	}
	if tb.Order < 1 || tb.ErrOrder < 1 || tb.ErrOrder >= tb.Order {
		return fmt.Errorf("method: %s: Order = %d, ErrOrder = %d: need 1 ≤ ErrOrder < Order", name, tb.Order, tb.ErrOrder)
	}
	if tb.C[0] != 0 {
		return fmt.Errorf("method: %s: C[0] = %g: must be 0 for an explicit method", name, tb.C[0])
	}
	for i := range s {
		if len(tb.A[i]) != i {
			return fmt.Errorf("method: %s: len(A[%d]) = %d: must be %d (strictly lower triangular)", name, i, len(tb.A[i]), i)
		}
		sum := 0.0
		for j, a := range tb.A[i] {
			if !finite(a) {
				return fmt.Errorf("method: %s: A[%d][%d] = %g is not finite", name, i, j, a)
			}
			sum += a
		}
		if !finite(tb.C[i]) || math.Abs(sum-tb.C[i]) > rowSumTol {
			return fmt.Errorf("method: %s: row %d of A sums to %.17g, node C[%d] = %.17g", name, i, sum, i, tb.C[i])
		}
	}
	if err := checkSum(name, "B", tb.B, 1); err != nil {
		return err
	}
	if err := checkSum(name, "E", tb.E, 0); err != nil {
		return err
	}
	if tb.E3 != nil {
		if err := checkSum(name, "E3", tb.E3, 0); err != nil {
			return err
		}
	}
	if tb.QMin < 0 || tb.QMax < 0 || (tb.QMin > 0 && tb.QMin >= 1) || (tb.QMax > 0 && tb.QMax <= 1) {
		return fmt.Errorf("method: %s: QMin = %g, QMax = %g: need 0 < QMin < 1 < QMax (or zero for defaults)", name, tb.QMin, tb.QMax)
	}
	return nil
}

func checkSum(name, row string, v []float64, want float64) error {
	sum := 0.0
	for i, x := range v {
		if !finite(x) {
			return fmt.Errorf("method: %s: %s[%d] = %g is not finite", name, row, i, x)
		}
		sum += x
	}
	if math.Abs(sum-want) > rowSumTol {
		return fmt.Errorf("method: %s: %s sums to %.17g, want %g", name, row, sum, want)
	}
	return nil
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// All returns the built-in tableaus in a fixed order: Tsit5, DP5, Vern7, DP8.
func All() []*Tableau { return []*Tableau{Tsit5, DP5, Vern7, DP8} }

// ByName returns the built-in tableau with the given name, compared
// case-insensitively ("tsit5", "dp5", "vern7", "dp8").
func ByName(name string) (*Tableau, error) {
	for _, tb := range All() {
		if strings.EqualFold(tb.Name, name) {
			return tb, nil
		}
	}
	return nil, fmt.Errorf("method: unknown method %q: known methods are tsit5, dp5, vern7, dp8", name)
}
