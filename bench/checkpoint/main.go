// Command checkpoint measures the checkpointed replay
// (Options.Checkpoint): the memory of a recording and the time of
// Record + Gradient on long trajectories, for several checkpoint
// intervals k, against the recording that keeps every state (k = 1).
//
//	go run ./bench/checkpoint [-problem halo] [-n 64] [-t1 2000]
//	    [-k 1,4,16,64,256] [-reps 5] [-workers 1] [-engine cpu-erk]
//	    [-csv FILE]
//
// The problems:
//
//   - halo: the stellar orbit in the flattened logarithmic halo
//     (systems.Halo, Dim 6), the flattening q from 0.6 to 1 over the
//     ensemble, Tsit5 at rtol = atol = 1e-8, t ∈ [0, t1];
//   - kepler: the Kepler orbit of examples/kepler.ode (Dim 4), the
//     eccentricity varied through the initial speed, Tsit5 at rtol =
//     atol = 1e-8;
//   - vdp: the Van der Pol oscillator of examples/vanderpol.ode (Dim
//     2), μ from 100 to 1000 over the ensemble, Rodas5P at rtol = atol =
//     1e-8 (a Rosenbrock method: its checkpointed sweep recomputes the
//     states alone, one step each).
//
// The loss is Σ_i ‖y_i(t1)‖²/2 (SumSquares). Each measurement runs in a
// process of its own (this binary, re-executed with -one), so that its
// peak resident memory (getrusage's maxrss) is its own; the runs are
// interleaved (every k once per repetition, in an order rotated from
// one repetition to the next), and the table reports the medians. It
// also checks that every run's gradient and loss have the same bits
// (their FNV hash), which Options.Checkpoint promises.
package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/memory"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/sym/parse"
	"github.com/gradsolve/gradsolve/sym/tape"
	"github.com/gradsolve/gradsolve/systems"
)

// run is one measurement, as the child process reports it.
type run struct {
	K          int     `json:"k"`
	Steps      int     `json:"steps"`        // accepted steps, all trajectories
	MeshBytes  uint64  `json:"mesh_bytes"`   // Recording.MeshBytes
	Footprint  uint64  `json:"footprint"`    // Sizes.Footprint: Bytes + PerStep·steps
	LiveHeap   uint64  `json:"live_heap"`    // heap in use after Record, after a GC
	RecordSec  float64 `json:"record_s"`     // Record
	GradSec    float64 `json:"gradient_s"`   // Recording.Gradient
	PeakRSSMiB float64 `json:"peak_rss_mib"` // maxrss of the process
	Hash       string  `json:"hash"`         // of the loss and the gradient's bits
	Engine     string  `json:"engine"`       // Result.Engine
}

