//go:build !(linux && amd64)

package tape

import "unsafe"

// compileJIT has no machine code to offer on this platform: programs
// run on the interpreter.
func compileJIT(*Program) *jitCode { return nil }

func jitCall(uintptr, *jitArgs) { panic("tape: no machine code on this platform") }
func jitCallF(uintptr, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer) {
	panic("tape: no machine code on this platform")
}
