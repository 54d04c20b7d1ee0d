package systems

import (
	"fmt"
	"sync"

	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/sym"
	"github.com/gradsolve/gradsolve/sym/tape"
)

// Lane forms of built-in systems: the right-hand side for the lane
// engine (ode.Programs.FLanes and Kernel), from the tape's lane code of
// the same formulas written in the same order as the hand-written
// function, whose bits it therefore has (TestLaneForms). Lorenz and the
// halo have one, so the command's default ensemble runs in lanes, and
// so have the stiff Robertson, HIRES and Van der Pol systems, for the
// Rosenbrock lane engine (their J stays the hand-written one, evaluated
// lane by lane).

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

// robertsonLanes is Robertson's f as robertsonF computes it.
var robertsonLanes = &laneForm{model: func() *sym.Model {
	m := sym.NewModel("robertson")
	y1, y2, y3 := m.State("y1", 1), m.State("y2", 0), m.State("y3", 0)
	k1, k2, k3 := m.Param("k1", 0.04), m.Param("k2", 3e7), m.Param("k3", 1e4)
	b := k3.Mul(y2).Mul(y3)
	c := k2.Mul(y2.Mul(y2))
	m.Deriv(y1, k1.Neg().Mul(y1).Add(b))
	m.Deriv(y2, k1.Mul(y1).Sub(b).Sub(c))
	m.Deriv(y3, c)
	return m
}}

// hiresLanes is HIRES's f as hiresF computes it.
var hiresLanes = &laneForm{model: func() *sym.Model {
	m := sym.NewModel("hires")
	var y [8]sym.Expr
	for i, v := range []float64{1, 0, 0, 0, 0, 0, 0, 0.0057} {
		y[i] = m.State(fmt.Sprintf("y%d", i+1), v)
	}
	c := m.Const
	r := c(280).Mul(y[5]).Mul(y[7])
	m.Deriv(y[0], c(-1.71).Mul(y[0]).Add(c(0.43).Mul(y[1])).Add(c(8.32).Mul(y[2])).Add(c(0.0007)))
	m.Deriv(y[1], c(1.71).Mul(y[0]).Sub(c(8.75).Mul(y[1])))
	m.Deriv(y[2], c(-10.03).Mul(y[2]).Add(c(0.43).Mul(y[3])).Add(c(0.035).Mul(y[4])))
	m.Deriv(y[3], c(8.32).Mul(y[1]).Add(c(1.71).Mul(y[2])).Sub(c(1.12).Mul(y[3])))
	m.Deriv(y[4], c(-1.745).Mul(y[4]).Add(c(0.43).Mul(y[5].Add(y[6]))))
	m.Deriv(y[5], r.Neg().Add(c(0.69).Mul(y[3])).Add(c(1.71).Mul(y[4])).Sub(c(0.43).Mul(y[5])).Add(c(0.69).Mul(y[6])))
	f7 := r.Sub(c(1.81).Mul(y[6]))
	m.Deriv(y[6], f7)
	m.Deriv(y[7], f7.Neg())
	return m
}}

// vanDerPolLanes is Van der Pol's f as vanDerPolF computes it.
var vanDerPolLanes = &laneForm{model: func() *sym.Model {
	m := sym.NewModel("vdp")
	x, v := m.State("x", 2), m.State("v", 0)
	mu := m.Param("mu", 1)
	m.Deriv(x, v)
	m.Deriv(v, mu.Mul(m.Const(1).Sub(x.Mul(x)).Mul(v).Sub(x)))
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

// haloSensLanes is the halo's sensitivity system (haloSensF: f, then
// haloTerms.jvp for each column) in lane form: f's lane code, and the
// lane code of a program that computes one column's J_y·v + J_p·w as
// haloTerms.jvp does — every operation in its order, v and w seed inputs
// (so nothing is folded away as a constant) — called once per column.
func haloSensLanes(paramCols []int) (func() ode.LaneProgram, error) {
	w, err := haloSensWeights(paramCols)
	if err != nil {
		return nil, err
	}
	jvp := haloJVPLanes.program()
	if jvp == nil || !tape.HasLaneCode() {
		return func() ode.LaneProgram { return ode.LaneProgram{} }, nil
	}
	return func() ode.LaneProgram {
		const L = ode.LaneWidth
		fl := haloLanes.program().NewLaneFunc()
		r := jvp.NewLaneRegisters()
		ns := len(w)
		wl := make([]float64, ns*3*L) // each column's w in every lane
		for c, wc := range w {
			for j, x := range wc {
				for l := range L {
					wl[(c*3+j)*L+l] = x
				}
			}
		}
		f := func(t, y, p, dy []float64) {
			fl(t, y[:6*L], p, dy[:6*L])
			for c := range ns {
				o := 6 * (1 + c) * L
				jvp.EvalJVPLanes(r, t, y[:6*L], p, y[o:o+6*L], wl[c*3*L:(c+1)*3*L], dy[o:o+6*L])
			}
		}
		return ode.LaneProgram{F: f}
	}, nil
}

// haloJVPLanes is the program of one column of haloSensF.
var haloJVPLanes = &jvpForm{build: func() (*tape.Program, error) {
	g := sym.NewGraph()
	x, y, z := g.State(0), g.State(1), g.State(2)
	vc, q, rc := g.Param(0), g.Param(1), g.Param(2)
	v := func(i int) sym.Expr { return g.Seed(sym.SeedV, i) }
	w := func(j int) sym.Expr { return g.Seed(sym.SeedW, j) }
	two := g.Const(2)
	// haloTerms.set
	q2 := q.Mul(q)
	zq := z.Div(q2)
	s := rc.Mul(rc).Add(x.Mul(x)).Add(y.Mul(y))
	d := s.Add(z.Mul(zq))
	vc2 := vc.Mul(vc)
	c := vc2.Div(d)
	e := two.Mul(vc2).Div(d.Mul(d))
	// haloTerms.jvp
	gd := x.Mul(v(0)).Add(y.Mul(v(1))).Add(zq.Mul(v(2)))
	tau := e.Mul(gd).Sub(two.Mul(vc).Div(d).Mul(w(0))).Add(e.Mul(rc).Mul(w(2)))
	kap := e.Div(q2.Mul(q)).Mul(z).Mul(w(1))
	txy := tau.Sub(kap.Mul(z))
	outs := []sym.Expr{v(3), v(4), v(5),
		x.Mul(txy).Sub(c.Mul(v(0))),
		y.Mul(txy).Sub(c.Mul(v(1))),
		zq.Mul(tau).Add(kap.Mul(s)).Sub(c.Mul(v(2)).Div(q2))}
	return tape.Compile("halo_jvp", g, outs, 6, 3)
}}

// jvpForm is a program built once on first use.
type jvpForm struct {
	build func() (*tape.Program, error)
	once  sync.Once
	pg    *tape.Program
}

func (jf *jvpForm) program() *tape.Program {
	jf.once.Do(func() {
		if pg, err := jf.build(); err == nil {
			jf.pg = pg
		}
	})
	return jf.pg
}
