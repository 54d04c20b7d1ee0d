// Command wp measures work-precision curves of gradsolve and its peer
// solvers on the benchmark ensembles of bench/README.md (Lorenz and
// Robertson), one trajectory
// after another on one core, and writes a CSV of the sweep, a
// work-precision diagram (PNG) and a table of time ratios at matched
// achieved error.
//
// Run it through bench/run.sh, which installs and builds the peers:
//
//	bash bench/run.sh            # writes bench/results/wp/
//
// or directly, once the peer drivers are built:
//
//	go run ./bench/wp -peers bench/build -out bench/results/wp
//
// and to redraw the diagrams and tables from the recorded CSVs:
//
//	go run ./bench/wp -from-csv -out bench/results/wp
//
// The achieved error of a run is the median over its trajectories of the
// relative 2-norm error of the final state against a converged reference
// (DP8 at rtol = atol = 1e-13 for Lorenz; Rodas5P at rtol 1e-13, atol
// 1e-17 for Robertson). Ratios are read at
// matched achieved error: each tool's curve is interpolated linearly in
// log–log at the target error, never extrapolated.
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/examples/compiled"
	"github.com/gradsolve/gradsolve/internal/engine/cpu"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/plots"
	"github.com/gradsolve/gradsolve/sym/parse"
	"github.com/gradsolve/gradsolve/sym/tape"
)

// point is one run of one tool at one tolerance.
type point struct {
	Tool       string
	RTol, ATol float64
	N          int
	Seconds    float64 // integration time per trajectory
	Work       float64 // steps (or, for scipy, f-evaluations) per trajectory
	Err        float64 // median relative error of the final state
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "wp:", err)
		os.Exit(1)
	}
}

// solver is one gradsolve configuration of a sweep.
type solver struct {
	name string
	opts func(rtol, atol float64) *gradsolve.Options
}

// explicit is method m on the scalar engine, one trajectory at a time.
func explicit(m *method.Tableau) solver {
	return solver{m.Name, func(rtol, atol float64) *gradsolve.Options {
		return &gradsolve.Options{Method: m, RTol: rtol, ATol: atol, Workers: 1, Engine: "cpu-erk"}
	}}
}

// lanes is each method m on its lane engine (cpu-lanes for explicit
// methods, cpu-ros-lanes for Rosenbrock methods), whose curves are named
// "M lanes"; none where they cannot run here.
func lanes(ms ...method.Method) []solver {
	if cpu.LanesAvailable() != nil {
		return nil
	}
	var out []solver
	for _, m := range ms {
		e := "cpu-lanes"
		if m.Family() == method.RosenbrockFamily {
			e = "cpu-ros-lanes"
		}
		out = append(out, solver{m.MethodName() + " lanes", func(rtol, atol float64) *gradsolve.Options {
			return &gradsolve.Options{Method: m, RTol: rtol, ATol: atol, Workers: 1, Engine: e}
		}})
	}
	return out
}

func rosenbrock(m *method.Rosenbrock) solver {
	return solver{m.Name, func(rtol, atol float64) *gradsolve.Options {
		return &gradsolve.Options{Method: m, RTol: rtol, ATol: atol, Workers: 1, Engine: "cpu-ros"}
	}}
}

