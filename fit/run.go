package fit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/gradsolve/gradsolve"
	"gonum.org/v1/gonum/mat"
)

// Run fits spec's quantities and returns the report.
//
// Every group starts from its start and runs its own copy of the
// optimiser; the groups advance in lock-step, each ensemble evaluation
// (one solve, replay or recording of all N trajectories, every group's
// trajectories at that group's next point) serving all of them. A
// group that converges, fails or runs out of iterations stops (its
// trajectories keep its final values in later evaluations) and the
// others go on; Run returns when none is left.
//
// The route (Report.Mode, and ModeReason says why): LevenbergMarquardt
// runs on forward sensitivities; Adam and LBFGS on whichever of the
// reverse replay and forward sensitivities is cheaper per update by the
// fit's cost model, measured by BenchmarkAdamUpdate, for the engine the
// solves run on (gradsolve.ChooseEngine),
//
//	                        cpu-lanes            other engines
//	forward sensitivities:  1 + 0.5·len(Params)  1 + 0.3·len(Params) forward solves
//	reverse replay:         2.0                  4 forward solves (replay and reverse sweep)
//
// — forward up to two fitted quantities on cpu-lanes and up to ten
// elsewhere, reverse beyond — among the routes whose derivative
// programs the problem offers, unless Spec.Mode names one. On the reverse route an evaluation replays the current
// recording at the new point (its accepted steps held fixed: the
// gradient is exact for the replayed map) or, where Spec.Rerecord says
// so, records afresh there.
//
// Nothing in a fit is random: the same Spec gives the same report, bit
// for bit, for any number of workers.
//
// Run returns a nil report and an error wrapping ErrInput for a bad
// Spec (one that names the field and the rule broken), and never
// panics on one. If ctx is cancelled it returns the report so far —
// the groups still fitting then have status Cancelled — with an error
// wrapping ctx's. A group's failure is not an error of Run: it is in
// its Group's Status and Err. Other errors (the user's loss failing)
// come with the report so far.
func Run(ctx context.Context, spec *Spec) (*Report, error) {
	start := time.Now()
	if ctx == nil {
		return nil, inputErr("nil context")
	}
	s, err := newSetup(spec)
	if err != nil {
		return nil, err
	}
	G, np := s.G(), s.np
	groups := make([]*group, G)
	tr := make([]Transform, np)
	for c, p := range s.params {
		tr[c] = p.Transform
	}
	starts := make([][]float64, G)
	for g := range G {
		z := make([]float64, np)
		for c := range np {
			z[c] = tr[c].toWorking(s.start[g][c], s.scale[g][c])
		}
		starts[g] = z
		groups[g] = &group{index: g, members: s.members[g], tr: tr, scale: s.scale[g], tol: s.tol, maxIter: s.maxIter,
			trial: z, opt: s.opt.newState(np)}
	}
	ev := &evaluator{s: s}
	rep := &Report{Optimizer: s.opt.Name(), Mode: s.mode, ModeReason: s.modeReason, Params: s.names}
	theta, dtheta := make([][]float64, G), make([][]float64, G)
	active, wild := make([]bool, G), make([]bool, G)
	var runErr error
	for {
		if err := ctx.Err(); err != nil {
			runErr = err
			break
		}
		for g, gr := range groups {
			active[g], wild[g] = gr.status == Running, false
			z := gr.trial
			switch {
			case active[g]:
			case gr.z != nil:
				z = gr.z
			default:
				z = starts[g]
			}
			theta[g], dtheta[g] = gr.natural(z)
			if active[g] && (!allFinite(theta[g]) || !allFinite(dtheta[g])) {
				// A trial beyond the floating-point range (exp(z)
				// overflowing): the solve runs the group's accepted point
				// instead, and the group is told its trial failed.
				wild[g] = true
				if gr.z != nil {
					theta[g], dtheta[g] = gr.natural(gr.z)
				} else { // not reachable from a checked start; kept finite all the same
					theta[g], dtheta[g] = append([]float64(nil), s.start[g]...), make([]float64, np)
				}
			}
		}
		e, err := ev.eval(ctx, theta, dtheta, active)
		if err != nil {
			runErr = err
			break
		}
		for g, w := range wild {
			if w {
				th, _ := groups[g].natural(groups[g].trial)
				e.groups[g] = groupEval{err: errorf("group %d: the trial point %v is not finite", g, th)}
			}
		}
		var total float64
		counts := [3]int{}
		for g, gr := range groups {
			if active[g] {
				gr.evalNo, gr.evals = ev.evals-1, gr.evals+1
				gr.opt.tell(gr, &e.groups[g])
			}
			switch gr.status {
			case Running:
				counts[0]++
			case Converged:
				counts[1]++
			default:
				counts[2]++
			}
			if gr.z != nil {
				total += gr.loss
			}
		}
		if s.progress != nil {
			s.progress(Progress{Evaluation: ev.evals, Records: ev.records, Active: counts[0], Converged: counts[1],
				Stopped: counts[2], Loss: total, Elapsed: time.Since(start)})
		}
		if counts[0] == 0 {
			break
		}
	}
	cancelled := runErr != nil && ctx.Err() != nil
	for _, gr := range groups {
		if gr.status == Running {
			if cancelled {
				gr.finish(Cancelled, nil)
			} else {
				gr.finish(Failed, runErr)
			}
		}
	}
	rep.Groups = make([]Group, G)
	for g, gr := range groups {
		var est []float64
		loss := gr.loss
		if gr.z != nil {
			est, _ = gr.natural(gr.z)
		} else {
			est, loss = append([]float64(nil), s.start[g]...), math.NaN() // never evaluated successfully
		}
		rep.Groups[g] = Group{Trajectories: gr.members, Estimate: est, Loss: loss, Iterations: gr.iters,
			Evaluations: gr.evals, Status: gr.status, Converged: gr.status == Converged, Err: gr.err, History: gr.hist}
	}
	if runErr == nil && s.noise != nil {
		est := make([][]float64, G)
		for g := range G {
			est[g] = rep.Groups[g].Estimate
		}
		if err := s.fisher(ctx, est, rep.Groups); err != nil {
			runErr = err
			cancelled = ctx.Err() != nil
		}
	}
	rep.Evaluations, rep.Records, rep.Drift = ev.evals, ev.records, ev.drift
	rep.Elapsed = time.Since(start)
	if runErr != nil && ev.evals == 0 && errors.Is(runErr, ErrInput) {
		return nil, runErr // the first solve refused the spec's ensemble or options
	}
	if runErr != nil {
		if cancelled {
			return rep, fmt.Errorf("fit: cancelled after %d evaluations: %w", ev.evals, ctx.Err())
		}
		return rep, runErr
	}
	return rep, nil
}

