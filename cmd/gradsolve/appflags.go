package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/gradsolve/gradsolve"
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
	set        *outSet // the --out directory, once open opened it
}

// newPopulationFlags defines the shared flags; nDefault and what ("stars",
// "binaries") describe --n.
func newPopulationFlags(name, usage string, nDefault int, what string, stderr io.Writer) *populationFlags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	pf := &populationFlags{fs: fs, name: name,
		n:       fs.Int("n", nDefault, "number of "+what),
		seed:    fs.Uint64("seed", 1, "seed of the population"),
		rtol:    fs.Float64("rtol", 0, "relative tolerance (default: the application's, which meets the requirement)"),
		atol:    fs.Float64("atol", 0, "absolute tolerance (default: the application's)"),
		meth:    fs.String("method", "", "tsit5, dp5, vern7, dp8 (default: the application's)"),
		engine:  fs.String("engine", "auto", "engine of the solve: "+strings.Join(gradsolve.Engines(), ", ")+" (auto: the router picks)"),
		workers: fs.Int("workers", 0, "worker goroutines (0: all cores)"),
		out:     fs.String("out", "", "output directory (stats.json is written last: present only beside a complete set of one run)"),
		check:   fs.Bool("check", false, "compare with a converged reference and fail unless the requirement is met"),
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
}

// newRunStats fills the shared fields from a solve and, with check, its
// reference.
func newRunStats(n int, seed uint64, rtol, atol float64, check bool, solve, ref *gradsolve.Result) runStats {
	tot := solve.Total()
	st := runStats{N: n, Seed: seed, Method: solve.Method, Engine: solve.Engine, EngineReason: flagTerms(solve.EngineReason), RTol: rtol, ATol: atol, Workers: solve.Workers,
		SolveSeconds: solve.Elapsed.Seconds(), Accepted: tot.Accepted, Rejected: tot.Rejected,
		Failed: len(solve.Failed()), Checked: check}
	if check && ref != nil {
		st.RefSeconds = ref.Elapsed.Seconds()
	}
	return st
}
