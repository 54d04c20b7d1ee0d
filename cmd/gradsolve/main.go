// Command gradsolve solves ensembles of ordinary differential equations
// from the shell.
//
// Usage:
//
//	gradsolve solve [FILE.ode] [flags]   solve an ensemble of a problem file
//	                                     or of a built-in system
//	gradsolve grad [FILE.ode] [flags]    gradient of a loss of the final or saved states
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
	"fmt"
	"io"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "gradsolve:", err)
		os.Exit(1)
	}
}

const usage = `usage: gradsolve <command> [flags]

commands:
  solve   solve an ensemble of a problem file (FILE.ode) or a built-in system,
          report steps and time, write NumPy files with --out DIR
  grad    gradient of a loss of the final or saved states (reverse replay or forward sensitivities)
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
