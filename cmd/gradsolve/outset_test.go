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
// names (and, with stages, staging directories and the commit manifest
// of killed runs); the
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
		case name == manifestName && e.Type().IsRegular() && stages: // killed mid-commit
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
		code := waitStatus(err)
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
	code := waitStatus(cmd.Run())
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

// A run removes only what an earlier run wrote. The user's files stay,
// even those named like another command's outputs — here the solve's
// own input y0.npy, a halo's errors.npy and a quintessence's
// profile.csv — and so do other files; the run's own names are
// replaced.
func TestOutputKeepsOtherFiles(t *testing.T) {
	dir := t.TempDir()
	y0 := writeNpy(t, dir, "y0.npy", []int{2, 3}, []float64{1, 1, 1, 2, 2, 2})
	mine := map[string]string{"errors.npy": "mine", "profile.csv": "a,b\n1,2\n", "notes.txt": "keep", "y_final.npy": "replaced"}
	for name, text := range mine {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	y0Bytes, _ := os.ReadFile(y0)
	for range 2 { // the second run replaces the first's set
		if _, _, err := runCmd("solve", "../../examples/lorenz.ode", "--y0", y0, "--saveat", "0.5", "--out", dir, "-q"); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(y0); err != nil || !bytes.Equal(b, y0Bytes) {
			t.Fatalf("the input y0.npy is gone or changed: %v", err)
		}
		for name, text := range mine {
			b, err := os.ReadFile(filepath.Join(dir, name))
			switch {
			case name == "y_final.npy":
				if npyRows(t, filepath.Join(dir, name)) != 2 {
					t.Errorf("y_final.npy is not this run's")
				}
			case err != nil || string(b) != text:
				t.Errorf("%s: %q, %v; want the user's %q kept", name, b, err, text)
			}
		}
		var st struct {
			Files map[string]int64 `json:"files"`
		}
		readJSON(t, filepath.Join(dir, "stats.json"), &st)
		if got := fmt.Sprint(st.Files); !strings.Contains(got, "y_final.npy") || strings.Contains(got, "y0.npy") || strings.Contains(got, "errors.npy") {
			t.Errorf("stats.json files %s", got)
		}
	}
	// A grad run next writes fewer of the solve's names: y_saved.npy,
	// which the solve wrote, goes; the user's files stay.
	if _, _, err := runCmd("grad", "../../examples/lorenz.ode", "--y0", y0, "--loss", "sumsq", "--out", dir, "-q"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "y_saved.npy")); err == nil {
		t.Error("the solve's y_saved.npy is left beside the grad's set")
	}
	for _, name := range []string{"y0.npy", "errors.npy", "profile.csv", "notes.txt"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("grad removed the user's %s", name)
		}
	}
}

// A stats.json that lists no files (an older gradsolve's, or the user's
// own) is not taken for a set: the run refuses, naming --out and the
// file, and changes nothing.
func TestOutputLegacyStatsRefused(t *testing.T) {
	dir := t.TempDir()
	legacy := `{"problem": "lorenz", "n": 3, "method": "Tsit5"}`
	os.WriteFile(filepath.Join(dir, "stats.json"), []byte(legacy), 0o644)
	os.WriteFile(filepath.Join(dir, "sens.npy"), []byte("old"), 0o644)
	_, _, err := runCmd("solve", "../../examples/lorenz.ode", "--out", dir, "-q")
	if err == nil || !strings.Contains(errorLine(err), "--out "+dir+": its stats.json does not list its run's files") {
		t.Fatalf("err = %v", err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "stats.json"))
	ents, _ := os.ReadDir(dir)
	if string(b) != legacy || len(ents) != 2 {
		t.Errorf("the directory changed: stats.json %q, %d entries", b, len(ents))
	}
}

