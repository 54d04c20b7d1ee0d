package kernelgen

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// Lit parses back to the same float64, negative ones in parentheses.
func TestLit(t *testing.T) {
	for _, x := range []float64{0, 1, -1, 0.161, -0.008480655492356989, 1e-300, 5e-324, -2.5e17, 3, math.Copysign(0, -1)} {
		s := Lit(x)
		if math.Signbit(x) != strings.HasPrefix(s, "(") {
			t.Errorf("Lit(%v) = %s: parentheses only around negatives", x, s)
		}
		y, err := strconv.ParseFloat(strings.Trim(s, "()"), 64)
		if err != nil || math.Float64bits(y) != math.Float64bits(x) {
			t.Errorf("Lit(%v) = %s parses to %v, %v", x, s, y, err)
		}
	}
}

// Same compares bits: −0 and +0 differ, lengths must agree.
func TestSame(t *testing.T) {
	cases := []struct {
		a, b []float64
		want bool
	}{
		{[]float64{1, 2}, []float64{1, 2}, true},
		{[]float64{1, 2}, []float64{1, math.Nextafter(2, 3)}, false},
		{[]float64{0}, []float64{math.Copysign(0, -1)}, false},
		{[]float64{1}, []float64{1, 0}, false},
		{nil, []float64{}, true},
	}
	for _, c := range cases {
		if got := Same(c.a, c.b); got != c.want {
			t.Errorf("Same(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
