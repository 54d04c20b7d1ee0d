package main

import (
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/plots"
	"github.com/gradsolve/gradsolve/systems"
)

// Training defaults: Adam at step size 0.02 decaying by 0.997 per
// update, 500 updates (about 30 s on two shared cores).
const (
	DefaultUpdates = 500
	DefaultLR      = 0.02
	DefaultDecay   = 0.997
)

func main() {
	log.SetFlags(0)
	out := flag.String("out", "", "directory for loss.png, rate.png, history.csv and fd.csv (empty: print only)")
	updates := flag.Int("updates", DefaultUpdates, "number of Adam updates")
	seed := flag.Uint64("seed", 1, "seed of the initial weights (and of the weights the finite-difference check picks)")
	lr := flag.Float64("lr", DefaultLR, "Adam's initial step size")
	decay := flag.Float64("decay", DefaultDecay, "factor on Adam's step size per update")
	quiet := flag.Bool("q", false, "print every 25th update only")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *out, *updates, *seed, *lr, *decay, *quiet); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, w io.Writer, out string, updates int, seed uint64, lr, decay float64, quiet bool) error {
	if updates < 0 {
		return fmt.Errorf("neural: -updates %d: must be ≥ 0", updates)
	}
	if out != "" {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
	}
	s := DefaultSetup()
	start := time.Now()
	tr, err := NewTrainer(ctx, s)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "network %v: %d weights; model built, compiled and data solved in %.2fs\n",
		s.Net.Sizes, s.Net.NumWeights(), time.Since(start).Seconds())
	fmt.Fprintf(w, "data: true Robertson, %d initial states, %d save times in [%g, %g]; training: Rodas5P rtol %g, reverse replay\n",
		s.N(), len(s.Save), s.Save[0], s.Save[len(s.Save)-1], s.Opts.RTol)
	theta := s.Net.Init(seed)
	theta0 := append([]float64(nil), theta...)

	// The finite-difference check at the starting weights, on the mesh
	// recorded there.
	rng := rand.New(rand.NewPCG(seed, 0x6664)) // "fd"
	fd0, err := fdCheck(ctx, tr, theta, rng)
	if err != nil {
		return err
	}
	printFD(w, "start", fd0)

	opt := &Adam{LR: lr, Decay: decay, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
	tr.Reset() // train from a recording of its own
	trainStart := time.Now()
	hist, err := tr.Train(ctx, theta, updates, opt, func(u Update) {
		if !quiet || u.Iter%25 == 0 || u.Iter == updates {
			mesh := "replayed"
			if u.Fresh {
				mesh = "recorded"
			}
			fmt.Fprintf(w, "update %4d  loss %.6e  |∇L| %.3e  mesh %s  %.3fs\n", u.Iter, u.Loss, u.GradNorm, mesh, u.Seconds)
		}
	})
	if err != nil {
		return err
	}
	wall := time.Since(trainStart).Seconds()
	l0, l1 := hist[0].Loss, hist[len(hist)-1].Loss
	fmt.Fprintf(w, "loss %.4e -> %.4e over %d updates: %.0f× lower\n", l0, l1, updates, l0/l1)
	fmt.Fprintf(w, "%.1fs of training: %.1f ms per update (%d recordings, %d replays, each with a reverse sweep)\n",
		wall, 1e3*wall/float64(len(hist)), tr.Records, tr.Replays)
	f0, err := tr.FreshLoss(ctx, theta0)
	if err != nil {
		return err
	}
	f1, err := tr.FreshLoss(ctx, theta)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "fresh adaptive solves: loss %.6e at the start, %.6e at the end (%.0f× lower; the last replay gave %.6e)\n",
		f0, f1, f0/f1, l1)
	if rec := tr.Recording(); rec != nil {
		st := rec.Result.Total()
		fmt.Fprintf(w, "last recorded mesh: %d accepted steps (%d rejected) over %d trajectories\n", st.Accepted, st.Rejected, rec.Result.N)
	}

	fd1, err := fdCheck(ctx, tr, theta, rng)
	if err != nil {
		return err
	}
	printFD(w, "end", fd1)

	rate, err := rateCurves(ctx, s, theta0, theta)
	if err != nil {
		return err
	}
	for _, r := range rate.summary {
		fmt.Fprintln(w, r)
	}
	if out == "" {
		return nil
	}
	if err := writeOutputs(out, hist, fd0, fd1, rate); err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %s\n", filepath.Join(out, "{loss.png,rate.png,history.csv,fd.csv}"))
	return nil
}

// fdCheck checks, per block of the network (each weight matrix and
// bias vector), the weight of the largest gradient component and one
// drawn at random.
func fdCheck(ctx context.Context, tr *Trainer, theta []float64, rng *rand.Rand) ([]FDResult, error) {
	r, _, err := tr.FDCheck(ctx, theta, func(g []float64) []int { return PickWeights(tr.Setup.Net, g, rng) })
	return r, err
}

// PickWeights returns, per block, the index of the largest |g_j| and,
// in blocks of more than one weight, one other index drawn at random.
func PickWeights(n Net, g []float64, rng *rand.Rand) []int {
	var idx []int
	for _, b := range n.Blocks() {
		best := b.Lo
		for j := b.Lo; j < b.Hi; j++ {
			if math.Abs(g[j]) > math.Abs(g[best]) {
				best = j
			}
		}
		idx = append(idx, best)
		if b.Hi-b.Lo > 1 {
			j := best
			for j == best {
				j = b.Lo + rng.IntN(b.Hi-b.Lo)
			}
			idx = append(idx, j)
		}
	}
	return idx
}

