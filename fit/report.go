package fit

import (
	"encoding/csv"
	"io"
	"strconv"
	"time"

	"github.com/gradsolve/gradsolve/router"
)

// Status is the outcome of one group's fit. The zero value, Running,
// only appears while a fit runs.
type Status int

const (
	// Running: the group is still fitting.
	Running Status = iota
	// Converged: a tolerance test passed (see Tolerances).
	Converged
	// MaxIterations: the group made Spec.MaxIter updates without
	// converging.
	MaxIterations
	// Stalled: no step lowered the loss: the line search (LBFGS) or
	// the damping (LevenbergMarquardt) gave up before the step fell to
	// Tolerances.Step, or the damped system could not be solved.
	Stalled
	// Failed: a solve failed for one of the group's trajectories, or
	// its loss or gradient was not finite, at a point the optimiser
	// could not step back from (the start, or an Adam update). The
	// estimate is the last point at which everything succeeded, if any.
	Failed
	// Cancelled: the context was cancelled while the group was fitting.
	Cancelled
)

var statusText = [...]struct{ name, msg string }{
	Running:       {"Running", "still fitting"},
	Converged:     {"Converged", "converged: a tolerance test passed"},
	MaxIterations: {"MaxIterations", "stopped after the maximum number of iterations without converging: allow more iterations or loosen the tolerances"},
	Stalled:       {"Stalled", "stalled: no step lowered the loss before the step fell to the step tolerance"},
	Failed:        {"Failed", "failed: a solve of one of the group's trajectories failed, or its loss or gradient was not finite"},
	Cancelled:     {"Cancelled", "cancelled by the context"},
}

// String returns the status's name.
func (s Status) String() string {
	if s >= 0 && int(s) < len(statusText) {
		return statusText[s].name
	}
	return "Status(" + strconv.Itoa(int(s)) + ")"
}

// Message returns a sentence that explains the status.
func (s Status) Message() string {
	if s >= 0 && int(s) < len(statusText) {
		return statusText[s].msg
	}
	return "unknown status"
}

// Report is what Run found.
type Report struct {
	// Optimizer names the optimiser ("adam", "lbfgs",
	// "levenberg-marquardt").
	Optimizer string
	// Mode is the route the gradients took: router.Reverse (replay on
	// recorded meshes) or router.Forward (forward sensitivities), and
	// ModeReason says why.
	Mode       router.Mode
	ModeReason string
	// Params names the fitted quantities, in the order of Spec.Params
	// (the problem's names where it has them, else "p[j]" and "y0[d]").
	Params []string
	// Groups holds each group's result, in group order (with Shared,
	// one; with PerTrajectory, one per trajectory).
	Groups []Group
	// Evaluations counts the evaluations of the whole ensemble (each
	// one solve, or one replay, of every trajectory).
	Evaluations int
	// Records counts the recordings (reverse route), the first
	// included.
	Records int
	// Drift holds the drift checks made (Spec.DriftEvery).
	Drift []Drift
	// Elapsed is the wall time of Run.
	Elapsed time.Duration
}

// Group is the result of one group's fit. Matrices are row-major
// len(Params)×len(Params), in natural units.
type Group struct {
	// Trajectories lists the group's trajectories.
	Trajectories []int
	// Estimate holds the fitted values in natural units, in the order
	// of Spec.Params: the last accepted point (the start where the
	// start itself failed).
	Estimate []float64
	// Loss is the group's loss at Estimate; NaN where no point of the
	// group was ever evaluated successfully.
	Loss float64
	// Iterations counts accepted updates; Evaluations the points the
	// group had evaluated (the start, the updates and rejected trials).
	Iterations, Evaluations int
	// Status says how the fit ended; Converged is Status == Converged.
	Status    Status
	Converged bool
	// Err, for a Failed group, says what failed (a trajectory's error,
	// or a non-finite loss), and for a Stalled one may say why; nil
	// otherwise.
	Err error
	// History holds the start (iteration 0) and every accepted update.
	History []Iterate
	// Fisher, Covariance and StdErr are the Fisher information F, its
	// inverse and √diag(F⁻¹) at Estimate, when Spec.Noise asks for them
	// (see Noise). Covariance and StdErr are nil and FisherErr says why
	// where F could not be computed or is singular.
	Fisher, Covariance, StdErr []float64
	FisherErr                  error
}

// Iterate is one point of a group's path.
type Iterate struct {
	// Iteration is the update count (0: the start); Evaluation the
	// ensemble evaluation that computed it (0-based).
	Iteration, Evaluation int
	// Loss is the group's loss there.
	Loss float64
	// Params holds the values in natural units.
	Params []float64
}

// Drift is one comparison of a replay with a fresh recording at the
// same point (Spec.DriftEvery).
type Drift struct {
	// Evaluation is the ensemble evaluation compared (0-based).
	Evaluation int
	// Shift is the relative move of the fitted quantities from the
	// recording point (as RerecordAuto measures it).
	Shift float64
	// StateDrift is the largest relative change of a final state,
	//
	//	max_{i,d} |y_replay − y_fresh| / max(|y_fresh|, atol_d),
	//
	// over the trajectories both solved.
	StateDrift float64
	// Angle is the angle, in degrees, between the gradients (in the
	// optimiser's working coordinates, every group's concatenated) of
	// the replay and of the fresh recording; WorstGroupAngle the
	// largest angle between one group's two gradients.
	Angle, WorstGroupAngle float64
}

// WriteHistory writes every group's history as CSV (encoding/csv)
// with a header:
//
//	group,iteration,evaluation,loss,<one column per fitted quantity>
//
// one row per Iterate, groups in order, numbers in Go's shortest
// round-trip form.
func (r *Report) WriteHistory(w io.Writer) error {
	cw := csv.NewWriter(w)
	row := append([]string{"group", "iteration", "evaluation", "loss"}, r.Params...)
	if err := cw.Write(row); err != nil {
		return err
	}
	for g, gr := range r.Groups {
		for _, it := range gr.History {
			row = append(row[:0], strconv.Itoa(g), strconv.Itoa(it.Iteration), strconv.Itoa(it.Evaluation),
				strconv.FormatFloat(it.Loss, 'g', -1, 64))
			for _, v := range it.Params {
				row = append(row, strconv.FormatFloat(v, 'g', -1, 64))
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
