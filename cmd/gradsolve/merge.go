package main

// gradsolve merge: the outputs of the shards of one solve or grad
// (shard.go), put back together as the whole ensemble's.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/npy"
)

const mergeUsage = `usage: gradsolve merge --out DIR SHARDDIR…

Put together the output directories of the N shards of one gradsolve solve
or grad (run with --shard I/N, or as the tasks of a Slurm job array or a
Kubernetes Indexed Job; see docs/cluster.md), in any order, into DIR, as
the whole ensemble's run would have written it:

  - per-trajectory arrays (y_final, y_saved, status, params, sens,
    sens_saved, grad_params, grad_y0) are concatenated in shard order:
    bitwise the arrays of the run without shards;
  - grad's loss is recomputed over the merged states by the loss of the
    shards' runs (the same code, the same order of the sum), so it is
    bitwise the loss of the run without shards; this reads the loss's
    input files (--data, --weights, --cot …) from the paths shard.json
    records, and refuses files whose SHA-256 changed. With --sum-losses
    the loss is instead the sum of the shards' losses in shard order,
    equal to the whole run's to rounding only (a sum of partial sums
    groups the terms differently);
  - counts (steps, f-evaluations, statuses, failures) are summed, the
    first failures kept in order, and the times summed (the work done,
    not the elapsed time of the array); stats.json lists every shard
    under "merged".

Shards of different problems, commands, tolerances, methods, ensembles or
losses are refused, as are missing and duplicate shards and shards of
different splits (N). DIR is written as solve's --out is: stats.json last.

flags:
`

// mergeFlags are the flags of "gradsolve merge".
type mergeFlags struct {
	out       string
	sumLosses bool
	quietly   bool
}

// shardDir is one shard's output directory as merge reads it.
type shardDir struct {
	dir   string
	rec   shardRecord
	stats stats
	files []string // the set's arrays (.npy), sorted
}

func mergeCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	mf := &mergeFlags{}
	fs.StringVar(&mf.out, "out", "", "directory for the merged outputs (required; not one of the shards' directories)")
	fs.BoolVar(&mf.sumLosses, "sum-losses", false, "grad: sum the shards' losses in shard order instead of recomputing the loss (equal to rounding, not bitwise; no loss input files needed)")
	fs.BoolVar(&mf.quietly, "q", false, "print no summary")
	fs.Usage = func() {
		fmt.Fprint(stderr, mergeUsage)
		fs.PrintDefaults()
	}
	dirs, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if mf.out == "" {
		return errors.New("merge: give the output directory with --out DIR")
	}
	if len(dirs) == 0 {
		return errors.New("merge: give the shards' output directories (SHARDDIR…)")
	}
	shards, err := readShards(dirs, mf.out)
	if err != nil {
		return err
	}
	out, err := openOutSet(mf.out, "--out")
	if err != nil {
		return err
	}
	defer out.abort()
	st, err := mergeArrays(ctx, out, shards)
	if err != nil {
		return err
	}
	info, err := mergeStats(&st, shards, mf.sumLosses)
	if err != nil {
		return err
	}
	err = out.commit(ctx, func(set runSet) any {
		st.runSet = set
		return struct {
			stats
			Merged *mergeInfo `json:"merged"`
		}{st, info}
	})
	if err != nil {
		return err
	}
	if !mf.quietly {
		s0 := shards[0].rec
		fmt.Fprintf(stdout, "gradsolve: merged %d shards of %s (%s, n = %d) into %s\n", len(shards), st.Problem, s0.Definition["command"], st.N, mf.out)
		fmt.Fprintf(stdout, "  %d accepted, %d rejected steps; %d failed\n", st.Accepted, st.Rejected, st.Failed)
		if st.Loss != nil {
			fmt.Fprintf(stdout, "  loss %.10g (%s)\n", *st.Loss, info.Loss)
		}
	}
	return nil
}

