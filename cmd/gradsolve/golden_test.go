package main

// The golden test of the command's outputs: "no bit changes" (issue 13).
//
// TestGolden runs a fixed corpus of command lines (goldenCorpus: solve with
// every method, save times, --dense and --sens, built-in systems and the
// problem files of examples/, backward spans, per-trajectory inputs from
// .npy files, failing trajectories; grad in both modes with every kind of
// loss; the three applications on small n) with the current code, in
// process, and compares every file each run writes with
// testdata/golden.txt, which holds what commit a3f84d2 (the state before
// issues 12 and 13) wrote for the same command lines:
//
//   - a .npy file by its dtype, shape and the SHA-256 of its data (the
//     header's layout may change with the writer; the numbers may not),
//     with every NaN of a float64 array counted as one NaN (a NaN's sign
//     and payload are not results; testutil.SameBits says the same);
//   - any other file (profile.csv, the PNG plots) by the SHA-256 of all
//     of it;
//   - stats.json by its deterministic numbers (step and evaluation
//     counts, statuses, losses, the applications' errors and fits),
//     leaving out timings ("*_seconds"), "workers" and "status_codes";
//   - and whether the command succeeded.
//
// The few cases whose bits changed on purpose since (rebased, with the
// reason) are compared instead with testdata/golden-rebased.txt, written
// by a binary of the commit that changed them (-rebase).
//
// A file the current code writes that a3f84d2 did not (params.npy of
// solve and grad, new stats.json keys) is not compared. A file a3f84d2
// wrote that the current code does not write is a failure.
//
// The golden file is made by a binary of a3f84d2, never by the code under
// test:
//
//	git worktree add /tmp/a3f84d2 a3f84d2
//	(cd /tmp/a3f84d2 && go build -o /tmp/gs-a3f84d2 ./cmd/gradsolve)
//	git worktree remove /tmp/a3f84d2
//	go test ./cmd/gradsolve -run TestGolden -golden-bin /tmp/gs-a3f84d2 -update
//
// -update rewrites testdata/golden.txt from the binary's outputs (and
// requires -golden-bin). With -golden-bin and no -update, the test checks
// that the binary still reproduces testdata/golden.txt and, where the
// current code differs, compares the two runs' arrays value by value
// (the first differing index, the number of differences and the largest
// relative error; see internal/testutil), which is the way to find out
// why a case differs. A case added to the corpus needs the golden file
// regenerated; every flag in the corpus must exist in a3f84d2 (check
// "/tmp/gs-a3f84d2 solve -h").

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gradsolve/gradsolve/internal/testutil"
)

var (
	goldenBin    = flag.String("golden-bin", "", "TestGolden: a gradsolve binary (of commit a3f84d2) to check testdata/golden.txt against, or with -update to regenerate it from")
	goldenUpdate = flag.Bool("update", false, "TestGolden: rewrite testdata/golden.txt from the outputs of -golden-bin")
	goldenCommit = flag.String("golden-commit", "", "TestGolden: with -rebase, the commit -golden-bin was built from (written into the file)")
	goldenRebase = flag.Bool("rebase", false, "TestGolden: rewrite testdata/golden-rebased.txt, the rebased cases only, from the outputs of -golden-bin (a binary of the commit that changed them)")
)

const (
	goldenFile  = "testdata/golden.txt"
	rebasedFile = "testdata/golden-rebased.txt"
)

// rebased are the cases whose bits changed on purpose after a3f84d2,
// with the reason. Their outputs are compared with rebasedFile, which a
// binary of the commit that made the change wrote (-golden-bin … -rebase;
// the commit is named in the file), instead of with golden.txt; every
// other case still matches a3f84d2.
//
// The quintessence model computes exp and log, which since issue 14 are
// pmath's portable functions (the same bits on every machine and in
// SIMD lanes) instead of math.Exp and math.Log: its χ² values and
// intervals moved by parts in 10¹¹ to 10¹², within the solver's
// tolerances (the fit's own tolerance is far looser).
//
// The router's cost model became per engine, measured
// (BenchmarkDerivativeCosts): a scalar loss of the halo's nine columns
// now goes forward on cpu-erk, so the auto case's gradient is the
// forward sensitivities' (equal to the reverse replay's to 1e-12, the
// exact derivative of the same discrete map computed the other way).
var rebased = map[string]string{
	"grad-halo-dp5-data-shared-auto": "per-engine measured costs in router.Choose: forward mode",
	"app-quintessence":               "pmath exp and log (issue 14)",
	"app-quintessence-check":         "pmath exp and log (issue 14)",
	"app-quintessence-radiation":     "pmath exp and log (issue 14)",
}

// goldenCase is one command line of the corpus. In args, {ex} stands for
// the examples directory, {td} for testdata and {in} for the directory
// of the generated input files (goldenInputs); "--out DIR" is appended.
type goldenCase struct {
	name string
	args []string
}

func gc(name string, args ...string) goldenCase { return goldenCase{name, args} }