func main() {
	problem := flag.String("problem", "halo", "halo or kepler")
	n := flag.Int("n", 64, "trajectories")
	t1 := flag.Float64("t1", 2000, "end of the span")
	ks := flag.String("k", "1,4,16,64,256", "checkpoint intervals (1: every state)")
	reps := flag.Int("reps", 5, "repetitions of every k, interleaved")
	workers := flag.Int("workers", 1, "workers")
	engine := flag.String("engine", "cpu-erk", "engine (Options.Engine; empty: the router's)")
	out := flag.String("csv", "", "write the medians as CSV to this file")
	one := flag.Int("one", 0, "internal: measure checkpoint interval K once and print it as JSON")
	flag.Parse()
	if *one > 0 {
		r, err := measure(*problem, *n, *t1, *one, *workers, *engine)
		if err != nil {
			fatalf("%v", err)
		}
		if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
			fatalf("%v", err)
		}
		return
	}
	var kv []int
	for _, s := range strings.Split(*ks, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || k < 1 {
			fatalf("-k %q: want positive integers", *ks)
		}
		kv = append(kv, k)
	}
	self, err := os.Executable()
	if err != nil {
		fatalf("%v", err)
	}
	runs := make(map[int][]run)
	for rep := range *reps {
		for j := range kv {
			k := kv[(j+rep)%len(kv)]
			cmd := exec.Command(self, "-one", strconv.Itoa(k), "-problem", *problem, "-n", strconv.Itoa(*n),
				"-t1", strconv.FormatFloat(*t1, 'g', -1, 64), "-workers", strconv.Itoa(*workers), "-engine", *engine)
			var stdout bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
			if err := cmd.Run(); err != nil {
				fatalf("k = %d: %v", k, err)
			}
			var r run
			if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
				fatalf("k = %d: reading the run: %v", k, err)
			}
			runs[k] = append(runs[k], r)
			fmt.Fprintf(os.Stderr, "rep %d k %d: record %.3fs gradient %.3fs rss %.1f MiB\n", rep, k, r.RecordSec, r.GradSec, r.PeakRSSMiB)
		}
	}
	hash := runs[kv[0]][0].Hash
	fmt.Printf("%s, N = %d, t ∈ [0, %g], rtol = atol = 1e-8, %d worker(s), engine %s (ran: %s), %s/%s, %d CPUs; medians of %d interleaved runs\n",
		*problem, *n, *t1, *workers, *engine, runs[kv[0]][0].Engine, runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), *reps)
	fmt.Printf("%5s %10s %12s %12s %10s %10s %10s %10s %10s\n", "k", "steps/traj", "mesh MB", "footprint MB", "heap MB", "RSS MiB", "record s", "grad s", "total s")
	var rows [][]string
	rows = append(rows, []string{"problem", "n", "t1", "workers", "engine_ran", "k", "steps_per_traj", "mesh_bytes", "footprint_bytes", "live_heap_bytes", "peak_rss_mib", "record_s", "gradient_s", "total_s", "runs"})
	for _, k := range kv {
		rs := runs[k]
		for _, r := range rs {
			if r.Hash != hash {
				fatalf("k = %d: the gradient's bits differ from k = %d's (hash %s, want %s)", k, kv[0], r.Hash, hash)
			}
		}
		med := func(f func(r run) float64) float64 {
			v := make([]float64, len(rs))
			for i, r := range rs {
				v[i] = f(r)
			}
			slices.Sort(v)
			if len(v)%2 == 1 {
				return v[len(v)/2]
			}
			return (v[len(v)/2-1] + v[len(v)/2]) / 2
		}
		r := rs[0]
		rec, grad := med(func(r run) float64 { return r.RecordSec }), med(func(r run) float64 { return r.GradSec })
		total := med(func(r run) float64 { return r.RecordSec + r.GradSec })
		rss, heap := med(func(r run) float64 { return r.PeakRSSMiB }), med(func(r run) float64 { return float64(r.LiveHeap) })
		fmt.Printf("%5d %10d %12.2f %12.2f %10.2f %10.1f %10.3f %10.3f %10.3f\n", k, r.Steps / *n, float64(r.MeshBytes)/1e6,
			float64(r.Footprint)/1e6, heap/1e6, rss, rec, grad, total)
		rows = append(rows, []string{*problem, strconv.Itoa(*n), strconv.FormatFloat(*t1, 'g', -1, 64), strconv.Itoa(*workers), r.Engine,
			strconv.Itoa(k), strconv.Itoa(r.Steps / *n), strconv.FormatUint(r.MeshBytes, 10), strconv.FormatUint(r.Footprint, 10),
			strconv.FormatFloat(heap, 'f', 0, 64), strconv.FormatFloat(rss, 'f', 1, 64), strconv.FormatFloat(rec, 'f', 3, 64),
			strconv.FormatFloat(grad, 'f', 3, 64), strconv.FormatFloat(total, 'f', 3, 64), strconv.Itoa(len(rs))})
	}
	fmt.Printf("every run's loss and gradient: the same bits (hash %s)\n", hash)
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			fatalf("%v", err)
		}
		w := csv.NewWriter(f)
		if err := w.WriteAll(rows); err != nil {
			fatalf("%v", err)
		}
		if err := f.Close(); err != nil {
			fatalf("%v", err)
		}
	}
}

