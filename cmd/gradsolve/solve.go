package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/router"
	"github.com/gradsolve/gradsolve/sym/parse"
	"github.com/gradsolve/gradsolve/sym/tape"
	"github.com/gradsolve/gradsolve/systems"
)

// defaultSweep is the parameter sweep each built-in gets when no
// --param is given.
var defaultSweep = map[string]string{
	"lorenz":   "rho=0:21",
	"vdp":      "mu=0.5:5",
	"lorenz96": "F=4:12",
	"kepler":   "mu=0.5:2",
	"halo":     "q=0.6:1",
	"linear":   "",
	// Stiff systems: solved as one ensemble of the default parameters.
	"robertson":    "",
	"hires":        "",
	"vdp_stiff":    "",
	"linear_stiff": "",
}

// multiFlag collects a repeatable flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

// solveFlags are the flags of "gradsolve solve".
type solveFlags struct {
	system             string
	n                  int
	params             multiFlag
	paramsFile, y0     string
	t0, t1, saveat     string
	method             string
	engine             string
	rtol, atol         float64
	workers            int
	ref                int // solve: --ref (grad has none: 0)
	out                string
	progress, quietly  bool
	dense              bool
	maxSteps           int
	sens               string     // solve: sensitivity columns
	sensErrorTest      bool       // solve: sensitivities in the error norm
	accuracy, quantile float64    // solve: --accuracy EPS, --quantile Q (accuracy.go)
	pilot              int        // solve: --pilot N
	chunk              int        // solve, grad: --chunk (0: automatic)
	device             int        // --device: the cuda engine's GPU
	precision          string     // --precision: float64 or float32
	grad               gradFlags  // grad: the loss, the columns, the mode (grad.go)
	shard              shardFlags // solve, grad: --shard, --shards (shard.go)
}