// goldenCorpus is the fixed corpus. Every solve and grad names --workers
// 2 (the results do not depend on the worker count; a fixed count keeps
// the runs alike on every machine) and, except solve-lorenz-auto-ref and
// solve-hires-auto, its method; the built-in systems run with --ref 0
// except solve-lorenz-auto-ref, since the reference check writes nothing.
//
// Failing trajectories come from testdata/blowup.ode, y' = sqrt(a)·y²:
// for a < 0 the right-hand side is NaN at t0 and the trajectory stops
// with NonFinite before any step, and robertson with Tsit5 exhausts the
// default budget of 10⁵ steps (MaxStepsReached) with steps far above any
// floor. The corpus has no trajectory that runs into the step-size floor:
// issue 12 measured the floor at the current time instead of the span's
// largest, an intended change, so a blow-up (a > 0 past t = 1/sqrt(a))
// stops with StepUnderflow at another t and after other steps on the
// current code than on a3f84d2; and the y' = -y/1e12 and ROBER-to-1e11
// runs that a3f84d2 failed now succeed. For the same reason the sweeps of
// a run over 4 values, -1, -1/3, 1/3 and 1, and never a = 0, where
// ∂f/∂a = y²/(2·sqrt(a)) is infinite: with --sens a, that trajectory's
// rejections shrink h down to the floor before it stops with NonFinite.
//
// The grid of app-quintessence-radiation (λ up to 1.5) closes the 68%
// interval: on a3f84d2, "quintessence --n 3 --lambda-max 1 --omega-r
// 9e-5" leaves its upper end NaN and fails writing stats.json ("json:
// unsupported value: NaN"), a run that wrote some of its files.
var goldenCorpus = []goldenCase{
	// solve, built-in systems
	gc("solve-lorenz-tsit5", "solve", "--system", "lorenz", "-n", "8", "--ref", "0", "--method", "tsit5", "--workers", "2"),
	gc("solve-lorenz-dp5-saveat", "solve", "--system", "lorenz", "-n", "8", "--ref", "0", "--method", "dp5", "--saveat", "0.25,0.5,1", "--workers", "2"),
	gc("solve-lorenz-vern7-sens", "solve", "--system", "lorenz", "-n", "6", "--ref", "0", "--method", "vern7", "--sens", "all", "--saveat", "0.5", "--workers", "2"),
	gc("solve-lorenz-dp8-sensy0", "solve", "--system", "lorenz", "-n", "6", "--ref", "0", "--method", "dp8", "--sens", "y0", "--saveat", "0,0.5,1", "--workers", "2"),
	gc("solve-lorenz-auto-ref", "solve", "--system", "lorenz", "-n", "6", "--ref", "3", "--workers", "2"),
	gc("solve-vdp-dp8-saveat", "solve", "--system", "vdp", "-n", "4", "--ref", "0", "--method", "dp8", "--saveat", "1,2,3", "--workers", "2"),
	gc("solve-lorenz96-tsit5", "solve", "--system", "lorenz96", "-n", "4", "--ref", "0", "--method", "tsit5", "--saveat", "0.5", "--workers", "2"),
	gc("solve-lorenz96-vern7-sens", "solve", "--system", "lorenz96", "-n", "3", "--ref", "0", "--method", "vern7", "--sens", "F", "--workers", "2"),
	gc("solve-lorenz96-dp8", "solve", "--system", "lorenz96", "-n", "3", "--ref", "0", "--method", "dp8", "--workers", "2"),
	gc("solve-linear-vern7", "solve", "--system", "linear", "-n", "3", "--ref", "0", "--method", "vern7", "--workers", "2"),
	gc("solve-kepler-dp8-sens", "solve", "--system", "kepler", "-n", "4", "--ref", "0", "--method", "dp8", "--sens", "mu", "--saveat", "3.14", "--workers", "2"),
	gc("solve-kepler-dp5-backward", "solve", "--system", "kepler", "-n", "3", "--ref", "0", "--method", "dp5", "--t0", "6.283185307179586", "--t1", "0", "--saveat", "4,2", "--workers", "2"),
	gc("solve-halo-vern7-sens", "solve", "--system", "halo", "-n", "4", "--ref", "0", "--method", "vern7", "--sens", "vc,q", "--saveat", "10", "--workers", "2"),
	gc("solve-halo-tsit5-sens", "solve", "--system", "halo", "-n", "4", "--ref", "0", "--method", "tsit5", "--sens", "all", "--workers", "2"),
	gc("solve-robertson-rodas5p", "solve", "--system", "robertson", "-n", "3", "--ref", "0", "--method", "rodas5p", "--saveat", "1,100,1e4", "--workers", "2"),
	gc("solve-hires-auto", "solve", "--system", "hires", "-n", "2", "--ref", "0", "--workers", "2"),
	gc("solve-vdpstiff-rosenbrock23-dense", "solve", "--system", "vdp_stiff", "-n", "3", "--ref", "0", "--method", "rosenbrock23", "--dense", "--saveat", "0.5,1,1.5", "--workers", "2"),
	gc("solve-linearstiff-rodas5p-dense", "solve", "--system", "linear_stiff", "-n", "2", "--ref", "0", "--method", "rodas5p", "--dense", "--saveat", "0.25,0.75", "--workers", "2"),

	// solve, problem files
	gc("solve-file-lorenz-tsit5-sweep", "solve", "{ex}/lorenz.ode", "-n", "6", "--param", "rho=0:28", "--method", "tsit5", "--saveat", "0.5,1", "--workers", "2"),
	gc("solve-file-lorenz-dp5-params-file", "solve", "{ex}/lorenz.ode", "--params", "{in}/lorenz_params.npy", "--method", "dp5", "--sens", "all", "--workers", "2"),
	gc("solve-file-lorenz-vern7-files", "solve", "{ex}/lorenz.ode", "--y0", "{in}/lorenz_y0.npy", "--t1", "{in}/lorenz_t1.npy", "--saveat", "{in}/lorenz_saveat_nk.npy", "--method", "vern7", "--sens", "y0", "--workers", "2"),
	gc("solve-file-lorenz-dp8-t0-file", "solve", "{ex}/lorenz.ode", "--t0", "{in}/lorenz_t0.npy", "--y0", "{in}/lorenz_y0_shared.npy", "--saveat", "{in}/lorenz_saveat_k.npy", "--method", "dp8", "--workers", "2"),
	gc("solve-file-lorenz-rodas5p-backward-dense", "solve", "{ex}/lorenz.ode", "-n", "3", "--param", "rho=10:28", "--t0", "1", "--t1", "0", "--method", "rodas5p", "--dense", "--saveat", "0.5,0.25", "--workers", "2"),
	gc("solve-file-halo-vern7-sens", "solve", "{ex}/halo.ode", "-n", "4", "--param", "q=0.6:0.9", "--method", "vern7", "--sens", "all", "--saveat", "5,10", "--workers", "2"),
	gc("solve-file-halo-dp8-files-sens", "solve", "{ex}/halo.ode", "--params", "{in}/halo_params.npy", "--y0", "{in}/halo_y0.npy", "--method", "dp8", "--sens", "q,y0.x", "--workers", "2"),
	gc("solve-file-halo-tsit5-backward", "solve", "{ex}/halo.ode", "-n", "3", "--param", "vc=0.9:1.1", "--t0", "20", "--t1", "0", "--method", "tsit5", "--saveat", "15,5", "--workers", "2"),
	gc("solve-file-robertson-rodas5p-sens", "solve", "{ex}/robertson.ode", "-n", "3", "--param", "k1=0.02:0.06", "--method", "rodas5p", "--sens", "all", "--saveat", "1,10,100", "--workers", "2"),
	gc("solve-file-robertson-rodas5p-dense", "solve", "{ex}/robertson.ode", "-n", "3", "--param", "k1=0.02:0.06", "--method", "rodas5p", "--dense", "--saveat", "1,10,100,1000,1e4", "--workers", "2"),
	gc("solve-file-robertson-rosenbrock23-dense-sens", "solve", "{ex}/robertson.ode", "-n", "2", "--param", "k3=5e3:1e4", "--method", "rosenbrock23", "--dense", "--saveat", "1,10", "--sens", "k1", "--workers", "2"),
	gc("solve-file-robertson-tsit5-maxsteps", "solve", "{ex}/robertson.ode", "-n", "2", "--method", "tsit5", "--workers", "2"),
	gc("solve-file-hires-rodas5p-sensy0", "solve", "{ex}/hires.ode", "-n", "2", "--method", "rodas5p", "--sens", "y0", "--saveat", "1,100", "--workers", "2"),
	gc("solve-file-hires-rosenbrock23", "solve", "{ex}/hires.ode", "-n", "1", "--method", "rosenbrock23", "--saveat", "10,300", "--workers", "2"),
	gc("solve-file-vdp-dp8-backward", "solve", "{ex}/vanderpol.ode", "-n", "3", "--param", "mu=0.5:2", "--t0", "6.3", "--t1", "0", "--method", "dp8", "--saveat", "5,3,1", "--workers", "2"),
	gc("solve-file-vdp-dp5-sens", "solve", "{ex}/vanderpol.ode", "-n", "3", "--param", "mu=0.5:2", "--method", "dp5", "--sens", "mu", "--workers", "2"),
	gc("solve-file-kepler-dp8-sensy0", "solve", "{ex}/kepler.ode", "-n", "2", "--param", "mu=0.8:1.2", "--method", "dp8", "--sens", "y0", "--saveat", "3.141592653589793", "--workers", "2"),
	gc("solve-file-kepler-tsit5-loose", "solve", "{ex}/kepler.ode", "-n", "2", "--param", "mu=0.5:2", "--method", "tsit5", "--rtol", "1e-6", "--atol", "1e-9", "--workers", "2"),
	gc("solve-file-blowup-tsit5-fail", "solve", "{td}/blowup.ode", "-n", "4", "--param", "a=-1:1", "--t1", "0.9", "--method", "tsit5", "--saveat", "0.3,0.6", "--workers", "2"),
	gc("solve-file-blowup-rodas5p-fail-sens", "solve", "{td}/blowup.ode", "-n", "4", "--param", "a=-1:1", "--t1", "0.9", "--method", "rodas5p", "--sens", "a", "--saveat", "0.3,0.6", "--workers", "2"),
	gc("solve-file-blowup-rosenbrock23-fail-dense", "solve", "{td}/blowup.ode", "-n", "4", "--param", "a=-1:1", "--t1", "0.9", "--method", "rosenbrock23", "--dense", "--saveat", "0.3,0.6", "--workers", "2"),

	// grad
	gc("grad-lorenz-tsit5-sumsq-reverse", "grad", "{ex}/lorenz.ode", "-n", "5", "--param", "rho=0:21", "--loss", "sumsq", "--mode", "reverse", "--method", "tsit5", "--workers", "2"),
	gc("grad-lorenz-tsit5-sumsq-forward", "grad", "{ex}/lorenz.ode", "-n", "5", "--param", "rho=0:21", "--loss", "sumsq", "--mode", "forward", "--method", "tsit5", "--workers", "2"),
	gc("grad-lorenz-dp8-data-reverse", "grad", "{ex}/lorenz.ode", "-n", "5", "--param", "rho=0:21", "--data", "{in}/lorenz_data.npy", "--mode", "reverse", "--method", "dp8", "--workers", "2"),
	gc("grad-lorenz-dp8-data-forward", "grad", "{ex}/lorenz.ode", "-n", "5", "--param", "rho=0:21", "--data", "{in}/lorenz_data.npy", "--mode", "forward", "--method", "dp8", "--workers", "2"),
	gc("grad-lorenz-dp5-files-reverse", "grad", "{ex}/lorenz.ode", "--params", "{in}/lorenz_params.npy", "--y0", "{in}/lorenz_y0.npy", "--t1", "{in}/lorenz_t1.npy", "--loss", "sumsq", "--mode", "reverse", "--method", "dp5", "--workers", "2"),
	gc("grad-halo-vern7-cot-reverse", "grad", "{ex}/halo.ode", "-n", "4", "--param", "q=0.6:0.9", "--cot", "{in}/halo_cot.npy", "--mode", "reverse", "--method", "vern7", "--workers", "2"),
	gc("grad-halo-vern7-cot-forward", "grad", "{ex}/halo.ode", "-n", "4", "--param", "q=0.6:0.9", "--cot", "{in}/halo_cot.npy", "--mode", "forward", "--method", "vern7", "--workers", "2"),
	gc("grad-halo-dp5-data-shared-auto", "grad", "{ex}/halo.ode", "-n", "4", "--param", "q=0.6:0.9", "--data", "{in}/halo_data_shared.npy", "--mode", "auto", "--method", "dp5", "--workers", "2"),
	gc("grad-robertson-rodas5p-sumsq-reverse", "grad", "{ex}/robertson.ode", "-n", "3", "--param", "k1=0.02:0.06", "--loss", "sumsq", "--mode", "reverse", "--method", "rodas5p", "--workers", "2"),
	gc("grad-robertson-rodas5p-sumsq-forward", "grad", "{ex}/robertson.ode", "-n", "3", "--param", "k1=0.02:0.06", "--loss", "sumsq", "--mode", "forward", "--method", "rodas5p", "--workers", "2"),
	gc("grad-robertson-rosenbrock23-cot-reverse", "grad", "{ex}/robertson.ode", "-n", "3", "--param", "k1=0.02:0.06", "--cot", "{in}/robertson_cot.npy", "--mode", "reverse", "--method", "rosenbrock23", "--workers", "2"),
	gc("grad-robertson-rosenbrock23-cot-forward", "grad", "{ex}/robertson.ode", "-n", "3", "--param", "k1=0.02:0.06", "--cot", "{in}/robertson_cot.npy", "--mode", "forward", "--method", "rosenbrock23", "--workers", "2"),
	gc("grad-robertson-rodas5p-dense-saveat-reverse", "grad", "{ex}/robertson.ode", "-n", "3", "--param", "k1=0.02:0.06", "--loss", "sumsq", "--mode", "reverse", "--method", "rodas5p", "--dense", "--saveat", "1,10", "--workers", "2"),
	gc("grad-hires-rodas5p-data-forward", "grad", "{ex}/hires.ode", "-n", "2", "--data", "{in}/hires_data.npy", "--mode", "forward", "--method", "rodas5p", "--workers", "2"),
	gc("grad-vdp-vern7-backward-reverse", "grad", "{ex}/vanderpol.ode", "-n", "3", "--param", "mu=0.5:2", "--t0", "6.3", "--t1", "0", "--loss", "sumsq", "--mode", "reverse", "--method", "vern7", "--workers", "2"),
	gc("grad-vdp-vern7-backward-forward", "grad", "{ex}/vanderpol.ode", "-n", "3", "--param", "mu=0.5:2", "--t0", "6.3", "--t1", "0", "--loss", "sumsq", "--mode", "forward", "--method", "vern7", "--workers", "2"),
	gc("grad-kepler-builtin-dp5-reverse", "grad", "--system", "kepler", "-n", "3", "--loss", "sumsq", "--mode", "reverse", "--method", "dp5", "--workers", "2"),
	gc("grad-halo-builtin-tsit5-forward", "grad", "--system", "halo", "-n", "3", "--loss", "sumsq", "--mode", "forward", "--method", "tsit5", "--workers", "2"),
	gc("grad-blowup-tsit5-fail-reverse", "grad", "{td}/blowup.ode", "-n", "4", "--param", "a=-1:1", "--t1", "0.9", "--loss", "sumsq", "--mode", "reverse", "--method", "tsit5", "--workers", "2"),

	// the applications
	gc("app-halo", "halo", "--n", "50", "--workers", "2"),
	gc("app-halo-dp8-check", "halo", "--n", "30", "--seed", "2", "--method", "dp8", "--check", "--workers", "2"),
	gc("app-precession-check", "precession", "--n", "20", "--check", "--workers", "2"),
	gc("app-precession-tsit5", "precession", "--n", "10", "--seed", "3", "--method", "tsit5", "--workers", "2"),
	gc("app-quintessence", "quintessence", "--n", "3"),
	gc("app-quintessence-check", "quintessence", "--n", "5", "--check"),
	gc("app-quintessence-radiation", "quintessence", "--n", "4", "--lambda-max", "1.5", "--omega-r", "9e-5"),
}

