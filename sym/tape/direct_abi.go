//go:build linux && amd64 && !go1.27

package tape

import (
	"unsafe"

	"github.com/gradsolve/gradsolve/ode"
)

// This file is the only code that depends on Go's internal register
// calling convention (see direct.go). Its constraint names the
// toolchains whose convention the code was checked against: go.mod
// requires Go 1.26, and !go1.27 excludes every later release until
// someone checks it again (TestDirectEntry, and the self-test at run
// time) and widens the constraint here and in direct_none.go.

// directSupported says this build may generate and call direct entries.
const directSupported = true

// directBuild names this build in errNoDirect.
const directBuild = "linux/amd64, Go 1.26"

// jitFunc is the closure object of an ode.Func whose code is fentry:
// Go calls a func value by loading the code address from the first word
// of the object it points to, with the object's address in DX, from
// which the code reads r.
type jitFunc struct {
	code uintptr
	r    *float64 // the register file
	keep *jitCode // owns the machine code
}

// directFunc returns j's direct entry as an ode.Func over register
// file r.
func directFunc(j *jitCode, r *float64) ode.Func {
	c := &jitFunc{code: j.fentry, r: r, keep: j}
	return *(*ode.Func)(unsafe.Pointer(&c))
}
