package quintessence

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// mockStream is the PCG stream of mock k's draws is mockStream + k: a
// mock's data depend on the seed and its index only, not on how many
// mocks run or how they are chunked.
const mockStream = 0x6d6f_636b_0000_0000 // "mock"

// MockChunk is the number of mocks profiled together as one ensemble
// (MockChunk × grid points trajectories per solve): enough to keep every
// worker busy, few enough that the arrays stay a few MB.
const MockChunk = 64

// MockTruth is the cosmology the mocks are drawn at and its BAO
// observables: λ_true, with Ω_m and h·r_d at the best fit of the real
// DESI DR2 data at that λ (Profile at the single λ_true).
type MockTruth struct {
	Lambda, OmegaM, HRd, OmegaR float64
	// Mu is the observables' vector α·m(Ω_m, λ), in the order of DESIDR2.
	Mu []float64
}

// MockResult is one mock's profile: the best λ on the grid, its 68%
// interval (Δχ² ≤ 1, by Interval: NaN where the interval reaches the end
// of the grid) and whether it covers λ_true.
type MockResult struct {
	Best, Lo, Hi float64
	MinChi2      float64
	Covers       bool
}

// MockSummary is the outcome of Mocks.
type MockSummary struct {
	Truth MockTruth
	// N mocks, Covered of them cover λ_true; Coverage = Covered/N and
	// Sigma its binomial standard error √(p(1−p)/N) at p = 0.6827.
	N, Covered      int
	Coverage, Sigma float64
	// OpenLo and OpenHi count the intervals that reach λ = 0 (the prior's
	// edge) and the grid's largest λ.
	OpenLo, OpenHi int
	Mocks          []MockResult
	// Seconds is the wall time of the mocks' profiles; PerMock = Seconds/N.
	Seconds, PerMock float64
}

// Coverage68 is the probability of |x| ≤ 1σ for a Gaussian, erf(1/√2).
var Coverage68 = math.Erf(1 / math.Sqrt2)

// Truth returns the cosmology at λ_true fitted to the real data, and its
// observables.
func Truth(ctx context.Context, lambdaTrue, omegaR float64, tol Tolerances) (*MockTruth, error) {
	pts, err := ProfileWith(ctx, []float64{lambdaTrue}, omegaR, tol)
	if err != nil {
		return nil, err
	}
	p := pts[0]
	bgs, err := flatten(ctx, []Cosmology{{OmegaM: p.OmegaM, Lambda: lambdaTrue, OmegaR: omegaR, V0: p.V0}}, tol)
	if err != nil {
		return nil, err
	}
	m, _ := templates(bgs[0])
	mu := make([]float64, len(m))
	for i := range m {
		mu[i] = p.Alpha * m[i]
	}
	return &MockTruth{Lambda: lambdaTrue, OmegaM: p.OmegaM, HRd: p.HRd, OmegaR: omegaR, Mu: mu}, nil
}

// MockData returns mock k's data vector d = μ + L·z, with z standard
// normal from PCG(seed, mockStream+k) and L the Cholesky factor of the
// DESI DR2 covariance.
func MockData(mu []float64, seed uint64, k int) ([]float64, error) {
	dt, err := newData()
	if err != nil {
		return nil, err
	}
	return dt.mock(mu, seed, k), nil
}

func (dt *data) mock(mu []float64, seed uint64, k int) []float64 {
	rng := rand.New(rand.NewPCG(seed, mockStream+uint64(k)))
	z := make([]float64, len(mu))
	for i := range z {
		z[i] = rng.NormFloat64()
	}
	return dt.w.Sample(nil, mu, z)
}

// Mocks draws n mock data sets at truth (MockData with seed, mocks 0 …
// n−1), profiles each over the grid lambdas as the real data are
// (profileMany, MockChunk mocks per ensemble), and reports the coverage
// of the 68% interval. An interval end the grid does not bracket (Interval
// gives NaN) is taken as the grid's end: at λ = 0 that is the prior's
// edge λ ≥ 0, so the interval is [0, hi]; at the grid's largest λ the
// interval reaches at least that far, and λ_true ≤ max λ lies inside.
// λ_true must lie in [lambdas[0], lambdas[len−1]]. progress, if not nil,
// is called after each chunk with the mocks done.
func Mocks(ctx context.Context, lambdas []float64, truth *MockTruth, n int, seed uint64, tol Tolerances, progress func(done int)) (*MockSummary, error) {
	if n < 1 {
		return nil, fmt.Errorf("quintessence: %d mocks: need at least 1", n)
	}
	if len(lambdas) < 2 {
		return nil, errors.New("quintessence: the mocks need a grid of at least 2 values of λ")
	}
	if lt := truth.Lambda; !(lt >= lambdas[0] && lt <= lambdas[len(lambdas)-1]) {
		return nil, fmt.Errorf("quintessence: λ_true = %g outside the grid [%g, %g]", lt, lambdas[0], lambdas[len(lambdas)-1])
	}
	if err := CheckSize(MockChunk * len(lambdas)); err != nil {
		return nil, err
	}
	dt, err := newData()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	s := &MockSummary{Truth: *truth, N: n, Mocks: make([]MockResult, 0, n)}
	for k0 := 0; k0 < n; k0 += MockChunk {
		k1 := min(n, k0+MockChunk)
		dts := make([]*data, 0, k1-k0)
		for k := k0; k < k1; k++ {
			dts = append(dts, &data{d: dt.mock(truth.Mu, seed, k), w: dt.w})
		}
		profiles, err := profileMany(ctx, lambdas, truth.OmegaR, tol, dts)
		if err != nil {
			return nil, fmt.Errorf("mocks %d–%d: %w", k0, k1-1, err)
		}
		for _, pts := range profiles {
			s.Mocks = append(s.Mocks, mockResult(pts, truth.Lambda, s))
		}
		if progress != nil {
			progress(k1)
		}
	}
	s.Seconds = time.Since(start).Seconds()
	s.PerMock = s.Seconds / float64(n)
	s.Coverage = float64(s.Covered) / float64(n)
	s.Sigma = math.Sqrt(Coverage68 * (1 - Coverage68) / float64(n))
	return s, nil
}

// mockResult finds a mock's interval and whether it covers λ_true,
// counting open ends in s.
func mockResult(pts []ProfilePoint, lambdaTrue float64, s *MockSummary) MockResult {
	lo, hi, best := Interval(pts)
	r := MockResult{Best: best, Lo: lo, Hi: hi, MinChi2: math.Inf(1)}
	for _, p := range pts {
		r.MinChi2 = math.Min(r.MinChi2, p.Chi2)
	}
	l, h := lo, hi
	if math.IsNaN(l) {
		s.OpenLo++
		l = pts[0].Lambda
	}
	if math.IsNaN(h) {
		s.OpenHi++
		h = pts[len(pts)-1].Lambda
	}
	r.Covers = l <= lambdaTrue && lambdaTrue <= h
	if r.Covers {
		s.Covered++
	}
	return r
}
