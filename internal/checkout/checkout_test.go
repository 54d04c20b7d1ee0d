package checkout

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRoot: from this package's directory, two levels below the root,
// Root finds the directory that holds examples/lorenz.ode; from a
// directory outside any checkout it says what it looked for.
func TestRoot(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "examples", "lorenz.ode")); err != nil {
		t.Errorf("Root() = %s: %v", root, err)
	}
	if wd, _ := os.Getwd(); filepath.Dir(filepath.Dir(wd)) != root {
		t.Errorf("Root() = %s from %s, want two levels up", root, wd)
	}
	t.Chdir(t.TempDir())
	if r, err := Root(); err == nil {
		t.Errorf("Root() outside a checkout = %s, want an error", r)
	}
}