func printFD(w io.Writer, at string, fd []FDResult) {
	var wc, wr float64
	fmt.Fprintf(w, "finite differences at the %s weights, same mesh (central: h = %g·max(|θ_j|, 1); Richardson: h = %g·max(|θ_j|, 1)):\n",
		at, CentralEps, RichardsonEps)
	for _, r := range fd {
		fmt.Fprintf(w, "  %-8s  replay %+.10e  Richardson %+.10e  rel %.1e  central rel %.1e\n",
			r.Name, r.Adjoint, r.Richardson, r.RelRichardson, r.RelCentral)
		wc, wr = math.Max(wc, r.RelCentral), math.Max(wr, r.RelRichardson)
	}
	fmt.Fprintf(w, "  worst relative disagreement over %d weights: %.2e (Richardson), %.2e (central)\n", len(fd), wr, wc)
}

// rates holds the learned and true autocatalytic rates along true
// trajectories, for rate.png: one panel per initial state.
type rates struct {
	panels  []plots.Panel
	summary []string
}

// rateCurves solves true Robertson from a training initial state and
// from two held out (y3(0) = 0.1 and 0.35) at 61 log-spaced times and
// compares the true rate k2·y2² with the network's at the start and at
// the end of training, on the true states.
func rateCurves(ctx context.Context, s *Setup, theta0, theta []float64) (*rates, error) {
	var ts []float64
	for k := 0; k <= 70; k++ {
		ts = append(ts, math.Pow(10, -4+float64(k)/10))
	}
	ts[len(ts)-1] = s.T1
	y0 := []float64{1, 0, 0, 0.9, 0, 0.1, 0.65, 0, 0.35}
	labels := []string{"y0 = (1, 0, 0), trained on", "y0 = (0.9, 0, 0.1), held out", "y0 = (0.65, 0, 0.35), held out"}
	res, err := gradsolve.Solve(ctx, systems.Robertson(), &gradsolve.Ensemble{N: 3, Y0: y0, P: []float64{K1, K2, K3},
		T0: []float64{0}, T1: []float64{s.T1}, Save: ts}, &s.DataOpts)
	if err != nil {
		return nil, err
	}
	if err := res.Errs(); err != nil {
		return nil, err
	}
	r := &rates{}
	for i := range 3 {
		tru, l0, l1 := make([]float64, len(ts)), make([]float64, len(ts)), make([]float64, len(ts))
		worst := 0.0
		for k := range ts {
			y := res.SavedRow(i, k)
			tru[k] = K2 * y[1] * y[1]
			l0[k] = s.Net.Rate(theta0, y[0], y[1], y[2])
			l1[k] = s.Net.Rate(theta, y[0], y[1], y[2])
			if ts[k] >= 1e-3 { // past the initial transient of y2
				worst = math.Max(worst, math.Abs(l1[k]/tru[k]-1))
			}
		}
		r.panels = append(r.panels, plots.Panel{Title: labels[i], XLabel: "t", YLabel: "rate (concentration / time)",
			Series: []plots.Series{{Name: "true k2·y2²", X: ts, Y: tru}, {Name: "network, start", X: ts, Y: l0},
				{Name: "network, trained", X: ts, Y: l1}},
			Opt: &plots.Options{LogX: true, LogY: true}})
		r.summary = append(r.summary, fmt.Sprintf("learned rate on %s: largest relative error %.2e for t ≥ 1e-3", labels[i], worst))
	}
	return r, nil
}

func writeOutputs(out string, hist []Update, fd0, fd1 []FDResult, r *rates) error {
	it, loss := make([]float64, len(hist)), make([]float64, len(hist))
	for k, u := range hist {
		it[k], loss[k] = float64(u.Iter), u.Loss
	}
	if err := plots.Lines(filepath.Join(out, "loss.png"), "Neural Robertson: training loss (Rodas5P, reverse replay)",
		"Adam update", "loss ½Σ((y − data)/σ)²", []plots.Series{{Name: "loss", X: it, Y: loss}},
		&plots.Options{LogY: true}); err != nil {
		return err
	}
	if err := plots.Panels(filepath.Join(out, "rate.png"), "Autocatalytic rate on true Robertson trajectories", r.panels); err != nil {
		return err
	}
	rows := [][]string{{"update", "loss", "grad_norm", "mesh", "seconds"}}
	for _, u := range hist {
		mesh := "replayed"
		if u.Fresh {
			mesh = "recorded"
		}
		rows = append(rows, []string{strconv.Itoa(u.Iter), fmtG(u.Loss), fmtG(u.GradNorm), mesh, strconv.FormatFloat(u.Seconds, 'f', 4, 64)})
	}
	if err := writeCSV(filepath.Join(out, "history.csv"), rows); err != nil {
		return err
	}
	rows = [][]string{{"weights", "weight", "index", "replay_gradient", "central", "rel_central", "richardson", "rel_richardson"}}
	for k, fd := range [][]FDResult{fd0, fd1} {
		for _, f := range fd {
			rows = append(rows, []string{[]string{"start", "trained"}[k], f.Name, strconv.Itoa(f.Index),
				fmtG(f.Adjoint), fmtG(f.Central), fmtG(f.RelCentral), fmtG(f.Richardson), fmtG(f.RelRichardson)})
		}
	}
	return writeCSV(filepath.Join(out, "fd.csv"), rows)
}

func fmtG(x float64) string { return strconv.FormatFloat(x, 'g', 10, 64) }

func writeCSV(path string, rows [][]string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	if err := w.WriteAll(rows); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
