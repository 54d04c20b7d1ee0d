// Command gradsolve solves ensembles of ordinary differential equations
// from the shell.
//
// Usage:
//
//	gradsolve solve [FILE.ode] [flags]   solve an ensemble of a problem file
//	                                     or of a built-in system
//	gradsolve grad [FILE.ode] [flags]    gradient of a loss of the final or saved states
//	gradsolve merge --out DIR SHARDDIR…  put the shards of a solve or grad together
//	gradsolve fit FILE.ode [flags]       fit parameters and initial values to data
//	gradsolve gen FILE.ode [flags]       write the problem as Go source
//	gradsolve halo [flags]               the stellar-orbit application
//	gradsolve precession [flags]         the spin-precession application
//	gradsolve quintessence [flags]       the quintessence profile likelihood
//	gradsolve list                       list the built-in systems and methods
//
// Run "gradsolve solve -h" for the flags. With no arguments, solve runs
// the Lorenz ensemble of the DiffEqGPU and JAX gradsolve benchmarks:
// 10 000 trajectories, ρ = linspace(0, 21), t ∈ [0, 1], Tsit5 at
// rtol 1e-8, atol 1e-11, and checks it against a converged reference.
// Problem files are described in docs/ode-format.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
)

// signalled is the cancellation cause of a run stopped by a signal.
type signalled struct{ sig os.Signal }

func (s signalled) Error() string { return "interrupted by " + signalName(s.sig) }

func signalName(sig os.Signal) string {
	if sig == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}

// exitCode is 128 + the signal's number, the shell's convention: 130
// for SIGINT, 143 for SIGTERM.
func exitCode(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 130
}

// main runs the command. SIGINT and SIGTERM cancel it: the solve stops,
// the staging directory of --out is removed (the output directory keeps
// what it held), and the command exits with 130 or 143. A commit already
// moving the files in is not stopped (it only renames): it finishes, so
// the directory holds the new complete set, and the command still exits
// with 130 or 143. A signal exits so at any moment, even after the
// outputs were written. A second signal exits at once, after removing
// the staging directory (and after a commit in progress).
func main() {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		cancel(signalled{sig})
		sig = <-sigs
		abortPending()
		fmt.Fprintf(os.Stderr, "gradsolve: interrupted by %s again: stopped at once%s\n", signalName(sig), committedNote())
		os.Exit(exitCode(sig))
	}()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	var sig signalled
	if errors.As(context.Cause(ctx), &sig) {
		fmt.Fprintf(os.Stderr, "gradsolve: %v%s\n", sig, committedNote())
		os.Exit(exitCode(sig.sig))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, errorLine(err))
		os.Exit(1)
	}
}

// committedNote tells, after a signal, which output directories got
// this run's complete set before it stopped.
func committedNote() string {
	committed.Lock()
	defer committed.Unlock()
	if len(committed.dirs) == 0 {
		return ""
	}
	return fmt.Sprintf(" (after writing %s in full)", strings.Join(committed.dirs, ", "))
}

// innerPrefix is a "gradsolve: " that starts a message or a layer of
// one ("quintessence: gradsolve: 1 of 2 trajectories failed").
var innerPrefix = regexp.MustCompile(`(^|: )(gradsolve: )+`)

// errorLine is the error as the command prints it: one line with one
// "gradsolve:" prefix, however many the error's layers carry (a line
// break, as errors.Join makes, becomes "; ").
func errorLine(err error) string {
	var parts []string
	for _, line := range strings.Split(err.Error(), "\n") {
		line = strings.TrimSpace(innerPrefix.ReplaceAllString(line, "$1"))
		if line != "" {
			parts = append(parts, line)
		}
	}
	return "gradsolve: " + strings.Join(parts, "; ")
}

const usage = `usage: gradsolve <command> [flags]

commands:
  solve   solve an ensemble of a problem file (FILE.ode) or a built-in system,
          report steps and time, write NumPy files with --out DIR
  grad    gradient of a loss of the final or saved states (reverse replay or forward sensitivities)
  merge   put the output directories of a sharded solve or grad (--shard I/N) together
  fit     fit parameters and initial values to data (shared, per trajectory or per group)
  gen     write a problem file's right-hand side and derivatives as Go source
  halo    stellar orbits in a flattened halo, with sensitivities and an accuracy check
  precession  binary black-hole spin precession from r = 100 M to 10 M, with an accuracy check
  quintessence  thawing quintessence fitted to DESI DR2 BAO: profile likelihood over λ
  list    list the built-in systems and methods

Run "gradsolve <command> -h" for a command's flags.
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("no command given")
	}
	switch args[0] {
	case "solve":
		return solveCmd(ctx, args[1:], stdout, stderr)
	case "gen":
		return genCmd(args[1:], stdout, stderr)
	case "grad":
		return gradCmd(ctx, args[1:], stdout, stderr)
	case "fit":
		return fitCmd(ctx, args[1:], stdout, stderr)
	case "merge":
		return mergeCmd(ctx, args[1:], stdout, stderr)
	case "halo":
		return haloCmd(ctx, args[1:], stdout, stderr)
	case "precession":
		return precessionCmd(ctx, args[1:], stdout, stderr)
	case "quintessence":
		return quintessenceCmd(ctx, args[1:], stdout, stderr)
	case "list":
		return listCmd(stdout)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}
