package fit

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/router"
)

// Bad specs get an error wrapping ErrInput that names the field and the
// rule broken, and no report; none panics.
func TestBadInputs(t *testing.T) {
	pr := decayProblem(t)
	dc := newDecayCase(4, []float64{0.7})
	valid := func() *Spec {
		return &Spec{Problem: pr, Ensemble: dc.ens, Data: &gradsolve.FitData{Final: dc.final},
			Params: []Param{{Wrt: gradsolve.Param(0), Transform: Log()}}, Start: []float64{1}}
	}
	goFunc := &gradsolve.Problem{Name: "plain", Dim: 1, NumParams: 1, F: func(t float64, y, p, dy []float64) { dy[0] = -p[0] * y[0] }}
	for _, c := range []struct {
		name string
		edit func(s *Spec)
		want string
	}{
		{"nil problem", func(s *Spec) { s.Problem = nil }, "Spec.Problem is nil"},
		{"bad problem", func(s *Spec) { s.Problem = &gradsolve.Problem{Name: "x", Dim: 0} }, "Dim = 0"},
		{"no derivatives", func(s *Spec) { s.Problem, s.Ensemble.P, s.Optimizer = goFunc, []float64{1}, &LBFGS{} }, "neither a tangent"},
		{"N", func(s *Spec) { s.Ensemble.N = 0 }, "Spec.Ensemble.N = 0"},
		{"no params", func(s *Spec) { s.Params = nil }, "Spec.Params is empty"},
		{"param index", func(s *Spec) { s.Params = []Param{{Wrt: gradsolve.Param(4)}} }, "Spec.Params[0]: parameter index 4 out of range [0, 4)"},
		{"initial value index", func(s *Spec) { s.Params = append(s.Params, Param{Wrt: gradsolve.InitialValue(1)}); s.Start = nil }, "Spec.Params[1]: initial value index 1 out of range [0, 1)"},
		{"negative index", func(s *Spec) { s.Params = []Param{{Wrt: gradsolve.Param(-1)}} }, "parameter index -1 out of range"},
		{"listed twice", func(s *Spec) { s.Params = append(s.Params, s.Params[0]); s.Start = nil }, "Spec.Params[1]: p[0] is already Spec.Params[0]"},
		{"scale", func(s *Spec) { s.Params[0].Scale = -1 }, "Scale = -1"},
		{"logit bounds", func(s *Spec) { s.Params[0].Transform = Logit(2, 1) }, "logit bounds (2, 1): need finite lo < hi"},
		{"logit NaN", func(s *Spec) { s.Params[0].Transform = Logit(math.NaN(), 1) }, "logit bounds"},
		{"start outside logit", func(s *Spec) { s.Params[0].Transform = Logit(2, 3) }, "Spec.Start[0]: start of k = 1 lies outside the domain (2, 3) of its logit(2, 3) transform"},
		{"start at logit bound", func(s *Spec) { s.Params[0].Transform = Logit(1, 3) }, "lies outside the domain (1, 3)"},
		{"start not positive", func(s *Spec) { s.Start = []float64{-0.5} }, "start of k = -0.5 lies outside the domain (0, +Inf) of its log transform"},
		{"template start", func(s *Spec) { s.Start = nil; s.Ensemble.P = []float64{-1, 1, 0, 0} }, "the template's value (group 0, trajectory 0"},
		{"start NaN", func(s *Spec) { s.Params[0].Transform = Identity(); s.Start = []float64{math.NaN()} }, "start of k = NaN"},
		{"start length", func(s *Spec) { s.Start = []float64{1, 2} }, "Spec.Start has length 2: want len(Params) = 1 (shared) or G·len(Params) = 1"},
		{"start empty", func(s *Spec) { s.Start = []float64{} }, "Spec.Start is empty"},
		{"group without Grouped", func(s *Spec) { s.Group = []int{0, 0, 1, 1} }, "Spec.Group is set but Spec.Owner = shared"},
		{"group length", func(s *Spec) { s.Owner, s.Group = Grouped, []int{0, 1} }, "Spec.Group has length 2: want one group index per trajectory, N = 4"},
		{"group index", func(s *Spec) { s.Owner, s.Group = Grouped, []int{0, 0, 5, 1} }, "Spec.Group[2] = 5: group index out of range [0, N = 4)"},
		{"group negative", func(s *Spec) { s.Owner, s.Group = Grouped, []int{0, -1, 0, 0} }, "Spec.Group[1] = -1"},
		{"group gap", func(s *Spec) { s.Owner, s.Group = Grouped, []int{0, 0, 2, 2} }, "group 1 has no trajectories"},
		{"owner", func(s *Spec) { s.Owner = 7 }, "Spec.Owner = 7"},
		{"no loss", func(s *Spec) { s.Data = nil }, "neither Spec.Data nor Spec.Loss"},
		{"two losses", func(s *Spec) { s.Loss = gradsolve.SumSquares() }, "both Spec.Data and Spec.Loss"},
		{"data shape", func(s *Spec) { s.Data = &gradsolve.FitData{Final: []float64{1, 2}} }, "Spec.Data.Final has length 2: want Dim = 1 or N·Dim = 4"},
		{"data NaN", func(s *Spec) { s.Data = &gradsolve.FitData{Final: []float64{math.NaN()}} }, "Spec.Data.Final[0] = NaN: must be finite"},
		{"data empty", func(s *Spec) { s.Data = &gradsolve.FitData{} }, "neither Final nor Saved"},
		{"negative weight", func(s *Spec) { s.Data.FinalWeights = []float64{-1} }, "Spec.Data.FinalWeights[0] = -1: must be finite and ≥ 0"},
		{"saved shape", func(s *Spec) { s.Data = &gradsolve.FitData{Saved: []float64{1, 2, 3}} }, "Spec.Data.Saved has length 3: want K·Dim = 2 or N·K·Dim = 8"},
		{"saved without save times", func(s *Spec) { s.Ensemble.Save = nil; s.Data = &gradsolve.FitData{Saved: []float64{1}} }, "no save times"},
		{"weights without targets", func(s *Spec) { s.Data.SavedWeights = []float64{1} }, "SavedWeights is set without Spec.Data.Saved"},
		{"LM with a loss", func(s *Spec) { s.Data, s.Loss = nil, gradsolve.SumSquares(); s.Optimizer = &LevenbergMarquardt{} }, "needs least-squares residuals: set Spec.Data"},
		{"LM reverse", func(s *Spec) { s.Optimizer, s.Mode = &LevenbergMarquardt{}, router.Reverse }, "Spec.Mode = reverse"},
		{"mode", func(s *Spec) { s.Mode = 9 }, "Spec.Mode = Mode(9)"},
		{"nil Adam", func(s *Spec) { s.Optimizer = (*Adam)(nil) }, "nil *Adam"},
		{"learning rate", func(s *Spec) { s.Optimizer = &Adam{LearningRate: -1} }, "Adam.LearningRate = -1"},
		{"beta1", func(s *Spec) { s.Optimizer = &Adam{Beta1: 1} }, "Adam.Beta1 = 1: must be in [0, 1)"},
		{"beta2", func(s *Spec) { s.Optimizer = &Adam{Beta2: math.NaN()} }, "Adam.Beta2 = NaN"},
		{"epsilon", func(s *Spec) { s.Optimizer = &Adam{Epsilon: -1e-8} }, "Adam.Epsilon"},
		{"memory", func(s *Spec) { s.Optimizer = &LBFGS{Memory: -1} }, "LBFGS.Memory = -1"},
		{"initial step", func(s *Spec) { s.Optimizer = &LBFGS{InitialStep: math.Inf(1)} }, "LBFGS.InitialStep = +Inf"},
		{"backtracks", func(s *Spec) { s.Optimizer = &LBFGS{MaxBacktracks: -2} }, "LBFGS.MaxBacktracks = -2"},
		{"damping", func(s *Spec) { s.Optimizer = &LevenbergMarquardt{InitialDamping: -1} }, "LevenbergMarquardt.InitialDamping = -1"},
		{"rejections", func(s *Spec) { s.Optimizer = &LevenbergMarquardt{MaxRejections: -1} }, "LevenbergMarquardt.MaxRejections = -1"},
		{"max iter", func(s *Spec) { s.MaxIter = -1 }, "Spec.MaxIter = -1"},
		{"step tol", func(s *Spec) { s.Tol.Step = -1 }, "Spec.Tol.Step = -1"},
		{"loss tol", func(s *Spec) { s.Tol.Loss = math.NaN() }, "Spec.Tol.Loss = NaN"},
		{"grad tol", func(s *Spec) { s.Tol.Grad = math.Inf(1) }, "Spec.Tol.Grad = +Inf"},
		{"threshold", func(s *Spec) { s.Rerecord.Threshold = -0.1 }, "Spec.Rerecord.Threshold = -0.1"},
		{"every", func(s *Spec) { s.Rerecord = Rerecord{Mode: RerecordEvery} }, "Spec.Rerecord.Every = 0 with Mode = every: must be ≥ 1"},
		{"every with auto", func(s *Spec) { s.Rerecord = Rerecord{Every: 3} }, "Spec.Rerecord.Every = 3 with Mode = auto"},
		{"never with threshold", func(s *Spec) { s.Rerecord = Rerecord{Mode: RerecordNever, Threshold: 0.1} }, "Mode = never"},
		{"rerecord mode", func(s *Spec) { s.Rerecord.Mode = 5 }, "Spec.Rerecord.Mode = 5"},
		{"drift", func(s *Spec) { s.DriftEvery = -1 }, "Spec.DriftEvery = -1"},
		{"noise without data", func(s *Spec) { s.Data, s.Loss = nil, gradsolve.SumSquares(); s.Noise = &Noise{} }, "Spec.Noise is set without Spec.Data"},
		{"sigma", func(s *Spec) { s.Noise = &Noise{Sigma: -1} }, "Spec.Noise.Sigma = -1"},
		{"noise weights", func(s *Spec) { s.Noise = &Noise{Weights: []float64{1, 2}} }, "Spec.Noise.Weights has length 2: want Dim = 1"},
		{"noise weight value", func(s *Spec) { s.Noise = &Noise{Weights: []float64{-1}} }, "Spec.Noise.Weights[0] = -1"},
		{"sens", func(s *Spec) { s.Options.Sens = &gradsolve.Sensitivity{} }, "Spec.Options.Sens is set"},
		{"options mode", func(s *Spec) { s.Options.Mode = router.Forward }, "Spec.Options.Mode = forward"},
		{"gradient wrt", func(s *Spec) { s.Options.GradientWrt = []gradsolve.Wrt{} }, "Spec.Options.GradientWrt is set"},
		{"template P", func(s *Spec) { s.Ensemble.P = []float64{1, 2, 3} }, "Spec.Ensemble.P has length 3: want NumParams = 4 (shared) or N·NumParams = 16"},
		{"template P NaN", func(s *Spec) { s.Ensemble.P = []float64{1, math.NaN(), 0, 0} }, "Spec.Ensemble.P[1] = NaN"},
		{"template Y0", func(s *Spec) { s.Params[0].Wrt = gradsolve.InitialValue(0); s.Ensemble.Y0 = []float64{1, 2} }, "Spec.Ensemble.Y0 has length 2"},
		{"save per trajectory", func(s *Spec) { s.Ensemble.SavePerTrajectory = true }, "SavePerTrajectory"},
		// Found by the first solve: wrapped, and still ErrInput.
		{"tolerance", func(s *Spec) { s.Options.RTol = -1 }, "rtol = -1"},
		{"span", func(s *Spec) { s.Ensemble.T1 = []float64{0} }, "the time span must not be empty"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := valid()
			c.edit(s)
			rep, err := Run(context.Background(), s)
			if err == nil || !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v: want ErrInput with %q", err, c.want)
			}
			if rep != nil {
				t.Errorf("a report for a bad spec: %+v", rep)
			}
		})
	}
	if _, err := Run(context.Background(), nil); !errors.Is(err, ErrInput) {
		t.Errorf("nil spec: %v", err)
	}
	//lint:ignore SA1012 a nil context is the bad input tested
	if _, err := Run(nil, valid()); !errors.Is(err, ErrInput) { //nolint:staticcheck
		t.Errorf("nil context: %v", err)
	}
	// Initial values computed from the parameters cannot be fitted
	// without explicit initial states.
	s := valid()
	s.Problem = withInitial(pr)
	s.Ensemble.Y0 = nil
	s.Params = []Param{{Wrt: gradsolve.InitialValue(0)}}
	s.Start = nil
	if _, err := Run(context.Background(), s); err == nil || !strings.Contains(err.Error(), "set Spec.Ensemble.Y0") {
		t.Errorf("initial value from the parameters: %v", err)
	}
}

