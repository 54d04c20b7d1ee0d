package main

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/systems"
)

// Setup is a training problem: the network, the ensemble of initial
// states, the save times the data are taken at, the loss's scales and
// the solver options.
type Setup struct {
	Net Net
	// Y0 holds the initial states, N×3 (each sums to 1).
	Y0 []float64
	// T1 is the end of every span [0, T1]; Save the save times.
	T1   float64
	Save []float64
	// Sigma is the scale of each component's residual: the loss is
	// ½ Σ_i Σ_k Σ_d ((y_ikd − data_ikd)/Sigma_d)².
	Sigma [3]float64
	// Opts are the options of the training solves (Rodas5P).
	Opts gradsolve.Options
	// DataOpts are the options of the data solves (true Robertson).
	DataOpts gradsolve.Options
}

// DefaultSetup returns the training problem of the example: six
// initial states (four with y3 > 0 at the start, two starting with y2
// above its quasi-steady value), 22 save times log-spaced from 1e-4 to 1e3
// (three per decade), residuals measured in units of 0.1% of each
// component's scale (1e-3 for y1 and y3, 1e-3·Y2Scale for y2), Rodas5P
// at rtol 1e-6 with per-component atol 1e-10 (y2: 1e-10·Y2Scale) for
// training and rtol 1e-10 for the data.
func DefaultSetup() *Setup {
	y0 := []float64{
		1, 0, 0,
		0.95, 0, 0.05,
		0.8, 0, 0.2,
		0.5, 0, 0.5,
		1 - 1e-4, 1e-4, 0,
		0.7, 5e-5, 0.3 - 5e-5,
	}
	var save []float64
	for k := 0; k <= 21; k++ {
		save = append(save, math.Pow(10, -4+float64(k)/3))
	}
	save[len(save)-1] = 1e3
	return &Setup{
		Net:   DefaultNet,
		Y0:    y0,
		T1:    1e3,
		Save:  save,
		Sigma: [3]float64{1e-3, 1e-3 * Y2Scale, 1e-3},
		Opts: gradsolve.Options{Method: method.Rodas5P, RTol: 1e-6,
			ATolVec: []float64{1e-10, 1e-10 * Y2Scale, 1e-10}},
		DataOpts: gradsolve.Options{Method: method.Rodas5P, RTol: 1e-10,
			ATolVec: []float64{1e-14, 1e-14 * Y2Scale, 1e-14}},
	}
}

// N returns the number of trajectories.
func (s *Setup) N() int { return len(s.Y0) / 3 }

// Ensemble returns the ensemble of the training solves.
func (s *Setup) Ensemble(theta []float64) *gradsolve.Ensemble {
	return &gradsolve.Ensemble{N: s.N(), Y0: s.Y0, P: theta, T0: []float64{0}, T1: []float64{s.T1}, Save: s.Save}
}

// Data solves true Robertson (systems.Robertson, k1 = 0.04, k2 = 3e7,
// k3 = 1e4) from every initial state and returns the states at the
// save times, N×K×3.
func (s *Setup) Data(ctx context.Context) ([]float64, error) {
	res, err := gradsolve.Solve(ctx, systems.Robertson(), &gradsolve.Ensemble{N: s.N(), Y0: s.Y0,
		P: []float64{K1, K2, K3}, T0: []float64{0}, T1: []float64{s.T1}, Save: s.Save}, &s.DataOpts)
	if err != nil {
		return nil, err
	}
	if err := res.Errs(); err != nil {
		return nil, err
	}
	return res.Saved, nil
}

// Loss returns the least-squares loss on the saved states against data.
func (s *Setup) Loss(data []float64) gradsolve.Loss {
	w := make([]float64, 3)
	for d := range w {
		w[d] = 1 / (s.Sigma[d] * s.Sigma[d])
	}
	ls := gradsolve.LeastSquaresFit(gradsolve.FitData{Saved: data, SavedWeights: w})
	// A failed trajectory would drop out of the least-squares loss and
	// lower it; here it is an error.
	return func(res *gradsolve.Result) (float64, gradsolve.Cotangents, error) {
		if err := res.Errs(); err != nil {
			return 0, gradsolve.Cotangents{}, err
		}
		return ls(res)
	}
}

// Trainer evaluates the loss and its gradient with respect to the
// weights by the reverse replay on Rodas5P: it records the ensemble's
// meshes at a point and replays them at the next points, recording
// again once a weight has moved more than Threshold relative to
// max(|θ_j,rec|, Floor).
type Trainer struct {
	Setup *Setup
	Prob  *gradsolve.Problem
	// Threshold and Floor are the re-record policy (see Shift).
	Threshold, Floor float64

	loss     gradsolve.Loss
	rec      *gradsolve.Recording
	thetaRec []float64
	// Records and Replays count the evaluations of each kind.
	Records, Replays int
}

// NewTrainer compiles the model and solves the data.
func NewTrainer(ctx context.Context, s *Setup) (*Trainer, error) {
	prob, err := s.Net.Problem()
	if err != nil {
		return nil, err
	}
	data, err := s.Data(ctx)
	if err != nil {
		return nil, fmt.Errorf("neural: data: %w", err)
	}
	return &Trainer{Setup: s, Prob: prob, Threshold: 0.05, Floor: 0.1, loss: s.Loss(data)}, nil
}

