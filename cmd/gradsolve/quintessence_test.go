package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestQuintessenceCommand(t *testing.T) {
	dir := t.TempDir()
	out, _, err := runCmd("quintessence", "--n", "9", "--lambda-max", "1.6", "--check", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "10.271") || !strings.Contains(out, "best λ = 1.00") || !strings.Contains(out, "check passed") {
		t.Errorf("summary:\n%s", out)
	}
	if _, ok := checkOutputSet(t, dir, false); !ok {
		t.Error("no stats.json")
	}
	csv, err := os.ReadFile(filepath.Join(dir, "profile.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
	if lines[0] != "lambda,chi2,omega_m,h_rd,w0" || len(lines) != 10 || !strings.HasPrefix(lines[1], "0,10.2710") {
		t.Errorf("profile.csv:\n%s", csv)
	}
	for _, f := range []string{"profile.png", "stats.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--n", "1"}, "at least 2"},
		{[]string{"--lambda-max", "-1"}, "--lambda-max"},
		{[]string{"--omega-r", "0.5"}, "--omega-r"},
	} {
		_, _, err := runCmd(append([]string{"quintessence"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}

// A grid that does not bracket one end of the 68% interval (Δχ² still
// below 1 at --lambda-max): the end is "open" on stdout and null in
// stats.json, and the run writes its outputs (JSON has no NaN).
func TestQuintessenceOpenInterval(t *testing.T) {
	dir := t.TempDir()
	out, _, err := runCmd("quintessence", "--n", "3", "--lambda-max", "1", "--omega-r", "9e-5", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, ", open]") {
		t.Errorf("summary lacks the open end:\n%s", out)
	}
	st, err := os.ReadFile(filepath.Join(dir, "stats.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Interval []*float64 `json:"interval_68"`
	}
	if err := json.Unmarshal(st, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Interval) != 2 || s.Interval[0] == nil || !(*s.Interval[0] > 0 && *s.Interval[0] < 1) || s.Interval[1] != nil {
		t.Errorf("interval_68 = %v, want [lo in (0, 1), null]", s.Interval)
	}
}

// --mocks: a small run prints a coverage in a sane band, the same for
// the same seed, and writes fit.json with a row per mock beside
// stats.json.
func TestQuintessenceMocks(t *testing.T) {
	dir := t.TempDir()
	args := []string{"quintessence", "--mocks", "20", "--n", "9", "--lambda-true", "1", "--seed", "4"}
	out, _, err := runCmd(append(args, "--out", dir)...)
	if err != nil {
		t.Fatal(err)
	}
	var fit struct {
		Mocks    int     `json:"mocks"`
		Covered  int     `json:"covered"`
		Coverage float64 `json:"coverage"`
		PerMock  []struct {
			Covers bool `json:"covers"`
		} `json:"per_mock"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "fit.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &fit); err != nil {
		t.Fatal(err)
	}
	if fit.Mocks != 20 || len(fit.PerMock) != 20 || !(fit.Coverage >= 0.35 && fit.Coverage <= 0.95) {
		t.Errorf("fit.json: %d mocks, %d rows, coverage %g", fit.Mocks, len(fit.PerMock), fit.Coverage)
	}
	if _, ok := checkOutputSet(t, dir, false); !ok {
		t.Error("no stats.json")
	}
	line := func(s string) string {
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(l, "coverage of the 68% interval") {
				return l
			}
		}
		t.Fatalf("no coverage line:\n%s", s)
		return ""
	}
	again, _, err := runCmd(args...)
	if err != nil {
		t.Fatal(err)
	}
	if line(out) != line(again) || !strings.Contains(out, "ms per mock") {
		t.Errorf("first run:\n%s\nsecond:\n%s", out, again)
	}
}

// --population: flat to the solve's tolerance, with the time per
// cosmology, and the summary as fit.json.
func TestQuintessencePopulation(t *testing.T) {
	dir := t.TempDir()
	out, _, err := runCmd("quintessence", "--population", "200", "--seed", "2", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "200 flat cosmologies") || !strings.Contains(out, "µs per cosmology") {
		t.Errorf("summary:\n%s", out)
	}
	var fit struct {
		N    int       `json:"population"`
		Flat float64   `json:"max_flatness"`
		Z    []float64 `json:"z"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "fit.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &fit); err != nil {
		t.Fatal(err)
	}
	if fit.N != 200 || fit.Flat > 1e-13 || len(fit.Z) != 7 {
		t.Errorf("fit.json: %+v", fit)
	}
	if _, ok := checkOutputSet(t, dir, false); !ok {
		t.Error("no stats.json")
	}
}

func TestQuintessenceMockFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--mocks", "-1"}, "--mocks = -1"},
		{[]string{"--mocks", "0"}, "--mocks = 0"},
		{[]string{"--population", "-5"}, "--population = -5"},
		{[]string{"--population", "0"}, "--population = 0"},
		{[]string{"--mocks", "3", "--lambda-true", "2"}, "--lambda-true = 2"},
		{[]string{"--mocks", "3", "--lambda-true", "-0.5"}, "--lambda-true = -0.5"},
		{[]string{"--mocks", "3", "--lambda-true", "1.2", "--lambda-max", "1"}, "--lambda-true = 1.2"},
		{[]string{"--lambda-true", "1"}, "--lambda-true: only with --mocks"},
		{[]string{"--mocks", "3", "--population", "3"}, "--mocks and --population"},
		{[]string{"--mocks", "3", "--check"}, "--check"},
		{[]string{"--population", "3", "--check"}, "--check"},
	} {
		_, _, err := runCmd(append([]string{"quintessence"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}
