package tape

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gradsolve/gradsolve/internal/gencheck"
	"github.com/gradsolve/gradsolve/sym"
)

// runPlain evaluates the plain code (one instruction per operation, the
// form emitters read) with the reference arithmetic sym.Eval.
func runPlain(pg *Program, r []float64) {
	for _, in := range pg.code {
		r[in.Dst] = sym.Eval(in.Op, r[in.A], r[in.B], r[in.C])
	}
}

// The fused interpreter code and the plain code give bitwise the same
// outputs: fusing trees changes where intermediates live, never their
// values (each is rounded to float64 either way).
func TestFusedMatchesPlain(t *testing.T) {
	m := sym.NewModel("mix")
	a, b, c := m.State("a", 1), m.State("b", 2), m.State("c", 3)
	k, q := m.Param("k", 0.5), m.Param("q", 2)
	tt := m.Time()
	ab := a.Mul(b) // used twice: not absorbed
	m.Deriv(a, ab.Sub(c.Div(k)).Add(ab.Mul(q.Sub(tt))))
	m.Deriv(b, a.Sub(b).Mul(c.Add(k)).Div(q.Mul(q).Add(a)))
	m.Deriv(c, sym.Sin(a.Mul(k)).Mul(b.Sub(c)).Sub(ab.Neg()).Add(sym.Select(a.Sub(b), c, k.Mul(a))))
	s, err := Build(m)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	all := All(t, s)
	for _, pg := range []*Program{all["f"], all["jvp"], all["vjp"], all["jac_y"], all["dfdt"]} {
		if len(pg.xcode) > len(pg.code) {
			t.Errorf("%s: %d fused instructions for %d plain ones", pg.Name, len(pg.xcode), len(pg.code))
		}
		for range 100 {
			rp, rx := pg.NewRegisters(), pg.NewRegisters()
			for i := range pg.layout.NumInputs() {
				v := rng.NormFloat64()
				rp[i], rx[i] = v, v
			}
			runPlain(pg, rp)
			pg.exec(rx)
			for i := range pg.outs {
				if math.Float64bits(rp[pg.outs[i]]) != math.Float64bits(rx[pg.xouts[i]]) {
					t.Fatalf("%s output %d: plain %v, fused %v", pg.Name, i, rp[pg.outs[i]], rx[pg.xouts[i]])
				}
			}
		}
	}
}

// fused_gen.go is what gen_fused.go writes now.
func TestFusedGenUpToDate(t *testing.T) {
	gencheck.UpToDate(t, "fused_gen.go", "run", "gen_fused.go")
}
