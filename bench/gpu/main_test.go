package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRunScript checks bench/gpu/run.sh: shellcheck where it is
// installed (else bash -n, its syntax alone) and, with
// GRADSOLVE_BENCH_DRY=1, its dry mode end to end on the emulated
// device (it builds three binaries: a minute or two here).
func TestRunScript(t *testing.T) {
	if sc, err := exec.LookPath("shellcheck"); err == nil {
		if out, err := exec.Command(sc, "run.sh").CombinedOutput(); err != nil {
			t.Errorf("shellcheck run.sh: %v\n%s", err, out)
		}
	} else if out, err := exec.Command("bash", "-n", "run.sh").CombinedOutput(); err != nil {
		t.Errorf("bash -n run.sh: %v\n%s", err, out)
	} else {
		t.Log("no shellcheck: checked run.sh's syntax only (bash -n)")
	}
	if os.Getenv("GRADSOLVE_BENCH_DRY") != "1" {
		t.Skip("set GRADSOLVE_BENCH_DRY=1 for the dry run of run.sh (builds the binaries)")
	}
	out := t.TempDir()
	cmd := exec.Command("bash", "run.sh", "dry")
	cmd.Env = append(os.Environ(), "OUT="+out)
	text, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(text), "dry run complete") {
		t.Fatalf("run.sh dry: %v\n%s", err, text)
	}
	csv, err := os.ReadFile(filepath.Join(out, "gpu.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// Every workload runs on the emulated engine and beside it on the
	// CPU lane engines: a row of each, measured ("ok").
	rows := strings.Split(string(csv), "\n")
	for _, want := range []string{"lorenz,cuda-emu,64,", "lorenz-adjoint,cuda-emu,64,", "halo,cuda-emu,64,", "halo-adjoint,cuda-emu,64,",
		"halo-sens,cuda-emu,64,", "robertson,cuda-emu,64,", "robertson-adjoint,cuda-emu,64,",
		"lorenz,cpu-lanes,64,", "lorenz-adjoint,cpu-lanes,64,", "halo,cpu-lanes,64,", "halo-adjoint,cpu-lanes,64,",
		"halo-sens,cpu-lanes,64,", "robertson,cpu-ros-lanes,64,", "robertson-adjoint,cpu-ros-lanes,64,"} {
		found := false
		for _, r := range rows {
			found = found || (strings.HasPrefix(r, want) && strings.HasSuffix(r, ",ok"))
		}
		if !found {
			t.Errorf("gpu.csv lacks a measured row %q…,ok:\n%s", want, csv)
		}
	}
	// Each gradient over its forward solve, on both engines, and the
	// CPU over the GPU: a positive ratio at n = 64.
	rcsv, err := os.ReadFile(filepath.Join(out, "ratios.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rrows := strings.Split(string(rcsv), "\n")
	for _, want := range []string{"adjoint,lorenz-adjoint,lorenz,cuda-emu,64,", "adjoint,halo-adjoint,halo,cuda-emu,64,",
		"adjoint,robertson-adjoint,robertson,cuda-emu,64,", "adjoint,halo-adjoint,halo,cpu-lanes,64,",
		"adjoint,robertson-adjoint,robertson,cpu-ros-lanes,64,", "cpu/gpu,halo-adjoint,cuda-emu,cpu-lanes,64,",
		"cpu/gpu,robertson-adjoint,cuda-emu,cpu-ros-lanes,64,"} {
		found := false
		for _, r := range rrows {
			if v, ok := strings.CutPrefix(r, want); ok {
				x, err := strconv.ParseFloat(v, 64)
				found = err == nil && x > 0
			}
		}
		if !found {
			t.Errorf("ratios.csv lacks a positive ratio %q…:\n%s", want, rcsv)
		}
	}
}

// TestMemoryTable: -memory's cases solve on the reference engines and
// their rows print (the figures are the engine's formula, which
// internal/engine/gpu's TestMeasuredMemory checks against the
// allocations).
func TestMemoryTable(t *testing.T) {
	if err := memoryTable(filepath.Join("..", "..", "examples")); err != nil {
		t.Fatal(err)
	}
}
