package quintessence

import (
	"context"
	"math"
	"testing"
)

// The mocks' sample covariance over K draws matches the DESI DR2
// covariance: each element's sample estimate has standard error
// √((C_ii·C_jj + C_ij²)/K) for Gaussian draws, and the sample mean's
// √(C_ii/K); every one of the 91 + 13 estimates must lie within 5 of
// them (a false alarm has probability ~1e-4 overall).
func TestMockCovariance(t *testing.T) {
	dt, err := newData()
	if err != nil {
		t.Fatal(err)
	}
	const n, K = 13, 20000
	mu := make([]float64, n)
	for i := range mu {
		mu[i] = float64(i) // a non-zero mean, recovered below
	}
	var mean [n]float64
	var sum [n * n]float64
	for k := range K {
		d := dt.mock(mu, 3, k)
		for i := range n {
			x := d[i] - mu[i]
			mean[i] += x
			for j := range n {
				sum[i*n+j] += x * (d[j] - mu[j])
			}
		}
	}
	c := DESIDR2Cov()
	for i := range n {
		if se := math.Sqrt(c[i*n+i] / K); math.Abs(mean[i]/K) > 5*se {
			t.Errorf("mean %d: %.3g, want 0 ± %.2g", i, mean[i]/K, se)
		}
		for j := 0; j <= i; j++ {
			got := sum[i*n+j] / K
			se := math.Sqrt((c[i*n+i]*c[j*n+j] + c[i*n+j]*c[i*n+j]) / K)
			if math.Abs(got-c[i*n+j]) > 5*se {
				t.Errorf("C[%d,%d]: sample %.5g, DESI %.5g (σ %.2g)", i, j, got, c[i*n+j], se)
			}
		}
	}
	// Reproducible, and distinct streams for distinct mocks.
	a, b, o := dt.mock(mu, 3, 7), dt.mock(mu, 3, 7), dt.mock(mu, 3, 8)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("mock 7 not reproducible")
		}
	}
	if a[0] == o[0] {
		t.Error("mocks 7 and 8 alike")
	}
}

