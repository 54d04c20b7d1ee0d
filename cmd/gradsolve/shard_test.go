package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve/npy"
)

// clusterVars are the variables that make a run a shard without
// --shard.
var clusterVars = []string{"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_STEP", "JOB_COMPLETION_INDEX"}

// unsetClusterVars unsets them, so that "go test" run in a task of a
// job array solves the tests' whole ensembles (the tests that want a
// shard from the environment set the variables themselves).
func unsetClusterVars() {
	for _, k := range clusterVars {
		os.Unsetenv(k)
	}
}

// The shards' rows are contiguous, in order, cover 0…n−1, differ in
// size by one at most, and are computed without overflow for any n.
func TestShardRows(t *testing.T) {
	for _, c := range []struct{ n, N int }{{1, 1}, {7, 3}, {19, 4}, {19, 19}, {100, 7}, {1 << 62, 7}, {math.MaxInt, 1000}} {
		prev := 0
		minSize, maxSize := math.MaxInt, 0
		for i := range c.N {
			lo, hi := shardRows(i, c.N, c.n)
			if lo != prev || hi < lo {
				t.Fatalf("n %d, N %d: shard %d is [%d, %d) after %d", c.n, c.N, i, lo, hi, prev)
			}
			minSize, maxSize = min(minSize, hi-lo), max(maxSize, hi-lo)
			prev = hi
		}
		if prev != c.n || maxSize-minSize > 1 {
			t.Errorf("n %d, N %d: the shards end at %d, sizes %d…%d", c.n, c.N, prev, minSize, maxSize)
		}
	}
	// The documented formula, on an uneven split: ⌊I·n/N⌋.
	var got [][2]int
	for i := range 4 {
		lo, hi := shardRows(i, 4, 19)
		got = append(got, [2]int{lo, hi})
	}
	if want := [][2]int{{0, 4}, {4, 9}, {9, 14}, {14, 19}}; !slices.Equal(got, want) {
		t.Errorf("19 rows in 4 shards: %v, want %v", got, want)
	}
}