// problem is one benchmark ensemble (bench/README.md) and who runs it.
type problem struct {
	name, title string
	// compiled is the problem as the Go code gradsolve gen writes
	// (examples/compiled): the Go route.
	compiled func() *gradsolve.Problem
	file     string // the same problem as a problem file, for the tape route
	// params sets trajectory i of n's parameters by name; every driver
	// computes the same values.
	params func(i, n int) map[string]float64
	t1     float64
	// y0 is trajectory i of n's initial state; nil for (1, 0, 0).
	y0 func(i, n int) []float64
	// dim is the state dimension; 0 means 3.
	dim int
	// sens lists the parameters to differentiate the final state by;
	// with it, the achieved error is that of the sensitivities.
	sens []int
	// atol = atolScale·rtol in the sweep.
	atolScale float64
	rtols     []float64
	// ref is the converged reference's solver and tolerance.
	ref                    solver
	refTol                 float64
	goMethods, fileMethods []solver
	// parallel is run on the Go route with all workers too: ensemble
	// throughput, wall time per trajectory.
	parallel solver
	// peers are the compiled drivers (odeint, cvodes) with their tool
	// names and trajectory counts; scipy the solve_ivp methods.
	peers       []peer
	scipy       []string
	scipyMinTol float64 // scipy runs only at rtol ≥ this (its slow methods take minutes below)
	nGo, nPy    int
	// shown are the gradsolve curves drawn with the peers in the
	// diagram's "all tools" panel: its fastest methods on each route.
	shown []string
}

// peer is one configuration of a compiled driver: its tool name, the
// driver, the driver's method argument (empty for its default) and the
// number of trajectories.
type peer struct {
	tool, bin, method string
	n                 int
}

// odeintExplicit is odeint's explicit configurations: dopri5 with dense
// output (the documentation's recommendation), dopri5 and
// runge_kutta_fehlberg78 under the controlled stepper; suffix ends the
// tool names, n the trajectories.
func odeintExplicit(suffix string, n int) []peer {
	return []peer{
		{"odeint dopri5" + suffix, "odeint", "dopri5", n},
		{"odeint dopri5 controlled" + suffix, "odeint", "dopri5-controlled", n},
		{"odeint rkf78" + suffix, "odeint", "rkf78", n},
	}
}