// A small run: coverage in a sane band (p = 0.68, N = 20: σ = 0.10),
// the same results for the same seed, a mock profiled alone equal to the
// same mock in its chunk, and the real data profiled beside mocks equal
// to Profile of the real data alone, bit for bit.
func TestMocksSmall(t *testing.T) {
	ctx := context.Background()
	lambdas := []float64{0, 0.2, 0.4, 0.6, 0.8, 1, 1.2, 1.4, 1.6}
	truth, err := Truth(ctx, 1, 0, Tolerances{})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(truth.OmegaM-0.3066) > 5e-5 || math.Abs(truth.HRd-98.721) > 5e-4 {
		t.Errorf("truth Ω_m %.5f h·r_d %.4f, want the profile's 0.3066, 98.721 (§B.7)", truth.OmegaM, truth.HRd)
	}
	s, err := Mocks(ctx, lambdas, truth, 20, 11, Tolerances{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.N != 20 || len(s.Mocks) != 20 || !(s.Coverage >= 0.35 && s.Coverage <= 0.95) {
		t.Errorf("coverage %d/%d = %.2f, want within ~3σ of 0.68", s.Covered, s.N, s.Coverage)
	}
	if math.Abs(s.Sigma-math.Sqrt(Coverage68*(1-Coverage68)/20)) > 1e-15 {
		t.Errorf("σ = %g", s.Sigma)
	}
	again, err := Mocks(ctx, lambdas, truth, 20, 11, Tolerances{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k := range s.Mocks {
		a, b := s.Mocks[k], again.Mocks[k]
		if a.Best != b.Best || a.MinChi2 != b.MinChi2 || a.Covers != b.Covers || !same(a.Lo, b.Lo) || !same(a.Hi, b.Hi) {
			t.Fatalf("mock %d: %+v, then %+v", k, a, b)
		}
	}
	dt, _ := newData()
	alone, err := profileMany(ctx, lambdas, 0, Tolerances{}, []*data{{d: dt.mock(truth.Mu, 11, 13), w: dt.w}})
	if err != nil {
		t.Fatal(err)
	}
	var tmp MockSummary
	if r := mockResult(alone[0], 1, &tmp); r.MinChi2 != s.Mocks[13].MinChi2 || !same(r.Lo, s.Mocks[13].Lo) || !same(r.Hi, s.Mocks[13].Hi) {
		t.Errorf("mock 13 alone %+v, in its chunk %+v", r, s.Mocks[13])
	}
	both, err := profileMany(ctx, lambdas, 0, Tolerances{}, []*data{{d: dt.mock(truth.Mu, 11, 0), w: dt.w}, dt})
	if err != nil {
		t.Fatal(err)
	}
	real, err := Profile(ctx, lambdas, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range real {
		if a, b := both[1][i], real[i]; a.Chi2 != b.Chi2 || a.OmegaM != b.OmegaM || a.HRd != b.HRd || a.W0 != b.W0 {
			t.Errorf("λ = %g: beside a mock %+v, alone %+v", real[i].Lambda, a, b)
		}
	}
	for _, bad := range []float64{-0.1, 1.7} {
		tr := *truth
		tr.Lambda = bad
		if _, err := Mocks(ctx, lambdas, &tr, 1, 1, Tolerances{}, nil); err == nil {
			t.Errorf("λ_true = %g accepted", bad)
		}
	}
	if _, err := Mocks(ctx, lambdas, truth, 0, 1, Tolerances{}, nil); err == nil {
		t.Error("0 mocks accepted")
	}
}

func same(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

// A population of a few hundred: every cosmology flat to the flatness
// solve's tolerance, drawn in range, and its distances those of Flatten
// (the profile's code path) for the same cosmology alone.
func TestPopulation(t *testing.T) {
	ctx := context.Background()
	sp := &PopulationSpec{N: 300, OmegaMMin: PopOmegaMMin, OmegaMMax: PopOmegaMMax, LambdaMax: 1.6, Seed: 5}
	kept := map[int]*Background{}
	seen := 0
	s, err := Population(ctx, sp, func(k int, bg *Background) {
		if k != seen {
			t.Fatalf("visited %d, want %d", k, seen)
		}
		seen++
		if math.Abs(bg.F) > 1e-13 {
			t.Errorf("cosmology %d: E²(0) − 1 = %g", k, bg.F)
		}
		if !(bg.OmegaM >= PopOmegaMMin && bg.OmegaM < PopOmegaMMax && bg.Lambda >= 0 && bg.Lambda < 1.6) {
			t.Errorf("cosmology %d out of range: %+v", k, bg.Cosmology)
		}
		if k%97 == 0 {
			kept[k] = bg
		}
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if seen != 300 || s.N != 300 || s.MaxFlatness > 1e-13 {
		t.Errorf("seen %d, N %d, max flatness %g", seen, s.N, s.MaxFlatness)
	}
	for k, bg := range kept {
		c := sp.Draw(k)
		if c.OmegaM != bg.OmegaM || c.Lambda != bg.Lambda {
			t.Fatalf("Draw(%d) = %+v, population had %+v", k, c, bg.Cosmology)
		}
		ref, err := Flatten(ctx, []Cosmology{c})
		if err != nil {
			t.Fatal(err)
		}
		for j := range bg.Z {
			for _, q := range [][2]float64{{bg.DM[j], ref[0].DM[j]}, {bg.DH[j], ref[0].DH[j]}, {bg.DV[j], ref[0].DV[j]}} {
				if math.Abs(q[0]-q[1]) > 1e-12*q[1] {
					t.Errorf("cosmology %d z = %g: %.15g, alone %.15g", k, bg.Z[j], q[0], q[1])
				}
			}
		}
		m, _ := templates(bg)
		mr, _ := templates(ref[0])
		for i := range m {
			if math.Abs(m[i]-mr[i]) > 1e-12*mr[i] {
				t.Errorf("cosmology %d observable %d: %.15g, alone %.15g", k, i, m[i], mr[i])
			}
		}
	}
	for _, bad := range []PopulationSpec{{N: 0, OmegaMMin: 0.2, OmegaMMax: 0.4}, {N: 1, OmegaMMin: 0.4, OmegaMMax: 0.2}, {N: 1, OmegaMMin: 0.2, OmegaMMax: 0.4, LambdaMax: -1}} {
		if _, err := Population(ctx, &bad, nil, nil); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
