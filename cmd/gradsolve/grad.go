package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/router"
)

// parseSens turns --sens into sensitivity columns (see parseWrt).
func parseSens(pr *ode.Problem, spec string) ([]gradsolve.Wrt, error) {
	return parseWrt(pr, "sens", spec)
}

const gradUsage = `usage: gradsolve grad [FILE.ode] [flags]

Solve an ensemble and compute the gradient of a scalar loss of its final
states, of its states at the --saveat times, or of both, with respect to
the parameters and initial values --wrt names (default: all of them). The
gradient is the exact derivative of the solution the solve returned, by
the reverse replay (record the accepted steps, run the discrete adjoint)
or by forward sensitivities of the --wrt columns alone; --mode chooses,
and auto lets the router decide from what the engines can serve and its
cost model. --engine names the engine (default: the router's pick).

Give the loss as one of
  --loss sumsq   ½ Σ ‖y(t1)‖² over the final states
  --data D.npy   ½ Σ w·(y − D)²: D is n×dim or dim (targets for the final
                 states), or n×k×dim or 1×k×dim (targets for the states at
                 the k --saveat times). With saved-state targets,
                 --data-final F.npy (n×dim or dim) puts the final states in
                 the loss too. --weights W.npy weights the residuals of
                 --data (its shape, or dim; for saved states also k×dim),
                 --weights-final V.npy those of --data-final (n×dim or dim);
                 weights default to 1 and must be ≥ 0.
  --cot C.npy    the linear loss Σ C·y with the cotangent C = dL/dy: n×dim
                 (the final states) or n×k×dim (the saved states). With a
                 saved-state C, --cot-final F.npy (n×dim) adds dL/dy(t1).

With --out DIR it writes grad_params.npy (n × the parameters --wrt names,
in the order given), grad_y0.npy (n × the initial values it names, in the
order given; n×0 when it names none), y_final.npy, y_saved.npy with
--saveat, status.npy, params.npy (n×m, the parameters used) and
stats.json, last (see gradsolve solve -h). stats.json lists the columns
(grad_params_columns, grad_y0_columns), the mode and its reason, the
engine that ran (engine, router_engine) and why (engine_reason), and the
number of sensitivity columns forward mode integrated
(sensitivity_columns; 0 for the reverse replay). The reverse replay records every accepted step: (dim+2)×8
bytes per step of each trajectory beyond the arrays of a solve.

flags:
`

// gradFlags are the flags of "gradsolve grad" that solve does not have.
type gradFlags struct {
	loss                  string
	data, dataFinal       string
	weights, weightsFinal string
	cot, cotFinal         string
	wrt                   string
	mode                  string
	checkpoint            int    // --checkpoint: the recording keeps every k-th state
	shard                 *shard // the run's shard (shard.go); nil: the whole ensemble
}

func addGradFlags(fs *flag.FlagSet, g *gradFlags) {
	fs.StringVar(&g.loss, "loss", "", "built-in loss: sumsq (½ Σ ‖y_final‖²)")
	fs.StringVar(&g.data, "data", "", "FILE.npy of targets: n×dim or dim (final states) or n×k×dim, 1×k×dim (states at the --saveat times); loss ½ Σ w·(y − data)²")
	fs.StringVar(&g.dataFinal, "data-final", "", "FILE.npy of targets for the final states (n×dim or dim) when --data holds saved states")
	fs.StringVar(&g.weights, "weights", "", "FILE.npy of weights ≥ 0 for the residuals of --data: its shape, or dim (per component); for saved states also k×dim (default 1)")
	fs.StringVar(&g.weightsFinal, "weights-final", "", "FILE.npy of weights ≥ 0 for the residuals of --data-final: n×dim or dim (default 1)")
	fs.StringVar(&g.cot, "cot", "", "FILE.npy of the cotangent dL/dy: n×dim (final states) or n×k×dim (states at the --saveat times); loss Σ cot·y")
	fs.StringVar(&g.cotFinal, "cot-final", "", "FILE.npy of dL/dy_final (n×dim) when --cot holds saved states")
	fs.StringVar(&g.wrt, "wrt", "", "columns of the gradient: comma-separated parameter names, 'params' (every parameter), 'y0' (every initial value), 'y0.NAME' (default params,y0); forward mode integrates only these")
	fs.IntVar(&g.checkpoint, "checkpoint", 0, "reverse mode: keep each trajectory's state at every k-th accepted step only (and t0), and recompute the steps between in the reverse sweep: about (dim+1)/k + 1 numbers a step instead of dim+2, the same bits (0 or 1: every state)")
	fs.StringVar(&g.mode, "mode", "auto", "how to differentiate: auto (the router decides), forward (sensitivities), reverse (record and replay)")
}

