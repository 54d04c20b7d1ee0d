// Command fitstudy runs the calibration studies of the library paper's
// §4.8 with package fit: the flattening q of a logarithmic halo, the
// Lorenz ρ from noisy final states, and the Robertson rates k1 and k3
// through the stiff replay, each at B concurrent fits, with Adam on the
// reverse replay and with L-BFGS (reverse replay) and
// Levenberg–Marquardt (forward sensitivities).
//
//	go run ./bench/fitstudy [-study halo|lorenz|robertson|all] [-B 1,8,64,256]
//	    [-updates 400] [-optimizers adam,lbfgs,lm] [-out DIR]
//
// Every fit owns one group of M trajectories (fit.Grouped) with a truth
// of its own, spread over a range around the problem file's defaults,
// and noisy synthetic data of its own: the truth's adaptive solve plus
// seeded Gaussian noise of the study's σ. Every fit starts a fixed
// relative distance from its truth. With fit.Noise set to the same σ,
// the Fisher standard error of every estimate is computed and the fit
// passes when |estimate − truth| ≤ 3σ.
//
// For each (study, optimiser, B) it prints one row of a Markdown table:
// wall time, time per update and per fit, records, evaluations, the
// drift checks (largest final-state shift and gradient angle of the
// replay against a fresh record), the recovery figures and, for Adam,
// the ratio of one replay update to a forward solve of the same
// ensemble: the medians of the updates and of forward solves timed
// before the fit and after every tenth evaluation (outside the fit's
// wall time), so that both sample the same load. See docs/fitting.md.
package main

import (
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/fit"
	"github.com/gradsolve/gradsolve/internal/checkout"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/router"
	"github.com/gradsolve/gradsolve/sym/parse"
	"github.com/gradsolve/gradsolve/sym/tape"
)

// study is one calibration problem.
type study struct {
	name string
	file string // problem file under examples/
	m    int    // trajectories per fit
	// fitted parameters (indices into p) and their transforms
	params []fit.Param
	// truth returns fit g's true values of the fitted parameters (of B).
	truth func(g, B int) []float64
	// y0 returns trajectory j's initial state within its group, nil
	// for the problem's default.
	y0 func(j int) []float64
	t1 float64
	// save times (nil: final states only); weights per component
	save    []float64
	weights []float64
	sigma   float64 // noise standard deviation (per unit weight)
	startF  float64 // start = truth·startF
	opts    gradsolve.Options
	adam    fit.Adam
}

func studies() []*study {
	return []*study{
		{
			// A star's orbit in the flattened logarithmic halo of
			// examples/halo.ode (vc = 1, rc = 0.2, x0 = (1, 0, 0.2),
			// v0 = (0.1, 0.6, 0.15)); q is inferred from the phase-space
			// positions at t = 1, 2, …, 10.
			name: "halo", file: "halo.ode", m: 1,
			params: []fit.Param{{Wrt: gradsolve.Param(1), Transform: fit.Log()}},
			truth: func(g, B int) []float64 {
				return []float64{0.7 + 0.1*spread(g, B)} // q ∈ [0.65, 0.75]
			},
			t1:     10,
			save:   linspace(1, 9, 9),
			sigma:  1e-3,
			startF: 1.05,
			opts:   gradsolve.Options{Method: method.Tsit5, RTol: 1e-8, ATol: 1e-10},
			adam:   fit.Adam{LearningRate: 5e-3, Schedule: fit.ExponentialDecay(0.99)},
		},
		{
			// Lorenz (examples/lorenz.ode, σ = 10, β = 8/3) on t ∈ [0, 1]:
			// ρ from the noisy final states of M = 4 trajectories per
			// fit, x0 = 1 + 0.1·j.
			name: "lorenz", file: "lorenz.ode", m: 4,
			params: []fit.Param{{Wrt: gradsolve.Param(0), Transform: fit.Log()}},
			truth: func(g, B int) []float64 {
				return []float64{28 + 8*spread(g, B)} // ρ ∈ [24, 32]
			},
			y0:     func(j int) []float64 { return []float64{1 + 0.1*float64(j), 0, 0} },
			t1:     1,
			sigma:  1e-2,
			startF: 1.1,
			opts:   gradsolve.Options{Method: method.Tsit5, RTol: 1e-8, ATol: 1e-10},
			adam:   fit.Adam{LearningRate: 1e-2, Schedule: fit.ExponentialDecay(0.99)},
		},
		{
			// Robertson (examples/robertson.ode, k2 = 3e7) on
			// t ∈ [0, 1e4] with Rodas5P: k1 and k3 from the states at
			// ten log-spaced times 1e-1 … 1e4; y2 (of order 1e-5) is
			// weighted 1e8, i.e. its noise is σ/1e4.
			name: "robertson", file: "robertson.ode", m: 1,
			params: []fit.Param{{Wrt: gradsolve.Param(0), Transform: fit.Log()}, {Wrt: gradsolve.Param(2), Transform: fit.Log()}},
			truth: func(g, B int) []float64 {
				s := spread(g, B)
				return []float64{0.04 * math.Pow(10, 0.5*s), 1e4 * math.Pow(10, -0.5*s)}
			},
			t1:      1e4,
			save:    logspace(-1, 4, 10)[:9],
			weights: []float64{1, 1e8, 1},
			sigma:   1e-3,
			startF:  1.5,
			opts:    gradsolve.Options{Method: method.Rodas5P, RTol: 1e-8, ATol: 1e-12},
			adam:    fit.Adam{LearningRate: 2e-2, Schedule: fit.ExponentialDecay(0.99)},
		},
	}
}

