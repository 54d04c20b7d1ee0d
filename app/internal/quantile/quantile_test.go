package quantile

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"testing"
)

// samples are value sets with what a quantile can trip on: ties, NaN,
// infinities, signed zeros, negatives, a narrow range (many values
// sharing their top bits), and sizes around the heap's edge cases.
func samples() map[string][]float64 {
	rng := rand.New(rand.NewPCG(1, 2))
	out := map[string][]float64{}
	for _, n := range []int{1, 2, 3, 99, 100, 101, 1000, 4097} {
		u, narrow, mixed := make([]float64, n), make([]float64, n), make([]float64, n)
		for i := range n {
			u[i] = rng.Float64()
			narrow[i] = 20 + 1e-12*float64(rng.IntN(50)) // ties, and 20 ± ulps
			switch rng.IntN(8) {
			case 0:
				mixed[i] = math.NaN()
			case 1:
				mixed[i] = math.Inf(1 - 2*rng.IntN(2))
			case 2:
				mixed[i] = math.Copysign(0, float64(1-2*rng.IntN(2)))
			case 3:
				mixed[i] = float64(rng.IntN(3)) // ties
			default:
				mixed[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
			}
		}
		out["uniform/"+strconv.Itoa(n)], out["narrow/"+strconv.Itoa(n)], out["mixed/"+strconv.Itoa(n)] = u, narrow, mixed
	}
	return out
}

// same says a and b are the same value: both NaN, or equal (−0 = +0).
func same(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

// Select gives sort.Float64s's value at every rank, and leaves v as it
// was.
func TestSelect(t *testing.T) {
	for name, v := range samples() {
		before := slices.Clone(v)
		sorted := slices.Clone(v)
		sort.Float64s(sorted)
		step := max(1, len(v)/50)
		for k := 0; k < len(v); k += step {
			if got := Select(v, k); !same(got, sorted[k]) {
				t.Errorf("%s: Select(k = %d) = %g, sorted %g", name, k, got, sorted[k])
			}
		}
		if got := Select(v, len(v)-1); !same(got, sorted[len(v)-1]) {
			t.Errorf("%s: the largest %g, sorted %g", name, got, sorted[len(v)-1])
		}
		for i := range v {
			if math.Float64bits(v[i]) != math.Float64bits(before[i]) {
				t.Fatalf("%s: Select changed v[%d]", name, i)
			}
		}
	}
}

// Top's quantile of a stream is the nearest-rank quantile of the sorted
// values, for quantiles from 0 to 1, whatever order the values come in.
func TestTop(t *testing.T) {
	for name, v := range samples() {
		sorted := slices.Clone(v)
		sort.Float64s(sorted)
		for _, q := range []float64{0, 0.01, 0.5, 0.9, 0.99, 0.999, 1} {
			n := len(v)
			top := NewTop(n, q)
			if top.Add(v[:n-1]...); !math.IsNaN(top.Quantile()) {
				t.Errorf("%s q %g: a quantile before every value was added", name, q)
			}
			top.Add(v[n-1])
			want := sorted[Rank(n, q)]
			if got := top.Quantile(); !same(got, want) {
				t.Errorf("%s q %g: Top %g, sorted %g", name, q, got, want)
			}
			if got, want := TopBytes(n, q), uint64(8*(n-Rank(n, q))); got != want || cap(top.h) != n-Rank(n, q) {
				t.Errorf("%s q %g: TopBytes %d, kept room for %d", name, q, got, cap(top.h))
			}
		}
	}
	// The 99th percentile keeps about 1% of the values.
	if b := TopBytes(1_000_000, 0.99); b != 8*10_001 {
		t.Errorf("TopBytes(10⁶, 0.99) = %d, want 8·10001", b)
	}
}

// Rank is ⌈q·n⌉ − 1 within [0, n−1].
func TestRank(t *testing.T) {
	for _, c := range []struct {
		n    int
		q    float64
		want int
	}{{1, 0.99, 0}, {100, 0.99, 98}, {101, 0.99, 99}, {200, 0.5, 99}, {10, 0, 0}, {10, 1, 9}} {
		if got := Rank(c.n, c.q); got != c.want {
			t.Errorf("Rank(%d, %g) = %d, want %d", c.n, c.q, got, c.want)
		}
	}
}
