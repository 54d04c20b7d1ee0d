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
	dim := s.Model.Dim()
	return func() ode.InitialFunc {
		r, out := pg.NewRegisters(), make([]float64, len(pg.outs))
		return func(p, y0, jac []float64) {
			pg.EvalF(r, 0, nil, p, out)
			copy(y0[:dim], out[:dim])
			if jac != nil {
				copy(jac[:len(out)-dim], out[dim:])
			}
		}
	}
}
