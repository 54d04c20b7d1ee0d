//go:build linux || darwin || freebsd

package memory

import (
	"runtime"
	"syscall"
)

// PeakRSS returns the largest resident set size the process has had, in
// bytes (getrusage's ru_maxrss: KiB on Linux and FreeBSD, bytes on
// macOS), and whether the platform tells it.
func PeakRSS() (uint64, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil || ru.Maxrss < 0 {
		return 0, false
	}
	if runtime.GOOS == "darwin" {
		return uint64(ru.Maxrss), true
	}
	return uint64(ru.Maxrss) * 1024, true
}