// Shift returns how far theta is from the recording point: the largest
// |θ_j − θ_j,rec| / max(|θ_j,rec|, Floor) (Recording.ShiftWith with the
// floor Floor for every weight); +Inf without a recording.
func (t *Trainer) Shift(theta []float64) float64 {
	if t.rec == nil {
		return math.Inf(1)
	}
	var s float64
	for j, x := range theta {
		s = math.Max(s, math.Abs(x-t.thetaRec[j])/math.Max(math.Abs(t.thetaRec[j]), t.Floor))
	}
	return s
}

// Record records the ensemble's meshes at theta.
func (t *Trainer) Record(ctx context.Context, theta []float64) error {
	rec, err := gradsolve.Record(ctx, t.Prob, t.Setup.Ensemble(theta), &t.Setup.Opts)
	if err != nil {
		return err
	}
	if err := rec.Result.Errs(); err != nil {
		return err
	}
	t.rec, t.thetaRec = rec, append([]float64(nil), theta...)
	t.Records++
	return nil
}

// Reset drops the recording and the counts: the next evaluation
// records afresh.
func (t *Trainer) Reset() { t.rec, t.thetaRec, t.Records, t.Replays = nil, nil, 0, 0 }

// Recording returns the current recording (nil before the first
// evaluation).
func (t *Trainer) Recording() *gradsolve.Recording { return t.rec }

// Eval returns the loss at theta and its gradient (length NumWeights,
// summed over the trajectories, which share the weights), on the
// current mesh or a fresh one (fresh reports which).
func (t *Trainer) Eval(ctx context.Context, theta []float64) (l float64, g []float64, fresh bool, err error) {
	if fresh = t.Shift(theta) > t.Threshold; fresh {
		if err := t.Record(ctx, theta); err != nil {
			return 0, nil, fresh, err
		}
	} else {
		if _, err := t.rec.Replay(ctx, &gradsolve.Point{P: theta}); err != nil {
			return 0, nil, fresh, err
		}
		t.Replays++
	}
	l, g, err = t.LossGrad(ctx)
	return l, g, fresh, err
}

// LossGrad evaluates the loss at the recording's current point and its
// gradient by the reverse sweep.
func (t *Trainer) LossGrad(ctx context.Context) (float64, []float64, error) {
	l, cot, err := t.loss(t.rec.Result)
	if err != nil {
		return 0, nil, err
	}
	gr, err := t.rec.Gradient(ctx, cot)
	if err != nil {
		return 0, nil, err
	}
	m := t.Prob.NumParams
	g := make([]float64, m)
	for i := range t.rec.Result.N {
		for j := range m {
			g[j] += gr.P[i*m+j]
		}
	}
	return l, g, nil
}

// LossAt replays the current recording at theta and returns the loss
// there (no gradient): the map the finite differences difference.
func (t *Trainer) LossAt(ctx context.Context, theta []float64) (float64, error) {
	res, err := t.rec.Replay(ctx, &gradsolve.Point{P: theta})
	if err != nil {
		return 0, err
	}
	l, _, err := t.loss(res)
	return l, err
}

// FreshLoss solves adaptively at theta (a fresh solve, no recording
// kept) and returns the loss.
func (t *Trainer) FreshLoss(ctx context.Context, theta []float64) (float64, error) {
	res, err := gradsolve.Solve(ctx, t.Prob, t.Setup.Ensemble(theta), &t.Setup.Opts)
	if err != nil {
		return 0, err
	}
	l, _, err := t.loss(res)
	return l, err
}

// FDResult is one weight's finite-difference check.
type FDResult struct {
	Index int
	Name  string
	// Adjoint is the replay gradient's component ∂L/∂θ_j.
	Adjoint float64
	// Central is the central difference D(h) = (L(θ + h·e_j) −
	// L(θ − h·e_j))/2h at h = CentralEps·max(|θ_j|, 1); Richardson is
	// (4·D(h/2) − D(h))/3 at h = RichardsonEps·max(|θ_j|, 1), the
	// central difference with its h² error term removed. Every L is a
	// replay of the same recorded mesh.
	Central, Richardson float64
	// RelCentral and RelRichardson are |FD − Adjoint|/|Adjoint|.
	RelCentral, RelRichardson float64
}

// The steps of the finite-difference check, relative to max(|θ_j|, 1).
//
// The central difference's error is c·h² (truncation, c = ∂³L/∂θ_j³/6)
// plus about δL/h (δL: the rounding noise of the replayed loss, some
// 1e-14 relative). At the starting weights h = 1e-6 balances the two
// and agrees with the replay gradient to about 1e-8. At trained weights
// a few components of the gradient are a thousandth of its norm while
// the third derivative is not small, and the plain central difference
// misses them by more than 1e-6 (measured on one weight of seed 2's
// trained network: 2e-5 at h = 1e-6, 2e-4 at 1e-5, 2e-2 at 1e-4).
// Richardson's extrapolation removes the h² term, leaving O(h⁴) and the
// rounding term, which at h = 1e-4 is a hundred times smaller than at
// 1e-6 (that weight: 8e-8).
const (
	CentralEps    = 1e-6
	RichardsonEps = 1e-4
)

