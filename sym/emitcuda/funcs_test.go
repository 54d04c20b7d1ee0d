package emitcuda_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/sym/emitcuda"
)

// specialValues are arguments where the functions change regime: the
// zeros, infinities and NaN, the subnormals, the limits of exp, the
// huge arguments of the trigonometric reductions (2²⁰·π/2 and beyond),
// integers and half-integers for floor, ceil and pow.
var specialValues = []float64{
	0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(),
	5e-324, -5e-324, 2.2250738585072014e-308, 1e-300, -1e-300,
	1, -1, 0.5, -0.5, 1.5, -2.5, 2, 3, 0.1, -0.1, 1e-8, 1e-20,
	709.78, 709.79, -745.1, -745.2, 1e300, -1e300, math.MaxFloat64, -math.MaxFloat64,
	math.Pi, math.Pi / 2, -math.Pi / 4, 1647099.3291652855, 1647100, 1e22, -1e22, 1e300 / 3,
	0.54930614433405489, 0.4, 22, 19.06, -19.06, 1e-12,
}

// functionPoints returns the (x, y) pairs of TestFunctionsBits: every
// pair of special values, and random ones — moderate values of both
// signs and random bit patterns.
func functionPoints() [][2]float64 {
	var pts [][2]float64
	for _, x := range specialValues {
		for _, y := range specialValues {
			pts = append(pts, [2]float64{x, y})
		}
	}
	rng := rand.New(rand.NewPCG(3, 5))
	for range 4000 {
		x := (rng.Float64() - 0.5) * math.Exp2(float64(rng.IntN(80)-40))
		y := (rng.Float64() - 0.5) * math.Exp2(float64(rng.IntN(16)-4))
		pts = append(pts, [2]float64{x, y})
		pts = append(pts, [2]float64{math.Float64frombits(rng.Uint64()), math.Float64frombits(rng.Uint64())})
	}
	return pts
}

// TestFunctionsBits evaluates every function of the problem language
// in the generated source (double) and in the tape, whose functions
// are package pmath's, and compares the bits. A NaN matches any NaN
// (testutil.SameBits): the Go functions and their straight-line forms
// agree on NaN, not on its payload.
func TestFunctionsBits(t *testing.T) {
	set := readModel(t, "testdata/mathfuncs.ode")
	src, err := emitcuda.Generate(set, emitcuda.Options{})
	if err != nil {
		t.Fatal(err)
	}
	prog := compile(t, src)
	pts := functionPoints()
	dim := src.Dim
	ts := make([]float64, len(pts))
	ys := make([][]float64, len(pts))
	ps := make([][]float64, len(pts))
	for i, pt := range pts {
		ys[i] = make([]float64, dim)
		ys[i][0], ys[i][1] = pt[0], pt[1]
	}
	got := prog.evalF(t, false, ts, ys, ps)
	f := set.F()
	r := f.NewRegisters()
	want := make([]float64, dim)
	names := set.Model.StateNames()
	bad := 0
	for i := range pts {
		f.EvalF(r, 0, ys[i], nil, want)
		for d := range dim {
			if !testutil.SameBits(got[i][d], want[d]) {
				bad++
				if bad <= 10 {
					t.Errorf("%s' at (x, y) = (%v, %v): got %v (%#x), want %v (%#x)", names[d], pts[i][0], pts[i][1],
						got[i][d], math.Float64bits(got[i][d]), want[d], math.Float64bits(want[d]))
				}
			}
		}
	}
	if bad > 10 {
		t.Errorf("%d values differ in all", bad)
	}
}

// TestFloat32 evaluates f of each forward problem as gs_f<float> and
// compares it with the tape's double f at the same (float-rounded)
// inputs. In float every operation rounds to 24 bits (unit roundoff
// 2⁻²⁴ ≈ 6e-8), on constants rounded to float; f is a few dozen such
// operations on terms no larger than ten times the result's scale, so
// its error is below 1e-5 of that scale, max(‖dy‖∞, 1). The math
// functions are the double ones on the widened argument, rounded once.
func TestFloat32(t *testing.T) {
	for _, c := range forwardCases {
		if testing.Short() && !shortCases[c.name] {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			set, src := c.source(t)
			prog := compile(t, src)
			prob := set.Problem()
			ens := makeEnsemble(prob, c, 1)
			dim, np := prob.Dim, prob.NumParams
			var ts []float64
			var ys, ps [][]float64
			for i := range ensembleSize {
				if c.special != nil && i == 9 || ens.t0[i] > 1e16 {
					continue
				}
				round := func(v []float64) []float64 {
					out := make([]float64, len(v))
					for k, x := range v {
						out[k] = float64(float32(x))
					}
					return out
				}
				ts = append(ts, float64(float32(ens.t1[i])))
				ys = append(ys, round(ens.y0[i*dim:(i+1)*dim]))
				ps = append(ps, round(ens.p[i*np:(i+1)*np]))
			}
			got := prog.evalF(t, true, ts, ys, ps)
			f := set.F()
			r := f.NewRegisters()
			want := make([]float64, dim)
			for i := range ts {
				f.EvalF(r, ts[i], ys[i], ps[i], want)
				scale := 1.0
				for _, x := range want {
					scale = max(scale, math.Abs(x))
				}
				for d := range dim {
					if e := math.Abs(got[i][d] - want[d]); !(e <= 1e-5*scale) {
						t.Errorf("point %d, f[%d]: float %v, double %v: error %.3g > 1e-5·%.3g", i, d, got[i][d], want[d], e, scale)
					}
				}
			}
			// And the float values are float's: the conversion back to
			// double is exact.
			for i := range got {
				for _, x := range got[i] {
					if float64(float32(x)) != x && !math.IsNaN(x) {
						t.Fatalf("point %d: %v is not a float32 value", i, x)
					}
				}
			}
		})
	}
}
