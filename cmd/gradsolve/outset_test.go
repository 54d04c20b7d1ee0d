package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gradsolve/gradsolve/npy"
)

// npyRows reads the first dimension of a .npy file from its header.
var shapeRE = regexp.MustCompile(`'shape': \((\d+)`)

func npyRows(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	head := make([]byte, 256)
	n, _ := f.Read(head)
	m := shapeRE.FindSubmatch(head[:n])
	if m == nil {
		t.Fatalf("%s: no shape in %q", path, head[:n])
	}
	rows, _ := strconv.Atoi(string(m[1]))
	return rows
}

// checkOutputSet checks what an output directory holds: only output
// names (and, with stages, staging directories of killed runs); the
// .npy files of one run (one n); and when stats.json is there, exactly
// the files it lists, with their sizes. It returns the n of the files
// (0 for none) and whether stats.json is there.
func checkOutputSet(t *testing.T, dir string, stages bool) (n int, complete bool) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	present := map[string]int64{}
	for _, e := range ents {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, stagePrefix) && e.IsDir() && stages:
		case slices.Contains(outputNames, name) && e.Type().IsRegular():
			fi, _ := e.Info()
			present[name] = fi.Size()
		default:
			t.Errorf("%s holds %q, which no run should leave", dir, name)
		}
	}
	for name := range present {
		if !strings.HasSuffix(name, ".npy") {
			continue
		}
		r := npyRows(t, filepath.Join(dir, name))
		if n != 0 && r != n {
			t.Errorf("%s mixes runs: %s has %d rows, another file %d", dir, name, r, n)
		}
		n = r
	}
	js, err := os.ReadFile(filepath.Join(dir, "stats.json"))
	if err != nil {
		return n, false
	}
	var st struct {
		N     int              `json:"n"`
		RunID string           `json:"run_id"`
		Files map[string]int64 `json:"files"`
	}
	if err := json.Unmarshal(js, &st); err != nil {
		t.Fatalf("stats.json: %v", err)
	}
	delete(present, "stats.json")
	if len(st.RunID) != 32 {
		t.Errorf("stats.json: run_id %q", st.RunID)
	}
	if fmt.Sprint(st.Files) != fmt.Sprint(present) {
		t.Errorf("stats.json lists %v, the directory holds %v", st.Files, present)
	}
	if st.N != 0 && n != 0 && st.N != n {
		t.Errorf("stats.json says n = %d, the files have %d rows", st.N, n)
	}
	return n, true
}

// Every command writes only names listed in outputNames, and its
// stats.json lists them.
func TestOutputNamesComplete(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := runCmd("solve", "../../examples/lorenz.ode", "--n", "4", "--param", "rho=1:2", "--sens", "rho,y0.x", "--saveat", "0.5", "--out", dir, "-q"); err != nil {
		t.Fatal(err)
	}
	if n, ok := checkOutputSet(t, dir, false); n != 4 || !ok {
		t.Errorf("solve: n %d, complete %v", n, ok)
	}
	for _, name := range []string{"y_final.npy", "y_saved.npy", "status.npy", "params.npy", "sens.npy", "sens_saved.npy"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("solve wrote no %s", name)
		}
	}
	// grad into the same directory: sens*.npy and y_saved.npy go.
	if _, _, err := runCmd("grad", "../../examples/lorenz.ode", "--n", "3", "--loss", "sumsq", "--out", dir, "-q"); err != nil {
		t.Fatal(err)
	}
	if n, ok := checkOutputSet(t, dir, false); n != 3 || !ok {
		t.Errorf("grad: n %d, complete %v", n, ok)
	}
	for _, name := range []string{"sens.npy", "sens_saved.npy", "y_saved.npy"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("grad left the earlier run's %s", name)
		}
	}
}

