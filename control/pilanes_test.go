package control

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gradsolve/gradsolve/internal/jit"
)

// laneRoutes are the routes of NextLanes a test takes: the machine code
// where this processor runs it, and the Go form everywhere.
func laneRoutes(t testing.TB) []bool {
	t.Helper()
	if jit.HasAVX2() && laneEntry() != 0 {
		return []bool{true, false}
	}
	return []bool{false}
}

// withLaneCode runs f with useLaneCode set to on.
func withLaneCode(on bool, f func()) {
	old := useLaneCode
	useLaneCode = on
	defer func() { useLaneCode = old }()
	f()
}

// laneConfigs are the controllers the lane tests judge with: DefaultPI
// for every order a method here has, custom bounds, the I controller
// (Beta2 = 0), exponents large enough that exp2's argument reaches
// ±1022 for normal errors, and controllers outside gradsolve's valid
// range, which NextLanes must still judge as Next does (in Go).
func laneConfigs() map[string]PI {
	cs := map[string]PI{}
	for p := 2; p <= 8; p++ {
		cs[fmt.Sprintf("DefaultPI(%d)", p)] = DefaultPI(p, 0, 0)
	}
	cs["bounds 0.333, 6"] = DefaultPI(5, 0.333, 6)
	cs["Tsit5 bounds"] = DefaultPI(5, 0.2, 10)
	i := DefaultPI(4, 0, 0)
	i.Beta2 = 0
	cs["I controller"] = i
	cs["β1 1, β2 0.5"] = PI{Beta1: 1, Beta2: 0.5, Safety: 0.9, QMin: 0.2, QMax: 10, QOldInit: 1e-4}
	cs["β1 2, β2 0"] = PI{Beta1: 2, Safety: 1, QMin: 0.5, QMax: 2, QOldInit: 1e-300}
	cs["β1 3, β2 2"] = PI{Beta1: 3, Beta2: 2, Safety: 0.5, QMin: 0.1, QMax: 50, QOldInit: 1}
	cs["tiny safety"] = PI{Beta1: 0.2, Beta2: 0.1, Safety: 1e-300, QMin: 0.2, QMax: 10, QOldInit: 1e-4}
	cs["NaN safety"] = PI{Beta1: 0.2, Beta2: 0.1, Safety: math.NaN(), QMin: 0.2, QMax: 10, QOldInit: 1e-4}
	cs["QOldInit 0"] = PI{Beta1: 0.2, Beta2: 0.1, Safety: 0.9, QMin: 0.2, QMax: 10}
	cs["QOldInit +Inf"] = PI{Beta1: 0.2, Beta2: 0.1, Safety: 0.9, QMin: 0.2, QMax: 10, QOldInit: math.Inf(1)}
	return cs
}

// adversarialErrors are the errors where Next's branches and the fast
// path of the machine code end, for controller c: zeros, subnormals,
// the neighbours of 1, huge and non-finite values, negative ones (no
// norm gives them, but Next has an answer), and the errors where
// exp2's n = round(y) crosses −1021 and 1022 on either branch.
func adversarialErrors(c PI) []float64 {
	up, down := func(x float64) float64 { return math.Nextafter(x, math.Inf(1)) }, func(x float64) float64 { return math.Nextafter(x, 0) }
	es := []float64{0, math.Copysign(0, -1), 5e-324, 1e-310, 0x1p-1022, up(0x1p-1022), down(0x1p-1022),
		1, down(1), up(1), 1.5, 2, 1e-300, 1e300, math.MaxFloat64, math.Inf(1), math.NaN(), math.Inf(-1), -1, -1e-320,
		math.Sqrt2 / 2, up(math.Sqrt2 / 2), down(math.Sqrt2 / 2), 0.5, 0.25, 1e-4, 1e-8}
	// y = β1·log₂err (rejected, err > 1) and y ≈ β1·log₂err − β2·log₂errOld
	// (accepted; errOld between QOldInit and 1) at the edges ±½ of n's
	// range, and a few ulps around.
	for _, edge := range []float64{-1021.5, 1022.5, -1021, 1022, -1075, 1024} {
		for _, lo := range []float64{0, log2(c.QOldInit)} {
			l := (edge + c.Beta2*lo) / c.Beta1
			if math.IsNaN(l) || math.IsInf(l, 0) || l < -1074 || l > 1023.99 {
				continue
			}
			x := math.Exp2(l)
			for range 4 {
				es = append(es, x)
				x = up(x)
			}
			x = math.Exp2(l)
			for range 4 {
				x = down(x)
				es = append(es, x)
			}
		}
	}
	return es
}

