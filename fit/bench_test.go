package fit

import (
	"context"
	"testing"
	"time"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/router"
	"github.com/gradsolve/gradsolve/sym/parse"
)

// benchN is the ensemble size of the update benchmarks (the issue's
// "N = 256").
const benchN = 256

// BenchmarkAdamUpdate measures one Adam update of a fit on the reverse
// route — a replay of the whole ensemble at the new point, the
// least-squares loss, the reverse sweep, the per-group sums and the
// chain rule (the Adam step itself, a few operations per fitted
// quantity, is left out) — against one forward solve of the same ensemble, both in
// each iteration, and reports their ratio ("update/solve"; the issue
// asks for at most 3), and the part of it that is the forward replay
// ("replay/solve"; the rest is the reverse sweep, with the loss and the
// sums). For comparison it also times one evaluation on
// the forward route (a solve with sensitivities to the fitted
// quantities: "forward-update/solve"). Two ensembles of 256
// trajectories: Lorenz (examples/lorenz.ode, ρ from 0 to 21, t ∈
// [0, 1], Tsit5 at rtol 1e-8, atol 1e-11, fitting ρ; ρ, σ, β; or those
// and the three initial values, per trajectory) and the decay y' =
// −k·y (fitting k per trajectory).
func BenchmarkAdamUpdate(b *testing.B) {
	m, err := parse.ParseFile("../examples/lorenz.ode")
	if err != nil {
		b.Fatal(err)
	}
	lorenz := build(b, m) // parameters (ρ, σ, β)
	p := make([]float64, 0, 3*benchN)
	for i := range benchN {
		p = append(p, 21*float64(i)/float64(benchN-1), 10, 8.0/3)
	}
	lorenzEns := gradsolve.Ensemble{N: benchN, P: p}
	b.Run("lorenz-3", func(b *testing.B) {
		params := []Param{{Wrt: gradsolve.Param(0)}, {Wrt: gradsolve.Param(1), Transform: Log()}, {Wrt: gradsolve.Param(2), Transform: Log()}}
		benchUpdate(b, lorenz, lorenzEns, params, gradsolve.Options{RTol: 1e-8, ATol: 1e-11})
	})
	b.Run("lorenz-1", func(b *testing.B) {
		benchUpdate(b, lorenz, lorenzEns, []Param{{Wrt: gradsolve.Param(0)}}, gradsolve.Options{RTol: 1e-8, ATol: 1e-11})
	})
	b.Run("lorenz-6", func(b *testing.B) {
		params := []Param{{Wrt: gradsolve.Param(0)}, {Wrt: gradsolve.Param(1)}, {Wrt: gradsolve.Param(2)},
			{Wrt: gradsolve.InitialValue(0)}, {Wrt: gradsolve.InitialValue(1)}, {Wrt: gradsolve.InitialValue(2)}}
		ens := lorenzEns
		ens.Y0 = []float64{1, 0.5, 0.5}
		benchUpdate(b, lorenz, ens, params, gradsolve.Options{RTol: 1e-8, ATol: 1e-11})
	})
	b.Run("robertson", func(b *testing.B) {
		// The stiff replay: Robertson (examples/robertson.ode, k1 from
		// 0.02 to 0.06, t ∈ [0, 1e4]), Rodas5P at rtol 1e-8, atol
		// 1e-12, fitting one, two or three rates per trajectory, or the
		// three rates and the three initial values.
		rm, err := parse.ParseFile("../examples/robertson.ode")
		if err != nil {
			b.Fatal(err)
		}
		rob := build(b, rm) // parameters (k1, k2, k3)
		rp := make([]float64, 0, 3*benchN)
		for i := range benchN {
			rp = append(rp, 0.02+0.04*float64(i)/float64(benchN-1), 3e7, 1e4)
		}
		ens := gradsolve.Ensemble{N: benchN, P: rp, T0: []float64{0}, T1: []float64{1e4}}
		o := gradsolve.Options{RTol: 1e-8, ATol: 1e-12}
		for _, c := range []struct {
			name string
			wrt  []int
			y0   bool
		}{{"k1", []int{0}, false}, {"k1,k3", []int{0, 2}, false}, {"k1,k2,k3", []int{0, 1, 2}, false}, {"k1,k2,k3,y0", []int{0, 1, 2}, true}} {
			b.Run(c.name, func(b *testing.B) {
				var params []Param
				for _, j := range c.wrt {
					params = append(params, Param{Wrt: gradsolve.Param(j), Transform: Log()})
				}
				if c.y0 { // and the three initial values: six quantities
					for d := range 3 {
						params = append(params, Param{Wrt: gradsolve.InitialValue(d)})
					}
				}
				benchUpdate(b, rob, ens, params, o)
			})
		}
	})
	b.Run("halo", func(b *testing.B) {
		// The halo study of bench/fitstudy: examples/halo.ode (vc = 1,
		// q from 0.65 to 0.75, rc = 0.2), t ∈ [0, 10] with the states
		// saved at t = 1, …, 9 (inside steps: the walks take partial
		// steps there) and at the end, Tsit5 at rtol 1e-8, atol 1e-10,
		// fitting q per trajectory.
		hm, err := parse.ParseFile("../examples/halo.ode")
		if err != nil {
			b.Fatal(err)
		}
		halo := build(b, hm) // parameters (vc, q, rc)
		hp := make([]float64, 0, 3*benchN)
		for i := range benchN {
			hp = append(hp, 1, 0.65+0.1*float64(i)/float64(benchN-1), 0.2)
		}
		save := make([]float64, 9)
		for i := range save {
			save[i] = float64(i + 1)
		}
		ens := gradsolve.Ensemble{N: benchN, P: hp, T0: []float64{0}, T1: []float64{10}, Save: save}
		o := gradsolve.Options{Method: method.Tsit5, RTol: 1e-8, ATol: 1e-10}
		benchUpdateSaved(b, halo, ens, []Param{{Wrt: gradsolve.Param(1), Transform: Log()}}, o, true)
	})
	b.Run("decay", func(b *testing.B) {
		pr := decayProblem(b)
		k := make([]float64, benchN)
		for i := range k {
			k[i] = 0.2 + float64(i)/benchN
		}
		dc := newDecayCase(benchN, k)
		for i := range benchN {
			dc.ens.P[4*i] = k[i]
		}
		benchUpdate(b, pr, dc.ens, []Param{{Wrt: gradsolve.Param(0), Transform: Log()}}, gradsolve.Options{RTol: 1e-8, ATol: 1e-11})
	})
}

