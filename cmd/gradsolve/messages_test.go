package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/npy"
)

// flagName matches a flag in a message: --n, -package.
var flagName = regexp.MustCompile(`(^|[\s":(])--?[a-z]`)

// Every message the command prints for bad input names a flag or a
// file, never a Go field, and carries one "gradsolve:" prefix.
func TestMessagesNameFlags(t *testing.T) {
	dir := t.TempDir()
	nanY0 := filepath.Join(dir, "y0.npy")
	if err := npy.WriteFloat64File(nanY0, []int{2, 3}, []float64{1, 0, 0, 1, math.NaN(), 0}); err != nil {
		t.Fatal(err)
	}
	infCot := filepath.Join(dir, "cot.npy")
	if err := npy.WriteFloat64File(infCot, []int{1, 3}, []float64{1, math.Inf(1), 0}); err != nil {
		t.Fatal(err)
	}
	const lorenz, rober = "../../examples/lorenz.ode", "../../examples/robertson.ode"
	cases := []msgCase{
		{[]string{"solve", lorenz, "--dense", "--saveat", "0.5"}, "--dense needs a Rosenbrock method"},
		{[]string{"solve", lorenz, "--method", "tsit5", "--dense"}, "--dense needs a Rosenbrock method"},
		{[]string{"solve", rober, "--sens", "k1", "--sens-error-test"}, "--sens-error-test is not available"},
		{[]string{"solve", lorenz, "--method", "rodas5p", "--sens", "rho", "--sens-error-test"}, "--sens-error-test is not available with --method rodas5p"},
		{[]string{"solve", lorenz, "--sens-error-test"}, "--sens-error-test needs --sens"},
		{[]string{"solve", lorenz, "--engine", "gpu"}, `--engine "gpu": known engines: cuda, cpu-lanes, cpu-ros-lanes, cpu-erk, cpu-ros (or auto)`},
		{[]string{"solve", lorenz, "--engine", "cpu-erk", "--method", "rodas5p"}, `--engine "cpu-erk" does not run Rodas5P`},
		{[]string{"solve", rober, "--engine", "cpu-ros", "--sens", "k1", "--sens-error-test"}, `--engine "cpu-ros" cannot serve this sensitivities job`},
		{[]string{"grad", lorenz, "--engine", "cpu-ros", "--method", "dp8", "--loss", "sumsq"}, `--engine "cpu-ros" does not run DP8`},
		{[]string{"halo", "--engine", "cpu-ros"}, `--engine "cpu-ros" does not run Vern7`},
		{[]string{"precession", "--engine", "nope"}, `--engine "nope": known engines`},
		{[]string{"solve", lorenz, "--max-steps", "0"}, "--max-steps = 0: must be ≥ 1"},
		{[]string{"solve", lorenz, "--workers", "-1"}, "--workers = -1"},
		{[]string{"solve", lorenz, "--rtol", "0"}, "--rtol = 0"},
		{[]string{"solve", lorenz, "--rtol", "1e-17"}, "--rtol = 1e-17: must be ≥"},
		{[]string{"solve", lorenz, "--atol", "inf"}, "--atol = +Inf"},
		{[]string{"solve", lorenz, "--y0", nanY0}, "--y0 " + nanY0 + ": element [1, 1] = NaN is not finite"},
		{[]string{"solve", lorenz, "--sens", "rho,rho"}, `--sens "rho,rho": rho is listed twice`},
		{[]string{"solve", lorenz, "--saveat", "2"}, "--saveat: save time 0 = 2 of trajectory 0 lies outside its span"},
		{[]string{"solve", lorenz, "--t0", "1", "--t1", "1"}, "--t0 and --t1: "},
		{[]string{"solve", lorenz, "--t1", "nan"}, `--t1 "nan": the time must be finite`},
		{[]string{"solve", lorenz, "--t0", "-inf"}, `--t0 "-inf": the time must be finite`},
		{[]string{"solve", lorenz, "--param", "rho=inf"}, `--param "rho=inf": the values must be finite`},
		{[]string{"solve", "--system", "nope"}, "--system: "},
		{[]string{"grad", lorenz, "--mode", "sideways", "--loss", "sumsq"}, `--mode "sideways": unknown mode: want auto, forward or reverse`},
		{[]string{"grad", lorenz, "--cot", infCot}, "--cot " + infCot + ": element [0, 1] = +Inf is not finite"},
		{[]string{"halo", "--rtol", "-1", "--atol", "1"}, "--rtol = -1"},
		{[]string{"halo", "--workers", "-2"}, "--workers = -2"},
		{[]string{"precession", "--method", "rk4"}, "--method: "},
		{[]string{"gen", lorenz, "-package", "no-dash"}, `-package "no-dash" is not a valid package name`},
		{[]string{"quintessence", "--n", "1"}, "--n = 1"},
	}
	checkMessages(t, cases, false, true)
}

// msgCase is a command line that must fail, and what its error line
// must contain.
type msgCase struct {
	args []string
	want string
}