// spread places fit g of B in [−0.5, 0.5] (0 for B = 1).
func spread(g, B int) float64 {
	if B == 1 {
		return 0
	}
	return float64(g)/float64(B-1) - 0.5
}

func linspace(a, b float64, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = a + (b-a)*float64(i)/float64(n-1)
	}
	return v
}

func logspace(a, b float64, n int) []float64 {
	v := linspace(a, b, n)
	for i := range v {
		v[i] = math.Pow(10, v[i])
	}
	return v
}

// row is one line of the table.
type row struct {
	Study, Optimizer, Mode string
	B, N                   int
	Wall                   time.Duration
	Updates                int // max accepted updates over fits
	PerUpdate, PerFit      time.Duration
	Records, Evaluations   int
	DriftChecks            int
	StateDrift, Angle      float64 // max over checks
	DescentAngle           float64 // max angle over the checks made while descending
	DescentChecks          int     // checks at which the gradient kept ≥ 1% of its initial norm
	Pass                   int     // fits within 3σ
	Worst                  float64 // worst |est − truth|/σ
	Converged              int
	Solve                  time.Duration // one forward solve of the ensemble (median of those timed before and during the fit)
	Replay                 time.Duration // median of one replay update (no record, no drift check)
	Ratio                  float64       // Replay / Solve (Adam)
}

func main() {
	studyF := flag.String("study", "all", "halo, lorenz, robertson or all")
	bF := flag.String("B", "1,8,64,256", "numbers of concurrent fits, comma-separated")
	updF := flag.Int("updates", 400, "Adam updates")
	optF := flag.String("optimizers", "adam,lbfgs,lm", "optimisers: adam, lbfgs, lm")
	outF := flag.String("out", "", "directory for table.md and results.csv (none: stdout only)")
	driftF := flag.Int("drift", 20, "Adam: a drift check every so many replays (L-BFGS: every drift/20)")
	seedF := flag.Uint64("seed", 1, "noise seed")
	profF := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Parse()
	if *profF != "" {
		f, err := os.Create(*profF)
		if err != nil {
			fatalf("-cpuprofile: %v", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fatalf("-cpuprofile: %v", err)
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}

	var Bs []int
	for _, s := range strings.Split(*bF, ",") {
		b, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || b < 1 {
			fatalf("bad -B entry %q", s)
		}
		Bs = append(Bs, b)
	}
	opts := strings.Split(*optF, ",")
	for _, o := range opts {
		if o != "adam" && o != "lbfgs" && o != "lm" {
			fatalf("unknown optimiser %q", o)
		}
	}
	root, err := checkout.Root()
	if err != nil {
		fatalf("%v", err)
	}
	fmt.Fprintf(os.Stderr, "fitstudy: GOMAXPROCS %d, %s/%s\n", runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH)
	var rows []row
	for _, st := range studies() {
		if *studyF != "all" && *studyF != st.name {
			continue
		}
		m, err := parse.ParseFile(filepath.Join(root, "examples", st.file))
		if err != nil {
			fatalf("%v", err)
		}
		set, err := tape.Build(m)
		if err != nil {
			fatalf("%v", err)
		}
		pr := set.Problem()
		for _, B := range Bs {
			c, err := st.setup(pr, B, *seedF)
			if err != nil {
				fatalf("%s B=%d: %v", st.name, B, err)
			}
			for _, o := range opts {
				r, err := c.run(o, *updF, *driftF)
				if err != nil {
					fatalf("%s %s B=%d: %v", st.name, o, B, err)
				}
				fmt.Fprintf(os.Stderr, "%s %s B=%d: %v, %d/%d within 3σ\n", st.name, o, B, r.Wall.Round(time.Millisecond), r.Pass, B)
				rows = append(rows, r)
			}
		}
	}
	md := table(rows)
	fmt.Print(md)
	if *outF != "" {
		if err := os.MkdirAll(*outF, 0o755); err != nil {
			fatalf("%v", err)
		}
		if err := os.WriteFile(filepath.Join(*outF, "table.md"), []byte(md), 0o644); err != nil {
			fatalf("%v", err)
		}
		f, err := os.Create(filepath.Join(*outF, "results.csv"))
		if err != nil {
			fatalf("%v", err)
		}
		if err := writeCSV(f, rows); err != nil {
			fatalf("%v", err)
		}
		if err := f.Close(); err != nil {
			fatalf("%v", err)
		}
	}
}

func fatalf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "fitstudy: "+format+"\n", a...)
	os.Exit(1)
}

