package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/memory"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/npy"
	"github.com/gradsolve/gradsolve/router"
)

// fileNames are the command's names for the library's arrays in a
// refusal: the output files, or what the memory is for.
var fileNames = map[string]string{
	"Result.Y":                     "y_final",
	"Result.Saved":                 "y_saved",
	"Result.T":                     "status and statistics",
	"Result.Status":                "status and statistics",
	"Result.Stats":                 "status and statistics",
	"Result.S":                     "sens",
	"Result.SavedS":                "sens_saved",
	"sensitivity buffers":          "sensitivity buffers",
	"worker state":                 "worker state",
	"worker Jacobians":             "Jacobians",
	"recorded meshes":              "recording",
	"Recording points":             "recording",
	"Gradient.P":                   "grad_params",
	"Gradient.Y0":                  "grad_y0",
	"Cotangents.Y":                 "cotangents",
	"Cotangents.Saved":             "cotangents",
	"initial states y0(p)":         "initial states",
	"initial sensitivities ∂y0/∂p": "initial sensitivities",
}

// sizeFlags describes where n and k come from, for the messages.
type sizeFlags struct {
	n     int
	nFrom string // "--n", or the file that gave n
	k     int
	kFrom string // "--saveat …", or ""
	// chunk: n is a chunk of the run (of whole trajectories), which
	// the subject names and the advice lowers; one: the automatic
	// chunk, of one trajectory.
	chunk, one bool
}

// chunked returns sf for a chunk of size trajectories of the run
// (automatic: chosen by the command).
func (sf sizeFlags) chunked(size int, automatic bool) sizeFlags {
	c := sf
	c.nFrom = "a --chunk of " + sf.subject()
	if automatic {
		c.nFrom = "one trajectory of " + sf.subject()
	}
	c.kFrom = "" // the subject above names the save times
	c.n, c.chunk, c.one = size, true, automatic && size == 1
	return c
}

func (sf sizeFlags) subject() string {
	s := sf.nFrom
	if sf.nFrom == "--n" {
		s = fmt.Sprintf("--n %d", sf.n)
	} else {
		s = fmt.Sprintf("%s (n = %d)", sf.nFrom, sf.n)
	}
	if sf.k > 0 && sf.kFrom != "" {
		s += fmt.Sprintf(" with %s (%d save times)", sf.kFrom, sf.k)
	}
	return s
}

func (sf sizeFlags) advice() string {
	switch {
	case sf.one:
		return "give fewer --saveat times or --sens columns (the run streams its trajectories, but one of them must fit)"
	case sf.chunk:
		return fmt.Sprintf("lower --chunk (now %d), or leave it out for the automatic chunk", sf.n)
	}
	a := "lower --n or split the ensemble into runs of fewer trajectories"
	if sf.nFrom != "--n" {
		a = "split " + sf.nFrom + " into runs of fewer trajectories"
	}
	if sf.k > 0 {
		a += ", or give fewer --saveat times"
	}
	return a
}

// jobSizes are the library's sizes of the job: a solve (with the --sens
// columns) or grad's route. The engine and the route are the library's
// own choice (gradsolve.ChooseEngine, gradsolve.GradientDecision), made
// from the options the run will pass.
func (j *job) jobSizes(sf sizeFlags) (gradsolve.Sizes, error) {
	o := j.planOptions()
	ch, err := gradsolve.ChooseEngine(j.pr, sf.n, o)
	if err != nil {
		return gradsolve.Sizes{}, j.libError(err)
	}
	s := gradsolve.Sizes{N: sf.n, Dim: j.pr.Dim, NumParams: j.pr.NumParams, K: sf.k, NS: len(j.wrt), Workers: j.fl.workers,
		Implicit:          ch.Method.Family() == method.RosenbrockFamily,
		InitialFromParams: j.fl.y0 == "" && j.pr.Initial != nil}
	if j.cmd == "grad" {
		d, err := gradsolve.GradientDecision(j.pr, sf.n, o)
		if err != nil {
			return gradsolve.Sizes{}, j.libError(err)
		}
		s.Gradient = true
		if d.Mode == router.Forward {
			s.NS = len(j.gradWrt)
		} else {
			s.Record = true
			if c := j.fl.grad.checkpoint; c >= 2 {
				s.Checkpoint, s.MaxSteps = c, j.fl.maxSteps
				if tb, ok := ch.Method.(*method.Tableau); ok {
					s.SegmentStages = tb.Stages() - 1
				}
			}
		}
	}
	return s, nil
}

// checkChunked plans the run's chunks (planChunks) and checks that the
// arrays of a chunk fit (checkSize): a run streams its outputs chunk by
// chunk, so its memory is set by the chunk, not by n.
func (j *job) checkChunked(sf sizeFlags) error {
	if j.rowsTotal == 0 {
		j.rowsTotal = sf.n
	}
	p, err := j.planChunks(sf)
	if err != nil {
		return err
	}
	j.plan = p
	if p.size >= sf.n && j.fl.chunk == 0 {
		return j.checkSize(sf)
	}
	// The whole run's files must be indexable (their shapes fit an
	// int), though only a chunk is held at a time.
	s, err := j.jobSizes(sf)
	if err != nil {
		return err
	}
	if _, err := s.Footprint(); err != nil {
		return j.flagSizeError(err, sf)
	}
	return j.checkSize(sf.chunked(p.size, p.auto))
}

