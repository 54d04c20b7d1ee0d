// Package gencheck holds a test helper shared by packages with
// generated source: it checks that a checked-in file is what its
// generator writes now.
package gencheck

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// UpToDate runs the go command with goArgs followed by "-o TMP" in the
// current directory (a package's, under go test) and fails t unless TMP
// equals file: for example goArgs "run", "gen_kernels.go". Files the
// generator writes beside TMP (besides: their names, which must share
// TMP's directory) must equal the files of those names beside file; a
// checked-in one the generator no longer writes fails too. It skips in
// -short mode and where no go command is installed.
func UpToDate(t *testing.T, file string, goArgs ...string) {
	t.Helper()
	UpToDateWith(t, file, nil, goArgs...)
}

// UpToDateWith is UpToDate with the generator's further files besides.
func UpToDateWith(t *testing.T, file string, besides []string, goArgs ...string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the generator with the go command")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, filepath.Base(file))
	args := append(append([]string(nil), goArgs...), "-o", out)
	if msg, err := exec.Command(goCmd, args...).CombinedOutput(); err != nil {
		t.Fatalf("go %v: %v\n%s", args, err, msg)
	}
	for _, name := range append([]string{filepath.Base(file)}, besides...) {
		checked := filepath.Join(filepath.Dir(file), name)
		want, werr := os.ReadFile(filepath.Join(dir, name))
		got, gerr := os.ReadFile(checked)
		switch {
		case werr != nil && gerr != nil:
			continue // neither written nor checked in
		case werr != nil:
			t.Errorf("%s is checked in, but the generator no longer writes it: remove it (go generate)", checked)
		case gerr != nil:
			t.Errorf("%s: %v (run go generate)", checked, gerr)
		case !bytes.Equal(got, want):
			t.Errorf("%s is stale: run go generate", checked)
		}
	}
}
