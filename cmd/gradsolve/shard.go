package main

// Shards: --shard I/N on solve and grad (and the cluster's variables in
// its place) runs the I-th of N contiguous slices of the ensemble, and
// records in shard.json what it is, so that "gradsolve merge" (merge.go)
// can put the pieces together and refuse pieces of different runs.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gradsolve/gradsolve"
)

// shardFlags are the flags that choose a shard.
type shardFlags struct {
	spec   string // --shard I/N, "off", or "" (from the environment)
	shards int    // --shards N: the count that goes with JOB_COMPLETION_INDEX
}

func addShardFlags(fs *flag.FlagSet, s *shardFlags) {
	fs.StringVar(&s.spec, "shard", "", "I/N: solve only shard I (0-based) of N contiguous slices of the ensemble, rows [⌊I·n/N⌋, ⌊(I+1)·n/N⌋); off: the whole ensemble even in a job array (default: from SLURM_ARRAY_TASK_ID, or JOB_COMPLETION_INDEX with --shards)")
	fs.IntVar(&s.shards, "shards", 0, "N: the number of shards of a Kubernetes Indexed Job; the shard's index is JOB_COMPLETION_INDEX")
}

// shard is the slice of the ensemble one run solves.
type shard struct {
	I, N   int    // shard I (0-based) of N
	From   string // where I and N came from, for messages ("--shard 1/4", "SLURM_ARRAY_TASK_ID=1 …")
	Lo, Hi int    // rows [Lo, Hi) of the whole ensemble's n (set by bounds)
	Total  int    // the whole ensemble's n
	// problem is the problem file ("" for a built-in).
	problem string
}

// shardRows returns rows [lo, hi) of shard i of N over n trajectories:
// lo = ⌊i·n/N⌋, hi = ⌊(i+1)·n/N⌋, computed without overflow. The shards
// are contiguous, in order, and cover 0…n−1; their sizes differ by one
// at most, the larger ones last.
func shardRows(i, N, n int) (lo, hi int) {
	at := func(i int) int {
		h, l := bits.Mul64(uint64(i), uint64(n))
		q, _ := bits.Div64(h, l, uint64(N)) // i ≤ N, so the quotient fits
		return int(q)
	}
	return at(i), at(i + 1)
}

