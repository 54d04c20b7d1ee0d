package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gradsolve/gradsolve/app/halo"
	"github.com/gradsolve/gradsolve/plots"
)

const haloUsage = `usage: gradsolve halo [flags]

Stellar orbits in the flattened logarithmic halo (shared/reference/applications.md
§A): draw --n stars from --seed, integrate them for 3.7 median orbital periods
with forward sensitivities of the final state to (vc, q). With --check, compare
with a converged reference (DP8 at rtol 1e-12) and check the requirement: 99%
of orbits within 1e-4 in state and 1e-3 in sensitivity (the command fails if
it is not met). With --out DIR it writes y0.npy, y_final.npy, sens.npy
(n×6×2), stats.json and orbits.png, and with --check errors.npy (n×2: state,
sensitivity) and errors.png.

The run streams its stars in chunks (--chunk; 0: automatic, as many as keep a
chunk's arrays within 256 MiB and a quarter of the available memory): each
chunk is drawn, solved (and with --check its reference), and its rows written
before the next, so memory is set by the chunk, not by --n, besides 8 bytes a
star of periods (the end time is 3.7 times their median) and with --check the
largest 1% of the errors (the 99th percentiles are exact, over all stars). The
files are the same, byte for byte, for any chunk and worker count; errors.png
draws at most 10000 stars' errors, evenly spaced.

With --accuracy EPS a pilot (--pilot stars, evenly spaced; default 256) first
chooses the method and tolerances: the cheapest point of a half-decade grid
whose --quantile (default 0.99) of state errors, in the units of --check,
against a converged reference (DP8 at rtol 1e-13) is at most EPS. It prints
the grid and writes pilot.json. The sensitivities are not part of the pilot:
they follow the state's mesh, and --check still tests both requirements.

With --fit it also fits the shared (vc, q) to a synthetic catalogue: the
run's final states plus Gaussian noise of --sigma on every component (x, y,
z, vx, vy, vz; drawn from --seed), the initial states and t1 known. From
--start (default 10% above the truth) a first stage finds the (vc, q) that
best conserves each star's energy between its initial and catalogued state
(no solves; --direct skips it: the final positions wrap with the orbits'
phases, and only starts within about ±7% of the truth in vc converge
directly); then Levenberg–Marquardt on forward sensitivities fits the final
phase-space positions, χ² = Σ (y − catalogue)²/σ², and the Fisher
information gives the error bars. --mocks K refits K more noisy mocks of
the same stars and compares the scatter of their estimates with the mean
Fisher error bar (the ratio is 1 when the error bars are right). The run
itself, its outputs and stats.json are those of the command without --fit;
the fit adds a table and, with --out, fit.json (truth, start, estimates,
stderr, covariance, χ², iterations, σ, n, and with --mocks the scatter and
the ratios). The command fails if the fit does not converge. The fit needs
every star's orbit at once: with --fit the run is one chunk (no --chunk).

flags:
`

type haloStats struct {
	runStats
	Params          map[string]float64 `json:"params"`
	T1              float64            `json:"t1"`
	MedianPeriods   float64            `json:"median_periods"`
	StateP99        float64            `json:"state_error_p99,omitempty"`
	SensP99         float64            `json:"sensitivity_error_p99,omitempty"`
	StateReq        float64            `json:"state_requirement"`
	SensReq         float64            `json:"sensitivity_requirement"`
	RequirementMet  bool               `json:"requirement_met"`
	ErrorDefinition string             `json:"error_definition"`
	FitSeconds      float64            `json:"fit_seconds,omitempty"`
}

// haloFitFlags are halo's flags of --fit.
type haloFitFlags struct {
	fit, direct bool
	sigma       float64
	mocks       int
	start       string
}

