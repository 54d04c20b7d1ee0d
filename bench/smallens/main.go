// Command smallens measures small ensembles — one to seven trajectories —
// on the scalar engines and on the lane engines, the figures behind the
// router's size thresholds (internal/engine/cpu: idleERK, idleROS,
// laneCount): for each problem and size, a solve, a recording with its
// first gradient, and a replay with its gradient, each engine named
// (Options.Engine), the two engines timed in turn, best of -reps each.
//
//	go run ./bench/smallens [-reps 30] [-n 1,2,3,4,5,6,7]
//
// It prints one line per problem and size: the times on each engine and
// lanes/scalar for each of the three.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/sym/parse"
	"github.com/gradsolve/gradsolve/sym/tape"
)

// problem is one example file with the options and spans it is run at.
type problem struct {
	file, scalar, lanes string
	opts                gradsolve.Options
	t1                  float64
	// member sets trajectory i's initial state or parameters (nil:
	// the file's).
	y0, p func(i int) []float64
}

func problems() []problem {
	return []problem{
		{file: "robertson.ode", scalar: "cpu-ros", lanes: "cpu-ros-lanes", t1: 1e4,
			opts: gradsolve.Options{Method: method.Rodas5P, RTol: 1e-8, ATol: 1e-12},
			p:    func(i int) []float64 { return []float64{0.04 * (1 + 0.1*float64(i)), 3e7, 1e4} }},
		{file: "lorenz.ode", scalar: "cpu-erk", lanes: "cpu-lanes", t1: 1,
			opts: gradsolve.Options{Method: method.Tsit5, RTol: 1e-8, ATol: 1e-10},
			y0:   func(i int) []float64 { return []float64{1 + 0.1*float64(i), 0, 0} }},
		{file: "halo.ode", scalar: "cpu-erk", lanes: "cpu-lanes", t1: 10,
			opts: gradsolve.Options{Method: method.Tsit5, RTol: 1e-8, ATol: 1e-10}},
	}
}

func main() {
	reps := flag.Int("reps", 30, "repetitions of each measurement (the best is kept)")
	ns := flag.String("n", "1,2,3,4,5,6,7", "ensemble sizes, comma-separated")
	flag.Parse()
	var sizes []int
	for _, f := range strings.Split(*ns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fatalf("bad -n entry %q", f)
		}
		sizes = append(sizes, n)
	}
	root, err := repoRoot()
	if err != nil {
		fatalf("%v", err)
	}
	fmt.Printf("# GOMAXPROCS %d, %s/%s; best of %d; times in µs; ratio = lanes/scalar\n", runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH, *reps)
	fmt.Printf("%-10s %2s | %-22s | %-22s | %-22s\n", "problem", "n", "solve s/l (ratio)", "record+grad s/l", "replay+grad s/l")
	for _, pb := range problems() {
		m, err := parse.ParseFile(filepath.Join(root, "examples", pb.file))
		if err != nil {
			fatalf("%v", err)
		}
		set, err := tape.Build(m)
		if err != nil {
			fatalf("%v", err)
		}
		pr := set.Problem()
		for _, n := range sizes {
			ens := gradsolve.Ensemble{N: n, T0: []float64{0}, T1: []float64{pb.t1}}
			for i := range n {
				if pb.y0 != nil {
					ens.Y0 = append(ens.Y0, pb.y0(i)...)
				}
				if pb.p != nil {
					ens.P = append(ens.P, pb.p(i)...)
				}
			}
			var best [2][3]time.Duration
			for e := range best {
				for k := range best[e] {
					best[e][k] = time.Hour
				}
			}
			cot := make([]float64, n*pr.Dim)
			for i := range cot {
				cot[i] = 1
			}
			for range *reps {
				for e, eng := range []string{pb.scalar, pb.lanes} {
					o := pb.opts
					o.Engine = eng
					ctx := context.Background()
					t0 := time.Now()
					if _, err := gradsolve.Solve(ctx, pr, &ens, &o); err != nil {
						fatalf("%s on %s: %v", pb.file, eng, err)
					}
					t1 := time.Now()
					rec, err := gradsolve.Record(ctx, pr, &ens, &o)
					if err != nil {
						fatalf("%s on %s: %v", pb.file, eng, err)
					}
					if _, err := rec.Gradient(ctx, gradsolve.Cotangents{Y: cot}); err != nil {
						fatalf("%s on %s: %v", pb.file, eng, err)
					}
					t2 := time.Now()
					if _, err := rec.Replay(ctx, &gradsolve.Point{P: ens.P, Y0: ens.Y0}); err != nil {
						fatalf("%s on %s: %v", pb.file, eng, err)
					}
					if _, err := rec.Gradient(ctx, gradsolve.Cotangents{Y: cot}); err != nil {
						fatalf("%s on %s: %v", pb.file, eng, err)
					}
					t3 := time.Now()
					for k, d := range []time.Duration{t1.Sub(t0), t2.Sub(t1), t3.Sub(t2)} {
						best[e][k] = min(best[e][k], d)
					}
				}
			}
			cell := func(k int) string {
				s, l := best[0][k], best[1][k]
				return fmt.Sprintf("%5.0f/%5.0f (%.2f)", us(s), us(l), float64(l)/float64(s))
			}
			fmt.Printf("%-10s %2d | %-22s | %-22s | %-22s\n", strings.TrimSuffix(pb.file, ".ode"), n, cell(0), cell(1), cell(2))
		}
	}
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func fatalf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "smallens: "+format+"\n", a...)
	os.Exit(1)
}

// repoRoot finds the module root (the directory holding go.mod and
// examples/) from the working directory up.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}