var problems = []*problem{
	{
		name: "lorenz", title: "Lorenz, t from 0 to 10, ρ from 10 to 24, one core",
		compiled: compiled.LorenzProblem, file: "lorenz.ode",
		params: func(i, n int) map[string]float64 {
			return map[string]float64{"sigma": 10, "rho": 10 + 14*frac(i, n), "beta": 8.0 / 3}
		},
		t1: 10, atolScale: 1e-3, rtols: []float64{1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10},
		ref: explicit(method.DP8), refTol: 1e-13,
		goMethods:   append([]solver{explicit(method.Tsit5), explicit(method.DP5), explicit(method.Vern7), explicit(method.DP8)}, lanes(method.Tsit5, method.Vern7, method.DP8)...),
		fileMethods: append([]solver{explicit(method.Vern7)}, lanes(method.Tsit5, method.Vern7, method.DP8)...),
		parallel:    explicit(method.Vern7),
		peers:       append(odeintExplicit("", 2000), peer{"CVODES Adams", "cvodes", "", 200}),
		scipy:       []string{"RK45", "DOP853", "LSODA"}, scipyMinTol: 1e-8,
		nGo: 2000, nPy: 10,
		shown: []string{"gradsolve Vern7", "gradsolve DP8 lanes", "gradsolve Vern7 (.ode)", "gradsolve Vern7 lanes (.ode)"},
	},
	{
		name: "robertson", title: "Robertson, t from 0 to 1e5, k1 from 0.02 to 0.06, one core",
		compiled: compiled.RobertsonProblem, file: "robertson.ode",
		params: func(i, n int) map[string]float64 {
			return map[string]float64{"k1": 0.02 + 0.04*frac(i, n), "k2": 3e7, "k3": 1e4}
		},
		t1: 1e5, atolScale: 1e-4, rtols: []float64{2e-2, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9},
		ref: rosenbrock(method.Rodas5P), refTol: 1e-13,
		goMethods:   append([]solver{rosenbrock(method.Rodas5P), rosenbrock(method.Rosenbrock23)}, lanes(method.Rodas5P, method.Rosenbrock23)...),
		fileMethods: append([]solver{rosenbrock(method.Rodas5P)}, lanes(method.Rodas5P)...),
		parallel:    rosenbrock(method.Rodas5P),
		peers: []peer{{"odeint rosenbrock4", "odeint", "rosenbrock4", 500},
			{"odeint rosenbrock4 controlled", "odeint", "rosenbrock4-controlled", 500}, {"CVODES BDF", "cvodes", "", 500}},
		scipy: []string{"Radau", "BDF", "LSODA"}, scipyMinTol: 1e-8,
		nGo: 500, nPy: 5,
		shown: []string{"gradsolve Rodas5P", "gradsolve Rodas5P lanes", "gradsolve Rodas5P (.ode)", "gradsolve Rodas5P lanes (.ode)"},
	},
	{
		name: "orbit", title: "Halo orbits, t from 0 to 20, one core",
		compiled: compiled.HaloProblem, file: "halo.ode", dim: 6,
		params: func(i, n int) map[string]float64 {
			return map[string]float64{"vc": 1, "q": 0.7, "rc": 0.2}
		},
		y0: func(i, n int) []float64 {
			u := frac(i, n)
			return []float64{0.5 + u, 0, 0.2, 0.1, 0.5 + 0.2*u, 0.15}
		},
		t1: 20, atolScale: 1, rtols: []float64{1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11},
		ref: explicit(method.DP8), refTol: 1e-13,
		goMethods:   append([]solver{explicit(method.Tsit5), explicit(method.DP5), explicit(method.Vern7), explicit(method.DP8)}, lanes(method.Tsit5, method.Vern7, method.DP8)...),
		fileMethods: append([]solver{explicit(method.Vern7)}, lanes(method.Tsit5, method.Vern7, method.DP8)...),
		parallel:    explicit(method.DP8),
		peers:       append(odeintExplicit("", 2000), peer{"CVODES Adams", "cvodes", "", 200}),
		scipy:       []string{"RK45", "DOP853"}, scipyMinTol: 1e-10,
		nGo: 2000, nPy: 10,
		shown: []string{"gradsolve DP8", "gradsolve DP8 lanes", "gradsolve Vern7 (.ode)", "gradsolve DP8 lanes (.ode)"},
	},
	{
		name: "halo", title: "Halo orbits with sensitivities to (vc, q), t from 0 to 20, one core",
		compiled: compiled.HaloProblem, file: "halo.ode",
		params: func(i, n int) map[string]float64 {
			return map[string]float64{"vc": 1, "q": 0.7, "rc": 0.2}
		},
		y0: func(i, n int) []float64 {
			u := frac(i, n)
			return []float64{0.5 + u, 0, 0.2, 0.1, 0.5 + 0.2*u, 0.15}
		},
		sens: []int{0, 1},
		t1:   20, atolScale: 1, rtols: []float64{1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10},
		ref: explicit(method.DP8), refTol: 1e-13,
		goMethods:   append([]solver{explicit(method.Tsit5), explicit(method.Vern7), explicit(method.DP8)}, lanes(method.Vern7, method.DP8)...),
		fileMethods: append([]solver{explicit(method.Vern7)}, lanes(method.Vern7, method.DP8)...),
		parallel:    explicit(method.Vern7),
		peers:       append(odeintExplicit(" (augmented)", 1000), peer{"CVODES Adams (staggered)", "cvodes", "", 100}),
		nGo:         1000,
		shown:       []string{"gradsolve Vern7", "gradsolve DP8", "gradsolve Vern7 (.ode)", "gradsolve Vern7 lanes (.ode)"},
	},
}

// width is the number of values per trajectory the drivers write: the
// final state, then with sensitivities the Dim×len(sens) matrix
// ∂y_d/∂p_c row-major; from is where the compared values start.
func (pb *problem) width() (width, from int) {
	if pb.sens == nil {
		return max(pb.dim, 3), 0
	}
	return 6 + 6*len(pb.sens), 6
}