func newSolveFlagSet(cmd string, stderr io.Writer) (*flag.FlagSet, *solveFlags) {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := &solveFlags{}
	fs.StringVar(&f.system, "system", "", "built-in system instead of a problem file: lorenz, vdp, lorenz96, linear, kepler, halo (default lorenz when no file is given)")
	fs.IntVar(&f.n, "n", 0, "number of trajectories (default: from --params/--y0/--t0/--t1 files, else 10000 for a built-in and 1 for a file)")
	fs.Var(&f.params, "param", "NAME=VALUE, or NAME=LO:HI for LO…HI evenly across the ensemble (repeatable)")
	fs.StringVar(&f.paramsFile, "params", "", "FILE.npy of n×m parameters, columns in the problem's parameter order (m shared; n for one parameter)")
	fs.StringVar(&f.y0, "y0", "", "FILE.npy of initial states: n×dim, or dim shared (n for a one-state problem)")
	fs.StringVar(&f.t0, "t0", "", "start time, or FILE.npy of n start times (default: the problem's span)")
	fs.StringVar(&f.t1, "t1", "", "end time, or FILE.npy of n end times (default: the problem's span)")
	fs.StringVar(&f.saveat, "saveat", "", "save times T1,T2,… or FILE.npy (k shared, or n×k)")
	fs.StringVar(&f.method, "method", "auto", "method: tsit5, dp5, vern7, dp8 (explicit), rosenbrock23, rodas5p (stiff); auto: the --engine's default, else Rodas5P for a problem marked stiff, else Tsit5")
	fs.StringVar(&f.engine, "engine", "auto", "engine: "+strings.Join(gradsolve.Engines(), ", ")+"; auto: the router picks the engine that runs the method (cpu-erk explicit, cpu-ros Rosenbrock; cuda for large explicit ensembles where a GPU runs)")
	fs.Float64Var(&f.rtol, "rtol", 1e-8, "relative tolerance")
	fs.Float64Var(&f.atol, "atol", 1e-11, "absolute tolerance")
	fs.IntVar(&f.workers, "workers", 0, "worker goroutines (0: all cores)")
	fs.IntVar(&f.maxSteps, "max-steps", gradsolve.DefaultMaxSteps, "step budget per trajectory (accepted plus rejected steps)")
	fs.StringVar(&f.out, "out", "", "directory for y_final.npy, y_saved.npy, status.npy, params.npy and stats.json (written last: present only beside a complete set of one run)")
	fs.BoolVar(&f.quietly, "q", false, "print no summary")
	fs.IntVar(&f.device, "device", 0, "GPU the cuda engine runs on (0-based; the CPU engines ignore it)")
	fs.StringVar(&f.precision, "precision", "float64", "arithmetic: float64, or float32 (the cuda engine's forward and sensitivity jobs only; the CPU engines compute in float64; float32's default tolerances are rtol 1e-5, atol 1e-8)")
	fs.BoolVar(&f.dense, "dense", false, "save times from the Rosenbrock method's continuous extension instead of a re-step (rosenbrock23, rodas5p)")
	switch cmd {
	case "solve", "grad":
		fs.IntVar(&f.chunk, "chunk", 0, "trajectories solved at a time, their rows written out before the next (0: automatic, as many as keep the run's arrays within 256 MiB and a quarter of the available memory); the outputs are the same, bit for bit, for any chunk")
	}
	switch cmd {
	case "solve":
		fs.IntVar(&f.ref, "ref", -1, "trajectories to check against a DP8 reference at rtol 1e-13 (0: none; default 1000 for a built-in, 0 for a file)")
		fs.StringVar(&f.sens, "sens", "", "forward sensitivities: comma-separated parameter names, 'all' (every parameter), 'y0' (every initial value) or 'y0.NAME'; writes sens.npy (n×dim×m) and sens_saved.npy")
		fs.BoolVar(&f.sensErrorTest, "sens-error-test", false, "put the sensitivities in the error norm, so they too meet --rtol and --atol (the mesh then differs from a solve without --sens; explicit methods only)")
		addAccuracyFlags(fs, f)
		addShardFlags(fs, &f.shard)
	case "grad":
		addGradFlags(fs, &f.grad)
		addAccuracyFlags(fs, f)
		addShardFlags(fs, &f.shard)
	}
	return fs, f
}

// parseInterspersed parses flags that may come before and after the
// positional arguments (Go's flag package stops at the first
// non-flag), and returns the positional arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// job is a parsed command line: the problem, the ensemble, the options.
type job struct {
	cmd       string // "solve" or "grad"
	pr        *ode.Problem
	builtin   bool
	rhs       string          // "tape" or "go"
	meth      method.Method   // --method; nil for auto
	engine    string          // --engine; "" for auto
	wrt       []gradsolve.Wrt // solve: the --sens columns
	mode      router.Mode     // grad: --mode
	gradWrt   []gradsolve.Wrt // grad: the --wrt columns (default params,y0)
	in        *inputs
	fl        *solveFlags
	out       *outSet // --out, or nil
	shard     *shard  // --shard or the cluster's variables; nil: the whole ensemble
	plan      chunkPlan
	rowsTotal int // trajectories of the whole ensemble (the size checks')
	wallStart time.Time
}

const solveUsage = `usage: gradsolve solve [FILE.ode] [flags]

Solve an ensemble of the problem in FILE.ode (see docs/ode-format.md), or of
a built-in system (--system, default lorenz), print what was done, and write
the results as NumPy files with --out DIR: y_final.npy (n×dim), y_saved.npy
(n×k×dim, with --saveat), status.npy (n; 0 = success), params.npy (n×m, the
parameters each trajectory used, in the problem's parameter order), with
--sens sens.npy and sens_saved.npy, and stats.json. stats.json is written
last: when it is present the directory holds one complete run, whose files
it lists with their sizes under "files" beside a "run_id"; a run that stops
early leaves the directory as it was or without stats.json. The earlier
run's outputs (the files its stats.json lists) are removed before the new
ones appear; other files in DIR stay. A signal exits with 130 (SIGINT) or
143 (SIGTERM), after the commit if it had begun.

The ensemble runs in chunks of trajectories (--chunk; automatic: within
256 MiB and a quarter of the available memory), each chunk's rows
written to the files before the next is solved, so the memory is that of
a chunk: its results take 8 bytes per number, dim for y_final and k×dim
for y_saved (times the --sens columns for the sensitivities), and about
60 bytes per trajectory of status and statistics. The files are the same,
bit for bit, for any chunk. A chunk that cannot fit is refused before the
run starts.

flags:
`

