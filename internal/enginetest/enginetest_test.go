package enginetest

import (
	"testing"

	_ "github.com/gradsolve/gradsolve" // links the engines in
	"github.com/gradsolve/gradsolve/internal/engine"
)

// TestConformance runs the suite on every registered engine: every
// engine × every method it runs × every job it serves.
func TestConformance(t *testing.T) {
	var engines []engine.Engine
	for _, e := range engine.All() {
		if !isMutant(e) {
			engines = append(engines, e)
		}
	}
	if len(engines) < 2 {
		t.Fatalf("registered engines %v: want at least cpu-erk and cpu-ros", engine.Names())
	}
	for _, e := range engines {
		if len(Methods(e)) == 0 {
			t.Errorf("%s runs none of the built-in methods", e.Name())
		}
		t.Run(e.Name(), func(t *testing.T) { Run(t, e) })
	}
}
