package fit

import (
	"time"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/router"
)

// Spec says what to fit, to what, and how. The zero values of its
// optional fields are working choices; each field's comment says what
// zero means.
type Spec struct {
	// Problem is the ODE; required. The reverse route needs its
	// cotangent program, the forward route its tangent program (every
	// problem compiled from formulas has both).
	Problem *gradsolve.Problem
	// Ensemble is the template of every solve: N, the initial states,
	// the parameters that are not fitted, the spans and the save times,
	// as in gradsolve.Ensemble. The fitted entries of P (and of Y0) are
	// replaced by the groups' current values in each solve.
	Ensemble gradsolve.Ensemble
	// Options are the options of every solve (method, tolerances,
	// workers, …). Sens, Mode and GradientWrt must be left unset: the
	// fit sets the sensitivities itself and Spec.Mode chooses the
	// route.
	Options gradsolve.Options

	// Data, when set, holds the targets and weights of the weighted
	// least-squares loss (gradsolve.LeastSquaresFit): the final states,
	// the saved states, or both. Exactly one of Data and Loss must be
	// set; LevenbergMarquardt and the Fisher information need Data.
	Data *gradsolve.FitData
	// Loss, when set, is a loss of one's own with its cotangents. With
	// more than one group it must be a sum of terms, one per
	// trajectory, that leaves out the trajectories whose Status is not
	// Success, as gradsolve's ready-made losses do: each group's loss
	// is then the loss evaluated with the other groups' trajectories
	// marked as not run (one evaluation per group and solve, so a cost
	// of order groups × N per solve).
	Loss gradsolve.Loss

	// Params lists the quantities to fit: parameters
	// (gradsolve.Param(j)) and initial values (gradsolve.InitialValue(d)),
	// each listed once, with its transform. At least one is required.
	Params []Param
	// Owner says which trajectories share the fitted values: Shared
	// (the zero value: one set for the whole ensemble), PerTrajectory
	// (one set per trajectory: N concurrent fits) or Grouped (one set
	// per group, as Group says).
	Owner Ownership
	// Group holds, with Owner = Grouped, the group of each trajectory
	// (length N). Groups are numbered 0, 1, …, G−1 and none may be
	// empty. It must be nil for the other owners.
	Group []int
	// Start holds the starting values in natural units: nil (each
	// group starts from the template's values of its first
	// trajectory), len(Params) values (shared by every group) or
	// G·len(Params) (row g: group g's start). Each must lie inside its
	// transform's domain (> 0 for Log, strictly inside the bounds for
	// Logit).
	Start []float64

	// Optimizer is one of *Adam, *LBFGS and *LevenbergMarquardt. Nil
	// means LevenbergMarquardt with Data and LBFGS with a Loss.
	Optimizer Optimizer
	// Mode chooses how gradients are computed: router.Auto (the zero
	// value) lets the fit decide (see Run), router.Reverse takes the
	// reverse replay on recorded meshes and router.Forward forward
	// sensitivities. LevenbergMarquardt needs router.Forward or Auto.
	Mode router.Mode
	// MaxIter bounds each group's iterations (accepted updates); 0
	// means the optimiser's default (Adam 1000, LBFGS 200,
	// LevenbergMarquardt 100). Negative is an error.
	MaxIter int
	// Tol holds the convergence tolerances.
	Tol Tolerances

	// Rerecord is the re-record policy of the reverse route: when to
	// record the meshes again. The zero value is RerecordAuto with the
	// default threshold.
	Rerecord Rerecord
	// DriftEvery, when > 0, makes every DriftEvery-th replay also
	// record afresh at the same point and compare (see Drift): a check
	// of what replaying an old mesh costs in accuracy. The fresh
	// recording is then dropped (it does not count in Report.Records).
	// 0 means no checks; negative is an error. Ignored on the forward
	// route, which records nothing.
	DriftEvery int

	// Noise, when set, asks for the Fisher information, covariance and
	// standard errors of each group's estimate (see Noise). Needs Data.
	Noise *Noise

	// Progress, if not nil, is called after each evaluation of the
	// ensemble, from the goroutine that called Run.
	Progress func(Progress)
}

// Param is one quantity to fit.
type Param struct {
	// Wrt names it: gradsolve.Param(j) for parameter p[j],
	// gradsolve.InitialValue(d) for initial value y0[d]. Fitting an
	// initial value needs explicit initial states where the problem
	// computes them from the parameters (Problem.Initial): set
	// Ensemble.Y0.
	Wrt gradsolve.Wrt
	// Transform maps the optimiser's working coordinate to the natural
	// value: Identity (the zero value), Log (positive values) or Logit
	// (values inside bounds).
	Transform Transform
	// Scale is the quantity's typical size, > 0, in natural units; 0
	// means automatic. With the Identity transform the working
	// coordinate is value/Scale (automatic: the group's |start|, or 1
	// where the start is 0), so that a unit move is of the order of the
	// value itself, as it is for Log and Logit. It is also the floor of
	// the re-record policy's relative move (automatic:
	// gradsolve.ShiftParamFloor for a parameter, the absolute
	// tolerance of its component for an initial value, as
	// Recording.Shift measures). Negative is an error.
	Scale float64
}

