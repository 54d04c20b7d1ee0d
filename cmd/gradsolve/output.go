package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/npy"
	"github.com/gradsolve/gradsolve/ode"
)

// statusCode is the number status.npy holds for each status: 0 means
// success, so `status != 0` selects the failures.
var statusCode = map[gradsolve.Status]int32{
	gradsolve.Success:         0,
	gradsolve.MaxStepsReached: 1,
	gradsolve.NonFinite:       2,
	gradsolve.StepUnderflow:   3,
	gradsolve.Cancelled:       4,
	gradsolve.NotRun:          5,
}

// outputNames lists every file any gradsolve command writes into an
// output directory (outSet.path panics on another name, and
// TestOutputNamesComplete checks every command). A commit removes only
// files an earlier run wrote: the names its stats.json lists under
// "files", and those the manifest of a commit that did not finish lists,
// and of those only names in this list. Any other file stays, even one
// named like another command's output (the user's y0.npy beside a solve
// that reads it); a file named like one this run writes is replaced.
var outputNames = []string{
	"stats.json", // last: present only beside a complete set
	// solve and grad
	"y_final.npy", "y_saved.npy", "status.npy", "params.npy",
	"sens.npy", "sens_saved.npy", "grad_params.npy", "grad_y0.npy",
	"shard.json", // a shard of solve or grad (shard.go)
	"pilot.json", // solve --accuracy: the pilot study (accuracy.go)
	// halo
	"y0.npy", "errors.npy", "orbits.png", "errors.png",
	// precession (also params.npy, y_final.npy, errors.npy)
	"angles_100.npy", "angles_10.npy", "tilts.png",
	// quintessence
	"profile.csv", "profile.png",
	// fit
	"fit.json", "params_fit.npy", "covariance.npy", "history.csv", "loss.png",
}

// manifestName is the commit manifest. A commit writes it (atomically)
// before it removes anything, listing the earlier set's files and its
// own, and removes it once stats.json is in place; so when a commit is
// killed half-way, the next run into the directory still knows every
// file of both sets and removes them.
const manifestName = ".gradsolve-commit"

// stagePrefix starts the name of the directory a run writes its files
// into before they move into place: ".gradsolve-stage-PID-RANDOM". The
// run holds a lock (flock) on it while it lives; the kernel drops the
// lock when the process dies, SIGKILL included, so a stage nobody holds
// is stale, whatever process now has that id.
const stagePrefix = ".gradsolve-stage-"

// runSet identifies a complete output set in its stats.json.
type runSet struct {
	// RunID is random, one per run.
	RunID string `json:"run_id"`
	// Files are the set's files (stats.json aside) and their sizes in
	// bytes.
	Files map[string]int64 `json:"files"`
}

// manifest is the content of the commit manifest.
type manifest struct {
	// RunID is the committing run's.
	RunID string `json:"run_id"`
	// Files are the names of the earlier set and of the committing
	// run's, stats.json included.
	Files []string `json:"files"`
}

// outSet is the output directory of one run. Files are written into a
// staging directory inside it; commit then removes the earlier run's
// outputs (stats.json first), moves the new files in and writes
// stats.json last. So at every moment, whatever happens (an error, a
// full disk, SIGTERM, SIGKILL), the directory holds the files of one run
// at most, and holds stats.json only beside that run's complete set.
type outSet struct {
	dir, flag, stage string
	runID            string
	files            []string // staged, in order
	// created is the top-most directory openOutSet had to create ("" when
	// dir existed): abort removes what it created, so that a run that
	// fails before its commit leaves no new directory behind.
	created string
	release func() // releases the stage's lock; nil without one
	mu      sync.Mutex
	done    bool // committed or aborted
}

// commitPause, read from GRADSOLVE_TEST_COMMIT_PAUSE (a duration such
// as "20ms"), makes commit wait after each of its steps, so that a test
// can kill a run while it moves its files in. Unset, there is no pause.
var commitPause, _ = time.ParseDuration(os.Getenv("GRADSOLVE_TEST_COMMIT_PAUSE"))

// pending are the sets not yet committed or aborted, for the cleanup
// of a second signal (see main) and to know this process's own stages.
var pending struct {
	sync.Mutex
	sets map[*outSet]bool
}

