package control

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Pow agrees with math.Pow to (8 + |a·log₂x|)·ε relative: the
// polynomials truncate at ≈ 3e-16, the dozen roundings add a few ulps,
// and the rounding of y = a·log₂x (|y|·ε absolute) becomes a relative
// error |y|·ε·ln 2 of 2^y.
func TestPow(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	worst := 0.0
	for range 200000 {
		x := math.Exp(rng.Float64()*80 - 40) // e^-40 … e^40, and the controller's 1e-10 … 1e10
		a := rng.Float64()*2 - 1
		got, want := Pow(x, a), math.Pow(x, a)
		bound := (8 + math.Abs(a*math.Log2(x))) * 0x1p-52
		if r := math.Abs(got-want) / want / bound; r > worst {
			worst = r
		}
	}
	// The exact corners a controller meets.
	for _, c := range [][2]float64{{1, 0.14}, {1e-4, 0.08}, {0.5, 1}, {2, 1}, {1e-300, 0.2}, {1e300, -0.2}, {0x1p-1074, 0.5}, {3, 0}} {
		got, want := Pow(c[0], c[1]), math.Pow(c[0], c[1])
		bound := (8 + math.Abs(c[1]*math.Log2(c[0]))) * 0x1p-52
		if r := math.Abs(got-want) / want / bound; r > worst {
			worst = r
		}
	}
	t.Logf("largest relative error / ((8 + |a·log₂x|)·ε) = %.3g", worst)
	if worst > 1 {
		t.Errorf("Pow error exceeds its bound by %.3g×", worst)
	}
	for _, c := range [][2]float64{{0, 1}, {-1, 0.5}, {math.NaN(), 1}, {math.Inf(1), 1}, {2, math.NaN()}, {2, math.Inf(1)}} {
		if v := Pow(c[0], c[1]); !math.IsNaN(v) {
			t.Errorf("Pow(%g, %g) = %g, want NaN", c[0], c[1], v)
		}
	}
}

func TestPIController(t *testing.T) {
	c := DefaultPI(5, 0, 0)
	if c.Beta1 != 0.14 || c.Beta2 != 0.08 || c.QMin != 0.2 || c.QMax != 10 || c.Safety != 0.9 || c.QOldInit != 1e-4 {
		t.Fatalf("DefaultPI(5) = %+v: want OrdinaryDiffEq's Tsit5 constants", c)
	}
	if d := DefaultPI(8, 0.333, 6); d.QMin != 0.333 || d.QMax != 6 || math.Abs(d.Beta1-7.0/80) > 1e-17 {
		t.Errorf("DefaultPI(8, 0.333, 6) = %+v", d)
	}
	var st State
	// First step: errOld = QOldInit, so q = err^β1 / 1e-4^β2 / γ.
	c.Init(&st)
	acc, f := c.Next(0.5, &st)
	want := 1 / math.Max(1/c.QMax, math.Min(1/c.QMin, math.Pow(0.5, 0.14)/math.Pow(1e-4, 0.08)/0.9))
	if !acc || math.Abs(f-want) > 1e-14*want {
		t.Errorf("Next(0.5) = %v, %.17g; want accept, %.17g", acc, f, want)
	}
	// Second step uses errOld = 0.5.
	acc, f = c.Next(0.25, &st)
	want = 1 / math.Max(1/c.QMax, math.Min(1/c.QMin, math.Pow(0.25, 0.14)/math.Pow(0.5, 0.08)/0.9))
	if !acc || math.Abs(f-want) > 1e-14*want {
		t.Errorf("Next(0.25) = %v, %.17g; want accept, %.17g", acc, f, want)
	}
	cases := []struct {
		name       string
		err        float64
		accept     bool
		lo, hi     float64 // bounds on the factor
		afterRejct bool
	}{
		{"zero error grows by QMax", 0, true, 10, 10, false},
		{"tiny error capped at QMax", 1e-30, true, 10, 10, false},
		{"err = 1 accepted", 1, true, 0.2, 1.2, false},
		{"err just above 1 rejected, shrinks", 1.0000001, false, 0.2, 0.9, false},
		{"huge error shrinks by QMin", 1e30, false, 0.2, 0.2, false},
		{"NaN rejected by QMin", math.NaN(), false, 0.2, 0.2, false},
		{"+Inf rejected by QMin", math.Inf(1), false, 0.2, 0.2, false},
		{"no growth right after a rejection", 1e-6, true, 1, 1, true},
	}
	for _, tc := range cases {
		c.Init(&st)
		if tc.afterRejct {
			c.Next(2, &st)
		}
		acc, f := c.Next(tc.err, &st)
		if acc != tc.accept || f < tc.lo*(1-1e-15) || f > tc.hi*(1+1e-15) {
			t.Errorf("%s: Next(%g) = %v, %g; want %v, factor in [%g, %g]", tc.name, tc.err, acc, f, tc.accept, tc.lo, tc.hi)
		}
	}
}

