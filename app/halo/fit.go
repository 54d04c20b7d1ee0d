package halo

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/fit"
	"github.com/gradsolve/gradsolve/systems"
)

// DefaultSigma is FitConfig.Sigma's default: the noise σ of every
// component of the catalogue, in the package's dimensionless units (a
// length of the halo's scale, a speed of vc = 1), about 0.1% of a star's
// radius and speed.
const DefaultSigma = 1e-3

// DefaultStartOffset is how far the default start of a fit lies from
// the truth: (vc, q)·(1 + DefaultStartOffset).
const DefaultStartOffset = 0.1

// noiseStream is the PCG stream of the catalogue's noise ("noise");
// mock k draws from stream noiseStream + k, the catalogue itself from
// k = 0.
const noiseStream = 0x6e6f_6973_6500_0000

// FitConfig describes a fit of the shared (vc, q) to a synthetic
// catalogue (see Fit). The zero value of each field means the default
// given in its comment.
type FitConfig struct {
	// Sigma is the standard deviation of the Gaussian noise added to
	// every component of the final states (positions and velocities
	// alike), > 0; it weighs the residuals (1/σ²) and sets the Fisher
	// error bars. 0 means DefaultSigma.
	Sigma float64
	// NoiseSeed seeds the noise (0 is a valid seed): the catalogue draws
	// from stream 0 of it, mock k from stream k.
	NoiseSeed uint64
	// Exact leaves the noise out of the catalogue (σ still weighs the
	// residuals and sets the error bars): the fit must then recover the
	// truth to the optimiser's tolerance. Mocks are noisy regardless.
	Exact bool
	// Start is the starting (vc, q); nil means the truth times
	// 1 + DefaultStartOffset.
	Start []float64
	// Direct starts the Levenberg–Marquardt fit of the final states at
	// Start itself. By default a first stage (no solves) moves the start
	// to the (vc, q) that best conserves each star's energy between its
	// initial state and the catalogue (see FitRun), because the final
	// positions wrap with the orbits' phases: their least squares has
	// local minima, and at the defaults only a start within about ±7% of
	// the truth in vc reaches the global one.
	Direct bool
	// Mocks is the number K of noisy mocks to refit (0: none): the same
	// stars, noise streams 1 … K, each fitted from Start.
	Mocks int
	// MaxIter bounds each fit's Levenberg–Marquardt iterations (0: the
	// fit package's default, 100).
	MaxIter int
	// Progress, if set, receives the fits done of 1 + Mocks.
	Progress func(done, total int)
}

// FitResult is a completed fit: the catalogue's, and with
// FitConfig.Mocks the mocks'.
type FitResult struct {
	// Config is the fit's configuration, defaults filled in.
	Config FitConfig
	// Names names the fitted parameters, "vc" and "q"; Truth, Start,
	// Estimate and StdErr are in that order, Covariance (2×2,
	// row-major) too.
	Names                          []string
	Truth, Start, Estimate, StdErr []float64
	Covariance                     []float64
	// LMStart is where the Levenberg–Marquardt fit started: the energy
	// stage's estimate from Start (EnergyIterations its Gauss–Newton
	// iterations), or Start itself with FitConfig.Direct.
	LMStart          []float64
	EnergyIterations int
	// Catalogue holds the noisy final states the fit was made to, N×6.
	Catalogue []float64
	// Chi2 is χ² = Σ (y − catalogue)²/σ² at the estimate, over Dof =
	// 6N − 2 degrees of freedom.
	Chi2 float64
	Dof  int
	// Iterations and Evaluations count the accepted updates and the
	// ensemble solves of the fit; Status says how it ended.
	Iterations, Evaluations int
	Status                  fit.Status
	Converged               bool
	// Pull is (Estimate − Truth)/StdErr per parameter; Within says
	// whether the truth lies within the error bars (|Pull| ≤ 1) of
	// each; Mahalanobis is (θ̂ − θ)ᵀ C⁻¹ (θ̂ − θ), χ² with 2 degrees of
	// freedom if the error bars are right (≤ 2.30 for the joint 68%
	// region).
	Pull        []float64
	Within      []bool
	Mahalanobis float64
	// Elapsed is the fit's wall time.
	Elapsed time.Duration
	// Mocks holds the refits of the mocks (nil without FitConfig.Mocks).
	Mocks *Mocks
}

