//go:build !(linux || darwin)

package cuda

import (
	"fmt"
	"runtime"
)

// bind is never reached where dlopen cannot open anything.
func bind(handle uintptr, lib string, syms []struct {
	name string
	fptr any
}) error {
	return fmt.Errorf("%w: %s: no run-time loading of libraries on %s", ErrUnavailable, lib, runtime.GOOS)
}

// dlopen opens nothing: purego's dlopen serves Linux and macOS only, and
// CUDA's driver is loaded on Linux.
func dlopen(lib string) (uintptr, error) {
	return 0, fmt.Errorf("%s: run-time loading of libraries is not supported on %s (only linux and darwin)", lib, runtime.GOOS)
}