// readShards reads and checks the shards' directories: each a complete
// set with shard.json, all of one split of one definition, every shard
// once. It returns them in shard order.
func readShards(dirs []string, out string) ([]*shardDir, error) {
	outAbs, _ := filepath.Abs(out)
	var shards []*shardDir
	for _, dir := range dirs {
		if abs, _ := filepath.Abs(dir); abs == outAbs {
			return nil, fmt.Errorf("merge: --out %s is one of the shards' directories: write the merged outputs elsewhere", out)
		}
		s, err := readShard(dir)
		if err != nil {
			return nil, err
		}
		shards = append(shards, s)
	}
	first := shards[0]
	byIndex := map[int]*shardDir{}
	for _, s := range shards {
		if s.rec.Shards != first.rec.Shards {
			return nil, fmt.Errorf("merge: %s is shard %d of %d but %s is shard %d of %d: shards of different splits (N) do not fit together", s.dir, s.rec.Shard, s.rec.Shards, first.dir, first.rec.Shard, first.rec.Shards)
		}
		if err := sameDefinition(first, s); err != nil {
			return nil, err
		}
		if o := byIndex[s.rec.Shard]; o != nil {
			return nil, fmt.Errorf("merge: %s and %s are both shard %d/%d: give each shard once", o.dir, s.dir, s.rec.Shard, s.rec.Shards)
		}
		byIndex[s.rec.Shard] = s
	}
	var missing []string
	for i := range first.rec.Shards {
		if byIndex[i] == nil {
			missing = append(missing, strconv.Itoa(i))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("merge: shard %s of %d missing (given: %d directories): give every shard's directory", strings.Join(missing, ", "), first.rec.Shards, len(shards))
	}
	sort.Slice(shards, func(a, b int) bool { return shards[a].rec.Shard < shards[b].rec.Shard })
	for i, s := range shards {
		lo, hi := shardRows(i, s.rec.Shards, s.rec.N)
		if s.rec.Rows != [2]int{lo, hi} || s.stats.N != hi-lo {
			return nil, fmt.Errorf("merge: %s: shard %d/%d of n = %d should hold rows [%d, %d), but its shard.json says %v and its stats.json n = %d", s.dir, s.rec.Shard, s.rec.Shards, s.rec.N, lo, hi, s.rec.Rows, s.stats.N)
		}
		if !slices.Equal(s.files, first.files) {
			return nil, fmt.Errorf("merge: %s holds %s but %s holds %s: the shards wrote different outputs", s.dir, strings.Join(s.files, ", "), first.dir, strings.Join(first.files, ", "))
		}
		if s.stats.Mode != first.stats.Mode {
			return nil, fmt.Errorf("merge: %s took the gradient by %s mode but %s by %s mode: the modes' gradients agree to rounding only; run the shards with the same --mode", s.dir, s.stats.Mode, first.dir, first.stats.Mode)
		}
	}
	return shards, nil
}

// readShard reads one shard's directory.
func readShard(dir string) (*shardDir, error) {
	s := &shardDir{dir: dir}
	b, err := os.ReadFile(filepath.Join(dir, "stats.json"))
	if errors.Is(err, fs.ErrNotExist) {
		if _, e := os.Stat(dir); e != nil {
			return nil, fmt.Errorf("merge: %s: %w", dir, unwrapPath(e))
		}
		return nil, fmt.Errorf("merge: %s has no stats.json: not the output of a finished run (a shard that stopped early leaves none: run it again)", dir)
	}
	if err != nil {
		return nil, fmt.Errorf("merge: %s: %w", dir, unwrapPath(err))
	}
	// json cannot allocate the embedded *gradStats (an unexported
	// type): give it one, and drop it again for a solve's stats.json,
	// which has no grad_params_columns.
	s.stats.gradStats = &gradStats{}
	if err := json.Unmarshal(b, &s.stats); err != nil || s.stats.RunID == "" {
		return nil, fmt.Errorf("merge: %s: its stats.json is not a gradsolve run's", dir)
	}
	if s.stats.gradStats.ParamColumns == nil {
		s.stats.gradStats = nil
	}
	b, err = os.ReadFile(filepath.Join(dir, "shard.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("merge: %s has no shard.json: not the output of a shard (run solve or grad with --shard I/N, or as a task of a job array)", dir)
	}
	if err != nil {
		return nil, fmt.Errorf("merge: %s: %w", dir, unwrapPath(err))
	}
	if err := json.Unmarshal(b, &s.rec); err != nil || s.rec.Format != shardFormat {
		return nil, fmt.Errorf("merge: %s: its shard.json is not a gradsolve shard's (format %q)", dir, shardFormat)
	}
	if s.rec.RunID != s.stats.RunID || s.stats.Files["shard.json"] == 0 {
		return nil, fmt.Errorf("merge: %s: its shard.json (run %s) is not of the run of its stats.json (run %s)", dir, s.rec.RunID, s.stats.RunID)
	}
	for name, size := range s.stats.Files {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.Size() != size {
			return nil, fmt.Errorf("merge: %s: %s, which its stats.json lists with %d bytes, is missing or of another size: the set is incomplete", dir, name, size)
		}
		if strings.HasSuffix(name, ".npy") {
			s.files = append(s.files, name)
		}
	}
	slices.Sort(s.files)
	return s, nil
}

// sameDefinition refuses two shards whose definitions differ, naming
// the first entry that does.
func sameDefinition(a, b *shardDir) error {
	var keys []string
	for k := range a.rec.Definition {
		keys = append(keys, k)
	}
	for k := range b.rec.Definition {
		if _, ok := a.rec.Definition[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	// The problem and the command first: they explain the rest.
	keys = slices.DeleteFunc(keys, func(k string) bool { return k == "command" || k == "problem" })
	keys = append([]string{"command", "problem"}, keys...)
	quote := func(v string, ok bool) string {
		if !ok {
			return "(none)"
		}
		if v == "" {
			return `""`
		}
		return v
	}
	for _, k := range keys {
		va, oka := a.rec.Definition[k]
		vb, okb := b.rec.Definition[k]
		if va != vb || oka != okb {
			return fmt.Errorf("merge: %s and %s are shards of different runs: %s is %s in %s but %s in %s", a.dir, b.dir, k, quote(va, oka), a.dir, quote(vb, okb), b.dir)
		}
	}
	return nil
}

// mergeArrays stages each array of the shards, concatenated along the
// first axis (the trajectories) in shard order, and returns the first
// shard's stats to combine. The arrays are copied a block of rows at a
// time, so merging takes no memory of n.
func mergeArrays(ctx context.Context, out *outSet, shards []*shardDir) (stats, error) {
	for _, name := range shards[0].files {
		if !slices.Contains(outputNames, name) {
			return stats{}, fmt.Errorf("merge: %s: %s is not an output gradsolve merges", shards[0].dir, name)
		}
		// The shapes first: the merged header needs the total.
		var shape []int
		for _, s := range shards {
			path := filepath.Join(s.dir, name)
			r, err := npy.OpenRows(path)
			if err != nil {
				return stats{}, fmt.Errorf("merge: %w", err)
			}
			sh := r.Shape()
			r.Close()
			rows := s.rec.Rows[1] - s.rec.Rows[0]
			if sh[0] != rows {
				return stats{}, fmt.Errorf("merge: %s: shape %s, want %d rows (the shard's trajectories) first", path, pyShape(sh), rows)
			}
			if shape == nil {
				shape = slices.Clone(sh)
				shape[0] = 0
			} else if !slices.Equal(sh[1:], shape[1:]) {
				return stats{}, fmt.Errorf("merge: %s: shape %s, but %s's is %s after the rows", path, pyShape(sh), filepath.Join(shards[0].dir, name), pyShape(shape))
			}
			shape[0] += rows
		}
		w, finish, err := out.create(ctx, name)
		if err != nil {
			return stats{}, err
		}
		var put func([]float64) error
		var complete func() error // the writer's count check
		if name == "status.npy" {
			iw, err := npy.NewInt32Writer(w, shape)
			if err != nil {
				finish()
				return stats{}, out.writeErr(ctx, name, err)
			}
			var codes []int32
			put = func(v []float64) error {
				codes = codes[:0]
				for _, c := range v {
					codes = append(codes, int32(c))
				}
				return iw.Append(codes)
			}
			complete = iw.Finish
		} else {
			fw, err := npy.NewFloat64Writer(w, shape)
			if err != nil {
				finish()
				return stats{}, out.writeErr(ctx, name, err)
			}
			put, complete = fw.Append, fw.Finish
		}
		err = shardBlocks(shards, []string{name}, func(_ int, rows [][]float64) error {
			if err := put(rows[0]); err != nil {
				return out.writeErr(ctx, name, err)
			}
			return nil
		})
		if err == nil {
			if err = complete(); err != nil {
				err = out.writeErr(ctx, name, err)
			}
		}
		if ferr := finish(); err == nil {
			err = ferr
		}
		if err != nil {
			if ctx.Err() != nil {
				return stats{}, ctx.Err()
			}
			return stats{}, err
		}
	}
	return shards[0].stats, nil
}

// shardBlocks calls f with consecutive blocks of rows of the arrays
// names, in shard order: the index of the block's first row in the
// whole ensemble, and each array's rows (valid until the next call).
func shardBlocks(shards []*shardDir, names []string, f func(lo int, rows [][]float64) error) error {
	lo := 0
	bufs := make([][]float64, len(names))
	for _, s := range shards {
		rs := make([]*npy.Rows, len(names))
		closeAll := func() {
			for _, r := range rs {
				if r != nil {
					r.Close()
				}
			}
		}
		width := 1
		for i, name := range names {
			r, err := npy.OpenRows(filepath.Join(s.dir, name))
			if err != nil {
				closeAll()
				return fmt.Errorf("merge: %w", err)
			}
			rs[i] = r
			width = max(width, r.RowLen())
		}
		n := rs[0].Shape()[0]
		block := max(1, (1<<16)/width)
		for a := 0; a < n; a += block {
			b := min(n, a+block)
			for i, r := range rs {
				v, err := r.Read(a, b, bufs[i])
				if err != nil {
					closeAll()
					return fmt.Errorf("merge: %w", err)
				}
				bufs[i] = v
			}
			if err := f(lo+a, bufs); err != nil {
				closeAll()
				return err
			}
		}
		closeAll()
		lo += n
	}
	return nil
}

// mergeInfo is the "merged" entry of a merged stats.json.
type mergeInfo struct {
	// Shards is the number of shards (N).
	Shards int `json:"shards"`
	// Loss says how the loss was merged (grad).
	Loss string `json:"loss,omitempty"`
	// Definition is the shards' common definition (see shard.json).
	Definition map[string]string `json:"definition"`
	// From lists the shards in order.
	From []mergedShard `json:"from"`
}

// mergedShard is one shard in a merged stats.json.
type mergedShard struct {
	Dir          string   `json:"dir"`
	Shard        int      `json:"shard"`
	Rows         [2]int   `json:"rows"`
	From         string   `json:"from"`
	RunID        string   `json:"run_id"`
	Engine       string   `json:"engine"`
	Workers      int      `json:"workers"`
	SolveSeconds float64  `json:"solve_seconds"`
	WallSeconds  float64  `json:"wall_seconds"`
	Loss         *float64 `json:"loss,omitempty"`
}

// mergeStats combines the shards' stats into st (the first shard's):
// counts summed, the first failures kept in order, times summed, and the
// loss recomputed (or, with sumLosses, summed in shard order).
func mergeStats(st *stats, shards []*shardDir, sumLosses bool) (*mergeInfo, error) {
	info := &mergeInfo{Shards: len(shards), Definition: shards[0].rec.Definition}
	st.N, st.Accepted, st.Rejected, st.FEvals, st.Failed = 0, 0, 0, 0, 0
	st.SolveSeconds, st.WallSeconds, st.RecordSeconds, st.GradientSeconds, st.Workers = 0, 0, 0, 0, 0
	st.Statuses, st.FirstFailures = map[string]int{}, nil
	var engines []string
	for _, s := range shards {
		o := s.stats
		st.N += o.N
		st.Accepted += o.Accepted
		st.Rejected += o.Rejected
		st.FEvals += o.FEvals
		st.Failed += o.Failed
		for k, c := range o.Statuses {
			st.Statuses[k] += c
		}
		for _, f := range o.FirstFailures {
			if len(st.FirstFailures) < 10 {
				st.FirstFailures = append(st.FirstFailures, f)
			}
		}
		st.SolveSeconds += o.SolveSeconds
		st.WallSeconds += o.WallSeconds
		st.RecordSeconds += o.RecordSeconds
		st.GradientSeconds += o.GradientSeconds
		st.Workers = max(st.Workers, o.Workers)
		if !slices.Contains(engines, o.Engine) {
			engines = append(engines, o.Engine)
		}
		info.From = append(info.From, mergedShard{Dir: s.dir, Shard: s.rec.Shard, Rows: s.rec.Rows, From: s.rec.From, RunID: s.rec.RunID,
			Engine: o.Engine, Workers: o.Workers, SolveSeconds: o.SolveSeconds, WallSeconds: o.WallSeconds, Loss: o.Loss})
	}
	if len(engines) > 1 {
		// The router prefers another engine for a shard of fewer
		// trajectories than a lane engine's lanes; the engines' bits
		// are the same (the conformance suite's contract).
		st.Engine = strings.Join(engines, ", ")
		st.EngineReason = "the shards ran on different engines (see merged.from), chosen for their sizes; the engines return the same bits"
		if st.gradStats != nil {
			st.gradStats.RouterEngine = st.Engine
		}
	}
	if shards[0].rec.Definition["command"] != "grad" {
		return info, nil
	}
	if sumLosses {
		var l float64
		for _, s := range shards {
			if s.stats.Loss == nil {
				return nil, fmt.Errorf("merge: %s: its stats.json has no loss", s.dir)
			}
			l += *s.stats.Loss
		}
		st.Loss = &l
		info.Loss = "the sum of the shards' losses in shard order (--sum-losses): equal to the whole run's loss to rounding, not bitwise"
		return info, nil
	}
	l, err := recomputeLoss(shards, st)
	if err != nil {
		return nil, err
	}
	st.Loss = &l
	info.Loss = "recomputed over the merged states by the shards' loss: bitwise the whole run's loss"
	return info, nil
}

// recomputeLoss evaluates grad's loss, as the shards' runs built it
// from their flags, over the merged final and saved states: the same
// function and the same order of the sum as the run without shards.
func recomputeLoss(shards []*shardDir, st *stats) (float64, error) {
	rec := shards[0].rec
	d := rec.Definition
	g := &gradFlags{loss: d["--loss"]}
	for _, f := range []struct {
		flag string
		dst  *string
	}{{"data", &g.data}, {"data-final", &g.dataFinal}, {"weights", &g.weights}, {"weights-final", &g.weightsFinal}, {"cot", &g.cot}, {"cot-final", &g.cotFinal}} {
		if d["--"+f.flag] == "" {
			continue
		}
		path := rec.Files[f.flag]
		dig, err := fileDigest(path)
		advice := "make it readable at that path, or give --sum-losses to sum the shards' losses (equal to rounding, not bitwise)"
		if err != nil {
			return 0, fmt.Errorf("merge: the loss's --%s %s cannot be read (%v): %s", f.flag, path, unwrapPath(err), advice)
		}
		if dig != d["--"+f.flag] {
			return 0, fmt.Errorf("merge: the loss's --%s %s changed since the shards ran (its SHA-256 differs): %s", f.flag, path, advice)
		}
		*f.dst = path
	}
	n, dim, k := st.N, st.Dim, st.K
	loss, _, err := gradLoss(g, n, dim, k)
	if err != nil {
		return 0, fmt.Errorf("merge: rebuilding the loss: %w", err)
	}
	fromCode := map[int32]gradsolve.Status{}
	for s, c := range statusCode {
		fromCode[c] = s
	}
	// Block by block over the merged states: the loss adds its terms
	// trajectory after trajectory (a ChunkLoss), so the sum is the whole
	// run's, bit for bit.
	names := []string{"y_final.npy", "status.npy"}
	if k > 0 {
		names = append(names, "y_saved.npy")
	}
	var l float64
	err = shardBlocks(shards, names, func(lo int, rows [][]float64) error {
		res := &gradsolve.Result{N: len(rows[1]), Dim: dim, K: k, Y: rows[0]}
		if k > 0 {
			res.Saved = rows[2]
		}
		res.Status = make([]gradsolve.Status, res.N)
		for i, c := range rows[1] {
			s, ok := fromCode[int32(c)]
			if !ok || c != math.Trunc(c) {
				return fmt.Errorf("merge: status.npy: element %d = %g is not a status code", lo+i, c)
			}
			res.Status[i] = s
		}
		var err error
		if l, _, err = loss(lo, res, l); err != nil {
			return fmt.Errorf("merge: evaluating the loss: %w", err)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return l, nil
}
