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

// HasAVX2 reports whether AVX2 code may run here: HasAVX, and the
// processor has AVX2 (256-bit integer operations, gathers and
// permutes).
func HasAVX2() bool { return Enabled() && avx2 }

// HasAVX512 reports whether AVX-512F code may run here: HasAVX2, the
// processor has AVX-512F, and the operating system saves the opmask
// and Z registers.
func HasAVX512() bool { return Enabled() && avx512 }