// A name the commit would remove or replace that is not a regular file
// is refused before anything is removed: the earlier set stays whole
// (its stats.json included) and the message names --out and the file.
func TestOutputNonFileRefused(t *testing.T) {
	lorenz := []string{"solve", "../../examples/lorenz.ode", "--n", "2", "-q", "--out"}
	// An empty directory called stats.json, alone.
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "stats.json"), 0o755)
	_, _, err := runCmd(append(lorenz, dir)...)
	if err == nil || !strings.Contains(err.Error(), "--out "+dir+": stats.json there is a directory") {
		t.Errorf("empty directory stats.json: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "stats.json")); err != nil || !fi.IsDir() {
		t.Errorf("the directory stats.json was removed")
	}
	// A non-empty directory called y_final.npy beside an earlier set
	// whose y_final.npy it replaced.
	dir = t.TempDir()
	if _, _, err := runCmd("solve", "../../examples/lorenz.ode", "--n", "3", "--sens", "rho", "-q", "--out", dir); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "y_final.npy"))
	os.MkdirAll(filepath.Join(dir, "y_final.npy", "inside"), 0o755)
	_, _, err = runCmd(append(lorenz, dir)...)
	if line := errorLine(errOr(err)); !strings.Contains(line, "--out "+dir+": y_final.npy there is a directory") || !strings.Contains(line, "left as it was") {
		t.Errorf("directory y_final.npy: %q", line)
	}
	for _, name := range []string{"stats.json", "sens.npy", "status.npy", "y_final.npy/inside"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("the earlier set lost %s", name)
		}
	}
	if n := npyRows(t, filepath.Join(dir, "status.npy")); n != 3 {
		t.Errorf("status.npy has %d rows: not the earlier run's", n)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left %s", e.Name())
		}
	}
}

// errOr is err, or an error saying there was none.
func errOr(err error) error {
	if err == nil {
		return fmt.Errorf("no error")
	}
	return err
}

// A run that is refused or fails before its commit leaves --out as it
// was: a directory it had to create (with its parents) is removed again.
func TestOutputDirNotCreatedOnFailure(t *testing.T) {
	base := t.TempDir()
	out := filepath.Join(base, "a", "b", "out")
	bad := writeNpy(t, base, "bad.npy", []int{4}, []float64{1, 2, 3, 4})
	for _, args := range [][]string{
		{"solve", "../../examples/lorenz.ode", "--n", "6148914691236517206"}, // too large
		{"solve", "../../examples/lorenz.ode", "--saveat", "2"},              // the library refuses
		{"grad", "../../examples/lorenz.ode", "--data", bad},                 // the loss is refused
		{"halo", "--n", "6148914691236517206"},
		{"precession", "--n", "6148914691236517206", "--check"},
		{"quintessence", "--n", "6148914691236517206"},
		{"quintessence", "--n", "2", "--lambda-max", "1e308"}, // a solve fails
	} {
		_, _, err := runCmd(append(args, "--out", out)...)
		if err == nil {
			t.Errorf("%v: no error", args)
		}
		if _, serr := os.Stat(filepath.Join(base, "a")); serr == nil {
			t.Errorf("%v (%v): left %s", args, err, filepath.Join(base, "a"))
			os.RemoveAll(filepath.Join(base, "a"))
		}
	}
	// An existing directory stays, empty.
	if _, _, err := runCmd("grad", "../../examples/lorenz.ode", "--data", bad, "--out", base); err == nil {
		t.Error("no error")
	}
	if ents, _ := os.ReadDir(base); len(ents) != 1 {
		t.Errorf("%s holds %d entries, want bad.npy alone", base, len(ents))
	}
}

// A staging directory carries the id of the process that made it, but a
// live run is told by its lock: a stage with this process's own id that
// this process did not make is stale (in a container every run is PID
// 1) and is removed; one whose lock is held (a run in another PID
// namespace) stays.
func TestStaleStageWithOwnPID(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no stage locks on windows")
	}
	dir := t.TempDir()
	stale := filepath.Join(dir, fmt.Sprintf("%s%d-old", stagePrefix, os.Getpid()))
	live := filepath.Join(dir, fmt.Sprintf("%s%d-live", stagePrefix, os.Getpid()))
	for _, s := range []string{stale, live} {
		os.MkdirAll(s, 0o755)
		os.WriteFile(filepath.Join(s, "y_final.npy"), []byte("half"), 0o644)
	}
	release, state := tryLock(live)
	if state != lockTaken {
		t.Skip("this file system takes no locks")
	}
	if _, _, err := runCmd("solve", "../../examples/lorenz.ode", "-q", "--out", dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Error("the stale stage with this process's id is left")
	}
	if _, err := os.Stat(filepath.Join(live, "y_final.npy")); err != nil {
		t.Error("the stage of a live run was removed")
	}
	release()
	if _, _, err := runCmd("solve", "../../examples/lorenz.ode", "-q", "--out", dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(live); err == nil {
		t.Error("the stage whose run ended is left")
	}
	checkOutputSet(t, dir, false)
}

