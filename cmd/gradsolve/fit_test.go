package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve/fit"
)

// The fit command's test problems.
const (
	decayODE = "testdata/fit/decay.ode"      // y' = −k·y, y0 = 1, k = 0.5, t ∈ [0, 2]
	oscODE   = "testdata/fit/oscillator.ode" // x'' = −w²·x − c·x', (x, v) = (1, 0), w = 1, c = 0.2, t ∈ [0, 3]
	oscSave  = "0.5,1,1.5,2,2.5,3"
)

// solveData solves with the command's own solve and returns the path of
// the file it wrote (y_final.npy, or y_saved.npy with --saveat).
func solveData(t *testing.T, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	if _, _, err := runCmd(append(append([]string{"solve"}, args...), "--rtol", "1e-10", "--atol", "1e-12", "--out", dir, "-q")...); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(args, "--saveat") {
		return filepath.Join(dir, "y_saved.npy")
	}
	return filepath.Join(dir, "y_final.npy")
}

// fitReport is what the tests read of fit.json.
type fitReport struct {
	Parameters []string    `json:"parameters"`
	Groups     int         `json:"groups"`
	Owner      string      `json:"owner"`
	Estimates  [][]float64 `json:"estimates"`
	Loss       []*float64  `json:"loss"`
	Iterations []int       `json:"iterations"`
	Converged  []bool      `json:"converged"`
	Status     []string    `json:"status"`
	Records    int         `json:"records"`
	Mode       string      `json:"mode"`
	ModeReason string      `json:"mode_reason"`
	Optimizer  string      `json:"optimizer"`
	StdErr     [][]float64 `json:"stderr"`
}

func readFitJSON(t *testing.T, dir string) (*fitReport, map[string]any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "fit.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r fitReport
	var raw map[string]any
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	return &r, raw
}

// The optimisers as the tests run them: Adam with a decaying rate, so
// that it settles.
var fitOptimizers = []struct {
	name string
	args []string
	tol  float64 // relative error allowed in the estimates
}{
	{"lm", nil, 1e-6},
	{"lbfgs", []string{"--optimizer", "lbfgs"}, 1e-5},
	{"adam", []string{"--optimizer", "adam", "--lr", "0.05", "--lr-decay", "0.995", "--max-iter", "600"}, 1e-2},
}

