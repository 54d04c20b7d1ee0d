package quintessence

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// popStream + k is the PCG stream of cosmology k of a population: a
// cosmology depends on the seed and its index only, not on the chunks.
const popStream = 0x706f_7075_0000_0000 // "popu"

// PopulationChunk is the number of cosmologies solved together: the
// population streams through chunks of this size, so its memory is that
// of one chunk whatever N is (CheckSize(PopulationChunk): the
// backgrounds, about 1 kB a cosmology, and the solve's arrays, with the
// flatness solve's copies; measured: at most 19 MB of heap in use, ≈ 4.6
// kB a cosmology, and 35 MB resident for N = 10⁴ and 10⁵ alike).
const PopulationChunk = 4096

// Default range of Ω_m in a population.
const (
	PopOmegaMMin = 0.2
	PopOmegaMMax = 0.4
)

// PopulationSpec describes a population: N flat cosmologies with Ω_m
// uniform in [OmegaMMin, OmegaMMax) and λ uniform in [0, LambdaMax),
// drawn from PCG(Seed, popStream + k) for cosmology k, at radiation
// OmegaR.
type PopulationSpec struct {
	N                    int
	OmegaMMin, OmegaMMax float64
	LambdaMax, OmegaR    float64
	Seed                 uint64
	Tol                  Tolerances
}

// Draw returns cosmology k of the population (ṽ0 not yet solved).
func (sp *PopulationSpec) Draw(k int) Cosmology {
	rng := rand.New(rand.NewPCG(sp.Seed, popStream+uint64(k)))
	om := sp.OmegaMMin + (sp.OmegaMMax-sp.OmegaMMin)*rng.Float64()
	l := sp.LambdaMax * rng.Float64()
	return Cosmology{OmegaM: om, Lambda: l, OmegaR: sp.OmegaR}
}

// Range is the running minimum, maximum and mean of a quantity.
type Range struct {
	Min, Max, Mean float64
	n              int
}

func (r *Range) add(x float64) {
	if r.n == 0 {
		r.Min, r.Max = x, x
	}
	r.n++
	r.Min, r.Max = math.Min(r.Min, x), math.Max(r.Max, x)
	r.Mean += (x - r.Mean) / float64(r.n)
}

// PopulationSummary is what Population keeps of a population: ranges
// of the distances at each redshift of the data (units of c/H0), of ṽ0
// and w0, and the largest flatness residual |E²(0) − 1|.
type PopulationSummary struct {
	N  int
	Z  []float64
	DM []Range
	DH []Range
	DV []Range
	V0 Range
	W0 Range
	// MaxFlatness is max |E²(0) − 1| over the population.
	MaxFlatness float64
	// Chunk is the chunk size; Seconds the wall time of the solves and
	// PerCosmology = Seconds/N.
	Chunk                 int
	Seconds, PerCosmology float64
}

// Population solves the spec's N cosmologies in chunks of
// PopulationChunk: the flatness solve (Flatten: ṽ0 by Newton to
// |E²(0) − 1| < 1e-13) and the BAO distances D_M, D_H, D_V at the DESI
// DR2 redshifts, and summarises them. visit, if not nil, sees each
// cosmology's background (k its index) before its chunk is dropped;
// progress, if not nil, is called after each chunk with the number done.
func Population(ctx context.Context, sp *PopulationSpec, visit func(k int, bg *Background), progress func(done int)) (*PopulationSummary, error) {
	switch {
	case sp.N < 1:
		return nil, fmt.Errorf("quintessence: a population of %d: need at least 1", sp.N)
	case !(sp.OmegaMMin > 0 && sp.OmegaMMax > sp.OmegaMMin && sp.OmegaMMax+sp.OmegaR < 1):
		return nil, fmt.Errorf("quintessence: Ω_m in [%g, %g): need 0 < min < max and max + Ω_r < 1", sp.OmegaMMin, sp.OmegaMMax)
	case !(sp.LambdaMax >= 0) || math.IsInf(sp.LambdaMax, 0):
		return nil, fmt.Errorf("quintessence: λ_max = %g: must be finite and ≥ 0", sp.LambdaMax)
	}
	chunk := min(sp.N, PopulationChunk)
	if err := CheckSize(chunk); err != nil {
		return nil, err
	}
	zs := distinct()
	s := &PopulationSummary{N: sp.N, Z: zs, Chunk: chunk,
		DM: make([]Range, len(zs)), DH: make([]Range, len(zs)), DV: make([]Range, len(zs))}
	start := time.Now()
	cs := make([]Cosmology, chunk)
	for k0 := 0; k0 < sp.N; k0 += chunk {
		k1 := min(sp.N, k0+chunk)
		cs = cs[:k1-k0]
		for k := k0; k < k1; k++ {
			cs[k-k0] = sp.Draw(k)
		}
		bgs, err := flatten(ctx, cs, sp.Tol)
		if err != nil {
			return nil, fmt.Errorf("population cosmologies %d–%d: %w", k0, k1-1, err)
		}
		for i, bg := range bgs {
			for j := range zs {
				s.DM[j].add(bg.DM[j])
				s.DH[j].add(bg.DH[j])
				s.DV[j].add(bg.DV[j])
			}
			s.V0.add(bg.V0)
			s.W0.add(bg.W0)
			s.MaxFlatness = math.Max(s.MaxFlatness, math.Abs(bg.F))
			if visit != nil {
				visit(k0+i, bg)
			}
		}
		if progress != nil {
			progress(k1)
		}
	}
	s.Seconds = time.Since(start).Seconds()
	s.PerCosmology = s.Seconds / float64(sp.N)
	return s, nil
}
