package fit

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/router"
)

// evaluator evaluates the whole ensemble at every group's point: one
// solve (forward route) or one replay or recording (reverse route) of
// all N trajectories, then the loss, and the gradient or the Jacobian,
// summed per group in working coordinates.
type evaluator struct {
	s *setup

	evals   int // evaluations made
	records int
	replays int
	drift   []Drift

	// Reverse route.
	rec       *gradsolve.Recording
	recTheta  [][]float64 // the groups' values at the recording
	recFailed []bool      // per group: a trajectory failed in the recording
	atol      []float64   // the recording's absolute tolerances
}

// evaluation is one evaluation of the ensemble.
type evaluation struct {
	res    *gradsolve.Result
	groups []groupEval
}

// eval evaluates the ensemble at theta (natural values per group), with
// dθ/dz in dtheta for the chain rule; active says which groups are
// still fitting (the reverse route records again where a recording
// failed for one of them).
func (ev *evaluator) eval(ctx context.Context, theta, dtheta [][]float64, active []bool) (*evaluation, error) {
	var e *evaluation
	var err error
	if ev.s.mode == router.Forward {
		e, err = ev.forward(ctx, theta, dtheta)
	} else {
		e, err = ev.reverse(ctx, theta, dtheta, active)
	}
	if err != nil {
		return nil, err
	}
	ev.evals++
	return e, nil
}

// lossPerGroup evaluates the loss at res: each group's loss and the
// cotangents, and each group's error — a failed trajectory or a loss
// that is not finite — with the cotangents of a failed group's
// trajectories set to zero (the reverse sweep takes finite cotangents
// only).
func (s *setup) lossPerGroup(res *gradsolve.Result) ([]float64, gradsolve.Cotangents, []error, error) {
	G := s.G()
	loss := make([]float64, G)
	errs := make([]error, G)
	var cot gradsolve.Cotangents
	if s.data != nil {
		var per []float64
		per, cot = s.data.eval(res)
		for i, g := range s.groupOf {
			loss[g] += per[i]
		}
	} else {
		total, c, err := s.loss(res)
		if err != nil {
			return nil, cot, nil, fmt.Errorf("fit: Spec.Loss: %w", err)
		}
		if len(c.Y) != s.n*s.dim {
			return nil, cot, nil, errorf("Spec.Loss: cotangent Y has length %d: want N·Dim = %d", len(c.Y), s.n*s.dim)
		}
		if c.Saved != nil && len(c.Saved) != s.n*s.k*s.dim {
			return nil, cot, nil, errorf("Spec.Loss: cotangent Saved has length %d: want N·K·Dim = %d", len(c.Saved), s.n*s.k*s.dim)
		}
		cot = gradsolve.Cotangents{Y: append([]float64(nil), c.Y...)}
		if c.Saved != nil {
			cot.Saved = append([]float64(nil), c.Saved...)
		}
		if G == 1 {
			loss[0] = total
		} else {
			// Each group's share: the loss with the other groups'
			// trajectories marked as not run.
			masked := *res
			masked.Status = make([]gradsolve.Status, s.n)
			for g, mem := range s.members {
				for _, i := range mem {
					masked.Status[i] = res.Status[i]
				}
				l, _, err := s.loss(&masked)
				if err != nil {
					return nil, cot, nil, fmt.Errorf("fit: Spec.Loss (group %d's share): %w", g, err)
				}
				loss[g] = l
				for _, i := range mem {
					masked.Status[i] = gradsolve.NotRun
				}
			}
		}
	}
	for g, mem := range s.members {
		for _, i := range mem {
			if res.Status[i] != gradsolve.Success {
				errs[g] = fmt.Errorf("fit: group %d: %w", g, res.Err(i))
				break
			}
		}
		if errs[g] == nil && (math.IsNaN(loss[g]) || math.IsInf(loss[g], 0)) {
			errs[g] = errorf("group %d: the loss is %g", g, loss[g])
		}
		if errs[g] == nil && !s.finiteCot(cot, mem) {
			errs[g] = errorf("group %d: a cotangent of the loss is not finite", g)
		}
		if errs[g] != nil {
			s.zeroCot(cot, mem)
		}
	}
	return loss, cot, errs, nil
}

func (s *setup) finiteCot(cot gradsolve.Cotangents, mem []int) bool {
	for _, i := range mem {
		if !allFinite(cot.Y[i*s.dim : (i+1)*s.dim]) {
			return false
		}
		if cot.Saved != nil && !allFinite(cot.Saved[i*s.k*s.dim:(i+1)*s.k*s.dim]) {
			return false
		}
	}
	return true
}

func (s *setup) zeroCot(cot gradsolve.Cotangents, mem []int) {
	for _, i := range mem {
		clear(cot.Y[i*s.dim : (i+1)*s.dim])
		if cot.Saved != nil {
			clear(cot.Saved[i*s.k*s.dim : (i+1)*s.k*s.dim])
		}
	}
}