// committed are the directories this process committed a set into, for
// the message of a signal that came too late to stop the commit.
var committed struct {
	sync.Mutex
	dirs []string
}

// lockState is what tryLock found.
type lockState int

const (
	lockTaken   lockState = iota // nobody else held it
	lockBusy                     // a live process holds it
	lockUnknown                  // no lock could be tried
)

// openOutSet creates dir if needed and its staging directory (which
// proves files can be created there) before any work is done, and
// removes staging directories that runs killed earlier left behind.
// flag names dir in messages ("--out").
func openOutSet(dir, flag string) (*outSet, error) {
	created := missingAncestor(dir)
	o := &outSet{dir: dir, flag: flag, created: created}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		o.removeCreated()
		return nil, fmt.Errorf("%s %s: cannot create it: %w", flag, dir, unwrapPath(err))
	}
	// Under the directory's lock no other run removes stale stages or
	// commits, so no run sees this stage before it is locked.
	unlock := lockDir(dir)
	removeStaleStages(dir)
	stage, err := os.MkdirTemp(dir, fmt.Sprintf("%s%d-", stagePrefix, os.Getpid()))
	if err == nil {
		o.stage = stage
		o.release, _ = tryLock(stage)
	}
	unlock()
	if err != nil {
		o.removeCreated()
		return nil, fmt.Errorf("%s %s: cannot write there: %w", flag, dir, unwrapPath(err))
	}
	var id [16]byte
	rand.Read(id[:])
	o.runID = hex.EncodeToString(id[:])
	pending.Lock()
	if pending.sets == nil {
		pending.sets = map[*outSet]bool{}
	}
	pending.sets[o] = true
	pending.Unlock()
	return o, nil
}

// missingAncestor returns the top-most of dir and its parents that does
// not exist, or "" when dir exists.
func missingAncestor(dir string) string {
	top := ""
	for p := filepath.Clean(dir); ; {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			return top
		}
		top = p
		parent := filepath.Dir(p)
		if parent == p {
			return top
		}
		p = parent
	}
}

// removeCreated removes the directories openOutSet created, innermost
// first, as long as they are empty.
func (o *outSet) removeCreated() {
	if o.created == "" {
		return
	}
	for p := filepath.Clean(o.dir); ; p = filepath.Dir(p) {
		if os.Remove(p) != nil || p == o.created || p == filepath.Dir(p) {
			return
		}
	}
}

// unwrapPath drops the *fs.PathError's operation and path from err,
// which the caller's message names in the command's terms.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ownStage reports whether path is the stage of a set of this process
// that is still open.
func ownStage(path string) bool {
	pending.Lock()
	defer pending.Unlock()
	for o := range pending.sets {
		if o.stage == path {
			return true
		}
	}
	return false
}

// removeStaleStages removes the staging directories in dir of runs
// that no longer exist (killed by SIGKILL or a crash): those whose lock
// nobody holds. Where no lock can be tried, it goes by the process id in
// the name: a stage of a process that does not exist, or of this
// process's own id but not created by it (a container's runs are all
// PID 1), is stale.
func removeStaleStages(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), stagePrefix)
		if !ok || !e.IsDir() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if ownStage(path) {
			continue
		}
		release, state := tryLock(path)
		switch state {
		case lockBusy:
			continue
		case lockTaken:
			os.RemoveAll(path)
			release()
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil {
			continue
		}
		if pid == os.Getpid() || !processAlive(pid) {
			os.RemoveAll(path)
		}
	}
}

// path returns where the output called name is staged.
func (o *outSet) path(name string) string {
	if !slices.Contains(outputNames, name) {
		panic("gradsolve: output " + name + " is missing from outputNames")
	}
	if !slices.Contains(o.files, name) {
		o.files = append(o.files, name)
	}
	return filepath.Join(o.stage, name)
}

// ctxWriter fails a write once ctx is cancelled, so that a signal
// stops a large file part-way.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(b []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(b)
}

// writeFile stages the output name with what write writes.
func (o *outSet) writeFile(ctx context.Context, name string, write func(w io.Writer) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := npy.WriteFileAtomic(o.path(name), func(w io.Writer) error { return write(ctxWriter{ctx, w}) })
	if err != nil {
		return o.writeErr(ctx, name, err)
	}
	return nil
}

