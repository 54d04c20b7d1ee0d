package tape

import (
	"fmt"

	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/sym"
)

// initialCache holds the program of a model's initial values, compiled
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
func (s *Set) InitialProgram() (*Program, error) {
	m := s.Model
	if !m.InitialDependsOnParams() {
		return nil, nil
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
	pg, err := s.InitialProgram()
	if pg == nil || err != nil {
		return nil
	}
	return initialEvaluators(pg, s.Model.Dim())
}

// initialEvaluators returns the source of evaluators of the
// initial-value program pg of a model of dim states: each writes y0(p)
// into y0 and, when jac is not nil, ∂y0/∂p into jac. Like every
// evaluator (see Slice lengths) it checks its slices first: p must hold
// NumParams values, y0 dim and jac dim·NumParams; a shorter one panics
// naming the argument and both lengths ("tape: initial: len(y0) = 1,
// want at least 2"), and nothing is written. Longer ones are allowed;
// their values past those lengths are left alone.
func initialEvaluators(pg *Program, dim int) func() ode.InitialFunc {
	np := pg.layout.NumParams
	return func() ode.InitialFunc {
		r, out := pg.NewRegisters(), make([]float64, len(pg.outs))
		return func(p, y0, jac []float64) {
			if len(p) < np || len(y0) < dim || jac != nil && len(jac) < dim*np {
				args := []lenArg{{"p", len(p), np}, {"y0", len(y0), dim}}
				if jac != nil {
					args = append(args, lenArg{"jac", len(jac), dim * np})
				}
				panicShort(pg.Name, args)
			}
			pg.EvalF(r, 0, nil, p, out)
			copy(y0[:dim], out[:dim])
			if jac != nil {
				copy(jac[:dim*np], out[dim:])
			}
		}
	}
}
