// Package parse reads problem files (.ode) into symbolic models
// (sym.Model).
//
// A problem file states an initial value problem dy/dt = f(t, y, p) one
// statement a line:
//
//	# Lorenz system
//	name lorenz
//	state x = 1, y = 0, z = 0
//	param rho = 28, sigma = 10, beta = 8/3
//	span 0 1
//	x' = sigma*(y - x)
//	y' = x*(rho - z) - y
//	z' = x*y - beta*z
//
// The statements are name, state, param, const, let, span, stiff and one
// derivative line NAME' = EXPR per state. Names are declared before they
// are used. Expressions have + - * / ^ (right-associative, tighter than
// unary minus), the functions sqrt exp log sin cos tan tanh atan2 pow abs
// min max, the constant pi and the time t. docs/ode-format.md gives the
// grammar and every rule.
//
// Expressions are built in the model's graph exactly as written, left to
// right and without reassociation — x*(rho - z) - y becomes
// Sub(Mul(x, Sub(rho, z)), y) — so a file that transcribes Go code
// operation for operation evaluates bitwise like it. Constant
// subexpressions fold with float64 arithmetic (8/3 is float64(8)/3), and
// sym lowers small integer powers (x^2 is x*x).
//
// Errors are positioned like go/scanner's: Parse returns an ErrorList of
// *Error, each printing as file:line:col: msg, sorted, with as many
// independent errors as the file holds (after a syntax error, parsing
// resumes at the next line). Format writes a model back as a problem
// file.
package parse
