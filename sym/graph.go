package sym

import (
	"fmt"
	"math"

	"github.com/gradsolve/gradsolve/pmath"
)

// Op is the kind of a node.
type Op uint8

// The node kinds. Leaves first, then operations; Args holds the
// operands' ids (unused ones are −1).
const (
	OpInvalid Op = iota
	OpConst      // Value
	OpTime       // t
	OpState      // y[Index]
	OpParam      // p[Index]
	OpSeed       // seed input Index of kind Kind (see SeedKind)
	OpNeg        // −a
	OpAdd        // a + b
	OpSub        // a − b
	OpMul        // a · b
	OpDiv        // a / b
	OpPow        // pmath.Pow(a, b)
	OpSqrt       // √a
	OpExp        // e^a
	OpLog        // ln a
	OpSin        // sin a
	OpCos        // cos a
	OpTan        // tan a
	OpTanh       // tanh a
	OpAtan2      // pmath.Atan2(a, b)
	OpAbs        // |a|
	OpMin        // math.Min(a, b)
	OpMax        // math.Max(a, b)
	OpSelect     // a > 0 ? b : c
	OpLt         // 1 if a < b, else 0
	OpLe         // 1 if a ≤ b, else 0
	OpEq         // 1 if a = b, else 0
	OpNe         // 1 if a ≠ b, else 0 (1 when either is NaN)
	OpFloor      // math.Floor(a)
	OpCeil       // math.Ceil(a)
	OpSign       // 1 if a > 0, −1 if a < 0, else a (±0 and NaN unchanged)
	numOps
)

var opNames = [numOps]string{
	OpInvalid: "invalid", OpConst: "const", OpTime: "t", OpState: "state", OpParam: "param", OpSeed: "seed",
	OpNeg: "neg", OpAdd: "+", OpSub: "-", OpMul: "*", OpDiv: "/", OpPow: "pow", OpSqrt: "sqrt", OpExp: "exp",
	OpLog: "log", OpSin: "sin", OpCos: "cos", OpTan: "tan", OpTanh: "tanh", OpAtan2: "atan2", OpAbs: "abs",
	OpMin: "min", OpMax: "max", OpSelect: "select", OpLt: "<", OpLe: "<=", OpEq: "==", OpNe: "!=",
	OpFloor: "floor", OpCeil: "ceil", OpSign: "sign",
}

