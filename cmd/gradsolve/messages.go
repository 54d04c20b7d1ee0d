package main

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/memory"
)

// The command checks its flags before it calls the library, so that
// their errors name the flag. What the library can still say in its own
// terms (it names Go fields: Options.DenseSave, Ensemble.Y0 …) is
// translated here: each rule maps a phrase of the Go API to the flag or
// file that sets it. TestMessagesNameFlags runs bad command lines and
// checks that no Go field is left.

// translations are applied in order.
var translations = []struct{ from, to string }{
	{"Sensitivity.ErrorTest", "--sens-error-test"},
	{"DenseSave", "--dense"},
	{"set Ensemble.Y0", "give --y0 FILE.npy"},
	{"set Ensemble.P", "give --params FILE.npy or --param NAME=VALUE"},
	{"set Ensemble.T0 and T1", "give --t0 and --t1"},
	{"Ensemble.N", "--n"},
	{"Options.MaxSteps", "--max-steps"},
	{"Options.Checkpoint", "--checkpoint"},
	{"Options.Sens.Wrt", "--sens"},
	{"Options.Sens", "--sens"},
	{"Options.GradientWrt", "--wrt"},
	{"Options.Device = ", "--device "},
	{"Options.Precision float32", "--precision float32"},
	{"Options.Precision", "--precision"},
	{"Options.Engine = ", "--engine "},
	{"Options.Engine", "--engine"},
	{"Options.Method", "--method"},
	{"compile the problem from formulas or supply one", "write it as a problem file (.ode)"},
	{"every problem compiled from formulas has them", "every problem file has them"},
	{"LeastSquares: ", "--data: "},
	{"Problem.Programs has no VJP", "it has no cotangent program"},
	{"Problem.Programs has no JVP", "it has no tangent program"},
	{"AccuracyTarget.Eps", "--accuracy"},
	{"AccuracyTarget.Quantile", "--quantile"},
	{"AccuracyTarget.Pilot", "--pilot"},
}

// goHints are parenthesised Go names the command drops: "(Problem.Programs
// with JacY)", "(Programs.JVPJacY, and JVPDfDt for a non-autonomous problem)".
var goHints = regexp.MustCompile(` \((Problem\.)?Programs[^)]*\)`)

// goField matches what reads as a Go field: TestMessagesNameFlags fails
// on a message that has one.
var goField = regexp.MustCompile(`\b(Options|Ensemble|Problem|Programs|Sensitivity|Result|Config|Recording|Gradient|Cotangents)\.[A-Z]|\b(DenseSave|MaxSteps|ErrorTest|KeepStages|NumParams|SavePerTrajectory)\b`)

// userError puts an error of the library in the command line's terms:
// one "gradsolve:" prefix (main adds it), flags instead of Go fields, and
// for a job too large the flags that set its size.
func (j *job) userError(err error) error {
	if err == nil {
		return nil
	}
	var me *memory.Error
	if errors.As(err, &me) {
		sf := sizeFlags{n: j.in.n, nFrom: "--n", k: j.in.k, kFrom: "--saveat " + j.fl.saveat}
		if j.in.nFrom != "" {
			sf.nFrom = j.in.nFrom
		}
		if j.plan.size > 0 && j.plan.size < j.in.n {
			sf = sf.chunked(j.plan.size, j.plan.auto)
		}
		return j.flagSizeError(err, sf)
	}
	return j.libError(err)
}

// libError puts an error of the library that is not about sizes in the
// command line's terms: flags instead of Go fields, and a built-in
// system named as --system NAME.
func (j *job) libError(err error) error {
	if err == nil {
		return nil
	}
	err = translate(err)
	if j.builtin {
		err = builtinTerms(err, j.pr.Name, j.name())
	}
	return err
}

// builtinTerms puts a translated error about a built-in system in the
// command's terms: the problem is "--system NAME", and where the error
// says a problem file has what the system lacks, it says what to do.
func builtinTerms(err error, name, flagName string) error {
	msg := err.Error()
	out := msg
	if rest, ok := strings.CutPrefix(out, name+": "); ok {
		out = flagName + ": " + rest
	}
	out = strings.ReplaceAll(out, "; every problem file has them",
		"; the built-in system has none: use an explicit method (--method tsit5), or the problem as a .ode file, which has them")
	out = strings.ReplaceAll(out, "; write it as a problem file (.ode)", "; use an explicit method (--method tsit5), or the problem as a .ode file")
	if out == msg {
		return err
	}
	return &translated{msg: out, err: err}
}

// flagTerms puts a text of the library that is not an error — the
// reasons a Result and a Decision give — in the command line's terms.
func flagTerms(s string) string {
	for _, t := range translations {
		s = strings.ReplaceAll(s, t.from, t.to)
	}
	return s
}

// translate rewrites the Go API's phrases in err's text; an error whose
// text needs no change is returned as it is (errors.Is sees through).
func translate(err error) error {
	msg := err.Error()
	out := msg
	for {
		rest, ok := strings.CutPrefix(out, "gradsolve: ")
		if !ok {
			break
		}
		out = rest
	}
	out = strings.TrimPrefix(out, strings.TrimPrefix(gradsolve.ErrInput.Error(), "gradsolve: ")+": ")
	for _, t := range translations {
		out = strings.ReplaceAll(out, t.from, t.to)
	}
	out = goHints.ReplaceAllString(out, "")
	switch {
	case strings.HasPrefix(out, "save time"):
		out = "--saveat: " + out
	case strings.Contains(out, "t0 = t1"):
		out = "--t0 and --t1: " + out
	}
	if out == msg {
		return err
	}
	return &translated{msg: out, err: err}
}

// translated is an error with its text rewritten.
type translated struct {
	msg string
	err error
}

func (t *translated) Error() string { return t.msg }
func (t *translated) Unwrap() error { return t.err }

// appSizeError rewords an application's refusal of a job too large: the
// subject becomes the flag, the advice what to do with it.
func appSizeError(err error, flag string, value int) error {
	return asFlagSizeError(err, fmt.Sprintf("%s %d", flag, value), "lower "+flag, fileNames)
}
