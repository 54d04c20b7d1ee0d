package ode

import (
	"errors"
	"fmt"
	"math"
)

// Func is the right-hand side of dy/dt = f(t, y, p) for one trajectory.
// It must write f(t, y, p) into dy (len(dy) == len(y) == Problem.Dim) and
// must not keep y, p or dy after it returns, nor write into y or p. It
// is called concurrently from several goroutines with different slices,
// so it must not modify shared state. It should not allocate: it runs in
// the innermost loop of every engine.
type Func func(t float64, y, p, dy []float64)

// LaneWidth is the number of trajectories a LaneFunc evaluates at once.
const LaneWidth = 4

// LaneFunc is the right-hand side for LaneWidth trajectories at once, in
// lane-major arrays: lane l has time t[l], state y[d·LaneWidth + l] and
// parameters p[j·LaneWidth + l], and writes f into dy[d·LaneWidth + l].
// Each lane's values must have the bits Func gives for that lane alone:
// the SIMD lane engine relies on it to reproduce the scalar engine bit
// for bit. Like Func it must not keep its arguments, and a value made
// for one goroutine (Programs.FLanes) need not be safe for others.
type LaneFunc func(t, y, p, dy []float64)

// LaneKernel is a right-hand side's lane code (LaneWidth trajectories,
// one per 64-bit lane of a 256-bit AVX2 register, lane-major blocks) as
// x86-64 machine code that an engine copies into its own code, so that a
// whole step attempt of the lane engine runs as one function without
// calls in between. Problems compiled from formulas and the code
// `gradsolve gen` writes provide it (Programs.Kernel, VJPKernel); it is
// only run where the processor has AVX2. Body:
//
//   - reads the addresses of its blocks from DI (the register file,
//     whose first LaneWidth values hold the lanes' times), SI (y) and DX
//     (p) — and, for a program with seeds, R8 (v), R9 (w) and R10 (u) —
//     and writes its outputs, lane-major, to [R11]: the first Dim, and
//     for a cotangent program the parameters' part to [CX];
//   - clobbers R12 and every vector register, and no other general
//     register;
//   - has no RIP-relative operands, no stack use and no jumps out of
//     itself (only relative forward jumps within the body, over the
//     rarely taken paths of math functions), so it runs the same
//     wherever it is copied;
//   - uses VEX encodings only, and ends without vzeroupper or ret.
type LaneKernel struct {
	Body []byte
	// Registers returns a fresh register file for Body, with its
	// constants loaded: one per goroutine.
	Registers func() []float64
}

// LaneProgram is a right-hand side in lane form: F for LaneWidth
// trajectories at once and, where it has one, its Kernel (see
// Programs.FLanes and Programs.Kernel). A forward sensitivity system
// may instead give its machine code by columns (Columns): Kernel is
// then f's, and the system's is f followed by each column's program.
type LaneProgram struct {
	F       LaneFunc
	Kernel  *LaneKernel
	Columns *LaneColumns
}

// LaneColumns is a forward sensitivity system's machine code by
// columns, for a system of Dim states followed by len(W) columns S_c:
// column c's derivative is Kernel — the tangent program J_y·v + J_p·w
// as a LaneKernel with seeds, reading v from R8 and w from R9 and
// writing its Dim outputs to [R11] — evaluated with v = S_c and w =
// W[c]. Together with the LaneProgram's Kernel (f) it must give the
// LaneProgram's F bit for bit.
type LaneColumns struct {
	Kernel *LaneKernel
	// W holds each column's parameter direction w_c (NumParams values,
	// the same in every lane).
	W [][]float64
}

// InitialFunc computes an initial state from the parameters: it writes
// y0(p) into y0 (length Problem.Dim) and, when jac is not nil, the
// Jacobian ∂y0/∂p row-major into jac (Dim×NumParams: jac[i·NumParams +
// j] = ∂y0_i/∂p_j). Like Func it must not keep its arguments.
type InitialFunc func(p, y0, jac []float64)

