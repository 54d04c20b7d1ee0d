package tape_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gradsolve/gradsolve/sym"
	"github.com/gradsolve/gradsolve/sym/tape"
)

// allOpsModel uses every operation and t, with states (a, b, c) and
// parameters (k, q), on a domain where each function is smooth (a > 0
// for log and sqrt, |b| < 1 for tan, no ties in min/max at the random
// points used).
func allOpsModel() *sym.Model {
	m := sym.NewModel("allops")
	a, b, c := m.State("a", 1.5), m.State("b", 0.3), m.State("c", -0.7)
	k, q := m.Param("k", 0.8), m.Param("q", 1.3)
	t := m.Time()
	m.Deriv(a, k.Mul(sym.Sqrt(a)).Sub(sym.Exp(b.Mul(c))).Add(sym.Sin(t.Mul(q))))
	m.Deriv(b, sym.Log(a).Mul(sym.Cos(c)).Div(q.Add(b.Mul(b))).Sub(sym.Tan(b).MulConst(0.5)))
	m.Deriv(c, sym.Tanh(c.Mul(k)).Add(sym.Atan2(b, a)).Add(a.Pow(q)).Sub(sym.Abs(c).Mul(t)).
		Add(sym.Min(a, k.MulConst(3))).Add(sym.Max(b, c.Neg())).Add(b.PowConst(3).Div(a.PowConst(2))))
	m.T0, m.T1 = 0, 1
	return m
}

// fdCheck compares a derivative with a central difference of f:
// truncation O(δ²·|f”'|) ≈ 1e-10 and rounding O(ε·|f|/δ) ≈ 1e-11 with
// δ = 1e-5 and the O(1) values of these models, so 1e-7 relative (with
// an absolute floor of 1e-7 for derivatives near zero) has a wide
// margin.
func fdCheck(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-7*math.Max(1, math.Abs(want)) {
		t.Errorf("%s: program %.12g, finite difference %.12g", what, got, want)
	}
}

// Every derivative program agrees with central finite differences of f
// at random points: J_y·v + J_p·w, uᵀJ_y, uᵀJ_p, J_y and ∂f/∂t; and the
// reverse and forward programs are consistent: uᵀ(J_y v + J_p w) =
// (uᵀJ_y)·v + (uᵀJ_p)·w to rounding.
func TestDerivativesAgainstFiniteDifferences(t *testing.T) {
	for _, m := range []*sym.Model{allOpsModel(), lorenzModel()} {
		checkFiniteDifferences(t, m, 0.2, nil)
	}
}

// piecewiseModel uses every piecewise operation (comparisons, ifelse,
// sign, floor, ceil) on states (a, b, c), parameters (k, q) and t,
// mixed with smooth ones; piecewiseKinks reports how close a point is
// to a kink, where a branch changes.
func piecewiseModel() *sym.Model {
	m := sym.NewModel("piecewise")
	a, b, c := m.State("a", 1.2), m.State("b", 0.3), m.State("c", -0.7)
	k, q := m.Param("k", 0.8), m.Param("q", 1.3)
	t := m.Time()
	m.Deriv(a, sym.IfElse(sym.Gt(a, b), k.Mul(a).Mul(b), q.Mul(sym.Sin(b))).
		Add(sym.Sign(c).Mul(a.Mul(a))).Add(sym.Floor(b.MulConst(3).Add(t)).Mul(k)))
	m.Deriv(b, sym.Lt(a, m.Const(1.5)).Mul(q).Mul(b).Add(sym.IfElse(c, sym.Exp(b), a)).
		Add(sym.Ceil(a.Sub(t)).Mul(b)).Add(sym.Le(k, q).Mul(a)).Add(sym.Eq(a, b)).Add(sym.Ne(b, c).Mul(t).Mul(c)))
	m.Deriv(c, sym.IfElse(sym.Gt(t, m.Const(0.5)), c.Mul(a), c.Neg()).Add(sym.Ge(b, c).Mul(sym.Sqrt(a))).
		Add(sym.IfElse(sym.Lt(b, m.Const(0.4)), k.Mul(c), sym.Sign(b.Sub(c)).Mul(q))))
	m.T0, m.T1 = 0, 1
	return m
}

// piecewiseKinks returns the distance of (t, y, p) from the nearest
// kink of piecewiseModel.
func piecewiseKinks(tt float64, y, p []float64) float64 {
	a, b, c, k, q := y[0], y[1], y[2], p[0], p[1]
	frac := func(x float64) float64 { return math.Abs(x - math.Round(x)) }
	d := math.Inf(1)
	for _, x := range []float64{a - b, c, frac(3*b + tt), a - 1.5, frac(a - tt), k - q, b - c, tt - 0.5, b - 0.4} {
		d = math.Min(d, math.Abs(x))
	}
	return d
}