// Mocks sums up the refits of K noisy mocks: the scatter of their
// estimates against the Fisher error bars.
type Mocks struct {
	// K is the number of mocks; Used those whose fit converged with
	// error bars, the only ones counted below.
	K, Used int
	// Estimates and StdErr hold each mock's estimate and standard
	// errors, K×2 (NaN rows for a mock not used).
	Estimates, StdErr []float64
	// Mean is the mean estimate; Scatter the sample standard deviation
	// of the estimates (divisor Used − 1); MeanStdErr the mean of the
	// Fisher standard errors; Ratio = Scatter/MeanStdErr, 1 when the
	// error bars are right, known to about Ratio/√(2(Used−1)) (RatioErr)
	// from the number of mocks.
	Mean, Scatter, MeanStdErr, Ratio, RatioErr []float64
	// Bias is (Mean − Truth)/(MeanStdErr/√Used): the mean's offset from
	// the truth in units of its own standard error.
	Bias []float64
	// Covered is the fraction of used mocks whose error bars contain the
	// truth (0.683 expected).
	Covered []float64
	// Elapsed is the wall time of all the refits; PerFit that over K.
	Elapsed, PerFit time.Duration
}

func (fc *FitConfig) defaults(truth []float64) error {
	switch {
	case fc.Sigma == 0:
		fc.Sigma = DefaultSigma
	case !(fc.Sigma > 0) || math.IsInf(fc.Sigma, 0):
		return fmt.Errorf("halo: FitConfig.Sigma = %g: must be finite and > 0", fc.Sigma)
	}
	if fc.Mocks < 0 {
		return fmt.Errorf("halo: FitConfig.Mocks = %d: must be ≥ 0", fc.Mocks)
	}
	if fc.MaxIter < 0 {
		return fmt.Errorf("halo: FitConfig.MaxIter = %d: must be ≥ 0", fc.MaxIter)
	}
	if fc.Start == nil {
		fc.Start = []float64{truth[0] * (1 + DefaultStartOffset), truth[1] * (1 + DefaultStartOffset)}
	}
	if len(fc.Start) != 2 {
		return fmt.Errorf("halo: FitConfig.Start has %d values: want 2 (vc, q)", len(fc.Start))
	}
	for c, v := range fc.Start {
		if !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("halo: FitConfig.Start %s = %g: must be finite and > 0", fitNames[c], v)
		}
	}
	return nil
}

var fitNames = []string{"vc", "q"}