// Problem is an ordinary differential equation dy/dt = f(t, y, p) with
// y ∈ ℝ^Dim and p ∈ ℝ^NumParams, with optional names and defaults.
//
// The derivative programs the engines need (tangents J·v, cotangents
// wᵀJ, dense Jacobians, the fused sensitivity system) are optional
// fields (Programs, SensF); a Problem that sets only F solves forward,
// and the solvers say which program a request lacks.
type Problem struct {
	// Name labels the problem in results and messages.
	Name string
	// Dim is the state dimension; it must be ≥ 1.
	Dim int
	// NumParams is the parameter count m; it may be 0.
	NumParams int
	// F is the right-hand side. Required.
	F Func

	// StateNames and ParamNames, when set, name the components of y
	// and p (lengths Dim and NumParams).
	StateNames, ParamNames []string

	// Y0 and P, when set, are the default initial state (length Dim)
	// and parameters (length NumParams).
	Y0, P []float64
	// Initial, when set, says that the default initial state depends on
	// the parameters, y0 = y0(p) (a problem file's state x =
	// r0*cos(phi)): it returns an evaluator of y0(p) and ∂y0/∂p for one
	// goroutine. A solve whose ensemble gives no initial states then
	// starts each trajectory from y0(p_i), computed from its own
	// parameters, and forward sensitivities and gradients with respect
	// to p include ∂y0/∂p; initial states given explicitly take its
	// place and do not depend on p. Y0, when also set, should be y0(P).
	// Nil: the default initial state Y0 does not depend on p.
	Initial func() InitialFunc
	// T0 and T1 are the default time span. They are used only when
	// T0 != T1.
	T0, T1 float64

	// Stiff marks a problem on which explicit methods take steps set
	// by stability rather than accuracy.
	Stiff bool

	// Programs, when set, returns evaluators of f and of its derivatives
	// for one goroutine; they may keep private scratch space (a compiled
	// tape's register file). Engines call it once per worker and use its
	// F instead of Problem.F. Nil means Problem.F serves every worker and
	// no derivative programs are available.
	Programs func() *Programs
	// Offers, when not zero, says which derivative programs Programs
	// sets, so that asking what a problem can do (ProgramSet) builds
	// nothing: Programs must then set exactly these (an engine that
	// finds one missing refuses the job). Zero means not declared:
	// ProgramSet calls Programs once and looks. Problems compiled from
	// formulas (package sym/tape) and the built-in systems declare it.
	// It is ignored where Programs is nil.
	Offers ProgramSet

	// SensF, when set, returns a source of fused right-hand sides for
	// the forward sensitivity system with one column per entry of
	// paramCols (a parameter index, or −1 for an initial value): each
	// function it makes maps the state y followed by the columns S_c
	// (Dim·(1+len(paramCols)) values) to f(t, y, p) followed by
	// J_y·S_c + ∂f/∂p_j. Engines call the source once per worker. Nil
	// (or a nil source with a nil error) means sensitivities evaluate F
	// and Programs' JVP once per column. Problems compiled from formulas
	// set it: the tape (package sym/tape) and the code gradsolve gen
	// writes.
	SensF func(paramCols []int) (func() Func, error)
	// SensLanes, when set, is SensF in lane form: the same program for
	// LaneWidth trajectories at once (see LaneFunc and Programs.Kernel),
	// one LaneProgram per call of the returned function (per worker).
	// It must give SensF's bits lane by lane.
	SensLanes func(paramCols []int) (func() LaneProgram, error)

	// Symbolic, when set, is the symbolic model the problem was
	// compiled from — a *tape.Set of package sym/tape, whose Problem
	// sets it — for engines that generate their own code from it (the
	// cuda engine writes its kernels from it) instead of calling F and
	// Programs. It must describe the same f: a copy of a Problem whose
	// F or Programs is replaced must set Symbolic to nil. Nil: the
	// problem is Go functions only, and such engines refuse it.
	Symbolic any
}

