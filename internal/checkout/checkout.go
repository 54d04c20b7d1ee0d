// Package checkout finds the gradsolve checkout a benchmark command runs
// in, for the example files it reads.
package checkout

import (
	"errors"
	"os"
	"path/filepath"
)

// Root returns the checkout's root: the working directory or the first
// directory above it that holds examples/lorenz.ode.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "examples", "lorenz.ode")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run from inside the gradsolve checkout: examples/lorenz.ode not found above the working directory")
		}
		dir = parent
	}
}
