package sym

import (
	"errors"
	"fmt"
	"math"
)

// Model is a problem dy/dt = f(t, y, p) built symbolically: named
// states with initial values, named parameters with defaults, one
// derivative per state, an optional time span and a stiffness flag. An
// initial value is a number (State) or an expression of the parameters
// (StateExpr: y0 = y0(p)).
//
//	m := sym.NewModel("lorenz")
//	x, y, z := m.State("x", 1), m.State("y", 0), m.State("z", 0)
//	sigma, rho, beta := m.Param("sigma", 10), m.Param("rho", 28), m.Param("beta", 8.0/3)
//	m.Deriv(x, sigma.Mul(y.Sub(x)))
//	m.Deriv(y, x.Mul(rho.Sub(z)).Sub(y))
//	m.Deriv(z, x.Mul(y).Sub(beta.Mul(z)))
//	if err := m.Err(); err != nil { … }
type Model struct {
	Name string
	// T0, T1: the default span, used when T0 != T1.
	T0, T1 float64
	// Stiff marks a stiff problem.
	Stiff bool

	g      *Graph
	states []variable
	params []variable
	derivs []Expr // per state; zero Expr until set
	names  map[string]bool

	// paramOnly[id] is set once node id is known to use parameters and
	// constants only (see StateExpr): a node's operands never change, so
	// each node is checked once for the whole model, and declaring n
	// states costs the size of their initial values, not n times the
	// graph's.
	paramOnly []bool
	// checked caches checkInitial's result for the number of states and
	// parameters it was computed with (the only changes that can alter
	// it: an initial value is fixed when its state is added).
	checked struct {
		states, params int
		valid          bool
		err            error
	}
}

type variable struct {
	name string
	init float64
	// expr, for a state whose initial value depends on the parameters,
	// is that value; the zero Expr otherwise.
	expr Expr
}

// NewModel returns an empty model with its own graph.
func NewModel(name string) *Model {
	return &Model{Name: name, g: NewGraph(), names: make(map[string]bool)}
}

// Graph returns the model's graph.
func (m *Model) Graph() *Graph { return m.g }

// Err returns the first error met while building the model, or nil.
func (m *Model) Err() error { return m.g.err }

func (m *Model) claim(kind, name string) bool {
	if name == "" {
		m.g.fail("%s with an empty name", kind)
		return false
	}
	if m.names[name] {
		m.g.fail("%s %q: the name is already defined", kind, name)
		return false
	}
	m.names[name] = true
	return true
}

// State adds a state variable with its default initial value and
// returns it as an expression. States are numbered in the order added.
func (m *Model) State(name string, init float64) Expr {
	m.claim("state", name)
	m.states = append(m.states, variable{name: name, init: init})
	m.derivs = append(m.derivs, Expr{})
	return m.g.State(len(m.states) - 1)
}

// StateExpr adds a state whose initial value is init, an expression of
// the parameters and constants (not of a state, of t or of a seed), and
// returns it as an expression. A problem solved without explicit
// initial states then starts each trajectory from init evaluated at its
// own parameters, and derivatives with respect to the parameters
// include ∂y0/∂p. A constant init is the same as State with its value.
// Misuse records an error.
func (m *Model) StateExpr(name string, init Expr) Expr {
	x := m.State(name, 0)
	if !m.g.own(OpInvalid, init) {
		return x
	}
	if v, ok := init.IsConst(); ok {
		m.states[len(m.states)-1].init = v
		return x
	}
	if op := m.varyingLeaf(init); op != OpInvalid {
		m.g.fail("the initial value of state %q uses %v: it may use parameters and constants only", name, op)
		return x
	}
	m.states[len(m.states)-1].expr = init
	return x
}

// varyingLeaf returns the operation of the state, t or seed that e uses
// with the smallest node id, or OpInvalid if e uses parameters and
// constants only. It visits only the nodes of e not already known to
// be free of them (paramOnly), and marks those it visited when e is.
func (m *Model) varyingLeaf(e Expr) Op {
	if n := len(m.g.nodes); len(m.paramOnly) < n {
		m.paramOnly = append(m.paramOnly, make([]bool, n-len(m.paramOnly))...)
	}
	seen := map[int32]bool{}
	stack := []int32{e.id}
	bad, badID := OpInvalid, int32(-1)
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if m.paramOnly[id] || seen[id] {
			continue
		}
		seen[id] = true
		n := m.g.nodes[id]
		switch n.Op {
		case OpState, OpTime, OpSeed:
			if badID < 0 || id < badID {
				bad, badID = n.Op, id
			}
		}
		for k := range n.Op.Arity() {
			stack = append(stack, n.Args[k])
		}
	}
	if bad == OpInvalid {
		for id := range seen {
			m.paramOnly[id] = true
		}
	}
	return bad
}

// Param adds a parameter with its default value and returns it.
// Parameters are numbered in the order added.
func (m *Model) Param(name string, def float64) Expr {
	m.claim("param", name)
	m.params = append(m.params, variable{name: name, init: def})
	return m.g.Param(len(m.params) - 1)
}

// Time returns the independent variable t.
func (m *Model) Time() Expr { return m.g.Time() }