// writeErr words a failed write: cancellation stays itself; anything
// else names the file in the output directory.
func (o *outSet) writeErr(ctx context.Context, name string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("writing %s: %w (%s %s left as it was)", filepath.Join(o.dir, name), unwrapPath(err), o.flag, o.dir)
}

// writeNpy stages a float64 array as name.
func (o *outSet) writeNpy(ctx context.Context, name string, shape []int, data []float64) error {
	return o.writeFile(ctx, name, func(w io.Writer) error { return npy.WriteFloat64(w, shape, data) })
}

// writeNpyInt32 stages an int32 array as name.
func (o *outSet) writeNpyInt32(ctx context.Context, name string, shape []int, data []int32) error {
	return o.writeFile(ctx, name, func(w io.Writer) error { return npy.WriteInt32(w, shape, data) })
}

// writeWith stages name with write, which writes the file at the path it
// is given (the plots).
func (o *outSet) writeWith(ctx context.Context, name string, write func(path string) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := write(o.path(name)); err != nil {
		return o.writeErr(ctx, name, err)
	}
	return nil
}

// commit makes the staged files the directory's output set, with
// stats.json (the value stats returns for the set) written last. It
// fails without touching the directory when ctx is cancelled before it
// starts, and when a file it would remove or replace is not a regular
// file; once it has started it finishes (it only renames), whatever
// signal comes.
func (o *outSet) commit(ctx context.Context, stats func(set runSet) any) (err error) {
	defer func() {
		if err != nil {
			o.abort()
		}
	}()
	set := runSet{RunID: o.runID, Files: map[string]int64{}}
	for _, name := range o.files {
		fi, err := os.Stat(filepath.Join(o.stage, name))
		if err != nil {
			return err
		}
		set.Files[name] = fi.Size()
	}
	err = o.writeFile(ctx, "stats.json", func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(stats(set))
	})
	if err != nil {
		return err
	}
	unlock := lockDir(o.dir) // another run committing here finishes first
	defer unlock()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done {
		return errors.New("interrupted")
	}
	earlier, err := o.earlierFiles()
	if err != nil {
		return err
	}
	all := slices.Clone(earlier)
	for _, name := range o.files {
		if !slices.Contains(all, name) {
			all = append(all, name)
		}
	}
	slices.Sort(all)
	for _, name := range append(all, manifestName) {
		if err := o.checkRegular(name); err != nil {
			return err
		}
	}
	if err := o.writeManifest(all); err != nil {
		return err
	}
	// From here on the directory changes: a failure leaves part of a
	// set, without stats.json, and the manifest that lets the next run
	// remove it.
	partial := func(what string, err error) error {
		return fmt.Errorf("%s %s: %s: %w; it holds part of this run's files and no stats.json (the next run into it removes them)", o.flag, o.dir, what, unwrapPath(err))
	}
	// Invalidate the earlier set, then remove it whole, then move the
	// new one in: stats.json first out and last in.
	earlier = append([]string{"stats.json"}, slices.DeleteFunc(earlier, func(s string) bool { return s == "stats.json" })...)
	for _, name := range earlier {
		if err := os.Remove(filepath.Join(o.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return partial("cannot remove the earlier run's "+name, err)
		}
		time.Sleep(commitPause)
		if name == "stats.json" {
			syncDir(o.dir)
		}
	}
	for _, name := range o.files {
		if name == "stats.json" {
			continue
		}
		if err := os.Rename(filepath.Join(o.stage, name), filepath.Join(o.dir, name)); err != nil {
			return partial("moving "+name+" into place", err)
		}
		time.Sleep(commitPause)
	}
	syncDir(o.dir)
	if err := os.Rename(filepath.Join(o.stage, "stats.json"), filepath.Join(o.dir, "stats.json")); err != nil {
		return partial("moving stats.json into place", err)
	}
	syncDir(o.dir)
	time.Sleep(commitPause)
	os.Remove(filepath.Join(o.dir, manifestName)) // stats.json now says it all
	syncDir(o.dir)
	o.done = true
	os.RemoveAll(o.stage)
	o.releaseLock()
	pending.Lock()
	delete(pending.sets, o)
	pending.Unlock()
	committed.Lock()
	committed.dirs = append(committed.dirs, o.dir)
	committed.Unlock()
	return nil
}

