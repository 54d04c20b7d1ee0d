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