// withInitial returns pr whose initial state is computed from the
// parameters (y0 = k).
func withInitial(pr *gradsolve.Problem) *gradsolve.Problem {
	q := *pr
	q.Initial = func() gradsolve.InitialFunc {
		return func(p, y0, jac []float64) {
			y0[0] = p[0]
			if jac != nil {
				clear(jac)
				jac[0] = 1
			}
		}
	}
	return &q
}

// A user loss that fails, or returns cotangents of the wrong shape,
// ends the run with its error and the report so far.
func TestLossErrors(t *testing.T) {
	pr := decayProblem(t)
	dc := newDecayCase(2, []float64{0.7})
	for _, c := range []struct {
		name string
		loss gradsolve.Loss
		want string
	}{
		{"error", func(*gradsolve.Result) (float64, gradsolve.Cotangents, error) {
			return 0, gradsolve.Cotangents{}, errors.New("boom")
		}, "Spec.Loss: boom"},
		{"shape", func(*gradsolve.Result) (float64, gradsolve.Cotangents, error) {
			return 0, gradsolve.Cotangents{Y: []float64{1}}, nil
		}, "cotangent Y has length 1: want N·Dim = 2"},
	} {
		rep, err := Run(context.Background(), &Spec{Problem: pr, Ensemble: dc.ens, Loss: c.loss,
			Params: []Param{{Wrt: gradsolve.Param(0), Transform: Log()}}})
		if err == nil || !strings.Contains(err.Error(), c.want) || rep == nil || rep.Groups[0].Status != Failed {
			t.Errorf("%s: err %v, report %v", c.name, err, rep)
		}
	}
}