// setup parses a solve or grad command line, checks every flag, and
// builds the ensemble after checking that the job fits in memory.
func setup(cmd, usage string, args []string, stderr io.Writer) (*job, error) {
	wallStart := time.Now()
	fs, fl := newSolveFlagSet(cmd, stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if cmd == "grad" && strings.HasSuffix(err.Error(), "not defined: -ref") {
			return nil, errors.New("--ref: grad has no reference check; --ref is a flag of gradsolve solve")
		}
		return nil, err
	}
	if len(pos) > 1 {
		return nil, fmt.Errorf("%s: one problem file at most, got %q", cmd, pos)
	}
	var nErr error
	tolSet := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "n" && fl.n < 1 {
			nErr = fmt.Errorf("--n = %d: must be ≥ 1", fl.n)
		}
		tolSet = tolSet || f.Name == "rtol" || f.Name == "atol"
	})
	if nErr != nil {
		return nil, nErr
	}
	fl.precisionDefaults(tolSet)
	if err := checkOptionFlags(fl); err != nil {
		return nil, err
	}
	j := &job{cmd: cmd, fl: fl, wallStart: wallStart}
	switch {
	case len(pos) == 1 && fl.system != "":
		return nil, fmt.Errorf("%s: give a problem file or --system, not both", cmd)
	case len(pos) == 1:
		if err := j.loadProblem(pos[0], ""); err != nil {
			return nil, err
		}
	default:
		if fl.system == "" {
			fl.system = "lorenz"
		}
		if err := j.loadProblem("", fl.system); err != nil {
			return nil, err
		}
	}
	if j.meth, j.engine, err = methodAndEngine(fl.method, fl.engine); err != nil {
		return nil, err
	}
	if err := j.checkMethodFlags(); err != nil {
		return nil, err
	}
	if fl.sens != "" {
		if j.wrt, err = parseSens(j.pr, fl.sens); err != nil {
			return nil, err
		}
	}
	if cmd == "grad" {
		if j.mode, err = router.ParseMode(fl.grad.mode); err != nil {
			return nil, fmt.Errorf("--mode %q: unknown mode: want auto, forward or reverse", fl.grad.mode)
		}
		spec := fl.grad.wrt
		if spec == "" {
			spec = "params,y0"
		}
		if j.gradWrt, err = parseWrt(j.pr, "wrt", spec); err != nil {
			return nil, err
		}
	}
	if err := j.checkEngine(); err != nil {
		return nil, err
	}
	if j.builtin && len(fl.params) == 0 && fl.paramsFile == "" {
		if s := defaultSweep[fl.system]; s != "" {
			fl.params = multiFlag{s}
		}
	}
	if fl.ref < 0 {
		fl.ref = 0
		if j.builtin && cmd == "solve" {
			fl.ref = 1000
		}
	}
	if j.shard, err = resolveShard(fl.shard, os.Getenv); err != nil {
		return nil, err
	}
	if err := checkAccuracyFlags(fl, j.shard != nil); err != nil {
		return nil, err
	}
	check := j.checkChunked
	if j.shard != nil {
		check = j.shardCheck
		if len(pos) == 1 {
			j.shard.problem = pos[0]
		}
		fl.grad.shard = j.shard
	}
	if j.in, err = buildEnsemble(j.pr, fl, j.builtin, check); err != nil {
		return nil, err
	}
	if s := j.shard; s != nil {
		j.in.setShard(s.Lo, s.Hi)
	}
	if fl.out != "" {
		if j.out, err = openOutSet(fl.out, "--out"); err != nil {
			return nil, err
		}
	}
	return j, nil
}

