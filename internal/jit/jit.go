package jit

import "os"

// disabled is set by GRADSOLVE_JIT=off (or 0, false) in the environment.
var disabled = func() bool {
	switch os.Getenv("GRADSOLVE_JIT") {
	case "off", "0", "false":
		return true
	}
	return false
}()

// Enabled reports whether machine code may be generated and run here:
// on linux/amd64, unless GRADSOLVE_JIT=off.
func Enabled() bool { return supported && !disabled }

// HasAVX reports whether AVX code may run here: Enabled, and the
// processor and the operating system support AVX.
func HasAVX() bool { return Enabled() && avx }

// HasSSE41 reports whether SSE4.1 code (roundsd) may run here: Enabled,
// and the processor has SSE4.1.
func HasSSE41() bool { return Enabled() && sse41 }