// params.npy holds the parameters each trajectory used, n×m in the
// problem's order: the --param sweep's values, and shared values
// repeated on every row.
func TestParamsNpy(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := runCmd("solve", "../../examples/lorenz.ode", "--n", "5", "--param", "rho=0:4", "--param", "sigma=9", "--out", dir, "-q"); err != nil {
		t.Fatal(err)
	}
	p, err := npy.ReadFile(filepath.Join(dir, "params.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check("params.npy", []int{5, 3}); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		// lorenz.ode: param rho, sigma, beta; sweeps are LO + (HI−LO)·i/(n−1).
		want := []float64{float64(i), 9, 8.0 / 3}
		if got := p.Data[3*i : 3*i+3]; !slices.Equal(got, want) {
			t.Errorf("row %d = %v, want %v", i, got, want)
		}
	}
	if _, _, err := runCmd("grad", "../../examples/lorenz.ode", "--n", "2", "--loss", "sumsq", "--out", dir, "-q"); err != nil {
		t.Fatal(err)
	}
	p, err = npy.ReadFile(filepath.Join(dir, "params.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{28, 10, 8.0 / 3, 28, 10, 8.0 / 3}; p.Check("params.npy", []int{2, 3}) != nil || !slices.Equal(p.Data, want) {
		t.Errorf("grad params.npy %v %v, want 2×3 %v", p.Shape, p.Data, want)
	}
}

// signalJob is a run of n trajectories that writes 290 bytes per
// trajectory into dir.
func signalJob(n int, dir string) []string {
	return []string{"solve", "--system", "lorenz", "--n", strconv.Itoa(n), "--ref", "0", "-q", "--rtol", "1e-6", "--atol", "1e-9",
		"--saveat", "0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1", "--out", dir}
}

// earlierRun fills dir with a complete run of 1000 trajectories that
// also wrote files the signalled job does not (sens.npy, sens_saved.npy).
func earlierRun(t *testing.T, dir string) {
	t.Helper()
	r := execCmd(t, nil, "solve", "--system", "lorenz", "--n", "1000", "--ref", "0", "-q", "--sens", "rho", "--saveat", "0.5", "--out", dir)
	if r.code != 0 {
		t.Fatalf("earlier run: exit %d: %s", r.code, r.stderr)
	}
	if n, ok := checkOutputSet(t, dir, false); n != 1000 || !ok {
		t.Fatalf("earlier run: n %d, complete %v", n, ok)
	}
}

// A run killed at any point — while it solves, writes its files or moves
// them into place — leaves the files of one run at most, and stats.json
// only beside that run's complete set. SIGTERM is caught: exit 143, no
// staging directory or temporary file left. After SIGKILL a staging
// directory may stay; the next run into the directory removes it.
func TestOutputSetSurvivesSignals(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGTERM on windows")
	}
	bin := gradsolveBinary(t)
	dir := t.TempDir()
	earlierRun(t, dir)

	// How long the job takes here (the faster of two runs).
	const n = 50000
	full := time.Duration(math.MaxInt64)
	for range 2 {
		start := time.Now()
		if r := execCmd(t, nil, signalJob(n, dir)...); r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		full = min(full, time.Since(start))
	}
	if n, ok := checkOutputSet(t, dir, false); n != 50000 || !ok {
		t.Fatalf("uninterrupted: n %d, complete %v", n, ok)
	}

	kills := 9
	if testing.Short() {
		kills = 2
	}
	type outcome struct{ old, none, partial, complete int }
	var seen outcome
	kill := func(n int, sig syscall.Signal, delay time.Duration, pause string, atCommit, twice bool) {
		earlierRun(t, dir) // also removes a staging directory a SIGKILL left
		cmd := exec.Command(bin, signalJob(n, dir)...)
		if pause != "" {
			cmd.Env = append(os.Environ(), "GRADSOLVE_TEST_COMMIT_PAUSE="+pause)
		}
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if atCommit { // wait for the commit to remove the earlier stats.json
			deadline := time.Now().Add(time.Minute)
			for time.Now().Before(deadline) {
				if _, err := os.Stat(filepath.Join(dir, "stats.json")); err != nil {
					break
				}
				time.Sleep(time.Millisecond)
			}
		}
		time.Sleep(delay)
		cmd.Process.Signal(sig)
		if twice {
			time.Sleep(time.Millisecond)
			cmd.Process.Signal(sig)
		}
		err := cmd.Wait()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		what := fmt.Sprintf("%v after %v (commit pause %q, at commit %v, twice %v)", sig, delay.Round(time.Millisecond), pause, atCommit, twice)
		want := map[syscall.Signal]int{syscall.SIGTERM: 143, syscall.SIGINT: 130}[sig]
		if want != 0 && code != want && code != 0 {
			t.Errorf("%s: exit %d, want %d (or 0 had it finished): %s", what, code, want, errb.String())
		}
		if want != 0 && code == want && !strings.Contains(errb.String(), "interrupted by "+map[int]string{143: "SIGTERM", 130: "SIGINT"}[want]) {
			t.Errorf("%s: stderr %q", what, errb.String())
		}
		if strings.Contains(errb.String(), "panic") || strings.Contains(errb.String(), "fatal error") {
			t.Errorf("%s: %s", what, errb.String())
		}
		n, complete := checkOutputSet(t, dir, sig == syscall.SIGKILL)
		switch {
		case n == 1000 && complete:
			seen.old++
		case n == 0:
			seen.none++
		case complete:
			seen.complete++
		default:
			seen.partial++
		}
		t.Logf("%s: exit %d, n = %d, complete %v", what, code, n, complete)
	}
	for i := range kills {
		sig := []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL, syscall.SIGINT}[i%3]
		kill(n, sig, full*time.Duration(2*i+1)/time.Duration(2*kills), "", false, false)
	}
	if !testing.Short() {
		// In the middle of moving the files in (a smaller job, to get
		// there sooner): 25 steps 10 ms apart.
		for i, d := range []time.Duration{2, 50, 100, 150, 200, 230} {
			sig := syscall.SIGTERM
			if i%2 == 1 {
				sig = syscall.SIGKILL
			}
			kill(5000, sig, d*time.Millisecond, "10ms", true, false)
		}
		// A second SIGTERM exits at once, still cleaning up.
		kill(n, syscall.SIGTERM, full/2, "", false, true)
	}
	earlierRun(t, dir)
	t.Logf("outcomes: %d earlier set kept, %d empty, %d partial new set, %d complete new set", seen.old, seen.none, seen.partial, seen.complete)
}

