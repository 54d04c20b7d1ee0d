package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/fit"
	"github.com/gradsolve/gradsolve/npy"
	"github.com/gradsolve/gradsolve/plots"
	"github.com/gradsolve/gradsolve/router"
)

const fitUsage = `usage: gradsolve fit FILE.ode --data D.npy --fit NAME[,NAME…] [flags] --out DIR

Fit parameters, and initial values (y0.NAME), of the problem in FILE.ode (or
of a built-in --system) to data by weighted least squares,
L = ½ Σ w·(y − D)², on the final states or on the states at the --saveat
times (package fit). D.npy is n×dim (the final states of n trajectories) or
n×k×dim (their states at the k --saveat times), for a one-state problem
also n or n×k; n is its first axis (--n, if given, must agree). Any real
dtype (float64, float32, integers), either byte order and C or Fortran
order are read (docs/fitting.md, "Data from other tools"). Each
trajectory's inputs come as in gradsolve solve: --y0, --params, --param,
--t0, --t1, --saveat; what --fit does not name stays at those values
(default: the file's).

Who shares the fitted values: one set for all trajectories (the default),
one per trajectory (--each), or one per group (--groups G.npy: n group
indices 0 … G−1, integers, every group non-empty). Each group is a fit of
its own (its own optimiser state, convergence and status); the groups
advance together, one solve of the ensemble serving them all.

  --start NAME=V[,NAME=V…]   starting values in natural units (repeatable);
                             default: each group's first trajectory's value
  --transform NAME=T         log (value > 0), logit:LO:HI (LO < value < HI) or
                             identity (the default): the optimiser works on
                             log θ or the logit of θ's place in (LO, HI)
  --sigma S                  noise σ of every residual: weights w = 1/σ², so
                             that L = χ²/2
  --weights W.npy            weights (precisions 1/σ²) of the residuals: D's
                             shape, or dim; for saved states also k×dim
  --fisher                   Fisher information at each estimate: covariance
                             and standard errors, for Gaussian noise of the
                             weights given (σ = 1 when neither --sigma nor
                             --weights is given)
  --optimizer lm|lbfgs|adam  Levenberg–Marquardt (default; forward
                             sensitivities), L-BFGS or Adam (reverse replay
                             or forward sensitivities, --mode)

It prints each group's estimate (± its standard error with --fisher) and
status. With --out DIR it writes fit.json (parameters, transforms, groups,
start, estimates (groups × p, p the quantities --fit names), loss,
iterations, status and converged per group, evaluations, records,
seconds, the route and why; with --fisher
stderr), params_fit.npy (groups × p, the estimates), covariance.npy
(groups × p × p, with --fisher; NaN for a group whose Fisher information is
singular), history.csv (group,iteration,evaluation,loss,<parameters>: each
accepted iterate), loss.png (loss per iteration: the first five groups, and
their median with more) and stats.json, last (see gradsolve solve -h). The
exit status is 0 when the fit ran, whatever each group's status; it is
non-zero for bad input.

flags:
`

// fitFlags are the flags of "gradsolve fit" beyond solve's inputs.
type fitFlags struct {
	data, weights, groups string
	names                 string
	each, fisher          bool
	start, transform      multiFlag
	sigma                 float64
	optimizer             string
	maxIter               int
	tol, lossTol, gradTol float64
	lr, lrDecay           float64
	rerecord              string
	mode                  string
}

func addFitFlags(fs *flag.FlagSet, f *fitFlags) {
	fs.StringVar(&f.data, "data", "", "FILE.npy of targets: n×dim (final states) or n×k×dim (states at the --saveat times); required")
	fs.StringVar(&f.names, "fit", "", "what to fit: comma-separated parameter names and y0.NAME (initial values); 'params', 'y0' for all of them; required")
	fs.BoolVar(&f.each, "each", false, "fit each trajectory on its own (one set of values per trajectory)")
	fs.StringVar(&f.groups, "groups", "", "FILE.npy of n group indices 0 … G−1: one set of values per group")
	fs.Var(&f.start, "start", "NAME=V[,NAME=V…]: starting value in natural units (repeatable; default: each group's first trajectory's value)")
	fs.Var(&f.transform, "transform", "NAME=log|logit:LO:HI|identity[,…]: the working coordinate of a fitted quantity (repeatable; default identity)")
	fs.Float64Var(&f.sigma, "sigma", 0, "noise σ of every residual, > 0: loss weights 1/σ² (default: weights 1, or --weights)")
	fs.StringVar(&f.weights, "weights", "", "FILE.npy of weights ≥ 0 (precisions) of the residuals: the shape of --data, or dim; for saved states also k×dim")
	fs.BoolVar(&f.fisher, "fisher", false, "Fisher information at the estimates: covariance.npy and stderr in fit.json (noise: --sigma or --weights; default σ = 1)")
	fs.StringVar(&f.optimizer, "optimizer", "lm", "lm (Levenberg–Marquardt), lbfgs or adam")
	fs.IntVar(&f.maxIter, "max-iter", 0, "iterations (accepted updates) per group at most (0: the optimiser's default, lm 100, lbfgs 200, adam 1000)")
	fs.Float64Var(&f.tol, "tol", 0, "step tolerance: converged when no working coordinate moves by more than this (0: 1e-10)")
	fs.Float64Var(&f.lossTol, "loss-tol", 0, "relative loss-change tolerance (0: 1e-12)")
	fs.Float64Var(&f.gradTol, "grad-tol", 0, "gradient tolerance in working coordinates (0: off)")
	fs.Float64Var(&f.lr, "lr", 0, "Adam's learning rate: about the largest move of a working coordinate per update (0: 1e-3)")
	fs.Float64Var(&f.lrDecay, "lr-decay", 0, "Adam: multiply the learning rate by this, in (0, 1], after each update (0: constant)")
	fs.StringVar(&f.rerecord, "rerecord", "auto", "reverse replay: record the meshes again: auto (a fitted value moved by > 2%), auto:X (by > X), never, or N (every N evaluations)")
	fs.StringVar(&f.mode, "mode", "auto", "how gradients are computed: auto (the fit decides), forward (sensitivities) or reverse (replay on recorded meshes; not with lm)")
}