// Const returns the constant v in the model's graph.
func (m *Model) Const(v float64) Expr { return m.g.Const(v) }

// Deriv sets the derivative of state s (an expression State returned)
// to f. Setting it twice records an error.
func (m *Model) Deriv(s, f Expr) {
	if !m.g.own(OpInvalid, s, f) {
		return
	}
	n := m.g.nodes[s.id]
	if n.Op != OpState {
		m.g.fail("Deriv: the first argument is not a state")
		return
	}
	i := n.Index
	if m.derivs[i].Valid() {
		m.g.fail("state %q has two derivatives", m.states[i].name)
		return
	}
	m.derivs[i] = f
}

// Dim returns the number of states.
func (m *Model) Dim() int { return len(m.states) }

// NumParams returns the number of parameters.
func (m *Model) NumParams() int { return len(m.params) }

// StateNames returns the state names in order.
func (m *Model) StateNames() []string { return names(m.states) }

// ParamNames returns the parameter names in order.
func (m *Model) ParamNames() []string { return names(m.params) }

// Y0 returns the default initial state: the initial values at the
// parameters' defaults.
func (m *Model) Y0() []float64 {
	y0 := values(m.states)
	if !m.InitialDependsOnParams() {
		return y0
	}
	if m.checkInitial() != nil {
		for i := range y0 {
			y0[i] = math.NaN()
		}
		return y0
	}
	for i, v := range m.g.Evaluate(m.Initial(), 0, nil, m.P()) {
		y0[i] = v
	}
	return y0
}

// checkInitial reports an initial value that uses a parameter the model
// does not have (a Param node built on the graph directly). One search
// of the graph covers every initial value, and its result is kept until
// a state or parameter is added; only when it finds such a parameter
// does it search state by state, for the first state that uses one.
func (m *Model) checkInitial() error {
	c := &m.checked
	if c.valid && c.states == len(m.states) && c.params == len(m.params) {
		return c.err
	}
	var exprs []Expr
	for _, v := range m.states {
		if v.expr.Valid() {
			exprs = append(exprs, v.expr)
		}
	}
	var err error
	if len(exprs) > 0 && m.usesMissingParam(exprs) {
		for i, v := range m.states {
			if !v.expr.Valid() {
				continue
			}
			for id, need := range m.g.Reachable([]Expr{v.expr}) {
				if n := m.g.nodes[id]; need && n.Op == OpParam && int(n.Index) >= len(m.params) {
					err = fmt.Errorf("sym: the initial value of state %q uses parameter %d, but the model has %d", m.states[i].name, n.Index, len(m.params))
					break
				}
			}
			if err != nil {
				break
			}
		}
	}
	c.states, c.params, c.valid, c.err = len(m.states), len(m.params), true, err
	return err
}

// usesMissingParam reports whether the expressions use a parameter the
// model does not have.
func (m *Model) usesMissingParam(exprs []Expr) bool {
	for id, need := range m.g.Reachable(exprs) {
		if n := m.g.nodes[id]; need && n.Op == OpParam && int(n.Index) >= len(m.params) {
			return true
		}
	}
	return false
}

// Initial returns the initial value of every state as an expression: a
// constant, or an expression of the parameters (StateExpr). The
// constants are nodes of the model's graph, added on first use.
func (m *Model) Initial() []Expr {
	out := make([]Expr, len(m.states))
	for i, v := range m.states {
		out[i] = v.expr
		if !v.expr.Valid() {
			out[i] = m.g.Const(v.init)
		}
	}
	return out
}

// InitialDependsOnParams reports whether some initial value is an
// expression of the parameters rather than a number.
func (m *Model) InitialDependsOnParams() bool {
	for _, v := range m.states {
		if v.expr.Valid() {
			return true
		}
	}
	return false
}

// P returns the default parameters.
func (m *Model) P() []float64 { return values(m.params) }

func names(v []variable) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i] = x.name
	}
	return out
}

func values(v []variable) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x.init
	}
	return out
}

// F returns the right-hand side, one expression per state, after
// checking the model: no building error, at least one state, every state
// with a derivative, finite defaults (the initial values at the
// parameters' defaults included). The error names what is wrong.
func (m *Model) F() ([]Expr, error) {
	if err := m.g.err; err != nil {
		return nil, err
	}
	if len(m.states) == 0 {
		return nil, fmt.Errorf("sym: model %q has no states", m.Name)
	}
	var errs []error
	for i, d := range m.derivs {
		if !d.Valid() {
			errs = append(errs, fmt.Errorf("sym: state %q has no derivative", m.states[i].name))
		}
	}
	for _, v := range m.params {
		if math.IsNaN(v.init) || math.IsInf(v.init, 0) {
			errs = append(errs, fmt.Errorf("sym: %q has a non-finite default value %g", v.name, v.init))
		}
	}
	if err := m.checkInitial(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		for i, y := range m.Y0() {
			if math.IsNaN(y) || math.IsInf(y, 0) {
				what := "default value"
				if m.states[i].expr.Valid() {
					what = "initial value at the parameters' defaults"
				}
				errs = append(errs, fmt.Errorf("sym: %q has a non-finite %s %g", m.states[i].name, what, y))
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return append([]Expr(nil), m.derivs...), nil
}
