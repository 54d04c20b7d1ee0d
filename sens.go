package gradsolve

import (
	"fmt"

	"github.com/gradsolve/gradsolve/ode"
)

// Wrt names one quantity to differentiate by: a parameter p[Index], or
// with Y0 set an initial value y0[Index].
type Wrt struct {
	Y0    bool
	Index int
}

// Param returns the Wrt of parameter p[j].
func Param(j int) Wrt { return Wrt{Index: j} }

// InitialValue returns the Wrt of initial value y0[i].
func InitialValue(i int) Wrt { return Wrt{Y0: true, Index: i} }

// Sensitivity asks Solve for forward sensitivities S = ∂y/∂θ, one column
// per entry of Wrt, integrated with the state in the same pass by the
// same method:
//
//	S' = J_y(t, y, p)·S + J_p(t, y, p)·E,   S(t0) = ∂y0/∂θ
//
// where E selects the parameter columns (zero for initial-value
// columns) and S(t0) is the unit vector e_i for initial value i, and for
// parameter p_j zero — or ∂y0/∂p_j where the initial state is computed
// from the parameters (Problem.Initial, and no Ensemble.Y0). Each stage of the Runge–Kutta method is
// applied to (y, S) together, with J evaluated at that stage's state, so
// S is exactly the derivative of the discrete solution with the accepted
// step sizes held fixed — the derivative of the numbers Solve returns.
// The problem must supply a tangent program (Problem.Programs with JVP;
// every problem compiled from formulas has one).
type Sensitivity struct {
	// Wrt lists the columns of S, in order.
	Wrt []Wrt
	// ErrorTest includes S in the error norm. By default only the state
	// controls the step size, so the mesh, and the state, are exactly
	// those of a solve without sensitivities.
	ErrorTest bool
}

// sensSetup is a validated Sensitivity for one problem: the columns
// and the layout of the augmented state (y, S_1, …, S_ns) the engines
// integrate (engine.Solver).
type sensSetup struct {
	ns       int
	nsp      int // the parameter columns among them
	dim, m   int
	paramCol []int // parameter index of each column, −1 for initial values
	y0Col    []int // initial-value index of each column, −1 for parameters
}

// newSensSetup checks the columns of s for prob. What derivative
// programs the sensitivities need is the engine's to say
// (engine.Engine.Serves).
func newSensSetup(prob *ode.Problem, s *Sensitivity) (*sensSetup, error) {
	if len(s.Wrt) == 0 {
		return nil, inputErr("Sensitivity with no columns: list at least one Wrt")
	}
	ss := &sensSetup{ns: len(s.Wrt), dim: prob.Dim, m: prob.NumParams}
	if err := checkWrt(prob, s.Wrt, "Options.Sens.Wrt"); err != nil {
		return nil, err
	}
	for _, w := range s.Wrt {
		if w.Y0 {
			ss.paramCol, ss.y0Col = append(ss.paramCol, -1), append(ss.y0Col, w.Index)
		} else {
			ss.paramCol, ss.y0Col = append(ss.paramCol, w.Index), append(ss.y0Col, -1)
			ss.nsp++
		}
	}
	return ss, nil
}

// augDim returns the dimension of the augmented state (y, S): S is
// stored column by column after y, so column c is the contiguous block
// [dim·(1+c), dim·(2+c)).
func (ss *sensSetup) augDim() int { return ss.dim * (1 + ss.ns) }

// sensWorker holds one worker's buffers of the augmented state.
type sensWorker struct {
	ss    *sensSetup
	y0    []float64 // augmented initial state
	y     []float64 // augmented final state
	saved []float64 // augmented saved states, K rows
}

func (ss *sensSetup) newWorker(k int) *sensWorker {
	na := ss.augDim()
	return &sensWorker{ss: ss, y0: make([]float64, na), y: make([]float64, na), saved: make([]float64, k*na)}
}

// initial fills the augmented initial state from y0 and, where the
// initial states come from the parameters, the parameter columns from
// s0: ∂y0/∂p_j of the trajectory, one block of Dim values per parameter
// column in order, as initialStates computed it (nil: they start at
// zero).
func (sw *sensWorker) initial(y0, s0 []float64) []float64 {
	ss := sw.ss
	copy(sw.y0, y0)
	clear(sw.y0[ss.dim:])
	q := 0
	for c, i := range ss.y0Col {
		if i >= 0 {
			sw.y0[ss.dim*(1+c)+i] = 1
			continue
		}
		if s0 != nil {
			copy(sw.y0[ss.dim*(1+c):ss.dim*(2+c)], s0[q*ss.dim:(q+1)*ss.dim])
		}
		q++
	}
	return sw.y0
}

// scatter splits an augmented state into y (dim) and S (dim×ns, row-major:
// S[d·ns + c] = ∂y_d/∂θ_c).
func (ss *sensSetup) scatter(aug, y, s []float64) {
	copy(y, aug[:ss.dim])
	for c := range ss.ns {
		col := aug[ss.dim*(1+c) : ss.dim*(2+c)]
		for d, v := range col {
			s[d*ss.ns+c] = v
		}
	}
}

func (w Wrt) String() string {
	if w.Y0 {
		return fmt.Sprintf("y0[%d]", w.Index)
	}
	return fmt.Sprintf("p[%d]", w.Index)
}

// checkWrt checks that every column of wrt (the Go field named field)
// is in range and listed once.
func checkWrt(prob *Problem, wrt []Wrt, field string) error {
	seen := make(map[Wrt]bool, len(wrt))
	for c, w := range wrt {
		limit, what := prob.NumParams, "parameter"
		if w.Y0 {
			limit, what = prob.Dim, "initial value"
		}
		if w.Index < 0 || w.Index >= limit {
			return inputErr("%s[%d]: %s index %d out of range [0, %d)", field, c, what, w.Index, limit)
		}
		if seen[w] {
			return inputErr("%s[%d]: %s listed twice", field, c, w)
		}
		seen[w] = true
	}
	return nil
}
