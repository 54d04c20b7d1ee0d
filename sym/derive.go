package sym

// This file differentiates graphs symbolically. Both directions use the
// partial derivatives of each operation with respect to its operands
// (partials); forward mode sums partial·tangent over operands, reverse
// mode sends partial·adjoint to each operand. Constants and nodes that
// do not depend on the differentiation variables are skipped, and the
// identities x·0 = 0, x+0 = x keep zero derivatives from growing the
// graph.

// partials returns ∂n/∂arg_k for each operand of node id; an invalid
// Expr where the partial derivative is 0.
func (g *Graph) partials(id int32) [3]Expr {
	n := g.nodes[id]
	self := Expr{g, id}
	var a, b Expr
	if n.Args[0] >= 0 {
		a = Expr{g, n.Args[0]}
	}
	if n.Args[1] >= 0 {
		b = Expr{g, n.Args[1]}
	}
	one, zero := g.Const(1), g.Const(0)
	var p [3]Expr
	switch n.Op {
	case OpNeg:
		p[0] = g.Const(-1)
	case OpAdd:
		p[0], p[1] = one, one
	case OpSub:
		p[0], p[1] = one, g.Const(-1)
	case OpMul:
		p[0], p[1] = b, a
	case OpDiv: // d(a/b) = da/b − (a/b)/b·db
		p[0] = one.Div(b)
		p[1] = self.Div(b).Neg()
	case OpPow: // d(a^b) = b·a^(b−1)·da + a^b·ln a·db
		p[0] = b.Mul(a.Pow(b.Sub(one)))
		if _, c := b.IsConst(); !c {
			p[1] = self.Mul(Log(a))
		}
	case OpSqrt:
		p[0] = one.Div(self.MulConst(2))
	case OpExp:
		p[0] = self
	case OpLog:
		p[0] = one.Div(a)
	case OpSin:
		p[0] = Cos(a)
	case OpCos:
		p[0] = Sin(a).Neg()
	case OpTan:
		p[0] = one.Add(self.Mul(self))
	case OpTanh:
		p[0] = one.Sub(self.Mul(self))
	case OpAtan2: // atan2(a, b): ∂a = b/(a²+b²), ∂b = −a/(a²+b²)
		r := a.Mul(a).Add(b.Mul(b))
		p[0] = b.Div(r)
		p[1] = a.Neg().Div(r)
	case OpAbs:
		p[0] = Select(a, one, g.Const(-1))
	case OpMin: // follows the smaller operand; b on a tie
		d := b.Sub(a)
		p[0], p[1] = Select(d, one, zero), Select(d, zero, one)
	case OpMax: // follows the larger operand; b on a tie
		d := a.Sub(b)
		p[0], p[1] = Select(d, one, zero), Select(d, zero, one)
	}
	// OpSelect is differentiated as a whole (see tangent and Cotangent);
	// comparisons, floor, ceil and sign have the partial derivative 0
	// (no entry) wherever they are differentiable.
	return p
}

// Reachable marks the nodes the outputs depend on (the outputs
// included): element id of the result is true for node id.
func (g *Graph) Reachable(outs []Expr) []bool {
	seen := make([]bool, len(g.nodes))
	stack := make([]int32, 0, len(outs))
	for _, o := range outs {
		stack = append(stack, o.id)
	}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[id] {
			continue
		}
		seen[id] = true
		for _, a := range g.nodes[id].Args {
			if a >= 0 && !seen[a] {
				stack = append(stack, a)
			}
		}
	}
	return seen
}

// tangent returns Σ_x ∂out/∂x · seed(x) for every output, where seed
// gives the tangent of each leaf (ok false: zero).
func (g *Graph) tangent(outs []Expr, seed func(n Node) (Expr, bool)) []Expr {
	defer g.derivingScope()()
	seen := g.Reachable(outs)
	top := int32(0)
	for _, o := range outs {
		top = max(top, o.id)
	}
	tan := make([]Expr, top+1) // zero Expr: tangent 0
	for id := int32(0); id <= top; id++ {
		if !seen[id] {
			continue
		}
		n := g.nodes[id]
		if n.Op.Arity() == 0 {
			if s, ok := seed(n); ok {
				tan[id] = s
			}
			continue
		}
		if n.Op == OpSelect {
			// The derivative of the branch taken, Select(c, b', c'): no
			// product with a 0 or 1 that would turn an infinite or NaN
			// derivative of the other branch into NaN.
			tb, tc := tan[n.Args[1]], tan[n.Args[2]]
			if !tb.Valid() && !tc.Valid() {
				continue
			}
			if !tb.Valid() {
				tb = g.Const(0)
			}
			if !tc.Valid() {
				tc = g.Const(0)
			}
			if d := Select(Expr{g, n.Args[0]}, tb, tc); !isZero(d) {
				tan[id] = d
			}
			continue
		}
		var p [3]Expr
		var have bool
		var sum Expr
		for k := range n.Op.Arity() {
			dk := tan[n.Args[k]]
			if !dk.Valid() {
				continue
			}
			if !have {
				p, have = g.partials(id), true
			}
			if !p[k].Valid() {
				continue
			}
			term := p[k].Mul(dk)
			if sum.Valid() {
				sum = sum.Add(term)
			} else {
				sum = term
			}
		}
		if sum.Valid() {
			if v, c := sum.IsConst(); !c || v != 0 {
				tan[id] = sum
			}
		}
	}
	out := make([]Expr, len(outs))
	for i, o := range outs {
		out[i] = tan[o.id]
		if !out[i].Valid() {
			out[i] = g.Const(0)
		}
	}
	return out
}

