//go:build !linux && !darwin && !freebsd

package memory

// PeakRSS returns the largest resident set size the process has had, in
// bytes, and whether the platform tells it: on this platform it does
// not (0, false).
func PeakRSS() (uint64, bool) { return 0, false }