// lossFiles are grad's loss inputs, each n×dim or n×k×dim at most:
// read after the size check, so counted in it.
func (j *job) lossFiles() []struct{ flag, path string } {
	if j.cmd != "grad" {
		return nil
	}
	g := &j.fl.grad
	return []struct{ flag, path string }{{"data", g.data}, {"data-final", g.dataFinal}, {"weights", g.weights},
		{"weights-final", g.weightsFinal}, {"cot", g.cot}, {"cot-final", g.cotFinal}}
}

// checkSize refuses, before the inputs are built, a job whose arrays
// overflow an int or do not fit in the memory available: the library's
// arrays, the parameter rows the command builds and writes
// (params.npy), status.npy, grad's loss inputs (--data, --weights,
// --cot and their -final companions, 8 bytes per element of the shape
// their headers give) and its gradient columns (grad_params.npy,
// grad_y0.npy), and the reference solve of solve's --ref.
func (j *job) checkSize(sf sizeFlags) error {
	b, s, err := j.sizeBudget(sf)
	if err != nil {
		return err
	}
	err = memory.Check(b, sf.subject(), runArrays, sf.advice())
	var me *memory.Error
	if errors.As(err, &me) && s.Record && me.Overflow == "" {
		f, _ := s.Footprint()
		me.PerStep = memory.RecordingPerStep(f.PerStep, false)
	}
	return err
}

// sizeBudget adds up the arrays checkSize counts; s is the library's
// part.
func (j *job) sizeBudget(sf sizeFlags) (_ *memory.Budget, s gradsolve.Sizes, _ error) {
	s, err := j.jobSizes(sf)
	if err != nil {
		return nil, s, err
	}
	var b memory.Budget
	addFootprint := func(s gradsolve.Sizes, prefix string) error {
		f, err := s.Footprint()
		if err != nil {
			return j.flagSizeError(err, sf)
		}
		for _, a := range f.Arrays {
			b.AddBytes(prefix+fileNames[a.Name], a.Bytes)
		}
		return nil
	}
	if err := addFootprint(s, ""); err != nil {
		return nil, s, err
	}
	b.Add("params", "n·m", 8, sf.n, j.pr.NumParams)
	if j.fl.out != "" {
		b.Add("status", "n", 4, sf.n)
	}
	for _, lf := range j.lossFiles() {
		if lf.path == "" {
			continue
		}
		shape, err := npy.ReadShapeFile(lf.path)
		if err != nil {
			continue // reading the file says what is wrong
		}
		factors := make([]string, len(shape))
		for i := range shape {
			factors[i] = fmt.Sprintf("shape[%d]", i)
		}
		if len(shape) >= 2 && j.rowsTotal > 1 && shape[0] == j.rowsTotal {
			// A row per trajectory: read a chunk of rows at a time.
			shape = append([]int{sf.n}, shape[1:]...)
			factors[0] = "n"
		}
		b.Add("--"+lf.flag, strings.Join(factors, "·"), 8, shape...)
	}
	if j.cmd == "grad" {
		b.Add("grad_params and grad_y0", "n·columns", 8, sf.n, len(j.gradWrt))
	}
	if ref := min(j.fl.ref, sf.n); ref > 0 && j.cmd == "solve" {
		r := gradsolve.Sizes{N: ref, Dim: j.pr.Dim, NumParams: j.pr.NumParams, K: sf.k}
		if err := addFootprint(r, "reference "); err != nil {
			return nil, s, err
		}
		b.Add("reference inputs", "ref·(dim+m+2+k)", 8, ref, j.pr.Dim+j.pr.NumParams+2+sf.k)
	}
	return &b, s, nil
}

// flagSizeError rewords a size error of the library or an application
// in the command's terms. A recording whose meshes outgrew the memory
// as it ran gets the advice that fits it: fewer steps, or fewer
// trajectories at a time.
func (j *job) flagSizeError(err error, sf sizeFlags) error {
	advice := sf.advice()
	var me *memory.Error
	if errors.As(err, &me) && me.What == memory.RecordedMeshes {
		advice = fmt.Sprintf("lower --max-steps (now %d), loosen --rtol and --atol for fewer steps, or %s", j.fl.maxSteps, sf.advice())
	}
	return asFlagSizeError(err, sf.subject(), advice, fileNames)
}

// asFlagSizeError rewords a *memory.Error inside err with the given
// subject and advice, renaming its parts by names; any other error is
// returned as it is.
func asFlagSizeError(err error, subject, advice string, names map[string]string) error {
	var me *memory.Error
	if !errors.As(err, &me) {
		return err
	}
	c := *me
	c.Subject, c.Advice = subject, advice
	if c.What == "the result arrays" || c.What == "the arrays" {
		c.What = runArrays
	}
	c.Parts = nil
	for _, p := range me.Parts {
		if n, ok := names[p.Name]; ok {
			p.Name = n
		}
		c.Parts = append(c.Parts, p)
	}
	for field, name := range names {
		c.Overflow = strings.ReplaceAll(c.Overflow, field+" (", name+" (")
	}
	// The factors "(N·K·Dim = …" in the command's letters.
	if i, e := strings.Index(c.Overflow, " ("), strings.Index(c.Overflow, " = "); i >= 0 && e > i {
		c.Overflow = c.Overflow[:i] + factorNames.Replace(c.Overflow[i:e]) + c.Overflow[e:]
	}
	return &c
}

// runArrays is what a refusal says needs the memory.
const runArrays = "the run's arrays"

// factorNames turn the library's size factors into the command's.
var factorNames = strings.NewReplacer("NumParams", "m", "Dim", "dim", "NS", "ns", "Workers", "workers", "N", "n", "K", "k")
