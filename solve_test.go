package gradsolve_test

import (
	"context"
	"errors"
	"math"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/systems"
)

// linspace returns n points from a to b inclusive.
func linspace(a, b float64, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		if n == 1 {
			v[i] = a
		} else {
			v[i] = a + (b-a)*float64(i)/float64(n-1)
		}
	}
	return v
}

// lorenzEnsemble is the DiffEqGPU/JAX gradsolve benchmark ensemble:
// σ = 10, β = 8/3, ρ = linspace(0, 21, n), y0 = (1, 0, 0), t ∈ [0, 1].
func lorenzEnsemble(n int) (*gradsolve.Problem, *gradsolve.Ensemble) {
	pr := systems.Lorenz()
	p := make([]float64, 0, 3*n)
	for _, rho := range linspace(0, 21, n) {
		p = append(p, 10, rho, 8.0/3)
	}
	return pr, &gradsolve.Ensemble{N: n, Y0: []float64{1, 0, 0}, P: p, T0: []float64{0}, T1: []float64{1}}
}

func mustSolve(t testing.TB, pr *gradsolve.Problem, ens *gradsolve.Ensemble, o *gradsolve.Options) *gradsolve.Result {
	t.Helper()
	res, err := gradsolve.Solve(context.Background(), pr, ens, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Errs(); err != nil {
		t.Fatal(err)
	}
	return res
}

func relErr(a, ref []float64) float64 {
	var num, den float64
	for i := range a {
		num += (a[i] - ref[i]) * (a[i] - ref[i])
		den += ref[i] * ref[i]
	}
	return math.Sqrt(num / den)
}

func percentile(v []float64, q float64) float64 {
	w := append([]float64(nil), v...)
	sort.Float64s(w)
	return w[int(math.Ceil(q*float64(len(w))))-1]
}

// The accuracy check: the Lorenz ensemble of 1000 trajectories at
// rtol = 1e-8, atol = 1e-11 agrees with a converged reference (DP8 at
// rtol = 1e-13, whose own error is some 1e-12, far below the bound) to
// 1e-6 relative (2-norm over the state) at the 99th percentile, for
// every method: the figure, 100·rtol, the global error that a
// local tolerance of 1e-8 implies over the few hundred steps of a
// trajectory that is not chaotic on [0, 1].
func TestLorenzEnsembleAccuracy(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 200
	}
	pr, ens := lorenzEnsemble(n)
	ref := mustSolve(t, pr, ens, &gradsolve.Options{Method: method.DP8, RTol: 1e-13, ATol: 1e-16})
	for _, tb := range method.All() {
		t.Run(tb.Name, func(t *testing.T) {
			res := mustSolve(t, pr, ens, &gradsolve.Options{Method: tb, RTol: 1e-8, ATol: 1e-11})
			errs := make([]float64, n)
			for i := range n {
				errs[i] = relErr(res.Row(i), ref.Row(i))
			}
			p99 := percentile(errs, 0.99)
			tot := res.Total()
			t.Logf("p99 rel err %.3g, max %.3g; steps %d accepted, %d rejected", p99, percentile(errs, 1), tot.Accepted, tot.Rejected)
			if p99 > 1e-6 {
				t.Errorf("99th percentile relative error %.3g > 1e-6", p99)
			}
		})
	}
}

