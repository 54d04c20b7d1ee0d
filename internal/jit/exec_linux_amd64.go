//go:build linux && amd64

package jit

import (
	"runtime"
	"syscall"
	"unsafe"
)

const supported = true

// Code is machine code in executable memory, unmapped when the Code is
// collected: a caller keeps it alive (runtime.KeepAlive) until the code
// has returned.
type Code struct {
	base uintptr
}

// NewCode copies b into fresh pages and makes them executable (and no
// longer writable).
func NewCode(b []byte) (*Code, error) {
	mem, err := syscall.Mmap(-1, 0, max(len(b), 1), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil, err
	}
	copy(mem, b)
	if err := syscall.Mprotect(mem, syscall.PROT_READ|syscall.PROT_EXEC); err != nil {
		syscall.Munmap(mem)
		return nil, err
	}
	c := &Code{base: uintptr(unsafe.Pointer(unsafe.SliceData(mem)))}
	runtime.AddCleanup(c, func(mem []byte) { syscall.Munmap(mem) }, mem)
	return c, nil
}

// Addr returns the address of the byte at offset off.
func (c *Code) Addr(off int) uintptr { return c.base + uintptr(off) }

// Call calls the code at entry with the eight addresses of args in DI,
// SI, DX, R8, R9, R10, R11 and CX, and args itself in BX. Besides
// those, the code may change AX, R12, R13 and the vector registers
// (Go's zero register X15 included: Go re-zeroes it after a call to
// assembly); it uses no stack beyond its return address, and it must
// leave the upper halves of the Y registers zero (vzeroupper).
//
//go:noescape
func Call(entry uintptr, args *[8]unsafe.Pointer)

// Call5 calls the code at entry with a0…a4 in DI, SI, DX, R11 and CX,
// under the same rules as Call.
//
//go:noescape
func Call5(entry uintptr, a0, a1, a2, a3, a4 unsafe.Pointer)

// Call16 is Call for code that needs more than eight addresses: it
// loads the first eight as Call does and leaves args itself in BX.
//
//go:noescape
func Call16(entry uintptr, args *[16]unsafe.Pointer)

func cpuid(eax, ecx uint32) (a, b, c, d uint32)
func xgetbv() (eax, edx uint32)

// sse41: CPUID says SSE4.1 (leaf 1, ECX bit 19), which has roundsd.
var sse41 = func() bool {
	_, _, c, _ := cpuid(1, 0)
	return c&(1<<19) != 0
}()

// avx: CPUID says AVX and OSXSAVE, and the system saves the Y registers
// (XCR0 bits 1 and 2).
var avx = func() bool {
	_, _, c, _ := cpuid(1, 0)
	if c&(1<<27) == 0 || c&(1<<28) == 0 {
		return false
	}
	lo, _ := xgetbv()
	return lo&6 == 6
}()

// leaf7 is CPUID leaf 7, subleaf 0's EBX (the extended features), or 0
// where the processor has no leaf 7.
var leaf7 = func() uint32 {
	if maxLeaf, _, _, _ := cpuid(0, 0); maxLeaf < 7 {
		return 0
	}
	_, b, _, _ := cpuid(7, 0)
	return b
}()

// avx2: AVX (with the system's support), and CPUID leaf 7 says AVX2
// (EBX bit 5).
var avx2 = avx && leaf7&(1<<5) != 0

// avx512: AVX2, CPUID says AVX-512F (leaf 7 EBX bit 16), and the system
// saves the opmask and Z registers (XCR0 bits 5, 6 and 7).
var avx512 = func() bool {
	if !avx2 || leaf7&(1<<16) == 0 {
		return false
	}
	lo, _ := xgetbv()
	return lo&0xE0 == 0xE0
}()
