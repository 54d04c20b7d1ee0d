package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/memory"
	"github.com/gradsolve/gradsolve/method"
)

// populationFlags are the flags shared by the applications that solve a
// drawn population (halo, precession).
type populationFlags struct {
	fs         *flag.FlagSet
	name       string
	n          *int
	seed       *uint64
	rtol, atol *float64
	meth       *string
	engine     *string
	workers    *int
	out        *string
	check      *bool
	chunk      *int
	accuracy   *float64
	quantile   *float64
	pilot      *int
	set        *outSet // the --out directory, once open opened it
}

// newPopulationFlags defines the shared flags; nDefault and what ("stars",
// "binaries") describe --n.
func newPopulationFlags(name, usage string, nDefault int, what string, stderr io.Writer) *populationFlags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	pf := &populationFlags{fs: fs, name: name,
		n:        fs.Int("n", nDefault, "number of "+what),
		seed:     fs.Uint64("seed", 1, "seed of the population"),
		rtol:     fs.Float64("rtol", 0, "relative tolerance (default: the application's, which meets the requirement)"),
		atol:     fs.Float64("atol", 0, "absolute tolerance (default: the application's)"),
		meth:     fs.String("method", "", "tsit5, dp5, vern7, dp8 (default: the application's)"),
		engine:   fs.String("engine", "auto", "engine of the solve: "+strings.Join(gradsolve.Engines(), ", ")+" (auto: the router picks)"),
		workers:  fs.Int("workers", 0, "worker goroutines (0: all cores)"),
		out:      fs.String("out", "", "output directory (stats.json is written last: present only beside a complete set of one run)"),
		check:    fs.Bool("check", false, "compare with a converged reference and fail unless the requirement is met"),
		chunk:    fs.Int("chunk", 0, what+" drawn and solved at a time, their rows written out before the next (0: automatic, as many as keep a chunk's arrays within 256 MiB and a quarter of the available memory); the outputs are the same, bit for bit, for any chunk"),
		accuracy: fs.Float64("accuracy", 0, "error to meet instead of a tolerance, in the application's units (those of --check): a pilot on --pilot "+what+" evenly spaced over the run picks the cheapest method and tolerance of a half-decade grid whose --quantile of errors against a converged reference is at most EPS (--method narrows it to one method; --atol/--rtol give the ratio atol/rtol); writes pilot.json"),
		quantile: fs.Float64("quantile", gradsolve.DefaultQuantile, "with --accuracy: the fraction of the pilot's "+what+" that must meet it"),
		pilot:    fs.Int("pilot", gradsolve.DefaultPilot, "with --accuracy: the pilot's "+what+", evenly spaced over the run"),
	}
	fs.Usage = func() { fmt.Fprint(stderr, usage); fs.PrintDefaults() }
	return pf
}

// parse parses and validates args. It returns help = true when the
// usage was asked for (and printed), and the method named by --method
// (nil for the application's default). It does not touch --out: open
// does, once the application has checked the job's size.
func (pf *populationFlags) parse(args []string) (m *method.Tableau, help bool, err error) {
	pos, err := parseInterspersed(pf.fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	switch {
	case len(pos) > 0:
		return nil, false, fmt.Errorf("%s: unexpected argument %q", pf.name, pos[0])
	case *pf.n < 1:
		return nil, false, fmt.Errorf("--n = %d: must be ≥ 1", *pf.n)
	case *pf.workers < 0:
		return nil, false, fmt.Errorf("--workers = %d: must be ≥ 0 (0: all cores)", *pf.workers)
	case *pf.chunk < 0:
		return nil, false, fmt.Errorf("--chunk = %d: must be ≥ 1, or 0 for the automatic chunk", *pf.chunk)
	}
	if err := checkAccuracyFlags(&solveFlags{accuracy: *pf.accuracy, quantile: *pf.quantile, pilot: *pf.pilot}, false); err != nil {
		return nil, false, err
	}
	if err := checkAppTolerances(pf.name, *pf.rtol, *pf.atol); err != nil {
		return nil, false, err
	}
	if *pf.meth != "" {
		if m, err = method.ByName(*pf.meth); err != nil {
			return nil, false, fmt.Errorf("--method: %w", err)
		}
	}
	if *pf.engine != "auto" && !slices.Contains(gradsolve.Engines(), *pf.engine) {
		return nil, false, fmt.Errorf("--engine %q: known engines: %s (or auto)", *pf.engine, strings.Join(gradsolve.Engines(), ", "))
	}
	return m, false, nil
}

// engineName is --engine as the library takes it: "" for auto.
func (pf *populationFlags) engineName() string {
	if *pf.engine == "auto" {
		return ""
	}
	return *pf.engine
}

// open opens the --out directory, if one was given, as pf.set.
func (pf *populationFlags) open() (err error) {
	if *pf.out != "" {
		pf.set, err = openOutSet(*pf.out, "--out")
	}
	return err
}

// checkRTol checks the value of --rtol.
func checkRTol(v float64) error {
	switch {
	case !(v > 0) || math.IsInf(v, 0):
		return fmt.Errorf("--rtol = %g: must be finite and > 0", v)
	case v < gradsolve.MinRTol:
		return fmt.Errorf("--rtol = %g: must be ≥ %.3g (ten units of roundoff; no method can meet a tighter tolerance)", v, gradsolve.MinRTol)
	}
	return nil
}

// checkATol checks the value of --atol.
func checkATol(v float64) error {
	if !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf("--atol = %g: must be finite and > 0", v)
	}
	return nil
}

