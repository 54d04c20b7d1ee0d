// Command gpu sweeps the throughput of the cuda engine over ensemble
// sizes n = 2^lo … 2^hi (run by bench/gpu/run.sh), and of a CPU engine
// on the same work for the ratio:
//
//	go run ./bench/gpu [-engine cuda] [-cpu-engine auto] [-lo 10] [-hi 24]
//	    [-sens-hi 20] [-cpu-hi 20] [-cpu-sens-hi 18] [-budget 1s]
//	    [-deadline 6m] [-out DIR]
//	go run ./bench/gpu -memory
//
// The workloads (the problem files of examples/, each trajectory with
// its own parameter):
//
//   - lorenz: forward, t ∈ [0, 1], ρ from 10 to 24, Tsit5 at rtol =
//     atol = 1e-6;
//   - lorenz-adjoint: the gradient of a sum of squares of the final
//     states by the reverse mode (the explicit in-kernel adjoint,
//     gs_erk_tsit5_record then gs_erk_tsit5_adjoint), lorenz's
//     ensemble and options;
//   - halo: the halo orbit forward, q from 0.6 to 1, DP8 at 1e-8;
//   - halo-adjoint: its gradient by the reverse mode (gs_erk_dp8_record,
//     gs_erk_dp8_adjoint);
//   - halo-sens: the halo orbit with forward sensitivities to (vc, q),
//     DP8 at 1e-8;
//   - robertson: Rodas5P at rtol 1e-6, atol 1e-10, k1 from 0.02 to 0.06;
//   - robertson-adjoint: its gradient by the reverse mode (the
//     Rosenbrock in-kernel adjoint, gs_ros_rodas5p_record then
//     gs_ros_rodas5p_adjoint).
//
// The gradient and sensitivity workloads go up to 2^sens-hi (on the CPU
// engine to 2^cpu-sens-hi, the others to 2^cpu-hi). A gradient
// is timed whole: the record launch (the forward solve writing its
// meshes), the adjoint launch and the host's work between them.
//
// The sweep runs every workload on the GPU engine first, then on the
// CPU engine (up to 2^cpu-hi), so that the deadline cuts the CPU's
// points, never the GPU's. A workload the engine does not serve is
// skipped with the engine's reason (printed, and a row with status
// "skipped"). Each point is the fastest of the solves that fit in
// -budget (one at least); the sweep stops starting points once
// -deadline has passed. It writes gpu.csv (one row a point), ratios.csv
// (each gradient's time over its forward solve's on the same engine and
// n — the target is at most 3 on the GPU — and each workload's
// CPU time over its GPU time at the same n — the target is at least 20)
// and gpu.png (µs per trajectory against n, log–log) into -out, and
// prints the ratios.
//
// -memory measures no time: it solves 64 trajectories of each case of
// docs/gpu.md's memory table on the CPU reference engine (cpu-erk,
// cpu-ros), takes the longest mesh (accepted steps), and prints the
// device memory per trajectory of the cuda engine's record and adjoint
// launches for it (gpu.RecordBytes, gpu.AdjointBytes: the formula the
// engine's tests check against the allocations, TestMeasuredMemory).
package main

import (
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/gradsolve/gradsolve"
	enginegpu "github.com/gradsolve/gradsolve/internal/engine/gpu"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/plots"
	"github.com/gradsolve/gradsolve/router"
	"github.com/gradsolve/gradsolve/sym/parse"
	"github.com/gradsolve/gradsolve/sym/tape"
)

// workload is one measured job.
type workload struct {
	name, file string
	ens        func(n int) *gradsolve.Ensemble
	opts       gradsolve.Options
	gradient   bool   // the reverse-mode gradient of a sum of squares, not a solve
	sens       bool   // bounded by -sens-hi
	forward    string // a gradient's forward workload (the same ensemble and options), for the ratio
}