func addHaloFitFlags(pf *populationFlags) *haloFitFlags {
	hf := &haloFitFlags{}
	fs := pf.fs
	fs.BoolVar(&hf.fit, "fit", false, "also fit the shared (vc, q) to a noisy catalogue of the final states, with Fisher error bars (fit.json with --out)")
	fs.Float64Var(&hf.sigma, "sigma", halo.DefaultSigma, "with --fit: noise `σ`, > 0, of every component of the catalogue (units of the halo's scale and of vc)")
	fs.IntVar(&hf.mocks, "mocks", 0, "with --fit: refit `K` more noisy mocks and compare the scatter of the estimates with the Fisher error bars")
	fs.StringVar(&hf.start, "start", "", "with --fit: starting values `vc=V,q=V` (either or both; default: 10% above the truth)")
	fs.BoolVar(&hf.direct, "direct", false, "with --fit: start Levenberg–Marquardt at --start itself, without the energy-conservation stage")
	return hf
}

// config checks the --fit flags (set: the flags given) and returns the
// fit's configuration, nil without --fit.
func (hf *haloFitFlags) config(set map[string]bool, seed uint64) (*halo.FitConfig, error) {
	if !hf.fit {
		for _, name := range []string{"sigma", "mocks", "start", "direct"} {
			if set[name] {
				return nil, fmt.Errorf("--%s needs --fit", name)
			}
		}
		return nil, nil
	}
	switch {
	case !(hf.sigma > 0) || math.IsInf(hf.sigma, 0):
		return nil, fmt.Errorf("--sigma = %g: must be finite and > 0", hf.sigma)
	case hf.mocks < 0:
		return nil, fmt.Errorf("--mocks = %d: must be ≥ 0", hf.mocks)
	}
	fc := &halo.FitConfig{Sigma: hf.sigma, NoiseSeed: seed, Mocks: hf.mocks, Direct: hf.direct}
	if set["start"] {
		start, err := parseHaloStart(hf.start)
		if err != nil {
			return nil, err
		}
		fc.Start = start
	}
	return fc, nil
}

// parseHaloStart parses --start: vc=V,q=V, either or both; a value left
// out is NaN until the truth fills it.
func parseHaloStart(v string) ([]float64, error) {
	start := []float64{math.NaN(), math.NaN()}
	if strings.TrimSpace(v) == "" {
		return nil, fmt.Errorf("--start %q: want vc=V,q=V (either or both)", v)
	}
	for _, item := range strings.Split(v, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(item), "=")
		c := slices.Index([]string{"vc", "q"}, strings.TrimSpace(name))
		if !ok || c < 0 {
			return nil, fmt.Errorf("--start %q: %q: want vc=V or q=V", v, item)
		}
		if !math.IsNaN(start[c]) {
			return nil, fmt.Errorf("--start %q: %s given twice", v, name)
		}
		x, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil || !(x > 0) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("--start %q: %s = %q: must be a finite number > 0", v, name, val)
		}
		start[c] = x
	}
	return start, nil
}

func haloCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	start := time.Now()
	pf := newPopulationFlags("halo", haloUsage, 10000, "stars", stderr)
	hf := addHaloFitFlags(pf)
	m, help, err := pf.parse(args)
	if help || err != nil {
		return err
	}
	set := map[string]bool{}
	pf.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	fc, err := hf.config(set, *pf.seed)
	if err != nil {
		return err
	}
	if fc != nil && set["chunk"] {
		return errors.New("--chunk with --fit: the fit holds every star's orbit at once, so the run is not streamed")
	}
	cfg := halo.Config{N: *pf.n, Seed: *pf.seed, RTol: *pf.rtol, ATol: *pf.atol, Workers: *pf.workers, Check: *pf.check,
		Method: m, Engine: pf.engineName(), Chunk: *pf.chunk}
	// A job too large is refused before --out is created.
	if fc != nil {
		cfg.Chunk = cfg.N // the fit's run is one chunk of all the stars
		if err := halo.CheckFitSize(cfg); err != nil {
			return pf.sizeError(err)
		}
	} else if err := pf.checkSize(func(chunk int) error {
		c := cfg
		c.Chunk = chunk
		return halo.CheckSize(c)
	}, halo.ChunkSize(cfg)); err != nil {
		return err
	}
	if err := pf.open(); err != nil {
		return err
	}
	defer pf.set.abort() // a failed run's stage, and --out if this run created it
	pl, err := halo.Prepare(cfg)
	if err != nil {
		return translate(pf.sizeError(err))
	}
	if pf.accuracyTarget() != nil {
		rep, err := pl.ChooseAccuracy(ctx, *pf.accuracyTarget())
		if err := pf.pilotDone(ctx, stdout, rep, err); err != nil {
			return err
		}
	}
	bar := newProgressBar(stderr, time.Second)
	pl.Config.Progress = bar.update
	sink, err := newHaloSink(ctx, pf.set, pl.Config.N, pl.Config.Check)
	if err != nil {
		return err
	}
	defer sink.close()
	var (
		sum *halo.Summary
		r   *halo.Result
	)
	if fc != nil {
		if r, err = pl.Run(ctx); err == nil {
			sum = &halo.Summary{Config: r.Config, T1: r.T1, Chunks: 1, StateP99: r.StateP99, SensP99: r.SensP99, Pass: r.Pass}
			err = sink.add(&halo.Chunk{Stars: r.Stars, Solve: r.Solve, Ref: r.Ref, StateErr: r.StateErr, SensErr: r.SensErr})
		}
	} else {
		sum, err = pl.Stream(ctx, sink.add)
	}
	bar.finish()
	if err != nil {
		return translate(pf.sizeError(err))
	}
	if err := sink.close(); err != nil {
		return err
	}
	// The last chunk is garbage now: collect it before the figures,
	// whose drawing makes garbage of its own (orbits.png about 250 MB,
	// whatever n), so that the heap does not grow to a chunk's twice.
	runtime.GC()
	c := sum.Config
	first := sink.solve.first
	st := haloStats{runStats: newAppRunStats(c.N, c.Seed, c.RTol, c.ATol, c.Check, &sink.solve, &sink.ref, sum.Chunks, c.Chunk),
		Params: map[string]float64{"vc": c.VC, "q": c.Q, "rc": c.RC}, T1: sum.T1, MedianPeriods: halo.MedianPeriods,
		StateP99: sum.StateP99, SensP99: sum.SensP99, StateReq: halo.StateRequirement, SensReq: halo.SensRequirement,
		RequirementMet: sum.Pass,
		ErrorDefinition: "state: max(|Δx|/r_E, |Δv|/v_E); sensitivity: ‖A−B‖_F/‖B‖_F of the 6×2 matrices " +
			"with rows divided by r_E (positions) or v_E (velocities) and columns multiplied by vc, q; " +
			"against DP8 at rtol = atol = 1e-12 with sensitivities in the error test"}
	var fr *halo.FitResult
	if fc != nil {
		fr, err = haloFit(ctx, r, fc, stderr)
		if err != nil {
			return translate(err)
		}
		st.FitSeconds = fr.Elapsed.Seconds()
		if fr.Mocks != nil {
			st.FitSeconds += fr.Mocks.Elapsed.Seconds()
		}
	}
	if pf.set != nil {
		if err := writeHalo(ctx, pf.set, sum, sink, &st, start, r, fr); err != nil {
			return err
		}
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "gradsolve halo: %d stars (seed %d), vc = %g, q = %g, rc = %g, t ∈ [0, %.4g] (%.1f median periods)\n",
		c.N, c.Seed, c.VC, c.Q, c.RC, sum.T1, halo.MedianPeriods)
	fmt.Fprintf(tw, "  method\t%s, rtol %g, atol %g, sensitivities to (vc, q), %s\n", first.Method, c.RTol, c.ATol, counted(first.Workers, "worker", "workers"))
	fmt.Fprintf(tw, "  solve\t%v\t(%.1f steps per star, %.3g µs per star)\n", sink.solve.elapsed.Round(time.Millisecond),
		float64(sink.solve.total.Accepted)/float64(c.N), float64(sink.solve.elapsed.Nanoseconds())/1e3/float64(c.N))
	if c.Check {
		fmt.Fprintf(tw, "  reference\t%v\t\n", sink.ref.elapsed.Round(time.Millisecond))
		fmt.Fprintf(tw, "  quantity\t99th percentile error\trequirement\n")
		fmt.Fprintf(tw, "  state\t%.2e\t%.0e\n", sum.StateP99, halo.StateRequirement)
		fmt.Fprintf(tw, "  sensitivity\t%.2e\t%.0e\n", sum.SensP99, halo.SensRequirement)
		verdict := "met"
		if !sum.Pass {
			verdict = "NOT met"
		}
		fmt.Fprintf(tw, "  requirement\t%s\t\n", verdict)
	}
	pf.printChunks(tw, sum.Chunks, c.Chunk, "stars")
	if fr != nil {
		// The fit's table aligns on its own: the run's above is as
		// without --fit.
		if err := tw.Flush(); err != nil {
			return err
		}
		tw = tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		printHaloFit(tw, fr)
	}
	if *pf.out != "" {
		fmt.Fprintf(tw, "  wrote\t%s\t\n", *pf.out)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if c.Check && !sum.Pass {
		return fmt.Errorf("halo: the accuracy requirement is not met (state p99 %.2e, sensitivity p99 %.2e)", sum.StateP99, sum.SensP99)
	}
	if fr != nil && !fr.Converged {
		return fmt.Errorf("halo: the fit did not converge: %s (%s)", fr.Status, fr.Status.Message())
	}
	return nil
}

