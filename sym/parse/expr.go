package parse

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gradsolve/gradsolve/sym"
)

// This file parses expressions and builds them in the model's graph as
// written: operands left to right, no reassociation, so a file and the
// Go code it transcribes perform the same floating-point operations.
//
//	expr    = sum [ ( "<" | "<=" | ">" | ">=" | "==" | "!=" ) sum ] .
//	sum     = term { ( "+" | "-" ) term } .
//	term    = unary { ( "*" | "/" ) unary } .
//	unary   = ( "+" | "-" ) unary | power .
//	power   = primary [ "^" unary ] .
//	primary = number | name | name "(" [ expr { "," expr } ] ")" | "(" expr ")" .

// expr parses an expression.
func (p *parser) expr() val {
	v, _ := p.exprOp()
	return v
}

// exprOp parses an expression and returns its last top-level + or −
// ("" if none, or if the expression is a comparison). Comparisons bind
// more loosely than + and − and do not chain: a < b < c is an error.
func (p *parser) exprOp() (val, string) {
	l, last := p.sum()
	t := p.tok()
	if !isComparison(t) {
		return l, last
	}
	p.next()
	r, _ := p.sum()
	if t2 := p.tok(); isComparison(t2) {
		p.failAt(t2.col, `comparisons do not chain: "a %s b %s c" is neither (a %s b) %s c nor both comparisons; write (a %s b)*(b %s c) for both, or parenthesize one`,
			t.text, t2.text, t.text, t2.text, t.text, t2.text)
	}
	switch t.text {
	case "<":
		return p.apply(sym.OpLt, t.col, l, r), ""
	case "<=":
		return p.apply(sym.OpLe, t.col, l, r), ""
	case ">": // a > b is b < a: the same comparison of the same values
		return p.apply(sym.OpLt, t.col, r, l), ""
	case ">=":
		return p.apply(sym.OpLe, t.col, r, l), ""
	case "==":
		return p.apply(sym.OpEq, t.col, l, r), ""
	}
	return p.apply(sym.OpNe, t.col, l, r), ""
}

// isComparison reports whether t is a comparison operator.
func isComparison(t token) bool {
	if t.kind != tPunct {
		return false
	}
	switch t.text {
	case "<", "<=", ">", ">=", "==", "!=":
		return true
	}
	return false
}

// sum parses terms joined by + and − and returns the last of those
// operators ("" if none).
func (p *parser) sum() (val, string) {
	l := p.term()
	last := ""
	for p.isPunct("+") || p.isPunct("-") {
		t := p.tok()
		p.next()
		r := p.term()
		op := sym.OpAdd
		if t.text == "-" {
			op = sym.OpSub
		}
		l = p.apply(op, t.col, l, r)
		last = t.text
	}
	return l, last
}

func (p *parser) term() val {
	l := p.unary()
	for p.isPunct("*") || p.isPunct("/") {
		t := p.tok()
		p.next()
		r := p.unary()
		op := sym.OpMul
		if t.text == "/" {
			op = sym.OpDiv
		}
		l = p.apply(op, t.col, l, r)
	}
	return l
}

func (p *parser) unary() val {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		p.failAt(p.tok().col, "expression nested too deeply (more than %d levels)", maxDepth)
	}
	t := p.tok()
	switch {
	case p.isPunct("+"):
		p.next()
		return p.unary()
	case p.isPunct("-"):
		p.next()
		return p.apply(sym.OpNeg, t.col, p.unary())
	}
	return p.power()
}

func (p *parser) power() val {
	base := p.primary()
	if p.isPunct("^") {
		t := p.tok()
		p.next()
		return p.apply(sym.OpPow, t.col, base, p.unary())
	}
	return base
}

func (p *parser) primary() val {
	t := p.tok()
	switch t.kind {
	case tNumber:
		p.next()
		return val{e: p.m.Const(t.num)}
	case tIdent:
		p.next()
		if p.isPunct("(") {
			return p.call(t)
		}
		return p.name(t)
	case tPunct:
		if t.text == "(" {
			p.next()
			v := p.expr()
			if p.tok().kind == tEOL {
				p.failAt(t.col, `unclosed "(": missing ")" before the end of the line`)
			}
			if !p.isPunct(")") {
				p.unexpected(`")"`)
			}
			p.next()
			return v
		}
		p.failAt(t.col, "unexpected %s: missing operand", describe(t))
	}
	// End of line.
	if p.i > 0 {
		if prev := p.toks[p.i-1]; prev.kind == tPunct {
			p.failAt(t.col, "missing operand after %q at the end of the line", prev.text)
		}
	}
	p.failAt(t.col, "missing expression at the end of the line")
	panic("unreachable")
}

