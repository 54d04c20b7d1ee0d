package sym

import (
	"math"
	"strings"
	"testing"
)

// Hash-consing shares equal subexpressions, commutative operands are
// ordered, and the simplification identities hold.
func TestSharingAndIdentities(t *testing.T) {
	g := NewGraph()
	x, y := g.State(0), g.State(1)
	if x.Add(y) != y.Add(x) || x.Mul(y) != y.Mul(x) {
		t.Error("commutative operations are not shared")
	}
	if x.Sub(y) == y.Sub(x) {
		t.Error("x−y and y−x were merged")
	}
	n := g.Len()
	_ = Sin(x.Mul(y)).Add(Sin(y.Mul(x)))
	if got := g.Len() - n; got != 2 { // sin(x·y) once, then the sum
		t.Errorf("%d new nodes for sin(xy) + sin(yx), want 2", got)
	}
	zero, one := g.Const(0), g.Const(1)
	cases := []struct {
		name      string
		got, want Expr
	}{
		{"x+0", x.Add(zero), x},
		{"0+x", zero.Add(x), x},
		{"x-0", x.Sub(zero), x},
		{"0-x", zero.Sub(x), x.Neg()},
		{"x-x", x.Sub(x), zero},
		{"x*1", x.Mul(one), x},
		{"x*0", x.Mul(zero), zero},
		{"x*-1", x.MulConst(-1), x.Neg()},
		{"x/1", x.Div(one), x},
		{"0/x", zero.Div(x), zero},
		{"--x", x.Neg().Neg(), x},
		{"x^1", x.PowConst(1), x},
		{"x^0", x.PowConst(0), one},
		{"x^2", x.PowConst(2), x.Mul(x)},
		{"x^3", x.PowConst(3), x.Mul(x).Mul(x)},
		{"x^4", x.PowConst(4), x.Mul(x).Mul(x.Mul(x))},
		{"x^-2", x.PowConst(-2), one.Div(x.Mul(x))},
		{"x^0.5", x.PowConst(0.5), Sqrt(x)},
		{"2*3", g.Const(2).Mul(g.Const(3)), g.Const(6)},
		{"8/3", g.Const(8).Div(g.Const(3)), g.Const(8.0 / 3)},
		{"select same", Select(x, y, y), y},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: node %d, want %d", c.name, c.got.ID(), c.want.ID())
		}
	}
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
}

// Constant folding reports what cannot be a number.
func TestFoldingErrors(t *testing.T) {
	cases := map[string]func(g *Graph) Expr{
		"division by the constant zero": func(g *Graph) Expr { return g.Const(1).Div(g.Const(0)) },
		"not finite":                    func(g *Graph) Expr { return Log(g.Const(0)) },
		"another graph":                 func(g *Graph) Expr { return g.State(0).Add(NewGraph().State(0)) },
		"zero Expr":                     func(g *Graph) Expr { return g.State(0).Mul(Expr{}) },
		"takes 2 operands":              func(g *Graph) Expr { return Apply(OpAdd, g.State(0)) },
	}
	for want, build := range cases {
		g := NewGraph()
		build(g)
		if err := g.Err(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one mentioning %q", err, want)
		}
	}
	g := NewGraph()
	if v, ok := g.Const(math.Inf(1)).Add(g.Const(1)).IsConst(); !ok || !math.IsInf(v, 1) || g.Err() != nil {
		t.Error("an infinite constant given on purpose must fold without error")
	}
}

func TestOpNames(t *testing.T) {
	for op := OpInvalid; op < numOps; op++ {
		if op.String() == "" || strings.HasPrefix(op.String(), "Op(") {
			t.Errorf("op %d has no name", op)
		}
	}
}