// The shard comes from --shard, from JOB_COMPLETION_INDEX with
// --shards, or from a Slurm job array's variables; bad values are
// refused naming the flag or the variable.
func TestResolveShard(t *testing.T) {
	for _, c := range []struct {
		name string
		fl   shardFlags
		env  map[string]string
		want string // "I/N", "" for no shard, or "error: substring"
	}{
		{"none", shardFlags{}, nil, ""},
		{"flag", shardFlags{spec: "2/5"}, nil, "2/5"},
		{"flag wins over slurm", shardFlags{spec: "0/2"}, map[string]string{"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "4"}, "0/2"},
		{"off in a job array", shardFlags{spec: "off"}, map[string]string{"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "4"}, ""},
		{"slurm count", shardFlags{}, map[string]string{"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "3"}, "3/4"},
		{"slurm min max from 1", shardFlags{}, map[string]string{"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "4"}, "0/4"},
		{"slurm step", shardFlags{}, map[string]string{"SLURM_ARRAY_TASK_ID": "6", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "6", "SLURM_ARRAY_TASK_STEP": "2", "SLURM_ARRAY_TASK_COUNT": "4"}, "3/4"},
		{"slurm count alone", shardFlags{}, map[string]string{"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "3"}, "2/3"},
		{"kubernetes", shardFlags{shards: 4}, map[string]string{"JOB_COMPLETION_INDEX": "2"}, "2/4"},
		{"kubernetes index alone", shardFlags{}, map[string]string{"JOB_COMPLETION_INDEX": "2"}, ""},

		{"flag not I/N", shardFlags{spec: "3"}, nil, "error: --shard \"3\": want I/N"},
		{"flag not numbers", shardFlags{spec: "a/b"}, nil, "error: --shard \"a/b\": want I/N"},
		{"flag index = N", shardFlags{spec: "4/4"}, nil, "error: --shard \"4/4\": the index I = 4 must be 0 … 3"},
		{"flag negative index", shardFlags{spec: "-1/4"}, nil, "error: the index I = -1 must be 0 … 3"},
		{"flag zero shards", shardFlags{spec: "0/0"}, nil, "error: the number of shards N = 0 must be ≥ 1"},
		{"flag and shards", shardFlags{spec: "1/4", shards: 4}, nil, "error: --shard 1/4 and --shards 4: give one of them"},
		{"shards negative", shardFlags{shards: -2}, nil, "error: --shards = -2: must be ≥ 1"},
		{"shards without index", shardFlags{shards: 4}, nil, "error: --shards 4: JOB_COMPLETION_INDEX is not set"},
		{"index too large", shardFlags{shards: 4}, map[string]string{"JOB_COMPLETION_INDEX": "4"}, "error: JOB_COMPLETION_INDEX=4 with --shards 4: the index must be 0 … 3"},
		{"index not a number", shardFlags{shards: 4}, map[string]string{"JOB_COMPLETION_INDEX": "x"}, "error: JOB_COMPLETION_INDEX=\"x\": want an integer ≥ 0"},
		{"slurm id not a number", shardFlags{}, map[string]string{"SLURM_ARRAY_TASK_ID": "one"}, "error: SLURM_ARRAY_TASK_ID=\"one\": want an integer"},
		{"slurm no count", shardFlags{}, map[string]string{"SLURM_ARRAY_TASK_ID": "1"}, "error: neither SLURM_ARRAY_TASK_COUNT nor SLURM_ARRAY_TASK_MAX is set"},
		{"slurm list", shardFlags{}, map[string]string{"SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "7"}, "error: the array's 3 tasks are not the range 1-7:1"},
		{"slurm id outside", shardFlags{}, map[string]string{"SLURM_ARRAY_TASK_ID": "9", "SLURM_ARRAY_TASK_COUNT": "4"}, "error: the task is not one of the range's 4"},
		{"slurm step zero", shardFlags{}, map[string]string{"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_STEP": "0"}, "error: SLURM_ARRAY_TASK_STEP must be ≥ 1"},
		{"slurm max below min", shardFlags{}, map[string]string{"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_MIN": "3", "SLURM_ARRAY_TASK_MAX": "2"}, "error: SLURM_ARRAY_TASK_MAX is below SLURM_ARRAY_TASK_MIN"},
	} {
		s, err := resolveShard(c.fl, func(k string) string { return c.env[k] })
		got := ""
		switch {
		case err != nil:
			got = "error: " + err.Error()
		case s != nil:
			got = fmt.Sprintf("%d/%d", s.I, s.N)
		}
		if wantErr, ok := strings.CutPrefix(c.want, "error: "); ok {
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Errorf("%s: got %q, want an error with %q", c.name, got, wantErr)
			}
		} else if got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// shardInputs writes the input files of the sharded runs (n = 19 rows
// where per trajectory) and returns their paths by name.
func shardInputs(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(16, 3))
	files := map[string]string{}
	write := func(name string, shape []int, f func(i int) float64) {
		size := 1
		for _, d := range shape {
			size *= d
		}
		data := make([]float64, size)
		for i := range data {
			data[i] = f(i)
		}
		path := filepath.Join(dir, name+".npy")
		if err := npy.WriteFloat64File(path, shape, data); err != nil {
			t.Fatal(err)
		}
		files[name] = path
	}
	u := func(lo, hi float64) func(int) float64 { return func(int) float64 { return lo + (hi-lo)*rng.Float64() } }
	write("params", []int{19, 3}, u(5, 25))                                            // rho, sigma, beta
	write("y0", []int{19, 3}, u(-2, 2))                                                // x, y, z
	write("t1", []int{19}, u(0.3, 0.6))                                                // per-trajectory end times
	write("saveat", []int{19, 2}, func(i int) float64 { return 0.1 * float64(1+i%2) }) // n×k save times
	write("data", []int{19, 2, 3}, u(-5, 5))                                           // saved-state targets
	write("weights", []int{2, 3}, u(0.5, 1.5))                                         // k×dim, shared
	write("data-final", []int{19, 3}, u(-5, 5))                                        // final-state targets
	write("weights-final", []int{19, 3}, u(0.5, 1.5))                                  // n×dim
	write("cot", []int{19, 2, 3}, u(-1, 1))                                            // saved-state cotangent
	write("cot-final", []int{19, 3}, u(-1, 1))                                         // final-state cotangent
	return files
}

// shardCases are the command lines the sharded runs repeat: solve
// plain, with sensitivities and save times (and failures), with every
// input from files, and grad with each kind of loss.
func shardCases(f map[string]string) []struct {
	name string
	args []string
} {
	lorenz := "../../examples/lorenz.ode"
	return []struct {
		name string
		args []string
	}{
		{"solve", []string{"solve", lorenz, "--n", "19", "--param", "rho=5:25", "--t1", "0.5"}},
		{"solve --sens --saveat", []string{"solve", lorenz, "--n", "19", "--param", "rho=5:25", "--param", "beta=2:3", "--sens", "rho,y0.x",
			"--saveat", "0.2,0.4", "--t1", "0.5", "--max-steps", "70"}},
		{"solve files", []string{"solve", lorenz, "--params", f["params"], "--param", "sigma=8:12", "--y0", f["y0"], "--t1", f["t1"], "--saveat", f["saveat"]}},
		{"grad sumsq", []string{"grad", lorenz, "--n", "19", "--param", "rho=5:25", "--t1", "0.5", "--loss", "sumsq"}},
		{"grad data forward", []string{"grad", lorenz, "--y0", f["y0"], "--t1", f["t1"], "--param", "rho=5:25", "--saveat", "0.1,0.2",
			"--data", f["data"], "--weights", f["weights"], "--data-final", f["data-final"], "--weights-final", f["weights-final"], "--mode", "forward"}},
		{"grad cot reverse", []string{"grad", lorenz, "--y0", f["y0"], "--param", "rho=5:25", "--t1", "0.4", "--saveat", "0.1,0.2",
			"--cot", f["cot"], "--cot-final", f["cot-final"], "--mode", "reverse", "--wrt", "rho,y0.z"}},
	}
}

// runShards runs args as N shards, each into its own directory under
// root, and returns the directories in reverse order (merge sorts them).
func runShards(t *testing.T, root string, args []string, N int) []string {
	t.Helper()
	var dirs []string
	for i := N - 1; i >= 0; i-- {
		dir := filepath.Join(root, fmt.Sprintf("shard-%d-of-%d", i, N))
		if _, _, err := runCmd(append(slices.Clone(args), "--shard", fmt.Sprintf("%d/%d", i, N), "--out", dir, "-q")...); err != nil {
			t.Fatalf("shard %d/%d: %v", i, N, err)
		}
		dirs = append(dirs, dir)
	}
	return dirs
}

// sameAsWhole checks that the merged directory holds the files of the
// run without shards, byte for byte, and the same counts and loss
// (bitwise) in stats.json.
func sameAsWhole(t *testing.T, what, whole, merged string) {
	t.Helper()
	ws, ms := readStats(t, whole), readStats(t, merged)
	wf, mf := ws["files"].(map[string]any), ms["files"].(map[string]any)
	if len(wf) != len(mf) {
		t.Errorf("%s: merged files %v, the whole run's %v", what, mf, wf)
	}
	for name := range wf {
		a, err1 := os.ReadFile(filepath.Join(whole, name))
		b, err2 := os.ReadFile(filepath.Join(merged, name))
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Errorf("%s: %s differs from the whole run's (%v, %v)", what, name, err1, err2)
		}
	}
	for _, key := range []string{"n", "dim", "k", "method", "rtol", "atol", "accepted_steps", "rejected_steps", "f_evaluations", "failed",
		"statuses", "first_failures", "grad_params_columns", "grad_y0_columns", "mode", "sensitivity_columns"} {
		if fmt.Sprint(ws[key]) != fmt.Sprint(ms[key]) {
			t.Errorf("%s: stats.json %s: merged %v, whole %v", what, key, ms[key], ws[key])
		}
	}
	// The loss bitwise: JSON writes the shortest decimal that reads back
	// to the same float64, so equal strings are equal bits.
	if wl, ok := ws["loss"]; ok {
		ml, _ := ms["loss"].(float64)
		if math.Float64bits(ml) != math.Float64bits(wl.(float64)) {
			t.Errorf("%s: merged loss %v, whole %v", what, ml, wl)
		}
	} else if _, ok := ms["loss"]; ok {
		t.Errorf("%s: merged stats.json has a loss the whole run's has not", what)
	}
}

// Merged shards are bitwise the run without shards: every array byte
// for byte and grad's loss bit for bit, for N = 1 … 4 shards of 19
// trajectories (uneven splits; the whole run uses the lane engine, the
// smaller shards the scalar one), for solve with and without
// sensitivities, save times and input files, and grad with each loss.
func TestShardMergeBitwise(t *testing.T) {
	files := shardInputs(t)
	for _, c := range shardCases(files) {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			whole := filepath.Join(root, "whole")
			if _, _, err := runCmd(append(slices.Clone(c.args), "--out", whole, "-q")...); err != nil {
				t.Fatal(err)
			}
			if c.name == "solve --sens --saveat" {
				if st := readStats(t, whole); st["failed"].(float64) == 0 || len(st["first_failures"].([]any)) == 0 {
					t.Fatalf("the case is meant to have failures (--max-steps 70): %v", st["statuses"])
				}
			}
			for N := 1; N <= 4; N++ {
				dirs := runShards(t, filepath.Join(root, fmt.Sprint(N)), c.args, N)
				merged := filepath.Join(root, fmt.Sprintf("merged-%d", N))
				if _, _, err := runCmd(append([]string{"merge", "--out", merged, "-q"}, dirs...)...); err != nil {
					t.Fatalf("merge of %d shards: %v", N, err)
				}
				sameAsWhole(t, fmt.Sprintf("%d shards", N), whole, merged)
			}
		})
	}
}

// Without --shard, a Slurm job array's or a Kubernetes Indexed Job's
// variables choose the shard, which shard.json records.
func TestShardFromEnvironment(t *testing.T) {
	args := []string{"solve", "../../examples/lorenz.ode", "--n", "10", "--param", "rho=5:25", "--t1", "0.3", "-q"}
	root := t.TempDir()
	whole := filepath.Join(root, "whole")
	if _, _, err := runCmd(append(slices.Clone(args), "--out", whole)...); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		env   map[string]string
		extra []string
	}{
		{"slurm", map[string]string{"SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "2"}, nil},
		{"slurm from 1", map[string]string{"SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "3"}, nil},
		{"kubernetes", nil, []string{"--shards", "3"}},
	} {
		var dirs []string
		for i := range 3 {
			for _, k := range clusterVars {
				t.Setenv(k, c.env[k])
			}
			if c.extra == nil {
				t.Setenv("SLURM_ARRAY_TASK_ID", fmt.Sprint(i+atoi(c.env["SLURM_ARRAY_TASK_MIN"])))
			} else {
				t.Setenv("JOB_COMPLETION_INDEX", fmt.Sprint(i))
			}
			dir := filepath.Join(root, c.name, fmt.Sprint(i))
			if _, _, err := runCmd(append(append(slices.Clone(args), c.extra...), "--out", dir)...); err != nil {
				t.Fatalf("%s, task %d: %v", c.name, i, err)
			}
			var rec shardRecord
			b, _ := os.ReadFile(filepath.Join(dir, "shard.json"))
			if err := json.Unmarshal(b, &rec); err != nil || rec.Shard != i || rec.Shards != 3 || rec.N != 10 {
				t.Fatalf("%s, task %d: shard.json %s (%v)", c.name, i, b, err)
			}
			dirs = append(dirs, dir)
		}
		t.Setenv("SLURM_ARRAY_TASK_ID", "")
		t.Setenv("JOB_COMPLETION_INDEX", "")
		merged := filepath.Join(root, c.name, "merged")
		if _, _, err := runCmd(append([]string{"merge", "--out", merged, "-q"}, dirs...)...); err != nil {
			t.Fatal(err)
		}
		sameAsWhole(t, c.name, whole, merged)
	}
	// --shard off runs the whole ensemble inside an array task.
	t.Setenv("SLURM_ARRAY_TASK_ID", "1")
	t.Setenv("SLURM_ARRAY_TASK_COUNT", "3")
	off := filepath.Join(root, "off")
	if _, _, err := runCmd(append(slices.Clone(args), "--shard", "off", "--out", off)...); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(off, "shard.json")); err == nil || readStats(t, off)["n"].(float64) != 10 {
		t.Error("--shard off in an array task did not solve the whole ensemble")
	}
}

func atoi(s string) int {
	var v int
	fmt.Sscan(s, &v)
	return v
}

// A run refuses shard values that do not fit its ensemble: more shards
// than trajectories, and the flags' and variables' errors.
func TestShardRunErrors(t *testing.T) {
	lorenz := "../../examples/lorenz.ode"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"solve", lorenz, "--n", "3", "--shard", "0/4"}, "--shard 0/4: 4 shards of 3 trajectories (--n 3) would leave shards empty: use at most 3 shards"},
		{[]string{"grad", lorenz, "--n", "3", "--loss", "sumsq", "--shard", "3/3"}, "--shard \"3/3\": the index I = 3 must be 0 … 2"},
		{[]string{"solve", lorenz, "--shard", "1:4"}, "--shard \"1:4\": want I/N"},
		{[]string{"solve", lorenz, "--shards", "2"}, "--shards 2: JOB_COMPLETION_INDEX is not set"},
	} {
		_, _, err := runCmd(c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
	// A loss input of the wrong size says the shapes are the shard's.
	f := shardInputs(t)
	_, _, err := runCmd("grad", lorenz, "--n", "12", "--data", f["data-final"], "--shard", "1/2", "-q")
	if err == nil || !strings.Contains(err.Error(), "n above is the shard's 6") {
		t.Errorf("a 19-row --data with --n 12 in shard 1/2: %v", err)
	}
}

// merge refuses shards that do not make one whole run, naming what
// differs.
func TestMergeRefusals(t *testing.T) {
	f := shardInputs(t)
	root := t.TempDir()
	lorenz := "../../examples/lorenz.ode"
	base := []string{"solve", lorenz, "--n", "10", "--param", "rho=5:25", "--t1", "0.3"}
	shardOf := func(name string, args []string, spec string) string {
		dir := filepath.Join(root, name)
		if _, _, err := runCmd(append(slices.Clone(args), "--shard", spec, "--out", dir, "-q")...); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	with := func(args []string, more ...string) []string { return append(slices.Clone(args), more...) }
	a0, a1 := shardOf("a0", base, "0/2"), shardOf("a1", base, "1/2")
	b0 := shardOf("b0", base, "0/2")
	third := shardOf("third", base, "1/3")
	other := filepath.Join(root, "lorenz-copy.ode")
	src, _ := os.ReadFile(lorenz)
	if err := os.WriteFile(other, append(src, []byte("\n# a copy\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	problem := shardOf("problem", with([]string{"solve", other}, base[2:]...), "1/2")
	rtol := shardOf("rtol", with(base, "--rtol", "1e-7"), "1/2")
	method := shardOf("method", with(base, "--method", "dp5"), "1/2")
	sweep := shardOf("sweep", with([]string{"solve", lorenz, "--n", "10", "--param", "rho=5:26", "--t1", "0.3"}), "1/2")
	n := shardOf("n", with([]string{"solve", lorenz, "--n", "11", "--param", "rho=5:25", "--t1", "0.3"}), "1/2")
	gradShard := shardOf("grad", with([]string{"grad", lorenz, "--n", "10", "--param", "rho=5:25", "--t1", "0.3", "--loss", "sumsq"}), "1/2")
	whole := filepath.Join(root, "whole")
	if _, _, err := runCmd(append(slices.Clone(base), "--out", whole, "-q")...); err != nil {
		t.Fatal(err)
	}
	incomplete := shardOf("incomplete", base, "1/2")
	os.Remove(filepath.Join(incomplete, "stats.json"))
	// grad's loss input changed after the shards ran.
	data := filepath.Join(root, "data.npy")
	b, _ := os.ReadFile(f["data-final"])
	os.WriteFile(data, b, 0o644)
	gargs := []string{"grad", lorenz, "--y0", f["y0"], "--param", "rho=5:25", "--t1", "0.3", "--data", data}
	g0, g1 := shardOf("g0", gargs, "0/2"), shardOf("g1", gargs, "1/2")
	os.WriteFile(data, append(b[:len(b)-8], make([]byte, 8)...), 0o644)

	out := filepath.Join(root, "out")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"problem", []string{a0, problem}, "problem file is sha256:"},
		{"tolerance", []string{a0, rtol}, "--rtol is 1e-08 in " + a0 + " but 1e-07 in " + rtol},
		{"method", []string{a0, method}, "method is Tsit5 in " + a0 + " but DP5 in " + method},
		{"ensemble", []string{a0, sweep}, "--param is rho=5:25 in " + a0 + " but rho=5:26 in " + sweep},
		{"n", []string{a0, n}, "n is 10 in " + a0 + " but 11 in " + n},
		{"command", []string{a0, gradShard}, "command is solve in " + a0 + " but grad in " + gradShard},
		{"missing", []string{a1}, "shard 0 of 2 missing"},
		{"duplicate dir", []string{a0, a0, a1}, "are both shard 0/2"},
		{"duplicate shard", []string{a0, b0, a1}, a0 + " and " + b0 + " are both shard 0/2"},
		{"different N", []string{a0, a1, third}, "is shard 1 of 3 but " + a0 + " is shard 0 of 2: shards of different splits"},
		{"not a shard", []string{a0, whole}, whole + " has no shard.json: not the output of a shard"},
		{"incomplete", []string{a0, incomplete}, incomplete + " has no stats.json"},
		{"absent", []string{a0, filepath.Join(root, "nowhere")}, "nowhere: no such file or directory"},
		{"out is a shard", []string{"--out", a1, a0, a1}, "--out " + a1 + " is one of the shards' directories"},
		{"no out", []string{"--out", "", a0, a1}, "give the output directory with --out DIR"},
		{"loss input changed", []string{g0, g1}, "--data " + data + " changed since the shards ran"},
	} {
		args := append([]string{"merge", "--out", out, "-q"}, c.args...)
		_, _, err := runCmd(args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if _, err := os.Stat(filepath.Join(out, "stats.json")); err == nil {
			t.Fatalf("%s: a refused merge wrote %s", c.name, out)
		}
	}
	// --sum-losses merges without the loss inputs: the sum of the shards'
	// losses, equal to the recomputed loss to rounding (two partial sums
	// of 10 terms each: a few ulps of the total).
	if _, _, err := runCmd("merge", "--out", out, "--sum-losses", "-q", g0, g1); err != nil {
		t.Fatal(err)
	}
	sum := readStats(t, out)["loss"].(float64)
	l0, l1 := readStats(t, g0)["loss"].(float64), readStats(t, g1)["loss"].(float64)
	if sum != l0+l1 {
		t.Errorf("--sum-losses: %v, want %v + %v", sum, l0, l1)
	}
}
