package systems_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/sym/tape"
	"github.com/gradsolve/gradsolve/systems"
)

// The lane forms of the built-in systems (Lorenz, the halo, Robertson,
// HIRES, Van der Pol) give, lane
// by lane, the bits of the hand-written f, on random states and
// parameters of both signs and a wide range of scales; they are offered
// exactly where lane code runs.
func TestLaneForms(t *testing.T) {
	const L = ode.LaneWidth
	r := rand.New(rand.NewPCG(1, 2))
	for _, pr := range []*ode.Problem{systems.Lorenz(), systems.Halo(), systems.Robertson(), systems.HIRES(), systems.VanDerPol(), systems.VanDerPolStiff(0)} {
		pg := pr.Programs()
		if got, want := pg.FLanes != nil, tape.HasLaneCode(); got != want || pr.ProgramSet().Has(ode.HasFLanes) != want {
			t.Fatalf("%s: FLanes set %v, offered %v; lane code here %v", pr.Name, got, pr.ProgramSet().Has(ode.HasFLanes), want)
		}
		if pg.FLanes == nil {
			continue
		}
		if pg.Kernel == nil {
			t.Errorf("%s: no kernel for the lane engine", pr.Name)
		}
		dim, m := pr.Dim, pr.NumParams
		ts, y, p, out := make([]float64, L), make([]float64, dim*L), make([]float64, m*L), make([]float64, dim*L)
		ys, ps, want := make([]float64, dim), make([]float64, m), make([]float64, dim)
		for range 500 {
			for i := range y {
				y[i] = r.NormFloat64() * math.Pow(10, float64(r.IntN(7)-3))
			}
			for i := range p {
				p[i] = r.NormFloat64() * math.Pow(10, float64(r.IntN(5)-2))
			}
			pg.FLanes(ts, y, p, out)
			for l := range L {
				for d := range dim {
					ys[d] = y[d*L+l]
				}
				for j := range m {
					ps[j] = p[j*L+l]
				}
				pr.F(ts[l], ys, ps, want)
				for d := range dim {
					if g := out[d*L+l]; math.Float64bits(g) != math.Float64bits(want[d]) && !(math.IsNaN(g) && math.IsNaN(want[d])) {
						t.Fatalf("%s: lane %d, f_%d = %v, the hand-written f gives %v", pr.Name, l, d, g, want[d])
					}
				}
			}
		}
	}
}

// The halo's sensitivity system in lanes gives, lane by lane, the bits
// of haloSensF, for parameter columns and initial-value columns.
func TestHaloSensLanes(t *testing.T) {
	if !tape.HasLaneCode() {
		t.Skip("no lane code here")
	}
	const L = ode.LaneWidth
	pr := systems.Halo()
	r := rand.New(rand.NewPCG(3, 4))
	for _, cols := range [][]int{{0, 1}, {2}, {0, 1, 2, -1, -1}} {
		sf, err := pr.SensF(cols)
		if err != nil {
			t.Fatal(err)
		}
		sl, err := pr.SensLanes(cols)
		if err != nil {
			t.Fatal(err)
		}
		f, lp := sf(), sl()
		if lp.F == nil {
			t.Fatal("no lane form")
		}
		n := 6 * (1 + len(cols))
		ts, y, p, out := make([]float64, L), make([]float64, n*L), make([]float64, 3*L), make([]float64, n*L)
		ys, ps, want := make([]float64, n), make([]float64, 3), make([]float64, n)
		for range 300 {
			for i := range y {
				y[i] = r.NormFloat64() * math.Pow(10, float64(r.IntN(5)-2))
			}
			for i := range p {
				p[i] = 0.1 + r.Float64()
			}
			lp.F(ts, y, p, out)
			for l := range L {
				for d := range n {
					ys[d] = y[d*L+l]
				}
				for j := range 3 {
					ps[j] = p[j*L+l]
				}
				f(ts[l], ys, ps, want)
				for d := range n {
					if g := out[d*L+l]; math.Float64bits(g) != math.Float64bits(want[d]) && !(math.IsNaN(g) && math.IsNaN(want[d])) {
						t.Fatalf("columns %v: lane %d, value %d = %v, haloSensF gives %v", cols, l, d, g, want[d])
					}
				}
			}
		}
	}
}