// params returns n rows of a parameter vector base with entry j swept
// from lo to hi.
func params(n int, base []float64, j int, lo, hi float64) []float64 {
	p := make([]float64, 0, n*len(base))
	for i := range n {
		row := append([]float64(nil), base...)
		row[j] = lo
		if n > 1 {
			row[j] = lo + (hi-lo)*float64(i)/float64(n-1)
		}
		p = append(p, row...)
	}
	return p
}

func lorenzEns(n int) *gradsolve.Ensemble {
	return &gradsolve.Ensemble{N: n, P: params(n, []float64{0, 10, 8.0 / 3}, 0, 10, 24), T0: []float64{0}, T1: []float64{1}}
}

func haloEns(n int) *gradsolve.Ensemble {
	return &gradsolve.Ensemble{N: n, P: params(n, []float64{1, 0, 0.2}, 1, 0.6, 1)}
}

func robertsonEns(n int) *gradsolve.Ensemble {
	return &gradsolve.Ensemble{N: n, P: params(n, []float64{0, 3e7, 1e4}, 0, 0.02, 0.06)}
}

var (
	lorenzOpts    = gradsolve.Options{Method: method.Tsit5, RTol: 1e-6, ATol: 1e-6}
	haloOpts      = gradsolve.Options{Method: method.DP8, RTol: 1e-8, ATol: 1e-8}
	robertsonOpts = gradsolve.Options{Method: method.Rodas5P, RTol: 1e-6, ATol: 1e-10}
)

// reverse returns o with the reverse mode.
func reverse(o gradsolve.Options) gradsolve.Options {
	o.Mode = router.Reverse
	return o
}

var workloads = []workload{
	{name: "lorenz", file: "lorenz.ode", ens: lorenzEns, opts: lorenzOpts},
	{name: "lorenz-adjoint", file: "lorenz.ode", ens: lorenzEns, opts: reverse(lorenzOpts), gradient: true, sens: true, forward: "lorenz"},
	{name: "halo", file: "halo.ode", ens: haloEns, opts: haloOpts},
	{name: "halo-adjoint", file: "halo.ode", ens: haloEns, opts: reverse(haloOpts), gradient: true, sens: true, forward: "halo"},
	{name: "halo-sens", file: "halo.ode", sens: true, ens: haloEns,
		opts: gradsolve.Options{Method: method.DP8, RTol: 1e-8, ATol: 1e-8,
			Sens: &gradsolve.Sensitivity{Wrt: []gradsolve.Wrt{gradsolve.Param(0), gradsolve.Param(1)}}}},
	{name: "robertson", file: "robertson.ode", ens: robertsonEns, opts: robertsonOpts},
	{name: "robertson-adjoint", file: "robertson.ode", ens: robertsonEns, opts: reverse(robertsonOpts), gradient: true, sens: true, forward: "robertson"},
}

// row is one point of the sweep.
type row struct {
	workload, engine, status string
	n                        int
	seconds                  float64
}

