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
	"text/tabwriter"
	"time"

	"github.com/gradsolve/gradsolve/app/quintessence"
	"github.com/gradsolve/gradsolve/plots"
)

const quintessenceUsage = `usage: gradsolve quintessence [flags]

Thawing quintessence with an exponential potential V0·e^(−λφ), fitted to DESI
DR2 BAO (shared/reference/applications.md §B): for each λ on a grid from 0 to
--lambda-max (--n points, λ = 0 is ΛCDM), the flat background is solved for
V0 and (Ω_m, h·r_d) are fitted by Gauss–Newton on the forward sensitivities.
Prints the profile χ²(λ) and the 68% interval (Δχ² ≤ 1); an end the grid
does not bracket is printed as "open" and written as null in stats.json
(interval_68). With --out DIR it writes profile.csv
(lambda,chi2,omega_m,h_rd,w0), profile.png and stats.json (with the Fisher
standard errors of Ω_m and h·r_d at the best λ, stderr_at_best).
With --check (Ω_r = 0) it compares the profile with the reference profile of
applications.md §B.7 at the λ it shares with it, to its printed digits, and with
a refit at rtol = atol = 1e-13 (χ² within 1e-6), and fails if either differs.

With --mocks N it draws N mock data sets d = μ + L·z instead (L the Cholesky
factor of the DESI DR2 covariance, z standard normal from --seed; μ the
observables at --lambda-true with Ω_m and h·r_d fitted to the real data at that
λ), profiles each over the same grid and prints the coverage of the 68%
interval with its binomial standard error and the time per mock. An interval
end the grid does not bracket is the grid's end: [0, hi] at the prior's edge
λ = 0, and up to --lambda-max at the top. With --out DIR it writes fit.json
(the truth, the coverage, each mock's interval) and stats.json.

With --population N it solves N random flat cosmologies instead (Ω_m uniform
in [0.2, 0.4), λ uniform in [0, --lambda-max), from --seed): the flatness solve
for V0 and the BAO distances D_M, D_H, D_V at the DESI redshifts, in chunks of
4096 so that memory does not grow with N, and prints their ranges, the largest
flatness residual |E²(0) − 1| and the time per cosmology. With --out DIR it
writes the summary as fit.json, and stats.json.

flags:
`

func quintessenceCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	start := time.Now()
	fs := flag.NewFlagSet("quintessence", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 17, "number of λ grid points, evenly from 0 to --lambda-max")
	lmax := fs.Float64("lambda-max", 1.6, "largest λ of the grid")
	omegaR := fs.Float64("omega-r", 0, "radiation density Ω_r (0, or e.g. 9e-5)")
	rtol := fs.Float64("rtol", 0, "relative tolerance of the solves (default 1e-11)")
	atol := fs.Float64("atol", 0, "absolute tolerance of the solves (default 1e-11)")
	seed := fs.Uint64("seed", 0, "seed of the --mocks and --population draws (the profile itself is deterministic)")
	mocks := fs.Int("mocks", 0, "draw this many mock data sets from the DESI DR2 covariance and report the 68% interval's coverage")
	lambdaTrue := fs.Float64("lambda-true", 1, "with --mocks: the true λ of the mocks, on [0, --lambda-max]")
	population := fs.Int("population", 0, "solve this many random flat cosmologies (Ω_m, λ) and their BAO distances")
	out := fs.String("out", "", "output directory")
	check := fs.Bool("check", false, "compare with the reference profile and a tight refit; fail if they differ")
	fs.Usage = func() { fmt.Fprint(stderr, quintessenceUsage); fs.PrintDefaults() }
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return fmt.Errorf("quintessence: unexpected argument %q", pos[0])
	case *n < 2:
		return fmt.Errorf("--n = %d: need at least 2 grid points", *n)
	case !(*lmax > 0) || math.IsInf(*lmax, 0):
		return fmt.Errorf("--lambda-max = %g: must be finite and > 0", *lmax)
	case !(*omegaR >= 0 && *omegaR < 0.1):
		return fmt.Errorf("--omega-r = %g: must be in [0, 0.1)", *omegaR)
	case *check && *omegaR != 0:
		return fmt.Errorf("quintessence: --check compares with the Ω_r = 0 reference profile; drop --omega-r")
	}
	if err := checkAppTolerances("quintessence", *rtol, *atol); err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	switch {
	case *mocks < 0:
		return fmt.Errorf("--mocks = %d: must be ≥ 1", *mocks)
	case given["mocks"] && *mocks == 0:
		return fmt.Errorf("--mocks = 0: must be ≥ 1")
	case *population < 0 || given["population"] && *population == 0:
		return fmt.Errorf("--population = %d: must be ≥ 1", *population)
	case given["mocks"] && given["population"]:
		return fmt.Errorf("quintessence: --mocks and --population are separate runs; give one")
	case *check && (given["mocks"] || given["population"]):
		return fmt.Errorf("quintessence: --check checks the profile of the real data; drop it with --mocks or --population")
	case given["lambda-true"] && !given["mocks"]:
		return fmt.Errorf("--lambda-true: only with --mocks")
	case given["mocks"] && !(*lambdaTrue >= 0 && *lambdaTrue <= *lmax):
		return fmt.Errorf("--lambda-true = %g: must be on the grid [0, --lambda-max = %g]", *lambdaTrue, *lmax)
	case given["population"] && *omegaR+quintessence.PopOmegaMMax >= 1:
		return fmt.Errorf("--omega-r = %g: with --population, Ω_m up to %g and Ω_r must sum below 1", *omegaR, quintessence.PopOmegaMMax)
	}
	tol := quintessence.Tolerances{RTol: *rtol, ATol: *atol}
	if given["mocks"] {
		if err := quintessence.CheckSize(quintessence.MockChunk * *n); err != nil {
			return appSizeError(err, "--n", *n)
		}
		return quintessenceMocks(ctx, stdout, *out, *n, *lmax, *omegaR, *lambdaTrue, *mocks, *seed, tol, start)
	}
	if given["population"] {
		return quintessencePopulation(ctx, stdout, *out, *population, *lmax, *omegaR, *seed, tol, start)
	}
	// A job too large is refused before --out is created.
	if err := quintessence.CheckSize(*n); err != nil {
		return appSizeError(err, "--n", *n)
	}
	var set *outSet
	if *out != "" {
		if set, err = openOutSet(*out, "--out"); err != nil {
			return err
		}
		defer set.abort() // a failed run's stage, and --out if this run created it
	}
	lambdas := make([]float64, *n)
	for i := range lambdas {
		lambdas[i] = *lmax * float64(i) / float64(*n-1)
	}
	solveStart := time.Now()
	pts, err := quintessence.ProfileWith(ctx, lambdas, *omegaR, quintessence.Tolerances{RTol: *rtol, ATol: *atol})
	if err != nil {
		return translate(err)
	}
	solveSeconds := time.Since(solveStart).Seconds()
	lo, hi, best := quintessence.Interval(pts)
	minChi2 := math.Inf(1)
	for _, p := range pts {
		minChi2 = math.Min(minChi2, p.Chi2)
	}
	if set != nil {
		if err := writeQuintessence(ctx, set, pts, lo, hi, best, minChi2, *omegaR, solveSeconds, start); err != nil {
			return err
		}
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(stdout, "gradsolve quintessence: DESI DR2 BAO, Ω_r = %g, %d values of λ in [0, %g] (fit in %.2f s)\n", *omegaR, *n, *lmax, solveSeconds)
	fmt.Fprintln(tw, "λ\tχ²\tΔχ²\tΩ_m\th·r_d [Mpc]\tw0\t")
	for _, p := range pts {
		fmt.Fprintf(tw, "%.3f\t%.3f\t%.3f\t%.4f\t%.3f\t%.4f\t\n", p.Lambda, p.Chi2, p.Chi2-minChi2, p.OmegaM, p.HRd, p.W0)
	}
	tw.Flush()
	fmt.Fprintf(stdout, "best λ = %.2f on the grid; 68%% interval (Δχ² ≤ 1): [%s, %s]; Δχ²(ΛCDM) = %.3f\n", best, intervalEnd(lo), intervalEnd(hi), pts[0].Chi2-minChi2)
	if *out != "" {
		fmt.Fprintf(stdout, "wrote %s\n", *out)
	}
	if *check {
		cr, err := quintessence.Check(ctx, pts)
		if err != nil {
			return translate(err)
		}
		fmt.Fprintf(stdout, "check: %d grid points against the reference profile, %d differ; refit at 1e-13 moves χ² by %.2g (limit %.0e)\n",
			cr.Matched, len(cr.Mismatches), cr.MaxChi2Diff, quintessence.CheckTolerance)
		for _, m := range cr.Mismatches {
			fmt.Fprintln(stdout, "  "+m)
		}
		if !cr.Pass {
			return fmt.Errorf("quintessence: the check failed")
		}
		fmt.Fprintln(stdout, "check passed")
	}
	return nil
}

