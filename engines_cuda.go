//go:build !nocuda

package gradsolve

// The CUDA engine, "cuda" (internal/engine/gpu), is linked into every
// build but the one tagged nocuda. It loads the CUDA driver and NVRTC
// at run time through purego (no cgo, no CUDA toolkit at build time),
// and where they or a device are missing it refuses every request with
// "unavailable: <reason>", which the router then names in
// Result.EngineReason as it falls back to the CPU; where a GPU runs it
// ranks above the CPU engines for ensembles of 4096 or more. Linking it
// makes the binary dynamically
// linked against libc (dlopen needs the dynamic loader); -tags nocuda
// gives the statically linked build without it.
import _ "github.com/gradsolve/gradsolve/internal/engine/gpu"
