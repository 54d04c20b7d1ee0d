package tape

import (
	"fmt"

	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/sym"
)

// initialCache holds a program of a model's initial values, compiled
// on first use.
type initialCache struct {
	pg  *Program
	err error
}

// InitialProgram returns the program of the model's initial values as
// functions of the parameters: its outputs are y0(p) (Dim values) then
// ∂y0/∂p row-major (Dim×NumParams), its only inputs the parameters (a
// Layout of 0 states: evaluate it with EvalF and empty t and y). It is
// compiled on the first call and kept. It returns nil and no error
// when no initial value depends on a parameter.
//
// Deriving ∂y0/∂p extends the graph, so it first derives uᵀJ, J·v and
// ∂f/∂t, as every derivative does (see derivedLocked): a cost linear in
// f's size. Problem.Initial's evaluators ask for it only when given a
// jac to fill (sensitivities, gradients); y0(p) alone, all a forward
// solve needs, comes from a program that extends nothing
// (initialY0Program).
func (s *Set) InitialProgram() (*Program, error) {
	m := s.Model
	if !m.InitialDependsOnParams() {
		return nil, nil
	}
	if s.gmu == nil {
		return nil, errNotBuilt
	}
	s.gmu.Lock() // building extends the graph (see derivedLocked)
	defer s.gmu.Unlock()
	if s.initial == nil {
		s.baseLocked() // first, for the bits of later programs (see derivedLocked)
		c := &initialCache{}
		y0 := m.Initial()
		outs := append(y0, sym.JacobianP(y0, m.NumParams())...)
		if c.pg, c.err = Compile("initial", m.Graph(), outs, 0, m.NumParams()); c.err != nil {
			c.err = fmt.Errorf("tape: model %q: %w", m.Name, c.err)
		}
		s.initial = c
	}
	return s.initial.pg, s.initial.err
}

// initialY0Program returns the program of y0(p) alone (Dim outputs,
// inputs the parameters), compiled on the first call and kept, or nil
// when no initial value depends on a parameter. It adds no node to the
// graph — the initial values' expressions are there, and so are the
// constants of the states whose initial values are numbers, since
// Build's check of the model evaluated them — so it changes nothing in
// the programs built later and needs no derivative first. Its outputs
// are those of InitialProgram's first Dim bit for bit: the same
// operations on the same operands.
func (s *Set) initialY0Program() (*Program, error) {
	m := s.Model
	if !m.InitialDependsOnParams() {
		return nil, nil
	}
	if s.gmu == nil {
		return nil, errNotBuilt
	}
	s.gmu.Lock() // the graph is read, and may be extended by other programs meanwhile
	defer s.gmu.Unlock()
	if s.initialY0 == nil {
		c := &initialCache{}
		if c.pg, c.err = Compile("initial_y0", m.Graph(), m.Initial(), 0, m.NumParams()); c.err != nil {
			c.err = fmt.Errorf("tape: model %q: %w", m.Name, c.err)
		}
		s.initialY0 = c
	}
	return s.initialY0.pg, s.initialY0.err
}

// defaultY0 returns the model's default initial state. Where it is
// computed from initial values that depend on the parameters, it reads
// (and may extend, with constants) the graph, so it holds the graph's
// lock as SensF and InitialProgram do.
func (s *Set) defaultY0() []float64 {
	if !s.Model.InitialDependsOnParams() {
		return s.Model.Y0()
	}
	s.gmu.Lock()
	defer s.gmu.Unlock()
	return s.Model.Y0()
}

// initialFunc returns the source of evaluators for Problem.Initial, or
// nil when no initial value depends on a parameter. (Compile cannot
// fail on the initial values of a model that passes m.F, as Build's
// has: they belong to its graph, which has no error, and use only
// parameters it has.)
func (s *Set) initialFunc() func() ode.InitialFunc {
	y0, err := s.initialY0Program()
	if y0 == nil || err != nil {
		return nil
	}
	full := func() *Program {
		pg, err := s.InitialProgram()
		if err != nil {
			panic(fmt.Sprintf("%v (building program initial on first use)", err))
		}
		return pg
	}
	return initialEvaluators(y0, full, s.Model.Dim())
}

// initialEvaluators returns the source of evaluators of a model's
// initial values, of dim states: each writes y0(p) into y0, from the
// program y0pg of y0(p) alone, and when jac is not nil y0(p) and
// ∂y0/∂p into y0 and jac, from the program full returns on the
// evaluator's first call with a jac (InitialProgram's). Like every
// evaluator (see Slice lengths) it checks its slices first: p must hold
// NumParams values, y0 dim and jac dim·NumParams; a shorter one panics
// naming the argument and both lengths ("tape: initial: len(y0) = 1,
// want at least 2"), and nothing is written. Longer ones are allowed;
// their values past those lengths are left alone.
func initialEvaluators(y0pg *Program, full func() *Program, dim int) func() ode.InitialFunc {
	np := y0pg.layout.NumParams
	return func() ode.InitialFunc {
		r := y0pg.NewRegisters()
		var pg *Program // full, once asked for
		var rf, out []float64
		return func(p, y0, jac []float64) {
			if len(p) < np || len(y0) < dim || jac != nil && len(jac) < dim*np {
				args := []lenArg{{"p", len(p), np}, {"y0", len(y0), dim}}
				if jac != nil {
					args = append(args, lenArg{"jac", len(jac), dim * np})
				}
				panicShort("initial", args)
			}
			if jac == nil {
				y0pg.EvalF(r, 0, nil, p, y0)
				return
			}
			if pg == nil {
				pg = full()
				rf, out = pg.NewRegisters(), make([]float64, len(pg.outs))
			}
			pg.EvalF(rf, 0, nil, p, out)
			copy(y0[:dim], out[:dim])
			copy(jac[:dim*np], out[dim:])
		}
	}
}