func main() {
	engineF := flag.String("engine", "cuda", "the GPU engine measured (cuda; cuda-emu with GRADSOLVE_CUDA_EMULATE=1)")
	cpuF := flag.String("cpu-engine", "auto", "the CPU engine of the ratio (auto: cpu-lanes, cpu-ros-lanes for Rosenbrock methods; none: no CPU runs)")
	lo := flag.Int("lo", 10, "the smallest ensemble, 2^lo")
	hi := flag.Int("hi", 24, "the largest ensemble, 2^hi")
	sensHi := flag.Int("sens-hi", 20, "the largest ensemble of the sensitivity and gradient workloads, 2^sens-hi")
	cpuHi := flag.Int("cpu-hi", 20, "the largest ensemble the CPU engine runs, 2^cpu-hi")
	cpuSensHi := flag.Int("cpu-sens-hi", 18, "the largest ensemble of the sensitivity and gradient workloads the CPU engine runs, 2^cpu-sens-hi")
	budget := flag.Duration("budget", time.Second, "time a point repeats its solve for (one solve at least)")
	deadline := flag.Duration("deadline", 6*time.Minute, "no point starts after this much time")
	examples := flag.String("examples", "examples", "the directory of the problem files")
	out := flag.String("out", "", "directory for gpu.csv and gpu.png (none: stdout only)")
	memory := flag.Bool("memory", false, "print the record and adjoint launches' device memory per trajectory of docs/gpu.md's cases, and exit")
	flag.Parse()
	if *memory {
		if err := memoryTable(*examples); err != nil {
			fatalf("%v", err)
		}
		return
	}
	if *lo < 0 || *hi < *lo || *hi > 30 {
		fatalf("-lo %d, -hi %d: want 0 ≤ lo ≤ hi ≤ 30", *lo, *hi)
	}
	start := time.Now()
	var rows []row
	fmt.Printf("%-18s %-14s %10s %12s %14s  %s\n", "workload", "engine", "n", "seconds", "µs/trajectory", "status")
	probs := map[string]*gradsolve.Problem{}
	for _, w := range workloads {
		if probs[w.file] == nil {
			pr, err := load(filepath.Join(*examples, w.file))
			if err != nil {
				fatalf("%v", err)
			}
			probs[w.file] = pr
		}
	}
	engines := []string{*engineF}
	if *cpuF != "none" {
		engines = append(engines, *cpuF)
	}
	for _, eng := range engines {
		for _, w := range workloads {
			pr := probs[w.file]
			top := *hi
			if w.sens {
				top = min(top, *sensHi)
			}
			if eng != *engineF {
				top = min(top, *cpuHi)
				if w.sens {
					top = min(top, *cpuSensHi)
				}
			}
			// A first solve compiles the kernels (NVRTC, or the host's
			// C++ compiler): not part of any point.
			if r := measure(pr, w, eng, 1<<*lo, 0); r.seconds == 0 {
				rows = append(rows, r)
				fmt.Printf("%-18s %-14s %10d %12s %14s  %s\n", r.workload, r.engine, r.n, "-", "-", r.status)
				continue
			}
			for k := *lo; k <= top; k++ {
				if time.Since(start) > *deadline {
					fmt.Printf("deadline %v passed: the sweep stops at %s on %s, n = 2^%d\n", *deadline, w.name, eng, k)
					goto done
				}
				r := measure(pr, w, eng, 1<<k, *budget)
				rows = append(rows, r)
				if r.seconds > 0 {
					fmt.Printf("%-18s %-14s %10d %12.4g %14.4g  %s\n", r.workload, r.engine, r.n, r.seconds, r.seconds/float64(r.n)*1e6, r.status)
				} else {
					fmt.Printf("%-18s %-14s %10d %12s %14s  %s\n", r.workload, r.engine, r.n, "-", "-", r.status)
				}
				if r.seconds == 0 {
					break // skipped or failed: the larger sizes would be too
				}
			}
		}
	}
done:
	rs := ratios(rows, *engineF)
	if len(rs) > 0 {
		fmt.Printf("\n%-10s %-18s %-18s %-14s %10s %8s\n", "ratio", "workload", "over", "engine", "n", "value")
		for _, r := range rs {
			fmt.Printf("%-10s %-18s %-18s %-14s %10d %8.3g\n", r.kind, r.workload, r.over, r.engine, r.n, r.value)
		}
	}
	if *out != "" {
		if err := write(*out, rows, rs); err != nil {
			fatalf("%v", err)
		}
		fmt.Printf("wrote %s, %s and %s\n", filepath.Join(*out, "gpu.csv"), filepath.Join(*out, "ratios.csv"), filepath.Join(*out, "gpu.png"))
	}
}

// ratio is a quotient of two measured points at the same n: a
// gradient's time over its forward solve's on one engine (kind
// "adjoint", over the forward workload), or a workload's time on the
// CPU engine over its time on the GPU engine (kind "cpu/gpu", over the
// GPU engine, engine the CPU's).
type ratio struct {
	kind, workload, over, engine string
	n                            int
	value                        float64
}