// Ownership says which trajectories share the fitted values.
type Ownership int

const (
	// Shared: one set of values for the whole ensemble (one group).
	Shared Ownership = iota
	// PerTrajectory: one set per trajectory, N independent fits that
	// share their solves.
	PerTrajectory
	// Grouped: one set per group of trajectories (Spec.Group), like
	// the stars of one stream.
	Grouped
)

// String returns "shared", "per-trajectory" or "grouped".
func (o Ownership) String() string {
	switch o {
	case Shared:
		return "shared"
	case PerTrajectory:
		return "per-trajectory"
	case Grouped:
		return "grouped"
	}
	return "Ownership(" + itoa(int(o)) + ")"
}

// Tolerances end a group's fit as converged. Each test is made after
// every accepted update of the group, in the optimiser's working
// coordinates z (see Param.Scale and Transform):
//
//	step:  max_c |Δz_c| ≤ Step
//	loss:  |L_new − L_old| ≤ Loss·|L_new|
//	grad:  max_c |∂L/∂z_c| ≤ Grad
//
// A proposed step of at most Step that does not lower the loss (a
// rejected LBFGS trial or LevenbergMarquardt step) also ends the fit as
// converged: the estimate is at its minimum to within Step. Negative or
// NaN values are errors.
type Tolerances struct {
	// Step: 0 means 1e-10.
	Step float64
	// Loss: 0 means 1e-12.
	Loss float64
	// Grad: 0 means off (the gradient's size depends on the loss's
	// units).
	Grad float64
}

// Default tolerances (see Tolerances).
const (
	DefaultStepTol = 1e-10
	DefaultLossTol = 1e-12
)

// RerecordMode is the re-record policy of the reverse route.
type RerecordMode int

const (
	// RerecordAuto records again before evaluating a point at which
	// some fitted quantity has moved from the recording point by more
	// than Rerecord.Threshold relative to its own size:
	//
	//	max |θ − θ_rec| / max(|θ_rec|, floor) > Threshold
	//
	// over groups and fitted quantities, floor as Param.Scale says.
	RerecordAuto RerecordMode = iota
	// RerecordNever records once, at the start, and replays that mesh
	// throughout (again only where a recording failed for a group still
	// fitting, so that it does not replay failed trajectories).
	RerecordNever
	// RerecordEvery records again after every Rerecord.Every
	// evaluations: evaluation e (0, 1, …) records when e is a multiple
	// of Every, so a fit of E evaluations records ⌈E/Every⌉ times.
	RerecordEvery
)

// String returns "auto", "never" or "every".
func (m RerecordMode) String() string {
	switch m {
	case RerecordAuto:
		return "auto"
	case RerecordNever:
		return "never"
	case RerecordEvery:
		return "every"
	}
	return "RerecordMode(" + itoa(int(m)) + ")"
}

// Rerecord is the re-record policy (see RerecordMode).
type Rerecord struct {
	Mode RerecordMode
	// Threshold is RerecordAuto's relative move; 0 means
	// DefaultRerecordThreshold. Negative is an error.
	Threshold float64
	// Every is RerecordEvery's period in evaluations, ≥ 1; it must be
	// 0 for the other modes.
	Every int
}

// DefaultRerecordThreshold is RerecordAuto's threshold: a 2% move, the
// rule of thumb Recording's documentation gives.
const DefaultRerecordThreshold = 0.02

// Noise is the Gaussian noise model behind the Fisher information. Each
// residual r (a fitted component of a final or saved state minus its
// target, with weight w) is taken as independent N(0, σ²/w'), where w'
// is Weights[d] for component d when Weights is set and the data's
// weight w otherwise, and σ = Sigma. The Fisher information of group
// g's natural parameters θ and its inverse, the asymptotic covariance,
// are
//
//	F_g = Σ_{i ∈ g} Σ_r (w'_r/σ²) · J_rᵀ J_r,   J_r = ∂r/∂θ,   C_g = F_g⁻¹,
//
// with J from forward sensitivities of the solve at the estimate, and
// the standard errors are √diag(C_g).
type Noise struct {
	// Sigma is the noise standard deviation, > 0; 0 means 1.
	Sigma float64
	// Weights, when set, holds the precision of each state component
	// (length Dim, each ≥ 0), replacing the data's weights.
	Weights []float64
}

// Progress is what the Progress callback sees after each evaluation.
type Progress struct {
	// Evaluation counts the ensemble evaluations so far (1 after the
	// first).
	Evaluation int
	// Records counts the recordings so far.
	Records int
	// Active, Converged and Stopped count the groups still fitting,
	// those converged, and those stopped otherwise.
	Active, Converged, Stopped int
	// Loss is the sum over groups of their current losses.
	Loss float64
	// Elapsed is the time since Run started.
	Elapsed time.Duration
}
