package parse

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/gradsolve/gradsolve/sym"
)

// ParseFile reads the problem file at path and parses it (see Parse).
// The file name in errors is path as given. An error reading the file is
// returned as is (an *fs.PathError).
func ParseFile(path string) (*sym.Model, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, src)
}

// Parse parses the problem file src and returns its model, or nil and an
// ErrorList with every error found (at most one syntax error a line;
// parsing resumes at the next line). filename is used in error positions
// and, without its directory and extension, as the model's name unless
// the file has a name statement. The model returned passes m.F(), so
// tape.Build accepts it.
func Parse(filename string, src []byte) (*sym.Model, error) {
	p := &parser{
		file: filename,
		m:    sym.NewModel(defaultName(filename)),
		defs: make(map[string]*def),
	}
	for i, line := range bytes.Split(src, []byte{'\n'}) {
		p.parseLine(i+1, string(line))
	}
	p.finish()
	if len(p.errs) > 0 {
		p.errs.Sort()
		return nil, p.errs
	}
	return p.m, nil
}

// defaultName returns the base name of filename without its extension.
func defaultName(filename string) string {
	if filename == "" {
		return ""
	}
	base := filepath.Base(filename)
	if base == "." || base == string(filepath.Separator) {
		return ""
	}
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// keywords start statements; functions are called with parentheses.
// Both, and the names pi and t, are reserved.
var (
	keywords  = []string{"name", "state", "param", "const", "let", "span", "stiff"}
	functions = map[string]struct {
		op    sym.Op
		arity int
	}{
		"sqrt": {sym.OpSqrt, 1}, "exp": {sym.OpExp, 1}, "log": {sym.OpLog, 1},
		"sin": {sym.OpSin, 1}, "cos": {sym.OpCos, 1}, "tan": {sym.OpTan, 1}, "tanh": {sym.OpTanh, 1},
		"atan2": {sym.OpAtan2, 2}, "pow": {sym.OpPow, 2}, "abs": {sym.OpAbs, 1},
		"min": {sym.OpMin, 2}, "max": {sym.OpMax, 2},
		"ifelse": {sym.OpSelect, 3}, "sign": {sym.OpSign, 1}, "floor": {sym.OpFloor, 1}, "ceil": {sym.OpCeil, 1},
	}
	functionNames = []string{"sqrt", "exp", "log", "sin", "cos", "tan", "tanh", "atan2", "pow", "abs", "min", "max",
		"ifelse", "sign", "floor", "ceil"}
)

// newFunctions are the functions added to the format with comparisons
// and piecewise definitions: names a file written before could define,
// which its errors then explain.
var newFunctions = map[string]bool{"ifelse": true, "sign": true, "floor": true, "ceil": true}

// reservedKind says why a name cannot be defined ("" if it can).
func reservedKind(name string) string {
	for _, k := range keywords {
		if k == name {
			return "a keyword"
		}
	}
	if _, ok := functions[name]; ok {
		return "a function"
	}
	switch name {
	case "pi":
		return "the constant π"
	case "t":
		return "the time variable"
	}
	return ""
}

// pos is a position in the file.
type pos struct{ line, col int }

// val is the value of an expression while parsing.
type val struct {
	e sym.Expr
	// bad: an error was reported for this expression; it builds nothing
	// and reports nothing more.
	bad bool
	// varying: depends on a state or t.
	varying bool
	// param: depends on a parameter.
	param bool
}

// def is a defined name.
type def struct {
	kind  string // "state", "param", "const" or "let"
	at    pos
	v     val
	deriv pos // states: where the derivative is given; line 0 if not yet
	// pending: the name's own definition is being parsed.
	pending bool
}

// bailout aborts the current line after a syntax error.
type bailout struct{}

// maxDepth bounds the nesting of expressions, so that no input can
// exhaust the stack.
const maxDepth = 1000

type parser struct {
	file string
	m    *sym.Model
	errs ErrorList
	defs map[string]*def

	states     []string // state names in declaration order
	statements int      // statements seen (valid or not)
	sawState   bool     // a state statement was seen
	nameAt     pos
	spanAt     pos
	stiffAt    pos
	unknown    []unknownRef
	// refused: the names of functions the file tried to define, and
	// where first (see checkNew).
	refused map[string]pos

	// The current line.
	line  int
	toks  []token
	i     int
	depth int
	// constWhat, when not empty, says what must be constant ("the
	// initial value of x"): states and t are then refused, and so are
	// parameters unless allowParams is set.
	constWhat   string
	allowParams bool

	// The values of nodes at the params' defaults, for the initial
	// values that depend on them (see defaultValue): pdefs holds the
	// defaults in order, vals the value of node id where known[id].
	pdefs []float64
	vals  []float64
	known []bool
}

// unknownRef is an "unknown name" error, revisited at the end of the
// file to say when the name is declared later.
type unknownRef struct {
	err  *Error
	name string
}

// posString formats a position as errors do: file:line:col.
func (p *parser) posString(at pos) string {
	if p.file == "" {
		return fmt.Sprintf("%d:%d", at.line, at.col)
	}
	return fmt.Sprintf("%s:%d:%d", p.file, at.line, at.col)
}

// errorAt records an error at column col of the current line.
func (p *parser) errorAt(col int, format string, args ...any) *Error {
	e := &Error{File: p.file, Line: p.line, Col: col, Msg: fmt.Sprintf(format, args...)}
	p.errs = append(p.errs, e)
	return e
}

// failAt records an error and abandons the line.
func (p *parser) failAt(col int, format string, args ...any) {
	p.errorAt(col, format, args...)
	panic(bailout{})
}

// tok returns the current token; at a lexical error it reports the
// error and abandons the line.
func (p *parser) tok() token {
	t := p.toks[p.i]
	if t.kind == tInvalid {
		p.failAt(t.col, "%s", t.text)
	}
	return t
}

func (p *parser) peek(k int) token {
	if p.i+k < len(p.toks) {
		return p.toks[p.i+k]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) next() {
	if p.i < len(p.toks)-1 {
		p.i++
	}
}

func (p *parser) isPunct(c string) bool {
	t := p.tok()
	return t.kind == tPunct && t.text == c
}

// expect consumes the punctuation c or fails.
func (p *parser) expect(c, after string) {
	if !p.isPunct(c) {
		p.failAt(p.tok().col, "expected %q %s, found %s", c, after, describe(p.tok()))
	}
	p.next()
}

// expectEnd fails unless the line ends here.
func (p *parser) expectEnd(what string) {
	if p.tok().kind != tEOL {
		p.unexpected(what)
	}
}

// unexpected fails on the current token, which cannot follow what came
// before; what says what could have come (may be empty).
func (p *parser) unexpected(what string) {
	t := p.tok()
	if t.kind == tPunct && t.text == ")" {
		p.failAt(t.col, `unmatched ")"`)
	}
	msg := "unexpected " + describe(t)
	if what != "" {
		msg += "; expected " + what
	}
	if p.i > 0 && endsOperand(p.toks[p.i-1]) && startsOperand(t) {
		msg += " (missing operator?)"
	}
	p.failAt(t.col, "%s", msg)
}

func endsOperand(t token) bool {
	return t.kind == tIdent || t.kind == tNumber || t.kind == tPunct && t.text == ")"
}

func startsOperand(t token) bool {
	return t.kind == tIdent || t.kind == tNumber || t.kind == tPunct && t.text == "("
}

func (p *parser) parseLine(line int, text string) {
	p.line, p.i, p.depth, p.constWhat, p.allowParams = line, 0, 0, "", false
	p.toks = lex(text)
	if len(p.toks) > 1 {
		p.statements++
	}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bailout); !ok {
				panic(r)
			}
		}
	}()
	p.statement()
}

