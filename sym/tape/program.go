package tape

import (
	"fmt"
	"math"

	"github.com/gradsolve/gradsolve/ode"

	"github.com/gradsolve/gradsolve/sym"
)

// Instr is one instruction: R[Dst] = Op(R[A], R[B], R[C]). Unused
// operands are 0.
type Instr struct {
	Op           sym.Op
	Dst, A, B, C int32
}

// Layout gives the register offsets of the inputs.
type Layout struct {
	Dim, NumParams int
}

// The register offsets of each input block.
func (l Layout) T() int32 { return 0 }

// Y returns the register of y[0].
func (l Layout) Y() int32 { return 1 }

// P returns the register of p[0].
func (l Layout) P() int32 { return int32(1 + l.Dim) }

// V returns the register of v[0].
func (l Layout) V() int32 { return int32(1 + l.Dim + l.NumParams) }

// W returns the register of w[0].
func (l Layout) W() int32 { return int32(1 + 2*l.Dim + l.NumParams) }

// U returns the register of u[0].
func (l Layout) U() int32 { return int32(1 + 2*l.Dim + 2*l.NumParams) }

// NumInputs returns the number of input registers.
func (l Layout) NumInputs() int32 { return int32(1 + 3*l.Dim + 2*l.NumParams) }

// Program is compiled straight-line code for a list of outputs.
type Program struct {
	// Name says what the program computes ("f", "jvp", …).
	Name   string
	layout Layout
	consts []float64 // preloaded at registers NumInputs()…
	code   []Instr
	xcode  []xinstr // code as the interpreter runs it (fused trees)
	outs   []int32  // the register of each output in code
	xouts  []int32  // the register of each output in xcode
	nregs  int
	uses   [6]bool    // which input blocks the code reads: t, y, p, v, w, u
	jit    *jitCode   // the code as machine code, or nil (see jit.go)
	entry  uintptr    // the machine code when it is one piece, else 0
	lane   *laneState // the lane code, compiled on first use (lanes.go)
	// callFuncs: the math functions stay Go calls in this program's
	// machine code (inlineSteps > maxInlineSteps).
	callFuncs bool
	// fnConsts is, for each math function the lane code computes itself
	// (laneFuncs) and the program uses, the register of the first of its
	// constants (preloaded after the program's own).
	fnConsts map[sym.Op]int32
}

// Layout returns the register layout.
func (pg *Program) Layout() Layout { return pg.layout }

// Code returns the instructions (do not modify).
func (pg *Program) Code() []Instr { return pg.code }

// Consts returns the constants, preloaded at registers
// Layout().NumInputs() onwards (do not modify).
func (pg *Program) Consts() []float64 { return pg.consts }

// Outputs returns the register of each output (do not modify).
func (pg *Program) Outputs() []int32 { return pg.outs }

// NumRegisters returns the size of the register file.
func (pg *Program) NumRegisters() int { return pg.nregs }

// NewRegisters returns a register file for the program, with its
// constants loaded. Give each goroutine its own.
func (pg *Program) NewRegisters() []float64 {
	r := make([]float64, pg.nregs)
	copy(r[pg.layout.NumInputs():], pg.consts)
	return r
}

// NewFunc returns the program as an ode.Func, f(t, y, p, out), with a
// register file of its own: for programs whose inputs are t, y and p,
// for one goroutine. Where the program is machine code with a direct
// entry and this build and its self-test allow it (see direct.go), the
// function is that code itself, called by Go with no wrapper in
// between; else it calls EvalF. Both give the same bits.
func (pg *Program) NewFunc() ode.Func {
	r := pg.NewRegisters()
	if pg.jit != nil && pg.jit.fentry != 0 && directEntry() == nil {
		return directFunc(pg.jit, &r[0])
	}
	return func(t float64, y, p, out []float64) { pg.EvalF(r, t, y, p, out) }
}