// gradStats are the entries of stats.json that only grad writes.
type gradStats struct {
	// RouterEngine is the engine the router's decision names: the one
	// that ran (the same as engine).
	RouterEngine string `json:"router_engine"`
	// SensColumns is the number of sensitivity columns forward mode
	// integrated (0 for the reverse replay).
	SensColumns int `json:"sensitivity_columns"`
	// ParamColumns and Y0Columns name the columns of grad_params.npy
	// and grad_y0.npy, in order.
	ParamColumns []string `json:"grad_params_columns"`
	Y0Columns    []string `json:"grad_y0_columns"`
	// LossStates says which states the loss uses: "final", "saved".
	LossStates []string `json:"loss_states"`
}

// gradLoss builds the loss the flags describe, for n trajectories of
// dimension dim with k save times, and says which states it uses.
func gradLoss(g *gradFlags, n, dim, k int) (gradsolve.ChunkLoss, []string, error) {
	given := 0
	for _, v := range []string{g.cot, g.loss, g.data} {
		if v != "" {
			given++
		}
	}
	if given != 1 {
		return nil, nil, fmt.Errorf("grad: give exactly one of --loss sumsq, --data FILE.npy, --cot FILE.npy")
	}
	for _, c := range []struct{ flag, v, needs, have string }{
		{"data-final", g.dataFinal, "data", g.data},
		{"weights", g.weights, "data", g.data},
		{"weights-final", g.weightsFinal, "data-final", g.dataFinal},
		{"cot-final", g.cotFinal, "cot", g.cot},
	} {
		if c.v != "" && c.have == "" {
			return nil, nil, fmt.Errorf("--%s %s needs --%s", c.flag, c.v, c.needs)
		}
	}
	switch {
	case g.loss != "":
		if g.loss != "sumsq" {
			return nil, nil, fmt.Errorf("--loss %q: known losses: sumsq", g.loss)
		}
		return gradsolve.SumSquaresChunks(), []string{"final"}, nil
	case g.data != "":
		return dataLoss(g, n, dim, k)
	}
	return cotLoss(g, n, dim, k)
}

// loadWeights reads a flag's .npy file of weights: finite (load checks
// that) and ≥ 0.
func loadWeights(flagName, path string) (*loaded, error) {
	l, err := load(flagName, path)
	if err != nil {
		return nil, err
	}
	for i, v := range l.a.Data {
		if v < 0 {
			return nil, fmt.Errorf("%s: element %s = %g: weights must be finite and ≥ 0", l.name(), index(l.a.Shape, i), v)
		}
	}
	return l, nil
}

// savedShape checks that l, a 3-D array for the saved states, fits n
// trajectories of dimension dim with k save times: n×k×dim, or 1×k×dim
// where shared is allowed.
func savedShape(l *loaded, n, dim, k int, shared bool) error {
	if k == 0 {
		return fmt.Errorf("%s: shape %v holds saved states (n × k × states): give the save times with --saveat", l.name(), pyShape(l.a.Shape))
	}
	shapes := [][]int{{n, k, dim}}
	if shared && n != 1 {
		shapes = append(shapes, []int{1, k, dim})
	}
	return shapeErr(l, fmt.Sprintf("(n × k × states, k = %d --saveat times)", k), shapes...)
}

// pyShape writes a shape as a Python tuple.
func pyShape(shape []int) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = strconv.Itoa(d)
	}
	if len(parts) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// dataLoss is the least-squares loss of --data and its companions.