// The piecewise operations differentiate as the branch taken: away
// from the kinks every derivative program agrees with finite
// differences of f (the kinks lie at least 1e-3 away, a hundred steps
// h·|direction| of the differences).
func TestPiecewiseDerivativesAgainstFiniteDifferences(t *testing.T) {
	// A spread of 2 around the defaults takes every branch.
	checkFiniteDifferences(t, piecewiseModel(), 2, func(tt float64, y, p []float64) bool { return piecewiseKinks(tt, y, p) > 1e-3 })
}

// checkFiniteDifferences compares every derivative program of m with
// central differences of f at 50 random points, its defaults plus
// uniform numbers in [0, spread) (those accept allows, when not nil).
func checkFiniteDifferences(t *testing.T, m *sym.Model, spread float64, accept func(tt float64, y, p []float64) bool) {
	t.Helper()
	s := mustBuild(t, m)
	pg := s.Programs()
	dim, np := m.Dim(), m.NumParams()
	rng := rand.New(rand.NewPCG(5, 6))
	const h = 1e-5
	f := func(tt float64, y, p []float64) []float64 {
		out := make([]float64, dim)
		pg.F(tt, y, p, out)
		return out
	}
	for trial := 0; trial < 50; {
		y := make([]float64, dim)
		p := make([]float64, np)
		for i := range y {
			y[i] = m.Y0()[i] + spread*rng.Float64()
		}
		for j := range p {
			p[j] = m.P()[j] + spread*rng.Float64()
		}
		tt := rng.Float64()
		if accept != nil && !accept(tt, y, p) {
			continue
		}
		trial++
		v, w, u := randVec(rng, dim), randVec(rng, np), randVec(rng, dim)
		// Directional difference along (v, w).
		yp, ym, pp, pm := axpy(y, h, v), axpy(y, -h, v), axpy(p, h, w), axpy(p, -h, w)
		fp, fm := f(tt, yp, pp), f(tt, ym, pm)
		jvp := make([]float64, dim)
		pg.JVP(tt, y, p, v, w, jvp)
		for i := range dim {
			fdCheck(t, m.Name+" jvp", jvp[i], (fp[i]-fm[i])/(2*h))
		}
		// Dense J_y column by column; ∂f/∂t.
		jac := make([]float64, dim*dim)
		pg.JacY(tt, y, p, jac)
		for j := range dim {
			e := make([]float64, dim)
			e[j] = 1
			fp, fm := f(tt, axpy(y, h, e), p), f(tt, axpy(y, -h, e), p)
			for i := range dim {
				fdCheck(t, m.Name+" jac", jac[i*dim+j], (fp[i]-fm[i])/(2*h))
			}
		}
		dfdt := make([]float64, dim)
		pg.DfDt(tt, y, p, dfdt)
		fp, fm = f(tt+h, y, p), f(tt-h, y, p)
		for i := range dim {
			fdCheck(t, m.Name+" dfdt", dfdt[i], (fp[i]-fm[i])/(2*h))
		}
		// uᵀJ_y and uᵀJ_p against differences of uᵀf.
		gy, gp := make([]float64, dim), make([]float64, np)
		pg.VJP(tt, y, p, u, gy, gp)
		for j := range dim {
			e := make([]float64, dim)
			e[j] = 1
			fdCheck(t, m.Name+" vjp_y", gy[j], (dot(u, f(tt, axpy(y, h, e), p))-dot(u, f(tt, axpy(y, -h, e), p)))/(2*h))
		}
		for j := range np {
			e := make([]float64, np)
			e[j] = 1
			fdCheck(t, m.Name+" vjp_p", gp[j], (dot(u, f(tt, y, axpy(p, h, e)))-dot(u, f(tt, y, axpy(p, -h, e))))/(2*h))
		}
		// Duality, to rounding: both sides are sums of the same
		// products in different orders (relative 1e-13).
		lhs, rhs := dot(u, jvp), dot(gy, v)+dot(gp, w)
		if math.Abs(lhs-rhs) > 1e-13*math.Max(1, math.Abs(lhs)) {
			t.Errorf("%s trial %d: uᵀ(Jv) = %.17g, (uᵀJ)v = %.17g", m.Name, trial, lhs, rhs)
		}
	}
}