// checkMessages runs each case and requires an error whose line
// contains want, carries one "gradsolve:" prefix (and, with oneLine, is
// one line) and names no Go field; with named, it must also name a flag
// or a file.
func checkMessages(t *testing.T, cases []msgCase, oneLine, named bool) {
	t.Helper()
	for _, c := range cases {
		_, _, err := runCmd(c.args...)
		if err == nil {
			t.Errorf("%v: no error", c.args)
			continue
		}
		line := errorLine(err)
		switch {
		case !strings.Contains(line, c.want):
			t.Errorf("%v: %q lacks %q", c.args, line, c.want)
		case strings.Count(line, "gradsolve:") != 1 || oneLine && strings.Contains(line, "\n"):
			t.Errorf("%v: %q: want one line with one gradsolve: prefix", c.args, line)
		case goField.MatchString(line):
			t.Errorf("%v: %q names a Go field", c.args, line)
		case named && !flagName.MatchString(line) && !strings.Contains(line, ".ode") && !strings.Contains(line, ".npy"):
			t.Errorf("%v: %q names no flag or file", c.args, line)
		}
	}
}

// The library's errors, translated, keep their identity and lose their
// Go names and the doubled prefix.
func TestTranslate(t *testing.T) {
	cases := []struct{ in, want string }{
		{"DenseSave needs a Rosenbrock method", "--dense needs a Rosenbrock method"},
		{"lorenz: no initial state: set Ensemble.Y0 (problem has no default)", "lorenz: no initial state: give --y0 FILE.npy (problem has no default)"},
		{"m: Rodas5P needs the Jacobian program (Problem.Programs with JacY); compile the problem from formulas or supply one", "m: Rodas5P needs the Jacobian program; write it as a problem file (.ode)"},
		{"m: sensitivities with Rodas5P need the second-derivative programs (Programs.JVPJacY, and JVPDfDt for a non-autonomous problem); every problem compiled from formulas has them", "m: sensitivities with Rodas5P need the second-derivative programs; every problem file has them"},
	}
	for _, c := range cases {
		in := fmt.Errorf("%w: %s", gradsolve.ErrInput, c.in)
		got := translate(in)
		if errorLine(got) != "gradsolve: "+c.want {
			t.Errorf("translate(%q) = %q, want %q", in, errorLine(got), "gradsolve: "+c.want)
		}
		if !errors.Is(got, gradsolve.ErrInput) {
			t.Errorf("translate(%q) lost ErrInput", in)
		}
		if goField.MatchString(got.Error()) {
			t.Errorf("translate(%q) = %q names a Go field", in, got)
		}
	}
	if got := errorLine(fmt.Errorf("gradsolve: %w", gradsolve.ErrInput)); got != "gradsolve: invalid input" {
		t.Errorf("errorLine = %q", got)
	}
}

// --max-steps sets the step budget; a trajectory that runs out is told
// to raise it, in the flag's name.
func TestMaxStepsFlag(t *testing.T) {
	out, _, err := runCmd("solve", "../../examples/lorenz.ode", "--n", "3", "--max-steps", "5")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"3 MaxStepsReached", "step budget (accepted plus rejected attempts) exhausted", "hint: raise --max-steps (now 5)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if goField.MatchString(out) || strings.Contains(out, "gradsolve: gradsolve") {
		t.Errorf("output names a Go field or doubles the prefix:\n%s", out)
	}
	if out, _, err := runCmd("solve", "../../examples/lorenz.ode", "--max-steps", "100000", "-q"); err != nil || out != "" {
		t.Errorf("--max-steps 100000: %v %q", err, out)
	}
}