func dataLoss(g *gradFlags, n, dim, k int) (gradsolve.ChunkLoss, []string, error) {
	d, err := openInput("data", g.data)
	if err != nil {
		return nil, nil, err
	}
	g.take(d, d.a.Dims() == 3)
	var fit lossArrays
	if d.a.Dims() != 3 {
		// Targets for the final states.
		if err := shapeErr(d, "(n × states; or n × k × states for the states at the --saveat times)", []int{n, dim}, []int{dim}); err != nil {
			return nil, nil, err
		}
		if g.dataFinal != "" {
			return nil, nil, fmt.Errorf("--data-final %s: --data %s already holds the final states; --data-final goes with saved-state targets (n × k × states)", g.dataFinal, g.data)
		}
		if fit.final, err = lossRows(d, n, 2); err != nil {
			return nil, nil, err
		}
		if g.weights != "" {
			w, err := openChecked("weights", g.weights, true)
			if err != nil {
				return nil, nil, err
			}
			g.take(w, false)
			if err := shapeErr(w, "(n × states, or states: per component)", []int{n, dim}, []int{dim}); err != nil {
				return nil, nil, err
			}
			if fit.finalW, err = lossRows(w, n, 2); err != nil {
				return nil, nil, err
			}
		}
		return fit.loss(), []string{"final"}, nil
	}
	if err := savedShape(d, n, dim, k, true); err != nil {
		return nil, nil, err
	}
	if fit.saved, err = lossRows(d, n, 3); err != nil {
		return nil, nil, err
	}
	states := []string{"saved"}
	if g.weights != "" {
		w, err := openChecked("weights", g.weights, true)
		if err != nil {
			return nil, nil, err
		}
		g.take(w, true)
		shapes := [][]int{{n, k, dim}, {1, k, dim}, {k, dim}, {dim}}
		if n == 1 {
			shapes = slices.Delete(shapes, 1, 2)
		}
		if err := shapeErr(w, "(n × k × states, k × states or states)", shapes...); err != nil {
			return nil, nil, err
		}
		if fit.savedW, err = lossRows(w, n, 3); err != nil {
			return nil, nil, err
		}
	}
	if g.dataFinal != "" {
		f, err := openInput("data-final", g.dataFinal)
		if err != nil {
			return nil, nil, err
		}
		g.take(f, false)
		if err := shapeErr(f, "(n × states)", []int{n, dim}, []int{dim}); err != nil {
			return nil, nil, err
		}
		if fit.final, err = lossRows(f, n, 2); err != nil {
			return nil, nil, err
		}
		states = append([]string{"final"}, states...)
		if g.weightsFinal != "" {
			w, err := openChecked("weights-final", g.weightsFinal, true)
			if err != nil {
				return nil, nil, err
			}
			g.take(w, false)
			if err := shapeErr(w, "(n × states, or states: per component)", []int{n, dim}, []int{dim}); err != nil {
				return nil, nil, err
			}
			if fit.finalW, err = lossRows(w, n, 2); err != nil {
				return nil, nil, err
			}
		}
	}
	return fit.loss(), states, nil
}

// cotLoss is the linear loss of --cot (and --cot-final): L = Σ cot·y
// over the successful trajectories, whose value is reported.
func cotLoss(g *gradFlags, n, dim, k int) (gradsolve.ChunkLoss, []string, error) {
	c, err := openInput("cot", g.cot)
	if err != nil {
		return nil, nil, err
	}
	g.take(c, c.a.Dims() == 3)
	var cotY, cotS *lossArray // cotY nil: no final-state term
	var states []string
	if c.a.Dims() != 3 {
		if err := shapeErr(c, "(n × states; or n × k × states for the states at the --saveat times)", []int{n, dim}); err != nil {
			return nil, nil, err
		}
		if g.cotFinal != "" {
			return nil, nil, fmt.Errorf("--cot-final %s: --cot %s already holds dL/dy_final; --cot-final goes with a saved-state cotangent (n × k × states)", g.cotFinal, g.cot)
		}
		if cotY, err = lossRows(c, n, 2); err != nil {
			return nil, nil, err
		}
		states = []string{"final"}
	} else {
		if err := savedShape(c, n, dim, k, false); err != nil {
			return nil, nil, err
		}
		if cotS, err = lossRows(c, n, 3); err != nil {
			return nil, nil, err
		}
		states = []string{"saved"}
		if g.cotFinal != "" {
			f, err := openInput("cot-final", g.cotFinal)
			if err != nil {
				return nil, nil, err
			}
			g.take(f, false)
			if err := shapeErr(f, "(n × states)", []int{n, dim}); err != nil {
				return nil, nil, err
			}
			if cotY, err = lossRows(f, n, 2); err != nil {
				return nil, nil, err
			}
			states = []string{"final", "saved"}
		}
	}
	// The linear loss, its terms added trajectory after trajectory onto
	// the chunks before (the bits of the whole run for any chunk).
	loss := func(lo int, res *gradsolve.Result, acc float64) (float64, gradsolve.Cotangents, error) {
		var c gradsolve.Cotangents
		var err error
		if cotY != nil {
			if c.Y, err = cotY.rows(lo, lo+res.N); err != nil {
				return 0, c, err
			}
		} else {
			c.Y = make([]float64, res.N*dim) // no final-state term
		}
		if cotS != nil {
			if c.Saved, err = cotS.rows(lo, lo+res.N); err != nil {
				return 0, c, err
			}
		}
		v := acc
		for i := range res.N {
			if res.Status[i] != gradsolve.Success {
				continue
			}
			for d, y := range res.Row(i) {
				v += c.Y[i*dim+d] * y
			}
			for q := 0; c.Saved != nil && q < k; q++ {
				for d, y := range res.SavedRow(i, q) {
					v += c.Saved[(i*k+q)*dim+d] * y
				}
			}
		}
		return v, c, nil
	}
	return loss, states, nil
}