// setup returns the problem, its ensemble of n trajectories over
// [0, t1] and the method.
func setup(problem string, n int, t1 float64) (*gradsolve.Problem, *gradsolve.Ensemble, method.Method, error) {
	sweep := func(lo, hi float64, i int) float64 {
		if n == 1 {
			return lo
		}
		return lo + (hi-lo)*float64(i)/float64(n-1)
	}
	switch problem {
	case "halo":
		pr := systems.Halo()
		p := make([]float64, 0, 3*n)
		for i := range n {
			p = append(p, 1, sweep(0.6, 1, i), 0.2)
		}
		return pr, &gradsolve.Ensemble{N: n, P: p, T0: []float64{0}, T1: []float64{t1}}, method.Tsit5, nil
	case "kepler":
		pr, err := file("examples/kepler.ode")
		if err != nil {
			return nil, nil, nil, err
		}
		if pr.Y0 == nil || pr.Dim != 4 {
			return nil, nil, nil, fmt.Errorf("kepler: want a default initial state of 4 values")
		}
		y0 := make([]float64, 0, 4*n)
		for i := range n {
			y := slices.Clone(pr.Y0)
			y[3] *= sweep(0.8, 1.1, i) // the initial speed: the eccentricity
			y0 = append(y0, y...)
		}
		return pr, &gradsolve.Ensemble{N: n, Y0: y0, T0: []float64{0}, T1: []float64{t1}}, method.Tsit5, nil
	case "vdp":
		pr, err := file("examples/vanderpol.ode")
		if err != nil {
			return nil, nil, nil, err
		}
		p := make([]float64, n)
		for i := range p {
			p[i] = sweep(100, 1000, i)
		}
		return pr, &gradsolve.Ensemble{N: n, P: p, T0: []float64{0}, T1: []float64{t1}}, method.Rodas5P, nil
	}
	return nil, nil, nil, fmt.Errorf("-problem %q: want halo, kepler or vdp", problem)
}

// file compiles a problem file.
func file(path string) (*gradsolve.Problem, error) {
	m, err := parse.ParseFile(path)
	if err != nil {
		return nil, err
	}
	set, err := tape.Build(m)
	if err != nil {
		return nil, err
	}
	return set.Problem(), nil
}

// measure records the ensemble with Options.Checkpoint = k (1: every
// state), takes the gradient of SumSquares, and reports the run.
func measure(problem string, n int, t1 float64, k, workers int, engine string) (run, error) {
	pr, ens, meth, err := setup(problem, n, t1)
	if err != nil {
		return run{}, err
	}
	o := &gradsolve.Options{Method: meth, RTol: 1e-8, ATol: 1e-8, MaxSteps: 10_000_000, Workers: workers, Engine: engine}
	if k >= 2 {
		o.Checkpoint = k
	}
	ctx := context.Background()
	start := time.Now()
	rec, err := gradsolve.Record(ctx, pr, ens, o)
	if err != nil {
		return run{}, err
	}
	recSec := time.Since(start).Seconds()
	if err := rec.Result.Errs(); err != nil {
		return run{}, err
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	l, cot, err := gradsolve.SumSquares()(rec.Result)
	if err != nil {
		return run{}, err
	}
	start = time.Now()
	g, err := rec.Gradient(ctx, cot)
	if err != nil {
		return run{}, err
	}
	gradSec := time.Since(start).Seconds()
	steps := rec.Result.Total().Accepted
	s := gradsolve.Sizes{N: n, Dim: pr.Dim, NumParams: pr.NumParams, Record: true, Gradient: true, Workers: workers, MaxSteps: o.MaxSteps}
	if tb, ok := meth.(*method.Tableau); ok {
		s.SegmentStages = tb.Stages() - 1
	} else {
		s.Implicit = true
	}
	if k >= 2 {
		s.Checkpoint = k
	}
	fp, err := s.Footprint()
	if err != nil {
		return run{}, err
	}
	h := fnv.New64a()
	for _, v := range append(append([]float64{l}, g.P...), g.Y0...) {
		b := math.Float64bits(v)
		h.Write([]byte{byte(b), byte(b >> 8), byte(b >> 16), byte(b >> 24), byte(b >> 32), byte(b >> 40), byte(b >> 48), byte(b >> 56)})
	}
	peak, _ := memory.PeakRSS() // 0 where the platform does not tell it
	return run{K: k, Steps: steps, MeshBytes: rec.MeshBytes(), Footprint: fp.Bytes + fp.PerStep*uint64(steps), LiveHeap: ms.HeapAlloc,
		Engine: rec.Result.Engine, RecordSec: recSec, GradSec: gradSec, PeakRSSMiB: float64(peak) / (1 << 20), Hash: fmt.Sprintf("%016x", h.Sum64())}, nil
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "checkpoint: "+format+"\n", args...)
	os.Exit(1)
}