func (p *parser) statement() {
	t := p.tok()
	if t.kind == tEOL {
		return
	}
	if t.kind != tIdent {
		p.failAt(t.col, "unexpected %s at the start of a statement", describe(t))
	}
	if n := p.peek(1); n.kind == tPunct && n.text == "'" {
		p.derivStmt()
		return
	}
	at := pos{p.line, t.col}
	p.next()
	switch t.text {
	case "name":
		p.nameStmt(at)
	case "state", "param", "const", "let":
		p.bindings(t.text)
	case "span":
		p.spanStmt(at)
	case "stiff":
		if p.stiffAt.line != 0 {
			p.errorAt(t.col, "duplicate stiff statement (first at %s)", p.posString(p.stiffAt))
		} else {
			p.stiffAt = at
		}
		p.expectEnd("end of line after stiff")
		p.m.Stiff = true
	default:
		msg := fmt.Sprintf("unknown statement keyword %q", t.text)
		if s := suggest(t.text, keywords); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		} else if n := p.toks[p.i]; n.kind == tPunct && n.text == "=" {
			msg += fmt.Sprintf(`: define a value with "let %s = …" or "const %s = …", a derivative with "%s' = …"`, t.text, t.text, t.text)
		} else {
			msg += "; statements start with " + strings.Join(keywords, ", ") + ", or a state's name and ' for its derivative"
		}
		p.failAt(t.col, "%s", msg)
	}
}

