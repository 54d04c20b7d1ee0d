package gradsolve

import "github.com/gradsolve/gradsolve/ode"

// Problem is an ordinary differential equation with its right-hand side,
// names and defaults; see ode.Problem.
type Problem = ode.Problem

// Func is the right-hand-side contract f(t, y, p, dy); see ode.Func.
type Func = ode.Func

// InitialFunc computes an initial state and its Jacobian from the
// parameters; see ode.InitialFunc and Problem.Initial.
type InitialFunc = ode.InitialFunc

// Status is the outcome of one trajectory; see ode.Status.
type Status = ode.Status

// Programs holds a right-hand side's derivative programs; see
// ode.Programs.
type Programs = ode.Programs

// Stats counts the work of one trajectory; see ode.Stats.
type Stats = ode.Stats

// TrajectoryError is the error of one failed trajectory; see
// ode.TrajectoryError.
type TrajectoryError = ode.TrajectoryError

// The trajectory statuses.
const (
	NotRun          = ode.NotRun
	Success         = ode.Success
	MaxStepsReached = ode.MaxStepsReached
	NonFinite       = ode.NonFinite
	StepUnderflow   = ode.StepUnderflow
	Cancelled       = ode.Cancelled
)
