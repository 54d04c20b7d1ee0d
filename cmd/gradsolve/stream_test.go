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