// lossArray is a loss input: one array every trajectory shares, or a
// row per trajectory read chunk by chunk.
type lossArray struct {
	shared []float64
	src    *rowSource
}

// lossRows makes the checked file l a loss input: read by rows when it
// holds one per trajectory (dims dimensions, n rows of the run, n > 1),
// else whole.
func lossRows(l *loaded, n, dims int) (*lossArray, error) {
	if l.a.Dims() == dims && l.a.Shape[0] == n && n > 1 {
		return &lossArray{src: l.source()}, nil
	}
	d, err := l.data()
	if err != nil {
		return nil, err
	}
	return &lossArray{shared: d}, nil
}

// rows returns the rows [lo, hi) of the run, or the shared array; nil
// for a nil input.
func (a *lossArray) rows(lo, hi int) ([]float64, error) {
	switch {
	case a == nil:
		return nil, nil
	case a.src != nil:
		return a.src.get(lo, hi)
	}
	return a.shared, nil
}

// lossArrays are the inputs of the least-squares loss.
type lossArrays struct {
	final, finalW, saved, savedW *lossArray
}

// loss is the least-squares loss, chunk by chunk.
func (f *lossArrays) loss() gradsolve.ChunkLoss {
	return gradsolve.LeastSquaresChunks(func(lo, hi int) (gradsolve.FitData, error) {
		var fd gradsolve.FitData
		for _, x := range []struct {
			a   *lossArray
			dst *[]float64
		}{{f.final, &fd.Final}, {f.finalW, &fd.FinalWeights}, {f.saved, &fd.Saved}, {f.savedW, &fd.SavedWeights}} {
			v, err := x.a.rows(lo, hi)
			if err != nil {
				return fd, err
			}
			*x.dst = v
		}
		return fd, nil
	})
}

// columns returns the gradient's columns of one kind (parameters, or
// initial values with y0 set), n rows of them in the order wrt gives,
// from g's full rows of the given width.
func columns(full []float64, n, width int, wrt []gradsolve.Wrt, y0 bool) ([]float64, []int) {
	var idx []int
	for _, w := range wrt {
		if w.Y0 == y0 {
			idx = append(idx, w.Index)
		}
	}
	out := make([]float64, 0, n*len(idx))
	for i := range n {
		for _, j := range idx {
			out = append(out, full[i*width+j])
		}
	}
	return out, idx
}

func gradCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	j, err := setup("grad", gradUsage, args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	defer j.out.abort() // a failed run's staging directory (nothing after commit)
	defer j.in.close()
	pr, in, fl, gf := j.pr, j.in, j.fl, &j.fl.grad
	n, dim, m, k := in.n, pr.Dim, pr.NumParams, in.k
	loss, lossStates, err := gradLoss(gf, n, dim, k)
	if err != nil {
		return j.shardNote(err)
	}
	opts, bar := j.options(stderr)
	if fl.accuracy > 0 {
		// The pilot chooses the tolerances of the solve the gradient
		// differentiates (its final states meet the target).
		if err := j.chooseTolerances(ctx, opts, stdout); err != nil {
			return err
		}
	}
	opts.Mode = j.mode
	opts.Checkpoint = gf.checkpoint
	wrt := j.gradWrt
	if gf.wrt != "" {
		opts.GradientWrt = wrt
	}
	// The route is decided once, for the whole run, and every chunk is
	// differentiated by it (the engine may differ by chunk, the bits
	// not).
	d, err := gradsolve.GradientDecision(pr, n, opts)
	if err != nil {
		return j.userError(err)
	}
	opts.Mode = d.Mode
	_, pIdx := columns(nil, 0, m, wrt, false)
	_, yIdx := columns(nil, 0, dim, wrt, true)
	more := []outFile{{"grad_params.npy", []int{n, len(pIdx)}}, {"grad_y0.npy", []int{n, len(yIdx)}}}
	var (
		lossValue float64
		gradTime  time.Duration
		first     *gradsolve.Gradient // the first chunk's: n = 1 prints it
		ns        int
	)
	work := func(ctx context.Context, lo int, e *gradsolve.Ensemble, rw *rowWriters) (*gradsolve.Result, error) {
		var res *gradsolve.Result
		chunkLoss := func(r *gradsolve.Result) (float64, gradsolve.Cotangents, error) {
			res = r
			return loss(lo, r, lossValue)
		}
		l, g, _, err := gradsolve.LossGradient(ctx, pr, e, opts, chunkLoss)
		if err != nil {
			return nil, err
		}
		lossValue = l
		gradTime += g.Elapsed
		ns = res.NS
		if first == nil {
			first = g
		}
		if rw != nil {
			gp, _ := columns(g.P, e.N, m, wrt, false)
			gy, _ := columns(g.Y0, e.N, dim, wrt, true)
			if err := rw.put("grad_params.npy", gp); err != nil {
				return nil, err
			}
			if err := rw.put("grad_y0.npy", gy); err != nil {
				return nil, err
			}
		}
		return res, nil
	}
	sum, _, err := j.stream(ctx, &j.plan, opts, bar, 0, 0, more, work)
	bar.finish()
	if err != nil {
		return err
	}
	gs := &gradStats{RouterEngine: d.Engine, SensColumns: ns, ParamColumns: []string{}, Y0Columns: []string{}, LossStates: lossStates}
	for _, j := range pIdx {
		gs.ParamColumns = append(gs.ParamColumns, wrtName(pr, gradsolve.Param(j)))
	}
	for _, i := range yIdx {
		gs.Y0Columns = append(gs.Y0Columns, wrtName(pr, gradsolve.InitialValue(i)))
	}
	if j.out != nil {
		extra, err := j.shardOutputs(ctx, sum.first, func(st *stats) {
			st.Loss = &lossValue
			st.Mode, st.Reason = d.Mode.String(), flagTerms(d.Reason)
			st.gradStats = gs
			if d.Mode == router.Reverse {
				st.RecordSeconds = sum.elapsed.Seconds()
				st.GradientSeconds = gradTime.Seconds()
			} else {
				st.GradientSeconds = sum.elapsed.Seconds() // the sensitivities are the gradient
			}
		})
		if err != nil {
			return err
		}
		if err := commitRun(ctx, j.out, pr, k, sum, j.rhs, j.wallStart, extra); err != nil {
			return err
		}
	}
	if !fl.quietly {
		report(stdout, pr, in, sum, &j.plan)
		j.reportShard(stdout)
		fmt.Fprintf(stdout, "  loss %.10g (%s states); gradient by %s mode in %v", lossValue, strings.Join(lossStates, " and "), d.Mode, gradTime.Round(1000))
		if ns > 0 {
			fmt.Fprintf(stdout, ", %d sensitivity columns", ns)
		}
		fmt.Fprintf(stdout, "\n  router: %s\n", flagTerms(d.Reason))
		if n == 1 {
			for c, j := range pIdx {
				fmt.Fprintf(stdout, "    dL/d%s = %.10g\n", gs.ParamColumns[c], first.P[j])
			}
			for c, i := range yIdx {
				fmt.Fprintf(stdout, "    dL/d%s = %.10g\n", gs.Y0Columns[c], first.Y0[i])
			}
		}
		if fl.out != "" {
			fmt.Fprintf(stdout, "  wrote %s\n", fl.out)
		}
	}
	return nil
}
