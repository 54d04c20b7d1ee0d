//go:build linux

package main

import (
	"path/filepath"
	"testing"
)

// The memory of a streamed halo run is set by its chunk, not by n:
// 3·10⁵ stars in chunks of 10⁴ peak within 20 MB of 2·10⁴ in the same
// chunks (the periods the run keeps for every star are 2.4 MB of it),
// where holding them whole would take about 90 MB more (stars, final
// states, sensitivities and statistics). Loose tolerances keep the
// solve short. Linux only (ru_maxrss).
func TestHaloMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("solves 3·10⁵ orbits")
	}
	dir := t.TempDir()
	rss := func(n string) int64 {
		return peakRSS(t, "halo", "--n", n, "--method", "tsit5", "--rtol", "1e-2", "--atol", "1e-2", "--chunk", "10000", "--out", filepath.Join(dir, n))
	}
	small, large := rss("20000"), rss("300000")
	t.Logf("peak RSS: %.1f MB for 2·10⁴ stars, %.1f MB for 3·10⁵", float64(small)/1e6, float64(large)/1e6)
	if large > small+20e6 {
		t.Errorf("3·10⁵ stars peaked at %.1f MB, 2·10⁴ at %.1f MB: the memory grows with n", float64(large)/1e6, float64(small)/1e6)
	}
}