// fit recovers the parameters that made the data: one set shared by
// every trajectory, one per trajectory (--each), one per group
// (--groups), by each optimiser; and an initial value with a rate from
// final states.
func TestFitRecovers(t *testing.T) {
	dir := t.TempDir()
	// Shared: w = 1.1, c = 0.25 for four trajectories from their own x0.
	y0 := writeNpy(t, dir, "y0.npy", []int{4, 2}, []float64{1, 0, 0.5, 0, 2, 0, -1, 0.5})
	shared := solveData(t, oscODE, "--y0", y0, "--param", "w=1.1", "--param", "c=0.25", "--saveat", oscSave)
	// Per trajectory: w from 0.8 to 1.4, c = 0.3.
	each := solveData(t, oscODE, "--n", "4", "--param", "w=0.8:1.4", "--param", "c=0.3", "--saveat", oscSave)
	// Groups 0 0 1 1 2 2, (w, c) = (0.9, 0.1), (1.2, 0.3), (1.5, 0.2).
	truthG := [][]float64{{0.9, 0.1}, {1.2, 0.3}, {1.5, 0.2}}
	var pg []float64
	for i := range 6 {
		pg = append(pg, truthG[i/2]...)
	}
	params := writeNpy(t, dir, "params.npy", []int{6, 2}, pg)
	y0g := writeNpy(t, dir, "y0g.npy", []int{6, 2}, []float64{1, 0, 2, 0, 1, 0, 2, 0, 1, 0, 2, 0})
	grouped := solveData(t, oscODE, "--params", params, "--y0", y0g, "--saveat", oscSave)
	groups := writeNpy(t, dir, "groups.npy", []int{6}, []float64{0, 0, 1, 1, 2, 2})

	cases := []struct {
		name  string
		args  []string
		truth [][]float64 // per group
	}{
		{"shared", []string{oscODE, "--data", shared, "--y0", y0, "--saveat", oscSave, "--fit", "w,c"}, [][]float64{{1.1, 0.25}}},
		{"each", []string{oscODE, "--data", each, "--saveat", oscSave, "--fit", "w,c", "--each"},
			[][]float64{{0.8, 0.3}, {1, 0.3}, {1.2, 0.3}, {1.4, 0.3}}},
		{"groups", []string{oscODE, "--data", grouped, "--y0", y0g, "--saveat", oscSave, "--fit", "w,c", "--groups", groups,
			"--start", "w=1.2,c=0.2", "--transform", "w=log", "--transform", "c=logit:0:1"}, truthG},
	}
	for _, c := range cases {
		for _, o := range fitOptimizers {
			t.Run(c.name+"/"+o.name, func(t *testing.T) {
				out := t.TempDir()
				stdout, _, err := runCmd(append(append(append([]string{"fit"}, c.args...), o.args...), "--out", out)...)
				if err != nil {
					t.Fatal(err)
				}
				r, _ := readFitJSON(t, out)
				G := len(c.truth)
				est := readNpy(t, filepath.Join(out, "params_fit.npy"), G, 2)
				if r.Groups != G || len(r.Estimates) != G || !slices.Equal(r.Parameters, []string{"w", "c"}) {
					t.Fatalf("fit.json: %d groups, %d estimates, parameters %v", r.Groups, len(r.Estimates), r.Parameters)
				}
				for g, truth := range c.truth {
					for p, want := range truth {
						if got := est[g*2+p]; math.Abs(got-want) > o.tol*want || got != r.Estimates[g][p] {
							t.Errorf("group %d %s = %.10g (fit.json %.10g), want %g", g, r.Parameters[p], got, r.Estimates[g][p], want)
						}
					}
					if o.name != "adam" && !r.Converged[g] {
						t.Errorf("group %d: %s", g, r.Status[g])
					}
				}
				if !strings.Contains(stdout, "gradsolve fit: oscillator") || !strings.Contains(stdout, "status: ") {
					t.Errorf("summary:\n%s", stdout)
				}
			})
		}
	}

	// An initial value and the rate from final states at their own t1.
	t1 := writeNpy(t, dir, "t1.npy", []int{3}, []float64{0.5, 1, 2})
	final := solveData(t, decayODE, "--t1", t1, "--param", "k=0.7", "--y0", writeNpy(t, dir, "y0d.npy", []int{1}, []float64{1.5}))
	out := t.TempDir()
	if _, _, err := runCmd("fit", decayODE, "--data", final, "--t1", t1, "--fit", "k,y0.y", "--out", out, "-q"); err != nil {
		t.Fatal(err)
	}
	est := readNpy(t, filepath.Join(out, "params_fit.npy"), 1, 2)
	if math.Abs(est[0]-0.7) > 1e-6 || math.Abs(est[1]-1.5) > 1e-6 {
		t.Errorf("decay: (k, y0.y) = %v, want (0.7, 1.5)", est)
	}
}

// --fisher writes covariance.npy (groups × p × p) and the standard
// errors in fit.json; with noisy data of known σ the estimates lie
// within a few standard errors of the truth.
func TestFitFisher(t *testing.T) {
	const sigma = 0.01
	clean := solveData(t, oscODE, "--n", "6", "--param", "w=1.2", "--param", "c=0.3", "--saveat", oscSave)
	y := readNpy(t, clean, 6, 6, 2)
	rng := rand.New(rand.NewPCG(1, 2))
	noisy := make([]float64, len(y))
	for i, v := range y {
		noisy[i] = v + sigma*rng.NormFloat64()
	}
	dir := t.TempDir()
	data := writeNpy(t, dir, "noisy.npy", []int{6, 6, 2}, noisy)
	groups := writeNpy(t, dir, "groups.npy", []int{6}, []float64{0, 1, 0, 1, 0, 1})
	for _, c := range []struct {
		name string
		args []string
	}{
		{"sigma", []string{"--sigma", "0.01"}},
		{"weights", []string{"--weights", writeNpy(t, dir, "w.npy", []int{2}, []float64{1 / (sigma * sigma), 1 / (sigma * sigma)})}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{"fit", oscODE, "--data", data, "--saveat", oscSave, "--fit", "w,c", "--groups", groups, "--fisher", "--out", out, "-q"}, c.args...)
			if _, _, err := runCmd(args...); err != nil {
				t.Fatal(err)
			}
			r, raw := readFitJSON(t, out)
			cov := readNpy(t, filepath.Join(out, "covariance.npy"), 2, 2, 2)
			if len(r.StdErr) != 2 || raw["noise"] == nil {
				t.Fatalf("fit.json: stderr %v, noise %v", r.StdErr, raw["noise"])
			}
			for g := range 2 {
				for p, want := range []float64{1.2, 0.3} {
					se := r.StdErr[g][p]
					if !(se > 0) || math.Abs(se-math.Sqrt(cov[g*4+p*3])) > 1e-12*se {
						t.Errorf("group %d %s: stderr %g, covariance diagonal %g", g, r.Parameters[p], se, cov[g*4+p*3])
					}
					if d := math.Abs(r.Estimates[g][p] - want); d > 4*se {
						t.Errorf("group %d %s = %g: %.1f standard errors (%g) from the truth %g", g, r.Parameters[p], r.Estimates[g][p], d/se, se, want)
					}
				}
				// χ² = 2·loss is about the number of residuals, 3·6·2 = 36.
				if chi2 := 2 * *r.Loss[g]; chi2 < 10 || chi2 > 80 {
					t.Errorf("group %d: χ² = %g for 36 residuals", g, chi2)
				}
			}
		})
	}
}

