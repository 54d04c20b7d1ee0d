package systems

import (
	"sync"

	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/sym"
	"github.com/gradsolve/gradsolve/sym/tape"
)

// Lane forms of built-in systems: the right-hand side for the lane
// engine (ode.Programs.FLanes and Kernel), from the tape's lane code of
// the same formulas written in the same order as the hand-written
// function, whose bits it therefore has (TestLaneForms). Lorenz and the
// halo have one, so the command's default ensemble runs in lanes.

// laneForm is a system's formulas, compiled once on first use.
type laneForm struct {
	model func() *sym.Model
	once  sync.Once
	pg    *tape.Program
}

// program returns the compiled f, or nil.
func (lf *laneForm) program() *tape.Program {
	lf.once.Do(func() {
		if set, err := tape.Build(lf.model()); err == nil {
			lf.pg = set.F()
		}
	})
	return lf.pg
}

// add sets pg's FLanes and Kernel where lane code runs here, and
// returns pg.
func (lf *laneForm) add(pg *ode.Programs) *ode.Programs {
	if !tape.HasLaneCode() {
		return pg
	}
	if f := lf.program(); f != nil {
		pg.FLanes, pg.Kernel = f.NewLaneFunc(), f.LaneKernel()
	}
	return pg
}

// offers is builtinPrograms, with the lane form where it runs here.
func (lf *laneForm) offers() ode.ProgramSet {
	if tape.HasLaneCode() && lf.program() != nil {
		return builtinPrograms | ode.HasFLanes
	}
	return builtinPrograms
}

// lorenzLanes is Lorenz's f as lorenzF computes it.
var lorenzLanes = &laneForm{model: func() *sym.Model {
	m := sym.NewModel("lorenz")
	x, y, z := m.State("x", 1), m.State("y", 0), m.State("z", 0)
	sigma, rho, beta := m.Param("sigma", 10), m.Param("rho", 28), m.Param("beta", 8.0/3)
	m.Deriv(x, sigma.Mul(y.Sub(x)))
	m.Deriv(y, x.Mul(rho.Sub(z)).Sub(y))
	m.Deriv(z, x.Mul(y).Sub(beta.Mul(z)))
	return m
}}

// haloLanes is the halo's f as haloF computes it.
var haloLanes = &laneForm{model: func() *sym.Model {
	m := sym.NewModel("halo")
	x, y, z := m.State("x", 1), m.State("y", 0), m.State("z", 0.2)
	vx, vy, vz := m.State("vx", 0.1), m.State("vy", 0.6), m.State("vz", 0.15)
	vc, q, rc := m.Param("vc", 1), m.Param("q", 0.7), m.Param("rc", 0.2)
	zq := z.Div(q.Mul(q))
	d := rc.Mul(rc).Add(x.Mul(x)).Add(y.Mul(y)).Add(z.Mul(zq))
	k := vc.Neg().Mul(vc).Div(d)
	m.Deriv(x, vx)
	m.Deriv(y, vy)
	m.Deriv(z, vz)
	m.Deriv(vx, k.Mul(x))
	m.Deriv(vy, k.Mul(y))
	m.Deriv(vz, k.Mul(zq))
	return m
}}