// Compile turns outputs of graph g into a program for a problem with dim
// states and m parameters. Every output must belong to g; the seeds and
// indices it uses must fit dim and m.
func Compile(name string, g *sym.Graph, outs []sym.Expr, dim, m int) (*Program, error) {
	if err := g.Err(); err != nil {
		return nil, err
	}
	lay := Layout{Dim: dim, NumParams: m}
	pg := &Program{Name: name, layout: lay, lane: &laneState{}}
	for i, o := range outs {
		if o.Graph() != g {
			return nil, fmt.Errorf("tape: %s: output %d does not belong to the graph", name, i)
		}
	}
	need := g.Reachable(outs)     // in id order, a topological order
	reg := make([]int32, g.Len()) // register of each leaf
	nIn := lay.NumInputs()
	// Leaves: inputs and constants.
	for id := range int32(g.Len()) {
		if !need[id] {
			continue
		}
		n := g.Node(id)
		switch n.Op {
		case sym.OpTime:
			reg[id] = lay.T()
			pg.uses[0] = true
		case sym.OpState, sym.OpParam, sym.OpSeed:
			base, size, use := inputBlock(lay, n)
			if int(n.Index) >= size {
				return nil, fmt.Errorf("tape: %s: %v index %d out of range (size %d)", name, n.Op, n.Index, size)
			}
			reg[id] = base + n.Index
			pg.uses[use] = true
		case sym.OpConst:
			reg[id] = nIn + int32(len(pg.consts))
			pg.consts = append(pg.consts, n.Value)
		}
	}
	// The constants of the math functions lane code computes in its
	// straight-line form, after the program's own: they are read from
	// the register file like the others.
	for id := range int32(g.Len()) {
		op := g.Node(id).Op
		if fn := laneFuncs[op]; need[id] && fn != nil && pg.fnConsts[op] == 0 {
			if pg.fnConsts == nil {
				pg.fnConsts = map[sym.Op]int32{}
			}
			pg.fnConsts[op] = nIn + int32(len(pg.consts))
			for _, b := range fn.Consts {
				pg.consts = append(pg.consts, math.Float64frombits(b))
			}
		}
	}
	// Operations, in id order (a topological order).
	nOps := 0
	for id := range int32(g.Len()) {
		if need[id] && g.Node(id).Op.Arity() > 0 {
			nOps++
		}
	}
	ops := make([]int32, 0, nOps)
	for id := range int32(g.Len()) {
		if need[id] && g.Node(id).Op.Arity() > 0 {
			ops = append(ops, id)
		}
	}
	base := nIn + int32(len(pg.consts))
	// The plain code: one instruction per operation. The operand lists
	// share one array (a slice of each node's own Args would make every
	// node escape to the heap).
	units := make([]unit, len(ops))
	args := make([]int32, 0, 3*len(ops))
	for k, id := range ops {
		n := g.Node(id)
		at := len(args)
		args = append(args, n.Args[:n.Op.Arity()]...)
		units[k] = unit{node: id, op: uint16(n.Op), reads: args[at:len(args):len(args)]}
	}
	plainRegs, nPlain := allocate(units, outs, reg, base, g.Len())
	pg.code = make([]Instr, 0, len(units))
	for _, u := range units {
		in := Instr{Op: sym.Op(u.op), Dst: plainRegs[u.node]}
		args := [3]*int32{&in.A, &in.B, &in.C}
		for a, r := range u.reads {
			*args[a] = plainRegs[r]
		}
		pg.code = append(pg.code, in)
	}
	// The interpreter's code: two-level arithmetic trees fused.
	fused := fuse(g, ops, outs)
	execRegs, nExec := allocate(fused, outs, reg, base, g.Len())
	pg.xcode = make([]xinstr, 0, len(fused))
	for _, u := range fused {
		x := xinstr{op: u.op, d: execRegs[u.node]}
		for a, r := range u.reads {
			x.a[a] = execRegs[r]
		}
		pg.xcode = append(pg.xcode, x)
	}
	pg.nregs = int(max(nPlain, nExec))
	pg.outs = make([]int32, len(outs))
	pg.xouts = make([]int32, len(outs))
	for i, o := range outs {
		pg.outs[i] = plainRegs[o.ID()]
		pg.xouts[i] = execRegs[o.ID()]
	}
	pg.callFuncs = pg.inlineSteps() > maxInlineSteps
	if pg.jit = compileJIT(pg); pg.jit != nil && len(pg.jit.segs) == 1 {
		pg.entry = pg.jit.segs[0].entry
	}
	return pg, nil
}

// unit is one instruction to allocate registers for: it computes node
// from the values of the nodes in reads.
type unit struct {
	node  int32
	op    uint16
	reads []int32
}