// defaultMaxIter are the fit package's defaults of Spec.MaxIter (see
// fit.Spec.MaxIter), for the progress bar and fit.json.
var defaultMaxIter = map[string]int{"adam": 1000, "lbfgs": 200, "levenberg-marquardt": 100}

// fitJob is a checked fit command line.
type fitJob struct {
	*job
	ff       *fitFlags
	spec     *fit.Spec
	names    []string // the fitted quantities, as the flags name them
	groupsN  int
	owner    fit.Ownership
	members  [][]int
	start    []float64 // G × np
	maxIter  int
	rerecord string
	noise    string // fit.json's account of the noise model ("" without --fisher)
}

func fitCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fj, err := fitSetup(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	defer fj.out.abort() // a failed run's staging directory (nothing after commit)
	bar := newFitBar(stderr, fj.maxIter, fj.groupsN)
	fj.spec.Progress = bar.update
	rep, err := fit.Run(ctx, fj.spec)
	bar.finish()
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return fj.fitError(err)
	}
	choice := fj.engineChoice(rep.Mode)
	if fj.out != nil {
		if err := fj.write(ctx, rep, choice); err != nil {
			return err
		}
	}
	if !fj.fl.quietly {
		fj.report(stdout, rep, choice)
	}
	return nil
}

// fitSetup parses and checks a fit command line and builds the Spec.
// Every check that can be made before the fit runs is made here, so
// that its error names the flag.
func fitSetup(args []string, stderr io.Writer) (*fitJob, error) {
	wallStart := time.Now()
	fs, fl := newSolveFlagSet("fit", stderr)
	ff := &fitFlags{}
	addFitFlags(fs, ff)
	fs.Lookup("out").Usage = "directory for fit.json, params_fit.npy, covariance.npy (--fisher), history.csv, loss.png and stats.json (written last: present only beside a complete set of one run)"
	fs.Lookup("n").Usage = "number of trajectories (default: the first axis of --data, which must agree)"
	fs.Lookup("system").Usage = "built-in system instead of a problem file: lorenz, vdp, lorenz96, linear, kepler, halo"
	fs.Usage = func() {
		fmt.Fprint(stderr, fitUsage)
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if strings.HasSuffix(err.Error(), "not defined: -ref") || strings.HasSuffix(err.Error(), "not defined: -sens") {
			return nil, fmt.Errorf("fit: %v: that is a flag of gradsolve solve", err)
		}
		return nil, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	fl.precisionDefaults(set["rtol"] || set["atol"])
	switch {
	case len(pos) > 1:
		return nil, fmt.Errorf("fit: one problem file at most, got %q", pos)
	case len(pos) == 1 && fl.system != "":
		return nil, fmt.Errorf("fit: give a problem file or --system, not both")
	case len(pos) == 0 && fl.system == "":
		return nil, fmt.Errorf("fit: give a problem file (FILE.ode) or --system NAME")
	case set["n"] && fl.n < 1:
		return nil, fmt.Errorf("--n = %d: must be ≥ 1", fl.n)
	}
	if err := checkOptionFlags(fl); err != nil {
		return nil, err
	}
	if err := ff.check(set); err != nil {
		return nil, err
	}
	j := &job{cmd: "fit", fl: fl, wallStart: wallStart}
	path := ""
	if len(pos) == 1 {
		path = pos[0]
	}
	if err := j.loadProblem(path, fl.system); err != nil {
		return nil, err
	}
	if j.meth, j.engine, err = methodAndEngine(fl.method, fl.engine); err != nil {
		return nil, err
	}
	if err := j.checkMethodFlags(); err != nil {
		return nil, err
	}
	if err := j.checkEngine(); err != nil {
		return nil, err
	}
	fj := &fitJob{job: j, ff: ff}
	// What is fitted: the size check counts its sensitivity columns.
	wrt, err := parseWrt(j.pr, "fit", ff.names)
	if err != nil {
		return nil, err
	}
	j.wrt = wrt
	for _, w := range wrt {
		fj.names = append(fj.names, wrtName(j.pr, w))
	}
	params, err := fj.transforms(wrt)
	if err != nil {
		return nil, err
	}
	starts, err := fj.parseStarts()
	if err != nil {
		return nil, err
	}

	// The data's shape gives n; the data are read once the size check
	// has passed.
	dataName := "--data " + ff.data
	shape, err := npy.ReadShapeFile(ff.data)
	if err != nil {
		if _, lerr := load("data", ff.data); lerr != nil {
			return nil, lerr
		}
		return nil, fmt.Errorf("--data: %w", err)
	}
	dim := j.pr.Dim
	if d := len(shape); d != 2 && d != 3 && !(d == 1 && dim == 1) {
		oneState := ""
		if dim == 1 {
			oneState = "; for a one-state problem also n (final states) or n × k (saved states)"
		}
		return nil, fmt.Errorf("%s: shape %s: want n × %d (the final states of n trajectories) or n × k × %d (their states at the k --saveat times)%s", dataName, pyShape(shape), dim, dim, oneState)
	}
	nFromData := !set["n"]
	if nFromData {
		if fl.n = shape[0]; fl.n < 1 {
			return nil, fmt.Errorf("%s: shape %s: no trajectories (want n ≥ 1 rows)", dataName, pyShape(shape))
		}
	}
	check := func(sf sizeFlags) error {
		if nFromData {
			sf.nFrom = dataName
		}
		return j.checkSize(sf)
	}
	if j.in, err = buildEnsemble(j.pr, fl, j.builtin, check); err != nil {
		if nFromData {
			err = rewordN(err, dataName)
		}
		return nil, err
	}
	if nFromData {
		j.in.nFrom = dataName
	}
	if _, err := j.in.whole(); err != nil { // a fit holds its ensemble
		return nil, err
	}
	data, err := load("data", ff.data)
	if err != nil {
		return nil, err
	}
	n, k := j.in.ens.N, j.in.k
	fd := &gradsolve.FitData{}
	switch {
	case dim == 1 && data.a.Dims() == 1 && k > 0:
		return nil, fmt.Errorf("%s: shape %s holds final states, but --saveat gives %d save times: give n × k targets (%d × %d) for the saved states, or drop --saveat", data.name(), pyShape(data.a.Shape), k, n, k)
	case dim == 1 && data.a.Dims() == 1:
		// A one-state problem's final states, as NumPy users write
		// them: shape (n,) rather than (n, 1), the same numbers.
		if err := shapeErr(data, "(n: the final states of a one-state problem)", []int{n}); err != nil {
			return nil, err
		}
		fd.Final = data.a.Data
	case dim == 1 && data.a.Dims() == 2 && k > 0 && (data.a.Shape[1] != 1 || k == 1):
		// Saved states of a one-state problem: (n, k), the same
		// numbers as (n, k, 1). (An (n, 1) file with k > 1 save times
		// is final states: the next case says so.)
		if err := shapeErr(data, fmt.Sprintf("(n × k, k = %d --saveat times, of a one-state problem; or n × k × 1)", k), []int{n, k}); err != nil {
			return nil, err
		}
		fd.Saved = data.a.Data
	case data.a.Dims() == 2 && k > 0:
		return nil, fmt.Errorf("%s: shape %s holds final states, but --saveat gives %d save times: give n × k × states targets (%d × %d × %d) for the saved states, or drop --saveat", data.name(), pyShape(data.a.Shape), k, n, k, dim)
	case data.a.Dims() == 2:
		if err := shapeErr(data, "(n × states: the final states)", []int{n, dim}); err != nil {
			return nil, err
		}
		fd.Final = data.a.Data
	case k == 0:
		return nil, fmt.Errorf("%s: shape %s holds saved states (n × k × states): give the save times with --saveat", data.name(), pyShape(data.a.Shape))
	default:
		if err := shapeErr(data, fmt.Sprintf("(n × k × states, k = %d --saveat times)", k), []int{n, k, dim}); err != nil {
			return nil, err
		}
		fd.Saved = data.a.Data
	}
	if err := fj.lossWeights(fd, n, dim, k); err != nil {
		return nil, err
	}

	// Who owns the values.
	var group []int
	switch {
	case ff.each:
		fj.owner = fit.PerTrajectory
		fj.groupsN = n
	case ff.groups != "":
		fj.owner = fit.Grouped
		if group, fj.groupsN, err = loadGroups(ff.groups, n); err != nil {
			return nil, err
		}
	default:
		fj.owner, fj.groupsN = fit.Shared, 1
	}
	fj.members = make([][]int, fj.groupsN)
	for i := range n {
		g := 0
		switch fj.owner {
		case fit.PerTrajectory:
			g = i
		case fit.Grouped:
			g = group[i]
		}
		fj.members[g] = append(fj.members[g], i)
	}
	if err := fj.resolveStart(wrt, params, starts); err != nil {
		return nil, err
	}

	opt, err := ff.optimizerValue()
	if err != nil {
		return nil, err
	}
	mode, _ := router.ParseMode(ff.mode) // checked
	rr, rrText := ff.rerecordValue()
	fj.rerecord = rrText
	fj.maxIter = ff.maxIter
	if fj.maxIter == 0 {
		fj.maxIter = defaultMaxIter[opt.Name()]
	}
	fj.spec = &fit.Spec{
		Problem:   j.pr,
		Ensemble:  *j.in.ens,
		Options:   *fj.solveOptions(),
		Data:      fd,
		Params:    params,
		Owner:     fj.owner,
		Group:     group,
		Start:     fj.start,
		Optimizer: opt,
		Mode:      mode,
		MaxIter:   ff.maxIter,
		Tol:       fit.Tolerances{Step: ff.tol, Loss: ff.lossTol, Grad: ff.gradTol},
		Rerecord:  rr,
	}
	if ff.fisher {
		fj.spec.Noise = &fit.Noise{Sigma: 1}
		switch {
		case ff.sigma > 0:
			fj.noise = fmt.Sprintf("Gaussian, σ = %g (--sigma)", ff.sigma)
		case ff.weights != "":
			fj.noise = "Gaussian, precisions from --weights " + ff.weights
		default:
			fj.noise = "Gaussian, σ = 1 (no --sigma or --weights given)"
		}
	}
	if fl.out != "" {
		if j.out, err = openOutSet(fl.out, "--out"); err != nil {
			return nil, err
		}
	}
	return fj, nil
}

// rewordN puts buildEnsemble's "… but --n gives n = 4" in the terms of
// the --data file that gave n.
func rewordN(err error, from string) error {
	msg := err.Error()
	out := strings.ReplaceAll(msg, "but --n gives", "but "+from+" gives")
	if out == msg {
		return err
	}
	return &translated{msg: out, err: err}
}

// check checks the fit's flags that do not depend on the problem.
func (ff *fitFlags) check(set map[string]bool) error {
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case ff.data == "":
		return errors.New("fit: --data D.npy is required: the targets, n×dim (final states) or n×k×dim (states at the --saveat times)")
	case !isNpy(ff.data):
		return fmt.Errorf("--data %s: want a .npy file", ff.data)
	case strings.TrimSpace(ff.names) == "":
		return errors.New("fit: --fit NAME[,NAME…] is required: the parameters (and y0.NAME initial values) to fit")
	case ff.each && ff.groups != "":
		return fmt.Errorf("--each and --groups %s: give one (--each: one fit per trajectory; --groups: one per group)", ff.groups)
	case ff.groups != "" && !isNpy(ff.groups):
		return fmt.Errorf("--groups %s: want a .npy file", ff.groups)
	case ff.weights != "" && !isNpy(ff.weights):
		return fmt.Errorf("--weights %s: want a .npy file", ff.weights)
	case set["sigma"] && (!(ff.sigma > 0) || !finite(ff.sigma)):
		return fmt.Errorf("--sigma = %g: must be finite and > 0", ff.sigma)
	case set["sigma"] && ff.weights != "":
		return fmt.Errorf("--sigma and --weights %s: give one (--sigma S weights every residual by 1/S²)", ff.weights)
	case ff.maxIter < 0:
		return fmt.Errorf("--max-iter = %d: must be ≥ 0 (0: the optimiser's default)", ff.maxIter)
	}
	for _, t := range []struct {
		name string
		v    float64
	}{{"tol", ff.tol}, {"loss-tol", ff.lossTol}, {"grad-tol", ff.gradTol}} {
		if !finite(t.v) || t.v < 0 {
			return fmt.Errorf("--%s = %g: must be finite and ≥ 0 (0: the default)", t.name, t.v)
		}
	}
	opt, err := ff.optimizerValue()
	if err != nil {
		return err
	}
	_, isAdam := opt.(*fit.Adam)
	switch {
	case set["lr"] && !isAdam:
		return fmt.Errorf("--lr is Adam's learning rate: it needs --optimizer adam (not %s)", ff.optimizer)
	case set["lr-decay"] && !isAdam:
		return fmt.Errorf("--lr-decay is Adam's: it needs --optimizer adam (not %s)", ff.optimizer)
	case set["lr"] && (!(ff.lr > 0) || !finite(ff.lr)):
		return fmt.Errorf("--lr = %g: must be finite and > 0", ff.lr)
	case set["lr-decay"] && !(ff.lrDecay > 0 && ff.lrDecay <= 1):
		return fmt.Errorf("--lr-decay = %g: must be in (0, 1]", ff.lrDecay)
	}
	mode, err := router.ParseMode(ff.mode)
	if err != nil {
		return fmt.Errorf("--mode %q: unknown mode: want auto, forward or reverse", ff.mode)
	}
	if _, lm := opt.(*fit.LevenbergMarquardt); lm && mode == router.Reverse {
		return errors.New("--mode reverse: --optimizer lm needs the residuals' Jacobian, which forward sensitivities give: use --mode forward or auto, or --optimizer lbfgs or adam")
	}
	if _, err := ff.parseRerecord(); err != nil {
		return err
	}
	return nil
}

