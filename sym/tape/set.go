package tape

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/sym"
)

// Set holds the compiled programs of one model.
//
// Build compiles f only. Every derivative program is derived and
// compiled the first time something asks for it — the accessor
// (JVP, JacY, …) or the evaluator that Programs hands out — and kept:
// a forward solve with an explicit method builds nothing but f, and a
// dense Jacobian (Dim² outputs, quadratic in the problem's size to
// derive, compile and hold) exists only once a Rosenbrock engine calls
// it. A program built on demand is the program Build compiled when it
// compiled all of them, bit for bit (see derivedLocked).
//
// A Set comes from Build, and is safe for concurrent use. The model
// belongs to the Set once built: building a program extends the model's
// graph, so the model and its graph must not be changed, or used to
// build other programs, afterwards.
type Set struct {
	// Model is the model the programs come from.
	Model *sym.Model

	f     *Program   // f(t, y, p), compiled by Build
	fOuts []sym.Expr // f's expressions, as Build found them

	lazy [numLazy]lazyProgram

	// gmu is the lock of the model's graph (graphLock); it guards the
	// graph and base, the first derivatives of f once derived (see
	// derivedLocked).
	gmu  *sync.Mutex
	base *baseDerivs

	// sens caches the fused sensitivity programs by column list; mu
	// guards it.
	mu   sync.Mutex
	sens map[string]*Program
	// initial is the program of initial values that depend on the
	// parameters (see initial.go); gmu guards it.
	initial *initialCache
	// initialY0 is the program of y0(p) alone (initialY0Program); gmu
	// guards it.
	initialY0 *initialCache
	// fjvp is the program of f and J·v + J_p·w together (FJVP).
	fjvp lazyProgram
}

// lazyID names a program built on demand.
type lazyID int

// The programs built on demand. Their order here is the order BuildAll
// derives them in: the order Build once derived all of them in, which
// fixes the node ids of every program (see derivedLocked).
const (
	lazyVJP lazyID = iota
	lazyJVP
	lazyDfDt
	lazyJVPVJP
	lazyDfDtVJP
	lazyJacY
	lazyJVPJacY
	lazyJVPDfDt
	numLazy
)

// lazyNames are the programs' names (Program.Name).
var lazyNames = [numLazy]string{
	lazyVJP: "vjp", lazyJVP: "jvp", lazyDfDt: "dfdt", lazyJVPVJP: "jvp_vjp", lazyDfDtVJP: "dfdt_vjp",
	lazyJacY: "jac_y", lazyJVPJacY: "jvp_jac_y", lazyJVPDfDt: "jvp_dfdt",
}

// lazyProgram is a program built once, on first request.
type lazyProgram struct {
	once sync.Once
	pg   atomic.Pointer[Program] // set once built, for a check without the Once
	err  error
}

// baseDerivs are the three first derivatives of f, derived together the
// first time any derivative is needed, before anything else extends the
// graph.
type baseDerivs struct {
	vjp, jvp, dfdt []sym.Expr
}

// graphLocks holds a lock per graph, which serializes every extension
// and compilation of the graph by this package: two Sets built from one
// model share its graph. Keys are weak, and an entry goes with its graph.
var graphLocks sync.Map // weak.Pointer[sym.Graph] → *sync.Mutex

// graphLock returns the lock of graph g.
func graphLock(g *sym.Graph) *sync.Mutex {
	k := weak.Make(g)
	if mu, ok := graphLocks.Load(k); ok {
		return mu.(*sync.Mutex)
	}
	mu, loaded := graphLocks.LoadOrStore(k, new(sync.Mutex))
	if !loaded {
		runtime.AddCleanup(g, func(k weak.Pointer[sym.Graph]) { graphLocks.Delete(k) }, k)
	}
	return mu.(*sync.Mutex)
}

