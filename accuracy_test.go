package gradsolve_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/method"
)

// ChooseOptions picks, on a pilot subsample, the cheapest configuration
// of its grid whose 99th-percentile error meets the target; on the
// whole ensemble (every trajectory against its own converged reference)
// that configuration meets the target too. For the halo orbit (explicit
// methods) and Robertson (Rosenbrock methods, Rodas5P and Rosenbrock23).
func TestChooseOptions(t *testing.T) {
	halo, rob := exampleProblem(t, "halo"), exampleProblem(t, "robertson")
	const n = 200
	hp, rp := make([]float64, 0, 3*n), make([]float64, 0, 3*n)
	for i := range n {
		hp = append(hp, 1, 0.6+0.4*float64(i)/(n-1), 0.2)
		rp = append(rp, 0.02+0.04*float64(i)/(n-1), 3e7, 1e4)
	}
	for _, c := range []struct {
		name    string
		pr      *gradsolve.Problem
		ens     *gradsolve.Ensemble
		o       gradsolve.Options
		eps     float64
		ref     gradsolve.Options
		methods []string
	}{
		{"halo", halo, &gradsolve.Ensemble{N: n, P: hp}, gradsolve.Options{}, 1e-4,
			gradsolve.Options{Method: method.DP8, RTol: 1e-13, ATol: 1e-15}, []string{"Tsit5", "DP5", "Vern7", "DP8"}},
		{"robertson", rob, &gradsolve.Ensemble{N: n, P: rp}, gradsolve.Options{RTol: 1e-4, ATol: 1e-8}, 1e-4,
			gradsolve.Options{Method: method.Rodas5P, RTol: 1e-11, ATol: 1e-14, MaxSteps: 1_000_000}, []string{"Rosenbrock23", "Rodas5P"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, rep, err := gradsolve.ChooseOptions(context.Background(), c.pr, c.ens, &c.o, gradsolve.AccuracyTarget{Eps: c.eps, Pilot: 40})
			if err != nil {
				t.Fatal(err)
			}
			ch := rep.Points[rep.Chosen]
			t.Logf("chosen %s rtol %g atol %g: pilot p99 %.3g, cost %d (reference %s)", ch.Method, ch.RTol, ch.ATol, ch.Quantile, ch.Cost, rep.Reference)
			for _, pt := range rep.Points {
				t.Logf("  %-12s rtol %-8.3g p99 %-10.3g median %-10.3g cost %-9d passes %v", pt.Method, pt.RTol, pt.Quantile, pt.Median, pt.Cost, pt.Passes)
			}
			// Every method tried, each from the loosest tolerance to its
			// first passing one; the chosen one the cheapest passing.
			var seen []string
			for i, pt := range rep.Points {
				if !slices.Contains(seen, pt.Method) {
					seen = append(seen, pt.Method)
				}
				next := i+1 < len(rep.Points) && rep.Points[i+1].Method == pt.Method
				if pt.Passes == next {
					t.Errorf("%s rtol %g: passes %v, yet the grid %s there", pt.Method, pt.RTol, pt.Passes, map[bool]string{true: "goes on", false: "stops"}[next])
				}
				if pt.Passes && pt.Cost < ch.Cost {
					t.Errorf("%s rtol %g passes at cost %d, below the chosen %d", pt.Method, pt.RTol, pt.Cost, ch.Cost)
				}
			}
			if !slices.Equal(seen, c.methods) {
				t.Errorf("methods tried %v, want %v", seen, c.methods)
			}
			if o.Method.MethodName() != ch.Method || o.RTol != ch.RTol || o.ATol != ch.ATol {
				t.Errorf("options %v rtol %g atol %g, want the chosen point", o.Method, o.RTol, o.ATol)
			}
			// The whole ensemble at the chosen options against its own
			// reference: the 99th percentile of the errors meets eps.
			res := mustSolve(t, c.pr, c.ens, o)
			ref := mustSolve(t, c.pr, c.ens, &c.ref)
			errs := make([]float64, n)
			for i := range n {
				var d, m float64
				for k, v := range ref.Row(i) {
					d += (res.Row(i)[k] - v) * (res.Row(i)[k] - v)
					m += v * v
				}
				errs[i] = math.Sqrt(d / m)
			}
			slices.Sort(errs)
			if p99 := errs[int(math.Ceil(0.99*n))-1]; p99 > c.eps {
				t.Errorf("the whole ensemble's p99 error %.3g at the chosen options exceeds %g", p99, c.eps)
			} else {
				t.Logf("whole ensemble: p99 %.3g, max %.3g", p99, errs[n-1])
			}
		})
	}
}

