package control

import (
	"math"
	"math/rand/v2"
	"testing"
)

// LaneNorm gives each lane Norm.Of's result for that lane alone, bit for
// bit and with its verdict: RMS and DOP853 forms, norms over part of the
// state (NaN or ±Inf past the norm's components make the attempt
// unusable), groups of lanes, and inactive lanes untouched.
func TestLaneNormMatchesNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	special := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1e-310, 1e300}
	for trial := range 600 {
		L, W := []int{1, 3, 4, 8}[trial%4], 0
		if L == 8 {
			W = 4
		}
		w := W
		if w == 0 {
			w = L
		}
		dim := 1 + rng.IntN(7)
		n := 1 + rng.IntN(dim)
		at := func(d, l int) int { return (l/w)*dim*w + d*w + l%w }
		vals := func() []float64 {
			v := make([]float64, dim*L)
			for i := range v {
				v[i] = (rng.Float64()*2 - 1) * math.Pow(10, 4*(rng.Float64()*2-1))
				if rng.IntN(40) == 0 {
					v[i] = special[rng.IntN(len(special))]
				}
			}
			return v
		}
		e, e3, y, y1 := vals(), vals(), vals(), vals()
		atol, rtol := make([]float64, n), make([]float64, n)
		for i := range n {
			atol[i], rtol[i] = math.Pow(10, -12+6*rng.Float64()), math.Pow(10, -10+6*rng.Float64())
		}
		h := make([]float64, L)
		active := make([]bool, L)
		for l := range L {
			h[l], active[l] = math.Pow(10, -4+4*rng.Float64()), rng.IntN(5) > 0
		}
		dop := trial%3 == 0
		nm := LaneNorm{E: e, ATol: atol, RTol: rtol, N: n, L: L, W: W}
		if dop {
			nm.E3 = e3
		}
		errs, oks := make([]float64, L), make([]bool, L)
		for l := range L {
			errs[l] = -7 // untouched where inactive
		}
		nm.Of(h, y, y1, active, errs, oks)
		for l := range L {
			if !active[l] {
				if errs[l] != -7 || oks[l] {
					t.Fatalf("trial %d: inactive lane %d written: %v, %v", trial, l, errs[l], oks[l])
				}
				continue
			}
			col := func(v []float64) []float64 {
				c := make([]float64, dim)
				for d := range dim {
					c[d] = v[at(d, l)]
				}
				return c
			}
			s := Norm{E: col(e)[:n], ATol: atol, RTol: rtol}
			if dop {
				s.E3 = col(e3)[:n]
			}
			want, wok := s.Of(h[l], col(y), col(y1))
			if math.Float64bits(errs[l]) != math.Float64bits(want) || oks[l] != wok {
				t.Fatalf("trial %d (L=%d, W=%d, n=%d of %d, DOP853 %v): lane %d: %v, %v; Norm.Of gives %v, %v",
					trial, L, W, n, dim, dop, l, errs[l], oks[l], want, wok)
			}
		}
	}
}
