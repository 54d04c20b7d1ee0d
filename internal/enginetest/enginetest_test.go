package enginetest

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	_ "github.com/gradsolve/gradsolve" // links the engines in
	"github.com/gradsolve/gradsolve/internal/engine"
	"github.com/gradsolve/gradsolve/internal/engine/cpu"
	"github.com/gradsolve/gradsolve/internal/engine/gpu"
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
	// The cuda engine on the emulated device (the generated kernels
	// compiled with the host's C++ compiler), in batches of 16 and
	// launches of 7, so that the suite's ensembles span several of
	// each; it must give cpu-erk's bits. Unavailable, and skipped with
	// the reason, where there is no C++ compiler.
	engine.Register(gpu.NewEmulated("cuda-emu-test", gpu.Config{Priority: -10, Batch: 16, Chunk: 7}))
}

// onlyEnv names the environment variable that restricts
// TestConformance to the engines it lists (comma-separated): how
// bench/gpu/run.sh runs the suite on the real cuda engine alone.
const onlyEnv = "GRADSOLVE_CONFORMANCE_ENGINES"

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
	only := strings.FieldsFunc(os.Getenv(onlyEnv), func(r rune) bool { return r == ',' || r == ' ' })
	for _, e := range engines {
		if len(only) > 0 && !slices.Contains(only, e.Name()) {
			continue
		}
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