// The piecewise operations evaluate as documented, NaN, signed zeros
// and infinities included: comparisons give 1 or 0 and are false with
// a NaN operand except ≠; sign keeps ±0 and NaN; floor and ceil are
// math.Floor and math.Ceil.
func TestPiecewiseEval(t *testing.T) {
	nan, inf, negz := math.NaN(), math.Inf(1), math.Copysign(0, -1)
	cases := []struct {
		op      Op
		a, b    float64
		want    float64
		wantNeg bool // the result is −0
	}{
		{OpLt, 1, 2, 1, false}, {OpLt, 2, 1, 0, false}, {OpLt, 1, 1, 0, false}, {OpLt, nan, 1, 0, false}, {OpLt, 1, nan, 0, false},
		{OpLt, -inf, inf, 1, false}, {OpLt, negz, 0, 0, false},
		{OpLe, 1, 1, 1, false}, {OpLe, 2, 1, 0, false}, {OpLe, nan, nan, 0, false}, {OpLe, negz, 0, 1, false},
		{OpEq, 1, 1, 1, false}, {OpEq, 1, 2, 0, false}, {OpEq, negz, 0, 1, false}, {OpEq, nan, nan, 0, false}, {OpEq, inf, inf, 1, false},
		{OpNe, 1, 1, 0, false}, {OpNe, 1, 2, 1, false}, {OpNe, nan, nan, 1, false}, {OpNe, nan, 1, 1, false}, {OpNe, negz, 0, 0, false},
		{OpFloor, 2.5, 0, 2, false}, {OpFloor, -2.5, 0, -3, false}, {OpFloor, -0.5, 0, -1, false}, {OpFloor, negz, 0, 0, true},
		{OpFloor, inf, 0, inf, false}, {OpFloor, 1e300, 0, 1e300, false},
		{OpCeil, 2.5, 0, 3, false}, {OpCeil, -2.5, 0, -2, false}, {OpCeil, -0.5, 0, 0, true}, {OpCeil, 0.5, 0, 1, false},
		{OpSign, 3, 0, 1, false}, {OpSign, -1e-300, 0, -1, false}, {OpSign, inf, 0, 1, false}, {OpSign, -inf, 0, -1, false},
		{OpSign, 0, 0, 0, false}, {OpSign, negz, 0, 0, true},
	}
	for _, c := range cases {
		got := Eval(c.op, c.a, c.b, 0)
		if got != c.want || (got == 0 && math.Signbit(got) != c.wantNeg) {
			t.Errorf("%v(%v, %v) = %v, want %v (negative zero: %v)", c.op, c.a, c.b, got, c.want, c.wantNeg)
		}
	}
	for _, op := range []Op{OpFloor, OpCeil, OpSign} {
		if got := Eval(op, nan, 0, 0); math.Float64bits(got) != math.Float64bits(nan) {
			t.Errorf("%v(NaN) = %#x, want the NaN itself %#x", op, math.Float64bits(got), math.Float64bits(nan))
		}
	}
}

// The piecewise builders fold constants with Eval, share equal
// comparisons, and build ifelse as a select on a comparison.
func TestPiecewiseBuild(t *testing.T) {
	g := NewGraph()
	x, y, z := g.State(0), g.State(1), g.State(2)
	zero := g.Const(0)
	nodes := []struct {
		name      string
		got, want Expr
	}{
		{"x > y is y < x", Gt(x, y), Lt(y, x)},
		{"x >= y is y <= x", Ge(x, y), Le(y, x)},
		{"== commutes", Eq(x, y), Eq(y, x)},
		{"!= commutes", Ne(x, y), Ne(y, x)},
		{"ifelse on a comparison", IfElse(Lt(x, y), y, z), Select(Lt(x, y), y, z)},
		{"ifelse on a number", IfElse(x, y, z), Select(Ne(x, zero), y, z)},
		{"ifelse(x > 0) is select on x", IfElse(Gt(x, zero), y, z), Select(x, y, z)},
		{"ifelse same branches", IfElse(x, y, y), y},
		{"ifelse true", IfElse(g.Const(2), y, z), y},
		{"ifelse NaN is true", IfElse(g.Const(math.NaN()), y, z), y},
		{"ifelse false", IfElse(g.Const(0), y, z), z},
		{"fold <", Lt(g.Const(1), g.Const(2)), g.Const(1)},
		{"fold >=", Ge(g.Const(1), g.Const(2)), zero},
		{"fold floor", Floor(g.Const(-1.5)), g.Const(-2)},
		{"fold ceil", Ceil(g.Const(-1.5)), g.Const(-1)},
		{"fold sign", Sign(g.Const(-7)), g.Const(-1)},
	}
	for _, c := range nodes {
		if c.got != c.want {
			t.Errorf("%s: node %d (%v), want %d (%v)", c.name, c.got.ID(), g.Node(c.got.ID()).Op, c.want.ID(), g.Node(c.want.ID()).Op)
		}
	}
	if Lt(x, y) == Lt(y, x) || Le(x, y) == Lt(x, y) {
		t.Error("different comparisons were merged")
	}
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	for _, op := range []Op{OpLt, OpLe, OpEq, OpNe} {
		if !op.IsComparison() || op.Arity() != 2 {
			t.Errorf("%v: IsComparison %v, arity %d", op, op.IsComparison(), op.Arity())
		}
	}
	for _, op := range []Op{OpFloor, OpCeil, OpSign, OpSelect, OpAdd} {
		if op.IsComparison() {
			t.Errorf("%v is not a comparison", op)
		}
	}
}

// The derivative of a select is the select of the branches'
// derivatives: a NaN derivative of the branch not taken does not leak
// into the result (a product with 0 would give NaN).
func TestSelectDerivative(t *testing.T) {
	g := NewGraph()
	x := g.State(0)
	// ifelse(x > 0, sqrt(x), -x): at x < 0 the sqrt branch has a NaN
	// derivative.
	f := []Expr{IfElse(Gt(x, g.Const(0)), Sqrt(x), x.Neg())}
	d := Tangent(f)[0]
	gy, _ := Cotangent(f, 1, 0)
	for _, c := range []struct{ x, want float64 }{{-4, -1}, {4, 0.25}} {
		for _, e := range []Expr{d, gy[0]} {
			got := evalAt(g, e, c.x, 1)
			if got != c.want {
				t.Errorf("d/dx at x = %v: %v, want %v", c.x, got, c.want)
			}
		}
	}
}

