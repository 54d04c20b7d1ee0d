package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/gradsolve/gradsolve"
)

// addAccuracyFlags adds solve's and grad's --accuracy, --quantile and
// --pilot.
func addAccuracyFlags(fs *flag.FlagSet, f *solveFlags) {
	fs.Float64Var(&f.accuracy, "accuracy", 0, "relative error of the final states to meet instead of a tolerance: a pilot on a subsample (--pilot) picks the cheapest method and tolerance of a half-decade grid whose --quantile of errors against a converged reference is at most EPS (--method narrows it to one method; --atol/--rtol give the ratio atol/rtol); writes pilot.json")
	fs.Float64Var(&f.quantile, "quantile", gradsolve.DefaultQuantile, "with --accuracy: the fraction of the pilot's trajectories that must meet it")
	fs.IntVar(&f.pilot, "pilot", gradsolve.DefaultPilot, "with --accuracy: the pilot's trajectories, evenly spaced over the ensemble")
}

// checkAccuracyFlags checks --accuracy and its companions.
func checkAccuracyFlags(fl *solveFlags, sharded bool) error {
	switch {
	case fl.accuracy == 0:
		return nil
	case !(fl.accuracy > 0) || math.IsInf(fl.accuracy, 0):
		return fmt.Errorf("--accuracy %g: must be a finite relative error > 0", fl.accuracy)
	case !(fl.quantile > 0 && fl.quantile <= 1):
		return fmt.Errorf("--quantile %g: must lie in (0, 1]", fl.quantile)
	case fl.pilot < 1:
		return fmt.Errorf("--pilot %d: must be ≥ 1", fl.pilot)
	case sharded:
		return fmt.Errorf("--accuracy with a shard (--shard or the cluster's variables): each shard's pilot could choose differently; choose once with --accuracy on the whole ensemble, then run the shards with its --method, --rtol and --atol")
	}
	return nil
}

// chooseTolerances runs the pilot of --accuracy, sets opts to the
// configuration it chose, prints its table (unless -q) and stages
// pilot.json.
func (j *job) chooseTolerances(ctx context.Context, opts *gradsolve.Options, stdout io.Writer) error {
	fl := j.fl
	po := *opts
	po.Progress = nil
	if method, _, err := methodAndEngine(fl.method, fl.engine); err == nil {
		po.Method = method
	}
	// The pilot's trajectories, evenly spaced as ChooseOptions spaces
	// them, made alone: the ensemble itself may be too large to hold.
	np := min(fl.pilot, j.in.n)
	idx := make([]int, np)
	for i := range idx {
		idx[i] = int(int64(i) * int64(j.in.n) / int64(np))
	}
	sub, err := j.in.gather(idx)
	if err != nil {
		return err
	}
	chosen, rep, err := gradsolve.ChooseOptions(ctx, j.pr, sub, &po, gradsolve.AccuracyTarget{Eps: fl.accuracy, Quantile: fl.quantile, Pilot: np})
	if rep != nil {
		rep.Trajectories = idx
	}
	if rep != nil && !fl.quietly {
		printPilot(stdout, rep)
	}
	if err != nil {
		return j.userError(err)
	}
	opts.Method, opts.RTol, opts.ATol = chosen.Method, chosen.RTol, chosen.ATol
	if j.out != nil {
		return j.out.writeFile(ctx, "pilot.json", func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(rep)
		})
	}
	return nil
}

// printPilot prints the pilot's grid and its choice.
func printPilot(w io.Writer, rep *gradsolve.PilotReport) {
	fmt.Fprintf(w, "gradsolve: --accuracy %g at the %g quantile: a pilot of %d trajectories against %s (%.3g s)\n",
		rep.Eps, rep.Quantile, len(rep.Trajectories), rep.Reference, rep.ReferenceSeconds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  method\trtol\tatol\tquantile error\tmedian\tcost (f-evaluations)\tseconds\t")
	for i, pt := range rep.Points {
		mark := ""
		if i == rep.Chosen {
			mark = "  ← chosen (the cheapest that passes)"
		} else if pt.Passes {
			mark = "  passes"
		}
		fmt.Fprintf(tw, "  %s\t%.3g\t%.3g\t%.3g\t%.3g\t%d\t%.3g\t%s\n", pt.Method, pt.RTol, pt.ATol, pt.Quantile, pt.Median, pt.Cost, pt.Seconds, mark)
	}
	tw.Flush()
	fmt.Fprintf(w, "  pilot: %.3g s\n", rep.Seconds)
}
