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
// equals file: for example goArgs "run", "gen_kernels.go". It skips in
// -short mode and where no go command is installed.
func UpToDate(t *testing.T, file string, goArgs ...string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the generator with the go command")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(file))
	args := append(append([]string(nil), goArgs...), "-o", out)
	if msg, err := exec.Command(goCmd, args...).CombinedOutput(); err != nil {
		t.Fatalf("go %v: %v\n%s", args, err, msg)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: run go generate", file)
	}
}