// fisher computes each group's Fisher information at its estimate est
// (natural values) from one solve with forward sensitivities, and its
// inverse and standard errors (see Noise), into out.
func (s *setup) fisher(ctx context.Context, est [][]float64, out []Group) error {
	p, y0 := s.rows(est)
	o := s.opts
	o.Sens = &gradsolve.Sensitivity{Wrt: s.wrt}
	res, err := gradsolve.Solve(ctx, s.prob, s.ensemble(p, y0), &o)
	if err != nil {
		return solveErr(err)
	}
	np, ns := s.np, res.NS
	inv := 1 / (s.sigma * s.sigma)
	for g, mem := range s.members {
		gr := &out[g]
		f := make([]float64, np*np)
		var bad error
		for _, i := range mem {
			if res.Status[i] != gradsolve.Success {
				bad = fmt.Errorf("fit: group %d: the solve at the estimate failed: %w", g, res.Err(i))
				break
			}
			s.data.residuals(res, i, func(saved bool, row int, _, w float64) {
				if s.noise.Weights != nil {
					w = s.noise.Weights[row%s.dim]
				}
				if w == 0 {
					return
				}
				src := res.S
				if saved {
					src = res.SavedS
				}
				j := src[row*ns : row*ns+ns]
				for a := range np {
					for b := range np {
						f[a*np+b] += w * inv * j[a] * j[b]
					}
				}
			})
		}
		if bad == nil && !allFinite(f) {
			bad = errorf("group %d: the Fisher information is not finite", g)
		}
		if bad != nil {
			gr.FisherErr = bad
			continue
		}
		gr.Fisher = f
		gr.Covariance, gr.StdErr, gr.FisherErr = covariance(f, np)
		if gr.FisherErr != nil {
			gr.FisherErr = fmt.Errorf("fit: group %d: %w", g, gr.FisherErr)
		}
	}
	return nil
}

// covariance returns F⁻¹ and √diag(F⁻¹) for a symmetric np×np F, or an
// error where F is not positive definite.
func covariance(f []float64, np int) ([]float64, []float64, error) {
	sym := mat.NewSymDense(np, nil)
	for a := range np {
		for b := a; b < np; b++ {
			sym.SetSym(a, b, 0.5*(f[a*np+b]+f[b*np+a]))
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(sym) {
		return nil, nil, errors.New("the Fisher information is singular (not positive definite): the data do not determine every fitted quantity")
	}
	var c mat.SymDense
	if err := ch.InverseTo(&c); err != nil {
		var cond mat.Condition
		if !errors.As(err, &cond) {
			return nil, nil, err
		}
	}
	cov, se := make([]float64, np*np), make([]float64, np)
	for a := range np {
		for b := range np {
			cov[a*np+b] = c.At(a, b)
		}
		se[a] = math.Sqrt(cov[a*np+a])
	}
	return cov, se, nil
}