// laneError draws one lane's error: mostly what a solve meets (about a
// third rejected), sometimes an adversarial value.
func laneError(rng *rand.Rand, adv []float64) float64 {
	switch r := rng.Float64(); {
	case r < 0.25:
		return adv[rng.IntN(len(adv))]
	case r < 0.3:
		return math.Exp2(rng.Float64()*2100 - 1075) // anywhere in the doubles
	default:
		return math.Exp(rng.Float64()*24 - 20) // e^-20 … e^4
	}
}

// NextLanes judges every active lane as Next judges it alone, bit for
// bit (accept, factor and the state after), on both routes, for many
// lane counts, controllers and error sequences, and leaves the inactive
// lanes' accept, factor and state as they were.
func TestNextLanes(t *testing.T) {
	rounds := 3000
	if testing.Short() {
		rounds = 500
	}
	for _, code := range laneRoutes(t) {
		for name, c := range laneConfigs() {
			for _, L := range []int{4, 8, 3, 1} {
				t.Run(fmt.Sprintf("code=%v/%s/L=%d", code, name, L), func(t *testing.T) {
					withLaneCode(code, func() { checkNextLanes(t, c, L, rounds) })
				})
			}
		}
	}
}

func checkNextLanes(t *testing.T, c PI, L, rounds int) {
	rng := rand.New(rand.NewPCG(uint64(L), 7))
	adv := adversarialErrors(c)
	s := NewLaneStates(L)
	ref := make([]State, L)
	for l := range L {
		c.InitLane(s, l)
		c.Init(&ref[l])
	}
	err, factor := make([]float64, L), make([]float64, L)
	active, accept := make([]bool, L), make([]bool, L)
	const sentinel = -12345.5
	for r := range rounds {
		for l := range L {
			err[l] = laneError(rng, adv)
			active[l] = rng.IntN(5) != 0
			factor[l], accept[l] = sentinel, l%2 == 0
			if rng.IntN(200) == 0 { // a lane takes a new trajectory
				c.InitLane(s, l)
				c.Init(&ref[l])
			}
		}
		c.NextLanes(err, s, active, accept, factor)
		for l := range L {
			if !active[l] {
				if factor[l] != sentinel || accept[l] != (l%2 == 0) {
					t.Fatalf("round %d: inactive lane %d: accept %v, factor %v changed", r, l, accept[l], factor[l])
				}
			} else {
				wa, wf := c.Next(err[l], &ref[l])
				if accept[l] != wa || math.Float64bits(factor[l]) != math.Float64bits(wf) {
					t.Fatalf("round %d, lane %d, err %v (%#x): NextLanes gives %v, %v (%#x); Next %v, %v (%#x)",
						r, l, err[l], math.Float64bits(err[l]), accept[l], factor[l], math.Float64bits(factor[l]),
						wa, wf, math.Float64bits(wf))
				}
			}
			got := s.lane(l)
			if math.Float64bits(got.log2ErrOld) != math.Float64bits(ref[l].log2ErrOld) ||
				math.Float64bits(got.log2QOld) != math.Float64bits(ref[l].log2QOld) || got.rejected != ref[l].rejected {
				t.Fatalf("round %d, lane %d (active %v), err %v: state %+v, Next's %+v", r, l, active[l], err[l], got, ref[l])
			}
		}
	}
}

// A fixed sequence through the rejected flag: a rejection, an accepted
// step that would grow (capped at 1), a growth, a NaN and an infinite
// error, and a zero error after a rejection.
func TestNextLanesRejectedFlag(t *testing.T) {
	c := DefaultPI(5, 0, 0)
	seq := [][4]float64{
		{2, 0.5, 1e-9, math.NaN()},
		{1e-6, 3, 0.9, 1e-3},
		{1e-6, 1e-6, 1.0000001, 0},
		{0, math.Inf(1), 1e-12, 0.1},
		{0.5, 0, 1, 1},
	}
	for _, code := range laneRoutes(t) {
		withLaneCode(code, func() {
			s := NewLaneStates(4)
			var ref [4]State
			for l := range 4 {
				c.InitLane(s, l)
				c.Init(&ref[l])
			}
			active := []bool{true, true, true, true}
			accept, factor := make([]bool, 4), make([]float64, 4)
			capped := 0
			for r, e := range seq {
				c.NextLanes(e[:], s, active, accept, factor)
				for l := range 4 {
					wasRejected := ref[l].rejected
					wa, wf := c.Next(e[l], &ref[l])
					if accept[l] != wa || math.Float64bits(factor[l]) != math.Float64bits(wf) {
						t.Errorf("code=%v, step %d, lane %d, err %v: %v, %v; Next %v, %v", code, r, l, e[l], accept[l], factor[l], wa, wf)
					}
					if wasRejected && wa && wf == 1 {
						capped++
					}
				}
			}
			if capped < 2 {
				t.Errorf("code=%v: the sequence capped %d growths after a rejection, want at least 2", code, capped)
			}
		})
	}
}