// goldenInputs returns the input files of the corpus by name: shape and
// float64 data in C order, from fixed formulas.
func goldenInputs() map[string]struct {
	shape []int
	data  []float64
} {
	type arr = struct {
		shape []int
		data  []float64
	}
	in := map[string]arr{}
	fill := func(name string, shape []int, f func(i, j int) float64) {
		cols := 1
		if len(shape) > 1 {
			cols = shape[1]
		}
		data := make([]float64, shape[0]*cols)
		for i := range shape[0] {
			for j := range cols {
				data[i*cols+j] = f(i, j)
			}
		}
		in[name] = arr{shape, data}
	}
	fi := func(i int) float64 { return float64(i) }
	// lorenz.ode: parameters (rho, sigma, beta), states (x, y, z)
	fill("lorenz_params.npy", []int{6, 3}, func(i, j int) float64 {
		return [3]float64{2 + 5*fi(i), 10 - 0.5*fi(i), 8.0/3 + 0.25*fi(i)}[j]
	})
	fill("lorenz_y0.npy", []int{6, 3}, func(i, j int) float64 {
		return [3]float64{1 + 0.1*fi(i), 0.5 - 0.2*fi(i), 0.25 * fi(i)}[j]
	})
	fill("lorenz_y0_shared.npy", []int{3}, func(_, j int) float64 { return 0.5 * fi(j+1) })
	fill("lorenz_t0.npy", []int{6}, func(i, _ int) float64 { return 0.05 * fi(i) })
	fill("lorenz_t1.npy", []int{6}, func(i, _ int) float64 { return 0.5 + 0.1*fi(i) })
	fill("lorenz_saveat_k.npy", []int{4}, func(i, _ int) float64 { return 0.3 + 0.1*fi(i) })
	fill("lorenz_saveat_nk.npy", []int{6, 3}, func(i, j int) float64 { return (0.1 + 0.01*fi(i)) * fi(j+1) })
	fill("lorenz_data.npy", []int{5, 3}, func(i, j int) float64 { return fi(i) - 2*fi(j) + 0.5 })
	// halo.ode: parameters (vc, q, rc), states (x, y, z, vx, vy, vz)
	fill("halo_params.npy", []int{4, 3}, func(i, j int) float64 {
		return [3]float64{1 - 0.05*fi(i), 0.6 + 0.1*fi(i), 0.2}[j]
	})
	fill("halo_y0.npy", []int{4, 6}, func(i, j int) float64 {
		return [6]float64{1 + 0.1*fi(i), 0, 0.2, 0.1, 0.6 - 0.05*fi(i), 0.15}[j]
	})
	fill("halo_cot.npy", []int{4, 6}, func(i, j int) float64 { return 1 / (1 + fi(i) + fi(j)) })
	fill("halo_data_shared.npy", []int{6}, func(_, j int) float64 { return 0.1 * fi(j) })
	// robertson.ode (3 states) and hires.ode (8 states)
	fill("robertson_cot.npy", []int{3, 3}, func(i, j int) float64 { return fi(j+1) * (1 + 0.5*fi(i)) })
	fill("hires_data.npy", []int{2, 8}, func(i, j int) float64 { return 1e-3 * fi(i+j) })
	return in
}

