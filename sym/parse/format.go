package parse

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gradsolve/gradsolve/sym"
)

// Format writes m as a problem file that Parse reads back into the same
// model: the same names, defaults, initial values (numbers, or
// expressions of the parameters, written after the parameters), span
// and stiffness flag, and derivatives built from the same operations on
// the same operands, so they evaluate bitwise alike. The operands of +, *, min and max come
// in the graph's canonical order, which may differ from the order the
// model was written in (a+b and b+a are equal in float64).
// Subexpressions used more than once become
// let statements named _1, _2, … (more underscores if a state or
// parameter name would clash). The name statement is left out when the
// model's name is not an identifier, and the span when T0 = T1.
//
// A sym.Select(c, a, b) is written ifelse(c, a, b) when c is a
// comparison and ifelse(c > 0, a, b) otherwise; both read back as the
// same select.
//
// It returns an error if m is incomplete (m.F fails), if a state or
// parameter name is not an identifier or is reserved, or if a derivative
// uses an operation the format cannot write (a seed input of a
// derivative program) or a constant that is not finite.
func Format(m *sym.Model) (string, error) {
	f, err := m.F()
	if err != nil {
		return "", err
	}
	taken := make(map[string]bool)
	for _, list := range []struct {
		kind  string
		names []string
	}{{"state", m.StateNames()}, {"param", m.ParamNames()}} {
		for _, name := range list.names {
			if !isIdent(name) {
				return "", fmt.Errorf("parse: Format: %s %q is not an identifier", list.kind, name)
			}
			if r := reservedKind(name); r != "" {
				return "", fmt.Errorf("parse: Format: %s %q is %s", list.kind, name, r)
			}
			taken[name] = true
		}
	}

	g := m.Graph()
	w := &writer{g: g, states: m.StateNames(), params: m.ParamNames(), names: make(map[int32]string)}
	// Count the uses of each node the initial values and the derivatives
	// reach. Nodes the initial values reach (expressions of parameters)
	// are visited first and marked early: their lets are written before
	// the states.
	init := m.Initial()
	uses := make(map[int32]int)
	early := make(map[int32]bool)
	var order []int32
	inInit := false
	var visit func(id int32)
	visit = func(id int32) { // iterative would do too; depth is bounded by the graph's height
		uses[id]++
		if uses[id] > 1 {
			return
		}
		early[id] = inInit
		n := g.Node(id)
		for k := range n.Op.Arity() {
			visit(n.Args[k])
		}
		order = append(order, id)
	}
	inInit = true
	for _, e := range init {
		if _, c := e.IsConst(); !c {
			visit(e.ID())
		}
	}
	inInit = false
	for _, e := range f {
		visit(e.ID())
	}
	prefix := "_"
	for {
		clash := false
		for name := range taken {
			if strings.HasPrefix(name, prefix) && len(name) > len(prefix) && isDigit(name[len(prefix)]) {
				clash = true
			}
		}
		if !clash {
			break
		}
		prefix += "_"
	}
	// Shared operations become lets, in topological order.
	k := 0
	lets := func(b *strings.Builder, first bool) error {
		for _, id := range order {
			if uses[id] < 2 || g.Node(id).Op.Arity() == 0 || early[id] != first {
				continue
			}
			s, err := w.expr(id, levelCompare)
			if err != nil {
				return err
			}
			k++
			w.names[id] = prefix + strconv.Itoa(k)
			fmt.Fprintf(b, "let %s = %s\n", w.names[id], s)
		}
		return nil
	}

	var b strings.Builder
	if isIdent(m.Name) {
		fmt.Fprintf(&b, "name %s\n", m.Name)
	}
	params := func() {
		for i, name := range m.ParamNames() {
			fmt.Fprintf(&b, "param %s = %s\n", name, formatFloat(m.P()[i]))
		}
	}
	// Initial values that use parameters need the parameters, and the
	// lets they share, declared first.
	dep := m.InitialDependsOnParams()
	if dep {
		params()
		if err := lets(&b, true); err != nil {
			return "", err
		}
	}
	for i, name := range m.StateNames() {
		v, c := init[i].IsConst()
		s := formatFloat(v)
		if !c {
			if s, err = w.expr(init[i].ID(), levelCompare); err != nil {
				return "", err
			}
		}
		fmt.Fprintf(&b, "state %s = %s\n", name, s)
	}
	if !dep {
		params()
	}
	if m.T0 != m.T1 {
		sep := " "
		if m.T1 < 0 {
			sep = ", "
		}
		fmt.Fprintf(&b, "span %s%s%s\n", formatFloat(m.T0), sep, formatFloat(m.T1))
	}
	if m.Stiff {
		b.WriteString("stiff\n")
	}
	if err := lets(&b, false); err != nil {
		return "", err
	}
	for i, e := range f {
		s, err := w.expr(e.ID(), levelCompare)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s' = %s\n", w.states[i], s)
	}
	return b.String(), nil
}