// FDCheck records at theta, takes the replay gradient g there, and
// compares the components pick(g) names with central differences of
// the loss on the same recorded mesh (Recording.Replay at θ ± h·e_j):
// the plain central difference at CentralEps and its Richardson
// extrapolation at RichardsonEps (see FDResult). It returns the
// comparisons and g; the recording is left at theta.
func (t *Trainer) FDCheck(ctx context.Context, theta []float64, pick func(g []float64) []int) ([]FDResult, []float64, error) {
	if err := t.Record(ctx, theta); err != nil {
		return nil, nil, err
	}
	_, g, err := t.LossGrad(ctx)
	if err != nil {
		return nil, nil, err
	}
	names := t.Setup.Net.Names()
	th := append([]float64(nil), theta...)
	// central returns (L(θ + h·e_j) − L(θ − h·e_j))/2h, dividing by the
	// spacing the two perturbed weights have after rounding.
	central := func(j int, h float64) (float64, error) {
		hi, lo := theta[j]+h, theta[j]-h
		th[j] = hi
		lp, err := t.LossAt(ctx, th)
		if err != nil {
			return 0, err
		}
		th[j] = lo
		lm, err := t.LossAt(ctx, th)
		th[j] = theta[j]
		if err != nil {
			return 0, err
		}
		return (lp - lm) / (hi - lo), nil
	}
	var out []FDResult
	for _, j := range pick(g) {
		scale := math.Max(math.Abs(theta[j]), 1)
		c, err := central(j, CentralEps*scale)
		if err != nil {
			return nil, nil, err
		}
		d1, err := central(j, RichardsonEps*scale)
		if err != nil {
			return nil, nil, err
		}
		d2, err := central(j, RichardsonEps*scale/2)
		if err != nil {
			return nil, nil, err
		}
		r := (4*d2 - d1) / 3
		out = append(out, FDResult{Index: j, Name: names[j], Adjoint: g[j], Central: c, Richardson: r,
			RelCentral: math.Abs(c-g[j]) / math.Abs(g[j]), RelRichardson: math.Abs(r-g[j]) / math.Abs(g[j])})
	}
	if _, err := t.rec.Replay(ctx, &gradsolve.Point{P: theta}); err != nil {
		return nil, nil, err
	}
	return out, g, nil
}

// Adam is the Adam optimiser (Kingma & Ba 2015) with a step size that
// decays exponentially, LR·Decay^t.
type Adam struct {
	LR, Decay, Beta1, Beta2, Eps float64
	m, v                         []float64
	t                            int
}

// Step moves theta by one update along the gradient g.
func (a *Adam) Step(theta, g []float64) {
	if a.m == nil {
		a.m, a.v = make([]float64, len(theta)), make([]float64, len(theta))
	}
	a.t++
	lr := a.LR * math.Pow(a.Decay, float64(a.t-1))
	b1, b2 := 1-math.Pow(a.Beta1, float64(a.t)), 1-math.Pow(a.Beta2, float64(a.t))
	for j := range theta {
		a.m[j] = a.Beta1*a.m[j] + (1-a.Beta1)*g[j]
		a.v[j] = a.Beta2*a.v[j] + (1-a.Beta2)*g[j]*g[j]
		theta[j] -= lr * (a.m[j] / b1) / (math.Sqrt(a.v[j]/b2) + a.Eps)
	}
}

// Update is one line of the training history.
type Update struct {
	// Iter counts the updates before this evaluation (0: the start).
	Iter int
	// Loss is the loss at the iterate, on the mesh it was evaluated on;
	// GradNorm the gradient's 2-norm.
	Loss, GradNorm float64
	// Fresh says the mesh was recorded at this iterate (else replayed).
	Fresh bool
	// Seconds is the wall time of the evaluation (record or replay,
	// loss, reverse sweep).
	Seconds float64
}

// Train runs updates Adam steps from theta (changed in place) and
// returns the history, one line per evaluation (updates + 1). progress,
// if not nil, is called with each line.
func (t *Trainer) Train(ctx context.Context, theta []float64, updates int, opt *Adam, progress func(Update)) ([]Update, error) {
	var hist []Update
	for it := 0; it <= updates; it++ {
		start := time.Now()
		l, g, fresh, err := t.Eval(ctx, theta)
		if err != nil {
			return hist, fmt.Errorf("neural: update %d: %w", it, err)
		}
		var gn float64
		for _, x := range g {
			gn += x * x
		}
		u := Update{Iter: it, Loss: l, GradNorm: math.Sqrt(gn), Fresh: fresh, Seconds: time.Since(start).Seconds()}
		hist = append(hist, u)
		if progress != nil {
			progress(u)
		}
		if it < updates {
			opt.Step(theta, g)
		}
	}
	return hist, nil
}
