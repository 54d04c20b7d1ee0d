package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gradsolve/gradsolve/npy"
	"github.com/gradsolve/gradsolve/sym/emitgo"
	"github.com/gradsolve/gradsolve/sym/parse"
	"github.com/gradsolve/gradsolve/sym/tape"
)

// genCmd writes a problem file's right-hand side and derivative
// programs as Go source.
func genCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	pkg := fs.String("package", "main", "package name of the generated file")
	prefix := fs.String("prefix", "", "prefix of the function names (default: from the problem's name)")
	out := fs.String("o", "", "output file (default: standard output)")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: gradsolve gen FILE.ode [flags]

Write the right-hand side of FILE.ode and its derivative programs (J·v,
uᵀJ, dense J_y, ∂f/∂t, and the forward-sensitivity system with f's terms
computed once for all columns) as plain Go functions, plus a constructor
of the ode.Problem, ready for go generate:

	//go:generate gradsolve gen lorenz.ode -package mymodel -o lorenz_gen.go

flags:
`)
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("gen: want one problem file, got %d arguments", len(pos))
	}
	m, err := parse.ParseFile(pos[0])
	if err != nil {
		return err
	}
	set, err := tape.Build(m)
	if err != nil {
		return fmt.Errorf("%s: %w", pos[0], err)
	}
	src, err := emitgo.Generate(set, emitgo.Options{Package: *pkg, Prefix: *prefix, Source: pos[0]})
	if err != nil {
		// emitgo names its Options' fields; gen's flags set them.
		msg := strings.NewReplacer("set Options.Prefix", "give -prefix", "Options.Package", "-package", "Options.Prefix", "-prefix",
			"Options.Source", "the file name").Replace(err.Error())
		return errors.New(strings.TrimPrefix(msg, "emitgo: "))
	}
	if *out == "" {
		_, err = stdout.Write(src)
		return err
	}
	if err := writeFile(*out, src); err != nil {
		return err
	}
	// The lane form of f (amd64 Go assembly) goes beside the file; a
	// model without one removes what an earlier run left there, which
	// would belong to another f.
	goSrc, asmSrc, ok, err := emitgo.GenerateLanes(set, emitgo.Options{Package: *pkg, Prefix: *prefix, Source: pos[0]})
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "emitgo: "))
	}
	goPath, asmPath := laneFiles(*out)
	if !ok {
		for _, p := range []string{goPath, asmPath} {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
		return nil
	}
	if err := writeFile(goPath, goSrc); err != nil {
		return err
	}
	return writeFile(asmPath, asmSrc)
}

// laneFiles returns the paths of the lane form gen writes beside the Go
// file out: NAME_lanes_amd64.go and NAME_lanes_amd64.s for NAME.go.
func laneFiles(out string) (goPath, asmPath string) {
	base := strings.TrimSuffix(out, ".go")
	return base + "_lanes_amd64.go", base + "_lanes_amd64.s"
}

func writeFile(path string, b []byte) error {
	return npy.WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}