// frac is i/(n−1), and 0 for n = 1: the position of trajectory i in its
// ensemble's parameter range.
func frac(i, n int) float64 {
	if n == 1 {
		return 0
	}
	return float64(i) / float64(n-1)
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("wp", flag.ContinueOnError)
	peers := fs.String("peers", "bench/build", "directory holding the built peer drivers (odeint, cvodes); empty for gradsolve only")
	python := fs.String("python", "/usr/bin/python3", "Python with numpy and scipy for the scipy driver; empty to skip scipy")
	out := fs.String("out", "bench/results/wp", "output directory")
	quick := fs.Bool("quick", false, "fewer tolerances and trajectories (a smoke test, not for the record)")
	only := fs.String("problem", "", "run only this problem (lorenz, robertson, orbit, halo)")
	from := fs.Bool("from-csv", false, "redraw the diagrams and tables from the CSVs in -out, measuring nothing")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	found := false
	for _, pb := range problems {
		if *only != "" && pb.name != *only {
			continue
		}
		found = true
		csv := filepath.Join(*out, pb.name+".csv")
		var pts []point
		var err error
		if *from {
			pts, err = readCSV(csv)
		} else {
			pts, err = measure(pb, *peers, *python, *out, *quick)
			if err == nil {
				err = writeCSV(csv, pts)
			}
		}
		if err != nil {
			return fmt.Errorf("%s: %w", pb.name, err)
		}
		fmt.Fprintf(stdout, "\n%s\n", pb.title)
		if err := report(stdout, *out, pb, pts); err != nil {
			return err
		}
	}
	if !found {
		return fmt.Errorf("no problem %q", *only)
	}
	return nil
}

// measure runs the sweep of one problem.
func measure(pb *problem, peers, python, out string, quick bool) ([]point, error) {
	rtols, nGo, nPy := pb.rtols, pb.nGo, pb.nPy
	scale := 1
	if quick {
		rtols = []float64{rtols[1], rtols[3], rtols[5]}
		scale = 10
		nGo, nPy = max(1, nGo/scale), max(1, nPy/3)
	}
	refs := map[int][]float64{}
	ref := func(n int) ([]float64, error) {
		if r, ok := refs[n]; ok {
			return r, nil
		}
		r, err := solve(pb, pb.compiled(), n, pb.ref.opts(pb.refTol, pb.refTol*pb.atolScale))
		if err != nil {
			return nil, fmt.Errorf("reference: %w", err)
		}
		refs[n] = outputs(pb, r)
		return refs[n], nil
	}
	file, err := fromFile(pb.file)
	if err != nil {
		return nil, err
	}
	var pts []point
	add := func(p point, y []float64) error {
		r, err := ref(p.N)
		if err != nil {
			return err
		}
		w, from := pb.width()
		if p.Err, err = medianError(y, r, w, from); err != nil {
			return fmt.Errorf("%s at rtol %g: %w", p.Tool, p.RTol, err)
		}
		pts = append(pts, p)
		fmt.Fprintf(os.Stderr, "%-9s %-24s rtol %-6g %9.3g s/traj  %8.1f steps  error %.2e\n", pb.name, p.Tool, p.RTol, p.Seconds, p.Work, p.Err)
		return nil
	}
	goRun := func(tool string, pr *gradsolve.Problem, sv solver, rtol, atol float64) error {
		r, err := bestOf(goRuns, func() (*gradsolve.Result, error) { return solve(pb, pr, nGo, sv.opts(rtol, atol)) })
		var te *ode.TrajectoryError
		if errors.As(err, &te) {
			// As for a peer that fails: the point is left out, and the
			// message says which trajectory failed and why.
			fmt.Fprintf(os.Stderr, "%s: skipped: %s at rtol %g: %v\n", pb.name, tool, rtol, err)
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", tool, err)
		}
		return add(goPoint(tool, r, rtol, atol, nGo), outputs(pb, r))
	}
	for _, rtol := range rtols {
		atol := rtol * pb.atolScale
		for _, sv := range pb.goMethods {
			if err := goRun("gradsolve "+sv.name, pb.compiled(), sv, rtol, atol); err != nil {
				return nil, err
			}
		}
		for _, sv := range pb.fileMethods {
			if err := goRun("gradsolve "+sv.name+" (.ode)", file, sv, rtol, atol); err != nil {
				return nil, err
			}
		}
		if sv := pb.parallel; sv.opts != nil {
			all := solver{sv.name, func(rtol, atol float64) *gradsolve.Options {
				o := sv.opts(rtol, atol)
				o.Workers = 0
				return o
			}}
			if err := goRun("gradsolve "+sv.name+allWorkers, pb.compiled(), all, rtol, atol); err != nil {
				return nil, err
			}
		}
		if peers != "" {
			for _, d := range pb.peers {
				args := []string{pb.name}
				if d.method != "" {
					args = append(args, d.method)
				}
				p, y, err := runPeer(out, d.tool, pb, max(1, d.n/scale), rtol, atol, filepath.Join(peers, d.bin), args...)
				if err != nil {
					// A peer that fails at one tolerance loses that
					// point, not the sweep.
					fmt.Fprintf(os.Stderr, "%s: skipped: %v\n", pb.name, err)
					continue
				}
				if err := add(p, y); err != nil {
					return nil, err
				}
			}
		}
		if python != "" && rtol >= pb.scipyMinTol {
			script := filepath.Join("bench", "peers", "scipy_ivp.py")
			for _, m := range pb.scipy {
				p, y, err := runPeer(out, "scipy "+m, pb, nPy, rtol, atol, python, script, pb.name, m)
				if err != nil {
					fmt.Fprintf(os.Stderr, "%s: skipped: %v\n", pb.name, err)
					continue
				}
				if err := add(p, y); err != nil {
					return nil, err
				}
			}
		}
	}
	return pts, nil
}