// optimizerValue is --optimizer (with --lr and --lr-decay for Adam).
func (ff *fitFlags) optimizerValue() (fit.Optimizer, error) {
	switch strings.ToLower(ff.optimizer) {
	case "lm", "levenberg-marquardt":
		return &fit.LevenbergMarquardt{}, nil
	case "lbfgs", "l-bfgs":
		return &fit.LBFGS{}, nil
	case "adam":
		a := &fit.Adam{LearningRate: ff.lr}
		if ff.lrDecay > 0 && ff.lrDecay < 1 {
			a.Schedule = fit.ExponentialDecay(ff.lrDecay)
		}
		return a, nil
	}
	return nil, fmt.Errorf("--optimizer %q: want lm (Levenberg–Marquardt), lbfgs or adam", ff.optimizer)
}

// parseRerecord reads --rerecord.
func (ff *fitFlags) parseRerecord() (fit.Rerecord, error) {
	v := strings.TrimSpace(ff.rerecord)
	bad := fmt.Errorf("--rerecord %q: want auto, auto:X (re-record when a fitted value has moved by more than X, relative; auto is auto:%g), never, or N ≥ 1 (every N evaluations)", ff.rerecord, fit.DefaultRerecordThreshold)
	switch {
	case v == "auto":
		return fit.Rerecord{Mode: fit.RerecordAuto}, nil
	case v == "never":
		return fit.Rerecord{Mode: fit.RerecordNever}, nil
	case strings.HasPrefix(v, "auto:"):
		x, err := strconv.ParseFloat(v[5:], 64)
		if err != nil || !(x > 0) || math.IsInf(x, 0) {
			return fit.Rerecord{}, bad
		}
		return fit.Rerecord{Mode: fit.RerecordAuto, Threshold: x}, nil
	}
	every, err := strconv.Atoi(v)
	if err != nil || every < 1 {
		return fit.Rerecord{}, bad
	}
	return fit.Rerecord{Mode: fit.RerecordEvery, Every: every}, nil
}