// writeQuintessence writes profile.csv, profile.png and stats.json, as
// one set.
func writeQuintessence(ctx context.Context, out *outSet, pts []quintessence.ProfilePoint, lo, hi, best, minChi2, omegaR, solveSeconds float64, start time.Time) error {
	err := out.writeFile(ctx, "profile.csv", func(w io.Writer) error {
		if _, err := fmt.Fprintln(w, "lambda,chi2,omega_m,h_rd,w0"); err != nil {
			return err
		}
		for _, p := range pts {
			if _, err := fmt.Fprintf(w, "%.6g,%.6f,%.6f,%.5f,%.6f\n", p.Lambda, p.Chi2, p.OmegaM, p.HRd, p.W0); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	var s plots.Series
	s.Name = "profile"
	for _, p := range pts {
		s.X = append(s.X, p.Lambda)
		s.Y = append(s.Y, p.Chi2-minChi2)
	}
	opt := &plots.Options{HLines: []plots.Mark{{Name: "Δχ² = 1", At: 1}}}
	if !math.IsNaN(lo) {
		opt.VLines = append(opt.VLines, plots.Mark{Name: "68% interval", At: lo})
	}
	if !math.IsNaN(hi) {
		opt.VLines = append(opt.VLines, plots.Mark{At: hi})
	}
	err = out.writeWith(ctx, "profile.png", func(path string) error {
		return plots.Lines(path, "Thawing quintessence, DESI DR2 BAO: profile likelihood", "λ", "Δχ²", []plots.Series{s}, opt)
	})
	if err != nil {
		return err
	}
	st := map[string]any{
		"n": len(pts), "omega_r": omegaR, "best_lambda": best, "chi2_min": minChi2,
		"interval_68": []*float64{jsonEnd(lo), jsonEnd(hi)}, "delta_chi2_lcdm": pts[0].Chi2 - minChi2,
		"solve_seconds": solveSeconds,
		"data":          "DESI DR2 BAO (arXiv:2503.14738, 2503.14739), 13 points with full covariance",
	}
	// The Fisher standard errors of (Ω_m, h·r_d) at the best λ on the
	// grid (the first point of least χ², as Interval finds it).
	for _, p := range pts {
		if p.Chi2 == minChi2 {
			st["stderr_at_best"] = map[string]float64{"omega_m": p.SigmaOmegaM, "h_rd": p.SigmaHRd}
			break
		}
	}
	return out.commit(ctx, func(set runSet) any {
		st["run_id"], st["files"] = set.RunID, set.Files
		st["wall_seconds"] = time.Since(start).Seconds()
		return st
	})
}

// intervalEnd prints an end of the 68% interval: "open" where the grid
// does not bracket the crossing (Interval gives NaN).
func intervalEnd(x float64) string {
	if math.IsNaN(x) {
		return "open"
	}
	return fmt.Sprintf("%.3f", x)
}

// jsonEnd is an end of the interval for stats.json: null where open
// (JSON has no NaN).
func jsonEnd(x float64) *float64 {
	if math.IsNaN(x) {
		return nil
	}
	return &x
}

// quintessenceMocks runs --mocks: n mocks at λ_true profiled over the
// command's grid.
func quintessenceMocks(ctx context.Context, stdout io.Writer, out string, n int, lmax, omegaR, lambdaTrue float64, nMocks int, seed uint64, tol quintessence.Tolerances, start time.Time) error {
	var set *outSet
	if out != "" {
		var err error
		if set, err = openOutSet(out, "--out"); err != nil {
			return err
		}
		defer set.abort()
	}
	lambdas := make([]float64, n)
	for i := range lambdas {
		lambdas[i] = lmax * float64(i) / float64(n-1)
	}
	truth, err := quintessence.Truth(ctx, lambdaTrue, omegaR, tol)
	if err != nil {
		return translate(err)
	}
	s, err := quintessence.Mocks(ctx, lambdas, truth, nMocks, seed, tol, nil)
	if err != nil {
		return translate(err)
	}
	fmt.Fprintf(stdout, "gradsolve quintessence: %d mocks of DESI DR2 BAO (seed %d) at λ_true = %g, Ω_m = %.4f, h·r_d = %.3f Mpc, Ω_r = %g; %d values of λ in [0, %g]\n",
		nMocks, seed, lambdaTrue, truth.OmegaM, truth.HRd, omegaR, n, lmax)
	lo, hi := quintessence.Coverage68-2*s.Sigma, quintessence.Coverage68+2*s.Sigma
	verdict := "compatible with"
	if s.Coverage < lo || s.Coverage > hi {
		verdict = "outside"
	}
	fmt.Fprintf(stdout, "coverage of the 68%% interval (Δχ² ≤ 1): %d/%d = %.3f ± %.3f (binomial σ at p = %.4f); 2σ band [%.3f, %.3f]: %s\n",
		s.Covered, s.N, s.Coverage, s.Sigma, quintessence.Coverage68, lo, hi, verdict)
	fmt.Fprintf(stdout, "intervals open at λ = 0 (the prior's edge, taken as [0, hi]): %d; reaching --lambda-max: %d\n", s.OpenLo, s.OpenHi)
	fmt.Fprintf(stdout, "time: %.2f s for %d mocks, %.1f ms per mock (%d mocks per ensemble)\n", s.Seconds, s.N, 1e3*s.PerMock, quintessence.MockChunk)
	if set == nil {
		return nil
	}
	type mockRow struct {
		Best    float64  `json:"best_lambda"`
		Lo      *float64 `json:"lo"`
		Hi      *float64 `json:"hi"`
		MinChi2 float64  `json:"chi2_min"`
		Covers  bool     `json:"covers"`
	}
	rows := make([]mockRow, len(s.Mocks))
	for i, m := range s.Mocks {
		rows[i] = mockRow{m.Best, jsonEnd(m.Lo), jsonEnd(m.Hi), m.MinChi2, m.Covers}
	}
	summary := map[string]any{
		"mocks": s.N, "seed": seed, "lambda_true": lambdaTrue, "omega_m_true": truth.OmegaM, "h_rd_true": truth.HRd,
		"omega_r": omegaR, "grid": map[string]any{"n": n, "lambda_max": lmax},
		"mu": truth.Mu, "covered": s.Covered, "coverage": s.Coverage, "sigma": s.Sigma, "nominal": quintessence.Coverage68,
		"open_lo": s.OpenLo, "open_hi": s.OpenHi, "seconds_per_mock": s.PerMock,
		"edges":    "an end the grid does not bracket (null) is the grid's end: 0 (the prior λ ≥ 0) or lambda_max",
		"per_mock": rows,
	}
	if err := set.writeFile(ctx, "fit.json", func(w io.Writer) error { return writeQuintJSON(w, summary) }); err != nil {
		return err
	}
	if err := set.commit(ctx, func(rs runSet) any {
		return map[string]any{"run_id": rs.RunID, "files": rs.Files, "mocks": s.N, "seed": seed,
			"coverage": s.Coverage, "sigma": s.Sigma, "solve_seconds": s.Seconds, "seconds_per_mock": s.PerMock,
			"wall_seconds": time.Since(start).Seconds()}
	}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", out)
	return nil
}

// quintessencePopulation runs --population: n random flat cosmologies.
func quintessencePopulation(ctx context.Context, stdout io.Writer, out string, n int, lmax, omegaR float64, seed uint64, tol quintessence.Tolerances, start time.Time) error {
	var set *outSet
	if out != "" {
		var err error
		if set, err = openOutSet(out, "--out"); err != nil {
			return err
		}
		defer set.abort()
	}
	sp := &quintessence.PopulationSpec{N: n, OmegaMMin: quintessence.PopOmegaMMin, OmegaMMax: quintessence.PopOmegaMMax,
		LambdaMax: lmax, OmegaR: omegaR, Seed: seed, Tol: tol}
	var peak uint64
	s, err := quintessence.Population(ctx, sp, nil, func(int) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	})
	if err != nil {
		return translate(err)
	}
	fmt.Fprintf(stdout, "gradsolve quintessence: %d flat cosmologies (seed %d), Ω_m uniform in [%g, %g), λ uniform in [0, %g), Ω_r = %g\n",
		n, seed, sp.OmegaMMin, sp.OmegaMMax, lmax, omegaR)
	fmt.Fprintf(stdout, "flatness: max |E²(0) − 1| = %.2g; ṽ0 in [%.4f, %.4f]; w0 in [%.4f, %.4f]\n",
		s.MaxFlatness, s.V0.Min, s.V0.Max, s.W0.Min, s.W0.Max)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "z\tD_M min\tmean\tmax\tD_H min\tmean\tmax\tD_V min\tmean\tmax\t")
	for j, z := range s.Z {
		fmt.Fprintf(tw, "%.3f\t%.5f\t%.5f\t%.5f\t%.5f\t%.5f\t%.5f\t%.5f\t%.5f\t%.5f\t\n", z,
			s.DM[j].Min, s.DM[j].Mean, s.DM[j].Max, s.DH[j].Min, s.DH[j].Mean, s.DH[j].Max, s.DV[j].Min, s.DV[j].Mean, s.DV[j].Max)
	}
	tw.Flush()
	fmt.Fprintln(stdout, "(distances in units of c/H0)")
	fmt.Fprintf(stdout, "time: %.2f s, %.1f µs per cosmology (chunks of %d); heap in use at most %.1f MB\n",
		s.Seconds, 1e6*s.PerCosmology, s.Chunk, float64(peak)/1e6)
	if set == nil {
		return nil
	}
	ranges := func(rs []quintessence.Range) []map[string]float64 {
		out := make([]map[string]float64, len(rs))
		for i, r := range rs {
			out[i] = map[string]float64{"min": r.Min, "mean": r.Mean, "max": r.Max}
		}
		return out
	}
	summary := map[string]any{
		"population": n, "seed": seed, "omega_m_range": []float64{sp.OmegaMMin, sp.OmegaMMax}, "lambda_range": []float64{0, lmax},
		"omega_r": omegaR, "z": s.Z, "units": "c/H0",
		"D_M": ranges(s.DM), "D_H": ranges(s.DH), "D_V": ranges(s.DV),
		"v0":                    map[string]float64{"min": s.V0.Min, "mean": s.V0.Mean, "max": s.V0.Max},
		"w0":                    map[string]float64{"min": s.W0.Min, "mean": s.W0.Mean, "max": s.W0.Max},
		"max_flatness":          s.MaxFlatness,
		"chunk":                 s.Chunk,
		"seconds_per_cosmology": s.PerCosmology,
	}
	if err := set.writeFile(ctx, "fit.json", func(w io.Writer) error { return writeQuintJSON(w, summary) }); err != nil {
		return err
	}
	if err := set.commit(ctx, func(rs runSet) any {
		return map[string]any{"run_id": rs.RunID, "files": rs.Files, "population": n, "seed": seed,
			"solve_seconds": s.Seconds, "seconds_per_cosmology": s.PerCosmology, "chunk": s.Chunk,
			"wall_seconds": time.Since(start).Seconds()}
	}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", out)
	return nil
}

// writeQuintJSON writes v as indented JSON.
func writeQuintJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