// --sens-error-test puts the sensitivities in the error norm: the solve
// takes more steps, and its sensitivities are closer to converged ones.
func TestSensErrorTestFlag(t *testing.T) {
	steps := func(extra ...string) (int, []float64) {
		dir := t.TempDir()
		args := append([]string{"solve", "../../examples/lorenz.ode", "--sens", "rho", "--rtol", "1e-6", "--atol", "1e-9", "--t1", "5", "--out", dir, "-q"}, extra...)
		if _, _, err := runCmd(args...); err != nil {
			t.Fatal(err)
		}
		s, err := npy.ReadFile(filepath.Join(dir, "sens.npy"))
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			Accepted int `json:"accepted_steps"`
		}
		readJSON(t, filepath.Join(dir, "stats.json"), &st)
		return st.Accepted, s.Data
	}
	plain, sPlain := steps()
	tested, sTested := steps("--sens-error-test")
	ref, sRef := steps("--rtol", "1e-12", "--atol", "1e-15", "--method", "dp8")
	if tested <= plain {
		t.Errorf("with --sens-error-test %d accepted steps, without %d: want more", tested, plain)
	}
	dist := func(a []float64) float64 {
		var d float64
		for i := range a {
			d = math.Max(d, math.Abs(a[i]-sRef[i]))
		}
		return d
	}
	// The sensitivities of Lorenz grow like e^(λt); at t = 5 an error
	// test on them leaves them closer to the converged values (ref, at
	// rtol 1e-12 with DP8).
	if dist(sTested) >= dist(sPlain) {
		t.Errorf("sensitivity error with the test %.3g, without %.3g (ref %d steps)", dist(sTested), dist(sPlain), ref)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// The errors of the applications, of flags the library would otherwise
// refuse in its own terms, and of the problem as a built-in are one
// line with one "gradsolve:" prefix, and name the flag.
func TestMessagesOneLineNamed(t *testing.T) {
	dir := t.TempDir()
	decay := filepath.Join(dir, "decay.ode")
	if err := os.WriteFile(decay, []byte("name decay\nstate x = 1\nspan 0 1\n\nx' = -x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := writeNpy(t, dir, "t0.npy", []int{2}, []float64{0, -1e308})
	const lorenz = "../../examples/lorenz.ode"
	cases := []msgCase{
		// A solve of the application fails: one line, the first failure.
		{[]string{"quintessence", "--n", "2", "--lambda-max", "1e308"}, "gradsolve: quintessence: the background solves: 1 of 2 trajectories failed; first: λ = 1e+308, Ω_m = 0.3, Ω_r = 0: trajectory 1: non-finite state"},
		// The applications' flags, each by name.
		{[]string{"quintessence", "--omega-r", "nan"}, "--omega-r = NaN: must be in [0, 0.1)"},
		{[]string{"quintessence", "--rtol", "nan", "--atol", "1e-9"}, "--rtol = NaN: must be finite and > 0"},
		{[]string{"quintessence", "--rtol", "inf"}, "--rtol = +Inf: must be finite and > 0"},
		{[]string{"quintessence", "--rtol", "1e-300", "--atol", "1e-9"}, "--rtol = 1e-300: must be ≥ 2.22e-15"},
		{[]string{"quintessence", "--rtol", "1e-9", "--atol", "nan"}, "--atol = NaN: must be finite and > 0"},
		{[]string{"quintessence", "--rtol", "1e-9"}, "quintessence: give both --rtol and --atol, or neither"},
		{[]string{"halo", "--rtol", "nan", "--atol", "1e-9"}, "--rtol = NaN: must be finite and > 0"},
		{[]string{"halo", "--rtol", "1e-6", "--atol", "-inf"}, "--atol = -Inf: must be finite and > 0"},
		{[]string{"precession", "--rtol", "1e-17", "--atol", "1e-9"}, "--rtol = 1e-17: must be ≥"},
		{[]string{"precession", "--atol", "inf"}, "--atol = +Inf: must be finite and > 0"},
		// --wrt and --sens that name no column.
		{[]string{"grad", decay, "--wrt", "params", "--loss", "sumsq"}, `--wrt "params" names no column: decay has no parameters (say y0 or y0.NAME`},
		{[]string{"solve", decay, "--sens", "params"}, `--sens "params" names no column`},
		{[]string{"solve", decay, "--sens", "all"}, `--sens "all" names no column`},
		// grad has no --ref.
		{[]string{"grad", lorenz, "--ref", "5", "--loss", "sumsq"}, "--ref: grad has no reference check; --ref is a flag of gradsolve solve"},
		// A span whose length overflows.
		{[]string{"solve", lorenz, "--t0", "-1e308", "--t1", "1e308"}, "--t0 -1e308 and --t1 1e308: the span's length t1 − t0 overflows to ±Inf"},
		{[]string{"solve", lorenz, "--t0", t0, "--t1", "1e308"}, "--t0 " + t0 + " (row 1: -1e+308) and --t1 1e308: the span's length"},
		// A built-in system is --system NAME, and is told what to do.
		{[]string{"grad", "--system", "robertson", "--n", "2", "--loss", "sumsq", "--mode", "reverse"}, "--system robertson: the reverse replay of Rodas5P needs the second-derivative cotangent programs; the built-in system has none: use an explicit method (--method tsit5), or the problem as a .ode file"},
		{[]string{"solve", "--system", "robertson", "--n", "2", "--sens", "k1", "--ref", "0"}, "--system robertson: sensitivities with Rodas5P need the second-derivative programs; the built-in system has none: use an explicit method (--method tsit5)"},
	}
	checkMessages(t, cases, true, false)
	// The quintessence failure keeps the trajectory's error for errors.As.
	_, _, err := runCmd("quintessence", "--n", "2", "--lambda-max", "1e308")
	var te *gradsolve.TrajectoryError
	if !errors.As(err, &te) || te.Index != 1 || te.Status != gradsolve.NonFinite {
		t.Errorf("errors.As: %v", err)
	}
}

// errorLine makes one line of a joined error and drops the prefixes of
// its layers.
func TestErrorLine(t *testing.T) {
	err := fmt.Errorf("halo: %w", errors.Join(errors.New("gradsolve: 2 of 9 trajectories failed"), errors.New("trajectory 3: x"), errors.New("trajectory 5: y")))
	if got, want := errorLine(err), "gradsolve: halo: 2 of 9 trajectories failed; trajectory 3: x; trajectory 5: y"; got != want {
		t.Errorf("errorLine = %q, want %q", got, want)
	}
	if got := errorLine(errors.New("gradsolve: gradsolve: no command given")); got != "gradsolve: no command given" {
		t.Errorf("errorLine = %q", got)
	}
}