// name returns the value of a name used in an expression.
func (p *parser) name(t token) val {
	switch t.text {
	case "pi":
		return val{e: p.m.Const(math.Pi)}
	case "t":
		if p.constWhat != "" {
			p.errorAt(t.col, "t (the time) is not constant: %s", p.constRule())
			return val{bad: true}
		}
		return val{e: p.m.Time(), varying: true}
	}
	if _, ok := functions[t.text]; ok {
		if at, ok := p.refused[t.text]; ok {
			p.failAt(t.col, "%s is the function %s(…), not a value: the name is reserved, and its definition at %s was refused; rename it there and here", t.text, t.text, p.posString(at))
		}
		p.failAt(t.col, "%s is a function: call it as %s(…)", t.text, t.text)
	}
	if r := reservedKind(t.text); r != "" {
		p.failAt(t.col, "%s is %s, not a value", t.text, r)
	}
	d := p.defs[t.text]
	if d == nil {
		e := p.errorAt(t.col, "unknown name %s%s", t.text, p.suggestion(t.text, ""))
		p.unknown = append(p.unknown, unknownRef{e, t.text})
		return val{bad: true}
	}
	if d.pending {
		p.errorAt(t.col, "%s is used in its own definition", t.text)
		return val{bad: true}
	}
	if p.constWhat != "" && !d.v.bad && (d.v.varying || d.v.param && !p.allowParams) {
		what := "a " + d.kind
		switch {
		case d.kind == "let" && d.v.varying:
			what = "a let that depends on states or t"
		case d.kind == "let" || d.kind == "const":
			what = "a " + d.kind + " that depends on params"
		}
		p.errorAt(t.col, "%s is %s: %s", t.text, what, p.constRule())
		return val{bad: true}
	}
	return d.v
}

// constRule says what the expression being parsed may use, for errors.
func (p *parser) constRule() string {
	if p.allowParams {
		return p.constWhat + " may use params and constants, not states or t"
	}
	return p.constWhat + " must be a constant expression"
}

// call parses the arguments of a call to the function named by t (the
// current token is "(") and applies it.
func (p *parser) call(t token) val {
	open := p.tok()
	p.next()
	var args []val
	if p.isPunct(")") {
		p.next()
	} else {
		for {
			args = append(args, p.expr())
			if p.isPunct(",") {
				p.next()
				continue
			}
			if p.isPunct(")") {
				p.next()
				break
			}
			if p.tok().kind == tEOL {
				p.failAt(open.col, `unclosed "(" of the call to %s: missing ")" before the end of the line`, t.text)
			}
			p.unexpected(fmt.Sprintf(`"," or ")" in the arguments of %s`, t.text))
		}
	}
	f, ok := functions[t.text]
	if !ok {
		if d := p.defs[t.text]; d != nil {
			p.errorAt(t.col, "%s is a %s, not a function (write %s*(…) for a product)", t.text, d.kind, t.text)
		} else if r := reservedKind(t.text); r != "" {
			p.errorAt(t.col, "%s is %s, not a function", t.text, r)
		} else {
			msg := ""
			if s := suggest(t.text, functionNames); s != "" {
				msg = fmt.Sprintf(" (did you mean %s?)", s)
			}
			p.errorAt(t.col, "unknown function %s%s; the functions are %s", t.text, msg, strings.Join(functionNames, ", "))
		}
		return val{bad: true}
	}
	if len(args) != f.arity {
		plural := "s"
		if f.arity == 1 {
			plural = ""
		}
		p.errorAt(t.col, "%s takes %d argument%s, got %d", t.text, f.arity, plural, len(args))
		return val{bad: true}
	}
	return p.apply(f.op, t.col, args...)
}

// apply builds op on the operands, reporting a division by a constant
// zero and a constant result that is not finite at column col.
func (p *parser) apply(op sym.Op, col int, args ...val) val {
	var r val
	xs := make([]sym.Expr, len(args))
	for i, a := range args {
		if a.bad {
			return val{bad: true}
		}
		r.varying = r.varying || a.varying
		r.param = r.param || a.param
		xs[i] = a.e
	}
	if op == sym.OpDiv {
		if c, ok := xs[1].IsConst(); ok && c == 0 {
			p.errorAt(col, "division by zero (the divisor is the constant 0)")
			return val{bad: true}
		}
	}
	if op == sym.OpSelect { // ifelse(cond, a, b): cond ≠ 0 selects a
		r.e = sym.IfElse(xs[0], xs[1], xs[2])
	} else {
		r.e = sym.Apply(op, xs...)
	}
	if c, ok := r.e.IsConst(); ok && (math.IsNaN(c) || math.IsInf(c, 0)) {
		p.errorAt(col, "constant expression %s = %g is not finite", formatOp(op, xs), c)
		return val{bad: true}
	}
	return r
}

// formatOp writes op applied to constant operands, for messages.
func formatOp(op sym.Op, xs []sym.Expr) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		c, _ := x.IsConst()
		s[i] = strconv.FormatFloat(c, 'g', -1, 64)
	}
	switch op {
	case sym.OpNeg:
		return "-" + s[0]
	case sym.OpAdd, sym.OpSub, sym.OpMul, sym.OpDiv, sym.OpLt, sym.OpLe, sym.OpEq, sym.OpNe:
		return s[0] + " " + op.String() + " " + s[1]
	case sym.OpPow:
		return s[0] + "^" + s[1]
	}
	return op.String() + "(" + strings.Join(s, ", ") + ")"
}
