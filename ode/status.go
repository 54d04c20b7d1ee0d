package ode

import "fmt"

// Status is the outcome of one trajectory's solve. The zero value is
// NotRun.
type Status uint8

const (
	// NotRun: the trajectory was never started (the ensemble was
	// cancelled before reaching it).
	NotRun Status = iota
	// Success: the solve reached t1.
	Success
	// MaxStepsReached: the step budget (accepted plus rejected
	// attempts) ran out before t1.
	MaxStepsReached
	// NonFinite: the right-hand side or the state became NaN or ±Inf
	// and shrinking the step did not cure it.
	NonFinite
	// StepUnderflow: the step size fell so low that a step no longer
	// changes the time t meaningfully: below 4ε·|t| (a few units in the
	// last place of t, measured at the time reached), or below the
	// smallest normal float64 near t = 0 (control.MinStep). The error
	// test kept rejecting larger steps, or HMax or H0 was set below the
	// floor. TrajectoryError gives the time and the step.
	StepUnderflow
	// Cancelled: the context was cancelled while the trajectory ran.
	Cancelled
)

var statusText = [...]struct{ name, msg string }{
	NotRun:          {"NotRun", "not run: the ensemble was cancelled before this trajectory started"},
	Success:         {"Success", "success"},
	MaxStepsReached: {"MaxStepsReached", "step budget (accepted plus rejected attempts) exhausted before t1: allow more steps or loosen the tolerances"},
	NonFinite:       {"NonFinite", "non-finite state or right-hand side (NaN or Inf) that smaller steps did not cure"},
	StepUnderflow:   {"StepUnderflow", "step size underflow: the step size fell below a few units in the last place of t (4ε·|t|, or 2.2e-308 near t = 0), where a step no longer changes the time"},
	Cancelled:       {"Cancelled", "cancelled by the context while running"},
}

// String returns the status's name.
func (s Status) String() string {
	if int(s) < len(statusText) {
		return statusText[s].name
	}
	return fmt.Sprintf("Status(%d)", uint8(s))
}

// Message returns a sentence that explains the status to a user.
func (s Status) Message() string {
	if int(s) < len(statusText) {
		return statusText[s].msg
	}
	return "unknown status"
}

// OK reports whether the status is Success.
func (s Status) OK() bool { return s == Success }

// Stats counts the work of one trajectory's solve.
type Stats struct {
	// Accepted and Rejected count step attempts by outcome.
	Accepted, Rejected int
	// FEvals counts right-hand-side evaluations, including the ones
	// spent on the initial step and on save times.
	FEvals int
	// JacEvals and LUs count Jacobian evaluations and LU factorisations
	// (Rosenbrock methods; zero for explicit ones).
	JacEvals, LUs int
}

// Attempts returns Accepted + Rejected.
func (s Stats) Attempts() int { return s.Accepted + s.Rejected }

// TrajectoryError is the error of one failed trajectory: which one, what
// went wrong, and where.
type TrajectoryError struct {
	// Index is the trajectory's index in the ensemble.
	Index int
	// Status is the failure; never Success.
	Status Status
	// T is the time the trajectory had reached (the end of its last
	// accepted step), and H the step size last tried.
	T, H float64
}

// Error formats as "trajectory 17: step size underflow … at t = 3.2 (h = 1e-16)".
func (e *TrajectoryError) Error() string {
	return fmt.Sprintf("trajectory %d: %s, at t = %.17g (last step size tried h = %.3g)", e.Index, e.Status.Message(), e.T, e.H)
}