// Bad targets are refused, naming the field.
func TestChooseOptionsErrors(t *testing.T) {
	pr := exampleProblem(t, "lorenz")
	ens := &gradsolve.Ensemble{N: 4}
	for _, c := range []struct {
		tg   gradsolve.AccuracyTarget
		want string
	}{
		{gradsolve.AccuracyTarget{Eps: 0}, "Eps = 0"},
		{gradsolve.AccuracyTarget{Eps: math.Inf(1)}, "Eps = +Inf"},
		{gradsolve.AccuracyTarget{Eps: 1e-13}, "below what the reference"},
		{gradsolve.AccuracyTarget{Eps: 1e-3, Quantile: 1.5}, "Quantile = 1.5"},
		{gradsolve.AccuracyTarget{Eps: 1e-3, Pilot: -1}, "Pilot = -1"},
	} {
		_, _, err := gradsolve.ChooseOptions(context.Background(), pr, ens, nil, c.tg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.tg, err, c.want)
		}
	}
}

// AccuracyTarget.Error replaces the relative error: it is called for
// every pilot trajectory, by its index in the ensemble, with the final
// states of the configuration and of the reference; a NaN counts as
// +Inf.
func TestChooseOptionsError(t *testing.T) {
	pr := exampleProblem(t, "lorenz")
	const n = 20
	p := make([]float64, 0, 3*n)
	for i := range n {
		p = append(p, 10, 20+float64(i), 8.0/3)
	}
	ens := &gradsolve.Ensemble{N: n, P: p}
	seen := map[int]bool{}
	absErr := func(i int, y, ref []float64) float64 {
		seen[i] = true
		if i == 4 {
			return math.NaN()
		}
		return math.Abs(y[0] - ref[0])
	}
	o, rep, err := gradsolve.ChooseOptions(context.Background(), pr, ens, &gradsolve.Options{Method: method.DP8},
		gradsolve.AccuracyTarget{Eps: 1e-6, Quantile: 0.5, Pilot: 5, Error: absErr})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Trajectories, []int{0, 4, 8, 12, 16}) || len(seen) != 5 {
		t.Fatalf("pilot %v, Error called for %v", rep.Trajectories, seen)
	}
	// The chosen point's median by hand: the pilot's trajectories at the
	// chosen options against the reference the report names.
	sub := &gradsolve.Ensemble{N: 5}
	for _, i := range rep.Trajectories {
		sub.P = append(sub.P, p[3*i:3*i+3]...)
	}
	res := mustSolve(t, pr, sub, o)
	ref := mustSolve(t, pr, sub, &gradsolve.Options{Method: method.DP8, RTol: 1e-13, ATol: 1e-15, MaxSteps: 1_000_000})
	errs := []float64{math.Inf(1)}
	for j := range 5 {
		if j != 1 {
			errs = append(errs, math.Abs(res.Row(j)[0]-ref.Row(j)[0]))
		}
	}
	slices.Sort(errs)
	ch := rep.Points[rep.Chosen]
	if ch.Median != errs[2] || ch.Quantile != errs[2] || !math.IsInf(ch.Max, 1) {
		t.Errorf("chosen point: median %g, quantile %g, max %g; by hand %v", ch.Median, ch.Quantile, ch.Max, errs)
	}
}