// ratios returns the ratios of the measured rows: for each gradient
// workload and engine, its time over its forward workload's at each n
// both have; for each workload, the CPU engine's time over the GPU
// engine's (gpu) at each n both have.
func ratios(rows []row, gpu string) []ratio {
	type key struct {
		w, eng string
		n      int
	}
	t := map[key]float64{}
	for _, r := range rows {
		if r.seconds > 0 {
			t[key{r.workload, r.engine, r.n}] = r.seconds
		}
	}
	var out []ratio
	for _, r := range rows {
		if r.seconds == 0 {
			continue
		}
		for _, w := range workloads {
			if w.name != r.workload || w.forward == "" {
				continue
			}
			if f := t[key{w.forward, r.engine, r.n}]; f > 0 {
				out = append(out, ratio{"adjoint", r.workload, w.forward, r.engine, r.n, r.seconds / f})
			}
		}
	}
	// The GPU engine's rows name the engine that ran ("cuda"); the
	// CPU's rows name theirs.
	for _, r := range rows {
		if r.seconds == 0 || r.engine == gpu {
			continue
		}
		if g := t[key{r.workload, gpu, r.n}]; g > 0 {
			out = append(out, ratio{"cpu/gpu", r.workload, gpu, r.engine, r.n, r.seconds / g})
		}
	}
	return out
}

// memoryTable prints, for each case, the longest of 64 trajectories'
// meshes on the reference engine and the device memory per trajectory
// of the cuda engine's record launch (with its room: 128 steps doubled
// until the longest fits, gpu.FirstMeshCap) and adjoint launch (no
// save times).
func memoryTable(examples string) error {
	haloLong := func(n int) *gradsolve.Ensemble { e := haloEns(n); e.T0, e.T1 = []float64{0}, []float64{200}; return e }
	cases := []struct {
		name, file string
		ens        func(int) *gradsolve.Ensemble
		opts       gradsolve.Options
	}{
		{"lorenz Tsit5 1e-6, t in [0, 1]", "lorenz.ode", lorenzEns, lorenzOpts},
		{"halo Tsit5 1e-8, t in [0, 200]", "halo.ode", haloLong, gradsolve.Options{Method: method.Tsit5, RTol: 1e-8, ATol: 1e-8}},
		{"halo DP8 1e-8, t in [0, 20]", "halo.ode", haloEns, haloOpts},
		{"robertson Rodas5P 1e-6, 1e-10", "robertson.ode", robertsonEns, robertsonOpts},
	}
	fmt.Printf("%-32s %3s %3s %6s %14s %14s %10s %14s\n", "case", "D", "P", "steps", "(steps+1)·D·8", "adjoint B/traj", "room", "record B/traj")
	for _, c := range cases {
		pr, err := load(filepath.Join(examples, c.file))
		if err != nil {
			return err
		}
		o := c.opts
		fam := enginegpu.ERK
		o.Engine = "cpu-erk"
		if o.Method.Family() == method.RosenbrockFamily {
			fam, o.Engine = enginegpu.ROS, "cpu-ros"
		}
		res, err := gradsolve.Solve(context.Background(), pr, c.ens(64), &o)
		if err == nil {
			err = res.Errs()
		}
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		steps := 0
		for _, st := range res.Stats {
			steps = max(steps, st.Accepted)
		}
		room := enginegpu.FirstMeshCap
		for room < steps {
			room *= 2
		}
		d, np := pr.Dim, pr.NumParams
		fmt.Printf("%-32s %3d %3d %6d %14d %14d %10d %14d\n", c.name, d, np, steps, 8*(steps+1)*d,
			enginegpu.AdjointBytes(fam, d, np, 0, steps, false), room, enginegpu.RecordBytes(fam, d, np, 0, room))
	}
	return nil
}