// The halo orbit conserves energy E and the angular momentum L_z (the
// potential is static and axisymmetric). Each accepted step commits a
// local error of at most ≈ rtol relative; over the 20-time-unit fixture
// orbit (≈ 3 periods, 100–400 steps) they add up, partly cancelling, to
// a drift that we require to stay within 100·rtol (observed 5–30·rtol),
// at rtol = 1e-8 and 1e-10; and tightening the tolerance must reduce it.
func TestHaloConservation(t *testing.T) {
	pr := systems.Halo()
	for _, tb := range method.All() {
		t.Run(tb.Name, func(t *testing.T) {
			var drift [2]float64
			for k, rtol := range []float64{1e-8, 1e-10} {
				res := mustSolve(t, pr, &gradsolve.Ensemble{N: 1}, &gradsolve.Options{Method: tb, RTol: rtol, ATol: rtol})
				e0, e1 := systems.HaloEnergy(pr.Y0, pr.P), systems.HaloEnergy(res.Row(0), pr.P)
				l0, l1 := systems.HaloLz(pr.Y0, pr.P), systems.HaloLz(res.Row(0), pr.P)
				drift[k] = math.Max(math.Abs(e1-e0)/math.Abs(e0), math.Abs(l1-l0)/math.Abs(l0))
				t.Logf("rtol %g: relative drift E %.3g, Lz %.3g", rtol, math.Abs(e1-e0)/math.Abs(e0), math.Abs(l1-l0)/math.Abs(l0))
			}
			if drift[0] > 100*1e-8 || drift[1] > 100*1e-10 {
				t.Errorf("drift %.3g at rtol 1e-8 (want ≤ 1e-6), %.3g at 1e-10 (want ≤ 1e-8)", drift[0], drift[1])
			}
			if drift[1] >= drift[0] {
				t.Errorf("drift did not fall with the tolerance: %.3g → %.3g", drift[0], drift[1])
			}
		})
	}
}

// y' = A·y with a closed-form solution: the final state and every save
// time agree with exp((t−t0)A)·y0 to a small multiple of rtol (global
// error of a stable linear system stays within ~10× the tolerance), in
// both directions of time.
func TestLinearForwardBackwardAndSaves(t *testing.T) {
	ls := systems.LinearDefault()
	pr := ls.Problem
	for _, tb := range method.All() {
		for _, span := range [][2]float64{{0, 2}, {2, -1}} {
			t0, t1 := span[0], span[1]
			save := linspace(t0, t1, 9)
			res := mustSolve(t, pr, &gradsolve.Ensemble{N: 1, T0: []float64{t0}, T1: []float64{t1}, Save: save},
				&gradsolve.Options{Method: tb, RTol: 1e-9, ATol: 1e-12})
			want := make([]float64, pr.Dim)
			ls.Exact(t0, pr.Y0, t1, want)
			if e := relErr(res.Row(0), want); e > 1e-7 {
				t.Errorf("%s [%g, %g]: final relative error %.3g > 1e-7", tb.Name, t0, t1, e)
			}
			for k, s := range save {
				ls.Exact(t0, pr.Y0, s, want)
				if e := relErr(res.SavedRow(0, k), want); e > 1e-7 {
					t.Errorf("%s [%g, %g]: save %d at t = %g: relative error %.3g > 1e-7", tb.Name, t0, t1, k, s, e)
				}
			}
			if res.T[0] != t1 {
				t.Errorf("%s: final time %.17g, want exactly %g", tb.Name, res.T[0], t1)
			}
		}
	}
}

// Save times never alter the accepted mesh: with and without them the
// step counts and the final state are bitwise equal; a save at t1 is the
// final state bitwise, and a save at t0 is y0 bitwise.
func TestSavesDoNotAlterMesh(t *testing.T) {
	pr, ens := lorenzEnsemble(50)
	for _, tb := range method.All() {
		o := &gradsolve.Options{Method: tb, RTol: 1e-7, ATol: 1e-10}
		plain := mustSolve(t, pr, ens, o)
		withSave := *ens
		withSave.Save = []float64{0, 0.1, 0.25, 0.25, 0.5, 0.999, 1}
		saved := mustSolve(t, pr, &withSave, o)
		for i := range ens.N {
			if plain.Stats[i].Accepted != saved.Stats[i].Accepted || plain.Stats[i].Rejected != saved.Stats[i].Rejected {
				t.Fatalf("%s traj %d: steps %+v without saves, %+v with", tb.Name, i, plain.Stats[i], saved.Stats[i])
			}
			if !testutil.IdenticalBits(plain.Row(i), saved.Row(i)) {
				t.Fatalf("%s traj %d: final state changed by save times", tb.Name, i)
			}
			if !testutil.IdenticalBits(saved.SavedRow(i, 6), saved.Row(i)) {
				t.Errorf("%s traj %d: save at t1 differs from the final state", tb.Name, i)
			}
			if !testutil.IdenticalBits(saved.SavedRow(i, 0), []float64{1, 0, 0}) {
				t.Errorf("%s traj %d: save at t0 = %v, want y0", tb.Name, i, saved.SavedRow(i, 0))
			}
			if !testutil.IdenticalBits(saved.SavedRow(i, 2), saved.SavedRow(i, 3)) {
				t.Errorf("%s traj %d: duplicate save times differ", tb.Name, i)
			}
		}
	}
}