// The output set: fit.json with its keys, params_fit.npy, history.csv
// with a row per iterate, loss.png, stats.json listing them; no
// covariance.npy without --fisher. The reverse replay re-records as
// --rerecord says.
func TestFitOutputs(t *testing.T) {
	data := solveData(t, oscODE, "--n", "8", "--param", "w=0.8:1.5", "--saveat", oscSave)
	for _, c := range []struct {
		rerecord string
		records  func(int) bool
	}{{"never", func(r int) bool { return r == 1 }}, {"3", func(r int) bool { return r > 1 }}} {
		out := t.TempDir()
		stdout, _, err := runCmd("fit", oscODE, "--data", data, "--saveat", oscSave, "--fit", "w", "--each", "--optimizer", "lbfgs",
			"--mode", "reverse", "--rerecord", c.rerecord, "--max-iter", "30", "--out", out)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := checkOutputSet(t, out, false); !ok {
			t.Fatal("no stats.json")
		}
		r, raw := readFitJSON(t, out)
		for _, key := range []string{"parameters", "groups", "estimates", "loss", "iterations", "converged", "status", "records",
			"seconds", "evaluations", "mode", "mode_reason", "start", "transforms", "owner", "errors"} {
			if _, ok := raw[key]; !ok {
				t.Errorf("fit.json lacks %q", key)
			}
		}
		if _, ok := raw["stderr"]; ok {
			t.Error("fit.json has stderr without --fisher")
		}
		if r.Owner != "per-trajectory" || r.Groups != 8 || r.Mode != "reverse" || r.Optimizer != "lbfgs" || !c.records(r.Records) {
			t.Errorf("--rerecord %s: owner %s, groups %d, mode %s, optimizer %s, records %d", c.rerecord, r.Owner, r.Groups, r.Mode, r.Optimizer, r.Records)
		}
		readNpy(t, filepath.Join(out, "params_fit.npy"), 8, 1)
		if _, err := os.Stat(filepath.Join(out, "covariance.npy")); err == nil {
			t.Error("covariance.npy without --fisher")
		}
		f, err := os.Open(filepath.Join(out, "history.csv"))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := 1 // the header
		for _, it := range r.Iterations {
			want += it + 1
		}
		if len(rows) != want || strings.Join(rows[0], ",") != "group,iteration,evaluation,loss,w" {
			t.Errorf("history.csv: %d rows (want %d), header %v", len(rows), want, rows[0])
		}
		png, err := os.ReadFile(filepath.Join(out, "loss.png"))
		if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
			t.Errorf("loss.png: %v", err)
		}
		st := readStats(t, out)
		if st["trajectories"] != 8.0 || st["groups"] != 8.0 {
			t.Errorf("stats.json: %v", st)
		}
		if !strings.Contains(stdout, "lbfgs on the reverse replay") || !strings.Contains(stdout, "(one per trajectory)") || !strings.Contains(stdout, "wrote "+out) {
			t.Errorf("summary:\n%s", stdout)
		}
	}
	// -h prints the usage and the fit's flags, and the command list has fit.
	_, stderr, err := runCmd("fit", "-h")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"usage: gradsolve fit", "-data", "-each", "-groups", "-fisher", "-rerecord", "-transform", "-start", "-optimizer", "params_fit.npy"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("fit -h lacks %q", want)
		}
	}
	if out, _, _ := runCmd("help"); !strings.Contains(out, "  fit ") {
		t.Errorf("usage lacks fit:\n%s", out)
	}
}