// writeGoldenInputs writes goldenInputs into dir as .npy files, with a
// writer of its own (the format's version 1.0, as np.save writes it), so
// that the inputs do not change with the npy package under test.
func writeGoldenInputs(dir string) error {
	for name, a := range goldenInputs() {
		parts := make([]string, len(a.shape))
		for i, d := range a.shape {
			parts[i] = strconv.Itoa(d)
		}
		shape := "(" + strings.Join(parts, ", ")
		if len(parts) == 1 {
			shape += ","
		}
		shape += ")"
		header := "{'descr': '<f8', 'fortran_order': False, 'shape': " + shape + ", }"
		pad := 64 - (10+len(header)+1)%64
		header += strings.Repeat(" ", pad%64) + "\n"
		var b bytes.Buffer
		b.WriteString("\x93NUMPY\x01\x00")
		binary.Write(&b, binary.LittleEndian, uint16(len(header)))
		b.WriteString(header)
		for _, v := range a.data {
			binary.Write(&b, binary.LittleEndian, math.Float64bits(v))
		}
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// expand replaces the placeholders of a corpus command line and appends
// --out.
func (c goldenCase) expand(inDir, outDir string) []string {
	r := strings.NewReplacer("{ex}", filepath.Join("..", "..", "examples"), "{td}", "testdata", "{in}", inDir)
	args := make([]string, 0, len(c.args)+2)
	for _, a := range c.args {
		args = append(args, r.Replace(a))
	}
	return append(args, "--out", outDir)
}

// goldenRun is one run of a corpus case: the outputs' digests by key
// (see digestDir) and what the command printed.
type goldenRun struct {
	digests map[string]string
	dir     string
	output  string
}

// runCurrent runs the case with the code under test, in process.
func runCurrent(c goldenCase, inDir, outDir string) (goldenRun, error) {
	var out bytes.Buffer
	err := run(context.Background(), c.expand(inDir, outDir), &out, &out)
	if err != nil {
		fmt.Fprintf(&out, "error: %v\n", err)
	}
	return digestRun(outDir, err == nil, out.String())
}

// runBinary runs the case with the binary bin, in this package's
// directory (the corpus's relative paths start there).
func runBinary(bin string, c goldenCase, inDir, outDir string) (goldenRun, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, c.expand(inDir, outDir)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return goldenRun{}, fmt.Errorf("%s: %v", bin, err)
	}
	return digestRun(outDir, err == nil, out.String())
}

func digestRun(dir string, ok bool, output string) (goldenRun, error) {
	d, err := digestDir(dir)
	if err != nil {
		return goldenRun{}, err
	}
	d["exit"] = "error"
	if ok {
		d["exit"] = "ok"
	}
	return goldenRun{digests: d, dir: dir, output: output}, nil
}

// digestDir returns the digests of the files in an output directory, by
// key: "FILE" for a file (.npy: "npy DTYPE SHAPE sha256:HEX" of its data;
// any other: "file sha256:HEX" of all of it), and "stats.json:KEY" for
// each deterministic number of stats.json (goldenStats). Hidden files
// (a commit's manifest) are no output. A directory that does not exist
// (a command that failed before writing) has no files.
func digestDir(dir string) (map[string]string, error) {
	d := map[string]string{}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return d, nil
	}
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		switch {
		case name == "stats.json":
			stats, err := goldenStats(b)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", filepath.Join(dir, name), err)
			}
			for k, v := range stats {
				d["stats.json:"+k] = v
			}
		case strings.HasSuffix(name, ".npy"):
			a, err := parseNpy(b)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", filepath.Join(dir, name), err)
			}
			d[name] = a.digest()
		default:
			sum := sha256.Sum256(b)
			d[name] = "file sha256:" + hex.EncodeToString(sum[:])
		}
	}
	return d, nil
}