// groupGradients sums per-trajectory gradient rows (N×np, natural
// units, in the order of Params) over each group and applies the chain
// rule, giving ∂L/∂z per group; a group without an error whose
// gradient is not finite gets one.
func (s *setup) groupGradients(rows []float64, dtheta [][]float64, errs []error) [][]float64 {
	np := s.np
	out := make([][]float64, s.G())
	for g, mem := range s.members {
		gz := make([]float64, np)
		if errs[g] == nil {
			for _, i := range mem {
				for c := range np {
					gz[c] += rows[i*np+c]
				}
			}
			for c := range np {
				gz[c] *= dtheta[g][c]
			}
			if !allFinite(gz) {
				errs[g] = errorf("group %d: the gradient is not finite", g)
			}
		}
		out[g] = gz
	}
	return out
}

// forward evaluates by one solve with forward sensitivities to the
// fitted quantities.
func (ev *evaluator) forward(ctx context.Context, theta, dtheta [][]float64) (*evaluation, error) {
	s := ev.s
	p, y0 := s.rows(theta)
	o := s.opts
	o.Sens = &gradsolve.Sensitivity{Wrt: s.wrt}
	res, err := gradsolve.Solve(ctx, s.prob, s.ensemble(p, y0), &o)
	if err != nil {
		return nil, solveErr(err)
	}
	loss, cot, errs, err := s.lossPerGroup(res)
	if err != nil {
		return nil, err
	}
	np, ns, dim, K := s.np, res.NS, s.dim, res.K
	e := &evaluation{res: res, groups: make([]groupEval, s.G())}
	if s.opt.jacobian() {
		// Σ JᵀWJ and Σ JᵀWr per group, J = ∂r/∂z.
		jz := make([]float64, np)
		for g, mem := range s.members {
			ge := &e.groups[g]
			ge.loss, ge.err = loss[g], errs[g]
			if ge.err != nil {
				continue
			}
			ge.a, ge.grad = make([]float64, np*np), make([]float64, np)
			for _, i := range mem {
				s.data.residuals(res, i, func(saved bool, row int, r, w float64) {
					if w == 0 {
						return
					}
					src := res.S
					if saved {
						src = res.SavedS
					}
					for c := range np {
						jz[c] = src[row*ns+c] * dtheta[g][c]
					}
					for a := range np {
						ge.grad[a] += w * r * jz[a]
						for b := range np {
							ge.a[a*np+b] += w * jz[a] * jz[b]
						}
					}
				})
			}
			if !allFinite(ge.grad) || !allFinite(ge.a) {
				ge.err = errorf("group %d: the Jacobian is not finite", g)
			}
		}
		return e, nil
	}
	rows := make([]float64, s.n*np)
	for i := range s.n {
		if res.Status[i] != gradsolve.Success {
			continue
		}
		for c := range np {
			var v float64
			for d := range dim {
				v += cot.Y[i*dim+d] * res.S[(i*dim+d)*ns+c]
				for k := 0; cot.Saved != nil && k < K; k++ {
					v += cot.Saved[(i*K+k)*dim+d] * res.SavedS[((i*K+k)*dim+d)*ns+c]
				}
			}
			rows[i*np+c] = v
		}
	}
	grads := s.groupGradients(rows, dtheta, errs)
	for g := range e.groups {
		e.groups[g] = groupEval{err: errs[g], loss: loss[g], grad: grads[g]}
	}
	return e, nil
}

// isInput reports whether err is a gradsolve input error.
func isInput(err error) bool { return errors.Is(err, gradsolve.ErrInput) }

// solveErr wraps an error of a solve: bad input is the spec's.
func solveErr(err error) error {
	if isInput(err) {
		return fmt.Errorf("%w: %w", ErrInput, err)
	}
	return fmt.Errorf("fit: %w", err)
}

