package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"text/tabwriter"
	"time"

	"github.com/gradsolve/gradsolve"
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

The run streams its binaries in chunks (--chunk; 0: automatic, as many as keep
a chunk's arrays within 256 MiB and a quarter of the available memory), each
chunk's rows written before the next is drawn: memory is set by the chunk, not
by --n, besides the largest 1% of the errors with --check (the 99th percentile
is exact, over all binaries). The files are the same, byte for byte, for any
chunk and worker count.

With --accuracy EPS a pilot (--pilot binaries, evenly spaced; default 256)
first chooses the method and tolerances: the cheapest point of a half-decade
grid whose --quantile (default 0.99) of angle errors (radians, as --check
measures them) against a converged reference (DP8 at rtol 1e-13) is at most
EPS. It prints the grid and writes pilot.json.

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
	cfg := precession.Config{N: *pf.n, Seed: *pf.seed, RTol: *pf.rtol, ATol: *pf.atol, Workers: *pf.workers, Check: *pf.check,
		Method: m, Engine: pf.engineName(), Chunk: *pf.chunk}
	// A job too large is refused before --out is created.
	err = pf.checkSize(func(chunk int) error {
		c := cfg
		c.Chunk = chunk
		return precession.CheckSize(c)
	}, precession.ChunkSize(cfg))
	if err != nil {
		return err
	}
	if err := pf.open(); err != nil {
		return err
	}
	defer pf.set.abort() // a failed run's stage, and --out if this run created it
	if t := pf.accuracyTarget(); t != nil {
		var rep *gradsolve.PilotReport
		cfg, rep, err = precession.ChooseAccuracy(ctx, cfg, *t)
		if err := pf.pilotDone(ctx, stdout, rep, err); err != nil {
			return err
		}
	}
	bar := newProgressBar(stderr, time.Second)
	cfg.Progress = bar.update
	sink, err := newPrecessionSink(ctx, pf.set, cfg.N, cfg.Check)
	if err != nil {
		return err
	}
	defer sink.close()
	sum, err := precession.RunChunks(ctx, cfg, sink.add)
	bar.finish()
	if err != nil {
		return translate(pf.sizeError(err))
	}
	if err := sink.close(); err != nil {
		return err
	}
	runtime.GC() // the last chunk is garbage: collect it before the figure (as halo does)
	c := sum.Config
	first := sink.solve.first
	st := precessionStats{runStats: newAppRunStats(c.N, c.Seed, c.RTol, c.ATol, c.Check, &sink.solve, &sink.ref, sum.Chunks, c.Chunk),
		RStart: precession.RStart, REnd: precession.REnd,
		P99: sum.P99, FixtureErr: sum.FixtureErr, Requirement: precession.Requirement, RequirementMet: sum.Pass}
	if pf.set != nil {
		if err := writePrecession(ctx, pf.set, sum, sink, &st, start); err != nil {
			return err
		}
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "gradsolve precession: %d binaries (seed %d), r from %g M to %g M\n", c.N, c.Seed, precession.RStart, precession.REnd)
	fmt.Fprintf(tw, "  method\t%s, rtol %g, atol %g, %s\n", first.Method, c.RTol, c.ATol, counted(first.Workers, "worker", "workers"))
	fmt.Fprintf(tw, "  solve\t%v\t(%.0f steps per binary, %.3g µs per binary)\n", sink.solve.elapsed.Round(time.Millisecond),
		float64(sink.solve.total.Accepted)/float64(c.N), float64(sink.solve.elapsed.Nanoseconds())/1e3/float64(c.N))
	if c.Check {
		verdict := func(e float64) string {
			if e <= precession.Requirement {
				return "met"
			}
			return "NOT met"
		}
		fmt.Fprintf(tw, "  reference\t%v\t\n", sink.ref.elapsed.Round(time.Millisecond))
		fmt.Fprintf(tw, "  99th percentile angle error\t%.2e rad\t(requirement %.0e: %s)\n", sum.P99, precession.Requirement, verdict(sum.P99))
		fmt.Fprintf(tw, "  §C.7 fixture angle error\t%.2e rad\t(requirement %.0e: %s)\n", sum.FixtureErr, precession.Requirement, verdict(sum.FixtureErr))
	}
	pf.printChunks(tw, sum.Chunks, c.Chunk, "binaries")
	if *pf.out != "" {
		fmt.Fprintf(tw, "  wrote\t%s\t\n", *pf.out)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if c.Check && !sum.Pass {
		return fmt.Errorf("precession: the accuracy requirement is not met (p99 %.2e rad, fixture %.2e rad)", sum.P99, sum.FixtureErr)
	}
	return nil
}

// precessionSink takes a run's chunks as they come: it writes their
// rows into the .npy files (with --out), gathers the solves' summaries,
// and counts the tilts of tilts.png.
type precessionSink struct {
	rw         *rowWriters
	solve, ref summary
	tilts      [4]tiltCounts // θ1 at 100 M and 10 M, θ2 at 100 M and 10 M
	a100, a10  []float64     // a chunk's angles_*.npy rows
}

// newPrecessionSink opens the row files of a run of n binaries in out
// (nil: no files).
func newPrecessionSink(ctx context.Context, out *outSet, n int, check bool) (*precessionSink, error) {
	p := &precessionSink{}
	if out == nil {
		return p, nil
	}
	p.rw = newRowWriters(ctx, out)
	files := []outFile{{"params.npy", []int{n, 3}}, {"angles_100.npy", []int{n, 3}}, {"angles_10.npy", []int{n, 3}}, {"y_final.npy", []int{n, 10}}}
	if check {
		files = append(files, outFile{"errors.npy", []int{n}})
	}
	for _, f := range files {
		if err := p.rw.float64s(f.name, f.shape); err != nil {
			p.close()
			return nil, err
		}
	}
	return p, nil
}

// add takes the chunk ch.
func (p *precessionSink) add(ch *precession.Chunk) error {
	p.solve.add(ch.Solve, ch.Lo)
	if ch.Ref != nil {
		p.ref.add(ch.Ref, ch.Lo)
	}
	pop := ch.Population
	p.tilts[0].add(pop.Theta1)
	p.tilts[1].add(ch.Theta1)
	p.tilts[2].add(pop.Theta2)
	p.tilts[3].add(ch.Theta2)
	if p.rw == nil {
		return nil
	}
	p.a100, p.a10 = p.a100[:0], p.a10[:0]
	for i := range ch.Theta1 {
		p.a100 = append(p.a100, pop.Theta1[i], pop.Theta2[i], pop.DPhi[i])
		p.a10 = append(p.a10, ch.Theta1[i], ch.Theta2[i], ch.DPhi[i])
	}
	for _, f := range []struct {
		name string
		data []float64
	}{{"params.npy", pop.P}, {"angles_100.npy", p.a100}, {"angles_10.npy", p.a10}, {"y_final.npy", ch.Solve.Y}} {
		if err := p.rw.put(f.name, f.data); err != nil {
			return err
		}
	}
	if ch.Err != nil {
		return p.rw.put("errors.npy", ch.Err)
	}
	return nil
}

// close finishes the files (once).
func (p *precessionSink) close() error {
	if p.rw == nil {
		return nil
	}
	return p.rw.close()
}

// writePrecession writes the figure and stats.json and commits the set
// (the arrays are written: precessionSink).
func writePrecession(ctx context.Context, out *outSet, sum *precession.Summary, sink *precessionSink, st *precessionStats, start time.Time) error {
	n := sum.Config.N
	t := &sink.tilts
	err := out.writeWith(ctx, "tilts.png", func(path string) error {
		return plots.Panels(path, fmt.Sprintf("Spin tilts of %d binaries, isotropic at r = 100 M", n),
			[]plots.Panel{
				{Title: "θ1 (primary)", XLabel: "θ1 (rad)", YLabel: "probability density", Series: tiltSeries(&t[0], &t[1])},
				{Title: "θ2 (secondary)", XLabel: "θ2 (rad)", YLabel: "probability density", Series: tiltSeries(&t[2], &t[3])},
			})
	})
	if err != nil {
		return err
	}
	return commitStats(ctx, out, st, &st.runStats, start)
}

// tiltBins is the number of bins of tilts.png's histograms, on [0, π].
const tiltBins = 30

// tiltCounts is a histogram of angles in [0, π], counted chunk by chunk
// (the counts of all n, whatever the chunks).
type tiltCounts struct {
	counts [tiltBins]float64
	n      int
}

func (h *tiltCounts) add(v []float64) {
	for _, x := range v {
		k := min(tiltBins-1, max(0, int(x/3.141592653589793*tiltBins)))
		h.counts[k]++
	}
	h.n += len(v)
}

// tiltSeries returns the densities of the tilts at r = 100 M and 10 M as
// step-like line series.
func tiltSeries(at100, at10 *tiltCounts) []plots.Series {
	mk := func(name string, h *tiltCounts) plots.Series {
		w := 3.141592653589793 / tiltBins
		var s plots.Series
		s.Name = name
		for k, c := range h.counts {
			d := c / (float64(h.n) * w)
			s.X = append(s.X, float64(k)*w, float64(k+1)*w)
			s.Y = append(s.Y, d, d)
		}
		return s
	}
	return []plots.Series{mk("r = 100 M", at100), mk("r = 10 M", at10)}
}
