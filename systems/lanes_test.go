package systems_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/sym/tape"
	"github.com/gradsolve/gradsolve/systems"
)

// The lane forms of the built-in systems (Lorenz, the halo) give, lane
// by lane, the bits of the hand-written f, on random states and
// parameters of both signs and a wide range of scales; they are offered
// exactly where lane code runs.
func TestLaneForms(t *testing.T) {
	const L = ode.LaneWidth
	r := rand.New(rand.NewPCG(1, 2))
	for _, pr := range []*ode.Problem{systems.Lorenz(), systems.Halo()} {
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