// earlierFiles returns the files earlier runs left in the directory
// (stats.json among them when it is there): the names the earlier
// stats.json lists under "files", and those the manifest of a commit
// that did not finish lists, as far as they are names gradsolve writes.
// A stats.json that lists no files — an older gradsolve's, or not
// gradsolve's — is refused: nothing tells which files are its run's.
func (o *outSet) earlierFiles() ([]string, error) {
	var names []string
	add := func(name string) {
		if slices.Contains(outputNames, name) && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	for _, file := range []string{"stats.json", manifestName} {
		b, err := os.ReadFile(filepath.Join(o.dir, file))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := o.checkRegular(file); err != nil {
			return nil, err
		}
		if err != nil {
			return nil, fmt.Errorf("%s %s: cannot read its %s: %w (left as it was)", o.flag, o.dir, file, unwrapPath(err))
		}
		var rec struct {
			RunID string          `json:"run_id"`
			Files json.RawMessage `json:"files"`
		}
		var listed map[string]json.RawMessage // stats.json: name → size
		var list []string                     // the manifest: names
		ok := json.Unmarshal(b, &rec) == nil && rec.RunID != ""
		if ok && file == "stats.json" {
			ok = json.Unmarshal(rec.Files, &listed) == nil && listed != nil
			for name := range listed {
				list = append(list, name)
			}
		} else if ok {
			ok = json.Unmarshal(rec.Files, &list) == nil && list != nil
		}
		if !ok {
			if file == manifestName {
				return nil, fmt.Errorf("%s %s: %s is not the manifest of a gradsolve commit: remove it, or choose another %s (left as it was)", o.flag, o.dir, file, o.flag)
			}
			return nil, fmt.Errorf("%s %s: its stats.json does not list its run's files (it was written by a gradsolve older than the output sets, or not by gradsolve), so this run cannot tell which files to replace: remove that run's outputs and stats.json, or choose another %s (left as it was)", o.flag, o.dir, o.flag)
		}
		add("stats.json")
		for _, name := range list {
			add(name)
		}
	}
	slices.Sort(names)
	return names, nil
}

// checkRegular refuses a name the commit would remove or replace that
// is there but is not a regular file (a directory, a link …).
func (o *outSet) checkRegular(name string) error {
	fi, err := os.Lstat(filepath.Join(o.dir, name))
	if err != nil || fi.Mode().IsRegular() {
		return nil
	}
	what := "not a regular file"
	switch {
	case fi.IsDir():
		what = "a directory"
	case fi.Mode()&fs.ModeSymlink != 0:
		what = "a symbolic link"
	}
	return fmt.Errorf("%s %s: %s there is %s, where this run writes or replaces a file of that name: remove it, or choose another %s (left as it was)", o.flag, o.dir, name, what, o.flag)
}

// writeManifest puts the commit manifest listing names in place: written
// in the stage, synced, renamed in, so it is whole or absent.
func (o *outSet) writeManifest(names []string) error {
	b, err := json.MarshalIndent(manifest{RunID: o.runID, Files: names}, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(o.stage, manifestName)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err == nil {
		_, err = f.Write(append(b, '\n'))
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(o.dir, manifestName))
	}
	if err != nil {
		return fmt.Errorf("%s %s: writing %s: %w (left as it was)", o.flag, o.dir, manifestName, unwrapPath(err))
	}
	syncDir(o.dir)
	return nil
}

// releaseLock releases the stage's lock.
func (o *outSet) releaseLock() {
	if o.release != nil {
		o.release()
		o.release = nil
	}
}

// abort removes the staging directory, and the directory itself where
// openOutSet created it and it is empty; the output directory keeps
// what it held. It does nothing after commit.
func (o *outSet) abort() {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done {
		return
	}
	o.done = true
	os.RemoveAll(o.stage)
	o.releaseLock()
	o.removeCreated()
	pending.Lock()
	delete(pending.sets, o)
	pending.Unlock()
}

// abortPending aborts every set not yet committed: on a second signal
// (each command aborts its own set when it returns). A commit in
// progress finishes first.
func abortPending() {
	pending.Lock()
	sets := make([]*outSet, 0, len(pending.sets))
	for o := range pending.sets {
		sets = append(sets, o)
	}
	pending.Unlock()
	for _, o := range sets {
		o.abort()
	}
}

// syncDir makes renames in dir durable where the system allows it (best
// effort).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// stats is the content of stats.json.
type stats struct {
	runSet
	Problem       string         `json:"problem"`
	Engine        string         `json:"engine"`
	EngineReason  string         `json:"engine_reason"`
	RHS           string         `json:"rhs"`
	Method        string         `json:"method"`
	RTol          float64        `json:"rtol"`
	ATol          float64        `json:"atol"`
	MaxSteps      int            `json:"max_steps"`
	N             int            `json:"n"`
	Dim           int            `json:"dim"`
	K             int            `json:"k"`
	Workers       int            `json:"workers"`
	SolveSeconds  float64        `json:"solve_seconds"`
	WallSeconds   float64        `json:"wall_seconds"`
	Accepted      int            `json:"accepted_steps"`
	Rejected      int            `json:"rejected_steps"`
	FEvals        int            `json:"f_evaluations"`
	Failed        int            `json:"failed"`
	Statuses      map[string]int `json:"statuses"`
	StatusCodes   map[string]int `json:"status_codes"`
	StateNames    []string       `json:"state_names"`
	ParamNames    []string       `json:"param_names"`
	FirstFailures []string       `json:"first_failures,omitempty"`
	// grad only
	Loss            *float64 `json:"loss,omitempty"`
	RecordSeconds   float64  `json:"record_seconds,omitempty"`
	GradientSeconds float64  `json:"gradient_seconds,omitempty"`
	Mode            string   `json:"mode,omitempty"`
	Reason          string   `json:"mode_reason,omitempty"`
	*gradStats               // grad only: columns and engine (grad.go)
}

// commitRun commits the run's output set, whose per-trajectory files
// stream staged, with stats.json from the summary (extra adds the
// command's own entries).
func commitRun(ctx context.Context, out *outSet, pr *ode.Problem, k int, sum *summary, rhs string, wallStart time.Time, extra func(st *stats)) error {
	res := sum.first
	st := stats{
		Problem: pr.Name, Engine: res.Engine, EngineReason: flagTerms(res.EngineReason), RHS: rhs, Method: res.Method,
		RTol: res.Options.RTolVec[0], ATol: res.Options.ATolVec[0], MaxSteps: res.Options.MaxSteps,
		N: sum.n, Dim: pr.Dim, K: k, Workers: res.Workers,
		SolveSeconds: sum.elapsed.Seconds(),
		Statuses:     map[string]int{}, StatusCodes: map[string]int{},
		StateNames: pr.StateNames, ParamNames: pr.ParamNames,
		Failed: sum.failed(),
	}
	for s, c := range statusCode {
		st.StatusCodes[s.String()] = int(c)
	}
	for s, c := range sum.counts {
		st.Statuses[s.String()] = c
	}
	for _, e := range sum.failures {
		st.FirstFailures = append(st.FirstFailures, e.Error())
	}
	st.Accepted, st.Rejected, st.FEvals = sum.total.Accepted, sum.total.Rejected, sum.total.FEvals
	if extra != nil {
		extra(&st)
	}
	return out.commit(ctx, func(set runSet) any {
		st.runSet = set
		st.WallSeconds = time.Since(wallStart).Seconds()
		return st
	})
}

// paramRows returns the parameters of every trajectory of e, N×m in
// the problem's parameter order: the ensemble's own rows, or the shared
// values (the ensemble's or the problem's defaults) repeated into buf's
// storage.
func paramRows(pr *ode.Problem, e *gradsolve.Ensemble, buf []float64) []float64 {
	m, n := pr.NumParams, e.N
	if e.P != nil && len(e.P) == n*m {
		return e.P
	}
	p := e.P
	if p == nil {
		p = pr.P
	}
	buf = buf[:0]
	for range n {
		buf = append(buf, p...)
	}
	return buf
}
