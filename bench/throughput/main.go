// Command throughput measures the time per trajectory against the size
// of the ensemble, from 10² trajectories up, on one worker and on all of
// them, with the peak memory of each run: where the per-solve overhead
// (the engine's setup, the compiled code, the workers' start) stops
// mattering, and how memory grows with n.
//
//	go run ./bench/throughput [-problems lorenz,halo-sens,robertson]
//	    [-max 1e6] [-workers 1,all] [-budget 2s] [-out DIR]
//	go run ./bench/throughput -from-csv A.csv,B.csv -out DIR   (redraw)
//
// The problems (the problem files of examples/, each trajectory with
// its own parameter, swept over a range):
//
//   - lorenz: t ∈ [0, 1], ρ from 10 to 24, Tsit5 at rtol = atol = 1e-6;
//   - halo-sens: the halo orbit over t ∈ [0, 20] with forward
//     sensitivities to (vc, q), q from 0.6 to 1, DP8 at 1e-8;
//   - robertson: t ∈ [0, 1e5], k1 from 0.02 to 0.06, Rodas5P at rtol
//     1e-6, atol 1e-10.
//
// Each point runs in a process of its own (this binary, re-executed
// with -point), so that its peak resident memory (getrusage's maxrss) is
// the point's alone. A point repeats its solve until it has run for
// -budget, and reports the fastest repetition. It prints one row per
// point and, with -out, writes throughput.csv and throughput.png (µs per
// trajectory against n, log–log, one line per problem and worker
// count).
package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/checkout"
	"github.com/gradsolve/gradsolve/internal/memory"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/plots"
	"github.com/gradsolve/gradsolve/sym/parse"
	"github.com/gradsolve/gradsolve/sym/tape"
)

// problem is one measured workload: its ensemble of n trajectories and
// its options.
type problem struct {
	name, file string
	ens        func(pr *gradsolve.Problem, n int) *gradsolve.Ensemble
	opts       func(pr *gradsolve.Problem) gradsolve.Options
}

// sweep returns n values from lo to hi (lo alone for n = 1).
func sweep(lo, hi float64, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		if n > 1 {
			v[i] = lo + (hi-lo)*float64(i)/float64(n-1)
		} else {
			v[i] = lo
		}
	}
	return v
}

var problems = []problem{
	{"lorenz", "lorenz.ode",
		func(pr *gradsolve.Problem, n int) *gradsolve.Ensemble {
			p := make([]float64, 0, 3*n)
			for _, rho := range sweep(10, 24, n) {
				p = append(p, rho, 10, 8.0/3)
			}
			return &gradsolve.Ensemble{N: n, P: p, T0: []float64{0}, T1: []float64{1}}
		},
		func(*gradsolve.Problem) gradsolve.Options {
			return gradsolve.Options{Method: method.Tsit5, RTol: 1e-6, ATol: 1e-6}
		}},
	{"halo-sens", "halo.ode",
		func(pr *gradsolve.Problem, n int) *gradsolve.Ensemble {
			p := make([]float64, 0, 3*n)
			for _, q := range sweep(0.6, 1, n) {
				p = append(p, 1, q, 0.2)
			}
			return &gradsolve.Ensemble{N: n, P: p}
		},
		func(*gradsolve.Problem) gradsolve.Options {
			return gradsolve.Options{Method: method.DP8, RTol: 1e-8, ATol: 1e-8,
				Sens: &gradsolve.Sensitivity{Wrt: []gradsolve.Wrt{gradsolve.Param(0), gradsolve.Param(1)}}}
		}},
	{"robertson", "robertson.ode",
		func(pr *gradsolve.Problem, n int) *gradsolve.Ensemble {
			p := make([]float64, 0, 3*n)
			for _, k1 := range sweep(0.02, 0.06, n) {
				p = append(p, k1, 3e7, 1e4)
			}
			return &gradsolve.Ensemble{N: n, P: p}
		},
		func(*gradsolve.Problem) gradsolve.Options {
			return gradsolve.Options{Method: method.Rodas5P, RTol: 1e-6, ATol: 1e-10}
		}},
}

// point is one measurement, as the child process reports it.
type point struct {
	Problem string  `json:"problem"`
	N       int     `json:"n"`
	Workers int     `json:"workers"`
	Engine  string  `json:"engine"`
	Seconds float64 `json:"seconds"` // the fastest repetition
	Reps    int     `json:"reps"`
	UsTraj  float64 `json:"us_per_trajectory"`
	PeakMiB float64 `json:"peak_rss_mib"`
}