// Build checks the model and compiles its right-hand side f. The
// derivative programs are built when first asked for (see Set).
func Build(m *sym.Model) (*Set, error) {
	f, err := m.F()
	if err != nil {
		return nil, err
	}
	gmu := graphLock(m.Graph())
	gmu.Lock()
	defer gmu.Unlock()
	pg, err := Compile("f", m.Graph(), f, m.Dim(), m.NumParams())
	if err != nil {
		return nil, fmt.Errorf("tape: model %q: %w", m.Name, err)
	}
	return &Set{Model: m, f: pg, fOuts: f, gmu: gmu}, nil
}

// F returns the program of f(t, y, p) (Dim outputs).
func (s *Set) F() *Program { return s.f }

// JVP returns the program of J_y·v + J_p·w (Dim outputs), inputs t, y,
// p, v, w.
func (s *Set) JVP() (*Program, error) { return s.program(lazyJVP) }

// VJP returns the program of uᵀJ_y (Dim outputs) then uᵀJ_p (NumParams
// outputs), inputs t, y, p, u.
func (s *Set) VJP() (*Program, error) { return s.program(lazyVJP) }

// JacY returns the program of ∂f/∂y row-major (Dim·Dim outputs).
func (s *Set) JacY() (*Program, error) { return s.program(lazyJacY) }

// DfDt returns the program of ∂f/∂t (Dim outputs).
func (s *Set) DfDt() (*Program, error) { return s.program(lazyDfDt) }

// JVPJacY returns the program of ∂(J_y·v + J_p·w)/∂y row-major
// (Dim·Dim outputs), inputs t, y, p, v, w: a second derivative
// Rosenbrock sensitivities need.
func (s *Set) JVPJacY() (*Program, error) { return s.program(lazyJVPJacY) }

// JVPDfDt returns the program of ∂(J_y·v + J_p·w)/∂t (Dim outputs),
// inputs t, y, p, v, w.
func (s *Set) JVPDfDt() (*Program, error) { return s.program(lazyJVPDfDt) }

// JVPVJP returns the program of uᵀ·∂(J_y·v + J_p·w)/∂y (Dim outputs)
// then ∂/∂p (NumParams outputs), inputs t, y, p, v, w, u: a second
// derivative the reverse replay of a Rosenbrock method needs.
func (s *Set) JVPVJP() (*Program, error) { return s.program(lazyJVPVJP) }

// DfDtVJP returns the program of uᵀ·∂(∂f/∂t)/∂y (Dim outputs) then ∂/∂p
// (NumParams outputs), inputs t, y, p, u.
func (s *Set) DfDtVJP() (*Program, error) { return s.program(lazyDfDtVJP) }

// BuildAll builds every program not built yet, in the order that gives
// the graph the node ids it had when Build compiled everything at once
// (gradsolve gen's output depends on them).
func (s *Set) BuildAll() error {
	for k := range numLazy {
		if _, err := s.program(k); err != nil {
			return err
		}
	}
	return nil
}

// program returns program k, deriving and compiling it on first use.
func (s *Set) program(k lazyID) (*Program, error) {
	if s.f == nil {
		return nil, errNotBuilt
	}
	return s.build(&s.lazy[k], lazyNames[k], func() []sym.Expr { return s.derivedLocked(k) })
}

// build derives (outs, called with the graph's lock held) and compiles
// the program name into lp once, and returns it.
func (s *Set) build(lp *lazyProgram, name string, outs func() []sym.Expr) (*Program, error) {
	lp.once.Do(func() {
		lp.err = fmt.Errorf("tape: model %q: building %s panicked", s.Model.Name, name) // until it succeeds
		s.gmu.Lock()
		defer s.gmu.Unlock()
		m := s.Model
		pg, err := Compile(name, m.Graph(), outs(), m.Dim(), m.NumParams())
		if err != nil {
			lp.err = fmt.Errorf("tape: model %q: %w", m.Name, err)
			return
		}
		lp.pg.Store(pg)
		lp.err = nil
	})
	return lp.pg.Load(), lp.err
}