// InitialStep follows Hairer–Nørsett–Wanner's formula: for y' = −y,
// y0 = 1, atol = rtol = 1e-6 (sc = 2e-6) we have d0 = d1 = 5e5,
// h0 = 0.01, f1 = −0.99, d2 = 5e5 and h1 = (0.01/5e5)^(1/5), so h = h1.
func TestInitialStep(t *testing.T) {
	f := func(_ float64, y, _, dy []float64) { dy[0] = -y[0] }
	y0, f0 := []float64{1}, []float64{-1}
	tol := []float64{1e-6}
	w1, w2 := make([]float64, 1), make([]float64, 1)
	h, n := InitialStep(f, nil, 0, 1, y0, f0, 5, tol, tol, math.Inf(1), w1, w2)
	want := math.Pow(0.01/5e5, 0.2)
	if n != 1 || math.Abs(h-want) > 1e-12*want {
		t.Errorf("h = %.17g (%d evaluations), want %.17g (1)", h, n, want)
	}
	// hmax caps it; backwards integration gives the same magnitude.
	if h, _ := InitialStep(f, nil, 0, 1, y0, f0, 5, tol, tol, 1e-3, w1, w2); h != 1e-3 {
		t.Errorf("h with hmax 1e-3 = %g", h)
	}
	g := func(_ float64, y, _, dy []float64) { dy[0] = y[0] }
	if h, _ := InitialStep(g, nil, 0, -1, y0, []float64{1}, 5, tol, tol, math.Inf(1), w1, w2); math.Abs(h-want) > 1e-12*want {
		t.Errorf("backward h = %.17g, want %.17g", h, want)
	}
	// A probe that returns NaN falls back to the probe step h0.
	bad := func(t float64, y, _, dy []float64) {
		dy[0] = -y[0]
		if t > 0 {
			dy[0] = math.NaN()
		}
	}
	if h, _ := InitialStep(bad, nil, 0, 1, y0, f0, 5, tol, tol, math.Inf(1), w1, w2); h != 0.01 {
		t.Errorf("h after a NaN probe = %g, want the probe step 0.01", h)
	}
}

// MinStep is 4ε·|t| (4 to 8 ulps of t), and the smallest normal float64
// near t = 0; a step of MinStep(t) always changes t.
func TestMinStep(t *testing.T) {
	const eps = 0x1p-52
	for _, c := range []struct{ t, want float64 }{
		{0, 0x1p-1022},
		{1e-300, 0x1p-1022},
		{1, 4 * eps},
		{-1, 4 * eps},
		{1e13, 4 * eps * 1e13},
		{-3e20, 4 * eps * 3e20},
		{math.MaxFloat64 / 8, 4 * eps * (math.MaxFloat64 / 8)},
	} {
		if got := MinStep(c.t); got != c.want {
			t.Errorf("MinStep(%g) = %g, want %g", c.t, got, c.want)
		}
	}
	for _, tt := range []float64{0, 1e-310, 1e-300, 0.1, 1, 3, 1e11, 1e13, -2e13, 1e300} {
		h := MinStep(tt)
		if tt+h == tt || tt-h == tt {
			t.Errorf("t = %g: a step of MinStep(t) = %g does not change t", tt, h)
		}
		// It is a few ulps: more than 2 and at most 8 (|t| ≥ 2^−970).
		if ulp := math.Nextafter(math.Abs(tt), math.Inf(1)) - math.Abs(tt); math.Abs(tt) > 0x1p-970 && (h <= 2*ulp || h > 8*ulp) {
			t.Errorf("t = %g: MinStep = %g is %g ulps", tt, h, h/ulp)
		}
	}
}

