package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve/internal/engine/cpu"
)

func runCmd(args ...string) (string, string, error) {
	var out, errb bytes.Buffer
	err := run(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), err
}

func TestSolveDefaultsSmall(t *testing.T) {
	out, _, err := runCmd("solve", "-n", "300", "-ref", "50")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"lorenz (dim 3), 300 trajectories", "rho from 0 to 21", "method Tsit5", "steps", "ns per step attempt", "300 Success", "99th percentile"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestSolveEachSystem(t *testing.T) {
	for _, sys := range []string{"lorenz", "vdp", "lorenz96", "linear", "kepler", "halo"} {
		out, _, err := runCmd("solve", "-system", sys, "-n", "20", "-ref", "5", "-method", "dp8", "-rtol", "1e-9", "-atol", "1e-12")
		if err != nil {
			t.Errorf("%s: %v", sys, err)
			continue
		}
		if !strings.Contains(out, "20 Success") {
			t.Errorf("%s: not all succeeded:\n%s", sys, out)
		}
	}
}

func TestBadArguments(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{nil, "no command"},
		{[]string{"frobnicate"}, "unknown command"},
		{[]string{"solve", "-system", "nope"}, "unknown system"},
		{[]string{"solve", "-method", "rk4"}, "known methods"},
		{[]string{"solve", "-n", "0"}, "--n = 0"},
		{[]string{"solve", "-rtol", "-1"}, "rtol = -1"},
		{[]string{"solve", "-param", "nope=1:2"}, "no parameter"},
		{[]string{"solve", "-param", "rho"}, "NAME=VALUE or NAME=LO:HI"},
		{[]string{"solve", "-param", "rho=a:b"}, "with numbers"},
		{[]string{"solve", "-t1", "0"}, "t0 = t1"},
		{[]string{"solve", "missing.ode"}, "missing.ode"},
		{[]string{"solve", "a.ode", "b.ode"}, "one problem file"},
		{[]string{"solve", "--bogus"}, "flag provided but not defined"},
		{[]string{"solve", "../../examples/lorenz.ode", "--system", "vdp"}, "not both"},
		{[]string{"solve", "../../examples/lorenz.ode", "--param", "mu=1"}, `no parameter "mu"`},
		{[]string{"solve", "../../examples/lorenz.ode", "--method", "euler"}, "known methods"},
		{[]string{"solve", "../../examples/lorenz.ode", "--saveat", "0.5,x"}, "--saveat"},
		{[]string{"solve", "../../examples/lorenz.ode", "--t0", "abc"}, "--t0"},
		{[]string{"solve", "../../examples/lorenz.ode", "--params", "p.txt"}, "want a .npy file"},
	}
	for _, c := range cases {
		_, _, err := runCmd(c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want it to mention %q", c.args, err, c.want)
		}
	}
}

func TestList(t *testing.T) {
	out, _, err := runCmd("list")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"lorenz", "halo", "tsit5", "dp8", "doi:"} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q", want)
		}
	}
}

// Stiff built-ins and problem files go to Rodas5P by themselves, and
// --method picks a Rosenbrock method by name.
func TestStiffRouting(t *testing.T) {
	for _, sys := range []string{"robertson", "hires", "vdp_stiff", "linear_stiff"} {
		out, _, err := runCmd("solve", "-system", sys, "-n", "3", "-ref", "0", "-rtol", "1e-6", "-atol", "1e-10")
		if err != nil {
			t.Fatalf("%s: %v", sys, err)
		}
		if !strings.Contains(out, "method Rodas5P") || !strings.Contains(out, "3 Success") || !strings.Contains(out, "LU factorisations") {
			t.Errorf("%s:\n%s", sys, out)
		}
	}
	out, _, err := runCmd("solve", "../../examples/robertson.ode", "--method", "rosenbrock23", "--rtol", "1e-6", "--atol", "1e-10")
	if err != nil || !strings.Contains(out, "method Rosenbrock23") || !strings.Contains(out, "1 Success") {
		t.Errorf("rosenbrock23 on robertson.ode: %v\n%s", err, out)
	}
	if _, _, err := runCmd("solve", "../../examples/hires.ode", "--saveat", "1,2", "--dense", "-q"); err != nil {
		t.Errorf("--dense with Rodas5P: %v", err)
	}
	if _, _, err := runCmd("solve", "../../examples/lorenz.ode", "--saveat", "0.5", "--dense", "-q"); err == nil || !strings.Contains(err.Error(), "--dense") {
		t.Errorf("--dense with an explicit method: %v", err)
	}
	if out, _, _ := runCmd("list"); !strings.Contains(out, "rodas5p (stiff)") || !strings.Contains(out, "cpu-erk, cpu-ros") {
		t.Errorf("list lacks the Rosenbrock methods or the engines:\n%s", out)
	}
}