// checkOptionFlags checks the flags that become solver options, so that
// their errors name the flag.
func checkOptionFlags(fl *solveFlags) error {
	switch {
	case checkRTol(fl.rtol) != nil:
		return checkRTol(fl.rtol)
	case fl.precision == "float32" && fl.rtol < gradsolve.MinRTol32:
		return fmt.Errorf("--rtol = %g with --precision float32: must be ≥ %.3g (ten units of float32's roundoff; leave --rtol and --atol out for float32's defaults %g and %g)",
			fl.rtol, gradsolve.MinRTol32, gradsolve.DefaultRTol32, gradsolve.DefaultATol32)
	case checkATol(fl.atol) != nil:
		return checkATol(fl.atol)
	case fl.workers < 0:
		return fmt.Errorf("--workers = %d: must be ≥ 0 (0: all cores)", fl.workers)
	case fl.maxSteps < 1:
		return fmt.Errorf("--max-steps = %d: must be ≥ 1", fl.maxSteps)
	case fl.grad.checkpoint < 0:
		return fmt.Errorf("--checkpoint = %d: must be ≥ 0 (0 or 1: keep every state)", fl.grad.checkpoint)
	case fl.chunk < 0:
		return fmt.Errorf("--chunk = %d: must be ≥ 1, or 0 for the automatic chunk", fl.chunk)
	case fl.sensErrorTest && fl.sens == "":
		return fmt.Errorf("--sens-error-test needs --sens")
	case fl.device < 0:
		return fmt.Errorf("--device = %d: must be ≥ 0 (the index of a GPU)", fl.device)
	}
	if _, err := gradsolve.ParsePrecision(fl.precision); err != nil {
		return fmt.Errorf("--precision %q: want float64 or float32", fl.precision)
	}
	return nil
}

// precisionDefaults gives --precision float32 float32's own default
// tolerances where neither --rtol nor --atol was given (tolSet false):
// float32 cannot meet float64's.
func (fl *solveFlags) precisionDefaults(tolSet bool) {
	if fl.precision == "float32" && !tolSet {
		fl.rtol, fl.atol = gradsolve.DefaultRTol32, gradsolve.DefaultATol32
	}
}

// prec is --precision, checked by checkOptionFlags.
func (fl *solveFlags) prec() gradsolve.Precision {
	p, _ := gradsolve.ParsePrecision(fl.precision)
	return p
}

// checkMethodFlags checks the flags that depend on the method, so that
// their errors name the flags; the library's engine check
// (checkEngine) says the rest.
func (j *job) checkMethodFlags() error {
	fl := j.fl
	family := method.Family(0) // auto
	if j.meth != nil {
		family = j.meth.Family()
	}
	if fl.dense && family == method.ExplicitFamily {
		return fmt.Errorf("--dense needs a Rosenbrock method with a continuous extension (--method rodas5p or rosenbrock23); %s re-steps its save times", j.meth.MethodName())
	}
	if fl.sensErrorTest && family == method.RosenbrockFamily {
		return fmt.Errorf("--sens-error-test is not available with --method %s: a Rosenbrock method's sensitivities follow the state's mesh", fl.method)
	}
	if family == method.RosenbrockFamily && !j.pr.ProgramSet().Has(ode.HasJacY) {
		return fmt.Errorf("--method %s: %s has no Jacobian program; use an explicit method (tsit5, dp5, vern7, dp8)", fl.method, j.name())
	}
	return nil
}

