package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// gradsolve halo on a small ensemble: the requirement is met, every
// output is written with the documented shape, and bad flags are named.
func TestHaloCommand(t *testing.T) {
	dir := t.TempDir()
	out, _, err := runCmd("halo", "--n", "200", "--seed", "3", "--check", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "requirement  met") || !strings.Contains(out, "200 stars (seed 3)") {
		t.Errorf("summary:\n%s", out)
	}
	if n, ok := checkOutputSet(t, dir, false); n != 200 || !ok {
		t.Errorf("output set: n %d, complete %v", n, ok)
	}
	readNpy(t, filepath.Join(dir, "y0.npy"), 200, 6)
	readNpy(t, filepath.Join(dir, "y_final.npy"), 200, 6)
	readNpy(t, filepath.Join(dir, "sens.npy"), 200, 6, 2)
	readNpy(t, filepath.Join(dir, "errors.npy"), 200, 2)
	for _, png := range []string{"orbits.png", "errors.png"} {
		if fi, err := os.Stat(filepath.Join(dir, png)); err != nil || fi.Size() < 1000 {
			t.Errorf("%s: %v", png, err)
		}
	}
	var st map[string]any
	js, _ := os.ReadFile(filepath.Join(dir, "stats.json"))
	if err := json.Unmarshal(js, &st); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"t1", "state_error_p99", "sensitivity_error_p99", "requirement_met", "solve_seconds", "method"} {
		if _, ok := st[k]; !ok {
			t.Errorf("stats.json lacks %q", k)
		}
	}
	if st["requirement_met"] != true {
		t.Errorf("requirement not met: %v", st)
	}
	// Without --check: no reference, no error files.
	dir2 := t.TempDir()
	out, _, err = runCmd("halo", "--n", "50", "--out", dir2)
	if err != nil || strings.Contains(out, "requirement") {
		t.Errorf("halo without --check: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir2, "errors.npy")); err == nil {
		t.Error("errors.npy written without --check")
	}
	checkOutputSet(t, dir2, false)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--n", "0"}, "--n = 0"},
		{[]string{"--rtol", "1e-6"}, "both --rtol and --atol"},
		{[]string{"--method", "rk4"}, "unknown method"},
		{[]string{"extra"}, "unexpected argument"},
	} {
		_, _, err := runCmd(append([]string{"halo"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}

// halo --fit: the run's own outputs are those of the command without
// --fit, bit for bit; the fit recovers the truth within its error bars
// and writes fit.json; --mocks adds the scatter of the refits.
func TestHaloFit(t *testing.T) {
	plain, fitted := t.TempDir(), t.TempDir()
	if _, _, err := runCmd("halo", "--n", "40", "--seed", "4", "--workers", "2", "--out", plain); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCmd("halo", "--n", "40", "--seed", "4", "--workers", "2", "--fit", "--mocks", "6", "--start", "q=0.75", "--out", fitted)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"40 stars (seed 4)", "estimate ± stderr", "vc ", "q ", "mocks", "6 refits", "scatter/stderr", "wrote"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	for _, name := range []string{"y0.npy", "y_final.npy", "sens.npy", "orbits.png"} {
		a, err1 := os.ReadFile(filepath.Join(plain, name))
		b, err2 := os.ReadFile(filepath.Join(fitted, name))
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs with --fit (%v, %v)", name, err1, err2)
		}
	}
	if _, err := os.Stat(filepath.Join(plain, "fit.json")); err == nil {
		t.Error("fit.json written without --fit")
	}
	if n, ok := checkOutputSet(t, fitted, false); n != 40 || !ok {
		t.Errorf("output set: n %d, complete %v", n, ok)
	}
	var fj struct {
		Parameters           []string
		Truth, Start, StdErr []float64
		Estimates, Pull      []float64
		Covariance           [][]float64
		Chi2, Sigma          float64
		Dof, N, Iterations   int
		Converged            bool
		StartStage           string `json:"start_stage"`
		Mocks                *struct {
			K, Used        int
			Ratio, Scatter []float64
			MeanStdErr     []float64 `json:"mean_stderr"`
			Estimates      [][]float64
		}
	}
	js, err := os.ReadFile(filepath.Join(fitted, "fit.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js, &fj); err != nil {
		t.Fatal(err)
	}
	if !fj.Converged || fj.N != 40 || fj.Dof != 238 || fj.Sigma != 1e-3 || fj.StartStage != "energy" || len(fj.Covariance) != 2 ||
		!slices.Equal(fj.Parameters, []string{"vc", "q"}) || !slices.Equal(fj.Start, []float64{1.1, 0.75}) || !slices.Equal(fj.Truth, []float64{1, 0.7}) {
		t.Errorf("fit.json: %s", js)
	}
	for c := range 2 {
		if math.Abs(fj.Estimates[c]-fj.Truth[c]) > 3*fj.StdErr[c] {
			t.Errorf("%s = %g ± %g, truth %g", fj.Parameters[c], fj.Estimates[c], fj.StdErr[c], fj.Truth[c])
		}
	}
	if m := fj.Mocks; m == nil || m.K != 6 || m.Used != 6 || len(m.Estimates) != 6 || len(m.Ratio) != 2 || !(m.Ratio[0] > 0) {
		t.Errorf("fit.json mocks: %+v", m)
	}
	var st map[string]any
	js, _ = os.ReadFile(filepath.Join(fitted, "stats.json"))
	if err := json.Unmarshal(js, &st); err != nil {
		t.Fatal(err)
	}
	if _, ok := st["fit_seconds"]; !ok {
		t.Errorf("stats.json lacks fit_seconds: %s", js)
	}
	// --direct from 2% off converges too, without --out.
	out, _, err = runCmd("halo", "--n", "30", "--fit", "--direct", "--start", "vc=1.02,q=0.71", "--sigma", "0.01")
	if err != nil || !strings.Contains(out, "(--direct)") || !strings.Contains(out, "σ = 0.01") {
		t.Errorf("--direct: %v\n%s", err, out)
	}
}

// The flags of --fit are checked before anything runs, their errors
// naming the flag.
func TestHaloFitFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--fit", "--sigma", "0"}, "--sigma = 0: must be finite and > 0"},
		{[]string{"--fit", "--sigma", "-1e-3"}, "--sigma = -0.001"},
		{[]string{"--fit", "--sigma", "NaN"}, "--sigma = NaN"},
		{[]string{"--fit", "--mocks", "-1"}, "--mocks = -1: must be ≥ 0"},
		{[]string{"--mocks", "5"}, "--mocks needs --fit"},
		{[]string{"--sigma", "1e-3"}, "--sigma needs --fit"},
		{[]string{"--start", "vc=1"}, "--start needs --fit"},
		{[]string{"--direct"}, "--direct needs --fit"},
		{[]string{"--fit", "--start", "vc"}, `--start "vc"`},
		{[]string{"--fit", "--start", "vc=abc"}, `--start "vc=abc": vc = "abc": must be a finite number > 0`},
		{[]string{"--fit", "--start", "vc=-1"}, "must be a finite number > 0"},
		{[]string{"--fit", "--start", "rc=0.3"}, `"rc=0.3": want vc=V or q=V`},
		{[]string{"--fit", "--start", "q=0.7,q=0.8"}, "q given twice"},
		{[]string{"--fit", "--start", ""}, `--start "": want vc=V,q=V`},
	} {
		dir := filepath.Join(t.TempDir(), "out")
		_, _, err := runCmd(append([]string{"halo", "--n", "5", "--out", dir}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("%v: --out created for a bad command line", c.args)
		}
	}
}