// A write that fails part-way (a full disk, a file-size limit) leaves the
// earlier run's set as it was and no staging directory, and says which
// file could not be written.
func TestOutputSetWriteFailure(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs a Unix shell")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	bin := gradsolveBinary(t)
	check := func(dir, what, stderr string, code int, want string) {
		t.Helper()
		if code != 1 || !strings.Contains(stderr, want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q, want %q", what, code, stderr, want)
		}
		if n, ok := checkOutputSet(t, dir, false); n != 1000 || !ok {
			t.Errorf("%s: the earlier set is not intact: n %d, complete %v", what, n, ok)
		}
	}

	// A file-size limit of 2 MB (ulimit -f counts 1024-byte blocks in
	// most shells, 512 in some: either stops the 4.8 MB y_saved.npy).
	dir := t.TempDir()
	earlierRun(t, dir)
	cmd := exec.Command(sh, append([]string{"-c", `ulimit -f 2048 && exec "$0" "$@"`, bin}, signalJob(20000, dir)...)...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	check(dir, "file-size limit", errb.String(), code, "file too large")

	// A full disk: a 4 MB tmpfs, where the system lets the test mount one.
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs for the full-disk case (needs root): %v %s", err, out)
	}
	defer exec.Command("umount", mnt).Run()
	earlierRun(t, mnt)
	r := execCmd(t, nil, signalJob(20000, mnt)...)
	check(mnt, "full disk", r.stderr, r.code, "no space left on device")
}

// Two runs writing into one directory at the same time commit one
// after the other: the directory ends with one of the two sets, whole.
func TestConcurrentRunsOneDirectory(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no directory lock on windows")
	}
	if testing.Short() {
		t.Skip("four runs with pauses")
	}
	bin := gradsolveBinary(t)
	dir := t.TempDir()
	for range 2 {
		var cmds []*exec.Cmd
		for _, args := range [][]string{
			signalJob(2000, dir),
			{"solve", "--system", "lorenz", "--n", "3000", "--ref", "0", "-q", "--sens", "rho", "--out", dir},
		} {
			cmd := exec.Command(bin, args...)
			cmd.Env = append(os.Environ(), "GRADSOLVE_TEST_COMMIT_PAUSE=5ms")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cmds = append(cmds, cmd)
		}
		for _, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				t.Fatal(err)
			}
		}
		if n, ok := checkOutputSet(t, dir, false); !ok || n != 2000 && n != 3000 {
			t.Errorf("n %d, complete %v", n, ok)
		}
	}
}
