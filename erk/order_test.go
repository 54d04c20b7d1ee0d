package erk

import (
	"math"
	"sort"
	"testing"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/systems"
)

// fixedSolve integrates dy/dt = f from t0 to t1 with nsteps equal steps
// of the method (no step rejection), through the same stage code the
// adaptive loop uses.
func fixedSolve(t *testing.T, tb *method.Tableau, f ode.Func, y0, p []float64, t0, t1 float64, nsteps int) []float64 {
	t.Helper()
	dim := len(y0)
	ones := make([]float64, dim)
	for i := range ones {
		ones[i] = 1
	}
	sv, err := New(Config{Tableau: tb, F: f, Dim: dim, RTol: ones, ATol: ones, MaxSteps: 1,
		Controller: control.DefaultPI(tb.Order, 0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	copy(sv.y, y0)
	h := (t1 - t0) / float64(nsteps)
	tt := t0
	f(tt, sv.y, p, sv.k[0])
	for range nsteps {
		sv.attemptStats(tt, h, p)
		if sv.defer_ {
			f(tt+h, sv.y1, p, sv.k[sv.s-1])
		}
		if sv.fsal {
			sv.k[0], sv.k[sv.s-1] = sv.k[sv.s-1], sv.k[0]
		}
		sv.y, sv.y1 = sv.y1, sv.y
		tt += h
		if !sv.fsal {
			f(tt, sv.y, p, sv.k[0])
		}
	}
	return append([]float64(nil), sv.y...)
}

func newKepler(t *testing.T, tb *method.Tableau) *Solver {
	t.Helper()
	pr := systems.Kepler()
	ones := []float64{1, 1, 1, 1}
	sv, err := New(Config{Tableau: tb, F: pr.F, Dim: pr.Dim, RTol: ones, ATol: ones, MaxSteps: 1,
		Controller: control.DefaultPI(tb.Order, 0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	return sv
}

func (sv *Solver) attemptStats(t, h float64, p []float64) float64 {
	var st ode.Stats
	err, _ := sv.attempt(t, h, p, &st)
	return err
}

func dist(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += (a[i] - b[i]) * (a[i] - b[i])
	}
	return math.Sqrt(s)
}

// slopes returns log2(e[i]/e[i+1]) for successive halvings.
func slopes(e []float64) []float64 {
	var out []float64
	for i := 0; i+1 < len(e); i++ {
		out = append(out, math.Log2(e[i]/e[i+1]))
	}
	return out
}

func median(v []float64) float64 {
	w := append([]float64(nil), v...)
	sort.Float64s(w)
	return w[len(w)/2]
}

// Two problems with known solutions for the convergence test:
//
//	rotation: y1' = y2·(y1² + y2²), y2' = −y1·(y1² + y2²), y(0) = (0, 1):
//	          y = (sin t, cos t); a nonlinear autonomous system.
//	expsin:   y' = y·cos t, y(0) = 1: y = exp(sin t); non-autonomous,
//	          so the nodes c_i are exercised.
func rotationF(_ float64, y, _, dy []float64) {
	r := y[0]*y[0] + y[1]*y[1]
	dy[0] = y[1] * r
	dy[1] = -y[0] * r
}

func expsinF(t float64, y, _, dy []float64) { dy[0] = y[0] * math.Cos(t) }

// lsSlope fits log(err) = c − slope·log(n) by least squares.
func lsSlope(ns []int, errs []float64) float64 {
	var sx, sy, sxx, sxy float64
	for i, n := range ns {
		x, y := math.Log(float64(n)), math.Log(errs[i])
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	k := float64(len(ns))
	return -(k*sxy - sx*sy) / (k*sxx - sx*sx)
}

// Each method's global error at t = 3 falls like h^Order with fixed
// steps: the least-squares slope of log(error) against log(steps) lies
// within ±0.3 of the declared order (the band). The step counts
// are chosen per method so that the errors run from about 1e-7 down to
// about 1e-14: the asymptotic range, above roundoff (≈ 1e-15 here).
func TestObservedOrder(t *testing.T) {
	const t1 = 3.0
	problems := []struct {
		name  string
		f     ode.Func
		y0    []float64
		exact []float64
	}{
		{"rotation", rotationF, []float64{0, 1}, []float64{math.Sin(t1), math.Cos(t1)}},
		{"expsin", expsinF, []float64{1}, []float64{math.Exp(math.Sin(t1))}},
	}
	nsteps := map[string][]int{
		"Tsit5": {32, 64, 128, 256},
		"DP5":   {32, 64, 128, 256},
		"Vern7": {8, 16, 32, 64},
		"DP8":   {8, 12, 16, 24},
	}
	for _, pb := range problems {
		for _, tb := range method.All() {
			t.Run(pb.name+"/"+tb.Name, func(t *testing.T) {
				ns := nsteps[tb.Name]
				var errs []float64
				for _, n := range ns {
					errs = append(errs, dist(fixedSolve(t, tb, pb.f, pb.y0, nil, 0, t1, n), pb.exact))
				}
				got := lsSlope(ns, errs)
				t.Logf("steps %v errors %.3g slope %.3f", ns, errs, got)
				if math.Abs(got-float64(tb.Order)) > 0.3 {
					t.Errorf("observed order %.3f, want %d ± 0.3 (errors %.3g)", got, tb.Order, errs)
				}
			})
		}
	}
}

// The error estimate h·Σ e_i k_i of one step is the difference between
// the solution of order p and the embedded one of order q, so it falls
// like h^(q+1): the observed slope lies within ±0.3 of ErrOrder+1. For
// DP8 the third-order row E3 is checked too (slope 4).
func TestEstimatorOrder(t *testing.T) {
	pr := systems.Kepler()
	y0, p := pr.Y0, pr.P
	for _, tb := range method.All() {
		t.Run(tb.Name, func(t *testing.T) {
			sv := newKepler(t, tb)
			rows := []struct {
				name  string
				w     []coef
				order int
			}{{"E", sv.e, tb.ErrOrder}}
			if sv.e3 != nil {
				rows = append(rows, struct {
					name  string
					w     []coef
					order int
				}{"E3", sv.e3, 3})
			}
			for _, r := range rows {
				var est []float64
				for h := 0.2; h > 0.2/64; h /= 2 {
					copy(sv.y, y0)
					sv.cfg.F(0, sv.y, p, sv.k[0])
					sv.attemptStats(0, h, p)
					if sv.defer_ {
						sv.cfg.F(h, sv.y1, p, sv.k[sv.s-1])
					}
					var s float64
					for d := range sv.dim {
						var acc float64
						for _, c := range r.w {
							acc += c.a * sv.k[c.j][d]
						}
						s += (h * acc) * (h * acc)
					}
					est = append(est, math.Sqrt(s))
				}
				sl := slopes(est)
				got := median(sl)
				t.Logf("%s: estimates %.3g slopes %.3f", r.name, est, sl)
				if math.Abs(got-float64(r.order+1)) > 0.3 {
					t.Errorf("%s: estimator slope %.3f, want %d ± 0.3", r.name, got, r.order+1)
				}
			}
		})
	}
}