// checkEngine asks the library which engine will run the job — for
// grad, for either mode — so that a method, --engine and flags no
// engine can serve together are refused before the ensemble is built,
// with the engine's reason in the command's terms. The ensemble's size
// is not known yet (0): it changes which engine the router prefers,
// never whether one can serve the job.
func (j *job) checkEngine() error {
	o := j.planOptions()
	if j.cmd == "grad" {
		_, err := gradsolve.GradientDecision(j.pr, 0, o)
		return j.libError(err)
	}
	_, err := gradsolve.ChooseEngine(j.pr, 0, o)
	return j.libError(err)
}

// planOptions are the options of the run as far as they choose the
// method, the engine and the route.
func (j *job) planOptions() *gradsolve.Options {
	o := &gradsolve.Options{Method: j.meth, Engine: j.engine, Workers: j.fl.workers, DenseSave: j.fl.dense, Mode: j.mode, GradientWrt: j.gradWrt,
		Checkpoint: j.fl.grad.checkpoint, MaxSteps: j.fl.maxSteps, Device: j.fl.device, Precision: j.fl.prec()}
	if j.cmd == "solve" && j.wrt != nil {
		o.Sens = &gradsolve.Sensitivity{Wrt: j.wrt, ErrorTest: j.fl.sensErrorTest}
	}
	return o
}

// name is the problem in the command line's terms.
func (j *job) name() string {
	if j.builtin {
		return "--system " + j.fl.system
	}
	return j.pr.Name
}

func (j *job) options(stderr io.Writer) (*gradsolve.Options, *progressBar) {
	fl := j.fl
	bar := newProgressBar(stderr, time.Second)
	return &gradsolve.Options{Method: j.meth, Engine: j.engine, RTol: fl.rtol, ATol: fl.atol, Workers: fl.workers,
		MaxSteps: fl.maxSteps, DenseSave: fl.dense, Progress: bar.update, Device: fl.device, Precision: fl.prec()}, bar
}

func solveCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	j, err := setup("solve", solveUsage, args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	defer j.out.abort() // a failed run's staging directory (nothing after commit)
	defer j.in.close()
	pr, in, fl, rhs, wallStart := j.pr, j.in, j.fl, j.rhs, j.wallStart
	opts, bar := j.options(stderr)
	if fl.accuracy > 0 {
		if err := j.chooseTolerances(ctx, opts, stdout); err != nil {
			return err
		}
	}
	ns := 0
	if j.wrt != nil {
		opts.Sens = &gradsolve.Sensitivity{Wrt: j.wrt, ErrorTest: fl.sensErrorTest}
		ns = len(j.wrt)
	}
	ref := min(fl.ref, in.n)
	solveChunk := func(ctx context.Context, _ int, e *gradsolve.Ensemble, _ *rowWriters) (*gradsolve.Result, error) {
		return gradsolve.Solve(ctx, pr, e, opts)
	}
	sum, sample, err := j.stream(ctx, &j.plan, opts, bar, ns, ref, nil, solveChunk)
	bar.finish()
	if err != nil {
		return err
	}
	if j.out != nil {
		extra, err := j.shardOutputs(ctx, sum.first, nil)
		if err != nil {
			return err
		}
		if err := commitRun(ctx, j.out, pr, in.k, sum, rhs, wallStart, extra); err != nil {
			return err
		}
	}
	if !fl.quietly {
		report(stdout, pr, in, sum, &j.plan)
		j.reportShard(stdout)
		if fl.out != "" {
			fmt.Fprintf(stdout, "  wrote %s\n", fl.out)
		}
	}
	if ref > 0 {
		sub, err := in.gather(sample.idx)
		if err != nil {
			return err
		}
		// The reference's atol follows the run's (after --accuracy chose
		// it, not the flag's).
		return j.userError(reference(ctx, stdout, pr, sub, sample, slices.Min(sum.first.Options.ATolVec)))
	}
	return nil
}