// Results are bitwise identical for any worker count and chunk size.
func TestWorkerCountInvariance(t *testing.T) {
	pr, ens := lorenzEnsemble(301)
	ens.Save = []float64{0.3, 0.7}
	base := mustSolve(t, pr, ens, &gradsolve.Options{Workers: 1})
	for _, w := range []int{2, 3, 8} {
		for _, chunk := range []int{0, 1, 7} {
			r := mustSolve(t, pr, ens, &gradsolve.Options{Workers: w, Chunk: chunk})
			if !testutil.IdenticalBits(base.Y, r.Y) || !testutil.IdenticalBits(base.Saved, r.Saved) {
				t.Fatalf("workers %d chunk %d: results differ from one worker", w, chunk)
			}
			for i := range base.Stats {
				if base.Stats[i] != r.Stats[i] || base.Status[i] != r.Status[i] {
					t.Fatalf("workers %d chunk %d: stats of trajectory %d differ", w, chunk, i)
				}
			}
		}
	}
}

// Per-trajectory spans: stars released at different times. Each
// trajectory must equal the same trajectory solved alone.
func TestPerTrajectorySpans(t *testing.T) {
	pr := systems.Halo()
	n := 5
	t0 := []float64{0, 1, 2, 3, 4}
	t1 := []float64{10, 10, -5, 12, 4.5}
	res := mustSolve(t, pr, &gradsolve.Ensemble{N: n, T0: t0, T1: t1}, nil)
	for i := range n {
		one := mustSolve(t, pr, &gradsolve.Ensemble{N: 1, T0: t0[i : i+1], T1: t1[i : i+1]}, nil)
		if !testutil.IdenticalBits(one.Row(0), res.Row(i)) || res.T[i] != t1[i] {
			t.Errorf("trajectory %d: ensemble result differs from a lone solve", i)
		}
	}
}

// blowup: y' = p·y², y(0) = 1 has the solution 1/(1 − p·t), which blows
// up at t = 1/p. Trajectories with p > 1/2 cannot reach t1 = 2; for
// p < 0 the right-hand side returns NaN (a model undefined there).
var blowup = &gradsolve.Problem{Name: "blowup", Dim: 1, NumParams: 1,
	F: func(t float64, y, p, dy []float64) {
		if p[0] < 0 {
			dy[0] = math.NaN()
			return
		}
		dy[0] = p[0] * y[0] * y[0]
	}}

