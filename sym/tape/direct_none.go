//go:build !(linux && amd64) || go1.27

package tape

import "github.com/gradsolve/gradsolve/ode"

// directSupported says this build may generate and call direct entries
// (see direct.go and direct_abi.go): not this one.
const directSupported = false

// directBuild names this build in errNoDirect.
const directBuild = "not linux/amd64 with Go 1.26"

// directFunc is never called in this build.
func directFunc(*jitCode, *float64) ode.Func { return nil }