// nameStmt parses "name IDENT".
func (p *parser) nameStmt(at pos) {
	t := p.tok()
	if t.kind != tIdent {
		p.failAt(t.col, "expected the model's name after name, found %s", describe(t))
	}
	p.next()
	p.expectEnd("end of line after the model's name")
	if p.nameAt.line != 0 {
		p.failAt(at.col, "duplicate name statement (first at %s)", p.posString(p.nameAt))
	}
	p.nameAt = at
	p.m.Name = t.text
}

// bindings parses the rest of "state NAME = EXPR, …" (or param, const,
// let): one or more bindings separated by commas, each defined before
// the next is parsed, so a later one may use an earlier one.
func (p *parser) bindings(kind string) {
	if kind == "state" {
		p.sawState = true
	}
	for {
		p.binding(kind)
		if p.isPunct(",") {
			p.next()
			continue
		}
		p.expectEnd(`"," or end of line`)
		return
	}
}

// binding parses "NAME = EXPR" for a statement of the given kind and
// defines the name.
func (p *parser) binding(kind string) {
	t := p.tok()
	if t.kind != tIdent {
		p.failAt(t.col, "expected a name after %s, found %s", kind, describe(t))
	}
	name, at := t.text, pos{p.line, t.col}
	p.next()
	p.expect("=", fmt.Sprintf("after %s %s", kind, name))
	ok := p.checkNew(kind, name, t.col)
	// The name is defined, pending, before its expression is parsed: a
	// use inside is an error, and a syntax error in the expression still
	// leaves the name defined, so later lines do not report it unknown.
	d := &def{kind: kind, at: at, pending: true}
	if ok {
		p.defs[name] = d
	}
	v := val{bad: true}
	col := p.tok().col
	defer func() {
		if ok {
			p.define(d, name, v, col)
		}
	}()
	switch kind {
	case "state": // a number, or an expression of the parameters: y0(p)
		v = p.constExpr(fmt.Sprintf("the initial value of state %s", name), true)
	case "param":
		v = p.constExpr(fmt.Sprintf("the default of param %s", name), false)
	case "const": // folded to a number, unless it uses a parameter
		v = p.constExpr(fmt.Sprintf("const %s", name), true)
	case "let":
		v = p.expr()
	}
}

// define completes the definition of name with its value v, which
// starts at column col (bad after an error: a state or parameter then
// gets the default 0, which does not matter since Parse returns no
// model).
func (p *parser) define(d *def, name string, v val, col int) {
	d.pending = false
	var x float64
	isConst := true
	if !v.bad {
		x, isConst = v.e.IsConst()
	}
	switch d.kind {
	case "state":
		if isConst {
			d.v = val{e: p.m.State(name, x), varying: true}
		} else {
			d.v = val{e: p.m.StateExpr(name, v.e), varying: true}
			y0 := p.defaultValue(v.e)
			if math.IsNaN(y0) || math.IsInf(y0, 0) {
				p.errorAt(col, "the initial value of state %s is %g at the params' defaults: it must be finite there", name, y0)
			}
		}
		p.states = append(p.states, name)
	case "param":
		d.v = val{e: p.m.Param(name, x), param: true}
		p.pdefs = append(p.pdefs, x)
	default:
		d.v = v
	}
}

