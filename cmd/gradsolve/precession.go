package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/gradsolve/gradsolve/app/precession"
	"github.com/gradsolve/gradsolve/plots"
)

const precessionUsage = `usage: gradsolve precession [flags]

Binary black-hole spin precession, orbit-averaged (shared/reference/applications.md
§C): draw --n binaries from --seed (q in [0.1, 1], χ1, χ2 in [0, 1], isotropic
spins at r = 100 M) and integrate from r = 100 M to 10 M. With --check, compare
with a converged reference (DP8 at rtol 1e-12) and check the requirement: 99% of
binaries within 2e-7 rad (the largest angle between final L̂, Ŝ1, Ŝ2 and the
reference's; the command fails if it is not met). With --out DIR it writes
params.npy (n×3: q, χ1, χ2), angles_100.npy and angles_10.npy (n×3: θ1, θ2,
Δφ), y_final.npy (n×10: L̂, Ŝ1, Ŝ2, t), stats.json and tilts.png, and with
--check errors.npy.

flags:
`

type precessionStats struct {
	runStats
	RStart         float64 `json:"r_start"`
	REnd           float64 `json:"r_end"`
	P99            float64 `json:"error_p99_rad,omitempty"`
	FixtureErr     float64 `json:"fixture_error_rad,omitempty"`
	Requirement    float64 `json:"requirement_rad"`
	RequirementMet bool    `json:"requirement_met"`
}

func precessionCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	start := time.Now()
	pf := newPopulationFlags("precession", precessionUsage, 2000, "binaries", stderr)
	m, help, err := pf.parse(args)
	if help || err != nil {
		return err
	}
	cfg := precession.Config{N: *pf.n, Seed: *pf.seed, RTol: *pf.rtol, ATol: *pf.atol, Workers: *pf.workers, Check: *pf.check, Method: m, Engine: pf.engineName()}
	// A job too large is refused before --out is created.
	if err := precession.CheckSize(cfg); err != nil {
		return pf.sizeError(err)
	}
	if err := pf.open(); err != nil {
		return err
	}
	defer pf.set.abort() // a failed run's stage, and --out if this run created it
	bar := newProgressBar(stderr, time.Second)
	cfg.Progress = bar.update
	r, err := precession.Run(ctx, cfg)
	bar.finish()
	if err != nil {
		return translate(pf.sizeError(err))
	}
	c := r.Config
	tot := r.Solve.Total()
	st := precessionStats{runStats: newRunStats(c.N, c.Seed, c.RTol, c.ATol, c.Check, r.Solve, r.Ref),
		RStart: precession.RStart, REnd: precession.REnd,
		P99: r.P99, FixtureErr: r.FixtureErr, Requirement: precession.Requirement, RequirementMet: r.Pass}
	if pf.set != nil {
		if err := writePrecession(ctx, pf.set, r, &st, start); err != nil {
			return err
		}
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "gradsolve precession: %d binaries (seed %d), r from %g M to %g M\n", c.N, c.Seed, precession.RStart, precession.REnd)
	fmt.Fprintf(tw, "  method\t%s, rtol %g, atol %g, %s\n", r.Solve.Method, c.RTol, c.ATol, counted(r.Solve.Workers, "worker", "workers"))
	fmt.Fprintf(tw, "  solve\t%v\t(%.0f steps per binary, %.3g µs per binary)\n", r.Solve.Elapsed.Round(time.Millisecond),
		float64(tot.Accepted)/float64(c.N), float64(r.Solve.Elapsed.Nanoseconds())/1e3/float64(c.N))
	if c.Check {
		verdict := func(e float64) string {
			if e <= precession.Requirement {
				return "met"
			}
			return "NOT met"
		}
		fmt.Fprintf(tw, "  reference\t%v\t\n", r.Ref.Elapsed.Round(time.Millisecond))
		fmt.Fprintf(tw, "  99th percentile angle error\t%.2e rad\t(requirement %.0e: %s)\n", r.P99, precession.Requirement, verdict(r.P99))
		fmt.Fprintf(tw, "  §C.7 fixture angle error\t%.2e rad\t(requirement %.0e: %s)\n", r.FixtureErr, precession.Requirement, verdict(r.FixtureErr))
	}
	if *pf.out != "" {
		fmt.Fprintf(tw, "  wrote\t%s\t\n", *pf.out)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if c.Check && !r.Pass {
		return fmt.Errorf("precession: the accuracy requirement is not met (p99 %.2e rad, fixture %.2e rad)", r.P99, r.FixtureErr)
	}
	return nil
}

// writePrecession writes the arrays, the figure and stats.json, as one
// set.
func writePrecession(ctx context.Context, out *outSet, r *precession.Result, st *precessionStats, start time.Time) error {
	n := r.Config.N
	a100, a10 := make([]float64, 0, 3*n), make([]float64, 0, 3*n)
	for i := range n {
		a100 = append(a100, r.Population.Theta1[i], r.Population.Theta2[i], r.Population.DPhi[i])
		a10 = append(a10, r.Theta1[i], r.Theta2[i], r.DPhi[i])
	}
	for _, f := range []struct {
		name  string
		shape []int
		data  []float64
	}{
		{"params.npy", []int{n, 3}, r.Population.P},
		{"angles_100.npy", []int{n, 3}, a100},
		{"angles_10.npy", []int{n, 3}, a10},
		{"y_final.npy", []int{n, 10}, r.Solve.Y},
		{"errors.npy", []int{n}, r.Err},
	} {
		if f.data == nil {
			continue // errors.npy without --check
		}
		if err := out.writeNpy(ctx, f.name, f.shape, f.data); err != nil {
			return err
		}
	}
	err := out.writeWith(ctx, "tilts.png", func(path string) error {
		return plots.Panels(path, fmt.Sprintf("Spin tilts of %d binaries, isotropic at r = 100 M", n),
			[]plots.Panel{
				{Title: "θ1 (primary)", XLabel: "θ1 (rad)", YLabel: "probability density", Series: tiltHist(r.Population.Theta1, r.Theta1)},
				{Title: "θ2 (secondary)", XLabel: "θ2 (rad)", YLabel: "probability density", Series: tiltHist(r.Population.Theta2, r.Theta2)},
			})
	})
	if err != nil {
		return err
	}
	return commitStats(ctx, out, st, &st.runStats, start)
}

// tiltHist returns the densities of two samples of angles in [0, π] on 30
// shared bins, as step-like line series (r = 100 M and r = 10 M).
func tiltHist(at100, at10 []float64) []plots.Series {
	const bins = 30
	mk := func(name string, v []float64) plots.Series {
		counts := make([]float64, bins)
		for _, x := range v {
			k := min(bins-1, max(0, int(x/3.141592653589793*bins)))
			counts[k]++
		}
		w := 3.141592653589793 / bins
		var s plots.Series
		s.Name = name
		for k, c := range counts {
			d := c / (float64(len(v)) * w)
			s.X = append(s.X, float64(k)*w, float64(k+1)*w)
			s.Y = append(s.Y, d, d)
		}
		return s
	}
	return []plots.Series{mk("r = 100 M", at100), mk("r = 10 M", at10)}
}