// rerecordValue is --rerecord (checked) and its description.
func (ff *fitFlags) rerecordValue() (fit.Rerecord, string) {
	r, _ := ff.parseRerecord()
	switch r.Mode {
	case fit.RerecordNever:
		return r, "never"
	case fit.RerecordEvery:
		return r, fmt.Sprintf("every %d evaluations", r.Every)
	}
	th := r.Threshold
	if th == 0 {
		th = fit.DefaultRerecordThreshold
	}
	return r, fmt.Sprintf("auto (a relative move of more than %g)", th)
}

// items splits the values of a repeatable NAME=V[,NAME=V…] flag.
func items(values multiFlag) []string {
	var out []string
	for _, v := range values {
		for _, it := range strings.Split(v, ",") {
			out = append(out, strings.TrimSpace(it))
		}
	}
	return out
}

// fitted returns the column of a fitted name, or an error naming flag.
func (fj *fitJob) fitted(flagName, item, name string) (int, error) {
	c := slices.Index(fj.names, name)
	if c < 0 {
		return -1, fmt.Errorf("--%s %q: %s is not fitted (--fit %s)", flagName, item, name, fj.ff.names)
	}
	return c, nil
}

// transforms reads --transform into the fitted quantities' Params.
func (fj *fitJob) transforms(wrt []gradsolve.Wrt) ([]fit.Param, error) {
	params := make([]fit.Param, len(wrt))
	for c, w := range wrt {
		params[c].Wrt = w
	}
	seen := map[int]bool{}
	for _, it := range items(fj.ff.transform) {
		name, val, ok := strings.Cut(it, "=")
		if !ok {
			return nil, fmt.Errorf("--transform %q: want NAME=log, NAME=logit:LO:HI or NAME=identity", it)
		}
		c, err := fj.fitted("transform", it, name)
		if err != nil {
			return nil, err
		}
		if seen[c] {
			return nil, fmt.Errorf("--transform %q: %s has a transform already", it, name)
		}
		seen[c] = true
		switch {
		case val == "identity":
			params[c].Transform = fit.Identity()
		case val == "log":
			params[c].Transform = fit.Log()
		case strings.HasPrefix(val, "logit:"):
			a, b, ok := strings.Cut(val[6:], ":")
			lo, err1 := strconv.ParseFloat(a, 64)
			hi, err2 := strconv.ParseFloat(b, 64)
			if !ok || err1 != nil || err2 != nil || math.IsInf(lo, 0) || math.IsInf(hi, 0) || !(lo < hi) || math.IsInf(hi-lo, 0) {
				return nil, fmt.Errorf("--transform %q: want logit:LO:HI with finite numbers LO < HI", it)
			}
			params[c].Transform = fit.Logit(lo, hi)
		default:
			return nil, fmt.Errorf("--transform %q: unknown transform %q: want log, logit:LO:HI or identity", it, val)
		}
	}
	return params, nil
}