// defaultValue returns the value of e, an expression of the params and
// constants, at the params' defaults, with the arithmetic of
// Graph.Evaluate (sym.Eval, node by node), bit for bit. The value of
// every node it computes is kept: the initial values of n states cost
// the size of their expressions in all, where evaluating each over the
// graph would cost n times the graph's size.
func (p *parser) defaultValue(e sym.Expr) float64 {
	g := p.m.Graph()
	if n := g.Len(); len(p.known) < n {
		p.vals = append(p.vals, make([]float64, n-len(p.vals))...)
		p.known = append(p.known, make([]bool, n-len(p.known))...)
	}
	stack := []int32{e.ID()}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		if p.known[id] {
			stack = stack[:len(stack)-1]
			continue
		}
		n := g.Node(id)
		ready := true
		for k := range n.Op.Arity() {
			if a := n.Args[k]; !p.known[a] {
				stack, ready = append(stack, a), false
			}
		}
		if !ready {
			continue
		}
		stack = stack[:len(stack)-1]
		switch n.Op {
		case sym.OpConst:
			p.vals[id] = n.Value
		case sym.OpParam:
			p.vals[id] = p.pdefs[n.Index]
		default: // an operation: constExpr refused states, t and seeds
			var a [3]float64
			for k := range n.Op.Arity() {
				a[k] = p.vals[n.Args[k]]
			}
			p.vals[id] = sym.Eval(n.Op, a[0], a[1], a[2])
		}
		p.known[id] = true
	}
	return p.vals[e.ID()]
}

// checkNew reports whether name may be defined as a kind (state,
// param, …), reporting why not. A function's name is refused with its
// reason, and remembered so that a use of it says why it is not the
// value the file meant.
func (p *parser) checkNew(kind, name string, col int) bool {
	if _, ok := functions[name]; ok {
		msg := fmt.Sprintf("%s is reserved for the function %s(…) and cannot name a %s: rename the %s", name, name, kind, kind)
		if newFunctions[name] {
			msg += " (ifelse, sign, floor and ceil became reserved names when the format gained piecewise functions)"
		}
		p.errorAt(col, "%s", msg)
		if p.refused == nil {
			p.refused = map[string]pos{}
		}
		if _, seen := p.refused[name]; !seen {
			p.refused[name] = pos{p.line, col}
		}
		return false
	}
	if r := reservedKind(name); r != "" {
		p.errorAt(col, "%s is %s and cannot be defined", name, r)
		return false
	}
	if d := p.defs[name]; d != nil {
		p.errorAt(col, "%s is already defined: %s at %s", name, d.kind, p.posString(d.at))
		return false
	}
	return true
}

// constExpr parses an expression that must be constant (what says
// which), or with params set may also use parameters, and returns it;
// bad if it is not.
func (p *parser) constExpr(what string, params bool) val {
	p.constWhat, p.allowParams = what, params
	col := p.tok().col
	v, _ := p.exprOp()
	p.constWhat, p.allowParams = "", false
	if v.bad {
		return v
	}
	if _, ok := v.e.IsConst(); (!ok && !params) || v.varying {
		p.errorAt(col, "%s must be a constant expression", what) // not reached: names are checked as they are used
		return val{bad: true}
	}
	return v
}

// spanStmt parses "span EXPR [,] EXPR".
func (p *parser) spanStmt(at pos) {
	if p.spanAt.line != 0 {
		p.failAt(at.col, "duplicate span statement (first at %s)", p.posString(p.spanAt))
	}
	p.spanAt = at
	t0, lastOp := p.constExprOp("span")
	if p.isPunct(",") {
		p.next()
	} else if p.tok().kind == tEOL {
		msg := "span needs two values, t0 and t1"
		if lastOp == "-" {
			msg += `; "t0 -t1" reads as one difference: write "span t0, -t1" for a negative t1`
		}
		p.failAt(p.tok().col, "%s", msg)
	}
	col := p.tok().col
	t1, _ := p.constExprOp("span")
	p.expectEnd("end of line after span t0 t1")
	if t0.bad || t1.bad {
		return
	}
	a, _ := t0.e.IsConst()
	b, _ := t1.e.IsConst()
	if a == b {
		p.failAt(col, "span is empty: t1 = t0 = %g", a)
	}
	p.m.T0, p.m.T1 = a, b
}