func TestFailedTrajectoriesKeepTheirOwnStatus(t *testing.T) {
	p := []float64{0.1, 0.25, 1, 0.4, -1, 0.3}
	res, err := gradsolve.Solve(context.Background(), blowup,
		&gradsolve.Ensemble{N: len(p), Y0: []float64{1}, P: p, T0: []float64{0}, T1: []float64{2}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, pi := range p {
		switch {
		case pi < 0:
			if res.Status[i] != gradsolve.NonFinite {
				t.Errorf("p = %g: status %v, want NonFinite", pi, res.Status[i])
			}
		case pi > 0.5:
			if res.Status[i] == gradsolve.Success {
				t.Errorf("p = %g: status Success past the blow-up at t = %g", pi, 1/pi)
			}
			// The numerical solution's own pole sits within a global error
			// (≈ 100·rtol relative) of the true one at 1/p.
			if res.T[i] > (1/pi)*(1+100*gradsolve.DefaultRTol) {
				t.Errorf("p = %g: reached t = %g beyond the blow-up at %g", pi, res.T[i], 1/pi)
			}
		default:
			if res.Status[i] != gradsolve.Success {
				t.Errorf("p = %g: status %v, want Success", pi, res.Status[i])
			}
			if want := 1 / (1 - 2*pi); math.Abs(res.Y[i]-want) > 1e-5*want {
				t.Errorf("p = %g: y(2) = %.12g, want %.12g", pi, res.Y[i], want)
			}
		}
	}
	err = res.Errs()
	if err == nil || !strings.Contains(err.Error(), "2 of 6 trajectories failed") || !strings.Contains(err.Error(), "trajectory 2:") {
		t.Errorf("Errs() = %v: want a count and the failing trajectory named", err)
	}
	var te *gradsolve.TrajectoryError
	if !errors.As(res.Err(4), &te) || te.Index != 4 || te.Status != gradsolve.NonFinite {
		t.Errorf("Err(4) = %v", res.Err(4))
	}
}

func TestStepBudget(t *testing.T) {
	pr, ens := lorenzEnsemble(4)
	res, err := gradsolve.Solve(context.Background(), pr, ens, &gradsolve.Options{MaxSteps: 5})
	if err != nil {
		t.Fatal(err)
	}
	for i := range ens.N {
		if res.Status[i] != gradsolve.MaxStepsReached || res.Stats[i].Attempts() != 5 {
			t.Errorf("trajectory %d: status %v after %d attempts, want MaxStepsReached after 5", i, res.Status[i], res.Stats[i].Attempts())
		}
		if e := res.Err(i); e == nil || !strings.Contains(e.Error(), "step budget") {
			t.Errorf("trajectory %d: error %v should name the step budget", i, e)
		}
		if math.IsNaN(res.Y[i*3]) || res.T[i] <= 0 || res.T[i] >= 1 {
			t.Errorf("trajectory %d: last accepted state %v at t = %g", i, res.Row(i), res.T[i])
		}
	}
}

// A stiff problem under an explicit method at a tight tolerance must
// end with a status, never hang: Robertson's kinetics needs ~1e5+
// explicit steps on [0, 1e5].
func TestStiffProblemEndsWithStatus(t *testing.T) {
	rob := &gradsolve.Problem{Name: "robertson", Dim: 3, NumParams: 0,
		F: func(t float64, y, p, dy []float64) {
			dy[0] = -0.04*y[0] + 1e4*y[1]*y[2]
			dy[2] = 3e7 * y[1] * y[1]
			dy[1] = -dy[0] - dy[2]
		}}
	res, err := gradsolve.Solve(context.Background(), rob,
		&gradsolve.Ensemble{N: 2, Y0: []float64{1, 0, 0}, T0: []float64{0}, T1: []float64{1e5}},
		&gradsolve.Options{MaxSteps: 20000})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if res.Status[i] != gradsolve.MaxStepsReached {
			t.Errorf("status %v, want MaxStepsReached", res.Status[i])
		}
	}
}

func TestBadInput(t *testing.T) {
	lor := systems.Lorenz()
	nanY0 := []float64{1, math.NaN(), 0}
	cases := []struct {
		name string
		prob *gradsolve.Problem
		ens  *gradsolve.Ensemble
		opts *gradsolve.Options
		want string
	}{
		{"n=0", lor, &gradsolve.Ensemble{N: 0}, nil, "N = 0"},
		{"negative rtol", lor, &gradsolve.Ensemble{N: 1}, &gradsolve.Options{RTol: -1e-3, ATol: 1e-9}, "rtol = -0.001"},
		{"zero atol", lor, &gradsolve.Ensemble{N: 1}, &gradsolve.Options{RTol: 1e-6}, "atol = 0"},
		{"zero rtol", lor, &gradsolve.Ensemble{N: 1}, &gradsolve.Options{ATol: 1e-6}, "rtol = 0"},
		{"tiny rtol", lor, &gradsolve.Ensemble{N: 1}, &gradsolve.Options{RTol: 1e-17, ATol: 1e-6}, "rtol = 1e-17"},
		{"NaN rtol", lor, &gradsolve.Ensemble{N: 1}, &gradsolve.Options{RTol: math.NaN(), ATol: 1e-6}, "rtol = NaN"},
		{"bad rtol vec", lor, &gradsolve.Ensemble{N: 1}, &gradsolve.Options{RTolVec: []float64{1e-6, 0, 1e-6}, ATol: 1e-9, RTol: 1e-6}, "rtol[1] = 0"},
		{"short atol vec", lor, &gradsolve.Ensemble{N: 1}, &gradsolve.Options{ATolVec: []float64{1e-6}}, "length 1"},
		{"t1 = t0", lor, &gradsolve.Ensemble{N: 2, T0: []float64{0, 1}, T1: []float64{1, 1}}, nil, "trajectory 1: t0 = t1 = 1"},
		{"span overflows", lor, &gradsolve.Ensemble{N: 2, T0: []float64{0, -1e308}, T1: []float64{1e308}}, nil, "trajectory 1: t0 = -1e+308, t1 = 1e+308: the span's length t1 − t0 overflows"},
		{"Y0 shape", lor, &gradsolve.Ensemble{N: 2, Y0: []float64{1, 2, 3, 4}}, nil, "Y0 has length 4"},
		{"P shape", lor, &gradsolve.Ensemble{N: 2, P: []float64{1, 2}}, nil, "P has length 2"},
		{"T1 shape", lor, &gradsolve.Ensemble{N: 3, T0: []float64{0}, T1: []float64{1, 2}}, nil, "T1 has length 2"},
		{"NaN y0", lor, &gradsolve.Ensemble{N: 1, Y0: nanY0}, nil, "Y0[1] = NaN"},
		{"NaN y0 per traj", lor, &gradsolve.Ensemble{N: 2, Y0: append([]float64{0, 0, 0}, nanY0...)}, nil, "trajectory 1, component 1"},
		{"Inf param", lor, &gradsolve.Ensemble{N: 1, P: []float64{10, math.Inf(1), 1}}, nil, "P[1] = +Inf"},
		{"save outside", lor, &gradsolve.Ensemble{N: 1, Save: []float64{0.5, 2}}, nil, "outside its span"},
		{"save unordered", lor, &gradsolve.Ensemble{N: 1, Save: []float64{0.5, 0.2}}, nil, "not ordered"},
		{"save per traj shape", lor, &gradsolve.Ensemble{N: 2, Save: []float64{0.5, 0.2, 0.1}, SavePerTrajectory: true}, nil, "N·K"},
		{"negative hmax", lor, &gradsolve.Ensemble{N: 1}, &gradsolve.Options{HMax: -1}, "HMax = -1"},
		{"float32 rtol below its roundoff", lor, &gradsolve.Ensemble{N: 1}, &gradsolve.Options{Precision: gradsolve.Float32, RTol: 1e-8, ATol: 1e-10},
			"rtol = 1e-08: must be finite and > 0 and ≥ 1.19e-06 (set both rtol and atol, or neither for the defaults) (Options.Precision is Float32)"},
		{"negative h0", lor, &gradsolve.Ensemble{N: 1}, &gradsolve.Options{H0: -1}, "H0 = -1"},
		{"negative maxsteps", lor, &gradsolve.Ensemble{N: 1}, &gradsolve.Options{MaxSteps: -1}, "MaxSteps = -1"},
		{"negative workers", lor, &gradsolve.Ensemble{N: 1}, &gradsolve.Options{Workers: -2}, "Workers = -2"},
		{"nil problem", nil, &gradsolve.Ensemble{N: 1}, nil, "nil problem"},
		{"nil ensemble", lor, nil, nil, "nil ensemble"},
		{"nil F", &gradsolve.Problem{Name: "x", Dim: 1}, &gradsolve.Ensemble{N: 1}, nil, "F is nil"},
		{"zero dim", &gradsolve.Problem{Name: "x", F: lor.F}, &gradsolve.Ensemble{N: 1}, nil, "Dim = 0"},
		{"no y0 default", &gradsolve.Problem{Name: "x", Dim: 1, F: blowup.F}, &gradsolve.Ensemble{N: 1}, nil, "no initial state"},
		{"no span default", &gradsolve.Problem{Name: "x", Dim: 1, F: lor.F}, &gradsolve.Ensemble{N: 1, Y0: []float64{1}}, nil, "no time span"},
		{"bad controller", lor, &gradsolve.Ensemble{N: 1}, &gradsolve.Options{Controller: &controlBad}, "controller"},
		{"bad tableau", lor, &gradsolve.Ensemble{N: 1}, &gradsolve.Options{Method: &method.Tableau{Name: "broken"}}, "broken"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := gradsolve.Solve(context.Background(), c.prob, c.ens, c.opts)
			if err == nil {
				t.Fatalf("no error (result %v)", res != nil)
			}
			if !errors.Is(err, gradsolve.ErrInput) {
				t.Errorf("error %q does not wrap ErrInput", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not mention %q", err, c.want)
			}
		})
	}
}

func TestCancellation(t *testing.T) {
	pr, ens := lorenzEnsemble(2000)
	ctx, cancel := context.WithCancel(context.Background())
	var calls atomic.Int64
	slow := *pr
	slow.Programs = nil // engines would prefer the programs' F
	slow.F = func(t float64, y, p, dy []float64) {
		if calls.Add(1) == 5000 {
			cancel()
		}
		pr.F(t, y, p, dy)
	}
	res, err := gradsolve.Solve(ctx, &slow, ens, &gradsolve.Options{Workers: 2})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	var ok, stopped int
	for _, s := range res.Status {
		switch s {
		case gradsolve.Success:
			ok++
		case gradsolve.NotRun, gradsolve.Cancelled:
			stopped++
		default:
			t.Fatalf("unexpected status %v", s)
		}
	}
	if ok == 0 || stopped == 0 || ok+stopped != ens.N {
		t.Errorf("%d succeeded, %d stopped of %d", ok, stopped, ens.N)
	}
}

func TestProgress(t *testing.T) {
	pr, ens := lorenzEnsemble(500)
	var last, calls int
	_ = mustSolve(t, pr, ens, &gradsolve.Options{Progress: func(done, total int) {
		if total != 500 || done < last {
			t.Errorf("progress (%d, %d) after %d", done, total, last)
		}
		last = done
		calls++
	}})
	if calls == 0 || last != 500 {
		t.Errorf("progress: %d calls, last done = %d, want a final call with 500", calls, last)
	}
}

// A right-hand side that panics (a programming error in user code) turns
// into an error naming the trajectory, not a crash.
func TestPanickingRHS(t *testing.T) {
	pr := &gradsolve.Problem{Name: "bad", Dim: 2, F: func(t float64, y, p, dy []float64) { dy[2] = 1 }}
	_, err := gradsolve.Solve(context.Background(), pr, &gradsolve.Ensemble{N: 3, Y0: []float64{1, 1}, T0: []float64{0}, T1: []float64{1}}, nil)
	if err == nil || !strings.Contains(err.Error(), "panicked") {
		t.Fatalf("error %v, want a panic report", err)
	}
}

// Function evaluations follow from the method's structure: FSAL methods
// (Tsit5, DP5: 7 stages) spend s−1 = 6 per attempt, plus 1 for f(t0, y0)
// and 1 for the initial-step probe.
func TestFEvalAccounting(t *testing.T) {
	pr, ens := lorenzEnsemble(10)
	for _, tb := range []*method.Tableau{method.Tsit5, method.DP5} {
		res := mustSolve(t, pr, ens, &gradsolve.Options{Method: tb})
		for i, s := range res.Stats {
			if want := 2 + 6*s.Attempts(); s.FEvals != want {
				t.Errorf("%s traj %d: %d evaluations for %d attempts, want %d", tb.Name, i, s.FEvals, s.Attempts(), want)
			}
		}
	}
}

// controlBad has QMin > 1, which would grow rejected steps.
var controlBad = control.PI{Beta1: 0.14, Beta2: 0.08, Safety: 0.9, QMin: 2, QMax: 10, QOldInit: 1e-4}

// Per-component tolerances equal to the scalars give bitwise the same
// solve; tightening one component's atol changes the mesh.
func TestPerComponentTolerances(t *testing.T) {
	pr, ens := lorenzEnsemble(20)
	a := mustSolve(t, pr, ens, &gradsolve.Options{RTol: 1e-7, ATol: 1e-9})
	b := mustSolve(t, pr, ens, &gradsolve.Options{RTolVec: []float64{1e-7, 1e-7, 1e-7}, ATolVec: []float64{1e-9, 1e-9, 1e-9}})
	if !testutil.IdenticalBits(a.Y, b.Y) {
		t.Error("per-component tolerances equal to the scalars changed the result")
	}
	c := mustSolve(t, pr, ens, &gradsolve.Options{RTolVec: []float64{1e-7, 1e-10, 1e-7}, ATolVec: []float64{1e-9, 1e-13, 1e-9}})
	if c.Total().Accepted <= a.Total().Accepted {
		t.Errorf("a tighter tolerance on y took %d steps, no more than %d", c.Total().Accepted, a.Total().Accepted)
	}
}

// HMax bounds every step: the span of 1 at HMax = 1/200 needs at least
// 200 accepted steps. A given H0 replaces the automatic first step (one
// evaluation fewer).
func TestHMaxAndH0(t *testing.T) {
	pr, ens := lorenzEnsemble(5)
	res := mustSolve(t, pr, ens, &gradsolve.Options{HMax: 1.0 / 200})
	for i, s := range res.Stats {
		if s.Accepted < 200 {
			t.Errorf("trajectory %d: %d accepted steps with HMax = 1/200", i, s.Accepted)
		}
	}
	auto := mustSolve(t, pr, ens, nil)
	given := mustSolve(t, pr, ens, &gradsolve.Options{H0: 1e-4})
	for i := range ens.N {
		if want := 1 + 6*given.Stats[i].Attempts(); given.Stats[i].FEvals != want {
			t.Errorf("trajectory %d: %d evaluations with H0 given, want %d", i, given.Stats[i].FEvals, want)
		}
		if e := relErr(given.Row(i), auto.Row(i)); e > 1e-4 {
			t.Errorf("trajectory %d: H0 = 1e-4 moved the result by %.3g", i, e)
		}
	}
	if res.Options.HMax != 1.0/200 || auto.Options.MaxSteps != gradsolve.DefaultMaxSteps || auto.Options.Method != method.Tsit5 {
		t.Errorf("resolved options not reported: %+v", auto.Options)
	}
}

// Solve allocates a fixed number of times per call (result arrays,
// per-worker work arrays), never per trajectory or per step: 1000
// trajectories cost no more allocations than 10. Checked for the
// explicit engine, with sensitivities, for a recording, and for the
// Rosenbrock engine.
func TestAllocationsDoNotScaleWithN(t *testing.T) {
	lor := exampleProblem(t, "lorenz")
	rob := exampleProblem(t, "robertson")
	cases := []struct {
		name string
		pr   *gradsolve.Problem
		o    *gradsolve.Options
	}{
		{"erk", lor, &gradsolve.Options{Workers: 1}},
		{"sens", lor, &gradsolve.Options{Workers: 1, Sens: &gradsolve.Sensitivity{Wrt: []gradsolve.Wrt{gradsolve.Param(0)}}}},
		{"ros", rob, &gradsolve.Options{Workers: 1, RTol: 1e-6, ATol: 1e-10}},
	}
	for _, c := range cases {
		allocs := func(n int) float64 {
			ens := &gradsolve.Ensemble{N: n, T0: []float64{0}, T1: []float64{1}}
			return testing.AllocsPerRun(3, func() {
				if _, err := gradsolve.Solve(context.Background(), c.pr, ens, c.o); err != nil {
					t.Fatal(err)
				}
			})
		}
		small, large := allocs(10), allocs(1000)
		if large-small > 20 {
			t.Errorf("%s: %v allocations for 10 trajectories, %v for 1000", c.name, small, large)
		}
	}
}