// haloFit runs the fit of --fit on the run's catalogue, with a progress
// bar over the fits.
func haloFit(ctx context.Context, r *halo.Result, fc *halo.FitConfig, stderr io.Writer) (*halo.FitResult, error) {
	if fc.Start != nil {
		// --start's values left out are the truth's.
		truth := []float64{r.Config.VC, r.Config.Q}
		for c, v := range fc.Start {
			if math.IsNaN(v) {
				fc.Start[c] = truth[c] * (1 + halo.DefaultStartOffset)
			}
		}
	}
	bar := newProgressBar(stderr, time.Second)
	fc.Progress = bar.update
	fr, err := halo.FitRun(ctx, r, *fc)
	bar.finish()
	return fr, err
}

// printHaloFit prints the fit's table.
func printHaloFit(tw io.Writer, fr *halo.FitResult) {
	fc := fr.Config
	stage := fmt.Sprintf("energy stage (%d Gauss–Newton iterations) from the start, then", fr.EnergyIterations)
	if fc.Direct {
		stage = "from the start (--direct):"
	}
	fmt.Fprintf(tw, "  fit\t(vc, q) shared by %s; catalogue: final states + noise σ = %g on each of the 6 components\n", counted(len(fr.Catalogue)/6, "star", "stars"), fc.Sigma)
	fmt.Fprintf(tw, "  \t%s levenberg-marquardt: %s, %d iterations, %d solves, %v\n", stage, fr.Status, fr.Iterations, fr.Evaluations, fr.Elapsed.Round(time.Millisecond))
	fmt.Fprintf(tw, "  \tχ² = %.6g for %d degrees of freedom (χ²/dof = %.4f); truth at Mahalanobis distance² %.3g (2 dof: 2.30 is the 68%% region)\n",
		fr.Chi2, fr.Dof, fr.Chi2/float64(fr.Dof), fr.Mahalanobis)
	fmt.Fprintf(tw, "  parameter\ttruth\tstart\testimate ± stderr\t(estimate − truth)/stderr\t\n")
	for c, name := range fr.Names {
		fmt.Fprintf(tw, "  %s\t%g\t%.6g\t%.10g ± %.3g\t%+.3f\t\n", name, fr.Truth[c], fr.Start[c], fr.Estimate[c], fr.StdErr[c], fr.Pull[c])
	}
	m := fr.Mocks
	if m == nil {
		return
	}
	fmt.Fprintf(tw, "  mocks\t%d refits of noisy mocks (%d converged with error bars, the only ones counted), %v per fit\n", m.K, m.Used, m.PerFit.Round(time.Millisecond))
	fmt.Fprintf(tw, "  parameter\tscatter\tmean stderr\tscatter/stderr\tmean − truth (its stderr)\ttruth within ±stderr\t\n")
	for c, name := range fr.Names {
		fmt.Fprintf(tw, "  %s\t%.4g\t%.4g\t%.3f ± %.3f\t%+.2f\t%.0f%%\t\n", name, m.Scatter[c], m.MeanStdErr[c], m.Ratio[c], m.RatioErr[c], m.Bias[c], 100*m.Covered[c])
	}
}