// Built returns the names (Program.Name) of the derivative programs
// built so far, in BuildAll's order: what the engines that ran have
// asked for. f, built by Build, and the fused sensitivity programs are
// not listed.
func (s *Set) Built() []string {
	var names []string
	for k := range numLazy {
		if s.built(k) != nil {
			names = append(names, lazyNames[k])
		}
	}
	return names
}

// errNotBuilt is the error of a Set that Build did not make.
var errNotBuilt = errors.New("tape: the Set was not made by Build")

// built returns program k if it is built, else nil; it builds nothing.
func (s *Set) built(k lazyID) *Program { return s.lazy[k].pg.Load() }

// mustProgram returns program k for an evaluator of Programs, which has
// no error to return. Building fails only where the model changed after
// Build: a graph error recorded since.
func (s *Set) mustProgram(k lazyID) *Program {
	pg, err := s.program(k)
	if err != nil {
		panic(fmt.Sprintf("%v (building program %s on first use)", err, lazyNames[k]))
	}
	return pg
}

// derivedLocked derives the outputs of program k; s.gmu is held.
//
// The bits of a program depend on the order its expressions' nodes were
// created in only through reverse mode (Cotangent sums the adjoint
// contributions of a node's readers in descending node order); forward
// mode and the compiler give the same bits for any order. So the first
// derivative of any kind — and a fused sensitivity program (SensF) —
// first derives the three whose nodes the others are built from, uᵀJ,
// J·v + J_p·w and ∂f/∂t, in that order on the graph of f alone, as
// Build used to when it built everything: the nodes of J·v and ∂f/∂t, which
// the second derivatives JVPVJP and DfDtVJP differentiate in reverse
// mode, then come in the same order whatever is asked for first. Those
// three are linear in f's size; the dense Jacobians are the programs
// that are not, and they are derived only when asked for.
func (s *Set) derivedLocked(k lazyID) []sym.Expr {
	b := s.baseLocked()
	m := s.Model
	dim, np := m.Dim(), m.NumParams()
	switch k {
	case lazyVJP:
		return b.vjp
	case lazyJVP:
		return b.jvp
	case lazyDfDt:
		return b.dfdt
	case lazyJVPVJP:
		hy, hp := sym.Cotangent(b.jvp, dim, np)
		return append(hy, hp...)
	case lazyDfDtVJP:
		ty, tp := sym.Cotangent(b.dfdt, dim, np)
		return append(ty, tp...)
	case lazyJacY:
		return sym.JacobianY(s.fOuts)
	case lazyJVPJacY:
		return sym.JacobianY(b.jvp)
	case lazyJVPDfDt:
		return sym.TimeDerivative(b.jvp)
	}
	panic("tape: unknown program")
}

// baseLocked derives uᵀJ, J·v + J_p·w and ∂f/∂t once (see
// derivedLocked); s.gmu is held.
func (s *Set) baseLocked() *baseDerivs {
	if s.base == nil {
		m := s.Model
		gy, gp := sym.Cotangent(s.fOuts, m.Dim(), m.NumParams())
		jvp := sym.Tangent(s.fOuts)
		s.base = &baseDerivs{vjp: append(gy, gp...), jvp: jvp, dfdt: sym.TimeDerivative(s.fOuts)}
	}
	return s.base
}

// FJVP returns the program of f then J_y·v + J_p·w, in one (2·Dim
// outputs), inputs t, y, p, v, w: the source of the sensitivity
// function emitgo writes, whose columns share f's terms. It is derived
// and compiled under the graph's lock on the first call, after the
// first derivatives of f (see derivedLocked), and kept; it is not one of
// the programs BuildAll builds or Built lists.
func (s *Set) FJVP() (*Program, error) {
	if s.f == nil {
		return nil, errNotBuilt
	}
	return s.build(&s.fjvp, "f_jvp", func() []sym.Expr {
		s.baseLocked() // first, for the bits of later programs
		return append(append([]sym.Expr(nil), s.fOuts...), sym.Tangent(s.fOuts)...)
	})
}

