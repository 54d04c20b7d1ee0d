package main

import (
	"context"
	"fmt"
	"io"
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
}

func haloCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	start := time.Now()
	pf := newPopulationFlags("halo", haloUsage, 10000, "stars", stderr)
	m, help, err := pf.parse(args)
	if help || err != nil {
		return err
	}
	cfg := halo.Config{N: *pf.n, Seed: *pf.seed, RTol: *pf.rtol, ATol: *pf.atol, Workers: *pf.workers, Check: *pf.check, Method: m, Engine: pf.engineName()}
	// A job too large is refused before --out is created.
	if err := halo.CheckSize(cfg); err != nil {
		return pf.sizeError(err)
	}
	if err := pf.open(); err != nil {
		return err
	}
	defer pf.set.abort() // a failed run's stage, and --out if this run created it
	bar := newProgressBar(stderr, time.Second)
	cfg.Progress = bar.update
	r, err := halo.Run(ctx, cfg)
	bar.finish()
	if err != nil {
		return translate(pf.sizeError(err))
	}
	c := r.Config
	tot := r.Solve.Total()
	st := haloStats{runStats: newRunStats(c.N, c.Seed, c.RTol, c.ATol, c.Check, r.Solve, r.Ref),
		Params: map[string]float64{"vc": c.VC, "q": c.Q, "rc": c.RC}, T1: r.T1, MedianPeriods: halo.MedianPeriods,
		StateP99: r.StateP99, SensP99: r.SensP99, StateReq: halo.StateRequirement, SensReq: halo.SensRequirement,
		RequirementMet: r.Pass,
		ErrorDefinition: "state: max(|Δx|/r_E, |Δv|/v_E); sensitivity: ‖A−B‖_F/‖B‖_F of the 6×2 matrices " +
			"with rows divided by r_E (positions) or v_E (velocities) and columns multiplied by vc, q; " +
			"against DP8 at rtol = atol = 1e-12 with sensitivities in the error test"}
	if pf.set != nil {
		if err := writeHalo(ctx, pf.set, r, &st, start); err != nil {
			return err
		}
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "gradsolve halo: %d stars (seed %d), vc = %g, q = %g, rc = %g, t ∈ [0, %.4g] (%.1f median periods)\n",
		c.N, c.Seed, c.VC, c.Q, c.RC, r.T1, halo.MedianPeriods)
	fmt.Fprintf(tw, "  method\t%s, rtol %g, atol %g, sensitivities to (vc, q), %s\n", r.Solve.Method, c.RTol, c.ATol, counted(r.Solve.Workers, "worker", "workers"))
	fmt.Fprintf(tw, "  solve\t%v\t(%.1f steps per star, %.3g µs per star)\n", r.Solve.Elapsed.Round(time.Millisecond),
		float64(tot.Accepted)/float64(c.N), float64(r.Solve.Elapsed.Nanoseconds())/1e3/float64(c.N))
	if c.Check {
		fmt.Fprintf(tw, "  reference\t%v\t\n", r.Ref.Elapsed.Round(time.Millisecond))
		fmt.Fprintf(tw, "  quantity\t99th percentile error\trequirement\n")
		fmt.Fprintf(tw, "  state\t%.2e\t%.0e\n", r.StateP99, halo.StateRequirement)
		fmt.Fprintf(tw, "  sensitivity\t%.2e\t%.0e\n", r.SensP99, halo.SensRequirement)
		verdict := "met"
		if !r.Pass {
			verdict = "NOT met"
		}
		fmt.Fprintf(tw, "  requirement\t%s\t\n", verdict)
	}
	if *pf.out != "" {
		fmt.Fprintf(tw, "  wrote\t%s\t\n", *pf.out)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if c.Check && !r.Pass {
		return fmt.Errorf("halo: the accuracy requirement is not met (state p99 %.2e, sensitivity p99 %.2e)", r.StateP99, r.SensP99)
	}
	return nil
}

// writeHalo writes the arrays, the two figures and stats.json, as one
// set.
func writeHalo(ctx context.Context, out *outSet, r *halo.Result, st *haloStats, start time.Time) error {
	n := r.Config.N
	files := []struct {
		name  string
		shape []int
		data  []float64
	}{
		{"y0.npy", []int{n, 6}, r.Stars.Y0},
		{"y_final.npy", []int{n, 6}, r.Solve.Y},
		{"sens.npy", []int{n, 6, 2}, r.Solve.S},
	}
	if r.Config.Check {
		errs := make([]float64, 0, 2*n)
		for i := range n {
			errs = append(errs, r.StateErr[i], r.SensErr[i])
		}
		files = append(files, struct {
			name  string
			shape []int
			data  []float64
		}{"errors.npy", []int{n, 2}, errs})
	}
	for _, f := range files {
		if err := out.writeNpy(ctx, f.name, f.shape, f.data); err != nil {
			return err
		}
	}
	tracks, err := halo.Tracks(ctx, r, 12, 600)
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
		return plots.Panels(path, fmt.Sprintf("12 of %d orbits in the flattened logarithmic halo (q = %g)", n, r.Config.Q),
			[]plots.Panel{
				{Title: "face-on", XLabel: "x", YLabel: "y", Series: xy, Opt: eq},
				{Title: "edge-on", XLabel: "x", YLabel: "z", Series: xz, Opt: eq},
			})
	})
	if err != nil {
		return err
	}
	if !r.Config.Check {
		return commitStats(ctx, out, st, &st.runStats, start)
	}
	err = out.writeWith(ctx, "errors.png", func(path string) error {
		return plots.CDF(path, fmt.Sprintf("Errors of %d orbits against the DP8 reference", n),
			"error (units of r_E, v_E; relative for sensitivities)",
			[]plots.Series{{Name: "state", Y: r.StateErr}, {Name: "sensitivity", Y: r.SensErr}},
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