// Programs holds evaluators of a right-hand side and its derivatives for
// one goroutine. F is required; a nil derivative means it is not
// available. All write their results into the last argument(s).
type Programs struct {
	// F writes f(t, y, p) into dy.
	F Func
	// JVP writes J_y·v + J_p·w (length Dim) into out, with J_y = ∂f/∂y
	// and J_p = ∂f/∂p at (t, y, p).
	JVP func(t float64, y, p, v, w, out []float64)
	// VJP writes uᵀJ_y (length Dim) into gy and uᵀJ_p (length
	// NumParams) into gp.
	VJP func(t float64, y, p, u, gy, gp []float64)
	// JacY writes ∂f/∂y row-major into jac: jac[i·Dim + j] = ∂f_i/∂y_j.
	JacY func(t float64, y, p, jac []float64)
	// DfDt writes ∂f/∂t into out.
	DfDt func(t float64, y, p, out []float64)
	// FLanes, when set, is F for LaneWidth trajectories at once (see
	// LaneFunc), as packed vector code where the processor has it; the
	// lane engine calls F lane by lane where it is nil.
	FLanes LaneFunc
	// JacYLanes and DfDtLanes, when set, are JacY and DfDt for
	// LaneWidth trajectories at once (see LaneFunc): lane l of the
	// Jacobian writes ∂f_i/∂y_j into jac[(i·Dim + j)·LaneWidth + l]. They
	// must give JacY's and DfDt's bits lane by lane; the Rosenbrock lane
	// engine evaluates J lane by lane where they are nil.
	JacYLanes, DfDtLanes LaneFunc
	// JVPLanes, when set, is JVP for LaneWidth trajectories at once,
	// every block lane-major (see LaneFunc): y, v and out of Dim values,
	// p and w of NumParams values per lane. It must give JVP's bits lane
	// by lane; the Rosenbrock lane engine's sensitivities call JVP lane
	// by lane where it is nil.
	JVPLanes func(t, y, p, v, w, out []float64)
	// JVPJacYLanes and JVPDfDtLanes, when set, are JVPJacY and JVPDfDt
	// for LaneWidth trajectories at once (lane-major, as JVPLanes; the
	// Jacobian's layout as JacYLanes'), with their bits lane by lane.
	JVPJacYLanes, JVPDfDtLanes func(t, y, p, v, w, out []float64)
	// JVPVJPLanes and DfDtVJPLanes, when set, are JVPVJP and DfDtVJP
	// for LaneWidth trajectories at once (lane-major, as VJPLanes), with
	// their bits lane by lane: the Rosenbrock lane engine's reverse
	// replay calls them lane by lane where they are nil.
	JVPVJPLanes  func(t, y, p, v, w, u, gy, gp []float64)
	DfDtVJPLanes func(t, y, p, u, gy, gp []float64)
	// VJPLanes, when set, is VJP for LaneWidth trajectories at once,
	// every block lane-major (see LaneFunc): y, u and gy of Dim values,
	// p and gp of NumParams values per lane. It must give VJP's bits
	// lane by lane; the lane engine's reverse replay calls VJP lane by
	// lane where it is nil.
	VJPLanes func(t, y, p, u, gy, gp []float64)
	// VJPKernel, when set, returns VJPLanes as machine code the lane
	// engine's reverse replay copies into its own (see LaneKernel, with
	// the seed u), or nil where there is none; it may build the
	// cotangent program on its first call.
	VJPKernel func() *LaneKernel
	// JVPKernel, when set, returns JVPLanes as machine code (see
	// LaneKernel, with the seeds v and w) that the Rosenbrock lane
	// engine's forward sensitivities copy into their attempt, or nil
	// where there is none; it may build the tangent program on its
	// first call.
	JVPKernel func() *LaneKernel
	// JVPVJPKernel and DfDtVJPKernel, when set, return JVPVJPLanes and
	// DfDtVJPLanes as machine code (see LaneKernel, with the seeds v,
	// w and u; gy to [R11], gp to [CX]) that the Rosenbrock lane
	// engine's reverse replay copies into its sweep, or nil where there
	// is none; each may build its program on its first call.
	JVPVJPKernel, DfDtVJPKernel func() *LaneKernel
	// Kernel, when not nil, is FLanes as machine code the lane engine
	// copies into its own (see LaneKernel). It must compute FLanes's
	// bits. It is run as it is: set it only from sym/tape or the code
	// gradsolve gen writes. (The engine checks FLanes against F on a
	// few inputs and uses neither FLanes nor Kernel where they differ;
	// it cannot check the machine code itself.)
	Kernel *LaneKernel
	// JVPJacY writes ∂(J_y·v + J_p·w)/∂y row-major (Dim×Dim) into jac,
	// and JVPDfDt its ∂/∂t: the second derivatives that forward
	// sensitivities of a Rosenbrock method need.
	JVPJacY func(t float64, y, p, v, w, jac []float64)
	JVPDfDt func(t float64, y, p, v, w, out []float64)
	// JVPVJP writes uᵀ·∂(J_y·v + J_p·w)/∂y into gy and ∂/∂p into gp;
	// DfDtVJP writes uᵀ·∂(∂f/∂t)/∂y into gy and ∂/∂p into gp: the second
	// derivatives the reverse replay of a Rosenbrock method needs.
	JVPVJP  func(t float64, y, p, v, w, u, gy, gp []float64)
	DfDtVJP func(t float64, y, p, u, gy, gp []float64)
}

// ProgramSet is a set of the derivative programs of Programs, one bit
// each: what a problem offers (Problem.Offers, Problem.ProgramSet) or
// what a job needs.
type ProgramSet uint16

// The derivative programs, one bit per field of Programs (F is always
// there).
const (
	HasJVP ProgramSet = 1 << iota
	HasVJP
	HasJacY
	HasDfDt
	HasJVPJacY
	HasJVPDfDt
	HasJVPVJP
	HasDfDtVJP
	// HasFLanes is the lane form of F (Programs.FLanes): not a
	// derivative, but a program a problem may offer or not.
	HasFLanes

	// AllPrograms is every program of Programs but F: the derivatives
	// and the lane form.
	AllPrograms = HasJVP | HasVJP | HasJacY | HasDfDt | HasJVPJacY | HasJVPDfDt | HasJVPVJP | HasDfDtVJP | HasFLanes
)

