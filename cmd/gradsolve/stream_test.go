package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A run in chunks writes the files of the run in one piece, byte for
// byte, and the same counts, failures and loss (bitwise) in
// stats.json: for chunks of 1, 4 and 7 of 19 trajectories (the last
// chunk short; chunks below the lanes run on the scalar engine), one
// and two workers, for solve with and without sensitivities, save
// times, failures and input files, and grad with each loss and mode;
// and a shard run in chunks merges to the whole run.
func TestChunksBitwise(t *testing.T) {
	files := shardInputs(t)
	for _, c := range shardCases(files) {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			whole := filepath.Join(root, "whole")
			if _, _, err := runCmd(append(slices.Clone(c.args), "--out", whole, "-q")...); err != nil {
				t.Fatal(err)
			}
			for _, chunk := range []int{1, 4, 7} {
				for _, workers := range []int{1, 2} {
					dir := filepath.Join(root, fmt.Sprintf("chunk-%d-w%d", chunk, workers))
					args := append(slices.Clone(c.args), "--out", dir, "-q", "--chunk", fmt.Sprint(chunk), "--workers", fmt.Sprint(workers))
					if _, _, err := runCmd(args...); err != nil {
						t.Fatalf("--chunk %d: %v", chunk, err)
					}
					sameAsWhole(t, fmt.Sprintf("--chunk %d --workers %d", chunk, workers), whole, dir)
				}
			}
			dirs := runShards(t, filepath.Join(root, "shards"), append(slices.Clone(c.args), "--chunk", "3"), 3)
			merged := filepath.Join(root, "merged")
			if _, _, err := runCmd(append([]string{"merge", "--out", merged, "-q"}, dirs...)...); err != nil {
				t.Fatal(err)
			}
			sameAsWhole(t, "3 shards in chunks of 3", whole, merged)
		})
	}
}

// The summary says how the run was cut, and --chunk is checked.
func TestChunkFlag(t *testing.T) {
	out, _, err := runCmd("solve", "-n", "50", "-ref", "10", "--chunk", "20")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "streamed in 3 chunks of at most 20 trajectories (--chunk)") {
		t.Errorf("the summary does not say how the run was cut:\n%s", out)
	}
	if _, _, err := runCmd("solve", "-n", "50", "--chunk", "-3"); err == nil || !strings.Contains(err.Error(), "--chunk = -3: must be ≥ 1") {
		t.Errorf("--chunk -3: %v", err)
	}
	// One chunk of everything (the automatic chunk of a small run) says
	// nothing about chunks.
	out, _, err = runCmd("solve", "-n", "50", "-ref", "0")
	if err != nil || strings.Contains(out, "chunks") {
		t.Errorf("a run in one chunk: %v\n%s", err, out)
	}
}

// grad --checkpoint K keeps every K-th state of the recording and
// recomputes the rest in the reverse sweep: the same files, bit for bit,
// as the full recording, streamed or not.
func TestGradCheckpoint(t *testing.T) {
	root := t.TempDir()
	args := []string{"grad", "../../examples/lorenz.ode", "--n", "13", "--param", "rho=5:25", "--t1", "2", "--saveat", "0.5,1.5", "--loss", "sumsq", "--mode", "reverse", "-q"}
	whole := filepath.Join(root, "whole")
	if _, _, err := runCmd(append(slices.Clone(args), "--out", whole)...); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][]string{{"--checkpoint", "1"}, {"--checkpoint", "7"}, {"--checkpoint", "4", "--chunk", "5"}, {"--checkpoint", "100000"}} {
		dir := filepath.Join(root, strings.Join(c, ""))
		if _, _, err := runCmd(append(append(slices.Clone(args), c...), "--out", dir)...); err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		sameAsWhole(t, strings.Join(c, " "), whole, dir)
	}
	if _, _, err := runCmd(append(slices.Clone(args), "--checkpoint", "-2")...); err == nil || !strings.Contains(err.Error(), "--checkpoint = -2: must be ≥ 0") {
		t.Errorf("--checkpoint -2: %v", err)
	}
}