func report(w io.Writer, pr *ode.Problem, in *inputs, sum *summary, plan *chunkPlan) {
	res := sum.first
	o := res.Options
	fmt.Fprintf(w, "gradsolve: %s (dim %d), %s", pr.Name, pr.Dim, counted(sum.n, "trajectory", "trajectories"))
	for _, s := range in.sweeps {
		fmt.Fprintf(w, ", %s from %g to %g", s.name, s.lo, s.hi)
	}
	if t0, t1, ok := in.sharedSpan(); ok {
		fmt.Fprintf(w, ", t from %g to %g", t0, t1)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  method %s (%s), rtol %g, atol %g, %s\n", res.Method, flagTerms(res.Reason), o.RTolVec[0], o.ATolVec[0], counted(res.Workers, "worker", "workers"))
	fmt.Fprintf(w, "  engine %s (%s)\n", res.Engine, flagTerms(res.EngineReason))
	if len(sum.engines) > 1 {
		fmt.Fprintf(w, "  engines by chunk: %s (a chunk smaller than the lanes runs on the lanes' reference engine, with the same bits)\n", strings.Join(sum.engines, ", "))
	}
	if sum.chunks > 1 {
		how := "--chunk"
		if plan.auto {
			how = "automatic: --chunk 0"
		}
		fmt.Fprintf(w, "  streamed in %d chunks of at most %d trajectories (%s)\n", sum.chunks, sum.maxChunk, how)
	}
	tot := sum.total
	att := tot.Attempts()
	el := sum.elapsed
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  solve time\t%v\t(%.3g µs per trajectory)\n", el.Round(time.Microsecond), float64(el.Nanoseconds())/1e3/float64(sum.n))
	fmt.Fprintf(tw, "  steps\t%d accepted, %d rejected\t(%.1f per trajectory; %d f-evaluations)\n",
		tot.Accepted, tot.Rejected, float64(att)/float64(sum.n), tot.FEvals)
	if tot.LUs > 0 {
		fmt.Fprintf(tw, "  linear algebra\t%d Jacobians, %d LU factorisations\t\n", tot.JacEvals, tot.LUs)
	}
	fmt.Fprintf(tw, "  cost\t%.1f ns per step attempt\t(solve time × workers / attempts)\n",
		float64(el.Nanoseconds())*float64(res.Workers)/float64(max(att, 1)))
	tw.Flush()
	counts := sum.counts
	var parts []string
	for s := gradsolve.NotRun; s <= gradsolve.Cancelled; s++ {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	fmt.Fprintf(w, "  status: %s\n", strings.Join(parts, ", "))
	if pr.Stiff && res.Engine == "cpu-erk" {
		fmt.Fprintf(w, "  note: %s is marked stiff; an explicit method takes steps set by stability, not accuracy\n", pr.Name)
	}
	if msg := sum.errs(); msg != "" {
		fmt.Fprintf(w, "  %s\n", strings.ReplaceAll(msg, "\n", "\n  "))
	}
	if counts[gradsolve.MaxStepsReached] > 0 {
		fmt.Fprintf(w, "  hint: raise --max-steps (now %d) or loosen --rtol and --atol\n", o.MaxSteps)
	}
}

// reference re-solves the sample's trajectories, whose inputs are sub,
// with DP8 at rtol 1e-13 and reports the relative 2-norm error of the
// final states the run gave them.
func reference(ctx context.Context, w io.Writer, pr *ode.Problem, sub *gradsolve.Ensemble, sample *refSample, atol float64) error {
	const refRTol = 1e-13
	refATol := math.Max(atol*1e-3, 1e-300)
	ref, err := gradsolve.Solve(ctx, pr, sub, &gradsolve.Options{Method: method.DP8, RTol: refRTol, ATol: refATol, MaxSteps: 10_000_000})
	if err != nil {
		return err
	}
	var errs []float64
	dim := pr.Dim
	for j := range sample.idx {
		if sample.status[j] != gradsolve.Success || ref.Status[j] != gradsolve.Success {
			continue
		}
		a, b := sample.y[j*dim:(j+1)*dim], ref.Row(j)
		var num, den float64
		for d := range a {
			num += (a[d] - b[d]) * (a[d] - b[d])
			den += b[d] * b[d]
		}
		errs = append(errs, math.Sqrt(num/math.Max(den, 1e-300)))
	}
	if len(errs) == 0 {
		fmt.Fprintln(w, "  accuracy: no successful trajectory to compare")
		return nil
	}
	sort.Float64s(errs)
	q := func(f float64) float64 { return errs[min(len(errs)-1, int(math.Ceil(f*float64(len(errs))))-1)] }
	fmt.Fprintf(w, "  accuracy vs DP8 at rtol %g on %d trajectories (relative 2-norm error of the final state):\n", refRTol, len(errs))
	fmt.Fprintf(w, "    median %.2e, 99th percentile %.2e, max %.2e\n", q(0.5), q(0.99), errs[len(errs)-1])
	return nil
}

func listCmd(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "system\tdim\tparameters (defaults)\tspan\tdefault sweep in solve")
	for _, pr := range systems.All() {
		var ps []string
		for i, name := range pr.ParamNames {
			ps = append(ps, fmt.Sprintf("%s=%.4g", name, pr.P[i]))
		}
		key := pr.Name
		if strings.HasPrefix(key, "lorenz96") {
			key = "lorenz96"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t[%g, %g]\t%s\n", key, pr.Dim, strings.Join(ps, " "), pr.T0, pr.T1, defaultSweep[key])
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "method\tstages\torder\tFSAL\tsource")
	for _, tb := range method.All() {
		fmt.Fprintf(tw, "%s\t%d\t%d(%d)\t%v\t%s\n", strings.ToLower(tb.Name), tb.Stages(), tb.Order, tb.ErrOrder, tb.FSAL(), tb.Source)
	}
	for _, rt := range method.AllRosenbrock() {
		fmt.Fprintf(tw, "%s (stiff)\t%d\t%d(%d)\t%v\t%s\n", strings.ToLower(rt.Name), rt.Stages(), rt.Order, rt.ErrOrder, rt.FSAL(), rt.Source)
	}
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "engines (--engine; auto: the router picks the one that serves the job): %s\n", strings.Join(gradsolve.Engines(), ", "))
	return tw.Flush()
}

// parseNumberList parses "a,b,c" as float64s.
func parseNumberList(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// counted returns n with the singular or plural noun: "1 trajectory",
// "2 trajectories".
func counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// methodAndEngine reads --method and --engine: nil and "" for auto.
func methodAndEngine(methodFlag, engineFlag string) (method.Method, string, error) {
	var m method.Method
	if methodFlag != "auto" {
		var err error
		if m, err = method.Lookup(methodFlag); err != nil {
			return nil, "", fmt.Errorf("--method %q: known methods: tsit5, dp5, vern7, dp8, rosenbrock23, rodas5p (or auto)", methodFlag)
		}
	}
	if engineFlag == "auto" {
		return m, "", nil
	}
	if !slices.Contains(gradsolve.Engines(), engineFlag) {
		return nil, "", fmt.Errorf("--engine %q: known engines: %s (or auto)", engineFlag, strings.Join(gradsolve.Engines(), ", "))
	}
	return m, engineFlag, nil
}

// loadProblem sets j's problem: the problem file at path, compiled to
// the tape, or (path empty) the built-in system named by --system.
func (j *job) loadProblem(path, system string) error {
	if path != "" {
		m, err := parse.ParseFile(path)
		if err != nil {
			return err
		}
		set, err := tape.Build(m)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		j.pr, j.rhs = set.Problem(), "tape"
		return nil
	}
	pr, err := systems.ByName(system)
	if err != nil {
		msg := err.Error()
		if i := strings.Index(msg, "unknown system"); i >= 0 {
			msg = msg[i:]
		}
		return fmt.Errorf("--system: %s", msg)
	}
	j.pr, j.builtin, j.rhs = pr, true, "go"
	return nil
}
