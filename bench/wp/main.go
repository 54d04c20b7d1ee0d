// Command wp measures work-precision curves of gradsolve and its peer
// solvers on the benchmark ensembles of bench/README.md, one trajectory
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
// The achieved error of a run is the median over its trajectories of the
// relative 2-norm error of the final state against DP8 at rtol = atol =
// 1e-13 (itself converged to ~1e-12 on this ensemble). Ratios are read at
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
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/plots"
	"github.com/gradsolve/gradsolve/sym/parse"
	"github.com/gradsolve/gradsolve/sym/tape"
	"github.com/gradsolve/gradsolve/systems"
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

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("wp", flag.ContinueOnError)
	peers := fs.String("peers", "bench/build", "directory holding the built peer drivers (odeint, cvodes); empty for gradsolve only")
	python := fs.String("python", "/usr/bin/python3", "Python with numpy and scipy for the scipy driver; empty to skip scipy")
	out := fs.String("out", "bench/results/wp", "output directory")
	quick := fs.Bool("quick", false, "fewer tolerances and trajectories (a smoke test, not for the record)")
	from := fs.String("from", "", "redraw the diagram and the table from this CSV of an earlier run, measuring nothing")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *from != "" {
		pts, err := readCSV(*from)
		if err != nil {
			return err
		}
		return report(stdout, *out, pts)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	rtols := []float64{1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10}
	nGo, nPeer, nCV, nPy := 2000, 2000, 200, 10
	if *quick {
		rtols = []float64{1e-5, 1e-7, 1e-9}
		nGo, nPeer, nCV, nPy = 200, 200, 20, 3
	}
	refs := map[int][]float64{}
	ref := func(n int) ([]float64, error) {
		if r, ok := refs[n]; ok {
			return r, nil
		}
		r, err := solveLorenz(systems.Lorenz(), n, method.DP8, 1e-13, 1e-13)
		if err != nil {
			return nil, err
		}
		refs[n] = r.Y
		return r.Y, nil
	}
	file, err := lorenzFromFile()
	if err != nil {
		return err
	}
	var pts []point
	add := func(p point, y []float64) error {
		r, err := ref(p.N)
		if err != nil {
			return err
		}
		if p.Err, err = medianError(y, r); err != nil {
			return fmt.Errorf("%s at rtol %g: %w", p.Tool, p.RTol, err)
		}
		pts = append(pts, p)
		fmt.Fprintf(os.Stderr, "%-22s rtol %-6g %9.3g s/traj  %8.1f steps  error %.2e\n", p.Tool, p.RTol, p.Seconds, p.Work, p.Err)
		return nil
	}
	for _, rtol := range rtols {
		atol := rtol * 1e-3
		for _, m := range []*method.Tableau{method.Tsit5, method.DP5, method.Vern7, method.DP8} {
			r, err := bestOf(3, func() (*gradsolve.Result, error) { return solveLorenz(systems.Lorenz(), nGo, m, rtol, atol) })
			if err != nil {
				return err
			}
			if err := add(goPoint("gradsolve "+m.Name, r, rtol, atol, nGo), r.Y); err != nil {
				return err
			}
		}
		for _, m := range []*method.Tableau{method.Tsit5, method.Vern7} {
			r, err := bestOf(3, func() (*gradsolve.Result, error) { return solveLorenz(file, nGo, m, rtol, atol) })
			if err != nil {
				return err
			}
			if err := add(goPoint("gradsolve "+m.Name+" (.ode)", r, rtol, atol, nGo), r.Y); err != nil {
				return err
			}
		}
		if *peers != "" {
			for _, d := range []struct {
				tool, bin string
				n         int
			}{{"odeint dopri5", "odeint", nPeer}, {"CVODES Adams", "cvodes", nCV}} {
				p, y, err := runPeer(*out, d.tool, d.n, rtol, atol, filepath.Join(*peers, d.bin), "lorenz")
				if err != nil {
					return err
				}
				if err := add(p, y); err != nil {
					return err
				}
			}
		}
		if *python != "" {
			script := filepath.Join("bench", "peers", "scipy_ivp.py")
			for _, m := range []string{"RK45", "DOP853", "LSODA"} {
				if rtol < 1e-8 && m == "RK45" {
					continue // minutes per point: RK45 is a low-order method
				}
				p, y, err := runPeer(*out, "scipy "+m, nPy, rtol, atol, *python, script, "lorenz", m)
				if err != nil {
					return err
				}
				if err := add(p, y); err != nil {
					return err
				}
			}
		}
	}
	if err := writeCSV(filepath.Join(*out, "lorenz.csv"), pts); err != nil {
		return err
	}
	return report(stdout, *out, pts)
}

// report draws the diagram into dir and prints the ratio table.
func report(stdout io.Writer, dir string, pts []point) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := diagram(filepath.Join(dir, "lorenz.png"), "Lorenz, t from 0 to 10, ρ from 10 to 24, one core", pts); err != nil {
		return err
	}
	return ratios(stdout, pts, []float64{1e-6, 1e-8})
}

