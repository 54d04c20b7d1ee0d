package emitcuda_test

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/internal/cudaemu"
	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/method"
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
	src, err := emitcuda.Generate(set, emitcuda.Options{Methods: []*method.Tableau{}}) // f alone
	if err != nil {
		t.Fatal(err)
	}
	if len(src.Kernels) != 0 || bytes.Contains(src.Code, []byte("__global__")) {
		t.Fatalf("Options.Methods empty: %d kernels, want none", len(src.Kernels))
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

// TestControllerPow compares the driver's port of control.Pow (its
// log₂ and 2ˣ polynomials, the rounding of the exponent, frexp for
// subnormal x and the scaling of subnormal and overflowing results) with
// control.Pow, bit for bit, over arguments that reach every path.
func TestControllerPow(t *testing.T) {
	_, src := forwardCases[0].source(t)
	prog := compile(t, src)
	xs := []float64{5e-324, 1e-310, 2.2250738585072014e-308, 1e-300, 1e-20, 0.5, 0.7071067811865476, 0.70710678118654746,
		1, 1.0000000000000002, 1.5, 2, 3, 10, 1e10, 1e300, math.MaxFloat64}
	as := []float64{0, 1, -1, 0.5, 0.2, 1.0 / 8, 1.0 / 5, 0.14, -0.08, 7, 60, -60, 1000, -1000, 3.4, -3.4, 0.5000000000000001}
	var pairs [][2]float64
	for _, x := range xs {
		for _, a := range as {
			pairs = append(pairs, [2]float64{x, a})
		}
	}
	// 2^(a·log₂x) near the ends of the range: subnormal results, the
	// last normal ones, and overflow; and the halfway exponents.
	for _, y := range []float64{-1074.4, -1074.6, -1050.5, -1022.5, -1021.5, -1021, 1022.5, 1023.4, 1023.9, 1024.1, 0.5, -0.5, 2.5} {
		pairs = append(pairs, [2]float64{2, y}, [2]float64{0.5, -y}, [2]float64{math.E, y * math.Ln2})
	}
	rng := rand.New(rand.NewPCG(9, 2))
	for range 3000 {
		x := math.Exp2(rng.Float64()*2000 - 1000)
		pairs = append(pairs, [2]float64{x, (rng.Float64() - 0.5) * 4})
		pairs = append(pairs, [2]float64{rng.Float64() * 4, (rng.Float64() - 0.5) * 400})
	}
	var e cudaemu.Encoder
	e.Int(3)
	e.Int(int64(len(pairs)))
	for _, pr := range pairs {
		e.Float(pr[0])
		e.Float(pr[1])
	}
	out, err := cudaemu.Run(context.Background(), prog.exe, e.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	d := cudaemu.NewDecoder(out)
	got := d.Floats(len(pairs))
	if d.Err != nil || d.Rest() != 0 {
		t.Fatalf("output: %v, %d bytes left", d.Err, d.Rest())
	}
	bad := 0
	for i, pr := range pairs {
		if want := control.Pow(pr[0], pr[1]); !testutil.SameBits(got[i], want) {
			if bad++; bad <= 10 {
				t.Errorf("Pow(%v, %v) = %v (%#x), want %v (%#x)", pr[0], pr[1], got[i], math.Float64bits(got[i]), want, math.Float64bits(want))
			}
		}
	}
	if bad > 10 {
		t.Errorf("%d of %d differ", bad, len(pairs))
	}
}
