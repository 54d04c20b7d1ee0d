package systems_test

import (
	"fmt"

	"github.com/gradsolve/gradsolve/systems"
)

func ExampleLorenz() {
	pr := systems.Lorenz()
	fmt.Println(pr.Name, pr.StateNames, pr.ParamNames)
	fmt.Printf("p = %.4g, y0 = %g, t ∈ [%g, %g]\n", pr.P, pr.Y0, pr.T0, pr.T1)

	dy := make([]float64, pr.Dim)
	pr.F(pr.T0, pr.Y0, pr.P, dy)
	fmt.Printf("f(t0, y0, p) = %g\n", dy)
	// Output:
	// lorenz [x y z] [sigma rho beta]
	// p = [10 28 2.667], y0 = [1 0 0], t ∈ [0, 1]
	// f(t0, y0, p) = [-10 28 0]
}
