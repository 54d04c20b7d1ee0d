package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPrecessionCommand(t *testing.T) {
	dir := t.TempDir()
	out, _, err := runCmd("precession", "--n", "30", "--seed", "5", "--check", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "requirement 2e-07: met") || !strings.Contains(out, "30 binaries (seed 5)") {
		t.Errorf("summary:\n%s", out)
	}
	if n, ok := checkOutputSet(t, dir, false); n != 30 || !ok {
		t.Errorf("output set: n %d, complete %v", n, ok)
	}
	readNpy(t, filepath.Join(dir, "params.npy"), 30, 3)
	readNpy(t, filepath.Join(dir, "angles_100.npy"), 30, 3)
	readNpy(t, filepath.Join(dir, "angles_10.npy"), 30, 3)
	readNpy(t, filepath.Join(dir, "y_final.npy"), 30, 10)
	readNpy(t, filepath.Join(dir, "errors.npy"), 30)
	for _, f := range []string{"tilts.png", "stats.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--n", "-3"}, "--n = -3"},
		{[]string{"--atol", "1e-9"}, "both --rtol and --atol"},
	} {
		_, _, err := runCmd(append([]string{"precession"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}