// report draws a problem's diagram into dir and prints its ratio table.
func report(stdout io.Writer, dir string, pb *problem, pts []point) error {
	xl := "median relative error of the final state"
	if pb.sens != nil {
		xl = "median relative error of the final sensitivities"
	}
	if err := diagram(filepath.Join(dir, pb.name+".png"), pb.title, xl, pts, pb.shown); err != nil {
		return err
	}
	return ratios(stdout, pts, []float64{1e-6, 1e-8})
}

// outputs returns what the drivers write for a result: per trajectory
// the final state, and the sensitivities after it.
func outputs(pb *problem, r *gradsolve.Result) []float64 {
	if pb.sens == nil {
		return r.Y
	}
	w, _ := pb.width()
	out := make([]float64, 0, w*r.N)
	k := r.Dim * r.NS
	for i := range r.N {
		out = append(out, r.Row(i)...)
		out = append(out, r.S[i*k:(i+1)*k]...)
	}
	return out
}

// solve solves a problem's benchmark ensemble (y0 = (1, 0, 0) unless the
// problem sets it) over [0, t1], with its sensitivities; pr is the generated problem or the problem file's tape, whose
// parameters are set by name.
func solve(pb *problem, pr *gradsolve.Problem, n int, opts *gradsolve.Options) (*gradsolve.Result, error) {
	idx := map[string]int{}
	for i, name := range pr.ParamNames {
		idx[name] = i
	}
	p := make([]float64, n*pr.NumParams)
	for i := range n {
		for name, v := range pb.params(i, n) {
			k, ok := idx[name]
			if !ok {
				return nil, fmt.Errorf("%s has no parameter %q", pr.Name, name)
			}
			p[i*pr.NumParams+k] = v
		}
	}
	y0 := []float64{1, 0, 0}
	if pb.y0 != nil {
		y0 = make([]float64, 0, n*pr.Dim)
		for i := range n {
			y0 = append(y0, pb.y0(i, n)...)
		}
	}
	if pb.sens != nil {
		s := &gradsolve.Sensitivity{ErrorTest: true} // the peers control the sensitivities' error too
		for _, j := range pb.sens {
			s.Wrt = append(s.Wrt, gradsolve.Param(j))
		}
		o := *opts
		o.Sens, opts = s, &o
	}
	ens := &gradsolve.Ensemble{N: n, Y0: y0, P: p, T0: []float64{0}, T1: []float64{pb.t1}}
	res, err := gradsolve.Solve(context.Background(), pr, ens, opts)
	if err != nil {
		return nil, err
	}
	return res, res.Errs()
}

