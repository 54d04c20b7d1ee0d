//go:build linux

package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// peakRSS runs the command binary and returns its peak resident set
// size in bytes (getrusage's ru_maxrss, kilobytes on Linux).
func peakRSS(t *testing.T, args ...string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, gradsolveBinary(t), args...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("gradsolve %v: %v\n%s", args, err, errb.String())
	}
	return cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss * 1024
}

// The memory of a streamed run is set by its chunk, not by n: a
// million trajectories in chunks of 10⁴ peak within 40 MB of fifty
// thousand in the same chunks, where holding them whole would take
// about 200 MB more (the results, params and status of a million
// Lorenz trajectories). Linux only (ru_maxrss).
func TestStreamMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("solves a million trajectories")
	}
	dir := t.TempDir()
	rss := func(n string) int64 {
		return peakRSS(t, "solve", "--n", n, "--t1", "0.01", "--chunk", "10000", "--ref", "0", "-q", "--out", filepath.Join(dir, n))
	}
	small, large := rss("50000"), rss("1000000")
	t.Logf("peak RSS: %.1f MB for 5·10⁴ trajectories, %.1f MB for 10⁶", float64(small)/1e6, float64(large)/1e6)
	if large > small+40e6 {
		t.Errorf("a million trajectories peaked at %.1f MB, fifty thousand at %.1f MB: the memory grows with n", float64(large)/1e6, float64(small)/1e6)
	}
}