// Tangent returns the forward-mode derivative program of f (one output
// per state, as Model.F returns them): J_y·v + J_p·w, where the
// components of v and w are the seed inputs Seed(SeedV, i) and
// Seed(SeedW, j).
func Tangent(f []Expr) []Expr {
	g := graphOf(f...)
	if g == nil {
		return nil
	}
	return g.tangent(f, func(n Node) (Expr, bool) {
		switch n.Op {
		case OpState:
			return g.Seed(SeedV, int(n.Index)), true
		case OpParam:
			return g.Seed(SeedW, int(n.Index)), true
		}
		return Expr{}, false
	})
}

// TangentAlong returns J_y·v + J_p·w for f (one output per state, as
// Model.F returns them), with the directions given as expressions of
// the same graph: v[i] the tangent of state i, w[j] that of parameter j.
// A zero Expr, or v and w shorter than the states and parameters, means
// a zero direction there. Forward sensitivities use it with v the
// sensitivity states and w a unit vector, so that terms of zero
// directions never appear in the program.
func TangentAlong(f, v, w []Expr) []Expr {
	g := graphOf(f...)
	if g == nil {
		return nil
	}
	return g.tangent(f, func(n Node) (Expr, bool) {
		var dir []Expr
		switch n.Op {
		case OpState:
			dir = v
		case OpParam:
			dir = w
		default:
			return Expr{}, false
		}
		if i := int(n.Index); i < len(dir) && dir[i].Valid() {
			return dir[i], true
		}
		return Expr{}, false
	})
}

// JacobianY returns the dense Jacobian ∂f/∂y, row-major: entry
// i·dim + j is ∂f_i/∂y_j, with dim = len(f).
func JacobianY(f []Expr) []Expr {
	g := graphOf(f...)
	if g == nil {
		return nil
	}
	dim := len(f)
	jac := make([]Expr, dim*dim)
	for j := range dim {
		col := g.tangent(f, func(n Node) (Expr, bool) {
			if n.Op == OpState && int(n.Index) == j {
				return g.Const(1), true
			}
			return Expr{}, false
		})
		for i := range dim {
			jac[i*dim+j] = col[i]
		}
	}
	return jac
}

// JacobianP returns the dense Jacobian ∂f/∂p of the outputs f with
// respect to m parameters, row-major: entry i·m + j is ∂f_i/∂p_j. The
// initial values of a model (Model.Initial) give ∂y0/∂p this way.
func JacobianP(f []Expr, m int) []Expr {
	g := graphOf(f...)
	if g == nil {
		return nil
	}
	jac := make([]Expr, len(f)*m)
	for j := range m {
		col := g.tangent(f, func(n Node) (Expr, bool) {
			if n.Op == OpParam && int(n.Index) == j {
				return g.Const(1), true
			}
			return Expr{}, false
		})
		for i := range f {
			jac[i*m+j] = col[i]
		}
	}
	return jac
}

// TimeDerivative returns ∂f/∂t (the explicit dependence on t).
func TimeDerivative(f []Expr) []Expr {
	g := graphOf(f...)
	if g == nil {
		return nil
	}
	return g.tangent(f, func(n Node) (Expr, bool) {
		if n.Op == OpTime {
			return g.Const(1), true
		}
		return Expr{}, false
	})
}

