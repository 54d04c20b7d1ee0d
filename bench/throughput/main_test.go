package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The sweep spans its range; the problems are found by name and refused
// otherwise; a measured point is written as a CSV row and drawn.
func TestThroughputPieces(t *testing.T) {
	if v := sweep(10, 24, 3); v[0] != 10 || v[1] != 17 || v[2] != 24 {
		t.Errorf("sweep(10, 24, 3) = %v", v)
	}
	if v := sweep(5, 9, 1); len(v) != 1 || v[0] != 5 {
		t.Errorf("sweep(5, 9, 1) = %v", v)
	}
	if _, err := find("nope"); err == nil {
		t.Error("an unknown problem was accepted")
	}
	for _, p := range problems {
		if _, err := find(p.name); err != nil {
			t.Error(err)
		}
	}
	dir := t.TempDir()
	pts := []point{{Problem: "lorenz", N: 100, Workers: 1, Engine: "cpu-lanes", Seconds: 2e-4, Reps: 5, UsTraj: 2, PeakMiB: 14},
		{Problem: "lorenz", N: 1000, Workers: 1, Engine: "cpu-lanes", Seconds: 2e-3, Reps: 5, UsTraj: 2, PeakMiB: 14}}
	if err := write(dir, pts); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "throughput.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != 3 || rows[2][1] != "1000" {
		t.Errorf("throughput.csv: %v %v", rows, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "throughput.png")); err != nil {
		t.Error(err)
	}
	back, err := readCSV(filepath.Join(dir, "throughput.csv"))
	if err != nil || len(back) != 2 || back[1] != pts[1] {
		t.Errorf("readCSV: %v %v", back, err)
	}
}

// One point measured for real: a small Lorenz ensemble.
func TestThroughputPoint(t *testing.T) {
	if testing.Short() {
		t.Skip("solves")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	err = measure("lorenz,64,1", time.Millisecond)
	os.Stdout = stdout
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4096)
	k, _ := r.Read(b)
	if s := string(b[:k]); len(s) == 0 || s[0] != '{' {
		t.Errorf("point output %q", s)
	}
	for _, bad := range []string{"lorenz,0,1", "lorenz,10", "nope,10,1", "lorenz,x,1"} {
		if err := measure(bad, time.Millisecond); err == nil {
			t.Errorf("-point %s accepted", bad)
		}
	}
}
