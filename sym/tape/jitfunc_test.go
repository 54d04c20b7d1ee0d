package tape

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/pmath"
	"github.com/gradsolve/gradsolve/sym"
)

// laneFuncArgs returns arguments for exp and log in lane code: random
// bit patterns (every exponent and sign, NaNs, infinities, subnormals),
// the special values and the functions' thresholds with neighbours, and
// values spread over exp's finite range and around 1.
func laneFuncArgs(rng *rand.Rand) []float64 {
	xs := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 1, -1, 2, 0.5,
		math.SmallestNonzeroFloat64, 2.2250738585072014e-308, math.MaxFloat64, math.Sqrt2, 710, -746}
	for _, c := range []float64{pmath.ExpOverflow, pmath.ExpUnderflow, math.Sqrt2, 2.2250738585072014e-308} {
		lo, hi := c, c
		for range 3 {
			lo, hi = math.Nextafter(lo, math.Inf(-1)), math.Nextafter(hi, math.Inf(1))
			xs = append(xs, lo, hi)
		}
	}
	for range 3000 {
		xs = append(xs, math.Float64frombits(rng.Uint64()),
			pmath.ExpUnderflow-2+(pmath.ExpOverflow-pmath.ExpUnderflow+4)*rng.Float64(),
			1+(rng.Float64()-0.5)*math.Ldexp(1, -rng.IntN(40)))
	}
	return xs
}

// TestLaneFuncsMatchPmath checks exp and log in lane code against
// pmath.Exp and pmath.Log, lane by lane, bit for bit (any NaN for a
// NaN), with the arguments shuffled across lanes so that every lane sees
// special and ordinary values side by side, and with other values live
// across the calls (the temporaries must not clobber them).
func TestLaneFuncsMatchPmath(t *testing.T) {
	if !HasLaneCode() {
		t.Skip("no AVX2: lane code does not run here")
	}
	m := sym.NewModel("explog")
	x := m.State("x", 1)
	y := m.State("y", 1)
	e, l := sym.Exp(x), sym.Log(x)
	m.Deriv(x, e)
	m.Deriv(y, l.Add(sym.Exp(y).Mul(x)).Sub(sym.Log(e.Add(y)))) // reuse of x and e after the calls
	s, err := Build(m)
	if err != nil {
		t.Fatal(err)
	}
	pg := s.F()
	if pg.laneCode() == nil || pg.lane.entry == 0 {
		t.Fatal("exp and log: the lane code is not of one piece")
	}
	const L = LaneWidth
	rng := rand.New(rand.NewPCG(21, 22))
	xs := laneFuncArgs(rng)
	r := pg.NewLaneRegisters()
	tl, p := make([]float64, L), []float64{}
	in, out := make([]float64, 2*L), make([]float64, 2*L)
	for k := 0; k+2*L <= len(xs); k += 2 * L {
		rng.Shuffle(len(xs[k:k+2*L]), func(i, j int) { xs[k+i], xs[k+j] = xs[k+j], xs[k+i] })
		copy(in, xs[k:k+2*L])
		pg.EvalFLanes(r, tl, in, p, out)
		for ln := range L {
			xv, yv := in[ln], in[L+ln]
			ev := pmath.Exp(xv)
			want := []float64{ev, pmath.Log(xv) + pmath.Exp(yv)*xv - pmath.Log(ev+yv)}
			got := []float64{out[ln], out[L+ln]}
			if !testutil.CheckBits(t, fmt.Sprintf("x=%v y=%v lane %d", xv, yv, ln), got, want) {
				t.FailNow()
			}
		}
	}
}

// expLogModel is a right-hand side of dim states, each with one exp and
// one log: y'_i = exp(−y_i)·a − log(1 + y_i²).
func expLogModel(dim int) *sym.Model {
	m := sym.NewModel("explog")
	a := m.Param("a", 0.5)
	for i := range dim {
		y := m.State(fmt.Sprint("y", i), 0.1*float64(i+1))
		m.Deriv(y, sym.Exp(y.Neg()).Mul(a).Sub(sym.Log(m.Const(1).Add(y.Mul(y)))))
	}
	return m
}

// BenchmarkLaneExpLog measures f with exp and log for four trajectories
// in lane code, computing them inline ("inline") and, as before they
// were lane code, as Go calls lane by lane between pieces ("calls"):
//
//	go test -run X -bench LaneExpLog -count 6 ./sym/tape
func BenchmarkLaneExpLog(b *testing.B) {
	if !HasLaneCode() {
		b.Skip("no AVX2")
	}
	const dim = 4
	for _, inline := range []bool{true, false} {
		name := "inline"
		if !inline {
			name = "calls"
		}
		b.Run(name, func(b *testing.B) {
			laneFuncsInline = inline
			defer func() { laneFuncsInline = true }()
			s, err := Build(expLogModel(dim))
			if err != nil {
				b.Fatal(err)
			}
			pg := s.F()
			const L = LaneWidth
			r, tl, y, p, out := pg.NewLaneRegisters(), make([]float64, L), make([]float64, dim*L), make([]float64, L), make([]float64, dim*L)
			for i := range y {
				y[i] = 0.1 * float64(i+1)
			}
			for i := range p {
				p[i] = 0.5
			}
			pg.EvalFLanes(r, tl, y, p, out) // compile outside the timer
			if (len(pg.lane.code.segs) == 1) != inline {
				b.Fatalf("%s: %d pieces of lane code", name, len(pg.lane.code.segs))
			}
			for b.Loop() {
				pg.EvalFLanes(r, tl, y, p, out)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(L*2*dim), "ns/func")
		})
	}
}