// --engine names the engine: its default method runs when --method
// does not name one, and stdout and stats.json say which engine ran
// and why, in the command's terms; without it the router's pick and
// reason are reported.
//
// The router's reason for an explicit method names the engines it
// passed over — first cuda (unavailable without a GPU; below its
// smallest ensemble with one), then cpu-lanes (for two trajectories, or
// where it cannot run here) — so the reasons below are prefixes; with
// eight trajectories of
// a problem compiled from formulas, the router picks cpu-lanes where it
// can run.
func TestEngineFlag(t *testing.T) {
	lanes := "cpu-erk"
	if cpu.LanesAvailable() == nil {
		lanes = "cpu-lanes"
	}
	explicit := "the registered engine for explicit Runge–Kutta methods"
	for _, c := range []struct {
		args                 []string
		engine, meth, reason string
	}{
		{[]string{"solve", "../../examples/lorenz.ode", "--engine", "cpu-ros", "--ref", "0", "--n", "2"}, "cpu-ros", "Rodas5P", "named by --engine"},
		{[]string{"solve", "../../examples/robertson.ode", "--engine", "cpu-erk", "--t1", "1", "--n", "2"}, "cpu-erk", "Tsit5", "named by --engine"},
		{[]string{"solve", "../../examples/lorenz.ode", "--n", "2"}, "cpu-erk", "Tsit5", explicit + "; passed over: cuda: "},
		{[]string{"solve", "../../examples/lorenz.ode", "--n", "8"}, lanes, "Tsit5", explicit},
		{[]string{"solve", "../../examples/lorenz.ode", "--n", "8", "--engine", "cpu-lanes"}, lanes, "Tsit5", "named by --engine"},
		{[]string{"grad", "../../examples/robertson.ode", "--t1", "1", "--loss", "sumsq", "--engine", "cpu-ros", "--method", "rosenbrock23", "--n", "2"}, "cpu-ros", "Rosenbrock23", "named by --engine"},
	} {
		if lanes != "cpu-lanes" && slices.Contains(c.args, "cpu-lanes") {
			continue // refused here: TestMessagesNameFlags
		}
		dir := t.TempDir()
		out, _, err := runCmd(append(c.args, "--out", dir)...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if !strings.Contains(out, "method "+c.meth) || !strings.Contains(out, "engine "+c.engine+" ("+c.reason) || goField.MatchString(out) {
			t.Errorf("%v:\n%s", c.args, out)
		}
		st := readStats(t, dir)
		if st["engine"] != c.engine || st["method"] != c.meth || !strings.HasPrefix(st["engine_reason"].(string), c.reason) {
			t.Errorf("%v: stats.json engine %v (%v), method %v", c.args, st["engine"], st["engine_reason"], st["method"])
		}
		if c.args[0] == "grad" && (st["router_engine"] != c.engine || goField.MatchString(st["mode_reason"].(string))) {
			t.Errorf("%v: router_engine %v, mode_reason %v", c.args, st["router_engine"], st["mode_reason"])
		}
	}
}