// WithGraph calls fn with the lock of the model's graph held: the lock
// under which the Set extends the graph when it builds a program on
// demand (the derivative programs, SensF, InitialProgram, FJVP) in
// whatever goroutine asks for one. Code that reads the graph — walks
// its nodes, or calls the model's F or Y0, which look nodes up — while
// the Set may be in use elsewhere does so inside fn: emitgo.Generate
// prints its formulas this way. fn must not call the Set's methods that
// build programs (they take the same lock), nor keep the graph to read
// after it returns, nor extend it (that could change the bits of
// programs built later; see derivedLocked).
func (s *Set) WithGraph(fn func(g *sym.Graph)) {
	mu := s.gmu
	if mu == nil { // a Set not made by Build
		mu = graphLock(s.Model.Graph())
	}
	mu.Lock()
	defer mu.Unlock()
	fn(s.Model.Graph())
}

// Programs returns evaluators of f and of every derivative program with
// private register files: for one goroutine. A derivative program not
// built yet is built by the first call of its evaluator (in any
// goroutine, once for the Set), so that asking for Programs, or testing
// which evaluators it has, builds nothing. Every evaluator is set.
func (s *Set) Programs() *ode.Programs {
	pg := &ode.Programs{
		F:             s.f.NewFunc(),
		JVP:           s.jvpFunc(lazyJVP),
		VJP:           s.vjpFunc(lazyVJP),
		JacY:          s.func4(lazyJacY),
		DfDt:          s.func4(lazyDfDt),
		JVPJacY:       s.jvpFunc(lazyJVPJacY),
		JVPDfDt:       s.jvpFunc(lazyJVPDfDt),
		JVPVJP:        s.jvpvjpFunc(lazyJVPVJP),
		DfDtVJP:       s.vjpFunc(lazyDfDtVJP),
		FLanes:        s.f.NewLaneFunc(),
		JacYLanes:     s.laneFunc(lazyJacY),
		DfDtLanes:     s.laneFunc(lazyDfDt),
		JVPLanes:      s.jvpLanesFunc(lazyJVP),
		JVPJacYLanes:  s.jvpLanesFunc(lazyJVPJacY),
		JVPDfDtLanes:  s.jvpLanesFunc(lazyJVPDfDt),
		VJPLanes:      s.vjpLanesFunc(lazyVJP),
		JVPVJPLanes:   s.jvpvjpLanesFunc(),
		DfDtVJPLanes:  s.vjpLanesFunc(lazyDfDtVJP),
		VJPKernel:     func() *ode.LaneKernel { return s.mustProgram(lazyVJP).SeededLaneKernel() },
		JVPKernel:     func() *ode.LaneKernel { return s.mustProgram(lazyJVP).SeededLaneKernel() },
		JVPVJPKernel:  func() *ode.LaneKernel { return s.mustProgram(lazyJVPVJP).SeededLaneKernel() },
		DfDtVJPKernel: func() *ode.LaneKernel { return s.mustProgram(lazyDfDtVJP).SeededLaneKernel() },
	}
	pg.Kernel = s.f.LaneKernel()
	return pg
}

// vjpLanesFunc returns the lane evaluator (EvalVJPLanes) of program k,
// a cotangent program with inputs t, y, p and u (the cotangent program,
// or that of ∂f/∂t), built on its first call if need be, with its own
// lane registers.
func (s *Set) vjpLanesFunc(k lazyID) func(t, y, p, u, gy, gp []float64) {
	var pg *Program
	var r []float64
	return func(t, y, p, u, gy, gp []float64) {
		if pg == nil {
			pg = s.mustProgram(k)
			r = pg.NewLaneRegisters()
		}
		pg.EvalVJPLanes(r, t, y, p, u, gy, gp)
	}
}

