//go:build !linux && !darwin && !freebsd && !windows

package memory

// system knows no measure on this platform.
func system() Info { return Info{} }