// setupCase is one study at one B: the ensemble, the truths, the data.
type setupCase struct {
	st    *study
	pr    *gradsolve.Problem
	B     int
	ens   gradsolve.Ensemble // template at the starts
	group []int
	truth [][]float64
	start []float64 // B·len(params)
	data  *gradsolve.FitData
}

func (st *study) setup(pr *gradsolve.Problem, B int, seed uint64) (*setupCase, error) {
	N, D, np := B*st.m, pr.Dim, pr.NumParams
	c := &setupCase{st: st, pr: pr, B: B, group: make([]int, N)}
	pTrue := make([]float64, 0, N*np)
	pStart := make([]float64, 0, N*np)
	var y0 []float64
	for g := range B {
		tv := st.truth(g, B)
		c.truth = append(c.truth, tv)
		sv := make([]float64, len(tv))
		for k := range tv {
			sv[k] = tv[k] * st.startF
		}
		c.start = append(c.start, sv...)
		for j := range st.m {
			i := g*st.m + j
			c.group[i] = g
			pt := slices.Clone(pr.P)
			ps := slices.Clone(pr.P)
			for k, p := range st.params {
				pt[p.Wrt.Index] = tv[k]
				ps[p.Wrt.Index] = sv[k]
			}
			pTrue, pStart = append(pTrue, pt...), append(pStart, ps...)
			if st.y0 != nil {
				y0 = append(y0, st.y0(j)...)
			}
		}
	}
	ens := gradsolve.Ensemble{N: N, Y0: y0, P: pTrue, T0: []float64{0}, T1: []float64{st.t1}, Save: st.save}
	o := st.opts
	res, err := gradsolve.Solve(context.Background(), pr, &ens, &o)
	if err != nil {
		return nil, err
	}
	if err := res.Errs(); err != nil {
		return nil, fmt.Errorf("truth solve: %v", err)
	}
	rng := rand.New(rand.NewPCG(seed, uint64(B)*1000+uint64(len(st.name))))
	w := func(d int) float64 {
		if st.weights == nil {
			return 1
		}
		return st.weights[d]
	}
	noisy := func(v []float64) []float64 {
		out := make([]float64, len(v))
		for k := range v {
			out[k] = v[k] + st.sigma/math.Sqrt(w(k%D))*rng.NormFloat64()
		}
		return out
	}
	c.data = &gradsolve.FitData{}
	if st.save != nil {
		c.data.Saved = noisy(res.Saved)
		c.data.SavedWeights = st.weights
	} else {
		c.data.Final = noisy(res.Y)
		c.data.FinalWeights = st.weights
	}
	ens.P = pStart
	c.ens = ens
	return c, nil
}

func (c *setupCase) spec(opt string, updates, drift int) *fit.Spec {
	sp := &fit.Spec{
		Problem: c.pr, Ensemble: c.ens, Options: c.st.opts, Data: c.data,
		Params: c.st.params, Owner: fit.Grouped, Group: c.group, Start: c.start,
		Noise: &fit.Noise{Sigma: c.st.sigma},
	}
	switch opt {
	case "adam":
		a := c.st.adam
		sp.Optimizer, sp.Mode, sp.MaxIter, sp.DriftEvery = &a, router.Reverse, updates, drift
	case "lbfgs":
		sp.Optimizer, sp.Mode, sp.DriftEvery = &fit.LBFGS{}, router.Reverse, max(1, drift/20)
	case "lm":
		sp.Optimizer, sp.Mode = &fit.LevenbergMarquardt{}, router.Forward
	}
	return sp
}