// jvpvjpLanesFunc returns the lane evaluator of the second-derivative
// cotangent program (EvalJVPVJPLanes), building it on first use.
func (s *Set) jvpvjpLanesFunc() func(t, y, p, v, w, u, gy, gp []float64) {
	var pg *Program
	var r []float64
	return func(t, y, p, v, w, u, gy, gp []float64) {
		if pg == nil {
			pg = s.mustProgram(lazyJVPVJP)
			r = pg.NewLaneRegisters()
		}
		pg.EvalJVPVJPLanes(r, t, y, p, v, w, u, gy, gp)
	}
}

// jvpLanesFunc returns the lane evaluator (EvalJVPLanes) of program k,
// whose inputs are t, y, p, v and w, building the program on first use.
func (s *Set) jvpLanesFunc(k lazyID) func(t, y, p, v, w, out []float64) {
	var pg *Program
	var r []float64
	return func(t, y, p, v, w, out []float64) {
		if pg == nil {
			pg = s.mustProgram(k)
			r = pg.NewLaneRegisters()
		}
		pg.EvalJVPLanes(r, t, y, p, v, w, out)
	}
}

// func4 returns an evaluator of program k, of f's signature: the
// program's own ode.Func (machine code called directly, where it is)
// when it is built, else a function that builds it on its first call
// and calls that.
func (s *Set) func4(k lazyID) ode.Func {
	if pg := s.built(k); pg != nil {
		return pg.NewFunc()
	}
	var fn ode.Func
	return func(t float64, y, p, out []float64) {
		if fn == nil {
			fn = s.mustProgram(k).NewFunc()
		}
		fn(t, y, p, out)
	}
}

// laneFunc returns the lane evaluator (Program.NewLaneFunc) of program
// k, whose inputs are t, y and p, building the program on first use.
func (s *Set) laneFunc(k lazyID) ode.LaneFunc {
	if pg := s.built(k); pg != nil {
		return pg.NewLaneFunc()
	}
	var fn ode.LaneFunc
	return func(t, y, p, out []float64) {
		if fn == nil {
			fn = s.mustProgram(k).NewLaneFunc()
		}
		fn(t, y, p, out)
	}
}

// jvpFunc returns an evaluator of program k with inputs t, y, p, v, w.
func (s *Set) jvpFunc(k lazyID) func(t float64, y, p, v, w, out []float64) {
	pg, r := s.builtRegs(k)
	return func(t float64, y, p, v, w, out []float64) {
		if pg == nil {
			pg, r = s.buildRegs(k)
		}
		pg.EvalJVP(r, t, y, p, v, w, out)
	}
}

// vjpFunc returns an evaluator of program k with inputs t, y, p, u.
func (s *Set) vjpFunc(k lazyID) func(t float64, y, p, u, gy, gp []float64) {
	pg, r := s.builtRegs(k)
	return func(t float64, y, p, u, gy, gp []float64) {
		if pg == nil {
			pg, r = s.buildRegs(k)
		}
		pg.EvalVJP(r, t, y, p, u, gy, gp)
	}
}

// jvpvjpFunc returns an evaluator of program k with inputs t, y, p, v,
// w, u.
func (s *Set) jvpvjpFunc(k lazyID) func(t float64, y, p, v, w, u, gy, gp []float64) {
	pg, r := s.builtRegs(k)
	return func(t float64, y, p, v, w, u, gy, gp []float64) {
		if pg == nil {
			pg, r = s.buildRegs(k)
		}
		pg.EvalJVPVJP(r, t, y, p, v, w, u, gy, gp)
	}
}

// builtRegs returns program k and a register file for it if it is
// built, else nil and nil.
func (s *Set) builtRegs(k lazyID) (*Program, []float64) {
	if pg := s.built(k); pg != nil {
		return pg, pg.NewRegisters()
	}
	return nil, nil
}