// haloFitJSON is fit.json of halo --fit.
type haloFitJSON struct {
	Parameters       []string    `json:"parameters"`
	Truth            []float64   `json:"truth"`
	Start            []float64   `json:"start"`
	StartStage       string      `json:"start_stage"`
	LMStart          []float64   `json:"lm_start"`
	EnergyIterations int         `json:"energy_iterations"`
	Estimates        []float64   `json:"estimates"`
	StdErr           []float64   `json:"stderr"`
	Covariance       [][]float64 `json:"covariance"`
	Pull             []float64   `json:"pull"`
	WithinStdErr     []bool      `json:"within_stderr"`
	Mahalanobis      float64     `json:"mahalanobis"`
	Chi2             float64     `json:"chi2"`
	Dof              int         `json:"dof"`
	Iterations       int         `json:"iterations"`
	Evaluations      int         `json:"evaluations"`
	Status           string      `json:"status"`
	Converged        bool        `json:"converged"`
	Sigma            float64     `json:"sigma"`
	Noise            string      `json:"noise"`
	N                int         `json:"n"`
	Seed             uint64      `json:"seed"`
	RC               float64     `json:"rc"`
	T1               float64     `json:"t1"`
	Optimizer        string      `json:"optimizer"`
	Method           string      `json:"method"`
	RTol             float64     `json:"rtol"`
	ATol             float64     `json:"atol"`
	Seconds          float64     `json:"seconds"`
	Mocks            *mocksJSON  `json:"mocks,omitempty"`
}

// mocksJSON is fit.json's account of --mocks; null marks a value that
// could not be computed (a mock not used, or fewer than two mocks).
type mocksJSON struct {
	K           int          `json:"k"`
	Used        int          `json:"used"`
	Mean        []*float64   `json:"mean"`
	Scatter     []*float64   `json:"scatter"`
	MeanStdErr  []*float64   `json:"mean_stderr"`
	Ratio       []*float64   `json:"ratio"`
	RatioErr    []*float64   `json:"ratio_uncertainty"`
	Bias        []*float64   `json:"bias"`
	Covered     []*float64   `json:"covered"`
	Estimates   [][]*float64 `json:"estimates"`
	StdErr      [][]*float64 `json:"stderr"`
	Seconds     float64      `json:"seconds"`
	PerFit      float64      `json:"seconds_per_fit"`
	Definitions string       `json:"definitions"`
}

func nullable(v []float64) []*float64 {
	out := make([]*float64, len(v))
	for i, x := range v {
		out[i] = finiteOrNil(x)
	}
	return out
}

func newHaloFitJSON(r *halo.Result, fr *halo.FitResult) *haloFitJSON {
	c, fc := r.Config, fr.Config
	j := &haloFitJSON{Parameters: fr.Names, Truth: fr.Truth, Start: fr.Start, StartStage: "energy", LMStart: fr.LMStart,
		EnergyIterations: fr.EnergyIterations, Estimates: fr.Estimate, StdErr: fr.StdErr,
		Covariance: [][]float64{fr.Covariance[0:2], fr.Covariance[2:4]}, Pull: fr.Pull, WithinStdErr: fr.Within,
		Mahalanobis: fr.Mahalanobis, Chi2: fr.Chi2, Dof: fr.Dof, Iterations: fr.Iterations, Evaluations: fr.Evaluations,
		Status: fr.Status.String(), Converged: fr.Converged, Sigma: fc.Sigma,
		Noise: "Gaussian, σ on each of x, y, z, vx, vy, vz of every final state; stream 0 of --seed (mock k: stream k)",
		N:     c.N, Seed: c.Seed, RC: c.RC, T1: r.T1, Optimizer: "levenberg-marquardt", Method: r.Solve.Method,
		RTol: c.RTol, ATol: c.ATol, Seconds: fr.Elapsed.Seconds()}
	if fc.Direct {
		j.StartStage = "direct"
	}
	if m := fr.Mocks; m != nil {
		mj := &mocksJSON{K: m.K, Used: m.Used, Mean: nullable(m.Mean), Scatter: nullable(m.Scatter), MeanStdErr: nullable(m.MeanStdErr),
			Ratio: nullable(m.Ratio), RatioErr: nullable(m.RatioErr), Bias: nullable(m.Bias), Covered: nullable(m.Covered),
			Seconds: m.Elapsed.Seconds(), PerFit: m.PerFit.Seconds(),
			Definitions: "scatter: sample standard deviation of the used mocks' estimates; mean_stderr: mean of their Fisher " +
				"standard errors; ratio = scatter/mean_stderr (1 if the error bars are right), ratio_uncertainty ≈ " +
				"ratio/√(2(used−1)); bias: (mean − truth)/(mean_stderr/√used); covered: fraction with |estimate − truth| ≤ stderr"}
		for k := range m.K {
			mj.Estimates = append(mj.Estimates, nullable(m.Estimates[2*k:2*k+2]))
			mj.StdErr = append(mj.StdErr, nullable(m.StdErr[2*k:2*k+2]))
		}
		j.Mocks = mj
	}
	return j
}

