package main

import (
	"encoding/json"
	"os"
	"path/filepath"
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
