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