func isIdent(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdentChar(s[i]) {
			return false
		}
	}
	return true
}

// formatFloat writes v so that the lexer reads back the same float64
// (a leading minus is the unary operator, which negates exactly).
func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// Precedence levels of printed expressions: an operand printed at a
// lower level than its position requires is parenthesized.
const (
	levelCompare = 1 // a < b, a <= b, a == b, a != b (not chained)
	levelSum     = 2 // a + b, a - b
	levelProduct = 3 // a * b, a / b
	levelUnary   = 4 // -a, negative numbers
	levelPower   = 5 // a ^ b
	levelPrimary = 6 // numbers ≥ 0, names, calls, parentheses
)

type writer struct {
	g              *sym.Graph
	states, params []string
	names          map[int32]string // let names of shared nodes
}

// expr writes node id so that it parses at precedence level ≥ need.
func (w *writer) expr(id int32, need int) (string, error) {
	s, level, err := w.node(id)
	if err != nil {
		return "", err
	}
	if level < need {
		s = "(" + s + ")"
	}
	return s, nil
}

// node writes node id and returns its precedence level.
func (w *writer) node(id int32) (string, int, error) {
	if name, ok := w.names[id]; ok {
		return name, levelPrimary, nil
	}
	n := w.g.Node(id)
	switch n.Op {
	case sym.OpConst:
		if math.IsNaN(n.Value) || math.IsInf(n.Value, 0) {
			return "", 0, fmt.Errorf("parse: Format: the constant %g is not finite", n.Value)
		}
		if n.Value < 0 {
			return formatFloat(n.Value), levelUnary, nil
		}
		return formatFloat(n.Value), levelPrimary, nil
	case sym.OpTime:
		return "t", levelPrimary, nil
	case sym.OpState:
		return w.states[n.Index], levelPrimary, nil
	case sym.OpParam:
		return w.params[n.Index], levelPrimary, nil
	}
	var infix string
	var level, needL, needR int
	switch n.Op {
	case sym.OpAdd, sym.OpSub:
		infix, level, needL, needR = " "+n.Op.String()+" ", levelSum, levelSum, levelProduct
	case sym.OpMul, sym.OpDiv:
		infix, level, needL, needR = n.Op.String(), levelProduct, levelProduct, levelUnary
	case sym.OpPow:
		infix, level, needL, needR = "^", levelPower, levelPrimary, levelUnary
	case sym.OpLt, sym.OpLe, sym.OpEq, sym.OpNe:
		infix, level, needL, needR = " "+n.Op.String()+" ", levelCompare, levelSum, levelSum
	case sym.OpSelect:
		// ifelse(c, a, b) selects a where c ≠ 0; a select takes a where
		// its condition is > 0. On a comparison (1 or 0) the two agree;
		// otherwise the condition is written c > 0, which parses back to
		// a select on c itself.
		c, err := w.expr(n.Args[0], levelCompare)
		if err != nil {
			return "", 0, err
		}
		if !w.g.Node(n.Args[0]).Op.IsComparison() {
			if c, err = w.expr(n.Args[0], levelSum); err != nil {
				return "", 0, err
			}
			c += " > 0"
		}
		a, err := w.expr(n.Args[1], levelCompare)
		if err != nil {
			return "", 0, err
		}
		b, err := w.expr(n.Args[2], levelCompare)
		if err != nil {
			return "", 0, err
		}
		return "ifelse(" + c + ", " + a + ", " + b + ")", levelPrimary, nil
	case sym.OpNeg:
		a, err := w.expr(n.Args[0], levelUnary)
		if err != nil {
			return "", 0, err
		}
		return "-" + a, levelUnary, nil
	case sym.OpSqrt, sym.OpExp, sym.OpLog, sym.OpSin, sym.OpCos, sym.OpTan, sym.OpTanh,
		sym.OpAtan2, sym.OpAbs, sym.OpMin, sym.OpMax, sym.OpFloor, sym.OpCeil, sym.OpSign:
		args := make([]string, n.Op.Arity())
		for k := range args {
			a, err := w.expr(n.Args[k], levelCompare)
			if err != nil {
				return "", 0, err
			}
			args[k] = a
		}
		return n.Op.String() + "(" + strings.Join(args, ", ") + ")", levelPrimary, nil
	default:
		return "", 0, fmt.Errorf("parse: Format: operation %v has no syntax in a problem file", n.Op)
	}
	a, err := w.expr(n.Args[0], needL)
	if err != nil {
		return "", 0, err
	}
	b, err := w.expr(n.Args[1], needR)
	if err != nil {
		return "", 0, err
	}
	return a + infix + b, level, nil
}