// Fit runs cfg (Run) and fits (vc, q) to its catalogue (FitRun).
func Fit(ctx context.Context, cfg Config, fc FitConfig) (*FitResult, error) {
	r, err := Run(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return FitRun(ctx, r, fc)
}

// FitRun makes a synthetic catalogue from a run — its stars' final
// states at the truth (r.Config's vc, q), plus Gaussian noise of σ =
// fc.Sigma on every component — and fits the shared (vc, q) to it, the
// stars' initial states and the end time held at their known values, in
// two stages:
//
//  1. from fc.Start, the (vc, q) that best conserves each star's energy
//     between its initial state and its catalogued final state (damped
//     Gauss–Newton, no solves; skipped with fc.Direct): its residuals
//     do not wrap with the orbits' phases, and it lands well inside the
//     basin of the second stage;
//  2. from there, Levenberg–Marquardt on the final phase-space positions,
//     on forward sensitivities (package fit), with the solves of the run
//     (method, tolerances, engine, workers). The loss is ½χ²,
//     χ² = Σ (y(t1; vc, q) − catalogue)²/σ², and the error bars are the
//     Fisher information's, F = Σ JᵀJ/σ² with J the final states'
//     sensitivities at the estimate.
//
// With fc.Mocks it also refits K mocks (the same stars, fresh noise,
// both stages from fc.Start) and compares the scatter of their
// estimates with their Fisher error bars (FitResult.Mocks).
//
// The catalogue is made by the same discrete solve as the fits, so the
// solve's own error (a state error of order 1e-6 at the defaults, far
// below the default σ) does not bias the estimate.
func FitRun(ctx context.Context, r *Result, fc FitConfig) (*FitResult, error) {
	c := r.Config
	truth := []float64{c.VC, c.Q}
	if err := fc.defaults(truth); err != nil {
		return nil, err
	}
	if nf := len(r.Solve.Failed()); nf > 0 {
		return nil, fmt.Errorf("halo: %d of %d orbits failed in the run at the truth: no catalogue", nf, c.N)
	}
	total := 1 + fc.Mocks
	progress := func(done int) {
		if fc.Progress != nil {
			fc.Progress(done, total)
		}
	}
	out := &FitResult{Config: fc, Names: fitNames, Truth: truth, Start: fc.Start, Dof: 6*c.N - 2}
	pr := systems.Halo()
	out.Catalogue = catalogue(r, fc.Sigma, fc.NoiseSeed, 0, fc.Exact)
	out.LMStart, out.EnergyIterations = lmStart(r, fc, out.Catalogue)
	one, err := fitOne(ctx, pr, r, fc, out.LMStart, out.Catalogue)
	if err != nil {
		return nil, err
	}
	g := one.Groups[0]
	out.Estimate, out.StdErr, out.Covariance = g.Estimate, g.StdErr, g.Covariance
	out.Chi2 = 2 * g.Loss
	out.Iterations, out.Evaluations, out.Status, out.Converged = g.Iterations, one.Evaluations, g.Status, g.Converged
	out.Elapsed = one.Elapsed
	if g.FisherErr != nil {
		return out, fmt.Errorf("halo: no error bars at the estimate: %w", g.FisherErr)
	}
	out.Pull, out.Within = make([]float64, 2), make([]bool, 2)
	for i := range 2 {
		out.Pull[i] = (g.Estimate[i] - truth[i]) / g.StdErr[i]
		out.Within[i] = math.Abs(out.Pull[i]) <= 1
	}
	out.Mahalanobis = mahalanobis(g.Estimate, truth, g.Fisher)
	progress(1)
	if fc.Mocks == 0 {
		return out, nil
	}
	start := time.Now()
	K := fc.Mocks
	m := &Mocks{K: K, Estimates: make([]float64, 2*K), StdErr: make([]float64, 2*K)}
	for k := 1; k <= K; k++ {
		data := catalogue(r, fc.Sigma, fc.NoiseSeed, uint64(k), false)
		st, _ := lmStart(r, fc, data)
		rep, err := fitOne(ctx, pr, r, fc, st, data)
		if err != nil {
			return nil, fmt.Errorf("halo: mock %d: %w", k, err)
		}
		g := rep.Groups[0]
		row := 2 * (k - 1)
		if g.Converged && g.StdErr != nil {
			copy(m.Estimates[row:row+2], g.Estimate)
			copy(m.StdErr[row:row+2], g.StdErr)
			m.Used++
		} else {
			m.Estimates[row], m.Estimates[row+1] = math.NaN(), math.NaN()
			m.StdErr[row], m.StdErr[row+1] = math.NaN(), math.NaN()
		}
		progress(1 + k)
	}
	m.Elapsed = time.Since(start)
	m.PerFit = m.Elapsed / time.Duration(K)
	m.summarise(truth)
	out.Mocks = m
	return out, nil
}

// catalogue returns the run's final states plus noise of σ from stream
// k of seed (none with exact).
func catalogue(r *Result, sigma float64, seed, k uint64, exact bool) []float64 {
	y := append([]float64(nil), r.Solve.Y...)
	if exact {
		return y
	}
	rng := rand.New(rand.NewPCG(seed, noiseStream+k))
	for i := range y {
		y[i] += sigma * rng.NormFloat64()
	}
	return y
}

// lmStart is the start of the Levenberg–Marquardt stage for data.
func lmStart(r *Result, fc FitConfig, data []float64) ([]float64, int) {
	if fc.Direct {
		return fc.Start, 0
	}
	return energyStart(r.Stars.Y0, data, r.Config.RC, fc.Start)
}

// fitOne fits (vc, q) to one catalogue from start.
func fitOne(ctx context.Context, pr *gradsolve.Problem, r *Result, fc FitConfig, start, data []float64) (*fit.Report, error) {
	c := r.Config
	w := 1 / (fc.Sigma * fc.Sigma)
	spec := &fit.Spec{
		Problem: pr,
		Ensemble: gradsolve.Ensemble{N: c.N, Y0: r.Stars.Y0, P: []float64{c.VC, c.Q, c.RC},
			T0: []float64{0}, T1: []float64{r.T1}},
		Options: gradsolve.Options{Method: c.Method, Engine: c.Engine, RTol: c.RTol, ATol: c.ATol, Workers: c.Workers},
		Data:    &gradsolve.FitData{Final: data, FinalWeights: []float64{w, w, w, w, w, w}},
		Params: []fit.Param{
			{Wrt: gradsolve.Param(0), Transform: fit.Log()},
			{Wrt: gradsolve.Param(1), Transform: fit.Log()},
		},
		Start:     start,
		Optimizer: &fit.LevenbergMarquardt{},
		MaxIter:   fc.MaxIter,
		// The weights are the precisions 1/σ²: unit σ in the noise model.
		Noise: &fit.Noise{Sigma: 1},
	}
	return fit.Run(ctx, spec)
}

// mahalanobis returns (a − b)ᵀ F (a − b) for the 2×2 matrix F.
func mahalanobis(a, b, F []float64) float64 {
	if F == nil {
		return math.NaN()
	}
	d0, d1 := a[0]-b[0], a[1]-b[1]
	return d0*(F[0]*d0+F[1]*d1) + d1*(F[2]*d0+F[3]*d1)
}

// summarise fills the statistics of the used mocks.
func (m *Mocks) summarise(truth []float64) {
	nan := math.NaN()
	for c := range 2 {
		var sum, sumSE float64
		covered := 0
		for k := range m.K {
			e, s := m.Estimates[2*k+c], m.StdErr[2*k+c]
			if math.IsNaN(e) {
				continue
			}
			sum += e
			sumSE += s
			if math.Abs(e-truth[c]) <= s {
				covered++
			}
		}
		u := float64(m.Used)
		mean, meanSE := sum/u, sumSE/u
		var ss float64
		for k := range m.K {
			if e := m.Estimates[2*k+c]; !math.IsNaN(e) {
				ss += (e - mean) * (e - mean)
			}
		}
		scatter, ratioErr := nan, nan
		if m.Used > 1 {
			scatter = math.Sqrt(ss / (u - 1))
			ratioErr = scatter / meanSE / math.Sqrt(2*(u-1))
		}
		if m.Used == 0 {
			mean, meanSE = nan, nan
		}
		m.Mean = append(m.Mean, mean)
		m.Scatter = append(m.Scatter, scatter)
		m.MeanStdErr = append(m.MeanStdErr, meanSE)
		m.Ratio = append(m.Ratio, scatter/meanSE)
		m.RatioErr = append(m.RatioErr, ratioErr)
		m.Bias = append(m.Bias, (mean-truth[c])/(meanSE/math.Sqrt(u)))
		m.Covered = append(m.Covered, float64(covered)/u)
	}
}

// energyStart returns the (vc, q) that best conserves the stars' energy
// between their known initial states y0 and the catalogue's final
// states obs, found by damped Gauss–Newton from start: it minimises
// Σ_i (E(obs_i; vc, q) − E(y0_i; vc, q))², whose residuals,
//
//	ΔE_i = ½(|v_obs|² − |v_0|²) + ½·vc²·(ln D(x_obs; q) − ln D(x_0; q)),
//
// are linear in vc² and smooth in q: unlike the final positions, they
// do not wrap with the orbits' phases, so the search has no local
// minima near the truth. It needs no solves. The estimate is good to
// about σ/(|v|·√N) and lies well inside the basin of the positions'
// least squares (about ±7% in vc at the defaults).
func energyStart(y0, obs []float64, rc float64, start []float64) ([]float64, int) {
	n := len(y0) / 6
	dK := make([]float64, n)
	for i := range n {
		a, b := y0[6*i+3:6*i+6], obs[6*i+3:6*i+6]
		dK[i] = 0.5 * (b[0]*b[0] + b[1]*b[1] + b[2]*b[2] - a[0]*a[0] - a[1]*a[1] - a[2]*a[2])
	}
	// a(q) = ln D(x_obs; q) − ln D(x_0; q) and its derivative in q.
	pot := func(i int, q float64) (a, da float64) {
		x0, x1 := y0[6*i:6*i+3], obs[6*i:6*i+3]
		d0 := rc*rc + x0[0]*x0[0] + x0[1]*x0[1] + x0[2]*x0[2]/(q*q)
		d1 := rc*rc + x1[0]*x1[0] + x1[1]*x1[1] + x1[2]*x1[2]/(q*q)
		q3 := q * q * q
		return math.Log(d1) - math.Log(d0), -2*x1[2]*x1[2]/(q3*d1) + 2*x0[2]*x0[2]/(q3*d0)
	}
	sumsq := func(u, q float64) float64 {
		var s float64
		for i := range n {
			a, _ := pot(i, q)
			r := dK[i] + 0.5*u*a
			s += r * r
		}
		return s
	}
	u, q := start[0]*start[0], start[1]
	s, mu := sumsq(u, q), 1e-3
	it := 0
	for ; it < 200; it++ {
		var A00, A01, A11, g0, g1 float64
		for i := range n {
			a, da := pot(i, q)
			r := dK[i] + 0.5*u*a
			j0, j1 := 0.5*a, 0.5*u*da
			A00, A01, A11 = A00+j0*j0, A01+j0*j1, A11+j1*j1
			g0, g1 = g0+j0*r, g1+j1*r
		}
		accepted := false
		for range 40 {
			b00, b11 := A00*(1+mu), A11*(1+mu)
			det := b00*b11 - A01*A01
			h0, h1 := -(b11*g0-A01*g1)/det, -(b00*g1-A01*g0)/det
			un, qn := u+h0, q+h1
			if un > 0 && qn > 0 && !math.IsNaN(det) {
				if sn := sumsq(un, qn); sn < s {
					u, q, s, mu = un, qn, sn, max(mu/3, 1e-12)
					accepted = true
					if math.Abs(h0) <= 1e-13*u && math.Abs(h1) <= 1e-13*q {
						return []float64{math.Sqrt(u), q}, it + 1
					}
					break
				}
			}
			mu *= 4
		}
		if !accepted {
			break
		}
	}
	return []float64{math.Sqrt(u), q}, it
}

// CheckFitSize is CheckSize for a run followed by FitRun: it adds the
// fit's solves with sensitivities (one at a time) and the catalogue.
func CheckFitSize(cfg Config) error { return checkSize(cfg, true) }
