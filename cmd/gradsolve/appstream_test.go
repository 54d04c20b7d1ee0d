package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve"
)

// The applications stream their populations in chunks: every file
// they write — the arrays, errors.npy, the figures — is byte for byte
// that of the run in one piece, for any --chunk and worker count, and
// stats.json's requirement figures are the same numbers.
func TestAppChunksBitwise(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		keys []string
	}{
		{"halo", []string{"halo", "--n", "19", "--seed", "2", "--check"},
			[]string{"n", "t1", "state_error_p99", "sensitivity_error_p99", "requirement_met", "accepted_steps", "rejected_steps", "failed", "method", "rtol"}},
		{"precession", []string{"precession", "--n", "11", "--seed", "2", "--check"},
			[]string{"n", "error_p99_rad", "fixture_error_rad", "requirement_met", "accepted_steps", "rejected_steps", "failed", "method", "rtol"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			whole := filepath.Join(root, "whole")
			if _, _, err := runCmd(append(slices.Clone(c.args), "--out", whole)...); err != nil {
				t.Fatal(err)
			}
			ws := readStats(t, whole)
			files := ws["files"].(map[string]any)
			if len(files) < 5 || ws["chunks"] != 1.0 {
				t.Fatalf("the whole run: files %v, chunks %v", files, ws["chunks"])
			}
			for _, chunk := range []int{1, 7, 0} {
				for _, workers := range []int{1, 2} {
					what := fmt.Sprintf("--chunk %d --workers %d", chunk, workers)
					dir := filepath.Join(root, fmt.Sprintf("chunk-%d-w%d", chunk, workers))
					out, _, err := runCmd(append(slices.Clone(c.args), "--out", dir, "--chunk", fmt.Sprint(chunk), "--workers", fmt.Sprint(workers))...)
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					if streamed := strings.Contains(out, "streamed"); streamed != (chunk > 0) {
						t.Errorf("%s: the summary says streamed: %v\n%s", what, streamed, out)
					}
					st := readStats(t, dir)
					if len(st["files"].(map[string]any)) != len(files) {
						t.Errorf("%s: files %v, the whole run's %v", what, st["files"], files)
					}
					for name := range files {
						a, err1 := os.ReadFile(filepath.Join(whole, name))
						b, err2 := os.ReadFile(filepath.Join(dir, name))
						if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
							t.Errorf("%s: %s differs from the whole run's (%v, %v)", what, name, err1, err2)
						}
					}
					for _, k := range c.keys {
						if fmt.Sprint(st[k]) != fmt.Sprint(ws[k]) {
							t.Errorf("%s: stats.json %s = %v, the whole run's %v", what, k, st[k], ws[k])
						}
					}
				}
			}
		})
	}
}

// errors.png of a large run draws an evenly spaced sample of the stars'
// errors, the same whatever the chunks.
func TestErrSample(t *testing.T) {
	for _, n := range []int{5, plotSample, plotSample + 1, 3 * plotSample} {
		rows := make([]float64, 0, 2*n)
		for i := range n {
			rows = append(rows, float64(i), -float64(i))
		}
		var want []float64
		for _, chunk := range []int{1, 7, n} {
			s := newErrSample(n, 2)
			for lo := 0; lo < n; lo += chunk {
				hi := min(n, lo+chunk)
				s.take(lo, rows[2*lo:2*hi])
			}
			got := s.column(0)
			if len(got) != min(n, plotSample) || got[0] != 0 || s.column(1)[1] != -got[1] {
				t.Fatalf("n %d chunk %d: %d sampled, first %v", n, chunk, len(got), got[:2])
			}
			for j, v := range got {
				if v != float64(j*n/len(got)) {
					t.Fatalf("n %d chunk %d: sample %d is trajectory %g, want %d", n, chunk, j, v, j*n/len(got))
				}
			}
			if want == nil {
				want = got
			} else if !slices.Equal(got, want) {
				t.Errorf("n %d: the sample of chunks of %d differs", n, chunk)
			}
		}
	}
}

// halo and precession --accuracy: the pilot's grid is printed and
// pilot.json written, and the run uses its choice (stats.json); its
// errors are the application's (the halo's state error, precession's
// angle), so --check's figures speak to the same target.
func TestAppAccuracy(t *testing.T) {
	for _, c := range []struct {
		args        []string
		pilot, step int // the pilot's size, and the spacing of its trajectories
	}{
		{[]string{"halo", "--n", "40", "--accuracy", "1e-3", "--pilot", "10", "--check"}, 10, 4},
		{[]string{"precession", "--n", "12", "--accuracy", "1e-5", "--pilot", "4", "--method", "dp8"}, 4, 3},
	} {
		out := t.TempDir()
		stdout, _, err := runCmd(append(c.args, "--out", out)...)
		if err != nil && !strings.Contains(err.Error(), "requirement is not met") {
			t.Fatalf("%v: %v", c.args, err)
		}
		var rep gradsolve.PilotReport
		readJSON(t, filepath.Join(out, "pilot.json"), &rep)
		if rep.Chosen < 0 || len(rep.Trajectories) != c.pilot || rep.Trajectories[1] != c.step {
			t.Fatalf("%v: pilot.json: chosen %d, trajectories %v", c.args, rep.Chosen, rep.Trajectories)
		}
		ch := rep.Points[rep.Chosen]
		st := readStats(t, out)
		if st["method"] != ch.Method || st["rtol"] != ch.RTol || st["atol"] != ch.ATol || !ch.Passes {
			t.Errorf("%v: stats.json method %v rtol %v atol %v, the chosen %+v", c.args, st["method"], st["rtol"], st["atol"], ch)
		}
		if !strings.Contains(stdout, "← chosen (the cheapest that passes)") || !strings.Contains(stdout, fmt.Sprintf("a pilot of %d trajectories", c.pilot)) {
			t.Errorf("%v: summary:\n%s", c.args, stdout)
		}
		if c.args[0] == "precession" {
			for _, pt := range rep.Points {
				if pt.Method != "DP8" {
					t.Errorf("--method dp8: the pilot tried %s", pt.Method)
				}
			}
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"halo", "--accuracy", "-1"}, "--accuracy -1: must be"},
		{[]string{"precession", "--accuracy", "1e-4", "--quantile", "0"}, "--quantile 0: must lie in (0, 1]"},
		{[]string{"halo", "--accuracy", "1e-4", "--pilot", "-2"}, "--pilot -2: must be ≥ 1"},
		{[]string{"halo", "--n", "4", "--accuracy", "1e-14"}, "--accuracy = 1e-14: below what the reference"},
		{[]string{"halo", "--chunk", "-1"}, "--chunk = -1: must be ≥ 1, or 0 for the automatic chunk"},
		{[]string{"precession", "--chunk", "-5"}, "--chunk = -5"},
		{[]string{"halo", "--fit", "--chunk", "10"}, "--chunk with --fit"},
	} {
		_, _, err := runCmd(c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error containing %q", c.args, err, c.want)
		}
	}
}