// trackedStars is the number of orbits orbits.png draws: the first
// stars of the run.
const trackedStars = 12

// haloSink takes a run's chunks as they come: it writes their rows
// into the .npy files (with --out), gathers the solves' summaries, and
// keeps what the figures need: the first stars' initial states and an
// evenly spaced sample of the errors (plotSample).
type haloSink struct {
	rw         *rowWriters
	n          int
	solve, ref summary
	tracked    []float64 // initial states of the first trackedStars stars
	sample     *errSample
	errs       []float64 // a chunk's errors.npy rows
}

// newHaloSink opens the row files of a run of n stars in out (nil: no
// files).
func newHaloSink(ctx context.Context, out *outSet, n int, check bool) (*haloSink, error) {
	h := &haloSink{n: n, sample: newErrSample(n, 2)}
	if out == nil {
		return h, nil
	}
	h.rw = newRowWriters(ctx, out)
	files := []outFile{{"y0.npy", []int{n, 6}}, {"y_final.npy", []int{n, 6}}, {"sens.npy", []int{n, 6, 2}}}
	if check {
		files = append(files, outFile{"errors.npy", []int{n, 2}})
	}
	for _, f := range files {
		if err := h.rw.float64s(f.name, f.shape); err != nil {
			h.close()
			return nil, err
		}
	}
	return h, nil
}

// add takes the chunk ch.
func (h *haloSink) add(ch *halo.Chunk) error {
	h.solve.add(ch.Solve, ch.Lo)
	if ch.Ref != nil {
		h.ref.add(ch.Ref, ch.Lo)
	}
	if want := 6 * trackedStars; len(h.tracked) < want {
		h.tracked = append(h.tracked, ch.Stars.Y0[:min(len(ch.Stars.Y0), want-len(h.tracked))]...)
	}
	h.errs = h.errs[:0]
	for i := range ch.StateErr {
		h.errs = append(h.errs, ch.StateErr[i], ch.SensErr[i])
	}
	if ch.StateErr != nil {
		h.sample.take(ch.Lo, h.errs)
	}
	if h.rw == nil {
		return nil
	}
	for _, f := range []struct {
		name string
		data []float64
	}{{"y0.npy", ch.Stars.Y0}, {"y_final.npy", ch.Solve.Y}, {"sens.npy", ch.Solve.S}} {
		if err := h.rw.put(f.name, f.data); err != nil {
			return err
		}
	}
	if ch.StateErr != nil {
		return h.rw.put("errors.npy", h.errs)
	}
	return nil
}

// close finishes the files (once).
func (h *haloSink) close() error {
	if h.rw == nil {
		return nil
	}
	return h.rw.close()
}