// load compiles a problem file.
func load(path string) (*gradsolve.Problem, error) {
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

// measure runs workload w on engine eng ("auto": cpu-lanes, or
// cpu-ros-lanes for a Rosenbrock method) at n trajectories: the fastest of the runs
// that fit in budget. A refusal is a row with status "skipped: <why>".
func measure(pr *gradsolve.Problem, w workload, eng string, n int, budget time.Duration) row {
	r := row{workload: w.name, engine: eng, n: n}
	o := w.opts
	if eng == "auto" {
		// The CPU lane engine of the method's family: the router would
		// hand large ensembles to the GPU engine.
		eng = "cpu-lanes"
		if o.Method.Family() != method.ExplicitFamily {
			eng = "cpu-ros-lanes"
		}
	}
	o.Engine = eng
	r.engine = eng
	ens := w.ens(n)
	ctx := context.Background()
	best := math.Inf(1)
	for t0 := time.Now(); best == math.Inf(1) || time.Since(t0) < budget; {
		s := time.Now()
		var err error
		var ranOn string
		if w.gradient {
			var g *gradsolve.Gradient
			_, g, _, err = gradsolve.LossGradient(ctx, pr, ens, &o, gradsolve.SumSquares())
			if g != nil {
				ranOn = g.Decision.Engine
			}
		} else {
			var res *gradsolve.Result
			if res, err = gradsolve.Solve(ctx, pr, ens, &o); err == nil {
				ranOn = res.Engine
				err = res.Errs()
			}
		}
		el := time.Since(s).Seconds()
		switch {
		case errors.Is(err, gradsolve.ErrInput):
			r.status = "skipped: " + err.Error()
			return r
		case err != nil:
			r.status = "failed: " + err.Error()
			return r
		}
		r.engine = ranOn
		best = math.Min(best, el)
	}
	r.seconds, r.status = best, "ok"
	return r
}

// write writes the rows as gpu.csv, the ratios as ratios.csv and the
// measured rows as gpu.png.
func write(dir string, rows []row, rs []ratio) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "gpu.csv"))
	if err != nil {
		return err
	}
	cw := csv.NewWriter(f)
	_ = cw.Write([]string{"workload", "engine", "n", "seconds", "us_per_trajectory", "status"})
	var order []string
	series := map[string]*plots.Series{}
	for _, r := range rows {
		us := ""
		if r.seconds > 0 {
			us = strconv.FormatFloat(r.seconds/float64(r.n)*1e6, 'g', 6, 64)
			k := r.workload + " on " + r.engine
			if series[k] == nil {
				order = append(order, k)
				series[k] = &plots.Series{Name: k}
			}
			series[k].X = append(series[k].X, float64(r.n))
			series[k].Y = append(series[k].Y, r.seconds/float64(r.n)*1e6)
		}
		_ = cw.Write([]string{r.workload, r.engine, strconv.Itoa(r.n), strconv.FormatFloat(r.seconds, 'g', 6, 64), us, r.status})
	}
	cw.Flush()
	if err := errors.Join(cw.Error(), f.Close()); err != nil {
		return err
	}
	if f, err = os.Create(filepath.Join(dir, "ratios.csv")); err != nil {
		return err
	}
	cw = csv.NewWriter(f)
	_ = cw.Write([]string{"kind", "workload", "over", "engine", "n", "ratio"})
	for _, r := range rs {
		_ = cw.Write([]string{r.kind, r.workload, r.over, r.engine, strconv.Itoa(r.n), strconv.FormatFloat(r.value, 'g', 6, 64)})
	}
	cw.Flush()
	if err := errors.Join(cw.Error(), f.Close()); err != nil {
		return err
	}
	if len(order) == 0 {
		return nil
	}
	var ss []plots.Series
	for _, k := range order {
		ss = append(ss, *series[k])
	}
	return plots.Lines(filepath.Join(dir, "gpu.png"), "throughput of the cuda engine and a CPU engine", "n (trajectories)", "µs per trajectory", ss, &plots.Options{LogX: true, LogY: true})
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "gpu: "+format+"\n", args...)
	os.Exit(1)
}