// killAt starts the binary with args and a commit pause, waits until
// ready says the commit has reached the point wanted, and sends sig. It
// returns the exit code and stderr.
func killAt(t *testing.T, bin string, sig syscall.Signal, ready func() bool, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "GRADSOLVE_TEST_COMMIT_PAUSE=30ms")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for !ready() {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("%v: the commit never got there", args)
		}
		time.Sleep(time.Millisecond)
	}
	cmd.Process.Signal(sig)
	err := cmd.Wait()
	code := waitStatus(err)
	return code, errb.String()
}

// exists reports whether dir holds name.
func exists(dir, name string) bool {
	_, err := os.Lstat(filepath.Join(dir, name))
	return err == nil
}

// A run killed half-way through its commit — after it removed the
// earlier stats.json, or after it moved some of its own files in — is
// cleaned up completely by the next run, even one that writes fewer
// files: the commit manifest lists both sets.
func TestKilledCommitCleanedUp(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGKILL on windows")
	}
	bin := gradsolveBinary(t)
	// The earlier set: solve with sensitivities and save times.
	earlier := []string{"solve", "--system", "lorenz", "--n", "50", "--ref", "0", "-q", "--sens", "rho", "--saveat", "0.5"}
	// The killed run: grad with save times (grad_*.npy the earlier set
	// has not).
	killed := []string{"grad", "../../examples/lorenz.ode", "--n", "60", "--saveat", "0.5", "--loss", "sumsq", "-q"}
	// The next run writes only y_final, status, params and stats.json.
	next := []string{"solve", "--system", "lorenz", "--n", "70", "--ref", "0", "-q"}
	for _, c := range []struct {
		what  string
		ready func(dir string) bool
		left  []string // what the kill must have left, to test the case
	}{
		{"after removing the earlier stats.json", func(dir string) bool { return !exists(dir, "stats.json") }, []string{manifestName, "sens.npy", "sens_saved.npy"}},
		{"after moving grad_params.npy in", func(dir string) bool { return exists(dir, "grad_params.npy") }, []string{manifestName, "grad_params.npy"}},
	} {
		dir := t.TempDir()
		if r := execCmd(t, nil, append(earlier, "--out", dir)...); r.code != 0 {
			t.Fatal(r.stderr)
		}
		code, stderr := killAt(t, bin, syscall.SIGKILL, func() bool { return c.ready(dir) }, append(killed, "--out", dir)...)
		if code != -1 && code != 137 {
			t.Logf("%s: exit %d %s", c.what, code, stderr)
		}
		for _, name := range c.left {
			if !exists(dir, name) {
				t.Fatalf("%s: the kill left no %s: the case is not tested", c.what, name)
			}
		}
		if exists(dir, "stats.json") {
			t.Fatalf("%s: stats.json is there", c.what)
		}
		if r := execCmd(t, nil, append(next, "--out", dir)...); r.code != 0 {
			t.Fatal(r.stderr)
		}
		if n, ok := checkOutputSet(t, dir, false); n != 70 || !ok {
			t.Errorf("%s: next run: n %d, complete %v", c.what, n, ok)
		}
		for _, name := range []string{"sens.npy", "sens_saved.npy", "y_saved.npy", "grad_params.npy", "grad_y0.npy", manifestName} {
			if exists(dir, name) {
				t.Errorf("%s: %s is left beside the next run's set", c.what, name)
			}
		}
	}
}

// A signal that comes while the commit moves the files in does not stop
// it: the directory gets the new complete set, and the command still
// exits with 143 (SIGTERM) or 130 (SIGINT), saying so.
func TestSignalDuringCommit(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGTERM on windows")
	}
	bin := gradsolveBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		dir := t.TempDir()
		earlierRun(t, dir)
		code, stderr := killAt(t, bin, sig, func() bool { return exists(dir, manifestName) }, signalJob(300, dir)...)
		want := map[syscall.Signal]int{syscall.SIGTERM: 143, syscall.SIGINT: 130}[sig]
		if code != want || !strings.Contains(stderr, "interrupted by "+signalName(sig)) || !strings.Contains(stderr, "after writing "+dir+" in full") {
			t.Errorf("%v during the commit: exit %d, stderr %q; want %d", sig, code, stderr, want)
		}
		if n, ok := checkOutputSet(t, dir, false); n != 300 || !ok {
			t.Errorf("%v during the commit: n %d, complete %v; want the new set whole", sig, n, ok)
		}
	}
}

// waitStatus is the exit status a finished command's Wait error carries,
// 0 for none.
func waitStatus(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return 0
}