// Bad input fails before the fit runs with a line naming the flag.
func TestFitBadInput(t *testing.T) {
	dir := t.TempDir()
	w := func(name string, shape []int, data []float64) string { return writeNpy(t, dir, name, shape, data) }
	final := w("final.npy", []int{4, 1}, []float64{1, 0.9, 0.8, 0.7})
	saved := w("saved.npy", []int{4, 2, 1}, []float64{1, 0.9, 0.8, 0.7, 1, 0.9, 0.8, 0.7})
	base := []string{"fit", decayODE, "--data", final, "--fit", "k"}
	with := func(args ...string) []string { return append(slices.Clone(base), args...) }
	cases := []msgCase{
		{[]string{"fit", decayODE, "--fit", "k"}, "--data D.npy is required"},
		{[]string{"fit", decayODE, "--data", final}, "--fit NAME[,NAME…] is required"},
		{[]string{"fit", "--data", final, "--fit", "k"}, "give a problem file (FILE.ode) or --system NAME"},
		{[]string{"fit", decayODE, "--data", final, "--fit", "kk"}, `--fit "kk": decay has no parameter "kk"`},
		{[]string{"fit", decayODE, "--data", final, "--fit", "y0.z"}, `--fit "y0.z": decay has no state "z"`},
		{[]string{"fit", decayODE, "--data", final, "--fit", "k,k"}, "k is listed twice"},
		{[]string{"fit", decayODE, "--data", "d.txt", "--fit", "k"}, "--data d.txt: want a .npy file"},
		{[]string{"fit", oscODE, "--data", w("flat.npy", []int{4}, []float64{1, 2, 3, 4}), "--fit", "w"}, "shape (4,): want n × 2 (the final states of n trajectories) or n × k × 2"},
		{[]string{"fit", decayODE, "--data", w("cube.npy", []int{1, 1, 1, 1}, []float64{1}), "--fit", "k"}, "shape (1, 1, 1, 1): want n × 1 (the final states of n trajectories) or n × k × 1 (their states at the k --saveat times); for a one-state problem also n (final states) or n × k (saved states)"},
		{[]string{"fit", decayODE, "--data", w("wide.npy", []int{4, 3}, make([]float64, 12)), "--fit", "k"}, "shape (4, 3): want (4, 1) (n × states: the final states)"},
		{with("--n", "5"), "shape (4, 1): want (5, 1)"},
		{[]string{"fit", decayODE, "--data", w("flat1.npy", []int{4}, []float64{1, 0.9, 0.8, 0.7}), "--fit", "k", "--n", "5"}, "shape (4,): want (5,) (n: the final states of a one-state problem)"},
		{[]string{"fit", decayODE, "--data", w("flat2.npy", []int{4}, []float64{1, 0.9, 0.8, 0.7}), "--fit", "k", "--saveat", "0.5,1"}, "shape (4,) holds final states, but --saveat gives 2 save times: give n × k targets (4 × 2)"},
		{[]string{"fit", decayODE, "--data", w("nk.npy", []int{4, 3}, make([]float64, 12)), "--fit", "k", "--saveat", "0.5,1"}, "shape (4, 3): want (4, 2) (n × k, k = 2 --saveat times, of a one-state problem; or n × k × 1)"},
		{[]string{"fit", decayODE, "--data", saved, "--fit", "k"}, "holds saved states (n × k × states): give the save times with --saveat"},
		{[]string{"fit", decayODE, "--data", saved, "--fit", "k", "--saveat", "0.5,1,1.5"}, "shape (4, 2, 1): want (4, 3, 1) (n × k × states, k = 3 --saveat times)"},
		{with("--saveat", "0.5,1"), "holds final states, but --saveat gives 2 save times"},
		{with("--params", w("p3.npy", []int{3, 1}, []float64{1, 2, 3})), "has 3 rows but --data " + final + " gives n = 4"},
		{with("--each", "--groups", w("g.npy", []int{4}, []float64{0, 0, 1, 1})), "--each and --groups"},
		{with("--groups", w("g7.npy", []int{4}, []float64{0, 0, 7, 1})), "element [2] = 7: group index out of range [0, n = 4)"},
		{with("--groups", w("gneg.npy", []int{4}, []float64{0, -1, 1, 1})), "element [1] = -1: group index out of range"},
		{with("--groups", w("ghalf.npy", []int{4}, []float64{0, 0.5, 1, 1})), "element [1] = 0.5: group indices must be integers"},
		{with("--groups", w("g3.npy", []int{3}, []float64{0, 0, 1})), "shape (3,): want (4,) (n: one group index per trajectory)"},
		{with("--groups", w("ggap.npy", []int{4}, []float64{0, 0, 2, 2})), "group 1 has no trajectories"},
		{with("--groups", "g.txt"), "--groups g.txt: want a .npy file"},
		{with("--weights", w("w3.npy", []int{3}, []float64{1, 1, 1})), "--weights " + filepath.Join(dir, "w3.npy") + ": shape (3,): want (4, 1) or (1,)"},
		{with("--weights", w("wneg.npy", []int{1}, []float64{-1})), "weights must be finite and ≥ 0"},
		{with("--sigma", "0"), "--sigma = 0: must be finite and > 0"},
		{with("--sigma", "-2"), "--sigma = -2: must be finite and > 0"},
		{with("--sigma", "1", "--weights", w("w1.npy", []int{1}, []float64{1})), "--sigma and --weights"},
		{with("--rerecord", "sometimes"), `--rerecord "sometimes": want auto, auto:X`},
		{with("--rerecord", "0"), `--rerecord "0": want`},
		{with("--rerecord", "auto:-1"), `--rerecord "auto:-1": want`},
		{with("--optimizer", "newton"), `--optimizer "newton": want lm`},
		{with("--mode", "reverse"), "--mode reverse: --optimizer lm needs the residuals' Jacobian"},
		{with("--mode", "sideways"), `--mode "sideways": unknown mode`},
		{with("--lr", "0.1"), "--lr is Adam's learning rate: it needs --optimizer adam"},
		{with("--optimizer", "adam", "--lr", "-1"), "--lr = -1: must be finite and > 0"},
		{with("--optimizer", "adam", "--lr-decay", "2"), "--lr-decay = 2: must be in (0, 1]"},
		{with("--max-iter", "-1"), "--max-iter = -1: must be ≥ 0"},
		{with("--tol", "-1"), "--tol = -1: must be finite and ≥ 0"},
		{with("--loss-tol", "nan"), "--loss-tol = NaN"},
		{with("--start", "k"), `--start "k": want NAME=VALUE`},
		{with("--start", "q=1"), `--start "q=1": q is not fitted (--fit k)`},
		{with("--start", "k=abc"), `--start "k=abc": want NAME=VALUE with a finite number`},
		{with("--start", "k=1,k=2"), `--start "k=2": k has a start already`},
		{with("--transform", "k=log", "--start", "k=-1"), "--start k=-1 lies outside the domain (0, +Inf) of its transform log"},
		{with("--transform", "k=logit:0:0.1"), "--transform: the start of k, 0.5 (the problem's default), lies outside the domain (0, 0.1) of its transform logit(0, 0.1): give --start k=V"},
		{with("--transform", "k=sqrt"), `--transform "k=sqrt": unknown transform "sqrt"`},
		{with("--transform", "k=logit:1:0"), `--transform "k=logit:1:0": want logit:LO:HI with finite numbers LO < HI`},
		{with("--transform", "q=log"), `--transform "q=log": q is not fitted`},
		{with("--rtol", "0"), "--rtol = 0"},
		{with("--method", "euler"), `--method "euler": known methods`},
		{with("--ref", "3"), "that is a flag of gradsolve solve"},
		{[]string{"fit", "../../examples/kepler_ecc.ode", "--data", w("k4.npy", []int{1, 4}, []float64{1, 0, 0, 1}), "--fit", "y0.x"},
			"--fit y0.x: kepler_ecc computes its initial state from the parameters: give the initial states with --y0 FILE.npy"},
	}
	checkMessages(t, cases, true, true)
}

// The progress bar follows the fit's evaluations and groups, and draws
// nothing off a terminal.
func TestFitBar(t *testing.T) {
	var buf bytes.Buffer
	b := newFitBar(&buf, 100, 4)
	b.update(fit.Progress{Evaluation: 10, Active: 3, Converged: 1})
	if buf.Len() != 0 {
		t.Fatalf("drew off a terminal: %q", buf.String())
	}
	b.on, b.delay = true, 0
	b.update(fit.Progress{Evaluation: 10, Active: 2, Converged: 1, Stopped: 1, Loss: 0.5})
	b.update(fit.Progress{Evaluation: 12, Active: 0, Converged: 4, Loss: 0.25})
	b.finish()
	got := buf.String()
	for _, want := range []string{" 50% evaluation 10 (max-iter 100), loss 0.5, 2/4 groups done", "100% evaluation 12 (max-iter 100), loss 0.25, 4/4 groups done"} {
		if !strings.Contains(got, want) {
			t.Errorf("bar %q lacks %q", got, want)
		}
	}
	if !strings.HasSuffix(got, "\n") {
		t.Errorf("bar %q: finish ended no line", got)
	}
}