// allocate assigns registers to the results of units by linear scan:
// leaves keep their fixed registers (leafReg), each result takes a free
// register (one whose value has no reader left) or a new one from base
// upwards. Outputs stay live to the end. It returns the register of
// every node and the register count.
func allocate(units []unit, outs []sym.Expr, leafReg []int32, base int32, nNodes int) ([]int32, int32) {
	reg := append([]int32(nil), leafReg...)
	lastUse := make([]int32, nNodes)
	isResult := make([]bool, nNodes)
	for i := range lastUse {
		lastUse[i] = -1
	}
	for k, u := range units {
		isResult[u.node] = true
		for _, r := range u.reads {
			lastUse[r] = int32(k)
		}
	}
	for _, o := range outs {
		lastUse[o.ID()] = math.MaxInt32
	}
	next := base
	var free []int32
	for k, u := range units {
		// Free operands read for the last time here before choosing the
		// destination: an instruction may overwrite its own operand.
		for _, r := range u.reads {
			if lastUse[r] == int32(k) && isResult[r] {
				lastUse[r] = -2 // free once even if read twice here
				free = append(free, reg[r])
			}
		}
		if len(free) > 0 {
			reg[u.node] = free[len(free)-1]
			free = free[:len(free)-1]
		} else {
			reg[u.node] = next
			next++
		}
	}
	return reg, next
}

// fuse groups the operations into the interpreter's instructions: an
// arithmetic operation (+ − × ÷) whose operand is an arithmetic
// operation read by nobody else computes that operand itself, in the
// same dispatch, without storing it (shapes L, R and B of
// fusedCode). Parents choose first (descending ids), so a node absorbed
// by its parent does not absorb its own operands: trees are two levels
// deep. Every operation is still computed exactly once, in an order
// that respects its dependencies.
func fuse(g *sym.Graph, ops []int32, outs []sym.Expr) []unit {
	uses := make([]int32, g.Len())
	for _, id := range ops {
		n := g.Node(id)
		for a := range n.Op.Arity() {
			uses[n.Args[a]]++
		}
	}
	for _, o := range outs {
		uses[o.ID()]++
	}
	arith := func(op sym.Op) bool {
		return op == sym.OpAdd || op == sym.OpSub || op == sym.OpMul || op == sym.OpDiv
	}
	absorbed := make([]bool, g.Len())
	shape := make([]byte, g.Len()) // 0: not fused
	for k := len(ops) - 1; k >= 0; k-- {
		id := ops[k]
		n := g.Node(id)
		if absorbed[id] || !arith(n.Op) {
			continue
		}
		inl := func(arg int32) bool { return arith(g.Node(arg).Op) && uses[arg] == 1 }
		l, r := inl(n.Args[0]), inl(n.Args[1])
		switch {
		case l && r:
			shape[id] = 'B'
		case l:
			shape[id] = 'L'
		case r:
			shape[id] = 'R'
		default:
			continue
		}
		if l {
			absorbed[n.Args[0]] = true
		}
		if r {
			absorbed[n.Args[1]] = true
		}
	}
	n := 0
	for _, id := range ops {
		if !absorbed[id] {
			n++
		}
	}
	units := make([]unit, 0, n)
	args := make([]int32, 0, 4*n) // every unit's operands, in one array
	for _, id := range ops {
		if absorbed[id] {
			continue
		}
		n := g.Node(id)
		at := len(args)
		op := uint16(n.Op)
		if sh := shape[id]; sh != 0 {
			a, b := g.Node(n.Args[0]), g.Node(n.Args[1])
			switch sh {
			case 'L':
				op = fusedCode('L', n.Op, a.Op, 0)
				args = append(args, a.Args[0], a.Args[1], n.Args[1])
			case 'R':
				op = fusedCode('R', n.Op, b.Op, 0)
				args = append(args, n.Args[0], b.Args[0], b.Args[1])
			case 'B':
				op = fusedCode('B', n.Op, a.Op, b.Op)
				args = append(args, a.Args[0], a.Args[1], b.Args[0], b.Args[1])
			}
		} else {
			args = append(args, n.Args[:n.Op.Arity()]...)
		}
		units = append(units, unit{node: id, op: op, reads: args[at:len(args):len(args)]})
	}
	return units
}

func inputBlock(lay Layout, n sym.Node) (base int32, size, use int) {
	switch n.Op {
	case sym.OpState:
		return lay.Y(), lay.Dim, 1
	case sym.OpParam:
		return lay.P(), lay.NumParams, 2
	}
	switch n.Kind {
	case sym.SeedV:
		return lay.V(), lay.Dim, 3
	case sym.SeedW:
		return lay.W(), lay.NumParams, 4
	}
	return lay.U(), lay.Dim, 5
}