func main() {
	probF := flag.String("problems", "lorenz,halo-sens,robertson", "problems, comma-separated: lorenz, halo-sens, robertson")
	maxF := flag.Float64("max", 1e6, "the largest ensemble (sizes go from 1e2 in half decades)")
	workF := flag.String("workers", "1,all", "worker counts, comma-separated (all: every core)")
	budget := flag.Duration("budget", 2*time.Second, "time each point repeats its solve for")
	out := flag.String("out", "", "directory for throughput.csv and throughput.png (none: stdout only)")
	pointF := flag.String("point", "", "internal: measure one point, PROBLEM,N,WORKERS, and print it as JSON")
	fromF := flag.String("from-csv", "", "redraw from throughput.csv files (comma-separated) into -out, measuring nothing")
	flag.Parse()
	if *fromF != "" {
		if *out == "" {
			fatalf("-from-csv needs -out")
		}
		var pts []point
		for _, f := range strings.Split(*fromF, ",") {
			p, err := readCSV(f)
			if err != nil {
				fatalf("%v", err)
			}
			pts = append(pts, p...)
		}
		if err := write(*out, pts); err != nil {
			fatalf("%v", err)
		}
		return
	}
	if *pointF != "" {
		if err := measure(*pointF, *budget); err != nil {
			fatalf("%v", err)
		}
		return
	}
	if !(*maxF >= 100) || *maxF > 1e9 {
		fatalf("-max %g: want 100 … 1e9", *maxF)
	}
	if *budget <= 0 {
		fatalf("-budget %v: want a positive duration", *budget)
	}
	var workers []int
	for _, w := range strings.Split(*workF, ",") {
		switch w = strings.TrimSpace(w); w {
		case "all":
			workers = append(workers, runtime.NumCPU())
		default:
			k, err := strconv.Atoi(w)
			if err != nil || k < 1 {
				fatalf("-workers %q: want positive integers or all", *workF)
			}
			workers = append(workers, k)
		}
	}
	var sizes []int
	for e := 2.0; math.Pow(10, e) <= *maxF*(1+1e-9); e += 0.5 {
		sizes = append(sizes, int(math.Round(math.Pow(10, e))))
	}
	self, err := os.Executable()
	if err != nil {
		fatalf("finding this binary: %v", err)
	}
	fmt.Printf("%-10s %10s %7s %-14s %12s %14s %10s\n", "problem", "n", "workers", "engine", "seconds", "µs/trajectory", "peak MiB")
	var pts []point
	for _, name := range strings.Split(*probF, ",") {
		if _, err := find(strings.TrimSpace(name)); err != nil {
			fatalf("-problems: %v", err)
		}
		for _, w := range workers {
			for _, n := range sizes {
				cmd := exec.Command(self, "-point", fmt.Sprintf("%s,%d,%d", strings.TrimSpace(name), n, w), "-budget", budget.String())
				var so, se bytes.Buffer
				cmd.Stdout, cmd.Stderr = &so, &se
				if err := cmd.Run(); err != nil {
					fatalf("%s n=%d workers=%d: %v\n%s", name, n, w, err, se.String())
				}
				var p point
				if err := json.Unmarshal(so.Bytes(), &p); err != nil {
					fatalf("%s n=%d workers=%d: reading the point: %v", name, n, w, err)
				}
				pts = append(pts, p)
				fmt.Printf("%-10s %10d %7d %-14s %12.4g %14.4g %10.1f\n", p.Problem, p.N, p.Workers, p.Engine, p.Seconds, p.UsTraj, p.PeakMiB)
			}
		}
	}
	if *out != "" {
		if err := write(*out, pts); err != nil {
			fatalf("%v", err)
		}
	}
}

func find(name string) (*problem, error) {
	for i := range problems {
		if problems[i].name == name {
			return &problems[i], nil
		}
	}
	return nil, fmt.Errorf("unknown problem %q: want lorenz, halo-sens or robertson", name)
}

