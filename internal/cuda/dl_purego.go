//go:build linux || darwin

package cuda

import (
	"fmt"
	"strings"

	"github.com/ebitengine/purego"
)

// bind looks up each symbol in the library at handle and registers it
// into its function field, or returns the first symbol missing.
func bind(handle uintptr, lib string, syms []struct {
	name string
	fptr any
}) error {
	for _, s := range syms {
		addr, err := purego.Dlsym(handle, s.name)
		if err != nil || addr == 0 {
			return fmt.Errorf("%w: %s has no symbol %s", ErrUnavailable, lib, s.name)
		}
		purego.RegisterFunc(s.fptr, addr)
	}
	return nil
}

// dlopen opens lib, or returns why not as dlerror says it.
func dlopen(lib string) (uintptr, error) {
	h, err := purego.Dlopen(lib, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		msg := strings.Clone(err.Error()) // purego's text may alias dlerror's buffer
		// dlerror starts with the path already; say it once.
		msg = strings.TrimPrefix(msg, lib+": ")
		return 0, fmt.Errorf("%s: %s", lib, msg)
	}
	return h, nil
}