// fromFile compiles examples/NAME to the tape: the route of `gradsolve
// solve FILE.ode`, with no Go compiler involved.
func fromFile(name string) (*gradsolve.Problem, error) {
	m, err := parse.ParseFile(filepath.Join("examples", name))
	if err != nil {
		return nil, fmt.Errorf("run from the repository root: %w", err)
	}
	set, err := tape.Build(m)
	if err != nil {
		return nil, err
	}
	return set.Problem(), nil
}

// bestOf runs solve k times and keeps the fastest: the machines are
// noisy, and the minimum is the least disturbed measurement.
func bestOf(k int, solve func() (*gradsolve.Result, error)) (*gradsolve.Result, error) {
	var best *gradsolve.Result
	for range k {
		r, err := solve()
		if err != nil {
			return nil, err
		}
		if best == nil || r.Elapsed < best.Elapsed {
			best = r
		}
	}
	return best, nil
}

func goPoint(tool string, r *gradsolve.Result, rtol, atol float64, n int) point {
	return point{Tool: tool, RTol: rtol, ATol: atol, N: n,
		Seconds: r.Elapsed.Seconds() / float64(n), Work: float64(r.Total().Accepted+r.Total().Rejected) / float64(n)}
}

// runPeer runs a peer driver, which writes its N×3 final states to a file
// and prints "seconds_per_trajectory work_per_trajectory". The driver
// runs peerRuns times and the fastest run is kept, as for gradsolve
// (bestOf), which runs more often: the slow peers take seconds per
// point.
func runPeer(dir, tool string, pb *problem, n int, rtol, atol float64, prog string, args ...string) (point, []float64, error) {
	p := point{Tool: tool, RTol: rtol, ATol: atol, N: n, Seconds: math.Inf(1)}
	path := filepath.Join(dir, "peer-states.bin")
	defer os.Remove(path)
	var y []float64
	for range peerRuns {
		a := append(append([]string{}, args...), fmtF(rtol), fmtF(atol), strconv.Itoa(n), path)
		cmd := exec.Command(prog, a...)
		cmd.Stderr = os.Stderr
		b, err := cmd.Output()
		if err != nil {
			return p, nil, fmt.Errorf("%s: %s %s: %w", tool, prog, strings.Join(a, " "), err)
		}
		f := strings.Fields(string(b))
		if len(f) != 2 {
			return p, nil, fmt.Errorf("%s: unexpected output %q", tool, b)
		}
		s, err1 := strconv.ParseFloat(f[0], 64)
		w, err2 := strconv.ParseFloat(f[1], 64)
		if err := errors.Join(err1, err2); err != nil {
			return p, nil, fmt.Errorf("%s: output %q: %w", tool, b, err)
		}
		if s < p.Seconds {
			p.Seconds, p.Work = s, w
		}
		width, _ := pb.width()
		if y, err = readStates(path, width*n); err != nil {
			return p, nil, fmt.Errorf("%s: %w", tool, err)
		}
	}
	return p, y, nil
}

