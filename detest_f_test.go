package gradsolve_test

import (
	"math"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/method"
)

// The DETEST class F problems (examples/detest_f*.ode; Enright & Pryce,
// ACM TOMS 13(1):1–27, 1987) have right-hand sides that jump, or whose
// derivatives jump, at known times. Each is solved across its
// discontinuities by every explicit method and compared with a
// reference: the closed form where there is one (F1, F2 step by step
// from integer to integer; F4, F5 in one formula), else (F3) a DP8 solve
// restarted at every kink, where the solution on each piece is smooth,
// at rtol 1e-13.

// detestSave are the comparison times: inside pieces and at the end.
var detestSave = []float64{2.5, 7.25, 10, 13.75, 20}

// f1Exact returns y1 at integer t = k of F1. On [k, k+1] the forcing is
// s = ±1 and y1 = s/ω² + e^(a(t−k))·(A cos π(t−k) + B sin π(t−k)) with
// ω² = π² + a²; from y1'(0) = 0 follows y1'(k) = 0 at every integer and
// y1(k+1) = s/ω² − e^a·(y1(k) − s/ω²).
func f1Exact(a float64, k int) float64 {
	w2 := math.Pi*math.Pi + a*a
	y := 0.0
	for i := range k {
		s := 1.0
		if i%2 == 1 {
			s = -1
		}
		y = s/w2 - math.Exp(a)*(y-s/w2)
	}
	return y
}

// f1At returns (y1, y2) of F1 at any t ≥ 0 from the closed form on the
// piece that holds t.
func f1At(a, t float64) [2]float64 {
	k := int(math.Floor(t))
	s := 1.0
	if k%2 == 1 {
		s = -1
	}
	w2 := math.Pi*math.Pi + a*a
	yk := f1Exact(a, k)
	A := yk - s/w2
	B := -a * A / math.Pi // y1'(k) = aA + πB = 0
	tau := t - float64(k)
	e, c, sn := math.Exp(a*tau), math.Cos(math.Pi*tau), math.Sin(math.Pi*tau)
	return [2]float64{s/w2 + e*(A*c+B*sn), e * ((a*A+math.Pi*B)*c + (a*B-math.Pi*A)*sn)}
}

// f2At returns y of F2 at t: on an even piece y' = 55 − 3y/2, so y
// relaxes to 110/3 as e^(−3/2·τ); on an odd one to 110 as e^(−τ/2).
func f2At(t float64) float64 {
	y := 110.0
	k := int(math.Floor(t))
	piece := func(y0, tau float64, i int) float64 {
		if i%2 == 0 {
			return 110.0/3 + (y0-110.0/3)*math.Exp(-1.5*tau)
		}
		return 110 + (y0-110)*math.Exp(-0.5*tau)
	}
	for i := range k {
		y = piece(y, 1, i)
	}
	return piece(y, t-float64(k), k)
}

// f4At and f5At are the closed forms in the files' headers.
func f4At(t float64) float64 {
	if t <= 10 {
		return 1 - 2*t/21 - 15*math.Log((1+4*(t-5)*(t-5))/101)
	}
	return math.Exp(-2*(t-10)) / 21
}

func f5At(t float64) float64 {
	var c, s float64
	for i := 1; i <= 19; i++ {
		c += math.Pow(float64(i), 4.0/3)
		s += math.Pow(math.Abs(t-float64(i)), 4.0/3)
	}
	return math.Exp((s - c) / c)
}

// f3Reference integrates F3 piece by piece, [k, k+1] for k = 0…19, with
// DP8 at rtol 1e-13: |sin(πt)| is smooth inside each piece, so each
// solve is of a smooth problem and converges at the method's order.
func f3Reference(t *testing.T, pr *gradsolve.Problem, save []float64) [][]float64 {
	t.Helper()
	y := append([]float64(nil), pr.Y0...)
	out := make([][]float64, len(save))
	for k := range 20 {
		t0, t1 := float64(k), float64(k+1)
		var s []float64
		var idx []int
		for i, ts := range save {
			if ts > t0 && ts <= t1 {
				s, idx = append(s, ts), append(idx, i)
			}
		}
		res := mustSolve(t, pr, &gradsolve.Ensemble{N: 1, Y0: y, T0: []float64{t0}, T1: []float64{t1}, Save: s},
			&gradsolve.Options{Method: method.DP8, RTol: 1e-13, ATol: 1e-15, MaxSteps: 1_000_000})
		for j, i := range idx {
			out[i] = append([]float64(nil), res.SavedRow(0, j)...)
		}
		y = append([]float64(nil), res.Row(0)...)
	}
	return out
}

// Every explicit method solves every F problem across its switches to
// the accuracy of a smooth problem. The controller bounds the error per
// step, not the global error; on these problems (20 units of time, up
// to 19 switches, each costing 20–40 rejected steps) the global error
// measured 7 to 2 000 times rtol·|y| + atol at rtol = 1e-10, depending
// on the problem and method. The bound below, 10⁴ times, leaves a
// margin for other platforms' math functions and is still some 10⁵
// times smaller than the error of a branch taken wrongly for one unit
// of time. (The closed forms, and the piecewise reference of F3, agree
// with full-span DP8 solves at rtol 1e-12 to 1e-9 relative.)
func TestDETESTF(t *testing.T) {
	const rtol, atol = 1e-10, 1e-12
	const bound = 1e4
	for _, row := range []struct {
		file string
		ref  func(t *testing.T, pr *gradsolve.Problem) [][]float64
	}{
		{"detest_f1", func(*testing.T, *gradsolve.Problem) [][]float64 {
			var out [][]float64
			for _, ts := range detestSave {
				y := f1At(0.1, ts)
				out = append(out, y[:])
			}
			return out
		}},
		{"detest_f2", func(*testing.T, *gradsolve.Problem) [][]float64 { return each(detestSave, f2At) }},
		{"detest_f3", func(t *testing.T, pr *gradsolve.Problem) [][]float64 { return f3Reference(t, pr, detestSave) }},
		{"detest_f4", func(*testing.T, *gradsolve.Problem) [][]float64 { return each(detestSave, f4At) }},
		{"detest_f5", func(*testing.T, *gradsolve.Problem) [][]float64 { return each(detestSave, f5At) }},
	} {
		t.Run(row.file, func(t *testing.T) {
			pr := exampleProblem(t, row.file)
			ref := row.ref(t, pr)
			for _, tb := range method.All() {
				res := mustSolve(t, pr, &gradsolve.Ensemble{N: 1, Save: detestSave},
					&gradsolve.Options{Method: tb, RTol: rtol, ATol: atol, MaxSteps: 1_000_000})
				worst := 0.0
				for k := range detestSave {
					for d, want := range ref[k] {
						got := res.SavedRow(0, k)[d]
						worst = math.Max(worst, math.Abs(got-want)/(rtol*math.Abs(want)+atol))
					}
				}
				t.Logf("%s %s: %d steps, %d rejected; worst error %.3g × (rtol·|y| + atol)", row.file, tb.Name,
					res.Stats[0].Accepted, res.Stats[0].Rejected, worst)
				if !(worst <= bound) {
					t.Errorf("%s %s: error %.3g × (rtol·|y| + atol), want ≤ %g", row.file, tb.Name, worst, bound)
				}
			}
		})
	}
}

// each evaluates a scalar closed form at the times ts.
func each(ts []float64, f func(float64) float64) [][]float64 {
	out := make([][]float64, len(ts))
	for i, t := range ts {
		out[i] = []float64{f(t)}
	}
	return out
}