// constExprOp is constExpr (without parameters) that also returns the
// last top-level binary operator.
func (p *parser) constExprOp(what string) (val, string) {
	p.constWhat = what
	v, op := p.exprOp()
	p.constWhat = ""
	return v, op
}

// derivStmt parses "NAME ' = EXPR".
func (p *parser) derivStmt() {
	t := p.tok()
	name := t.text
	p.next()
	p.next() // '
	if p.isPunct("'") {
		p.failAt(p.tok().col, "only first derivatives can be given: introduce a state for %s'", name)
	}
	p.expect("=", fmt.Sprintf("after %s'", name))
	var target *def
	switch d := p.defs[name]; {
	case d == nil:
		e := p.errorAt(t.col, "derivative of unknown state %s%s", name, p.suggestion(name, "state"))
		p.unknown = append(p.unknown, unknownRef{e, name})
	case d.kind != "state":
		p.errorAt(t.col, "derivative of %s, which is a %s (defined at %s), not a state", name, d.kind, p.posString(d.at))
	case d.deriv.line != 0:
		p.errorAt(t.col, "duplicate derivative of %s (first at %s)", name, p.posString(d.deriv))
	default:
		target = d
		d.deriv = pos{p.line, t.col}
	}
	v := p.expr()
	p.expectEnd("end of line after the derivative")
	if target != nil && !v.bad {
		p.m.Deriv(target.v.e, v.e)
	}
}

// finish reports what only the whole file shows.
func (p *parser) finish() {
	for _, name := range p.states {
		if d := p.defs[name]; d.deriv.line == 0 {
			p.errs = append(p.errs, &Error{File: p.file, Line: d.at.line, Col: d.at.col,
				Msg: fmt.Sprintf("state %s has no derivative (add a line \"%s' = …\")", name, name)})
		}
	}
	if !p.sawState {
		msg := "no states declared (a problem needs at least one state and its derivative)"
		if p.statements == 0 {
			msg = "empty file: " + msg
		}
		p.errs = append(p.errs, &Error{File: p.file, Msg: msg})
	}
	for _, u := range p.unknown {
		if d := p.defs[u.name]; d != nil {
			u.err.Msg = fmt.Sprintf("%s is used before its declaration (%s at %s): declare names before using them", u.name, d.kind, p.posString(d.at))
		}
	}
	if len(p.errs) > 0 {
		return
	}
	if _, err := p.m.F(); err != nil {
		// Every condition F checks is checked above; this is a bug.
		p.errs = append(p.errs, &Error{File: p.file, Msg: "internal error: " + err.Error()})
	}
}

// suggestion returns " (did you mean x?)" for a defined name of the
// given kind ("" for any) close to name, or "".
func (p *parser) suggestion(name, kind string) string {
	var cands []string
	for n, d := range p.defs {
		if kind == "" || d.kind == kind {
			cands = append(cands, n)
		}
	}
	if kind == "" {
		cands = append(cands, "pi", "t")
	}
	if s := suggest(name, cands); s != "" {
		return fmt.Sprintf(" (did you mean %s?)", s)
	}
	return ""
}

// suggest returns the candidate closest to name within edit distance 2
// (1 for names of up to 3 characters, none for 1 character), ties going
// to the alphabetically first; "" if none.
func suggest(name string, cands []string) string {
	limit := 2
	if len(name) <= 3 {
		limit = 1
	}
	if len(name) <= 1 {
		return ""
	}
	best, bestD := "", limit+1
	for _, c := range cands {
		if c == name {
			continue
		}
		d := editDistance(name, c)
		if d < bestD || d == bestD && c < best {
			best, bestD = c, d
		}
	}
	if bestD > limit {
		return ""
	}
	return best
}

// editDistance returns the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
