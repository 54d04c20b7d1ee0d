package pmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMinMaxSteps checks the straight-line forms of math.Min and
// math.Max against them, bit for bit (any NaN where they give a NaN),
// on every pair of special values and on random pairs, equal pairs and
// pairs of zeros of both signs included.
func TestMinMaxSteps(t *testing.T) {
	checkWellFormed(t, "Min", MinSteps())
	checkWellFormed(t, "Max", MaxSteps())
	sp := []float64{0, math.Copysign(0, -1), 1, -1, math.Inf(1), math.Inf(-1), math.NaN(),
		math.Float64frombits(0xFFF8000000000042), math.SmallestNonzeroFloat64, -math.MaxFloat64, 2.5}
	var pairs [][2]float64
	for _, a := range sp {
		for _, c := range sp {
			pairs = append(pairs, [2]float64{a, c})
		}
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 5000 {
		a, c := rng.NormFloat64(), math.Float64frombits(rng.Uint64())
		pairs = append(pairs, [2]float64{a, c}, [2]float64{c, a}, [2]float64{a, a})
	}
	for _, fn := range []struct {
		name string
		p    *Program
		f    func(x, y float64) float64
	}{{"Min", MinSteps(), math.Min}, {"Max", MaxSteps(), math.Max}} {
		for _, pr := range pairs {
			got, want := fn.p.Run2(pr[0], pr[1]), fn.f(pr[0], pr[1])
			if math.IsNaN(want) && math.IsNaN(got) {
				continue
			}
			if math.Float64bits(got) != math.Float64bits(want) {
				t.Errorf("%s(%v, %v): steps %v, math %v", fn.name, pr[0], pr[1], got, want)
			}
		}
	}
}