// evalAt evaluates e with y[0] = y and every seed input = seed, with
// Graph.Evaluate's arithmetic (t and the parameters are not used).
func evalAt(g *Graph, e Expr, y, seed float64) float64 {
	return g.evaluate([]Expr{e}, 0, []float64{y}, nil, func(SeedKind, int32) float64 { return seed })[0]
}

// Initial values may be expressions of the parameters: the model keeps
// them, Y0 evaluates them at the defaults, JacobianP differentiates
// them, and initial values that use states, t or unknown parameters,
// or are not finite at the defaults, are errors.
func TestInitialExpressions(t *testing.T) {
	m := NewModel("orbit")
	r0, phi := m.Param("r0", 2), m.Param("phi", 0.5)
	x := m.StateExpr("x", r0.Mul(Cos(phi)))
	y := m.StateExpr("y", r0.Mul(Sin(phi)))
	v := m.StateExpr("v", m.Const(3)) // a constant: the same as State("v", 3)
	m.Deriv(x, y)
	m.Deriv(y, x.Neg())
	m.Deriv(v, v)
	if _, err := m.F(); err != nil {
		t.Fatal(err)
	}
	if !m.InitialDependsOnParams() {
		t.Error("InitialDependsOnParams = false")
	}
	r, ph := 2.0, 0.5
	if y0 := m.Y0(); y0[0] != r*math.Cos(ph) || y0[1] != r*math.Sin(ph) || y0[2] != 3 {
		t.Errorf("Y0 = %v", y0)
	}
	init := m.Initial()
	if c, ok := init[2].IsConst(); !ok || c != 3 {
		t.Errorf("Initial()[2] = %v, want the constant 3", init[2])
	}
	jac := m.Graph().Evaluate(JacobianP(init, 2), 0, nil, []float64{r, ph})
	want := []float64{math.Cos(ph), -(r * math.Sin(ph)), math.Sin(ph), r * math.Cos(ph), 0, 0}
	for i := range want {
		if jac[i] != want[i] {
			t.Errorf("∂y0/∂p = %v, want %v", jac, want)
			break
		}
	}
	plain := NewModel("plain")
	plain.Deriv(plain.State("x", 1), plain.Const(0))
	if plain.InitialDependsOnParams() {
		t.Error("a model of constant initial values depends on parameters")
	}

	for _, c := range []struct {
		want  string
		build func(m *Model)
	}{
		{"uses state", func(m *Model) { a := m.State("a", 1); m.Deriv(a, a); m.Deriv(m.StateExpr("b", a), a) }},
		{"uses t", func(m *Model) { m.Deriv(m.StateExpr("b", m.Time()), m.Const(0)) }},
		{"has 1", func(m *Model) { m.Deriv(m.StateExpr("b", m.Graph().Param(3)), m.Const(0)) }},
		// b's initial value shares q·2 with a's, checked already.
		{"uses t", func(m *Model) {
			q2 := m.Graph().Param(0).MulConst(2)
			m.Deriv(m.StateExpr("a", q2), m.Const(0))
			m.Deriv(m.StateExpr("b", q2.Add(m.Time())), m.Const(0))
		}},
		// Of two, the one with the smaller node id is named.
		{"uses state", func(m *Model) { a := m.State("a", 1); m.Deriv(a, a); m.Deriv(m.StateExpr("b", m.Time().Add(a)), a) }},
		{"initial value at the", func(m *Model) { k := m.Param("k", 0); m.Deriv(m.StateExpr("b", Log(k)), m.Const(0)) }},
	} {
		m := NewModel("bad")
		m.Param("q", 1)
		c.build(m)
		if _, err := m.F(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("F() = %v, want an error mentioning %q", err, c.want)
		}
	}
}

// checkInitial's result is kept only as long as no state or parameter
// is added: a parameter added after the initial value that uses it
// clears the error.
func TestCheckInitialCache(t *testing.T) {
	m := NewModel("late")
	m.Param("a", 1)
	x := m.StateExpr("x", m.Graph().Param(1).AddConst(1)) // parameter 1, not added yet
	m.Deriv(x, x.Neg())
	if _, err := m.F(); err == nil || !strings.Contains(err.Error(), `state "x" uses parameter 1, but the model has 1`) {
		t.Fatalf("F() = %v, want the missing parameter", err)
	}
	m.Param("b", 2)
	if _, err := m.F(); err != nil {
		t.Fatalf("F() after adding the parameter: %v", err)
	}
	if y0 := m.Y0(); y0[0] != 3 {
		t.Errorf("Y0 = %v, want [3]", y0)
	}
	y := m.StateExpr("y", m.Graph().Param(2))
	m.Deriv(y, y)
	if _, err := m.F(); err == nil || !strings.Contains(err.Error(), `state "y" uses parameter 2, but the model has 2`) {
		t.Errorf("F() = %v, want the missing parameter of y", err)
	}
}