// goldenStats returns the deterministic values of a stats.json, each as
// compact JSON: every top-level value that is a number, a bool, or an
// array or object of numbers (the statuses, the 68% interval), except
// timings ("*_seconds"), "workers" and "status_codes" (the table of
// status numbers, which grows when a status is added without any result
// changing). Text (names, messages, the router's reasons) is left out:
// its wording is not a result.
func goldenStats(b []byte) (map[string]string, error) {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	numeric := func(v any) bool {
		switch v := v.(type) {
		case float64, bool:
			return true
		case []any:
			for _, x := range v {
				if _, ok := x.(float64); !ok {
					return false
				}
			}
			return true
		case map[string]any:
			for _, x := range v {
				if _, ok := x.(float64); !ok {
					return false
				}
			}
			return true
		}
		return false
	}
	out := map[string]string{}
	for k, v := range m {
		if strings.HasSuffix(k, "_seconds") || k == "workers" || k == "status_codes" || !numeric(v) {
			continue
		}
		j, err := json.Marshal(v) // maps with sorted keys, numbers in shortest form
		if err != nil {
			return nil, err
		}
		out[k] = string(j)
	}
	return out, nil
}

// npyArray is a parsed .npy file.
type npyArray struct {
	descr string
	shape []int
	data  []byte
}

