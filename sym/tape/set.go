package tape

import (
	"fmt"
	"sync"

	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/sym"
)

// Set holds the compiled programs of one model.
type Set struct {
	// Model is the model the programs come from.
	Model *sym.Model
	// F computes f(t, y, p) (Dim outputs).
	F *Program
	// JVP computes J_y·v + J_p·w (Dim outputs).
	JVP *Program
	// VJP computes uᵀJ_y (Dim outputs) then uᵀJ_p (NumParams outputs).
	VJP *Program
	// JacY computes ∂f/∂y row-major (Dim·Dim outputs).
	JacY *Program
	// DfDt computes ∂f/∂t (Dim outputs).
	DfDt *Program
	// JVPJacY computes ∂(J_y·v + J_p·w)/∂y row-major (Dim·Dim outputs)
	// and JVPDfDt its ∂/∂t (Dim outputs), with inputs t, y, p, v, w:
	// the second derivatives Rosenbrock sensitivities need.
	JVPJacY, JVPDfDt *Program
	// JVPVJP computes uᵀ·∂(J_y·v + J_p·w)/∂y (Dim outputs) then ∂/∂p
	// (NumParams outputs), inputs t, y, p, v, w, u; DfDtVJP computes
	// uᵀ·∂(∂f/∂t)/∂y then ∂/∂p, inputs t, y, p, u: the second
	// derivatives the reverse replay of a Rosenbrock method needs.
	JVPVJP, DfDtVJP *Program

	// sens caches the fused sensitivity programs by column list; mu
	// guards it and the graph, which building one extends.
	mu   sync.Mutex
	sens map[string]*Program
	// initial is the program of initial values that depend on the
	// parameters (see initial.go).
	initial *initialCache
}

// Build differentiates the model's right-hand side symbolically and
// compiles the five programs.
func Build(m *sym.Model) (*Set, error) {
	f, err := m.F()
	if err != nil {
		return nil, err
	}
	dim, np := m.Dim(), m.NumParams()
	g := m.Graph()
	gy, gp := sym.Cotangent(f, dim, np)
	jvp := sym.Tangent(f)
	ft := sym.TimeDerivative(f)
	hy, hp := sym.Cotangent(jvp, dim, np)
	ty, tp := sym.Cotangent(ft, dim, np)
	s := &Set{Model: m}
	for _, c := range []struct {
		dst  **Program
		name string
		outs []sym.Expr
	}{
		{&s.F, "f", f},
		{&s.JVP, "jvp", jvp},
		{&s.VJP, "vjp", append(gy, gp...)},
		{&s.JacY, "jac_y", sym.JacobianY(f)},
		{&s.DfDt, "dfdt", ft},
		{&s.JVPJacY, "jvp_jac_y", sym.JacobianY(jvp)},
		{&s.JVPDfDt, "jvp_dfdt", sym.TimeDerivative(jvp)},
		{&s.JVPVJP, "jvp_vjp", append(hy, hp...)},
		{&s.DfDtVJP, "dfdt_vjp", append(ty, tp...)},
	} {
		if *c.dst, err = Compile(c.name, g, c.outs, dim, np); err != nil {
			return nil, fmt.Errorf("tape: model %q: %w", m.Name, err)
		}
	}
	return s, nil
}