func randVec(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

func axpy(x []float64, a float64, d []float64) []float64 {
	out := make([]float64, len(x))
	for i := range x {
		out[i] = x[i] + a*d[i]
	}
	return out
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// Evaluating any of the programs allocates nothing.
func TestEvalDoesNotAllocate(t *testing.T) {
	s := mustBuild(t, allOpsModel())
	pg := s.Programs()
	y, p := []float64{1.5, 0.3, -0.7}, []float64{0.8, 1.3}
	v, w, u := []float64{1, 2, 3}, []float64{1, 1}, []float64{1, 0, 1}
	out, gy, gp, jac := make([]float64, 3), make([]float64, 3), make([]float64, 2), make([]float64, 9)
	allocs := testing.AllocsPerRun(100, func() {
		pg.F(0.3, y, p, out)
		pg.JVP(0.3, y, p, v, w, out)
		pg.VJP(0.3, y, p, u, gy, gp)
		pg.JacY(0.3, y, p, jac)
		pg.DfDt(0.3, y, p, out)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per evaluation of the five programs", allocs)
	}
	pr := s.Problem()
	if a := testing.AllocsPerRun(100, func() { pr.F(0.3, y, p, out) }); a != 0 {
		t.Errorf("Problem.F (pooled registers): %v allocations per call", a)
	}
	// Lorenz f is one piece of machine code where the platform has it,
	// called as the ode.Func itself.
	lf, lp := mustBuild(t, lorenzModel()).Programs().F, []float64{10, 28, 8.0 / 3}
	if a := testing.AllocsPerRun(100, func() { lf(0.3, y, lp, out) }); a != 0 {
		t.Errorf("Lorenz f: %v allocations per call", a)
	}
}

// A dense neural-network right-hand side with thousands of weights
// (parameters) builds in linear size: f = W2·tanh(W1·y + b1) + b2 with
// 4 states and 256 hidden units has 2·4·256 + 256 + 4 parameters; its
// graph has O(number of weights) nodes, and its derivative programs
// compile.
func TestNeuralNetworkLinearSize(t *testing.T) {
	const dim, hidden = 4, 256
	m := sym.NewModel("mlp")
	y := make([]sym.Expr, dim)
	for i := range y {
		y[i] = m.State("y"+string(rune('0'+i)), 0.1*float64(i))
	}
	pname := func(kind string, i, j int) string { return kind + "_" + itoa(i) + "_" + itoa(j) }
	h := make([]sym.Expr, hidden)
	for k := range hidden {
		row := make([]sym.Expr, dim)
		for i := range dim {
			row[i] = m.Param(pname("w1", k, i), 0.01*float64((k+i)%7-3))
		}
		h[k] = sym.Tanh(sym.Dot(row, y).Add(m.Param(pname("b1", k, 0), 0)))
	}
	for i := range dim {
		row := make([]sym.Expr, hidden)
		for k := range hidden {
			row[k] = m.Param(pname("w2", i, k), 0.01*float64((k*i)%5-2))
		}
		m.Deriv(y[i], sym.Dot(row, h).Add(m.Param(pname("b2", i, 0), 0)))
	}
	weights := m.NumParams()
	nodesF := m.Graph().Len()
	if nodesF > 8*weights {
		t.Errorf("graph of f has %d nodes for %d weights: not linear", nodesF, weights)
	}
	s := mustBuild(t, m)
	all := tape.All(t, s)
	for _, pg := range []*tape.Program{all["f"], all["jvp"], all["vjp"]} {
		if n := len(pg.Code()); n > 12*weights {
			t.Errorf("program %s has %d instructions for %d weights", pg.Name, n, weights)
		}
	}
	t.Logf("%d weights: %d graph nodes after all derivatives; f %d, jvp %d, vjp %d instructions; f registers %d",
		weights, m.Graph().Len(), len(all["f"].Code()), len(all["jvp"].Code()), len(all["vjp"].Code()), all["f"].NumRegisters())
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// Building errors are sticky and reported by Build.
func TestBuildErrors(t *testing.T) {
	cases := map[string]func() *sym.Model{
		"division by zero": func() *sym.Model {
			m := sym.NewModel("m")
			x := m.State("x", 1)
			m.Deriv(x, x.Div(m.Const(0)))
			return m
		},
		"missing derivative": func() *sym.Model {
			m := sym.NewModel("m")
			x := m.State("x", 1)
			m.State("y", 1)
			m.Deriv(x, x)
			return m
		},
		"two derivatives": func() *sym.Model {
			m := sym.NewModel("m")
			x := m.State("x", 1)
			m.Deriv(x, x)
			m.Deriv(x, x.Neg())
			return m
		},
		"duplicate name": func() *sym.Model {
			m := sym.NewModel("m")
			x := m.State("x", 1)
			m.Param("x", 2)
			m.Deriv(x, x)
			return m
		},
		"foreign graph": func() *sym.Model {
			m, other := sym.NewModel("m"), sym.NewModel("o")
			x := m.State("x", 1)
			m.Deriv(x, x.Add(other.State("z", 0)))
			return m
		},
		"zero Expr": func() *sym.Model {
			m := sym.NewModel("m")
			x := m.State("x", 1)
			m.Deriv(x, x.Add(sym.Expr{}))
			return m
		},
		"no states": func() *sym.Model { return sym.NewModel("m") },
		"NaN default": func() *sym.Model {
			m := sym.NewModel("m")
			x := m.State("x", math.NaN())
			m.Deriv(x, x)
			return m
		},
	}
	for name, build := range cases {
		if _, err := tape.Build(build()); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