// solveTimes times k forward solves of the ensemble at the starts (the
// options of the fit, no sensitivities).
func (c *setupCase) solveTimes(k int) []time.Duration {
	var ts []time.Duration
	o := c.st.opts
	ens := c.ens
	for range k {
		t0 := time.Now()
		if _, err := gradsolve.Solve(context.Background(), c.pr, &ens, &o); err != nil {
			fatalf("%v", err)
		}
		ts = append(ts, time.Since(t0))
	}
	return ts
}

func median(ts []time.Duration) time.Duration {
	if len(ts) == 0 {
		return 0
	}
	s := slices.Clone(ts)
	slices.Sort(s)
	return s[len(s)/2]
}

func (c *setupCase) run(opt string, updates, drift int) (row, error) {
	r := row{Study: c.st.name, Optimizer: opt, B: c.B, N: c.ens.N}
	var solves []time.Duration
	if opt == "adam" {
		solves = append(solves, c.solveTimes(3)...)
	}
	sp := c.spec(opt, updates, drift)
	// Per-evaluation durations and whether each recorded. With Adam a
	// forward solve of the ensemble is timed after every solveEvery-th
	// evaluation, inside the callback, so that the solves and the
	// updates they are compared with sample the same stretch of the
	// machine's load; the callback's own time is taken out of the next
	// evaluation's duration.
	const solveEvery = 10
	var durs []time.Duration
	var recorded []bool
	var last, spent, spentAll time.Duration
	lastRec := 0
	sp.Progress = func(p fit.Progress) {
		durs = append(durs, p.Elapsed-last-spent)
		recorded = append(recorded, p.Records > lastRec)
		last, lastRec, spent = p.Elapsed, p.Records, 0
		if opt == "adam" && p.Evaluation%solveEvery == 0 {
			t0 := time.Now()
			solves = append(solves, c.solveTimes(1)...)
			spent = time.Since(t0)
			spentAll += spent
		}
	}
	rep, err := fit.Run(context.Background(), sp)
	if err != nil {
		return r, err
	}
	r.Mode = rep.Mode.String()
	r.Wall, r.Records, r.Evaluations, r.DriftChecks = rep.Elapsed-spentAll, rep.Records, rep.Evaluations, len(rep.Drift)
	checked := map[int]bool{}
	g0 := -1.0
	for _, d := range rep.Drift {
		checked[d.Evaluation] = true
		if g0 < 0 {
			g0 = c.gradNorm(rep, 0)
		}
		if c.gradNorm(rep, d.Evaluation) >= 0.01*g0 {
			r.DescentChecks++
			r.DescentAngle = math.Max(r.DescentAngle, d.Angle)
		}
		r.StateDrift = math.Max(r.StateDrift, d.StateDrift)
		r.Angle = math.Max(r.Angle, d.Angle)
	}
	var replay []time.Duration
	for e, d := range durs {
		if e > 0 && !recorded[e] && !checked[e] {
			replay = append(replay, d)
		}
	}
	r.Replay = median(replay)
	r.Solve = median(solves)
	if r.Solve > 0 {
		r.Ratio = float64(r.Replay) / float64(r.Solve)
	}
	for g, gr := range rep.Groups {
		r.Updates = max(r.Updates, gr.Iterations)
		if gr.Converged {
			r.Converged++
		}
		if gr.StdErr == nil {
			r.Worst = math.Inf(1)
			continue
		}
		ok, worst := true, 0.0
		for k, est := range gr.Estimate {
			z := math.Abs(est-c.truth[g][k]) / gr.StdErr[k]
			worst = math.Max(worst, z)
			if !(z <= 3) {
				ok = false
			}
		}
		if ok {
			r.Pass++
		}
		r.Worst = math.Max(r.Worst, worst)
	}
	if r.Updates > 0 {
		r.PerUpdate = r.Wall / time.Duration(r.Updates)
	}
	r.PerFit = r.Wall / time.Duration(c.B)
	return r, nil
}