// measure runs one point (PROBLEM,N,WORKERS) and prints it as JSON.
func measure(spec string, budget time.Duration) error {
	f := strings.Split(spec, ",")
	if len(f) != 3 {
		return fmt.Errorf("-point %q: want PROBLEM,N,WORKERS", spec)
	}
	pb, err := find(f[0])
	if err != nil {
		return err
	}
	n, err1 := strconv.Atoi(f[1])
	w, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil || n < 1 || w < 1 {
		return fmt.Errorf("-point %q: N and WORKERS must be positive integers", spec)
	}
	root, err := checkout.Root()
	if err != nil {
		return err
	}
	m, err := parse.ParseFile(filepath.Join(root, "examples", pb.file))
	if err != nil {
		return err
	}
	set, err := tape.Build(m)
	if err != nil {
		return err
	}
	pr := set.Problem()
	ens := pb.ens(pr, n)
	o := pb.opts(pr)
	o.Workers = w
	ctx := context.Background()
	best, reps, engine := math.Inf(1), 0, ""
	for start := time.Now(); reps == 0 || time.Since(start) < budget; reps++ {
		t0 := time.Now()
		res, err := gradsolve.Solve(ctx, pr, ens, &o)
		if err != nil {
			return err
		}
		if errs := res.Errs(); errs != nil {
			return fmt.Errorf("%s n=%d: %v", pb.name, n, errs)
		}
		best = math.Min(best, time.Since(t0).Seconds())
		engine = res.Engine
	}
	peak, _ := memory.PeakRSS() // 0 where the platform does not tell it
	p := point{Problem: pb.name, N: n, Workers: w, Engine: engine, Seconds: best, Reps: reps,
		UsTraj: best / float64(n) * 1e6, PeakMiB: float64(peak) / (1 << 20)}
	return json.NewEncoder(os.Stdout).Encode(p)
}

// write writes the points as throughput.csv and throughput.png in dir.
func write(dir string, pts []point) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "throughput.csv"))
	if err != nil {
		return err
	}
	cw := csv.NewWriter(f)
	_ = cw.Write([]string{"problem", "n", "workers", "engine", "seconds", "reps", "us_per_trajectory", "peak_rss_mib"})
	type key struct {
		p string
		w int
	}
	var order []key
	series := map[key]*plots.Series{}
	for _, p := range pts {
		_ = cw.Write([]string{p.Problem, strconv.Itoa(p.N), strconv.Itoa(p.Workers), p.Engine,
			strconv.FormatFloat(p.Seconds, 'g', 6, 64), strconv.Itoa(p.Reps),
			strconv.FormatFloat(p.UsTraj, 'g', 6, 64), strconv.FormatFloat(p.PeakMiB, 'f', 1, 64)})
		k := key{p.Problem, p.Workers}
		if series[k] == nil {
			order = append(order, k)
			series[k] = &plots.Series{Name: fmt.Sprintf("%s, %d worker(s)", p.Problem, p.Workers)}
		}
		s := series[k]
		s.X, s.Y = append(s.X, float64(p.N)), append(s.Y, p.UsTraj)
	}
	cw.Flush()
	if err := errors.Join(cw.Error(), f.Close()); err != nil {
		return err
	}
	var ss []plots.Series
	for _, k := range order {
		ss = append(ss, *series[k])
	}
	return plots.Lines(filepath.Join(dir, "throughput.png"), "Time per trajectory against ensemble size",
		"trajectories n", "µs per trajectory (fastest repetition)", ss, &plots.Options{LogX: true, LogY: true, Markers: true})
}

// readCSV reads the points of a throughput.csv.
func readCSV(path string) ([]point, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var pts []point
	for i, r := range rows {
		if i == 0 {
			continue
		}
		if len(r) != 8 {
			return nil, fmt.Errorf("%s: row %d has %d fields, want 8", path, i+1, len(r))
		}
		var p point
		var errs [6]error
		p.Problem, p.Engine = r[0], r[3]
		p.N, errs[0] = strconv.Atoi(r[1])
		p.Workers, errs[1] = strconv.Atoi(r[2])
		p.Seconds, errs[2] = strconv.ParseFloat(r[4], 64)
		p.Reps, errs[3] = strconv.Atoi(r[5])
		p.UsTraj, errs[4] = strconv.ParseFloat(r[6], 64)
		p.PeakMiB, errs[5] = strconv.ParseFloat(r[7], 64)
		if err := errors.Join(errs[:]...); err != nil {
			return nil, fmt.Errorf("%s: row %d: %w", path, i+1, err)
		}
		pts = append(pts, p)
	}
	return pts, nil
}

func fatalf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "throughput: "+format+"\n", a...)
	os.Exit(1)
}