// checkAppTolerances checks an application's --rtol and --atol: both 0
// (unset: the application's defaults), or both valid.
func checkAppTolerances(app string, rtol, atol float64) error {
	if rtol != 0 {
		if err := checkRTol(rtol); err != nil {
			return err
		}
	}
	if atol != 0 {
		if err := checkATol(atol); err != nil {
			return err
		}
	}
	if (rtol == 0) != (atol == 0) {
		return fmt.Errorf("%s: give both --rtol and --atol, or neither (the application's defaults)", app)
	}
	return nil
}

// sizeError rewords an application's refusal of a job too large in
// terms of --n.
func (pf *populationFlags) sizeError(err error) error {
	return appSizeError(err, "--n", *pf.n)
}

// checkSize runs an application's size check, check(chunk) for the
// run in chunks of chunk (0: auto, the application's automatic chunk),
// and rewords a refusal in the command's terms: the chunk, when the run
// in chunks of one would fit, and --n otherwise (what the run keeps for
// all its trajectories, or the size of its files, is what does not fit).
func (pf *populationFlags) checkSize(check func(chunk int) error, auto int) error {
	err := check(*pf.chunk)
	if err == nil {
		return nil
	}
	var me *memory.Error
	if !errors.As(err, &me) || check(1) != nil {
		return pf.sizeError(err)
	}
	size := min(auto, *pf.n)
	subject := fmt.Sprintf("the automatic chunk of --n %d (n = %d)", *pf.n, size)
	advice := "give a smaller --chunk"
	if *pf.chunk > 0 {
		size = min(*pf.chunk, *pf.n)
		subject = fmt.Sprintf("a --chunk of --n %d (n = %d)", *pf.n, size)
		advice = fmt.Sprintf("lower --chunk (now %d), or leave it out for the automatic chunk", size)
	}
	return asFlagSizeError(err, subject, advice, fileNames)
}

// printChunks prints how a run was cut, when it was cut.
func (pf *populationFlags) printChunks(w io.Writer, chunks, size int, what string) {
	if chunks < 2 {
		return
	}
	how := "--chunk"
	if *pf.chunk == 0 {
		how = "automatic: --chunk 0"
	}
	fmt.Fprintf(w, "  streamed\tin %d chunks of at most %d %s (%s)\n", chunks, size, what, how)
}

// accuracyTarget is the target of --accuracy, nil without it.
func (pf *populationFlags) accuracyTarget() *gradsolve.AccuracyTarget {
	if *pf.accuracy == 0 {
		return nil
	}
	return &gradsolve.AccuracyTarget{Eps: *pf.accuracy, Quantile: *pf.quantile, Pilot: *pf.pilot}
}

// pilotDone reports the pilot of --accuracy, whose report is rep (nil
// if it did not run) and error err: it prints the grid and stages
// pilot.json (with --out), and returns err in the command's terms.
func (pf *populationFlags) pilotDone(ctx context.Context, stdout io.Writer, rep *gradsolve.PilotReport, err error) error {
	if rep != nil {
		printPilot(stdout, rep)
	}
	if err != nil {
		return translate(err)
	}
	if pf.set == nil {
		return nil
	}
	return pf.set.writeFile(ctx, "pilot.json", func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	})
}

// runStats are the stats.json fields every population application
// writes about its solve.
type runStats struct {
	runSet
	N            int     `json:"n"`
	Seed         uint64  `json:"seed"`
	Method       string  `json:"method"`
	Engine       string  `json:"engine"`
	EngineReason string  `json:"engine_reason"`
	RTol         float64 `json:"rtol"`
	ATol         float64 `json:"atol"`
	Workers      int     `json:"workers"`
	SolveSeconds float64 `json:"solve_seconds"`
	RefSeconds   float64 `json:"reference_seconds"`
	WallSeconds  float64 `json:"wall_seconds"`
	Accepted     int     `json:"accepted_steps"`
	Rejected     int     `json:"rejected_steps"`
	Failed       int     `json:"failed"`
	Checked      bool    `json:"checked"`
	// Chunks is the number of chunks the run was solved in, Chunk the
	// most trajectories of one.
	Chunks int `json:"chunks"`
	Chunk  int `json:"chunk"`
}

// newAppRunStats fills the shared fields from the summaries of a run's
// solves and, with check, its reference's (the engine and its reason
// are the first chunk's), and the chunks it ran in.
func newAppRunStats(n int, seed uint64, rtol, atol float64, check bool, solve, ref *summary, chunks, chunk int) runStats {
	first := solve.first
	st := runStats{N: n, Seed: seed, Method: first.Method, Engine: first.Engine, EngineReason: flagTerms(first.EngineReason), RTol: rtol, ATol: atol, Workers: first.Workers,
		SolveSeconds: solve.elapsed.Seconds(), Accepted: solve.total.Accepted, Rejected: solve.total.Rejected,
		Failed: solve.failed(), Checked: check, Chunks: chunks, Chunk: chunk}
	if check && ref.first != nil {
		st.RefSeconds = ref.elapsed.Seconds()
	}
	return st
}