var (
	npyDescr = regexp.MustCompile(`'descr':\s*'([^']*)'`)
	npyOrder = regexp.MustCompile(`'fortran_order':\s*(True|False)`)
	npyShape = regexp.MustCompile(`'shape':\s*\(([^)]*)\)`)
)

// parseNpy parses a .npy file of any version (header layout aside) with
// a C-order array, by itself, so that the digests do not depend on the
// npy package under test.
func parseNpy(b []byte) (npyArray, error) {
	if len(b) < 10 || string(b[:6]) != "\x93NUMPY" {
		return npyArray{}, fmt.Errorf("not a .npy file")
	}
	var hlen, start int
	switch b[6] {
	case 1:
		hlen, start = int(binary.LittleEndian.Uint16(b[8:10])), 10
	case 2, 3:
		if len(b) < 12 {
			return npyArray{}, fmt.Errorf("short .npy header")
		}
		hlen, start = int(binary.LittleEndian.Uint32(b[8:12])), 12
	default:
		return npyArray{}, fmt.Errorf(".npy version %d", b[6])
	}
	if start+hlen > len(b) {
		return npyArray{}, fmt.Errorf("short .npy header")
	}
	h := string(b[start : start+hlen])
	descr, order, shape := npyDescr.FindStringSubmatch(h), npyOrder.FindStringSubmatch(h), npyShape.FindStringSubmatch(h)
	if descr == nil || order == nil || shape == nil {
		return npyArray{}, fmt.Errorf(".npy header %q", h)
	}
	if order[1] != "False" {
		return npyArray{}, fmt.Errorf(".npy file in Fortran order")
	}
	a := npyArray{descr: descr[1], data: b[start+hlen:]}
	for _, s := range strings.Split(shape[1], ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		d, err := strconv.Atoi(s)
		if err != nil {
			return npyArray{}, fmt.Errorf(".npy shape %q", shape[1])
		}
		a.shape = append(a.shape, d)
	}
	return a, nil
}

