package jit

import (
	"sync"
	"unsafe"
)

// Machine code that Go calls as a func value.
//
// A func value is a pointer to a closure object whose first word is the
// address of the code; the code receives the object's address in DX.
// sym/tape hands out right-hand sides this way: code in Go's register
// calling convention (ABIInternal) whose closure object holds its
// register file. MarkFunc records such entries, so that other machine
// code (erk's stage sums) can recognise a func value as one and call
// its code directly, with no Go in between (ClosureOf).
//
// Code marked this way reads its arguments from AX, BX, CX, DI, SI, R8,
// R9, R10, R11 (t in X0) and DX; it may change those, R12 and X0–X14,
// and nothing else (in particular not R13), and uses no stack beyond
// its return address.

// funcs holds the marked entries.
var funcs sync.Map // uintptr → struct{}

// ClosureOf returns the closure object of the func value stored at fn
// (a pointer to a variable of func type) when its code was marked by
// MarkFunc, and false otherwise.
func ClosureOf(fn unsafe.Pointer) (unsafe.Pointer, bool) {
	obj := *(*unsafe.Pointer)(fn)
	if obj == nil {
		return nil, false
	}
	if _, ok := funcs.Load(*(*uintptr)(obj)); !ok {
		return nil, false
	}
	return obj, true
}