// solveLorenz solves the benchmark's Lorenz ensemble (ρ evenly from 10 to
// 24, σ = 10, β = 8/3, y0 = (1, 0, 0), t ∈ [0, 10]) on one worker. pr is
// the built-in system or the problem file's; parameters are set by name.
func solveLorenz(pr *gradsolve.Problem, n int, m *method.Tableau, rtol, atol float64) (*gradsolve.Result, error) {
	idx := map[string]int{}
	for i, name := range pr.ParamNames {
		idx[name] = i
	}
	p := make([]float64, n*pr.NumParams)
	for i := range n {
		row := p[i*pr.NumParams:]
		row[idx["sigma"]], row[idx["rho"]], row[idx["beta"]] = 10, rho(i, n), 8.0/3
	}
	ens := &gradsolve.Ensemble{N: n, Y0: []float64{1, 0, 0}, P: p, T0: []float64{0}, T1: []float64{10}}
	res, err := gradsolve.Solve(context.Background(), pr, ens, &gradsolve.Options{Method: m, RTol: rtol, ATol: atol, Workers: 1})
	if err != nil {
		return nil, err
	}
	return res, res.Errs()
}

// rho is the i-th ρ of an ensemble of n, as the peer drivers compute it.
func rho(i, n int) float64 {
	if n == 1 {
		return 10
	}
	return 10 + 14*float64(i)/float64(n-1)
}

// lorenzFromFile compiles examples/lorenz.ode to the tape: the route of
// `gradsolve solve FILE.ode`, with no Go compiler involved.
func lorenzFromFile() (*gradsolve.Problem, error) {
	m, err := parse.ParseFile(filepath.Join("examples", "lorenz.ode"))
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
// runs twice and the faster run is kept, as for gradsolve (bestOf), but
// only twice: the slow peers take seconds per point.
func runPeer(dir, tool string, n int, rtol, atol float64, prog string, args ...string) (point, []float64, error) {
	p := point{Tool: tool, RTol: rtol, ATol: atol, N: n, Seconds: math.Inf(1)}
	path := filepath.Join(dir, "peer-states.bin")
	defer os.Remove(path)
	var y []float64
	for range 2 {
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
		if y, err = readStates(path, 3*n); err != nil {
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

// medianError is the median over trajectories of ‖y − ref‖₂/‖ref‖₂ (rows
// of 3).
func medianError(y, ref []float64) (float64, error) {
	if len(y) != len(ref) {
		return 0, fmt.Errorf("%d values, reference has %d", len(y), len(ref))
	}
	e := make([]float64, len(y)/3)
	for i := range e {
		var num, den float64
		for k := 3 * i; k < 3*i+3; k++ {
			num += (y[k] - ref[k]) * (y[k] - ref[k])
			den += ref[k] * ref[k]
		}
		if math.IsNaN(num) {
			return 0, fmt.Errorf("trajectory %d: non-finite final state", i)
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
			if !ok || !strings.HasPrefix(t, "gradsolve") {
				continue
			}
			if strings.HasSuffix(t, "(.ode)") {
				if s < bestFile {
					bestFile, bestFileName = s, t
				}
			} else if s < best {
				best, bestName = s, t
			}
		}
		fmt.Fprintf(tw, "achieved error %.0e\ttime per trajectory\tpeer / %s\tpeer / %s\n", e, bestName, bestFileName)
		for _, t := range tools(pts) {
			s, ok := atError(curve(pts, t), e)
			if !ok {
				fmt.Fprintf(tw, "  %s\t(error not reached in the sweep)\t\t\n", t)
				continue
			}
			fmt.Fprintf(tw, "  %s\t%.3g µs\t%.2f\t%.2f\n", t, s*1e6, s/best, s/bestFile)
		}
	}
	return tw.Flush()
}

func writeCSV(path string, pts []point) error {
	var b strings.Builder
	b.WriteString("tool,rtol,atol,n,seconds_per_trajectory,work_per_trajectory,median_error\n")
	for _, p := range pts {
		fmt.Fprintf(&b, "%s,%g,%g,%d,%.6g,%.6g,%.6g\n", p.Tool, p.RTol, p.ATol, p.N, p.Seconds, p.Work, p.Err)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// diagram draws the work-precision diagram in two panels: gradsolve's
// methods and routes against Boost.odeint, the closest peer; and every
// tool, gradsolve by its two fastest methods on each route.
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

func diagram(path, title string, pts []point) error {
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
	xl, yl := "median relative error of the final state", "time per trajectory [µs]"
	return plots.Panels(path, title, []plots.Panel{
		{Title: "gradsolve and Boost.odeint", XLabel: xl, YLabel: yl, Opt: opt, Series: series(func(t string) bool {
			return strings.HasPrefix(t, "gradsolve") || strings.HasPrefix(t, "odeint")
		})},
		{Title: "all tools", XLabel: xl, YLabel: yl, Opt: opt, Series: series(func(t string) bool {
			return !strings.HasPrefix(t, "gradsolve") || t == "gradsolve Vern7" || t == "gradsolve DP8" || t == "gradsolve Vern7 (.ode)"
		})},
	})
}
