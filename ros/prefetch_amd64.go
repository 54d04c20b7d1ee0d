//go:build amd64

package ros

import "unsafe"

// prefetch asks the processor to bring the cache line holding p's
// address in (PREFETCHT0: a hint, with no effect on any value and no
// fault for any address); it does not wait for it.
//
//go:noescape
func prefetch(p unsafe.Pointer)