func fmtF(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func readStates(path string, want int) ([]float64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) != 8*want {
		return nil, fmt.Errorf("%s: %d bytes, want %d float64", path, len(b), want)
	}
	y := make([]float64, want)
	for i := range y {
		y[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return y, nil
}

// medianError is the median over trajectories of ‖y − ref‖₂/‖ref‖₂
// over each row's values from index from on (rows of width values).
func medianError(y, ref []float64, width, from int) (float64, error) {
	if len(y) != len(ref) || len(y)%width != 0 {
		return 0, fmt.Errorf("%d values, reference has %d (rows of %d)", len(y), len(ref), width)
	}
	e := make([]float64, len(y)/width)
	for i := range e {
		var num, den float64
		for k := width*i + from; k < width*(i+1); k++ {
			num += (y[k] - ref[k]) * (y[k] - ref[k])
			den += ref[k] * ref[k]
		}
		if math.IsNaN(num) || math.IsInf(num, 0) {
			return 0, fmt.Errorf("trajectory %d: non-finite result", i)
		}
		e[i] = math.Sqrt(num / den)
	}
	sort.Float64s(e)
	return e[len(e)/2], nil
}

// curve returns a tool's points sorted by error.
func curve(pts []point, tool string) []point {
	var c []point
	for _, p := range pts {
		if p.Tool == tool {
			c = append(c, p)
		}
	}
	sort.Slice(c, func(i, j int) bool { return c[i].Err < c[j].Err })
	return c
}

// atError interpolates a curve's time per trajectory at achieved error e,
// linearly in log–log between the two neighbouring points; ok is false
// outside the curve's range (no extrapolation).
func atError(c []point, e float64) (seconds float64, ok bool) {
	for k := 0; k+1 < len(c); k++ {
		a, b := c[k], c[k+1]
		if a.Err <= e && e <= b.Err && a.Err > 0 {
			if a.Err == b.Err {
				return math.Min(a.Seconds, b.Seconds), true
			}
			w := math.Log(e/a.Err) / math.Log(b.Err/a.Err)
			return math.Exp((1-w)*math.Log(a.Seconds) + w*math.Log(b.Seconds)), true
		}
	}
	return 0, false
}

func tools(pts []point) []string {
	var ts []string
	seen := map[string]bool{}
	for _, p := range pts {
		if !seen[p.Tool] {
			seen[p.Tool] = true
			ts = append(ts, p.Tool)
		}
	}
	return ts
}

// ratios prints, at each target error, every tool's interpolated time and
// its ratio to the fastest gradsolve method with generated/hand-written
// Go code and to the fastest on the .ode (tape) route.
func ratios(w io.Writer, pts []point, targets []float64) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, e := range targets {
		best, bestFile := math.Inf(1), math.Inf(1)
		var bestName, bestFileName string
		for _, t := range tools(pts) {
			s, ok := atError(curve(pts, t), e)
			if !ok || !strings.HasPrefix(t, "gradsolve") || strings.HasSuffix(t, allWorkers) {
				continue // the ratios are to one core's time
			}
			if strings.HasSuffix(t, "(.ode)") {
				if s < bestFile {
					bestFile, bestFileName = s, t
				}
			} else if s < best {
				best, bestName = s, t
			}
		}
		fmt.Fprintf(tw, "achieved error %.0e\ttime per trajectory\tpeer / %s\tpeer / %s\n", e, orDash(bestName), orDash(bestFileName))
		for _, t := range tools(pts) {
			s, ok := atError(curve(pts, t), e)
			if !ok {
				fmt.Fprintf(tw, "  %s\t(error not reached in the sweep)\t\t\n", t)
				continue
			}
			fmt.Fprintf(tw, "  %s\t%.3g µs\t%s\t%s\n", t, s*1e6, ratio(s, best), ratio(s, bestFile))
		}
		// Best against best: each peer tool's fastest configuration at
		// this error, against gradsolve's fastest on each route.
		for _, pb := range peerBests(pts, e) {
			fmt.Fprintf(tw, "  best against best: %s's best, %s\t%.3g µs\tgradsolve / it: %s\t%s\n",
				pb.family, pb.tool, pb.seconds*1e6, bestRatio(best, pb.seconds), bestRatio(bestFile, pb.seconds))
		}
	}
	return tw.Flush()
}

// peerBest is one peer tool's fastest configuration at an error.
type peerBest struct {
	family, tool string
	seconds      float64
}

// peerBests returns, for each peer tool (the first word of its curves'
// names: odeint, CVODES, scipy) in the order the curves appear, its
// fastest curve at error e, interpolated; tools that do not reach e are
// left out.
func peerBests(pts []point, e float64) []peerBest {
	var out []peerBest
	at := map[string]int{}
	for _, t := range tools(pts) {
		family, _, _ := strings.Cut(t, " ")
		if family == "gradsolve" {
			continue
		}
		s, ok := atError(curve(pts, t), e)
		if !ok {
			continue
		}
		if i, seen := at[family]; seen {
			if s < out[i].seconds {
				out[i] = peerBest{family, t, s}
			}
			continue
		}
		at[family] = len(out)
		out = append(out, peerBest{family, t, s})
	}
	return out
}

// Each point is the fastest of goRuns runs of gradsolve, or peerRuns of
// a peer: the least disturbed by the rest of a shared machine.
const goRuns, peerRuns = 5, 3

// allWorkers ends the name of a gradsolve curve run on all workers.
const allWorkers = " (all workers)"

func orDash(s string) string {
	if s == "" {
		return "— (no gradsolve method reached it)"
	}
	return s
}

// ratio formats s/base, or a dash when no base was measured.
// bestRatio is gradsolve's best time over a peer's best, to three
// significant digits (the peers' times span five decades); "—" where
// no gradsolve method reached the error on that route.
func bestRatio(gs, peer float64) string {
	if math.IsInf(gs, 1) {
		return "—"
	}
	return strconv.FormatFloat(gs/peer, 'g', 3, 64)
}

func ratio(s, base float64) string {
	if math.IsInf(base, 1) {
		return "—"
	}
	return strconv.FormatFloat(s/base, 'f', 2, 64)
}

func writeCSV(path string, pts []point) error {
	var b strings.Builder
	b.WriteString("tool,rtol,atol,n,seconds_per_trajectory,work_per_trajectory,median_error\n")
	for _, p := range pts {
		fmt.Fprintf(&b, "%s,%g,%g,%d,%.6g,%.6g,%.6g\n", p.Tool, p.RTol, p.ATol, p.N, p.Seconds, p.Work, p.Err)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// readCSV reads the points writeCSV wrote.
func readCSV(path string) ([]point, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "tool,") {
		return nil, fmt.Errorf("%s: not a work-precision CSV", path)
	}
	var pts []point
	for k, ln := range lines[1:] {
		f := strings.Split(ln, ",")
		if len(f) != 7 {
			return nil, fmt.Errorf("%s:%d: %d fields, want 7", path, k+2, len(f))
		}
		var v [6]float64
		for i := range v {
			if v[i], err = strconv.ParseFloat(f[i+1], 64); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, k+2, err)
			}
		}
		pts = append(pts, point{Tool: f[0], RTol: v[0], ATol: v[1], N: int(v[2]), Seconds: v[3], Work: v[4], Err: v[5]})
	}
	return pts, nil
}

