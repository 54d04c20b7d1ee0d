package control

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// The norm against its definition evaluated in 256-bit arithmetic: the
// float64 result is within a few ulps (each of the ≈ 5n + 3 roundings
// costs at most ε/2 relative, and the terms are all positive, so no
// cancellation amplifies them: the bound (5n + 8)·ε is loose), for RMS
// and DOP853 norms, with and without h, over components of very
// different sizes.
func TestNormMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 2000 {
		n := 1 + rng.IntN(20)
		vec := func(scale float64) []float64 {
			v := make([]float64, n)
			for i := range v {
				v[i] = (rng.Float64()*2 - 1) * math.Pow(10, scale*(rng.Float64()*2-1))
			}
			return v
		}
		e, e3, y, y1 := vec(3), vec(3), vec(5), vec(5)
		atol, rtol := make([]float64, n), make([]float64, n)
		for i := range atol {
			atol[i] = math.Pow(10, -12+6*rng.Float64())
			rtol[i] = math.Pow(10, -10+6*rng.Float64())
		}
		h := math.Pow(10, -4+4*rng.Float64())
		dop := trial%2 == 1
		nm := Norm{E: e, ATol: atol, RTol: rtol}
		if dop {
			nm.E3 = e3
		}
		got, ok := nm.Of(h, y, y1)
		if !ok {
			t.Fatalf("trial %d: finite inputs judged unusable", trial)
		}
		// The definition in 256 bits.
		const prec = 256
		f := func(x float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(x) }
		sum5, sum3 := f(0), f(0)
		for d := range n {
			sc := f(math.Max(math.Abs(y[d]), math.Abs(y1[d])))
			sc.Mul(sc, f(rtol[d])).Add(sc, f(atol[d]))
			r := f(h)
			r.Mul(r, f(e[d])).Quo(r, sc)
			sum5.Add(sum5, r.Mul(r, r))
			r3 := f(h)
			r3.Mul(r3, f(e3[d])).Quo(r3, sc)
			sum3.Add(sum3, r3.Mul(r3, r3))
		}
		var want float64
		if dop {
			den := new(big.Float).SetPrec(prec).Mul(sum3, f(0.01))
			den.Add(den, sum5).Mul(den, f(float64(n))).Sqrt(den)
			w, _ := new(big.Float).SetPrec(prec).Quo(sum5, den).Float64()
			want = w
		} else {
			q := new(big.Float).SetPrec(prec).Quo(sum5, f(float64(n)))
			w, _ := q.Sqrt(q).Float64()
			want = w
		}
		if bound := float64(5*n+8) * 0x1p-52; math.Abs(got-want) > bound*want {
			t.Errorf("trial %d (n = %d, dop853 %v): norm %v, definition %v, relative error %.3g > %.3g",
				trial, n, dop, got, want, math.Abs(got-want)/want, bound)
		}
		// Forming the squared terms elsewhere and finishing with
		// OfSquares gives the same bits as Of.
		s5, s3 := make([]float64, n), make([]float64, n)
		for d := range n {
			sc := atol[d] + float64(rtol[d]*MaxAbs(y[d], y1[d]))
			r, r3 := float64(h*e[d])/sc, float64(h*e3[d])/sc
			s5[d], s3[d] = float64(r*r), float64(r3*r3)
		}
		if !dop {
			s3 = nil
		}
		if sq, ok := OfSquares(s5, s3, y1); math.Float64bits(sq) != math.Float64bits(got) || !ok {
			t.Errorf("trial %d: OfSquares %v, %v; Of %v", trial, sq, ok, got)
		}
	}
}