// gradNorm returns the norm of the whole ensemble's loss gradient in
// the working coordinates (every fitted quantity has a Log transform:
// ∂L/∂z = θ·∂L/∂θ), from a fresh adaptive solve, at the points the
// groups had reached by evaluation e (each group's last accepted point
// evaluated at or before e). It tells whether a drift check was made
// while the fit was still descending (the paper's criterion: the fresh
// gradient keeps at least 1% of its initial norm).
func (c *setupCase) gradNorm(rep *fit.Report, e int) float64 {
	ens := c.ens
	ens.P = slices.Clone(c.ens.P)
	np := c.pr.NumParams
	theta := make([][]float64, c.B)
	for g, gr := range rep.Groups {
		var at []float64
		for _, it := range gr.History {
			if it.Evaluation <= e {
				at = it.Params
			}
		}
		if at == nil {
			at = c.start[g*len(c.st.params) : (g+1)*len(c.st.params)]
		}
		theta[g] = at
		for _, i := range gr.Trajectories {
			for k, p := range c.st.params {
				ens.P[i*np+p.Wrt.Index] = at[k]
			}
		}
	}
	o := c.st.opts
	for _, p := range c.st.params {
		o.GradientWrt = append(o.GradientWrt, p.Wrt)
	}
	_, grad, _, err := gradsolve.LossGradient(context.Background(), c.pr, &ens, &o, gradsolve.LeastSquaresFit(*c.data))
	if err != nil {
		fatalf("gradient: %v", err)
	}
	sum := 0.0
	for g, gr := range rep.Groups {
		for k, p := range c.st.params {
			s := 0.0
			for _, i := range gr.Trajectories {
				s += grad.P[i*np+p.Wrt.Index]
			}
			s *= theta[g][k]
			sum += s * s
		}
	}
	return math.Sqrt(sum)
}

func dur(d time.Duration) string {
	switch {
	case d == 0:
		return "–"
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/1e3)
	case d < time.Second:
		return fmt.Sprintf("%.1f ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

func table(rows []row) string {
	var b strings.Builder
	b.WriteString("| study | optimiser | route | B | N | updates | wall | per update | per fit | records | evals | drift checks | max state drift | max angle (°) | angle while descending (°) | within 3σ | worst \\|Δ\\|/σ | converged | forward solve | replay update | update/solve |\n")
	b.WriteString("|---|---|---" + strings.Repeat("|--:", 18) + "|\n")
	for _, r := range rows {
		drift, angle, desc := "–", "–", "–"
		if r.DriftChecks > 0 {
			drift, angle = fmt.Sprintf("%.2g", r.StateDrift), fmt.Sprintf("%.2g", r.Angle)
			desc = fmt.Sprintf("%.2g (%d)", r.DescentAngle, r.DescentChecks)
		}
		ratio := "–"
		if r.Ratio > 0 {
			ratio = fmt.Sprintf("%.2f", r.Ratio)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %d | %s | %s | %s | %d | %d | %d | %s | %s | %s | %d/%d | %.2f | %d/%d | %s | %s | %s |\n",
			r.Study, r.Optimizer, r.Mode, r.B, r.N, r.Updates, dur(r.Wall), dur(r.PerUpdate), dur(r.PerFit),
			r.Records, r.Evaluations, r.DriftChecks, drift, angle, desc, r.Pass, r.B, r.Worst, r.Converged, r.B,
			dur(r.Solve), dur(r.Replay), ratio)
	}
	return b.String()
}

func writeCSV(w io.Writer, rows []row) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"study", "optimizer", "route", "B", "N", "updates", "wall_s", "per_update_s", "per_fit_s",
		"records", "evaluations", "drift_checks", "max_state_drift", "max_angle_deg", "descent_angle_deg", "descent_checks", "within_3sigma", "worst_z",
		"converged", "solve_s", "replay_update_s", "update_over_solve"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	for _, r := range rows {
		_ = cw.Write([]string{r.Study, r.Optimizer, r.Mode, strconv.Itoa(r.B), strconv.Itoa(r.N), strconv.Itoa(r.Updates),
			f(r.Wall.Seconds()), f(r.PerUpdate.Seconds()), f(r.PerFit.Seconds()),
			strconv.Itoa(r.Records), strconv.Itoa(r.Evaluations), strconv.Itoa(r.DriftChecks),
			f(r.StateDrift), f(r.Angle), f(r.DescentAngle), strconv.Itoa(r.DescentChecks), strconv.Itoa(r.Pass), f(r.Worst), strconv.Itoa(r.Converged),
			f(r.Solve.Seconds()), f(r.Replay.Seconds()), f(r.Ratio)})
	}
	cw.Flush()
	return cw.Error()
}
