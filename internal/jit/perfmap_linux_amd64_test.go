package jit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// With the perf map on, a named code is listed one line per non-empty
// section, in perf's format (start and size in hex, then the name), and
// kept mapped; with it off, nothing is written.
func TestPerfMap(t *testing.T) {
	if !Enabled() {
		t.Skip("no machine code here")
	}
	on, dir, keep := perfMap.on, perfMap.dir, perfMap.keep
	t.Cleanup(func() { perfMap.on, perfMap.dir, perfMap.keep = on, dir, keep })
	perfMap.dir, perfMap.keep = t.TempDir(), nil
	var a Asm
	a.Ret()
	a.Ret()
	a.Ret()
	code, err := NewCode(a.B)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(perfMap.dir, fmt.Sprintf("perf-%d.map", os.Getpid()))
	perfMap.on = false
	code.Name(3, "off", nil)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("perf map written with it off: %v", err)
	}
	perfMap.on = true
	code.Name(3, "test.code", []Section{{0, "a"}, {1, "empty"}, {1, "b"}})
	code.Name(3, "whole", nil)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%x 1 test.code_a\n%x 2 test.code_b\n%x 3 whole\n", code.Addr(0), code.Addr(1), code.Addr(0))
	if got := string(b); got != want {
		t.Errorf("perf map:\n%s\nwant:\n%s", got, want)
	}
	if len(perfMap.keep) != 2 || perfMap.keep[0] != code || strings.Count(string(b), "\n") != 3 {
		t.Errorf("kept %d codes, want the code twice", len(perfMap.keep))
	}
}