// A zero error is a zero norm (both forms, the DOP853 one by its
// convention 0/0 = 0), and h = 1 leaves an estimate that includes h
// already exactly as it is.
func TestNormCorners(t *testing.T) {
	y, y1 := []float64{1, 2}, []float64{1.5, -2}
	tol := []float64{1e-6, 1e-6}
	for _, e3 := range [][]float64{nil, {0, 0}} {
		nm := Norm{E: []float64{0, 0}, E3: e3, ATol: tol, RTol: tol}
		if err, ok := nm.Of(0.1, y, y1); err != 0 || !ok {
			t.Errorf("E3 %v: zero error gives %v, %v", e3, err, ok)
		}
	}
	e := []float64{3e-7, -1e-7}
	scaled := []float64{0.25 * 3e-7, 0.25 * -1e-7} // exact: h = 0.25 is a power of two
	a, _ := (&Norm{E: scaled, ATol: tol, RTol: tol}).Of(1, y, y1)
	b, _ := (&Norm{E: e, ATol: tol, RTol: tol}).Of(0.25, y, y1)
	if math.Float64bits(a) != math.Float64bits(b) {
		t.Errorf("h folded into e: %v; h applied: %v", a, b)
	}
}

// A proposal with a value that is not finite, in the norm's components
// or past them, or an error that overflows, is not usable: +Inf, false.
func TestNormRejectsNonFinite(t *testing.T) {
	tol := []float64{1e-6, 1e-6}
	nm := Norm{E: []float64{1e-7, 1e-7}, ATol: tol, RTol: tol}
	for _, c := range []struct {
		name   string
		h      float64
		y1     []float64
		usable bool
	}{
		{"finite", 0.1, []float64{1, 1}, true},
		{"finite with extra components", 0.1, []float64{1, 1, 5}, true},
		{"NaN in the norm", 0.1, []float64{1, math.NaN()}, false},
		{"Inf in the norm", 0.1, []float64{math.Inf(-1), 1}, false},
		{"NaN past the norm", 0.1, []float64{1, 1, math.NaN()}, false},
		{"Inf past the norm", 0.1, []float64{1, 1, math.Inf(1)}, false},
		{"error overflows", 1e308, []float64{1, 1}, false},
	} {
		err, ok := nm.Of(c.h, []float64{1, 1}, c.y1)
		if ok != c.usable || (!ok && !math.IsInf(err, 1)) || (ok && (math.IsNaN(err) || math.IsInf(err, 0))) {
			t.Errorf("%s: %v, %v; want usable %v", c.name, err, ok, c.usable)
		}
	}
	// OfSquares, the same cases from the squared terms: r² = 0.01 and
	// 1e308 (which overflows the sum), in the norm's components or past.
	for _, c := range []struct {
		r2, y1 []float64
		usable bool
	}{
		{[]float64{0.01, 0.01}, []float64{1, 2}, true},
		{[]float64{0.01, 0.01}, []float64{1, 2, 5}, true},
		{[]float64{0.01, 0.01}, []float64{1, math.NaN()}, false},
		{[]float64{0.01, 0.01}, []float64{math.Inf(-1), 1}, false},
		{[]float64{0.01, 0.01}, []float64{1, 2, math.NaN()}, false},
		{[]float64{0.01, 0.01}, []float64{1, 2, math.Inf(1)}, false},
		{[]float64{1e308, 1e308}, []float64{1, 2}, false},
	} {
		for _, r3 := range [][]float64{nil, {0, 0}} {
			err, ok := OfSquares(c.r2, r3, c.y1)
			if ok != c.usable || (!ok && !math.IsInf(err, 1)) || (ok && err != math.Sqrt(0.01)) && r3 == nil {
				t.Errorf("OfSquares(%v, %v, %v) = %v, %v; want usable %v", c.r2, r3, c.y1, err, ok, c.usable)
			}
		}
	}
	// A NaN term makes the RMS norm NaN: not usable. (The DOP853 form
	// maps a NaN sum to 0 by its 0/0 convention, den > 0 failing, as Of
	// does; a NaN term there comes with a NaN proposal, which is caught.)
	if err, ok := OfSquares([]float64{math.NaN(), 0}, nil, []float64{1, 2}); ok || !math.IsInf(err, 1) {
		t.Errorf("OfSquares with a NaN term = %v, %v", err, ok)
	}
}

// Of allocates nothing.
func TestNormDoesNotAllocate(t *testing.T) {
	v := []float64{1, 2, 3}
	nm := Norm{E: v, E3: v, ATol: v, RTol: v}
	if a := testing.AllocsPerRun(100, func() { nm.Of(0.1, v, v) }); a != 0 {
		t.Errorf("%v allocations", a)
	}
}