// diagram draws the work-precision diagram in two panels: gradsolve's
// methods and routes against Boost.odeint, the closest peer; and every
// tool, gradsolve by the curves in shown.
func diagram(path, title, xl string, pts []point, shown []string) error {
	series := func(keep func(string) bool) []plots.Series {
		var ss []plots.Series
		for _, t := range tools(pts) {
			if !keep(t) {
				continue
			}
			s := plots.Series{Name: t}
			for _, p := range curve(pts, t) {
				s.X = append(s.X, p.Err)
				s.Y = append(s.Y, p.Seconds*1e6)
			}
			ss = append(ss, s)
		}
		return ss
	}
	opt := &plots.Options{LogX: true, LogY: true, Markers: true}
	yl := "time per trajectory [µs]"
	return plots.Panels(path, title, []plots.Panel{
		{Title: "gradsolve and Boost.odeint", XLabel: xl, YLabel: yl, Opt: opt, Series: series(func(t string) bool {
			return strings.HasPrefix(t, "gradsolve") || strings.HasPrefix(t, "odeint")
		})},
		{Title: "all tools", XLabel: xl, YLabel: yl, Opt: opt, Series: series(func(t string) bool {
			return !strings.HasPrefix(t, "gradsolve") || slices.Contains(shown, t)
		})},
	})
}