// parseStarts reads --start: the value of each fitted column given,
// NaN where none is.
func (fj *fitJob) parseStarts() ([]float64, error) {
	st := make([]float64, len(fj.names))
	for c := range st {
		st[c] = math.NaN()
	}
	for _, it := range items(fj.ff.start) {
		name, val, ok := strings.Cut(it, "=")
		if !ok {
			return nil, fmt.Errorf("--start %q: want NAME=VALUE", it)
		}
		c, err := fj.fitted("start", it, name)
		if err != nil {
			return nil, err
		}
		if !math.IsNaN(st[c]) {
			return nil, fmt.Errorf("--start %q: %s has a start already", it, name)
		}
		v, err := strconv.ParseFloat(val, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("--start %q: want NAME=VALUE with a finite number", it)
		}
		st[c] = v
	}
	return st, nil
}

// resolveStart sets each group's start (G × np): --start's value, else
// the value of the group's first trajectory (the --params, --param,
// --y0 or file value), each inside its transform's domain.
func (fj *fitJob) resolveStart(wrt []gradsolve.Wrt, params []fit.Param, given []float64) error {
	pr, ens := fj.pr, fj.in.ens
	m, dim, np := pr.NumParams, pr.Dim, len(wrt)
	baseP := ens.P
	if baseP == nil {
		baseP = pr.P
	}
	baseY0 := ens.Y0
	for c, w := range wrt {
		if !w.Y0 || baseY0 != nil {
			continue
		}
		if pr.Initial != nil && fj.fl.y0 == "" {
			return fmt.Errorf("--fit %s: %s computes its initial state from the parameters: give the initial states with --y0 FILE.npy to fit %s", fj.ff.names, fj.name(), fj.names[c])
		}
		if baseY0 = pr.Y0; baseY0 == nil {
			return fmt.Errorf("--fit %s: %s has no default initial state: give --y0 FILE.npy", fj.ff.names, fj.name())
		}
	}
	row := func(v []float64, i, width int) []float64 {
		if len(v) == width {
			return v
		}
		return v[i*width : (i+1)*width]
	}
	fj.start = make([]float64, fj.groupsN*np)
	for g, mem := range fj.members {
		first := mem[0]
		for c, w := range wrt {
			v, from := given[c], "--start"
			if math.IsNaN(v) {
				switch {
				case w.Y0:
					v, from = row(baseY0, first, dim)[w.Index], "the problem's initial state"
					if fj.fl.y0 != "" {
						from = "--y0 " + fj.fl.y0
					}
				case baseP == nil:
					return fmt.Errorf("--fit %s: %s has no default parameters: give --params FILE.npy or --start", fj.ff.names, fj.name())
				default:
					v, from = row(baseP, first, m)[w.Index], fj.paramSource(wrtName(pr, w))
				}
				if fj.groupsN > 1 {
					from += fmt.Sprintf(" of trajectory %d (group %d)", first, g)
				}
			}
			tr := params[c].Transform
			if lo, hi := tr.Bounds(); !(v > lo && v < hi) {
				if from == "--start" {
					return fmt.Errorf("--start %s=%g lies outside the domain (%g, %g) of its transform %v (--transform)", fj.names[c], v, lo, hi, tr)
				}
				return fmt.Errorf("--transform: the start of %s, %g (%s), lies outside the domain (%g, %g) of its transform %v: give --start %s=V inside it", fj.names[c], v, from, lo, hi, tr, fj.names[c])
			}
			fj.start[g*np+c] = v
		}
	}
	return nil
}

// paramSource says where a parameter's value comes from: --param,
// --params or the problem's default.
func (fj *fitJob) paramSource(name string) string {
	for _, p := range fj.fl.params {
		if strings.HasPrefix(p, name+"=") {
			return "--param " + p
		}
	}
	if fj.fl.paramsFile != "" {
		return "--params " + fj.fl.paramsFile
	}
	return "the problem's default"
}

// lossWeights sets the weights of the residuals: --weights, or 1/σ²
// with --sigma.
func (fj *fitJob) lossWeights(fd *gradsolve.FitData, n, dim, k int) error {
	ff := fj.ff
	switch {
	case ff.sigma > 0:
		w := make([]float64, dim)
		for d := range w {
			w[d] = 1 / (ff.sigma * ff.sigma)
		}
		if fd.Final != nil {
			fd.FinalWeights = w
		} else {
			fd.SavedWeights = w
		}
	case ff.weights != "":
		w, err := loadWeights("weights", ff.weights)
		if err != nil {
			return err
		}
		if fd.Final != nil {
			shapes := [][]int{{n, dim}, {dim}}
			if dim == 1 && n > 1 {
				shapes = append(shapes, []int{n}) // (n, 1) without its last axis
			}
			if err := shapeErr(w, "(n × states, or states: per component)", shapes...); err != nil {
				return err
			}
			fd.FinalWeights = w.a.Data
			return nil
		}
		shapes := [][]int{{n, k, dim}, {1, k, dim}, {k, dim}, {dim}}
		if n == 1 {
			shapes = slices.Delete(shapes, 1, 2)
		}
		if dim == 1 { // the same without the last axis of length 1
			shapes = append(shapes, []int{n, k})
			if n > 1 {
				shapes = append(shapes, []int{1, k})
			}
			if k > 1 {
				shapes = append(shapes, []int{k})
			}
		}
		if err := shapeErr(w, "(n × k × states, k × states or states)", shapes...); err != nil {
			return err
		}
		fd.SavedWeights = w.a.Data
	}
	return nil
}