// Far from t = 0 the rule's absolute constants would name a step that
// does not move t: for y' = −y/1e12 at t0 = 1e13, d1 = 1e-6 < 1e-5 gives
// the fallback h0 = 1e-6 and h = 100·h0 = 1e-4, below one ulp of t0
// (2^−9 ≈ 2e-3). InitialStep raises it to MinStep(t0) (and not above
// hmax); at t0 = 0 the same problem keeps h = 1e-4, bit for bit, since
// that is above the floor there.
func TestInitialStepFloor(t *testing.T) {
	f := func(_ float64, y, _, dy []float64) { dy[0] = -1e-12 * y[0] }
	y0, f0 := []float64{1}, []float64{-1e-12}
	rtol, atol := []float64{1e-6}, []float64{1e-9}
	w1, w2 := make([]float64, 1), make([]float64, 1)
	h0 := 1e-6 // a variable, so that 100·h0 is rounded as in InitialStep
	if h, _ := InitialStep(f, nil, 0, 1, y0, f0, 5, atol, rtol, 1e13, w1, w2); h != 100*h0 {
		t.Errorf("t0 = 0: h = %.17g, want the rule's 100·h0 = 1e-4", h)
	}
	for _, c := range []struct{ t0, dir float64 }{{1e13, 1}, {2e13, -1}, {-1e13, -1}, {1e15, 1}} {
		h, _ := InitialStep(f, nil, c.t0, c.dir, y0, f0, 5, atol, rtol, 1e13, w1, w2)
		if h != MinStep(c.t0) || c.t0+c.dir*h == c.t0 {
			t.Errorf("t0 = %g: h = %g, want MinStep(t0) = %g", c.t0, h, MinStep(c.t0))
		}
		// hmax below the floor wins (the solver then reports StepUnderflow).
		if h, _ := InitialStep(f, nil, c.t0, c.dir, y0, f0, 5, atol, rtol, 1e-3, w1, w2); h != 1e-3 {
			t.Errorf("t0 = %g, hmax = 1e-3: h = %g", c.t0, h)
		}
	}
	// A NaN probe returns h0, also raised to the floor.
	bad := func(_ float64, _, _, dy []float64) { dy[0] = math.NaN() }
	if h, _ := InitialStep(bad, nil, 1e13, 1, y0, f0, 5, atol, rtol, 1e13, w1, w2); h != MinStep(1e13) {
		t.Errorf("NaN probe at t0 = 1e13: h = %g, want %g", h, MinStep(1e13))
	}
}

// The controller's cost per step: one log₂ and one 2^x (PI.Next).
func BenchmarkPow(b *testing.B) {
	x, s := 0.37, 0.0
	for i := range b.N {
		s += Pow(x+float64(i&7)*1e-3, 0.14)
	}
	sink = s
}

var sink float64

// frexp reads the exponent from the bits for normal numbers and falls
// back to math.Frexp otherwise; both paths agree with math.Frexp.
func TestFrexp(t *testing.T) {
	for _, x := range []float64{1, 0.5, 0.75, 3, 1e-300, 0x1p-1022, 0x1p-1023, 0x1p-1074, 1.5e-310, math.MaxFloat64, 1e300, math.Pi} {
		m, e := frexp(x)
		wm, we := math.Frexp(x)
		if m != wm || e != we {
			t.Errorf("frexp(%g) = %g, %d; math.Frexp gives %g, %d", x, m, e, wm, we)
		}
	}
}

// exp2 builds 2^n from the bits inside the normal range and uses
// math.Ldexp at its edges (subnormal results, overflow).
func TestExp2Edges(t *testing.T) {
	for _, y := range []float64{0, 1, -1, 0.5, 1021.3, 1022.4, 1023.2, 1023.9, 1024.5, -1020.7, -1021.6, -1022.2, -1030.5, -1074, -1080} {
		got, want := exp2(y), math.Exp2(y)
		// 8 ulps of a normal result (the polynomial's error); a
		// subnormal result has fewer bits, so one unit of its last place.
		if d := math.Abs(got - want); d > 8*0x1p-52*want && !(want < 0x1p-1022 && d <= 0x1p-1074) {
			t.Errorf("exp2(%g) = %g, want %g", y, got, want)
		}
	}
}

// MaxAbs agrees with math.Max(|x|, |y|) bit for bit on special and
// random values, except for its documented NaN where one is infinite
// and the other NaN.
func TestMaxAbs(t *testing.T) {
	vals := []float64{0, math.Copysign(0, -1), 1, -1, 2.5, -3e300, 5e-324, math.Inf(1), math.Inf(-1), math.NaN(), -math.NaN()}
	for i := range 200 {
		vals = append(vals, math.Ldexp(float64(i%7)-3.3, i%40-20))
	}
	for _, x := range vals {
		for _, y := range vals {
			got, want := MaxAbs(x, y), math.Max(math.Abs(x), math.Abs(y))
			if (math.IsInf(x, 0) && math.IsNaN(y)) || (math.IsNaN(x) && math.IsInf(y, 0)) {
				want = math.NaN()
			}
			if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Errorf("MaxAbs(%v, %v) = %v, math.Max %v", x, y, got, want)
			}
		}
	}
}
