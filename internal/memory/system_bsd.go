//go:build darwin || freebsd

package memory

import (
	"runtime"
	"syscall"
)

// system returns the physical memory: these systems have no cheap,
// stable measure of what is free (macOS counts compressed and cached
// pages in ways sysctl does not show), so a job is refused only when it
// exceeds the machine.
func system() Info {
	name := "hw.physmem"
	if runtime.GOOS == "darwin" {
		name = "hw.memsize"
	}
	s, err := syscall.Sysctl(name)
	if err != nil || len(s) == 0 || len(s) > 8 {
		return Info{}
	}
	// The value is a little-endian integer; Sysctl drops one trailing
	// zero byte, which is a high byte.
	var v uint64
	for i := len(s) - 1; i >= 0; i-- {
		v = v<<8 | uint64(s[i])
	}
	return Info{Bytes: v, Source: "physical memory (sysctl " + name + ")", Known: true}
}