// Cotangent returns the reverse-mode derivative programs of f: uᵀJ_y
// (length dim) and uᵀJ_p (length m), where the components of u are the
// seed inputs Seed(SeedU, i), i < len(f).
func Cotangent(f []Expr, dim, m int) (gy, gp []Expr) {
	g := graphOf(f...)
	if g == nil {
		return nil, nil
	}
	defer g.derivingScope()()
	seen := g.Reachable(f)
	top := int32(0)
	for _, o := range f {
		top = max(top, o.id)
	}
	// live: the node depends on a state or a parameter.
	live := make([]bool, top+1)
	for id := int32(0); id <= top; id++ {
		if !seen[id] {
			continue
		}
		n := g.nodes[id]
		switch n.Op {
		case OpState, OpParam:
			live[id] = true
		default:
			for k := range n.Op.Arity() {
				if live[n.Args[k]] {
					live[id] = true
				}
			}
		}
	}
	adj := make([]Expr, top+1)
	accumulate := func(id int32, x Expr) {
		if isZero(x) {
			return
		}
		if adj[id].Valid() {
			adj[id] = g.addAdjoints(adj[id], x)
		} else {
			adj[id] = x
		}
	}
	for i, o := range f {
		if live[o.id] {
			accumulate(o.id, g.Seed(SeedU, i))
		}
	}
	for id := top; id >= 0; id-- {
		a := adj[id]
		n := g.nodes[id]
		if !a.Valid() || n.Op.Arity() == 0 {
			continue
		}
		if n.Op == OpSelect {
			// The adjoint goes to the branch taken, as a select, not as
			// a product with 0 or 1.
			c, zero := Expr{g, n.Args[0]}, g.Const(0)
			if live[n.Args[1]] {
				accumulate(n.Args[1], Select(c, a, zero))
			}
			if live[n.Args[2]] {
				accumulate(n.Args[2], Select(c, zero, a))
			}
			continue
		}
		p := g.partials(id)
		for k := range n.Op.Arity() {
			arg := n.Args[k]
			if live[arg] && p[k].Valid() {
				accumulate(arg, g.scaleAdjoint(p[k], a))
			}
		}
	}
	gy = make([]Expr, dim)
	gp = make([]Expr, m)
	for i := range gy {
		gy[i] = g.Const(0)
	}
	for j := range gp {
		gp[j] = g.Const(0)
	}
	for id := int32(0); id <= top; id++ {
		n := g.nodes[id]
		if !adj[id].Valid() {
			continue
		}
		switch {
		case n.Op == OpState && int(n.Index) < dim:
			gy[n.Index] = adj[id]
		case n.Op == OpParam && int(n.Index) < m:
			gp[n.Index] = adj[id]
		}
	}
	return gy, gp
}

// An adjoint that flows into one branch of a select is itself a select
// with the constant 0 for the other branch. scaleAdjoint and
// addAdjoints keep it one: the partial derivatives of the branch are
// applied inside the select, so that where the branch is not taken its
// adjoint stays 0 instead of 0·∞ or 0·NaN from a partial derivative
// that is not finite there (the sqrt of ifelse(x > 0, sqrt(x), 0) at
// x < 0). Where the branch is taken, the arithmetic is the same as
// without the select.

// scaleAdjoint returns the contribution p·a of an adjoint a through a
// partial derivative p.
func (g *Graph) scaleAdjoint(p, a Expr) Expr {
	if n := g.nodes[a.id]; n.Op == OpSelect {
		c, x, y := Expr{g, n.Args[0]}, Expr{g, n.Args[1]}, Expr{g, n.Args[2]}
		switch {
		case isZero(y):
			return Select(c, g.scaleAdjoint(p, x), y)
		case isZero(x):
			return Select(c, x, g.scaleAdjoint(p, y))
		}
	}
	return p.Mul(a)
}

// addAdjoints returns a + b, as one select where both are selects on the
// same condition.
func (g *Graph) addAdjoints(a, b Expr) Expr {
	na, nb := g.nodes[a.id], g.nodes[b.id]
	if na.Op == OpSelect && nb.Op == OpSelect && na.Args[0] == nb.Args[0] {
		c := Expr{g, na.Args[0]}
		return Select(c, g.addBranch(na.Args[1], nb.Args[1]), g.addBranch(na.Args[2], nb.Args[2]))
	}
	return a.Add(b)
}

// addBranch adds two branches of adjoints; a constant 0 is left out.
func (g *Graph) addBranch(a, b int32) Expr {
	x, y := Expr{g, a}, Expr{g, b}
	switch {
	case isZero(x):
		return y
	case isZero(y):
		return x
	}
	return g.addAdjoints(x, y)
}

// isZero reports whether x is the constant 0.
func isZero(x Expr) bool {
	v, c := x.IsConst()
	return c && v == 0
}

// derivingScope marks the graph as building derivatives until the
// returned function runs.
func (g *Graph) derivingScope() func() {
	old := g.deriving
	g.deriving = true
	return func() { g.deriving = old }
}
