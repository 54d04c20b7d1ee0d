package tape

import (
	"fmt"
	"math"

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
	outs   []int32 // the register of each output
	nregs  int
	uses   [6]bool // which input blocks the code reads: t, y, p, v, w, u
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

// Compile turns outputs of graph g into a program for a problem with dim
// states and m parameters. Every output must belong to g; the seeds and
// indices it uses must fit dim and m.
func Compile(name string, g *sym.Graph, outs []sym.Expr, dim, m int) (*Program, error) {
	if err := g.Err(); err != nil {
		return nil, err
	}
	lay := Layout{Dim: dim, NumParams: m}
	pg := &Program{Name: name, layout: lay}
	// Reachable nodes, in id order (a topological order).
	need := make([]bool, g.Len())
	var stack []int32
	for i, o := range outs {
		if o.Graph() != g {
			return nil, fmt.Errorf("tape: %s: output %d does not belong to the graph", name, i)
		}
		stack = append(stack, o.ID())
	}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if need[id] {
			continue
		}
		need[id] = true
		n := g.Node(id)
		for k := range n.Op.Arity() {
			stack = append(stack, n.Args[k])
		}
	}
	reg := make([]int32, g.Len()) // register of each needed node
	lastUse := make([]int32, g.Len())
	for i := range lastUse {
		lastUse[i] = -1
	}
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
	// Operations: last use of each operand, in instruction order.
	var ops []int32
	for id := range int32(g.Len()) {
		if need[id] && g.Node(id).Op.Arity() > 0 {
			ops = append(ops, id)
		}
	}
	for k, id := range ops {
		n := g.Node(id)
		for a := range n.Op.Arity() {
			lastUse[n.Args[a]] = int32(k)
		}
	}
	for _, o := range outs {
		lastUse[o.ID()] = math.MaxInt32 // outputs stay live to the end
	}
	// Linear-scan allocation of temporaries with a free list.
	next := nIn + int32(len(pg.consts))
	var free []int32
	for k, id := range ops {
		n := g.Node(id)
		in := Instr{Op: n.Op}
		args := [3]*int32{&in.A, &in.B, &in.C}
		for a := range n.Op.Arity() {
			*args[a] = reg[n.Args[a]]
		}
		// Free operands whose last use is this instruction before picking
		// the destination: an instruction may overwrite its own operand.
		for a := range n.Op.Arity() {
			arg := n.Args[a]
			if lastUse[arg] == int32(k) && g.Node(arg).Op.Arity() > 0 {
				lastUse[arg] = -2 // freed once even if used twice here
				free = append(free, reg[arg])
			}
		}
		if len(free) > 0 {
			in.Dst = free[len(free)-1]
			free = free[:len(free)-1]
		} else {
			in.Dst = next
			next++
		}
		reg[id] = in.Dst
		if lastUse[id] == -1 { // never read and not an output: cannot happen for needed nodes
			free = append(free, in.Dst)
		}
		pg.code = append(pg.code, in)
	}
	pg.nregs = int(next)
	pg.outs = make([]int32, len(outs))
	for i, o := range outs {
		pg.outs[i] = reg[o.ID()]
	}
	return pg, nil
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
