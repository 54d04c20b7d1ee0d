package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/systems"
)

// defaultVary is the parameter sweep each built-in gets when --vary is
// not given.
var defaultVary = map[string]string{
	"lorenz":   "rho=0:21",
	"vdp":      "mu=0.5:5",
	"lorenz96": "F=4:12",
	"kepler":   "mu=0.5:2",
	"halo":     "q=0.6:1",
	"linear":   "",
}

type sweep struct {
	name   string
	index  int
	lo, hi float64
}

func parseVary(pr *ode.Problem, s string) (*sweep, error) {
	if s == "" || s == "none" {
		return nil, nil
	}
	name, rng, ok := strings.Cut(s, "=")
	lo, hi, ok2 := strings.Cut(rng, ":")
	if !ok || !ok2 {
		return nil, fmt.Errorf("--vary %q: want NAME=LO:HI, e.g. rho=0:21", s)
	}
	idx := slices.Index(pr.ParamNames, name)
	if idx < 0 {
		return nil, fmt.Errorf("--vary %q: %s has no parameter %q (parameters: %s)", s, pr.Name, name, strings.Join(pr.ParamNames, ", "))
	}
	a, err1 := strconv.ParseFloat(lo, 64)
	b, err2 := strconv.ParseFloat(hi, 64)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("--vary %q: %v", s, err)
	}
	return &sweep{name, idx, a, b}, nil
}

func solveCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("solve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		system  = fs.String("system", "lorenz", "built-in system: lorenz, vdp, lorenz96, linear, kepler, halo")
		n       = fs.Int("n", 10000, "number of trajectories")
		vary    = fs.String("vary", "", "parameter sweep across the ensemble, NAME=LO:HI (linear spacing); default per system, 'none' for no sweep")
		meth    = fs.String("method", "tsit5", "method: tsit5, dp5, vern7, dp8")
		rtol    = fs.Float64("rtol", 1e-8, "relative tolerance")
		atol    = fs.Float64("atol", 1e-11, "absolute tolerance")
		t1      = fs.Float64("t1", math.NaN(), "end time (default: the system's)")
		workers = fs.Int("workers", 0, "worker goroutines (0: all cores)")
		refN    = fs.Int("ref", 1000, "trajectories to check against the reference (0: none)")
	)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: gradsolve solve [flags]\n\nSolve an ensemble of a built-in system, print what was done, and compare a\nsample with a converged reference (DP8 at rtol 1e-13).\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("solve: unexpected argument %q (problem files come with a later release; use --system)", fs.Arg(0))
	}
	pr, err := systems.ByName(*system)
	if err != nil {
		return err
	}
	tb, err := method.ByName(*meth)
	if err != nil {
		return err
	}
	if *n < 1 {
		return fmt.Errorf("--n = %d: must be ≥ 1", *n)
	}
	if *refN < 0 {
		return fmt.Errorf("--ref = %d: must be ≥ 0", *refN)
	}
	vs := *vary
	if vs == "" {
		vs = defaultVary[*system]
	}
	sw, err := parseVary(pr, vs)
	if err != nil {
		return err
	}
	ens := &gradsolve.Ensemble{N: *n, T0: []float64{pr.T0}, T1: []float64{pr.T1}}
	if !math.IsNaN(*t1) {
		ens.T1[0] = *t1
	}
	if sw != nil {
		ens.P = make([]float64, *n*pr.NumParams)
		for i := range *n {
			row := ens.P[i*pr.NumParams : (i+1)*pr.NumParams]
			copy(row, pr.P)
			row[sw.index] = sw.lo
			if *n > 1 {
				row[sw.index] = sw.lo + (sw.hi-sw.lo)*float64(i)/float64(*n-1)
			}
		}
	}
	opts := &gradsolve.Options{Method: tb, RTol: *rtol, ATol: *atol, Workers: *workers}
	res, err := gradsolve.Solve(ctx, pr, ens, opts)
	if err != nil {
		return err
	}
	report(stdout, pr, ens, sw, res)
	if *refN > 0 {
		return reference(ctx, stdout, pr, ens, res, min(*refN, *n), *atol)
	}
	return nil
}