// Programs returns evaluators of the five programs with a private
// register file each: for one goroutine.
func (s *Set) Programs() *ode.Programs {
	rj, rv := s.JVP.NewRegisters(), s.VJP.NewRegisters()
	rjj, rjt := s.JVPJacY.NewRegisters(), s.JVPDfDt.NewRegisters()
	rjv, rtv := s.JVPVJP.NewRegisters(), s.DfDtVJP.NewRegisters()
	return &ode.Programs{
		F:    s.F.NewFunc(),
		JVP:  func(t float64, y, p, v, w, out []float64) { s.JVP.EvalJVP(rj, t, y, p, v, w, out) },
		VJP:  func(t float64, y, p, u, gy, gp []float64) { s.VJP.EvalVJP(rv, t, y, p, u, gy, gp) },
		JacY: s.JacY.NewFunc(),
		DfDt: s.DfDt.NewFunc(),
		JVPJacY: func(t float64, y, p, v, w, jac []float64) {
			s.JVPJacY.EvalJVP(rjj, t, y, p, v, w, jac)
		},
		JVPDfDt: func(t float64, y, p, v, w, out []float64) {
			s.JVPDfDt.EvalJVP(rjt, t, y, p, v, w, out)
		},
		JVPVJP: func(t float64, y, p, v, w, u, gy, gp []float64) {
			s.JVPVJP.EvalJVPVJP(rjv, t, y, p, v, w, u, gy, gp)
		},
		DfDtVJP: func(t float64, y, p, u, gy, gp []float64) {
			s.DfDtVJP.EvalVJP(rtv, t, y, p, u, gy, gp)
		},
	}
}

// Problem returns the model as an ode.Problem whose engines evaluate the
// programs: Programs gives each worker its own register files, and F —
// for callers that use it directly, from any goroutine — borrows one
// from a pool.
func (s *Set) Problem() *ode.Problem {
	m := s.Model
	pool := &sync.Pool{New: func() any { r := s.F.NewRegisters(); return &r }}
	return &ode.Problem{
		Name:      m.Name,
		Dim:       m.Dim(),
		NumParams: m.NumParams(),
		F: func(t float64, y, p, dy []float64) {
			r := pool.Get().(*[]float64)
			s.F.EvalF(*r, t, y, p, dy)
			pool.Put(r)
		},
		Programs:   s.Programs,
		SensF:      s.SensF,
		StateNames: m.StateNames(),
		ParamNames: m.ParamNames(),
		Y0:         s.defaultY0(),
		Initial:    s.initialFunc(),
		P:          m.P(),
		T0:         m.T0,
		T1:         m.T1,
		Stiff:      m.Stiff,
	}
}

// SensF returns the right-hand side of the forward sensitivity system
// for the given columns as one fused program, for Problem.SensF: the
// state y followed by one sensitivity column S_c per entry of
// paramCols, and derivatives f(t, y, p) then J_y·S_c + ∂f/∂p_j for a
// column of parameter j = paramCols[c], or J_y·S_c for a column of an
// initial value (paramCols[c] < 0). Derived symbolically with the unit
// direction built in, it shares every subexpression between f and the
// columns and has no terms for the other parameters, where the JVP
// program would be evaluated once per column. The returned function
// gives each caller (one per worker) its own register file. The
// program is compiled once per column list and kept.
func (s *Set) SensF(paramCols []int) (func() ode.Func, error) {
	m := s.Model
	dim, np := m.Dim(), m.NumParams()
	key := fmt.Sprint(paramCols)
	for _, j := range paramCols {
		if j >= np {
			return nil, fmt.Errorf("tape: model %q: sensitivity column of parameter %d, but it has %d", m.Name, j, np)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pg := s.sens[key]
	if pg == nil {
		f, err := m.F()
		if err != nil {
			return nil, err
		}
		g := m.Graph()
		outs := append([]sym.Expr(nil), f...)
		for c, j := range paramCols {
			v := make([]sym.Expr, dim)
			for i := range v {
				v[i] = g.State(dim*(1+c) + i)
			}
			var w []sym.Expr
			if j >= 0 {
				w = make([]sym.Expr, np)
				w[j] = g.Const(1)
			}
			outs = append(outs, sym.TangentAlong(f, v, w)...)
		}
		if pg, err = Compile("sens", g, outs, dim*(1+len(paramCols)), np); err != nil {
			return nil, fmt.Errorf("tape: model %q: %w", m.Name, err)
		}
		if s.sens == nil {
			s.sens = map[string]*Program{}
		}
		s.sens[key] = pg
	}
	return pg.NewFunc, nil
}