// loadGroups reads --groups: n integers 0 … G−1, every group present.
func loadGroups(path string, n int) ([]int, int, error) {
	l, err := load("groups", path)
	if err != nil {
		return nil, 0, err
	}
	if err := shapeErr(l, "(n: one group index per trajectory)", []int{n}); err != nil {
		return nil, 0, err
	}
	group := make([]int, n)
	G := 0
	for i, v := range l.a.Data {
		switch {
		case v != math.Trunc(v):
			return nil, 0, fmt.Errorf("%s: element [%d] = %g: group indices must be integers", l.name(), i, v)
		case v < 0 || v >= float64(n):
			return nil, 0, fmt.Errorf("%s: element [%d] = %g: group index out of range [0, n = %d)", l.name(), i, v, n)
		}
		group[i] = int(v)
		G = max(G, group[i]+1)
	}
	count := make([]int, G)
	for _, g := range group {
		count[g]++
	}
	for g, c := range count {
		if c == 0 {
			return nil, 0, fmt.Errorf("%s: group %d has no trajectories: number the groups 0 … G−1 = %d without gaps", l.name(), g, G-1)
		}
	}
	return group, G, nil
}

// solveOptions are the options of every solve of the fit.
func (fj *fitJob) solveOptions() *gradsolve.Options {
	fl := fj.fl
	return &gradsolve.Options{Method: fj.meth, Engine: fj.engine, RTol: fl.rtol, ATol: fl.atol, Workers: fl.workers,
		MaxSteps: fl.maxSteps, DenseSave: fl.dense, Device: fl.device, Precision: fl.prec()}
}

// engineChoice is the method and engine of the route the fit took, as
// the library chooses them: a solve with the fitted columns'
// sensitivities, or a recording for the reverse replay.
func (fj *fitJob) engineChoice(mode router.Mode) gradsolve.EngineChoice {
	n := fj.in.ens.N
	o := fj.solveOptions()
	if mode == router.Forward {
		o.Sens = &gradsolve.Sensitivity{Wrt: fj.wrt}
	}
	choice, _ := gradsolve.ChooseEngine(fj.pr, n, o)
	if mode == router.Reverse {
		o.Mode, o.GradientWrt = router.Reverse, fj.wrt
		if d, err := gradsolve.GradientDecision(fj.pr, n, o); err == nil {
			choice.Engine = d.Engine
		}
	}
	return choice
}

// fitTranslations put the fit package's Spec fields in the flags'
// terms, in order.
var fitTranslations = []struct{ from, to string }{
	{"Spec.Ensemble.N", "--n"},
	{"Spec.Ensemble.P", "--params"},
	{"Spec.Ensemble.Y0", "--y0"},
	{"Spec.Ensemble.Save", "--saveat"},
	{"Spec.Ensemble", "the ensemble"},
	{"Spec.Params", "--fit"},
	{"Spec.Start", "--start"},
	{"Spec.Group", "--groups"},
	{"Spec.Owner", "--each or --groups"},
	{"Spec.Data.FinalWeights", "--weights"},
	{"Spec.Data.SavedWeights", "--weights"},
	{"Spec.Data.Final", "--data"},
	{"Spec.Data.Saved", "--data"},
	{"Spec.Data", "--data"},
	{"Spec.Optimizer", "--optimizer"},
	{"Spec.MaxIter", "--max-iter"},
	{"Spec.Tol.Step", "--tol"},
	{"Spec.Tol.Loss", "--loss-tol"},
	{"Spec.Tol.Grad", "--grad-tol"},
	{"Spec.Mode", "--mode"},
	{"Spec.Rerecord", "--rerecord"},
	{"Spec.Noise.Sigma", "--sigma"},
	{"Spec.Noise", "--fisher"},
	{"Spec.Problem", "the problem"},
	{"Spec.Options", "the solver options"},
}

// fitError puts an error of the fit (a checked Spec's, or its solves')
// in the command line's terms.
func (fj *fitJob) fitError(err error) error {
	msg := err.Error()
	out := strings.TrimPrefix(msg, fit.ErrInput.Error()+": ")
	for _, t := range fitTranslations {
		out = strings.ReplaceAll(out, t.from, t.to)
	}
	if out != msg {
		err = &translated{msg: out, err: err}
	}
	return fj.userError(err)
}

// fitBar draws the fit's progress on a terminal: the evaluations out of
// --max-iter (an evaluation per iteration, and more for rejected
// trials) or the share of groups done, whichever is further, with the
// loss.
type fitBar struct {
	*progressBar
	maxIter, groups int
	last            time.Time
}

func newFitBar(w io.Writer, maxIter, groups int) *fitBar {
	return &fitBar{progressBar: newProgressBar(w, time.Second), maxIter: max(maxIter, 1), groups: max(groups, 1)}
}

// update is the fit's Progress callback.
func (b *fitBar) update(p fit.Progress) {
	if !b.on || time.Since(b.start) < b.delay || (time.Since(b.last) < 100*time.Millisecond && p.Active > 0) {
		return
	}
	b.last = time.Now()
	done := p.Converged + p.Stopped
	frac := math.Max(float64(done)/float64(b.groups), math.Min(float64(p.Evaluation)/float64(b.maxIter), 0.99))
	if p.Active == 0 {
		frac = 1
	}
	const width = 30
	fill := int(width * frac)
	bar := strings.Repeat("=", fill)
	if fill < width {
		bar += ">" + strings.Repeat(" ", width-fill-1)
	}
	fmt.Fprintf(b.w, "\r[%s] %3d%% evaluation %d (max-iter %d), loss %.4g, %d/%d groups done %s\x1b[K",
		bar, int(100*frac), p.Evaluation, b.maxIter, p.Loss, done, b.groups, time.Since(b.start).Round(time.Second))
	b.drawn = true
}

