// Package quantile finds exact nearest-rank quantiles of an
// application's per-trajectory values without sorting them all: Top
// over a stream seen once (the errors of a run solved in chunks),
// Select over an array it must not reorder (the stars' periods).
//
// Both give the value sort.Float64s puts at the rank (NaN first).
package quantile

import "math"

// Rank returns the 0-based index, in ascending order, of the q-quantile
// of n values by nearest rank: ⌈q·n⌉ − 1, within [0, n−1].
func Rank(n int, q float64) int {
	k := int(math.Ceil(q*float64(n))) - 1
	return max(0, min(k, n-1))
}

// less is sort.Float64s's order: NaN below everything.
func less(a, b float64) bool { return a < b || math.IsNaN(a) && !math.IsNaN(b) }

// Top keeps the largest values of a stream of n, as many as the
// q-quantile needs: n − Rank(n, q), about (1 − q)·n (TopBytes), in a
// min-heap.
type Top struct {
	n, m, seen int
	h          []float64
}

// NewTop returns a Top for the q-quantile of n values.
func NewTop(n int, q float64) *Top {
	m := n - Rank(n, q)
	return &Top{n: n, m: m, h: make([]float64, 0, m)}
}

// TopBytes is the memory a Top for the q-quantile of n values keeps.
func TopBytes(n int, q float64) uint64 { return 8 * uint64(n-Rank(n, q)) }

// Add adds the values v.
func (t *Top) Add(v ...float64) {
	for _, x := range v {
		t.seen++
		if len(t.h) < t.m {
			t.h = append(t.h, x)
			t.up(len(t.h) - 1)
			continue
		}
		if t.m > 0 && less(t.h[0], x) {
			t.h[0] = x
			t.down(0)
		}
	}
}

// Quantile returns the q-quantile of the values added: the smallest of
// the n − Rank(n, q) largest. It is NaN until all n have been added.
func (t *Top) Quantile() float64 {
	if t.seen != t.n || t.m == 0 {
		return math.NaN()
	}
	return t.h[0]
}

func (t *Top) up(i int) {
	h := t.h
	for i > 0 {
		p := (i - 1) / 2
		if !less(h[i], h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (t *Top) down(i int) {
	h := t.h
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		c := l
		if r := l + 1; r < len(h) && less(h[r], h[l]) {
			c = r
		}
		if !less(h[c], h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// key maps x to an unsigned integer in sort.Float64s's order: NaN to 0,
// −0 to +0's key, then the sign-flipped bits.
func key(x float64) uint64 {
	switch {
	case math.IsNaN(x):
		return 0
	case x == 0:
		x = 0
	}
	b := math.Float64bits(x)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

// unkey inverts key.
func unkey(k uint64) float64 {
	switch {
	case k == 0:
		return math.NaN()
	case k>>63 != 0:
		return math.Float64frombits(k &^ (1 << 63))
	}
	return math.Float64frombits(^k)
}

// Select returns the k-th smallest of v (0-based; the value
// sort.Float64s would put at index k, with −0 as +0) without changing v
// or copying it: a radix selection in four passes over v, each counting
// 16 bits of the values' keys into 65536 buckets (512 KiB).
func Select(v []float64, k int) float64 {
	if k < 0 || k >= len(v) {
		panic("quantile: Select: rank out of range")
	}
	counts := make([]int, 1<<16)
	var prefix uint64
	for level := range 4 {
		shift := uint(48 - 16*level)
		clear(counts)
		for _, x := range v {
			kx := key(x)
			if kx>>(shift+16) == prefix>>(shift+16) {
				counts[(kx>>shift)&0xffff]++
			}
		}
		for b, c := range counts {
			if k < c {
				prefix |= uint64(b) << shift
				break
			}
			k -= c
		}
	}
	return unkey(prefix)
}
