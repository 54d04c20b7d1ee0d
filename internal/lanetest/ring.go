package lanetest

import (
	"fmt"
	"strings"
)

// StiffRing returns a stiff ring of n states (n even) as a problem file
// named name, with span [0, t1]: a forcing e·cos(10t); pairs of an even
// component relaxing at rate a and an odd one driven at 3a and decaying
// at 4a (so that, once hγa > 1/2, W's column of an even component has
// its largest entry in the next row and the LU exchanges rows);
// quadratic couplings (so that a sensitivity column's M_c depends on
// the column); and a weighted mean m of the states in every equation
// (so that J's rows are full, and the order of a row's sum shows in its
// bits). f_t ≠ 0, and so is ∂_t of the tangent for the column ∂/∂e.
func StiffRing(name string, n int, t1 float64) string {
	var src strings.Builder
	fmt.Fprintf(&src, "name %s\nparam e = 1, a = 1000, c = 2\n", name)
	for i := range n {
		fmt.Fprintf(&src, "state x%d = %g\n", i, 1-0.03*float64(i))
	}
	fmt.Fprintf(&src, "span 0 %g\nlet m = (x0", t1)
	for i := 1; i < n; i++ {
		fmt.Fprintf(&src, " + %g*x%d", 1-0.05*float64(i), i)
	}
	fmt.Fprintf(&src, ")/%d\n", n)
	fmt.Fprintf(&src, "x0' = a*(0.5*x%d - x0) + e*cos(10*t) - c*m*x0\n", n-1)
	for i := 1; i < n; i++ {
		if i%2 == 0 {
			fmt.Fprintf(&src, "x%d' = a*(x%d - x%d) + c*x%d*x%d - c*m*x%d\n", i, i-1, i, i-1, i-1, i)
		} else {
			fmt.Fprintf(&src, "x%d' = 3*a*x%d - 4*a*x%d - c*x%d*x%d - c*m*x%d\n", i, i-1, i, i, i-1, i)
		}
	}
	return src.String()
}
