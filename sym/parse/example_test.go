package parse_test

import (
	"fmt"
	"math"

	"github.com/gradsolve/gradsolve/sym/parse"
	"github.com/gradsolve/gradsolve/sym/tape"
)

const lorenzSrc = `# Lorenz system
name lorenz
state x = 1, y = 0, z = 0
param rho = 28, sigma = 10, beta = 8/3
span 0 1
x' = sigma*(y - x)
y' = x*(rho - z) - y
z' = x*y - beta*z
`

func ExampleParse() {
	m, err := parse.Parse("lorenz.ode", []byte(lorenzSrc))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.Name, m.Dim(), m.NumParams(), m.StateNames(), m.ParamNames())
	fmt.Printf("y0 = %g, p = %.4g, t ∈ [%g, %g]\n", m.Y0(), m.P(), m.T0, m.T1)

	s, err := tape.Build(m)
	if err != nil {
		fmt.Println(err)
		return
	}
	pr := s.Problem()
	dy := make([]float64, pr.Dim)
	pr.F(pr.T0, pr.Y0, pr.P, dy)
	fmt.Printf("f(t0, y0, p) = %g\n", dy)
	// Output:
	// lorenz 3 3 [x y z] [rho sigma beta]
	// y0 = [1 0 0], p = [28 10 2.667], t ∈ [0, 1]
	// f(t0, y0, p) = [-10 28 0]
}

func ExampleParse_errors() {
	src := `state x = 1, y = 0
param k = 2
x' = k*(y - x
y' = x/0
z' = sinh(x)
`
	_, err := parse.Parse("bad.ode", []byte(src))
	fmt.Println(err)
	// Output:
	// bad.ode:3:8: unclosed "(": missing ")" before the end of the line
	// bad.ode:4:7: division by zero (the divisor is the constant 0)
	// bad.ode:5:1: derivative of unknown state z
	// bad.ode:5:6: unknown function sinh (did you mean sin?); the functions are sqrt, exp, log, sin, cos, tan, tanh, atan2, pow, abs, min, max, ifelse, sign, floor, ceil
}

// Format writes shared subexpressions as lets, and the operands of + and
// * in the graph's canonical order (which the graph chooses; a+b and b+a
// are the same float64).
func ExampleFormat() {
	src := `state x = 1, v = 0
param w = 2
let w2 = w*w
x' = v
v' = -w2*x - 0.1*v + sin(t)/w2
`
	m, err := parse.Parse("osc.ode", []byte(src))
	if err != nil {
		fmt.Println(err)
		return
	}
	text, err := parse.Format(m)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(text)
	// Output:
	// name osc
	// state x = 1
	// state v = 0
	// param w = 2
	// let _1 = w*w
	// x' = v
	// v' = x*-_1 - v*0.1 + sin(t)/_1
}

// Piecewise functions: comparisons give 1 or 0, ifelse(c, a, b) is a
// where c ≠ 0, and sign, floor and ceil are as in Go's math (sign keeps
// ±0 and NaN). A derivative follows the branch taken. Const lines, like
// state and param lines, take comma lists.
func ExampleParse_piecewise() {
	src := `state x = 0
param a = 0.5
const period = 2, on = 3
let square = ifelse(floor(t) - period*floor(t/period) == 0, 1, -1)   # +1 on [0, 1), -1 on [1, 2), …
x' = square + a*sign(x) + (t >= on) - ceil(x) + x^2
`
	m, err := parse.Parse("square.ode", []byte(src))
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := tape.Build(m)
	if err != nil {
		fmt.Println(err)
		return
	}
	pg := s.Programs()
	dy, jac := make([]float64, 1), make([]float64, 1)
	for _, pt := range []struct{ t, x float64 }{{0.5, 0.25}, {1.5, 0.25}, {3.5, -2.5}} {
		pg.F(pt.t, []float64{pt.x}, m.P(), dy)
		pg.JacY(pt.t, []float64{pt.x}, m.P(), jac)
		fmt.Printf("t = %g, x = %g: f = %g, ∂f/∂x = %g\n", pt.t, pt.x, dy[0], jac[0])
	}
	// Output:
	// t = 0.5, x = 0.25: f = 0.5625, ∂f/∂x = 0.5
	// t = 1.5, x = 0.25: f = -1.4375, ∂f/∂x = 0.5
	// t = 3.5, x = -2.5: f = 7.75, ∂f/∂x = -5
}

// An initial value may be an expression of the parameters: each
// trajectory of a solve without explicit initial states starts from
// y0(p) of its own parameters, and sensitivities with respect to p
// start from ∂y0/∂p.
func ExampleParse_initialValues() {
	src := `param r0 = 2, phi = 0
const c = cos(phi)      # an expression of phi
state x = r0*c, y = r0*sin(phi)
x' = -y
y' = x
`
	m, err := parse.Parse("circle.ode", []byte(src))
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := tape.Build(m)
	if err != nil {
		fmt.Println(err)
		return
	}
	pr := s.Problem()
	y0, jac := make([]float64, 2), make([]float64, 4)
	pr.Initial()([]float64{3, math.Pi / 2}, y0, jac)
	fmt.Printf("defaults: y0 = %g\n", pr.Y0)
	fmt.Printf("r0 = 3, phi = π/2: y0 = [%.3g %.3g], ∂y0/∂(r0, phi) = [%.3g %.3g; %.3g %.3g]\n", y0[0], y0[1], jac[0], jac[1], jac[2], jac[3])
	// Output:
	// defaults: y0 = [2 0]
	// r0 = 3, phi = π/2: y0 = [1.84e-16 3], ∂y0/∂(r0, phi) = [6.12e-17 -3; 1 1.84e-16]
}