// programNames are the names of the bits, in order.
var programNames = [...]string{"JVP", "VJP", "JacY", "DfDt", "JVPJacY", "JVPDfDt", "JVPVJP", "DfDtVJP", "FLanes"}

// Has reports whether s holds every program of x.
func (s ProgramSet) Has(x ProgramSet) bool { return s&x == x }

// String lists the programs of s by their Programs field names, joined
// by "|" ("JVP|VJP"); "none" for the empty set.
func (s ProgramSet) String() string {
	if s == 0 {
		return "none"
	}
	out := ""
	for i, name := range programNames {
		if s&(1<<i) != 0 {
			if out != "" {
				out += "|"
			}
			out += name
		}
	}
	return out
}

// Set returns the derivative programs pg sets (nil: none).
func (pg *Programs) Set() ProgramSet {
	if pg == nil {
		return 0
	}
	var s ProgramSet
	for _, p := range []struct {
		set bool
		bit ProgramSet
	}{{pg.JVP != nil, HasJVP}, {pg.VJP != nil, HasVJP}, {pg.JacY != nil, HasJacY}, {pg.DfDt != nil, HasDfDt},
		{pg.JVPJacY != nil, HasJVPJacY}, {pg.JVPDfDt != nil, HasJVPDfDt}, {pg.JVPVJP != nil, HasJVPVJP}, {pg.DfDtVJP != nil, HasDfDtVJP}, {pg.FLanes != nil, HasFLanes}} {
		if p.set {
			s |= p.bit
		}
	}
	return s
}

// ProgramSet returns the derivative programs the problem offers:
// Offers when it is declared, else — for a problem whose Programs is
// set — the programs one call of Programs sets (that call may allocate
// a worker's scratch space; ask once per job), else none.
func (pr *Problem) ProgramSet() ProgramSet {
	switch {
	case pr.Programs == nil:
		return 0
	case pr.Offers != 0:
		return pr.Offers
	}
	return pr.Programs().Set()
}

// WorkerF returns the right-hand side one worker should call: the F of
// a fresh Programs when the problem has them, else Problem.F.
func (pr *Problem) WorkerF() Func {
	if pr.Programs != nil {
		if pg := pr.Programs(); pg != nil && pg.F != nil {
			return pg.F
		}
	}
	return pr.F
}

// ErrProblem is wrapped by every error Validate returns.
var ErrProblem = errors.New("invalid problem")

// Validate checks that the problem is usable: Dim ≥ 1, NumParams ≥ 0, F
// set, and names and defaults (where given) of the right lengths and
// finite. The error names the problem and the rule broken.
func (pr *Problem) Validate() error {
	if pr == nil {
		return fmt.Errorf("%w: nil problem", ErrProblem)
	}
	name := pr.Name
	if name == "" {
		name = "unnamed"
	}
	switch {
	case pr.Dim < 1:
		return fmt.Errorf("%w: %s: Dim = %d: must be ≥ 1", ErrProblem, name, pr.Dim)
	case pr.NumParams < 0:
		return fmt.Errorf("%w: %s: NumParams = %d: must be ≥ 0", ErrProblem, name, pr.NumParams)
	case pr.F == nil:
		return fmt.Errorf("%w: %s: F is nil: a right-hand side is required", ErrProblem, name)
	case pr.StateNames != nil && len(pr.StateNames) != pr.Dim:
		return fmt.Errorf("%w: %s: %d state names for Dim = %d", ErrProblem, name, len(pr.StateNames), pr.Dim)
	case pr.ParamNames != nil && len(pr.ParamNames) != pr.NumParams:
		return fmt.Errorf("%w: %s: %d parameter names for NumParams = %d", ErrProblem, name, len(pr.ParamNames), pr.NumParams)
	case pr.Y0 != nil && len(pr.Y0) != pr.Dim:
		return fmt.Errorf("%w: %s: default Y0 has length %d, want Dim = %d", ErrProblem, name, len(pr.Y0), pr.Dim)
	case pr.Offers&^AllPrograms != 0:
		return fmt.Errorf("%w: %s: Offers = %#x has bits of no program (AllPrograms = %#x)", ErrProblem, name, uint16(pr.Offers), uint16(AllPrograms))
	case pr.P != nil && len(pr.P) != pr.NumParams:
		return fmt.Errorf("%w: %s: default P has length %d, want NumParams = %d", ErrProblem, name, len(pr.P), pr.NumParams)
	}
	for i, v := range pr.Y0 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: %s: default Y0[%d] = %g is not finite", ErrProblem, name, i, v)
		}
	}
	for i, v := range pr.P {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: %s: default P[%d] = %g is not finite", ErrProblem, name, i, v)
		}
	}
	return nil
}
