package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// The tests that must see the process as a user does (its exit code,
// what a Go runtime failure would print, its behaviour under signals)
// run the command as a binary, built once.

var built struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func TestMain(m *testing.M) {
	unsetClusterVars() // a test run inside a job array is not sharded (shard_test.go)
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// gradsolveBinary builds the command once and returns its path; it
// skips the test where no go command is installed.
func gradsolveBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		goCmd, err := exec.LookPath("go")
		if err != nil {
			built.err = err
			return
		}
		if built.dir, built.err = os.MkdirTemp("", "gradsolve-bin-"); built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "gradsolve")
		out, err := exec.Command(goCmd, "build", "-o", built.path, ".").CombinedOutput()
		if err != nil {
			built.err = &buildError{err, out}
		}
	})
	if built.err != nil {
		if _, ok := built.err.(*buildError); ok {
			t.Fatal(built.err)
		}
		t.Skipf("cannot build the command: %v", built.err)
	}
	return built.path
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + string(e.out) }

// execResult is a finished run of the binary.
type execResult struct {
	code           int
	stdout, stderr string
	elapsed        time.Duration
}

// execCmd runs the binary with args and the extra environment, with a
// minute's guard against a hang.
func execCmd(t *testing.T, env []string, args ...string) execResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, gradsolveBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := execResult{stdout: out.String(), stderr: errb.String(), elapsed: time.Since(start)}
	if ctx.Err() != nil {
		t.Fatalf("gradsolve %v did not finish in a minute", args)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}