// fitJSON is the content of fit.json.
type fitJSON struct {
	Problem       string             `json:"problem"`
	Parameters    []string           `json:"parameters"`
	Transforms    []string           `json:"transforms"`
	Owner         string             `json:"owner"`
	Groups        int                `json:"groups"`
	GroupSizes    []int              `json:"group_sizes"`
	N             int                `json:"n"`
	Dim           int                `json:"dim"`
	K             int                `json:"k"`
	LossStates    string             `json:"loss_states"`
	Optimizer     string             `json:"optimizer"`
	Mode          string             `json:"mode"`
	ModeReason    string             `json:"mode_reason"`
	Method        string             `json:"method"`
	Engine        string             `json:"engine"`
	RTol          float64            `json:"rtol"`
	ATol          float64            `json:"atol"`
	MaxIter       int                `json:"max_iter"`
	Tolerances    map[string]float64 `json:"tolerances"`
	Rerecord      string             `json:"rerecord"`
	Start         [][]float64        `json:"start"`
	Estimates     [][]float64        `json:"estimates"`
	Loss          []*float64         `json:"loss"`
	TotalLoss     float64            `json:"total_loss"`
	Iterations    []int              `json:"iterations"`
	GroupEvals    []int              `json:"group_evaluations"`
	Converged     []bool             `json:"converged"`
	Status        []string           `json:"status"`
	StatusCounts  map[string]int     `json:"status_counts"`
	Errors        []*string          `json:"errors"`
	Evaluations   int                `json:"evaluations"`
	Records       int                `json:"records"`
	Seconds       float64            `json:"seconds"`
	Noise         string             `json:"noise,omitempty"`
	StdErr        [][]float64        `json:"stderr,omitempty"`
	FisherErrors  []*string          `json:"fisher_errors,omitempty"`
	FisherSummary string             `json:"fisher_summary,omitempty"`
}

// fitStats is stats.json of a fit: the set and the run.
type fitStats struct {
	runSet
	Problem      string  `json:"problem"`
	Trajectories int     `json:"trajectories"`
	Groups       int     `json:"groups"`
	Method       string  `json:"method"`
	Engine       string  `json:"engine"`
	RHS          string  `json:"rhs"`
	RTol         float64 `json:"rtol"`
	ATol         float64 `json:"atol"`
	FitSeconds   float64 `json:"fit_seconds"`
	WallSeconds  float64 `json:"wall_seconds"`
}

// finiteOrNil is x for JSON: null where it is not finite.
func finiteOrNil(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func errText(err error) *string {
	if err == nil {
		return nil
	}
	s := errorLine(translate(err))
	s = strings.TrimPrefix(s, "gradsolve: ")
	return &s
}

// summary builds fit.json's content.
func (fj *fitJob) summary(rep *fit.Report, choice gradsolve.EngineChoice) *fitJSON {
	np, G := len(fj.names), len(rep.Groups)
	s := &fitJSON{Problem: fj.pr.Name, Parameters: fj.names, Owner: fj.owner.String(), Groups: G,
		N: fj.in.ens.N, Dim: fj.pr.Dim, K: fj.in.k, LossStates: "final",
		Optimizer: rep.Optimizer, Mode: rep.Mode.String(), ModeReason: flagTerms(rep.ModeReason),
		Engine: choice.Engine, RTol: fj.fl.rtol, ATol: fj.fl.atol, MaxIter: fj.maxIter,
		Tolerances: map[string]float64{"step": orDefault(fj.ff.tol, fit.DefaultStepTol), "loss": orDefault(fj.ff.lossTol, fit.DefaultLossTol), "grad": fj.ff.gradTol},
		Rerecord:   fj.rerecord, StatusCounts: map[string]int{},
		Evaluations: rep.Evaluations, Records: rep.Records, Seconds: rep.Elapsed.Seconds(), Noise: fj.noise}
	if choice.Method != nil {
		s.Method = choice.Method.MethodName()
	}
	if rep.Mode == router.Forward {
		s.Rerecord = "none (forward sensitivities record nothing)"
	}
	if s.K > 0 {
		s.LossStates = "saved"
	}
	for _, p := range fj.spec.Params {
		s.Transforms = append(s.Transforms, p.Transform.String())
	}
	for g, gr := range rep.Groups {
		s.GroupSizes = append(s.GroupSizes, len(gr.Trajectories))
		s.Start = append(s.Start, fj.start[g*np:(g+1)*np])
		s.Estimates = append(s.Estimates, gr.Estimate)
		s.Loss = append(s.Loss, finiteOrNil(gr.Loss))
		if !math.IsNaN(gr.Loss) {
			s.TotalLoss += gr.Loss
		}
		s.Iterations = append(s.Iterations, gr.Iterations)
		s.GroupEvals = append(s.GroupEvals, gr.Evaluations)
		s.Converged = append(s.Converged, gr.Converged)
		s.Status = append(s.Status, gr.Status.String())
		s.StatusCounts[gr.Status.String()]++
		s.Errors = append(s.Errors, errText(gr.Err))
		if fj.spec.Noise != nil {
			s.StdErr = append(s.StdErr, gr.StdErr)
			s.FisherErrors = append(s.FisherErrors, errText(gr.FisherErr))
		}
	}
	if fj.spec.Noise != nil {
		bad := 0
		for _, e := range s.FisherErrors {
			if e != nil {
				bad++
			}
		}
		s.FisherSummary = fmt.Sprintf("standard errors for %d of %d groups", G-bad, G)
	}
	return s
}

func orDefault(v, d float64) float64 {
	if v == 0 {
		return d
	}
	return v
}

// write stages the fit's files and commits them with stats.json.
func (fj *fitJob) write(ctx context.Context, rep *fit.Report, choice gradsolve.EngineChoice) error {
	out := fj.out
	np, G := len(fj.names), len(rep.Groups)
	sum := fj.summary(rep, choice)
	err := out.writeFile(ctx, "fit.json", func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(sum)
	})
	if err != nil {
		return err
	}
	est := make([]float64, 0, G*np)
	for _, gr := range rep.Groups {
		est = append(est, gr.Estimate...)
	}
	if err := out.writeNpy(ctx, "params_fit.npy", []int{G, np}, est); err != nil {
		return err
	}
	if fj.spec.Noise != nil {
		cov := make([]float64, 0, G*np*np)
		for _, gr := range rep.Groups {
			c := gr.Covariance
			if c == nil {
				c = make([]float64, np*np)
				for i := range c {
					c[i] = math.NaN()
				}
			}
			cov = append(cov, c...)
		}
		if err := out.writeNpy(ctx, "covariance.npy", []int{G, np, np}, cov); err != nil {
			return err
		}
	}
	if err := out.writeFile(ctx, "history.csv", rep.WriteHistory); err != nil {
		return err
	}
	if series, logY := lossSeries(rep); len(series) > 0 {
		title := fmt.Sprintf("gradsolve fit: %s, %s on %s", fj.pr.Name, rep.Optimizer, routeName(rep.Mode))
		err := out.writeWith(ctx, "loss.png", func(path string) error {
			return plots.Lines(path, title, "iteration", "loss ½Σ w·(y − data)²", series, &plots.Options{LogY: logY})
		})
		if err != nil {
			return err
		}
	}
	st := fitStats{Problem: fj.pr.Name, Trajectories: fj.in.ens.N, Groups: G, Method: sum.Method, Engine: choice.Engine, RHS: fj.rhs,
		RTol: fj.fl.rtol, ATol: fj.fl.atol, FitSeconds: rep.Elapsed.Seconds()}
	return out.commit(ctx, func(set runSet) any {
		st.runSet = set
		st.WallSeconds = time.Since(fj.wallStart).Seconds()
		return st
	})
}