// reverse evaluates by a replay of the recorded meshes, or a new
// recording where the policy says so, and the reverse sweep.
func (ev *evaluator) reverse(ctx context.Context, theta, dtheta [][]float64, active []bool) (*evaluation, error) {
	s := ev.s
	p, y0 := s.rows(theta)
	record := ev.rec == nil
	for g, f := range ev.recFailed {
		record = record || (f && active[g])
	}
	switch s.rerecord.Mode {
	case RerecordEvery:
		record = record || ev.evals%s.rerecord.Every == 0
	case RerecordAuto:
		record = record || ev.shift(theta) > s.rerecord.Threshold
	}
	var res *gradsolve.Result
	if record {
		rec, err := gradsolve.Record(ctx, s.prob, s.ensemble(p, y0), &s.opts)
		if err != nil {
			return nil, solveErr(err)
		}
		ev.rec, ev.records = rec, ev.records+1
		ev.recTheta = cloneRows(theta)
		ev.atol = rec.Result.Options.ATolVec
		res = rec.Result
		ev.recFailed = make([]bool, s.G())
		for i, st := range res.Status {
			if st != gradsolve.Success {
				ev.recFailed[s.groupOf[i]] = true
			}
		}
	} else {
		pt := &gradsolve.Point{P: p}
		if s.fitY0 {
			pt.Y0 = y0
		}
		var err error
		if res, err = ev.rec.Replay(ctx, pt); err != nil {
			return nil, solveErr(err)
		}
		ev.replays++
	}
	e, err := ev.reverseSweep(ctx, ev.rec, res, dtheta)
	if err != nil {
		return nil, err
	}
	if !record && s.driftEvery > 0 && ev.replays%s.driftEvery == 0 {
		if err := ev.driftCheck(ctx, theta, dtheta, p, y0, e); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// reverseSweep evaluates the loss at res (rec's current point) and its
// gradient by rec's reverse sweep.
func (ev *evaluator) reverseSweep(ctx context.Context, rec *gradsolve.Recording, res *gradsolve.Result, dtheta [][]float64) (*evaluation, error) {
	s := ev.s
	loss, cot, errs, err := s.lossPerGroup(res)
	if err != nil {
		return nil, err
	}
	gr, err := rec.Gradient(ctx, cot)
	if err != nil {
		return nil, solveErr(err)
	}
	np := s.np
	rows := make([]float64, s.n*np)
	for i := range s.n {
		if res.Status[i] != gradsolve.Success {
			continue
		}
		for c, w := range s.wrt {
			if w.Y0 {
				rows[i*np+c] = gr.Y0[i*s.dim+w.Index]
			} else {
				rows[i*np+c] = gr.P[i*s.m+w.Index]
			}
		}
	}
	grads := s.groupGradients(rows, dtheta, errs)
	e := &evaluation{res: res, groups: make([]groupEval, s.G())}
	for g := range e.groups {
		e.groups[g] = groupEval{err: errs[g], loss: loss[g], grad: grads[g]}
	}
	return e, nil
}

// shift returns the largest relative move of a fitted quantity from
// the recording point (see RerecordAuto).
func (ev *evaluator) shift(theta [][]float64) float64 {
	s := ev.s
	var worst float64
	for g, th := range theta {
		for c, x := range th {
			xr := ev.recTheta[g][c]
			floor := s.params[c].Scale
			if floor == 0 {
				floor = gradsolve.ShiftParamFloor
				if w := s.wrt[c]; w.Y0 {
					floor = ev.atol[w.Index]
				}
			}
			worst = math.Max(worst, math.Abs(x-xr)/math.Max(math.Abs(xr), floor))
		}
	}
	return worst
}

// driftCheck records afresh at the point just replayed and compares the
// final states and the gradients (see Drift).
func (ev *evaluator) driftCheck(ctx context.Context, theta, dtheta [][]float64, p, y0 []float64, replayed *evaluation) error {
	s := ev.s
	fresh, err := gradsolve.Record(ctx, s.prob, s.ensemble(p, y0), &s.opts)
	if err != nil {
		return solveErr(err)
	}
	fe, err := ev.reverseSweep(ctx, fresh, fresh.Result, dtheta)
	if err != nil {
		return err
	}
	d := Drift{Evaluation: ev.evals, Shift: ev.shift(theta)}
	ry, fy := replayed.res, fresh.Result
	for i := range s.n {
		if ry.Status[i] != gradsolve.Success || fy.Status[i] != gradsolve.Success {
			continue
		}
		for c := range s.dim {
			a, b := ry.Y[i*s.dim+c], fy.Y[i*s.dim+c]
			d.StateDrift = math.Max(d.StateDrift, math.Abs(a-b)/math.Max(math.Abs(b), ev.atol[c]))
		}
	}
	var all1, all2 []float64
	for g := range s.members {
		g1, g2 := replayed.groups[g], fe.groups[g]
		if g1.err != nil || g2.err != nil {
			continue
		}
		all1, all2 = append(all1, g1.grad...), append(all2, g2.grad...)
		d.WorstGroupAngle = math.Max(d.WorstGroupAngle, angle(g1.grad, g2.grad))
	}
	d.Angle = angle(all1, all2)
	ev.drift = append(ev.drift, d)
	return nil
}

// angle returns the angle between a and b in degrees (0 where either
// is zero), as 2·atan2(|â − b̂|, |â + b̂|) with â, b̂ the unit vectors:
// accurate for small angles too, where acos(â·b̂) is not.
func angle(a, b []float64) float64 {
	na, nb := math.Sqrt(dot(a, a)), math.Sqrt(dot(b, b))
	if na == 0 || nb == 0 {
		return 0
	}
	var dm, dp float64
	for i := range a {
		u, v := a[i]/na, b[i]/nb
		dm += (u - v) * (u - v)
		dp += (u + v) * (u + v)
	}
	return 2 * math.Atan2(math.Sqrt(dm), math.Sqrt(dp)) * 180 / math.Pi
}

func cloneRows(v [][]float64) [][]float64 {
	out := make([][]float64, len(v))
	for i, r := range v {
		out[i] = append([]float64(nil), r...)
	}
	return out
}