// parseShardSpec reads --shard I/N.
func parseShardSpec(spec string) (i, n int, err error) {
	a, b, ok := strings.Cut(spec, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	switch {
	case !ok || err1 != nil || err2 != nil:
		return 0, 0, fmt.Errorf("--shard %q: want I/N, the 0-based index I of N shards (0/4 … 3/4), or off", spec)
	case n < 1:
		return 0, 0, fmt.Errorf("--shard %q: the number of shards N = %d must be ≥ 1", spec, n)
	case i < 0 || i >= n:
		return 0, 0, fmt.Errorf("--shard %q: the index I = %d must be 0 … %d: shards count from 0, as SLURM_ARRAY_TASK_ID does with --array=0-%d", spec, i, n-1, n-1)
	}
	return i, n, nil
}

// envInt reads the integer environment variable name ("" when unset or
// empty: ok false).
func envInt(getenv func(string) string, name string) (v int, ok bool, err error) {
	s := strings.TrimSpace(getenv(name))
	if s == "" {
		return 0, false, nil
	}
	v, err = strconv.Atoi(s)
	if err != nil || v < 0 {
		return 0, false, fmt.Errorf("%s=%q: want an integer ≥ 0", name, getenv(name))
	}
	return v, true, nil
}

// resolveShard returns the shard the flags and the environment name, or
// nil for the whole ensemble. --shard wins; --shards N takes the index
// from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job); otherwise a
// Slurm job array's SLURM_ARRAY_TASK_ID, with the count from
// SLURM_ARRAY_TASK_COUNT or SLURM_ARRAY_TASK_MIN, _MAX (and _STEP),
// makes the shard: I = (ID − MIN)/STEP of N = COUNT. Without any of
// them (or with --shard off) the run is not sharded.
func resolveShard(sf shardFlags, getenv func(string) string) (*shard, error) {
	switch {
	case sf.spec != "" && sf.shards != 0:
		return nil, fmt.Errorf("--shard %s and --shards %d: give one of them (--shards goes with JOB_COMPLETION_INDEX)", sf.spec, sf.shards)
	case sf.spec == "off":
		return nil, nil
	case sf.spec != "":
		i, n, err := parseShardSpec(sf.spec)
		if err != nil {
			return nil, err
		}
		return &shard{I: i, N: n, From: "--shard " + sf.spec}, nil
	case sf.shards < 0:
		return nil, fmt.Errorf("--shards = %d: must be ≥ 1", sf.shards)
	case sf.shards > 0:
		idx, ok, err := envInt(getenv, "JOB_COMPLETION_INDEX")
		if err != nil {
			return nil, fmt.Errorf("--shards %d: %w", sf.shards, err)
		}
		if !ok {
			return nil, fmt.Errorf("--shards %d: JOB_COMPLETION_INDEX is not set: --shards is for a Kubernetes Indexed Job (completionMode: Indexed), which sets it; elsewhere give --shard I/N", sf.shards)
		}
		if idx >= sf.shards {
			return nil, fmt.Errorf("JOB_COMPLETION_INDEX=%d with --shards %d: the index must be 0 … %d (set the Job's completions to --shards)", idx, sf.shards, sf.shards-1)
		}
		return &shard{I: idx, N: sf.shards, From: fmt.Sprintf("JOB_COMPLETION_INDEX=%d with --shards %d", idx, sf.shards)}, nil
	}
	return slurmShard(getenv)
}

// slurmShard reads a Slurm job array's variables (nil when
// SLURM_ARRAY_TASK_ID is unset).
func slurmShard(getenv func(string) string) (*shard, error) {
	id, ok, err := envInt(getenv, "SLURM_ARRAY_TASK_ID")
	if err != nil || !ok {
		return nil, err
	}
	var v [4]int
	var set [4]bool
	names := [4]string{"SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_STEP"}
	for k, name := range names {
		if v[k], set[k], err = envInt(getenv, name); err != nil {
			return nil, err
		}
	}
	count, lo, hi, step := v[0], v[1], v[2], 1
	if set[3] {
		step = v[3]
	}
	desc := fmt.Sprintf("SLURM_ARRAY_TASK_ID=%d", id)
	for k, name := range names {
		if set[k] {
			desc += fmt.Sprintf(" %s=%d", name, v[k])
		}
	}
	switch {
	case step < 1:
		return nil, fmt.Errorf("%s: SLURM_ARRAY_TASK_STEP must be ≥ 1", desc)
	case !set[0] && !set[2]:
		return nil, fmt.Errorf("%s: neither SLURM_ARRAY_TASK_COUNT nor SLURM_ARRAY_TASK_MAX is set, so the number of shards is unknown: give --shard I/N (or --shard off for the whole ensemble)", desc)
	case set[2] && hi < lo:
		return nil, fmt.Errorf("%s: SLURM_ARRAY_TASK_MAX is below SLURM_ARRAY_TASK_MIN", desc)
	}
	if !set[0] {
		count = (hi-lo)/step + 1
	}
	contiguous := "gradsolve shards need an array of one range, --array=A-B or A-B:S (or give --shard I/N in each task, or --shard off for the whole ensemble)"
	switch {
	case count < 1:
		return nil, fmt.Errorf("%s: SLURM_ARRAY_TASK_COUNT must be ≥ 1", desc)
	case set[2] && count != (hi-lo)/step+1:
		return nil, fmt.Errorf("%s: the array's %d tasks are not the range %d-%d:%d: %s", desc, count, lo, hi, step, contiguous)
	case id < lo || (id-lo)%step != 0 || (id-lo)/step >= count:
		return nil, fmt.Errorf("%s: the task is not one of the range's %d: %s", desc, count, contiguous)
	}
	return &shard{I: (id - lo) / step, N: count, From: desc}, nil
}

// String is the shard as messages name it: "shard 1/4 (--shard 1/4)".
func (s *shard) String() string {
	if strings.HasPrefix(s.From, "--shard ") {
		return s.From
	}
	return fmt.Sprintf("shard %d/%d (%s)", s.I, s.N, s.From)
}

// bounds sets the shard's rows of an ensemble of n trajectories. It
// refuses more shards than trajectories: every shard holds at least one
// row, so no shard writes empty arrays.
func (s *shard) bounds(n int, nFrom string) error {
	if s.N > n {
		return fmt.Errorf("%s: %d shards of %s trajectories (%s) would leave shards empty: use at most %d shards", s, s.N, strconv.Itoa(n), nFrom, n)
	}
	s.Total = n
	s.Lo, s.Hi = shardRows(s.I, s.N, n)
	return nil
}

// shardCheck is the size check of a sharded run: the shard's arrays,
// and a --param sweep's parameter rows, which are built for the whole
// ensemble before the shard's rows are taken.
func (j *job) shardCheck(sf sizeFlags) error {
	s := j.shard
	if err := s.bounds(sf.n, sf.subject()); err != nil {
		return err
	}
	j.rowsTotal = sf.n
	sub := sf
	sub.n = s.Hi - s.Lo
	sub.nFrom = fmt.Sprintf("%s of %s", s, sf.nFrom)
	if sf.nFrom == "--n" {
		sub.nFrom = fmt.Sprintf("%s of --n %d", s, sf.n)
	}
	return j.checkChunked(sub)
}

// take cuts the rows of the shard out of a loss input of grad (--data,
// --weights, --cot and their -final companions) when it holds one row
// per trajectory of the whole ensemble: n×dim for the final states
// (saved false) or n×k×dim for the saved states (saved true). Shared
// arrays (dim, k×dim, 1×k×dim) stay; a shape that fits neither is left
// for the shape check, whose message notes the shard (shardNote).
func (g *gradFlags) take(l *loaded, saved bool) {
	s := g.shard
	if s == nil || l == nil || s.Total == 1 {
		return
	}
	dims := 2
	if saved {
		dims = 3
	}
	if l.a.Dims() != dims || l.a.Shape[0] != s.Total {
		return
	}
	if l.rows != nil { // read by rows: only where they start changes
		l.off = s.Lo
		l.a.Shape[0] = s.Hi - s.Lo
		return
	}
	width := len(l.a.Data) / s.Total
	a := *l.a
	a.Shape = slices.Clone(a.Shape)
	a.Shape[0] = s.Hi - s.Lo
	a.Data = slices.Clone(a.Data[s.Lo*width : s.Hi*width])
	l.a = &a
}

// shardNote adds to a shape error of a sharded run's loss inputs that
// the shapes it names are the shard's.
func (j *job) shardNote(err error) error {
	if err == nil || j.shard == nil {
		return err
	}
	s := j.shard
	return fmt.Errorf("%w (%s: rows %d…%d of n = %d, so n above is the shard's %d; a per-trajectory file holds the whole ensemble's %d rows)", err, s, s.Lo, s.Hi-1, s.Total, s.Hi-s.Lo, s.Total)
}

// shardRecord is the content of shard.json, which a sharded run writes
// beside its outputs (part of its set: present only with stats.json).
type shardRecord struct {
	// Format is shardFormat.
	Format string `json:"format"`
	// Shard (0-based) and Shards say which slice this is.
	Shard  int `json:"shard"`
	Shards int `json:"shards"`
	// From says where they came from (the flag or the variables).
	From string `json:"from"`
	// Rows are the shard's rows [lo, hi) of the whole ensemble.
	Rows [2]int `json:"rows"`
	// N is the whole ensemble's size.
	N int `json:"n"`
	// RunID is the run's (as in stats.json).
	RunID string `json:"run_id"`
	// Definition is what every shard of one ensemble shares: the
	// command, the problem, the ensemble, the options, the loss. Input
	// files appear by their SHA-256, so shards run in different
	// directories agree; merge refuses shards whose definitions differ.
	Definition map[string]string `json:"definition"`
	// Files are the input files' absolute paths, by flag (not compared:
	// merge reads grad's loss inputs from them to recompute the loss).
	Files map[string]string `json:"files"`
}

// shardFormat names the layout of shard.json.
const shardFormat = "gradsolve shard 1"

// fileDigest returns "sha256:HEX" of the file at path.
func fileDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// record builds the shard's shard.json for the result res of its run.
func (j *job) shardRecord(res *gradsolve.Result, runID string) (*shardRecord, error) {
	s, fl := j.shard, j.fl
	r := &shardRecord{Format: shardFormat, Shard: s.I, Shards: s.N, From: s.From, Rows: [2]int{s.Lo, s.Hi}, N: s.Total, RunID: runID,
		Definition: map[string]string{}, Files: map[string]string{}}
	d := r.Definition
	d["command"] = j.cmd
	d["problem"] = j.pr.Name
	if j.builtin {
		d["--system"] = fl.system
	} else {
		dig, err := fileDigest(s.problem)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.problem, unwrapPath(err))
		}
		d["problem file"] = dig
	}
	d["n"] = strconv.Itoa(s.Total)
	d["method"] = res.Method
	g := strconv.FormatFloat
	d["--rtol"], d["--atol"] = g(fl.rtol, 'g', -1, 64), g(fl.atol, 'g', -1, 64)
	d["--max-steps"] = strconv.Itoa(fl.maxSteps)
	d["--dense"] = strconv.FormatBool(fl.dense)
	d["--engine"] = fl.engine
	d["--param"] = strings.Join(fl.params, " ")
	values := []struct{ flag, v string }{{"params", fl.paramsFile}, {"y0", fl.y0}, {"t0", fl.t0}, {"t1", fl.t1}, {"saveat", fl.saveat}}
	if j.cmd == "solve" {
		d["--sens"] = fl.sens
		d["--sens-error-test"] = strconv.FormatBool(fl.sensErrorTest)
	} else {
		gf := &fl.grad
		d["--loss"], d["--wrt"], d["--mode"] = gf.loss, gf.wrt, gf.mode
		values = append(values, []struct{ flag, v string }{{"data", gf.data}, {"data-final", gf.dataFinal}, {"weights", gf.weights},
			{"weights-final", gf.weightsFinal}, {"cot", gf.cot}, {"cot-final", gf.cotFinal}}...)
	}
	for _, v := range values {
		d["--"+v.flag] = v.v
		if v.v == "" || !isNpy(v.v) {
			continue
		}
		dig, err := fileDigest(v.v)
		if err != nil {
			return nil, fmt.Errorf("--%s %s: %w", v.flag, v.v, unwrapPath(err))
		}
		d["--"+v.flag] = dig
		if abs, err := filepath.Abs(v.v); err == nil {
			r.Files[v.flag] = abs
		}
	}
	return r, nil
}

// shardOutputs stages shard.json, when the run is a shard, and returns
// more (the first failures of stats.json are already indexed in the
// whole ensemble: summary.add).
func (j *job) shardOutputs(ctx context.Context, res *gradsolve.Result, more func(st *stats)) (func(st *stats), error) {
	if j.shard == nil || j.out == nil {
		return more, nil
	}
	rec, err := j.shardRecord(res, j.out.runID)
	if err != nil {
		return nil, err
	}
	err = j.out.writeFile(ctx, "shard.json", func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rec)
	})
	if err != nil {
		return nil, err
	}
	return more, nil
}

// reportShard prints which rows the run solved.
func (j *job) reportShard(w io.Writer) {
	if s := j.shard; s != nil {
		fmt.Fprintf(w, "  shard %d/%d (%s): trajectories %d…%d of n = %d\n", s.I, s.N, s.From, s.Lo, s.Hi-1, s.Total)
	}
}