// String returns the operation's name as written in a problem file.
func (o Op) String() string {
	if o < numOps {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// Arity returns the number of operands of the operation (0 for leaves).
func (o Op) Arity() int {
	switch o {
	case OpNeg, OpSqrt, OpExp, OpLog, OpSin, OpCos, OpTan, OpTanh, OpAbs, OpFloor, OpCeil, OpSign:
		return 1
	case OpAdd, OpSub, OpMul, OpDiv, OpPow, OpAtan2, OpMin, OpMax, OpLt, OpLe, OpEq, OpNe:
		return 2
	case OpSelect:
		return 3
	}
	return 0
}

// IsComparison reports whether the operation is a comparison (<, ≤, =,
// ≠), whose value is always 1 or 0.
func (o Op) IsComparison() bool { return o == OpLt || o == OpLe || o == OpEq || o == OpNe }

// SeedKind tells the seed inputs of derivative programs apart.
type SeedKind uint8

const (
	// SeedV is the tangent of the state (the v of J_y·v).
	SeedV SeedKind = iota
	// SeedW is the tangent of the parameters (the w of J_p·w).
	SeedW
	// SeedU is the cotangent of the outputs (the w of wᵀJ).
	SeedU
)

// Node is one node of a graph, as Graph.Node returns it.
type Node struct {
	Op    Op
	Args  [3]int32 // operand ids, −1 where unused
	Value float64  // OpConst
	Index int32    // OpState, OpParam, OpSeed
	Kind  SeedKind // OpSeed
}

// Graph holds the nodes of a set of expressions. Node ids are
// topologically ordered: a node's operands always have smaller ids. The
// zero Graph is not usable; call NewGraph.
type Graph struct {
	nodes []Node
	index map[Node]int32
	err   error
	// deriving is set while derivative programs are built: a partial
	// derivative that folds to a non-finite constant (d/dx of (−2)^x
	// needs log(−2)) is the true value there, not a mistake in the model.
	deriving bool
}

// NewGraph returns an empty graph.
func NewGraph() *Graph { return &Graph{index: make(map[Node]int32)} }

// Len returns the number of nodes.
func (g *Graph) Len() int { return len(g.nodes) }

// Node returns node id.
func (g *Graph) Node(id int32) Node { return g.nodes[id] }

// Err returns the first error met while building, or nil.
func (g *Graph) Err() error { return g.err }

func (g *Graph) fail(format string, args ...any) {
	if g.err == nil {
		g.err = fmt.Errorf("sym: "+format, args...)
	}
}

// Expr is an expression: a node of a graph. The zero Expr is invalid;
// using it records an error in the graph it is combined with.
type Expr struct {
	g  *Graph
	id int32
}

// ID returns the expression's node id in its graph.
func (e Expr) ID() int32 { return e.id }

// Graph returns the graph the expression belongs to (nil for the zero Expr).
func (e Expr) Graph() *Graph { return e.g }

// Valid reports whether e belongs to a graph.
func (e Expr) Valid() bool { return e.g != nil }

// IsConst reports whether e is a constant, and its value.
func (e Expr) IsConst() (float64, bool) {
	if e.g == nil {
		return 0, false
	}
	n := e.g.nodes[e.id]
	return n.Value, n.Op == OpConst
}

// Expr returns the expression of node id.
func (g *Graph) Expr(id int32) Expr { return Expr{g, id} }

// add interns a node and returns its expression.
func (g *Graph) add(n Node) Expr {
	if n.Op == OpConst && n.Value == 0 {
		n.Value = 0 // −0 and +0 are one constant; −0 only arises from folding and is never observable through + or ·
	}
	if id, ok := g.index[n]; ok {
		return Expr{g, id}
	}
	id := int32(len(g.nodes))
	g.nodes = append(g.nodes, n)
	g.index[n] = id
	return Expr{g, id}
}

func leaf(op Op) Node { return Node{Op: op, Args: [3]int32{-1, -1, -1}} }

// Const returns the constant v. NaN constants are kept distinct from one
// another by their bits.
func (g *Graph) Const(v float64) Expr {
	n := leaf(OpConst)
	n.Value = v
	return g.add(n)
}

// Time returns the independent variable t.
func (g *Graph) Time() Expr { return g.add(leaf(OpTime)) }

// State returns y[i].
func (g *Graph) State(i int) Expr {
	n := leaf(OpState)
	n.Index = int32(i)
	return g.add(n)
}

// Param returns p[j].
func (g *Graph) Param(j int) Expr {
	n := leaf(OpParam)
	n.Index = int32(j)
	return g.add(n)
}

// Seed returns seed input i of the given kind.
func (g *Graph) Seed(kind SeedKind, i int) Expr {
	n := leaf(OpSeed)
	n.Kind, n.Index = kind, int32(i)
	return g.add(n)
}

// own checks that every operand belongs to g.
func (g *Graph) own(op Op, xs ...Expr) bool {
	for _, x := range xs {
		if x.g != g {
			if x.g == nil {
				g.fail("%v: operand is the zero Expr (not built by a graph)", op)
			} else {
				g.fail("%v: operand belongs to another graph", op)
			}
			return false
		}
	}
	return true
}

// graphOf returns the graph of the first valid expression.
func graphOf(xs ...Expr) *Graph {
	for _, x := range xs {
		if x.g != nil {
			return x.g
		}
	}
	return nil
}

// Apply builds op applied to the operands, folding constants and
// applying identities. It is the one constructor every operation goes
// through. With no valid operand it returns the zero Expr.
func Apply(op Op, xs ...Expr) Expr {
	g := graphOf(xs...)
	if g == nil {
		return Expr{}
	}
	if op.Arity() == 0 || len(xs) != op.Arity() {
		g.fail("%v takes %d operands, got %d", op, op.Arity(), len(xs))
		return g.Const(math.NaN())
	}
	if !g.own(op, xs...) {
		return g.Const(math.NaN())
	}
	return g.apply(op, xs)
}

func (g *Graph) apply(op Op, xs []Expr) Expr {
	// Constant folding, with the evaluators' own arithmetic.
	allConst := true
	var v [3]float64
	for i, x := range xs {
		n := g.nodes[x.id]
		if n.Op != OpConst {
			allConst = false
			break
		}
		v[i] = n.Value
	}
	if allConst {
		if op == OpDiv && v[1] == 0 && !g.deriving {
			g.fail("division by the constant zero")
			return g.Const(math.NaN())
		}
		r := Eval(op, v[0], v[1], v[2])
		if !g.deriving && isFinite(v[0]) && isFinite(v[1]) && isFinite(v[2]) && !isFinite(r) {
			g.fail("%v of constants %g, %g is not finite (%g)", op, v[0], v[1], r)
		}
		return g.Const(r)
	}
	a := xs[0]
	ca, aConst := a.IsConst()
	var b Expr
	var cb float64
	var bConst bool
	if len(xs) > 1 {
		b = xs[1]
		cb, bConst = b.IsConst()
	}
	switch op {
	case OpNeg:
		if n := g.nodes[a.id]; n.Op == OpNeg {
			return Expr{g, n.Args[0]}
		}
	case OpAdd:
		if aConst && ca == 0 {
			return b
		}
		if bConst && cb == 0 {
			return a
		}
	case OpSub:
		if bConst && cb == 0 {
			return a
		}
		if aConst && ca == 0 {
			return g.apply(OpNeg, []Expr{b})
		}
		if a.id == b.id {
			return g.Const(0)
		}
	case OpMul:
		if (aConst && ca == 0) || (bConst && cb == 0) {
			return g.Const(0)
		}
		if aConst && ca == 1 {
			return b
		}
		if bConst && cb == 1 {
			return a
		}
		if aConst && ca == -1 {
			return g.apply(OpNeg, []Expr{b})
		}
		if bConst && cb == -1 {
			return g.apply(OpNeg, []Expr{a})
		}
	case OpDiv:
		if bConst && cb == 0 && !g.deriving {
			g.fail("division by the constant zero")
			return g.Const(math.NaN())
		}
		if bConst && cb == 1 {
			return a
		}
		if aConst && ca == 0 {
			return g.Const(0)
		}
	case OpPow:
		if bConst {
			switch cb {
			case 0:
				return g.Const(1)
			case 1:
				return a
			case 2:
				return g.apply(OpMul, []Expr{a, a})
			case 3:
				return g.apply(OpMul, []Expr{g.apply(OpMul, []Expr{a, a}), a})
			case 4:
				sq := g.apply(OpMul, []Expr{a, a})
				return g.apply(OpMul, []Expr{sq, sq})
			case 0.5:
				return g.apply(OpSqrt, []Expr{a})
			case -1, -2, -3, -4:
				return g.apply(OpDiv, []Expr{g.Const(1), g.apply(OpPow, []Expr{a, g.Const(-cb)})})
			}
		}
	case OpSelect:
		if aConst { // cannot happen with a constant condition and constant branches (folded above)
			if ca > 0 {
				return b
			}
			return xs[2]
		}
		if b.id == xs[2].id {
			return b
		}
		// (0 < x) > 0 exactly when x > 0 (both false for NaN): select
		// on x itself, so that ifelse(x > 0, b, c) and Select(x, b, c)
		// are one node.
		if n := g.nodes[a.id]; n.Op == OpLt {
			if z, ok := g.Expr(n.Args[0]).IsConst(); ok && z == 0 {
				return g.apply(OpSelect, []Expr{g.Expr(n.Args[1]), b, xs[2]})
			}
		}
	}
	n := Node{Op: op, Args: [3]int32{-1, -1, -1}}
	for i, x := range xs {
		n.Args[i] = x.id
	}
	// a+b = b+a and a·b = b·a exactly in IEEE arithmetic, so sorting the
	// operands shares more nodes without changing any result.
	if (op == OpAdd || op == OpMul || op == OpMin || op == OpMax || op == OpEq || op == OpNe) && n.Args[0] > n.Args[1] {
		n.Args[0], n.Args[1] = n.Args[1], n.Args[0]
	}
	return g.add(n)
}

// Evaluate returns the values of outs at (t, y, p) with Eval's
// arithmetic: the graph's reference evaluator, bit for bit what the
// compiled programs compute. Seed inputs read 0; y and p must be long
// enough for the states and parameters the outputs use.
func (g *Graph) Evaluate(outs []Expr, t float64, y, p []float64) []float64 {
	return g.evaluate(outs, t, y, p, nil)
}

// evaluate is Evaluate with seed input i of kind k reading seed(k, i)
// where seed is not nil.
func (g *Graph) evaluate(outs []Expr, t float64, y, p []float64, seed func(k SeedKind, i int32) float64) []float64 {
	need := g.Reachable(outs)
	vals := make([]float64, len(g.nodes))
	for id, n := range g.nodes {
		if !need[id] {
			continue
		}
		switch n.Op {
		case OpConst:
			vals[id] = n.Value
		case OpTime:
			vals[id] = t
		case OpState:
			vals[id] = y[n.Index]
		case OpParam:
			vals[id] = p[n.Index]
		case OpSeed:
			if seed != nil {
				vals[id] = seed(n.Kind, n.Index)
			}
		default:
			var a [3]float64
			for k := range n.Op.Arity() {
				a[k] = vals[n.Args[k]]
			}
			vals[id] = Eval(n.Op, a[0], a[1], a[2])
		}
	}
	out := make([]float64, len(outs))
	for i, o := range outs {
		out[i] = vals[o.id]
	}
	return out
}

// Eval applies op to operand values: the arithmetic every evaluator of a
// graph uses (the tape, generated code, constant folding).
func Eval(op Op, a, b, c float64) float64 {
	switch op {
	case OpNeg:
		return -a
	case OpAdd:
		return a + b
	case OpSub:
		return a - b
	case OpMul:
		return a * b
	case OpDiv:
		return a / b
	case OpPow:
		return pmath.Pow(a, b)
	case OpSqrt:
		return math.Sqrt(a)
	case OpExp:
		return pmath.Exp(a)
	case OpLog:
		return pmath.Log(a)
	case OpSin:
		return pmath.Sin(a)
	case OpCos:
		return pmath.Cos(a)
	case OpTan:
		return pmath.Tan(a)
	case OpTanh:
		return pmath.Tanh(a)
	case OpAtan2:
		return pmath.Atan2(a, b)
	case OpAbs:
		return math.Abs(a)
	case OpMin:
		return math.Min(a, b)
	case OpMax:
		return math.Max(a, b)
	case OpSelect:
		if a > 0 {
			return b
		}
		return c
	case OpLt:
		return boolValue(a < b)
	case OpLe:
		return boolValue(a <= b)
	case OpEq:
		return boolValue(a == b)
	case OpNe:
		return boolValue(a != b)
	case OpFloor:
		return math.Floor(a)
	case OpCeil:
		return math.Ceil(a)
	case OpSign:
		if a > 0 {
			return 1
		}
		if a < 0 {
			return -1
		}
		return a
	}
	return math.NaN()
}

// boolValue returns 1 for true and 0 for false.
func boolValue(c bool) float64 {
	if c {
		return 1
	}
	return 0
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
