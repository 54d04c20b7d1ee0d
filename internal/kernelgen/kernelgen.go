// Package kernelgen holds what the generated step kernels of packages
// erk and ros share with their generators (gen_kernels.go): the list of
// coefficients a kernel is generated from, which the engines compare
// with a tableau before they use the kernel, and the writing of exact
// float64 literals.
package kernelgen

import (
	"fmt"
	"go/format"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/gradsolve/gradsolve/method"
)

// Explicit lists every coefficient of an explicit tableau: C, the rows
// of A, B, E and E3.
func Explicit(tb *method.Tableau) []float64 {
	v := append([]float64(nil), tb.C...)
	for _, row := range tb.A {
		v = append(v, row...)
	}
	v = append(v, tb.B...)
	v = append(v, tb.E...)
	return append(v, tb.E3...)
}

// Rosenbrock lists every coefficient a Rosenbrock kernel uses: γ, C,
// the rows of Alpha and GammaOff, D and M.
func Rosenbrock(r *method.Rosenbrock) []float64 {
	v := append([]float64{r.Gamma}, r.C...)
	for _, row := range r.Alpha {
		v = append(v, row...)
	}
	for _, row := range r.GammaOff {
		v = append(v, row...)
	}
	v = append(v, r.D...)
	return append(v, r.M...)
}

// Same reports whether a and b hold the same values bit for bit.
func Same(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// Lit returns a Go literal of type float64 that parses back to x
// exactly (x finite), in parentheses when negative so that it can stand
// as an operand.
func Lit(x float64) string {
	s := strconv.FormatFloat(x, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	if math.Signbit(x) {
		s = "(" + s + ")"
	}
	return s
}

// Floats returns a []float64 composite literal of v.
func Floats(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = Lit(x)
	}
	return "[]float64{" + strings.Join(s, ", ") + "}"
}

// WriteGo formats the Go source src and writes it to path.
func WriteGo(path string, src []byte) error {
	out, err := format.Source(src)
	if err != nil {
		return fmt.Errorf("generated source does not parse: %w\n%s", err, src)
	}
	return os.WriteFile(path, out, 0o644)
}