// buildRegs returns program k, built now if need be, and a register
// file for it.
func (s *Set) buildRegs(k lazyID) (*Program, []float64) {
	pg := s.mustProgram(k)
	return pg, pg.NewRegisters()
}

// Problem returns the model as an ode.Problem whose engines evaluate the
// programs: Programs gives each worker its own register files, and F —
// for callers that use it directly, from any goroutine — borrows one
// from a pool.
func (s *Set) Problem() *ode.Problem {
	m := s.Model
	pool := &sync.Pool{New: func() any { r := s.f.NewRegisters(); return &r }}
	return &ode.Problem{
		Name:      m.Name,
		Dim:       m.Dim(),
		NumParams: m.NumParams(),
		F: func(t float64, y, p, dy []float64) {
			r := pool.Get().(*[]float64)
			s.f.EvalF(*r, t, y, p, dy)
			pool.Put(r)
		},
		Programs:   s.Programs,
		Offers:     ode.AllPrograms, // Programs sets every evaluator (built on first call)
		SensF:      s.SensF,
		SensLanes:  s.SensLanes,
		StateNames: m.StateNames(),
		ParamNames: m.ParamNames(),
		Y0:         s.defaultY0(),
		Initial:    s.initialFunc(),
		P:          m.P(),
		T0:         m.T0,
		T1:         m.T1,
		Stiff:      m.Stiff,
		Symbolic:   s,
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
	pg, err := s.sensProgram(paramCols)
	if err != nil {
		return nil, err
	}
	return pg.NewFunc, nil
}

// SensLanes returns SensF's fused program in lane form, for
// Problem.SensLanes: each call of the returned function gives a lane
// evaluator with its own register file and the program's kernel.
func (s *Set) SensLanes(paramCols []int) (func() ode.LaneProgram, error) {
	pg, err := s.sensProgram(paramCols)
	if err != nil {
		return nil, err
	}
	return func() ode.LaneProgram {
		return ode.LaneProgram{F: pg.NewLaneFunc(), Kernel: pg.LaneKernel()}
	}, nil
}

// SensProgram returns the fused sensitivity program of paramCols, the
// program SensF and SensLanes evaluate (compiled on the first call and
// kept): inputs t, the augmented state (Dim·(1+len(paramCols)) values)
// and p; outputs f then J_y·S_c + ∂f/∂p_j per column. For code
// generators (package sym/emitcuda), which write it out.
func (s *Set) SensProgram(paramCols []int) (*Program, error) { return s.sensProgram(paramCols) }

// sensProgram returns the fused sensitivity program of paramCols (see
// SensF), compiled on the first call and kept.
func (s *Set) sensProgram(paramCols []int) (*Program, error) {
	if s.f == nil {
		return nil, errNotBuilt
	}
	m := s.Model
	dim, np := m.Dim(), m.NumParams()
	key := fmt.Sprint(paramCols)
	for _, j := range paramCols {
		if j >= np {
			return nil, fmt.Errorf("tape: model %q: sensitivity column of parameter %d, but it has %d", m.Name, j, np)
		}
	}
	s.mu.Lock()
	pg := s.sens[key]
	s.mu.Unlock()
	if pg != nil {
		return pg, nil
	}
	s.gmu.Lock()
	defer s.gmu.Unlock()
	s.baseLocked() // first, for the bits of later programs (see derivedLocked)
	s.mu.Lock()
	defer s.mu.Unlock()
	if pg = s.sens[key]; pg == nil { // another caller may have built it meanwhile
		f := s.fOuts
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
		var err error
		if pg, err = Compile("sens", g, outs, dim*(1+len(paramCols)), np); err != nil {
			return nil, fmt.Errorf("tape: model %q: %w", m.Name, err)
		}
		if s.sens == nil {
			s.sens = map[string]*Program{}
		}
		s.sens[key] = pg
	}
	return pg, nil
}