// digest is "npy DTYPE SHAPE sha256:HEX", the hash of the data with
// every NaN of a float64 array replaced by one NaN.
func (a npyArray) digest() string {
	data := a.data
	if a.descr == "<f8" {
		data = slices.Clone(data)
		for i := 0; i+8 <= len(data); i += 8 {
			if math.IsNaN(math.Float64frombits(binary.LittleEndian.Uint64(data[i:]))) {
				binary.LittleEndian.PutUint64(data[i:], math.Float64bits(math.NaN()))
			}
		}
	}
	dims := make([]string, len(a.shape))
	for i, d := range a.shape {
		dims[i] = strconv.Itoa(d)
	}
	sum := sha256.Sum256(data)
	return fmt.Sprintf("npy %s (%s) sha256:%s", a.descr, strings.Join(dims, ","), hex.EncodeToString(sum[:]))
}

// values returns the array's numbers as float64 (float64 and the
// integer types the command writes), or false for another dtype.
func (a npyArray) values() ([]float64, bool) {
	var size int
	var get func([]byte) float64
	switch a.descr {
	case "<f8":
		size, get = 8, func(b []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b)) }
	case "<i4":
		size, get = 4, func(b []byte) float64 { return float64(int32(binary.LittleEndian.Uint32(b))) }
	case "<i8":
		size, get = 8, func(b []byte) float64 { return float64(int64(binary.LittleEndian.Uint64(b))) }
	case "|i1":
		size, get = 1, func(b []byte) float64 { return float64(int8(b[0])) }
	default:
		return nil, false
	}
	v := make([]float64, len(a.data)/size)
	for i := range v {
		v[i] = get(a.data[i*size:])
	}
	return v, true
}

// readGolden reads the golden file: case → key → digest. Lines are
// "CASE KEY DIGEST…"; # starts a comment.
func readGolden(path string) (map[string]map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	g := map[string]map[string]string{}
	for i, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.SplitN(line, " ", 3)
		if len(f) != 3 {
			return nil, fmt.Errorf("%s:%d: want CASE KEY DIGEST, got %q", path, i+1, line)
		}
		if g[f[0]] == nil {
			g[f[0]] = map[string]string{}
		}
		g[f[0]][f[1]] = f[2]
	}
	return g, nil
}