func report(w io.Writer, pr *ode.Problem, ens *gradsolve.Ensemble, sw *sweep, res *gradsolve.Result) {
	o := res.Options
	fmt.Fprintf(w, "gradsolve: %s (dim %d), %d trajectories", pr.Name, pr.Dim, res.N)
	if sw != nil {
		fmt.Fprintf(w, ", %s from %g to %g", sw.name, sw.lo, sw.hi)
	}
	fmt.Fprintf(w, ", t from %g to %g\n", ens.T0[0], ens.T1[0])
	fmt.Fprintf(w, "  method %s, rtol %g, atol %g, %d workers\n", res.Method, o.RTolVec[0], o.ATolVec[0], res.Workers)
	tot := res.Total()
	att := tot.Attempts()
	el := res.Elapsed
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  wall time\t%v\t(%.3g µs per trajectory)\n", el.Round(time.Microsecond), float64(el.Microseconds())/float64(res.N))
	fmt.Fprintf(tw, "  steps\t%d accepted, %d rejected\t(%.1f per trajectory; %d f-evaluations)\n",
		tot.Accepted, tot.Rejected, float64(att)/float64(res.N), tot.FEvals)
	fmt.Fprintf(tw, "  cost\t%.1f ns per step attempt\t(wall time × workers / attempts)\n",
		float64(el.Nanoseconds())*float64(res.Workers)/float64(max(att, 1)))
	tw.Flush()
	counts := map[gradsolve.Status]int{}
	for _, s := range res.Status {
		counts[s]++
	}
	var parts []string
	for s := gradsolve.NotRun; s <= gradsolve.Cancelled; s++ {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	fmt.Fprintf(w, "  status: %s\n", strings.Join(parts, ", "))
	if err := res.Errs(); err != nil {
		fmt.Fprintf(w, "  %s\n", strings.ReplaceAll(err.Error(), "\n", "\n  "))
	}
}

// reference re-solves an evenly spaced sample of the ensemble with DP8
// at rtol 1e-13 and reports the relative 2-norm error of the final
// states.
func reference(ctx context.Context, w io.Writer, pr *ode.Problem, ens *gradsolve.Ensemble, res *gradsolve.Result, k int, atol float64) error {
	idx := make([]int, k)
	for j := range idx {
		idx[j] = j * res.N / k
	}
	sub := &gradsolve.Ensemble{N: k, T0: ens.T0, T1: ens.T1}
	if len(ens.P) > 0 {
		m := pr.NumParams
		sub.P = make([]float64, 0, k*m)
		for _, i := range idx {
			sub.P = append(sub.P, ens.P[i*m:(i+1)*m]...)
		}
	}
	const refRTol = 1e-13
	refATol := math.Max(atol*1e-3, 1e-300)
	ref, err := gradsolve.Solve(ctx, pr, sub, &gradsolve.Options{Method: method.DP8, RTol: refRTol, ATol: refATol, MaxSteps: 10_000_000})
	if err != nil {
		return err
	}
	var errs []float64
	for j, i := range idx {
		if res.Status[i] != gradsolve.Success || ref.Status[j] != gradsolve.Success {
			continue
		}
		a, b := res.Row(i), ref.Row(j)
		var num, den float64
		for d := range a {
			num += (a[d] - b[d]) * (a[d] - b[d])
			den += b[d] * b[d]
		}
		errs = append(errs, math.Sqrt(num/math.Max(den, 1e-300)))
	}
	if len(errs) == 0 {
		fmt.Fprintln(w, "  accuracy: no successful trajectory to compare")
		return nil
	}
	sort.Float64s(errs)
	q := func(f float64) float64 { return errs[min(len(errs)-1, int(math.Ceil(f*float64(len(errs))))-1)] }
	fmt.Fprintf(w, "  accuracy vs DP8 at rtol %g on %d trajectories (relative 2-norm error of the final state):\n", refRTol, len(errs))
	fmt.Fprintf(w, "    median %.2e, 99th percentile %.2e, max %.2e\n", q(0.5), q(0.99), errs[len(errs)-1])
	return nil
}

func listCmd(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "system\tdim\tparameters (defaults)\tspan\tsweep in solve")
	for _, pr := range systems.All() {
		var ps []string
		for i, name := range pr.ParamNames {
			ps = append(ps, fmt.Sprintf("%s=%.4g", name, pr.P[i]))
		}
		key := pr.Name
		if strings.HasPrefix(key, "lorenz96") {
			key = "lorenz96"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t[%g, %g]\t%s\n", key, pr.Dim, strings.Join(ps, " "), pr.T0, pr.T1, defaultVary[key])
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "method\tstages\torder\tFSAL\tsource")
	for _, tb := range method.All() {
		fmt.Fprintf(tw, "%s\t%d\t%d(%d)\t%v\t%s\n", strings.ToLower(tb.Name), tb.Stages(), tb.Order, tb.ErrOrder, tb.FSAL(), firstLine(tb.Source))
	}
	return tw.Flush()
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