func benchUpdate(b *testing.B, pr *gradsolve.Problem, ens gradsolve.Ensemble, params []Param, o gradsolve.Options) {
	benchUpdateSaved(b, pr, ens, params, o, false)
}

// benchUpdateSaved is benchUpdate, with the states at the save times
// in the loss too where saved is set.
func benchUpdateSaved(b *testing.B, pr *gradsolve.Problem, ens gradsolve.Ensemble, params []Param, o gradsolve.Options, saved bool) {
	ctx := context.Background()
	res, err := gradsolve.Solve(ctx, pr, &ens, &o)
	if err != nil || res.Errs() != nil {
		b.Fatal(err, res.Errs())
	}
	data := &gradsolve.FitData{Final: append([]float64(nil), res.Y...)}
	for i := range data.Final {
		data.Final[i] *= 1.01 // a residual, so the gradient is not zero
	}
	if saved { // the saved states too, with residuals
		data.Saved = append([]float64(nil), res.Saved...)
		for i := range data.Saved {
			data.Saved[i] *= 1.01
		}
	}
	newEval := func(mode router.Mode) (*evaluator, [][]float64, [][]float64) {
		s, err := newSetup(&Spec{Problem: pr, Ensemble: ens, Options: o, Data: data, Params: params,
			Owner: PerTrajectory, Optimizer: &Adam{}, Mode: mode, Rerecord: Rerecord{Mode: RerecordNever}})
		if err != nil {
			b.Fatal(err)
		}
		theta, dtheta := make([][]float64, s.G()), make([][]float64, s.G())
		tr := make([]Transform, len(params))
		for c, p := range params {
			tr[c] = p.Transform
		}
		for gi := range theta {
			g := &group{tr: tr, scale: s.scale[gi]}
			z := make([]float64, len(params))
			for c := range z {
				z[c] = tr[c].toWorking(s.start[gi][c], s.scale[gi][c])
			}
			theta[gi], dtheta[gi] = g.natural(z)
		}
		return &evaluator{s: s}, theta, dtheta
	}
	rev, theta, dtheta := newEval(router.Reverse)
	fwd, _, _ := newEval(router.Forward)
	active := make([]bool, len(theta))
	for i := range active {
		active[i] = true
	}
	if _, err := rev.eval(ctx, theta, dtheta, active); err != nil { // the recording
		b.Fatal(err)
	}
	var tSolve, tUpdate, tForward, tReplay time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if _, err := gradsolve.Solve(ctx, pr, &ens, &o); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := rev.eval(ctx, theta, dtheta, active); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		tReplay += rev.rec.Result.Elapsed // the update's forward replay
		if _, err := fwd.eval(ctx, theta, dtheta, active); err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		tSolve, tUpdate, tForward = tSolve+t1.Sub(t0), tUpdate+t2.Sub(t1), tForward+t3.Sub(t2)
	}
	b.StopTimer()
	b.ReportMetric(float64(tSolve.Nanoseconds())/float64(b.N), "solve-ns/op")
	b.ReportMetric(float64(tUpdate.Nanoseconds())/float64(b.N), "update-ns/op")
	b.ReportMetric(float64(tUpdate)/float64(tSolve), "update/solve")
	b.ReportMetric(float64(tReplay)/float64(tSolve), "replay/solve")
	b.ReportMetric(float64(tForward)/float64(tSolve), "forward-update/solve")
	if rev.records != 1 {
		b.Fatalf("%d records: the updates must replay", rev.records)
	}
}
