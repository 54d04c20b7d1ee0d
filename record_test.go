package gradsolve_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
)

func mustRecord(t testing.TB, pr *gradsolve.Problem, ens *gradsolve.Ensemble, o *gradsolve.Options) *gradsolve.Recording {
	t.Helper()
	rec, err := gradsolve.Record(context.Background(), pr, ens, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Result.Errs(); err != nil {
		t.Fatal(err)
	}
	return rec
}

// Recording changes nothing, and replaying at the recording point
// reproduces the solve bit for bit (the replay runs the same arithmetic
// on the same step sizes).
func TestRecordAndReplayReproduceSolve(t *testing.T) {
	pr := exampleProblem(t, "lorenz")
	ens := &gradsolve.Ensemble{N: 30, P: lorenzFileParams(30), Save: []float64{0, 0.3, 0.5, 1}}
	for _, tb := range method.All() {
		o := &gradsolve.Options{Method: tb, RTol: 1e-8, ATol: 1e-11}
		plain := mustSolve(t, pr, ens, o)
		rec := mustRecord(t, pr, ens, o)
		if !testutil.IdenticalBits(plain.Y, rec.Result.Y) || !testutil.IdenticalBits(plain.Saved, rec.Result.Saved) {
			t.Fatalf("%s: recording changed the solve", tb.Name)
		}
		rep, err := rec.Replay(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !testutil.IdenticalBits(plain.Y, rep.Y) || !testutil.IdenticalBits(plain.Saved, rep.Saved) {
			t.Fatalf("%s: the replay at the recording point differs from the solve", tb.Name)
		}
		if rec.Shift() != 0 {
			t.Errorf("%s: shift %g at the recording point", tb.Name, rec.Shift())
		}
	}
}

// The agreement check. For L = uᵀy(t1) + Σ_k u_kᵀy(τ_k) with
// random u, on Lorenz, Van der Pol, Kepler and the halo orbit, with
// respect to every parameter and initial value:
//   - the reverse replay and forward sensitivities (same mesh: the state
//     alone controls the step) agree to 1e-12 relative — both are the
//     exact derivative of the same discrete map, computed in different
//     orders;
//   - central differences of the replay on the same mesh agree to 1e-6
//     (δ = 1e-7·scale: truncation and rounding far below that).
func TestForwardReverseAndFiniteDifferencesAgree(t *testing.T) {
	for _, name := range []string{"lorenz", "vanderpol", "kepler", "halo"} {
		pr := exampleProblem(t, name)
		save := []float64{pr.T0 + 0.25*(pr.T1-pr.T0), pr.T0 + 0.6*(pr.T1-pr.T0), pr.T1}
		ens := &gradsolve.Ensemble{N: 1, Save: save}
		dim, m := pr.Dim, pr.NumParams
		for _, tb := range []*method.Tableau{method.Tsit5, method.Vern7, method.DP8} {
			o := gradsolve.Options{Method: tb, RTol: 1e-8, ATol: 1e-10}
			rec := mustRecord(t, pr, ens, &o)
			rng := rand.New(rand.NewPCG(21, 22))
			cot := gradsolve.Cotangents{Y: randVec(rng, dim), Saved: randVec(rng, len(save)*dim)}
			g, err := rec.Gradient(context.Background(), cot)
			if err != nil {
				t.Fatal(err)
			}
			// Forward sensitivities of every parameter and initial value.
			var wrt []gradsolve.Wrt
			for j := range m {
				wrt = append(wrt, gradsolve.Param(j))
			}
			for i := range dim {
				wrt = append(wrt, gradsolve.InitialValue(i))
			}
			so := o
			so.Sens = &gradsolve.Sensitivity{Wrt: wrt}
			fw := mustSolve(t, pr, ens, &so)
			ns := len(wrt)
			fwd := make([]float64, ns)
			for c := range ns {
				for d := range dim {
					fwd[c] += cot.Y[d] * fw.S[d*ns+c]
					for k := range save {
						fwd[c] += cot.Saved[k*dim+d] * fw.SavedS[(k*dim+d)*ns+c]
					}
				}
			}
			rev := append(append([]float64(nil), g.P...), g.Y0...)
			var scale float64
			for _, v := range fwd {
				scale = math.Max(scale, math.Abs(v))
			}
			for c := range ns {
				if math.Abs(rev[c]-fwd[c]) > 1e-12*scale {
					t.Errorf("%s %s: dL/d%v reverse %.16g, forward %.16g", name, tb.Name, wrt[c], rev[c], fwd[c])
				}
			}
			// Central differences of the replay on the recorded mesh.
			loss := func(res *gradsolve.Result) float64 {
				var l float64
				for d := range dim {
					l += cot.Y[d] * res.Y[d]
				}
				for k := range cot.Saved {
					l += cot.Saved[k] * res.Saved[k]
				}
				return l
			}
			for c, w := range wrt {
				y0, p := append([]float64(nil), pr.Y0...), append([]float64(nil), pr.P...)
				x := &p
				if w.Y0 {
					x = &y0
				}
				orig := (*x)[w.Index]
				delta := 1e-7 * math.Max(1, math.Abs(orig))
				(*x)[w.Index] = orig + delta
				rp, err := rec.Replay(context.Background(), &gradsolve.Point{Y0: y0, P: p})
				if err != nil {
					t.Fatal(err)
				}
				lp := loss(rp)
				(*x)[w.Index] = orig - delta
				rm, _ := rec.Replay(context.Background(), &gradsolve.Point{Y0: y0, P: p})
				lm := loss(rm)
				fd := (lp - lm) / (2 * delta)
				if math.Abs(fd-rev[c]) > 1e-6*math.Max(scale, 1) {
					t.Errorf("%s %s: dL/d%v reverse %.10g, central difference of the replay %.10g", name, tb.Name, w, rev[c], fd)
				}
			}
			if _, err := rec.Replay(context.Background(), &gradsolve.Point{Y0: pr.Y0, P: pr.P}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func randVec(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

// Replaying at moved parameters reports the shift, and the gradient
// there is that of the replayed map (checked against the forward
// sensitivities of a fixed-mesh solve elsewhere); failed trajectories
// give NaN rows.
func TestReplayShiftAndFailures(t *testing.T) {
	pr := exampleProblem(t, "lorenz")
	rec := mustRecord(t, pr, &gradsolve.Ensemble{N: 4, P: lorenzFileParams(4)}, nil)
	p := lorenzFileParams(4)
	for i := range p {
		p[i] *= 1.02
	}
	if _, err := rec.Replay(context.Background(), &gradsolve.Point{P: p}); err != nil {
		t.Fatal(err)
	}
	if s := rec.Shift(); math.Abs(s-0.02) > 1e-12 {
		t.Errorf("shift %g after moving every parameter by 2%%", s)
	}
	if _, err := rec.Gradient(context.Background(), gradsolve.Cotangents{Y: make([]float64, 5)}); err == nil || !strings.Contains(err.Error(), "want N·Dim = 12") {
		t.Errorf("bad cotangent shape: %v", err)
	}
	if _, err := rec.Replay(context.Background(), &gradsolve.Point{P: []float64{1, 2}}); err == nil {
		t.Error("bad point shape: no error")
	}

	// A trajectory that fails in the recording.
	fail := &gradsolve.Problem{Name: "blowup", Dim: 1, NumParams: 1, F: blowup.F,
		Programs: func() *gradsolve.Programs {
			return &gradsolve.Programs{F: blowup.F,
				VJP: func(t float64, y, p, u, gy, gp []float64) { gy[0] = u[0] * 2 * p[0] * y[0]; gp[0] = u[0] * y[0] * y[0] }}
		}}
	r, err := gradsolve.Record(context.Background(), fail, &gradsolve.Ensemble{N: 2, Y0: []float64{1}, P: []float64{0.1, 1}, T0: []float64{0}, T1: []float64{2}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := r.Gradient(context.Background(), gradsolve.Cotangents{Y: []float64{1, 1}})
	if err != nil {
		t.Fatal(err)
	}
	// y(2) = 1/(1 − 2p): dy/dp = 2/(1 − 2p)² = 3.125 at p = 0.1, to
	// the solve's accuracy (rtol 1e-6).
	if math.Abs(g.P[0]-3.125) > 1e-4 || !math.IsNaN(g.P[1]) || g.Status[1] == gradsolve.Success {
		t.Errorf("gradients %v, statuses %v", g.P, g.Status)
	}
}

func TestRecordNeedsCotangentProgram(t *testing.T) {
	_, err := gradsolve.Record(context.Background(), blowup, &gradsolve.Ensemble{N: 1, Y0: []float64{1}, P: []float64{1}, T0: []float64{0}, T1: []float64{0.1}}, nil)
	if err == nil || !strings.Contains(err.Error(), "cotangent program") {
		t.Errorf("error %v", err)
	}
}

// KeepStages changes the cost of the reverse sweep, not its result:
// the stage inputs rebuilt from kept stages are the ones the sweep would
// recompute, bit for bit, so the gradients are identical — at the
// recording point and after a replay elsewhere.
func TestKeepStagesSameGradient(t *testing.T) {
	pr := exampleProblem(t, "halo")
	ens := &gradsolve.Ensemble{N: 3, P: []float64{1, 0.7, 0.2, 1, 0.8, 0.2, 1.1, 0.9, 0.25}, Save: []float64{7}}
	for _, tb := range method.All() {
		var grads [2][]float64
		for k, keep := range []bool{false, true} {
			rec := mustRecord(t, pr, ens, &gradsolve.Options{Method: tb, RTol: 1e-8, ATol: 1e-8, KeepStages: keep})
			cot := gradsolve.Cotangents{Y: make([]float64, 18), Saved: make([]float64, 18)}
			for i := range cot.Y {
				cot.Y[i], cot.Saved[i] = float64(i%5)-2, float64(i%3)
			}
			g, err := rec.Gradient(context.Background(), cot)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := rec.Replay(context.Background(), &gradsolve.Point{P: []float64{1.01, 0.72, 0.2}}); err != nil {
				t.Fatal(err)
			}
			g2, err := rec.Gradient(context.Background(), cot)
			if err != nil {
				t.Fatal(err)
			}
			grads[k] = append(append(append(g.P, g.Y0...), g2.P...), g2.Y0...)
		}
		if !testutil.IdenticalBits(grads[0], grads[1]) {
			t.Errorf("%s: KeepStages changed the gradient", tb.Name)
		}
	}
}

// A Replay that fails leaves the recording at its point: the result,
// the shift and the gradient are those before it, bit for bit. At e = 1
// the eccentric Kepler orbit's initial speed y0(p) is infinite, so the
// Replay is refused before it runs; a Replay cancelled while it runs has
// already overwritten the states of the meshes it replayed, which the
// next Gradient puts back.
func TestFailedReplayKeepsThePoint(t *testing.T) {
	ctx := context.Background()
	t.Run("refused point", func(t *testing.T) {
		pr := exampleProblem(t, "kepler_ecc")
		rec := mustRecord(t, pr, &gradsolve.Ensemble{N: 1}, &gradsolve.Options{RTol: 1e-9, ATol: 1e-12})
		res0 := rec.Result
		_, cot, err := gradsolve.SumSquares()(rec.Result)
		if err != nil {
			t.Fatal(err)
		}
		g0, err := rec.Gradient(ctx, cot)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rec.Replay(ctx, &gradsolve.Point{P: []float64{1, 1}}); !errors.Is(err, gradsolve.ErrInput) || !strings.Contains(err.Error(), "vy = +Inf") {
			t.Fatalf("Replay at e = 1: %v, want the infinite vy refused", err)
		}
		g, err := rec.Gradient(ctx, cot)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Result != res0 || rec.Shift() != 0 || g.Shift != 0 || !testutil.IdenticalBits(g.P, g0.P) || !testutil.IdenticalBits(g.Y0, g0.Y0) {
			t.Errorf("after the refused Replay: shift %g, dL/dp %v (was %v), dL/dy0 %v (was %v)", rec.Shift(), g.P, g0.P, g.Y0, g0.Y0)
		}
	})
	t.Run("cancelled while replaying", func(t *testing.T) {
		base := exampleProblem(t, "lorenz")
		runCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		var armed atomic.Bool
		var calls atomic.Int64
		pr := *base
		pr.Programs = func() *ode.Programs {
			pg := *base.Programs()
			f := pg.F
			pg.F = func(t float64, y, p, dy []float64) {
				if armed.Load() && calls.Add(1) == 50 { // inside trajectory 0's replay
					cancel()
				}
				f(t, y, p, dy)
			}
			return &pg
		}
		// One worker of the scalar engine (which calls F, where the
		// lanes call the lane right-hand side) taking one trajectory at
		// a time: the cancellation stops the replay after trajectory 0.
		const n = 4
		rec := mustRecord(t, &pr, &gradsolve.Ensemble{N: n, P: lorenzFileParams(n), Save: []float64{0.5}}, &gradsolve.Options{Workers: 1, Chunk: 1, Engine: "cpu-erk"})
		res0 := rec.Result
		y0, s0 := append([]float64(nil), res0.Y...), append([]float64(nil), res0.Saved...)
		cot := gradsolve.Cotangents{Y: res0.Y, Saved: res0.Saved}
		g0, err := rec.Gradient(ctx, cot)
		if err != nil {
			t.Fatal(err)
		}
		moved := lorenzFileParams(n)
		for j := range moved {
			moved[j] *= 1.1
		}
		armed.Store(true)
		if _, err := rec.Replay(runCtx, &gradsolve.Point{P: moved}); !errors.Is(err, context.Canceled) {
			t.Fatalf("Replay: %v, want it cancelled", err)
		}
		armed.Store(false)
		g, err := rec.Gradient(ctx, cot)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Result != res0 || rec.Shift() != 0 || !testutil.IdenticalBits(g.P, g0.P) || !testutil.IdenticalBits(g.Y0, g0.Y0) ||
			!testutil.IdenticalBits(res0.Y, y0) || !testutil.IdenticalBits(res0.Saved, s0) {
			t.Errorf("after the cancelled Replay: shift %g, dL/dp %v, want %v", rec.Shift(), g.P[:3], g0.P[:3])
		}
	})
}