// The machine code completes the lanes a solve meets itself and
// defers only those outside its fast path (else the bitwise test above
// would check Next against Next).
func TestNextLanesDefers(t *testing.T) {
	if !jit.HasAVX2() || laneEntry() == 0 {
		t.Skip("no lane machine code here")
	}
	c := DefaultPI(5, 0, 0)
	s := NewLaneStates(4)
	for l := range 4 {
		c.InitLane(s, l)
	}
	active := []bool{true, true, true, true}
	accept, factor := make([]bool, 4), make([]float64, 4)
	for _, tc := range []struct {
		err  [4]float64
		slow uint64
	}{
		{[4]float64{0.5, 2, 0, math.Inf(1)}, 0},
		{[4]float64{math.NaN(), 1e-300, 1e300, 1}, 0},
		{[4]float64{5e-324, 0.5, -1, 0.5}, 0b0101},
		{[4]float64{0.1, math.Inf(-1), 0.1, 1e-310}, 0b1010},
	} {
		c.NextLanes(tc.err[:], s, active, accept, factor)
		if s.io[2] != tc.slow {
			t.Errorf("err %v: deferred lanes %04b, want %04b", tc.err, s.io[2], tc.slow)
		}
	}
	// β1 = 2: 2^y leaves exp2's fast path for err near 2^±511.
	b := PI{Beta1: 2, Safety: 1, QMin: 0.5, QMax: 2, QOldInit: 1e-300}
	for l := range 4 {
		b.InitLane(s, l)
	}
	b.NextLanes([]float64{0x1p-520, 0x1p-500, 0x1p520, 0x1p500}, s, active, accept, factor)
	if s.io[2] != 0b0101 {
		t.Errorf("β1 = 2: deferred lanes %04b, want 0101", s.io[2])
	}
}

// NextLanes allocates nothing, on either route.
func TestNextLanesAllocs(t *testing.T) {
	c := DefaultPI(5, 0, 0)
	for _, code := range laneRoutes(t) {
		withLaneCode(code, func() {
			s := NewLaneStates(8)
			for l := range 8 {
				c.InitLane(s, l)
			}
			err := []float64{0.5, 2, 1e-310, 0, 0.1, math.NaN(), 1, 3}
			active := []bool{true, true, true, false, true, true, true, true}
			accept, factor := make([]bool, 8), make([]float64, 8)
			if n := testing.AllocsPerRun(100, func() { c.NextLanes(err, s, active, accept, factor) }); n != 0 {
				t.Errorf("code=%v: %v allocations per NextLanes", code, n)
			}
		})
	}
}

// BenchmarkNextLanes: ns per lane of NextLanes (four lanes, machine
// code and Go) against Next, on errors a solve meets.
func BenchmarkNextLanes(b *testing.B) {
	c := DefaultPI(5, 0, 0)
	rng := rand.New(rand.NewPCG(3, 4))
	errs := make([]float64, 1024)
	for i := range errs {
		errs[i] = math.Exp(rng.Float64()*10 - 9) // about a fifth rejected
	}
	b.Run("Next", func(b *testing.B) {
		var st State
		c.Init(&st)
		i, sink := 0, 0.0
		for b.Loop() {
			_, f := c.Next(errs[i&1023], &st)
			sink += f
			i++
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/lane")
	})
	for _, code := range laneRoutes(b) {
		name := "NextLanes/go"
		if code {
			name = "NextLanes/code"
		}
		b.Run(name, func(b *testing.B) {
			withLaneCode(code, func() {
				s := NewLaneStates(4)
				for l := range 4 {
					c.InitLane(s, l)
				}
				active := []bool{true, true, true, true}
				accept, factor := make([]bool, 4), make([]float64, 4)
				i := 0
				for b.Loop() {
					c.NextLanes(errs[i&1023:i&1023+4], s, active, accept, factor)
					i += 4
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(4*b.N), "ns/lane")
			})
		})
	}
}