// lossPlotGroups is how many groups loss.png draws one by one; with
// more groups it adds their median.
const lossPlotGroups = 5

// lossSeries are loss.png's lines: the loss per iteration of the first
// groups, and with more groups the median over all of them (a group
// that has stopped counts with its last loss). logY says whether the
// values allow a logarithmic axis.
func lossSeries(rep *fit.Report) ([]plots.Series, bool) {
	var series []plots.Series
	G := len(rep.Groups)
	longest := 0
	for g, gr := range rep.Groups {
		longest = max(longest, len(gr.History))
		if g >= lossPlotGroups || len(gr.History) == 0 {
			continue
		}
		s := plots.Series{Name: fmt.Sprintf("group %d", g)}
		if G == 1 {
			s.Name = "loss"
		}
		for _, it := range gr.History {
			s.X = append(s.X, float64(it.Iteration))
			s.Y = append(s.Y, it.Loss)
		}
		series = append(series, s)
	}
	if G > lossPlotGroups && longest > 0 {
		s := plots.Series{Name: fmt.Sprintf("median of %d groups", G)}
		vals := make([]float64, 0, G)
		for t := range longest {
			vals = vals[:0]
			for _, gr := range rep.Groups {
				if h := gr.History; len(h) > 0 {
					vals = append(vals, h[min(t, len(h)-1)].Loss)
				}
			}
			sort.Float64s(vals)
			med := vals[len(vals)/2]
			if len(vals)%2 == 0 {
				med = 0.5 * (vals[len(vals)/2-1] + vals[len(vals)/2])
			}
			s.X = append(s.X, float64(t))
			s.Y = append(s.Y, med)
		}
		series = append(series, s)
	}
	logY := false
	for _, s := range series {
		for _, y := range s.Y {
			logY = logY || (y > 0 && !math.IsInf(y, 0))
		}
	}
	return series, logY
}

// routeName names the route the gradients took.
func routeName(m router.Mode) string {
	if m == router.Reverse {
		return "the reverse replay"
	}
	return "forward sensitivities"
}

// fitRowsShown is how many groups the summary lists.
const fitRowsShown = 10

// report prints what the fit did.
func (fj *fitJob) report(w io.Writer, rep *fit.Report, choice gradsolve.EngineChoice) {
	G := len(rep.Groups)
	what := "groups"
	switch fj.owner {
	case fit.Shared:
		what = "shared"
	case fit.PerTrajectory:
		what = "one per trajectory"
	}
	fmt.Fprintf(w, "gradsolve fit: %s (dim %d), %s, %s (%s), fitting %s\n", fj.pr.Name, fj.pr.Dim,
		counted(fj.in.ens.N, "trajectory", "trajectories"), counted(G, "group", "groups"), what, strings.Join(fj.names, ", "))
	fmt.Fprintf(w, "  %s on %s: %s\n", rep.Optimizer, routeName(rep.Mode), flagTerms(rep.ModeReason))
	meth := "?"
	if choice.Method != nil {
		meth = choice.Method.MethodName()
	}
	fmt.Fprintf(w, "  method %s, engine %s, rtol %g, atol %g\n", meth, choice.Engine, fj.fl.rtol, fj.fl.atol)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  group\tstatus\titerations\tloss\t%s\t\n", strings.Join(fj.names, "\t"))
	for g, gr := range rep.Groups {
		if g == fitRowsShown {
			fmt.Fprintf(tw, "  …\t(%d more in fit.json with --out)\t\n", G-g)
			break
		}
		vals := make([]string, len(gr.Estimate))
		for c, v := range gr.Estimate {
			vals[c] = fmt.Sprintf("%.8g", v)
			if gr.StdErr != nil {
				vals[c] += fmt.Sprintf(" ± %.2g", gr.StdErr[c])
			}
		}
		fmt.Fprintf(tw, "  %d\t%s\t%d\t%.4g\t%s\t\n", g, gr.Status, gr.Iterations, gr.Loss, strings.Join(vals, "\t"))
	}
	tw.Flush()
	counts := map[fit.Status]int{}
	var firstErr, firstFisher error
	for _, gr := range rep.Groups {
		counts[gr.Status]++
		if firstErr == nil && gr.Err != nil {
			firstErr = gr.Err
		}
		if firstFisher == nil && gr.FisherErr != nil {
			firstFisher = gr.FisherErr
		}
	}
	var parts []string
	for s := fit.Running; s <= fit.Cancelled; s++ {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	fmt.Fprintf(w, "  status: %s; %d evaluations, %d recordings, %v\n", strings.Join(parts, ", "), rep.Evaluations, rep.Records, rep.Elapsed.Round(time.Millisecond))
	if counts[fit.MaxIterations] > 0 {
		fmt.Fprintf(w, "  hint: %s stopped at --max-iter %d without converging: raise --max-iter or loosen --tol\n", counted(counts[fit.MaxIterations], "group", "groups"), fj.maxIter)
	}
	if firstErr != nil {
		fmt.Fprintf(w, "  first error: %s\n", *errText(firstErr))
		if strings.Contains(firstErr.Error(), "step budget") {
			fmt.Fprintf(w, "  hint: raise --max-steps (now %d) or loosen --rtol and --atol\n", fj.fl.maxSteps)
		}
	}
	if firstFisher != nil {
		fmt.Fprintf(w, "  no standard errors: %s\n", *errText(firstFisher))
	}
	if fj.fl.out != "" {
		fmt.Fprintf(w, "  wrote %s\n", fj.fl.out)
	}
}