// writeHalo writes the two figures, with a fit fit.json, and stats.json,
// and commits the set (the arrays are written: haloSink).
func writeHalo(ctx context.Context, out *outSet, sum *halo.Summary, sink *haloSink, st *haloStats, start time.Time, r *halo.Result, fr *halo.FitResult) error {
	n := sum.Config.N
	if fr != nil {
		err := out.writeFile(ctx, "fit.json", func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(newHaloFitJSON(r, fr))
		})
		if err != nil {
			return err
		}
	}
	tracks, err := halo.TrackStars(ctx, sum.Config, sum.T1, sink.tracked, 600)
	if err != nil {
		return err
	}
	var xy, xz []plots.Series
	for _, tr := range tracks {
		var xs, ys, zs []float64
		for j := 0; j+2 < len(tr); j += 3 {
			xs, ys, zs = append(xs, tr[j]), append(ys, tr[j+1]), append(zs, tr[j+2])
		}
		xy = append(xy, plots.Series{X: xs, Y: ys})
		xz = append(xz, plots.Series{X: xs, Y: zs})
	}
	eq := &plots.Options{Equal: true}
	err = out.writeWith(ctx, "orbits.png", func(path string) error {
		return plots.Panels(path, fmt.Sprintf("12 of %d orbits in the flattened logarithmic halo (q = %g)", n, sum.Config.Q),
			[]plots.Panel{
				{Title: "face-on", XLabel: "x", YLabel: "y", Series: xy, Opt: eq},
				{Title: "edge-on", XLabel: "x", YLabel: "z", Series: xz, Opt: eq},
			})
	})
	if err != nil {
		return err
	}
	if !sum.Config.Check {
		return commitStats(ctx, out, st, &st.runStats, start)
	}
	title := fmt.Sprintf("Errors of %d orbits against the DP8 reference", n)
	if k := len(sink.sample.idx); k < n {
		title = fmt.Sprintf("Errors of %d of %d orbits (evenly spaced) against the DP8 reference", k, n)
	}
	state, sens := sink.sample.column(0), sink.sample.column(1)
	err = out.writeWith(ctx, "errors.png", func(path string) error {
		return plots.CDF(path, title, "error (units of r_E, v_E; relative for sensitivities)",
			[]plots.Series{{Name: "state", Y: state}, {Name: "sensitivity", Y: sens}},
			&plots.Options{LogX: true,
				VLines: []plots.Mark{{Name: "state requirement", At: halo.StateRequirement}, {Name: "sensitivity requirement", At: halo.SensRequirement}},
				HLines: []plots.Mark{{Name: "99%", At: halo.Quantile}}})
	})
	if err != nil {
		return err
	}
	return commitStats(ctx, out, st, &st.runStats, start)
}

// commitStats commits an application's output set with st as its
// stats.json, after setting the set's identity and the wall time in rs
// (st's runStats).
func commitStats(ctx context.Context, out *outSet, st any, rs *runStats, start time.Time) error {
	return out.commit(ctx, func(set runSet) any {
		rs.runSet = set
		rs.WallSeconds = time.Since(start).Seconds()
		return st
	})
}

// plotSample is the most orbits errors.png draws: a run of more stars
// draws the errors of plotSample of them, evenly spaced (star
// ⌊j·n/plotSample⌋), so the figure takes bounded memory and is the
// same for any chunk. The 99th percentiles of stats.json are of all n.
const plotSample = 10000

// errSample keeps the rows of the sampled trajectories (width numbers
// each) as the chunks pass.
type errSample struct {
	idx   []int
	width int
	rows  []float64
	next  int // the first of idx not yet taken
}

func newErrSample(n, width int) *errSample {
	k := min(n, plotSample)
	s := &errSample{idx: make([]int, k), width: width}
	for j := range s.idx {
		s.idx[j] = int(int64(j) * int64(n) / int64(k))
	}
	return s
}

// take keeps the sampled rows of a chunk whose first trajectory is lo,
// the chunk after the one taken before.
func (s *errSample) take(lo int, rows []float64) {
	w := s.width
	for m := len(rows) / w; s.next < len(s.idx) && s.idx[s.next] < lo+m; s.next++ {
		i := s.idx[s.next] - lo
		s.rows = append(s.rows, rows[i*w:(i+1)*w]...)
	}
}

// column returns the sample's values of column c.
func (s *errSample) column(c int) []float64 {
	out := make([]float64, 0, len(s.rows)/s.width)
	for j := c; j < len(s.rows); j += s.width {
		out = append(out, s.rows[j])
	}
	return out
}
