package enginetest

import (
	"fmt"
	"testing"

	_ "github.com/gradsolve/gradsolve" // links the engines in
	"github.com/gradsolve/gradsolve/internal/engine"
	"github.com/gradsolve/gradsolve/internal/engine/cpu"
)

// The lane engines at other lane counts, and where SIMD is missing
// (their Go loops, forced on): each must give its reference's bits like
// cpu-lanes and cpu-ros-lanes.
// They rank below the reference engines, so the router never picks
// them; the suite names them.
func init() {
	for _, L := range []int{1, 3, 4, 8} {
		engine.Register(cpu.NewLanes(fmt.Sprintf("lanes-test-l%d", L), L, -10, true))
		engine.Register(cpu.NewROSLanes(fmt.Sprintf("ros-lanes-test-l%d", L), L, -10, true))
	}
}

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
		if a, ok := e.(engine.Availability); ok && a.Available() != nil {
			t.Run(e.Name(), func(t *testing.T) { t.Skipf("%s cannot run here: %v", e.Name(), a.Available()) })
			continue
		}
		if len(Methods(e)) == 0 {
			t.Errorf("%s runs none of the built-in methods", e.Name())
		}
		t.Run(e.Name(), func(t *testing.T) { Run(t, e) })
	}
}