// writeGolden writes the golden file from the runs of bin, in corpus
// order and, within a case, by key.
func writeGolden(path, bin string, runs map[string]goldenRun) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Golden outputs of the gradsolve command (cmd/gradsolve/golden_test.go), written by\n")
	if path == rebasedFile {
		fmt.Fprintf(&b, "#   go test ./cmd/gradsolve -run TestGolden -golden-bin %s -rebase\n", bin)
		fmt.Fprintf(&b, "# with a binary of commit %s: the cases whose outputs changed on purpose (see rebased).\n", *goldenCommit)
	} else {
		fmt.Fprintf(&b, "#   go test ./cmd/gradsolve -run TestGolden -golden-bin %s -update\n", bin)
		fmt.Fprintf(&b, "# with a binary of commit a3f84d2.\n")
	}
	fmt.Fprintf(&b, "# Lines: CASE KEY DIGEST; KEY is exit, a file, or stats.json:FIELD.\n")
	for _, c := range goldenCorpus {
		if _, ok := runs[c.name]; !ok {
			continue
		}
		d := runs[c.name].digests
		for _, k := range slices.Sorted(maps.Keys(d)) {
			fmt.Fprintf(&b, "%s %s %s\n", c.name, k, d[k])
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// TestGolden compares every output of the corpus with testdata/golden.txt
// (see the comment at the top of this file).
func TestGolden(t *testing.T) {
	if *goldenUpdate && *goldenBin == "" {
		t.Fatal("-update needs -golden-bin: the golden file is written from a binary of commit a3f84d2, never from the code under test")
	}
	bin := *goldenBin
	if bin != "" {
		var err error
		if bin, err = filepath.Abs(bin); err != nil {
			t.Fatal(err)
		}
	}
	root := t.TempDir()
	inDir := filepath.Join(root, "in")
	if err := os.Mkdir(inDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeGoldenInputs(inDir); err != nil {
		t.Fatal(err)
	}

	seen := map[string]bool{}
	for _, c := range goldenCorpus {
		if seen[c.name] || strings.ContainsAny(c.name, " \t") {
			t.Fatalf("corpus case %q: the names must be unique and without spaces", c.name)
		}
		seen[c.name] = true
	}

	if *goldenRebase && (*goldenBin == "" || *goldenCommit == "") {
		t.Fatal("-rebase needs -golden-bin and -golden-commit: the rebased cases are written from a binary of the commit that changed them")
	}
	if *goldenUpdate || *goldenRebase {
		path := goldenFile
		if *goldenRebase {
			path = rebasedFile
		}
		runs := map[string]goldenRun{}
		for _, c := range goldenCorpus {
			if _, ok := rebased[c.name]; *goldenRebase && !ok {
				continue
			}
			r, err := runBinary(bin, c, inDir, filepath.Join(root, "bin", c.name))
			if err != nil {
				t.Fatal(err)
			}
			runs[c.name] = r
		}
		if err := writeGolden(path, *goldenBin, runs); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s from %s: %d cases", path, bin, len(runs))
		return
	}

	golden, err := readGolden(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	for name := range golden {
		if !seen[name] {
			t.Errorf("%s has case %q, which the corpus does not: regenerate it (see golden_test.go)", goldenFile, name)
		}
	}
	rebasedGolden, err := readGolden(rebasedFile)
	if err != nil {
		t.Fatal(err)
	}
	for name := range rebased {
		if !seen[name] || rebasedGolden[name] == nil {
			t.Errorf("rebased case %q: not in the corpus, or not in %s (see golden_test.go)", name, rebasedFile)
		}
	}
	for name := range rebasedGolden {
		if _, ok := rebased[name]; !ok {
			t.Errorf("%s has case %q, which is not rebased", rebasedFile, name)
		}
	}
	for _, c := range goldenCorpus {
		t.Run(c.name, func(t *testing.T) {
			want, ok := golden[c.name]
			file := goldenFile
			if _, r := rebased[c.name]; r {
				want, file = rebasedGolden[c.name], rebasedFile
				if bin != "" {
					t.Skip("a rebased case: a3f84d2's outputs differ on purpose (see rebased)")
				}
			}
			if !ok {
				t.Fatalf("no golden outputs: regenerate %s (see golden_test.go)", file)
			}
			got, err := runCurrent(c, inDir, filepath.Join(root, "cur", c.name))
			if err != nil {
				t.Fatal(err)
			}
			var ref *goldenRun
			if bin != "" {
				r, err := runBinary(bin, c, inDir, filepath.Join(root, "bin", c.name))
				if err != nil {
					t.Fatal(err)
				}
				if diff := compareDigests(r.digests, want); len(diff) > 0 {
					t.Errorf("%s does not reproduce %s:\n\t%s", bin, goldenFile, strings.Join(diff, "\n\t"))
				}
				ref = &r
			}
			diff := compareDigests(got.digests, want)
			if len(diff) == 0 {
				return
			}
			if ref != nil {
				diff = append(diff, explainDiff(got, *ref)...)
			} else {
				diff = append(diff, "(run with -golden-bin and a binary of a3f84d2 for the values)")
			}
			t.Errorf("gradsolve %s\noutputs differ from %s:\n\t%s\noutput of the current code:\n%s",
				strings.Join(c.args, " "), file, strings.Join(diff, "\n\t"), got.output)
		})
	}
}

// compareDigests returns a line for each golden key whose digest got
// does not have. Keys only got has (files or fields a3f84d2 did not
// write) are not compared.
func compareDigests(got, want map[string]string) []string {
	var diff []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		g, ok := got[k]
		switch {
		case !ok:
			diff = append(diff, fmt.Sprintf("%s: missing (want %s)", k, want[k]))
		case g != want[k]:
			diff = append(diff, fmt.Sprintf("%s: %s, want %s", k, g, want[k]))
		}
	}
	return diff
}

// explainDiff compares the arrays of two runs of a case value by value,
// with testutil, for every .npy file they both wrote that differs.
func explainDiff(got, ref goldenRun) []string {
	var lines []string
	for _, k := range slices.Sorted(maps.Keys(ref.digests)) {
		if !strings.HasSuffix(k, ".npy") || got.digests[k] == "" || got.digests[k] == ref.digests[k] {
			continue
		}
		ga, err1 := readNpyFile(filepath.Join(got.dir, k))
		ra, err2 := readNpyFile(filepath.Join(ref.dir, k))
		if err := errors.Join(err1, err2); err != nil {
			lines = append(lines, fmt.Sprintf("%s: %v", k, err))
			continue
		}
		gv, ok1 := ga.values()
		rv, ok2 := ra.values()
		if !ok1 || !ok2 {
			lines = append(lines, fmt.Sprintf("%s: dtype %s against %s", k, ga.descr, ra.descr))
			continue
		}
		// Relative error with a floor of 1e-300: values of rounding size
		// next to zero still show as large, which is what a bitwise test
		// wants to see.
		r := testutil.DiffReport(k+" (shape "+fmt.Sprint(ra.shape)+")", gv, rv, 1e-300)
		if i := testutil.FirstDiff(gv, rv); i >= 0 && i < len(rv) {
			r += fmt.Sprintf("; first difference at %v", unravel(i, ra.shape))
		}
		lines = append(lines, r)
	}
	return lines
}

func readNpyFile(path string) (npyArray, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return npyArray{}, err
	}
	return parseNpy(b)
}

// unravel returns the multi-index of flat index i in a C-order array of
// the given shape.
func unravel(i int, shape []int) []int {
	idx := make([]int, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] > 0 {
			idx[d] = i % shape[d]
			i /= shape[d]
		}
	}
	return idx
}
