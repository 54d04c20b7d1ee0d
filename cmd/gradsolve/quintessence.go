package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
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
(lambda,chi2,omega_m,h_rd,w0), profile.png and stats.json.
With --check (Ω_r = 0) it compares the profile with the reference profile of
applications.md §B.7 at the λ it shares with it, to its printed digits, and with
a refit at rtol = atol = 1e-13 (χ² within 1e-6), and fails if either differs.

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
	fs.Uint64("seed", 0, "accepted for symmetry with the other applications; the profile is deterministic")
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
