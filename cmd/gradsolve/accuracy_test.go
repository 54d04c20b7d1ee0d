package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve"
)

// solve --accuracy runs the pilot, prints its grid, writes pilot.json,
// and solves the ensemble with the chosen method and tolerances (which
// stats.json records).
func TestSolveAccuracy(t *testing.T) {
	out := t.TempDir()
	stdout, _, err := runCmd("solve", "../../examples/halo.ode", "--n", "64", "--param", "q=0.6:1", "--accuracy", "1e-4", "--pilot", "16",
		"--rtol", "1", "--atol", "1", "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	var rep gradsolve.PilotReport
	readJSON(t, filepath.Join(out, "pilot.json"), &rep)
	if rep.Chosen < 0 || rep.Chosen >= len(rep.Points) || len(rep.Trajectories) != 16 || rep.Eps != 1e-4 || rep.Quantile != 0.99 {
		t.Fatalf("pilot.json: chosen %d of %d points, %d trajectories, eps %g, quantile %g", rep.Chosen, len(rep.Points), len(rep.Trajectories), rep.Eps, rep.Quantile)
	}
	ch := rep.Points[rep.Chosen]
	if !ch.Passes || ch.Quantile > 1e-4 {
		t.Errorf("the chosen point %+v does not pass", ch)
	}
	st := readStats(t, out)
	if st["method"] != ch.Method || st["rtol"] != ch.RTol || st["atol"] != ch.ATol {
		t.Errorf("stats.json: method %v rtol %v atol %v, want the chosen %s %g %g", st["method"], st["rtol"], st["atol"], ch.Method, ch.RTol, ch.ATol)
	}
	if !strings.Contains(stdout, "← chosen (the cheapest that passes)") || !strings.Contains(stdout, "a pilot of 16 trajectories") {
		t.Errorf("summary:\n%s", stdout)
	}
	// The --ref check of the run compares with a reference at the atol
	// the pilot chose, not the flag's (--atol 1 here): with the pilot on
	// the whole ensemble, its 99th percentile meets the target.
	stdout, _, err = runCmd("solve", "../../examples/halo.ode", "--n", "64", "--param", "q=0.6:1", "--accuracy", "1e-4", "--pilot", "64",
		"--rtol", "1", "--atol", "1", "--ref", "64")
	if err != nil {
		t.Fatal(err)
	}
	var med, p99, worst float64
	i := strings.Index(stdout, "accuracy vs DP8")
	if i < 0 || !strings.Contains(stdout[i:], "    median ") {
		t.Fatalf("no --ref check in:\n%s", stdout)
	}
	i += strings.Index(stdout[i:], "    median ") + 4
	if _, err := fmt.Sscanf(stdout[i:], "median %g, 99th percentile %g, max %g", &med, &p99, &worst); err != nil || p99 > 1e-4 {
		t.Errorf("--accuracy 1e-4 with the pilot on every trajectory: the run's 99th percentile error %g (%v), want ≤ 1e-4:\n%s", p99, err, stdout)
	}
	// --method narrows the grid to one method.
	out2 := t.TempDir()
	if _, _, err := runCmd("solve", "../../examples/halo.ode", "--n", "16", "--accuracy", "1e-3", "--pilot", "8", "--method", "vern7", "--out", out2, "-q"); err != nil {
		t.Fatal(err)
	}
	var rep2 gradsolve.PilotReport
	readJSON(t, filepath.Join(out2, "pilot.json"), &rep2)
	for _, pt := range rep2.Points {
		if pt.Method != "Vern7" {
			t.Errorf("--method vern7: the pilot tried %s", pt.Method)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--accuracy", "-1"}, "--accuracy -1: must be a finite relative error > 0"},
		{[]string{"--accuracy", "1e-4", "--quantile", "2"}, "--quantile 2: must lie in (0, 1]"},
		{[]string{"--accuracy", "1e-4", "--pilot", "0"}, "--pilot 0: must be ≥ 1"},
		{[]string{"--accuracy", "1e-4", "--shard", "0/2"}, "--accuracy with a shard"},
		{[]string{"--accuracy", "1e-14"}, "below what the reference"},
	} {
		_, _, err := runCmd(append([]string{"solve", "--system", "lorenz", "--n", "8", "-q"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error containing %q", c.args, err, c.want)
		}
	}
	// grad: the pilot chooses the tolerances of the solve it
	// differentiates.
	out3 := t.TempDir()
	stdout, _, err = runCmd("grad", "../../examples/halo.ode", "--n", "32", "--param", "q=0.6:1", "--accuracy", "1e-4", "--pilot", "8", "--loss", "sumsq", "--out", out3)
	if err != nil {
		t.Fatal(err)
	}
	var rep3 gradsolve.PilotReport
	readJSON(t, filepath.Join(out3, "pilot.json"), &rep3)
	ch3 := rep3.Points[rep3.Chosen]
	if st := readStats(t, out3); st["method"] != ch3.Method || st["rtol"] != ch3.RTol || st["loss"] == nil {
		t.Errorf("grad --accuracy: stats.json method %v rtol %v loss %v, want the chosen %s %g", st["method"], st["rtol"], st["loss"], ch3.Method, ch3.RTol)
	}
	if !strings.Contains(stdout, "← chosen") || !strings.Contains(stdout, "gradient by") {
		t.Errorf("grad --accuracy summary:\n%s", stdout)
	}
}
