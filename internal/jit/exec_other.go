//go:build !(linux && amd64)

package jit

import (
	"errors"
	"unsafe"
)

const (
	supported = false
	avx       = false
	avx2      = false
	avx512    = false
	sse41     = false
)

// Code is machine code in executable memory; there is none on this
// platform.
type Code struct{}

// NewCode fails: this platform runs no machine code of ours.
func NewCode([]byte) (*Code, error) { return nil, errors.New("jit: no machine code on this platform") }

// Addr is never called on this platform.
func (c *Code) Addr(int) uintptr { return 0 }

// Call is never called on this platform.
func Call(uintptr, *[8]unsafe.Pointer) { panic("jit: no machine code on this platform") }

// Call16 is never called on this platform.
func Call16(uintptr, *[16]unsafe.Pointer) { panic("jit: no machine code on this platform") }

// Call5 is never called on this platform.
func Call5(uintptr, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer) {
	panic("jit: no machine code on this platform")
}

// Name does nothing on this platform (perfmap.go).
func (c *Code) Name(int, string, []Section) {}
