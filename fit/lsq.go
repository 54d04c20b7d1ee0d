package fit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"
)

// LSQ is a batch of independent nonlinear least-squares problems, one
// per group, whose residuals the caller computes: group g minimises
//
//	χ²_g(θ_g) = r_g(θ_g)ᵀ C⁻¹ r_g(θ_g) = ‖L⁻¹ r_g(θ_g)‖²
//
// over its k parameters θ_g, with r_g the m residuals, C = L·Lᵀ the
// covariance of the Gaussian noise model Noise (the same for every
// group) and J_g = ∂r_g/∂θ_g their Jacobian. The caller's Eval computes
// r_g and J_g of every group still fitting, typically from one
// ensemble solve with forward sensitivities for all groups at once;
// RunLSQ whitens them (r̃ = L⁻¹r, J̃ = L⁻¹J), forms the normal equations
// and steps:
//
//	Gauss–Newton (Damping = 0):        J̃ᵀJ̃·h = −J̃ᵀr̃,          θ ← θ + h
//	Levenberg–Marquardt (Damping > 0): (J̃ᵀJ̃ + μ·D)·h = −J̃ᵀr̃,   θ ← θ + h if χ² falls
//
// Gauss–Newton takes every step; it is the method for problems whose
// start is near the minimum and whose residuals there are small
// against their curvature (it converges quadratically on a zero- or
// small-residual problem and in one step on a linear one). LM accepts a
// step only where χ² falls, and adapts μ as LevenbergMarquardt does
// (the gain ratio of Nielsen's rule, D the largest diagonal of J̃ᵀJ̃ so
// far); it is the method for a start far from the minimum.
//
// The normal equations are solved in closed form for k ≤ 2 (h = −g/a,
// and Cramer's rule for k = 2, which is forward stable for 2×2 systems:
// Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed.,
// §1.10.1) and by Cholesky (gonum/mat) beyond. A group whose normal
// matrix is not positive definite stops as Stalled.
//
// Each group converges, fails or runs out of iterations on its own,
// with its own Status; the others go on. At its end each group has its
// Fisher information F = J̃ᵀJ̃ = JᵀC⁻¹J, covariance F⁻¹ and standard
// errors √diag(F⁻¹), at the point of its last evaluation (LSQGroup.At).
type LSQ struct {
	// Params names the k ≥ 1 parameters of every group, in order (used
	// in messages and reports).
	Params []string
	// Groups is the number G ≥ 1 of independent problems.
	Groups int
	// Residuals is m ≥ 1, the number of residuals of each group.
	Residuals int
	// Start holds the starting point: k values (every group's start) or
	// G·k (row g: group g's), finite.
	Start []float64
	// Noise is the noise model of each group's m residuals (see
	// Gaussian): scalar σ (the zero value: σ = 1), weights, or a full
	// covariance.
	Noise Gaussian
	// Eval computes the residuals and the Jacobian of every active
	// group at its point (see LSQEval); required. It is called from
	// the goroutine that called RunLSQ, once per iteration. An error it
	// returns ends the run (the groups still fitting stop as Failed)
	// and is returned with the report so far; a problem of one group
	// alone is LSQEval.Fail, or a non-finite residual or derivative in
	// its rows, and stops that group only.
	Eval func(ctx context.Context, e *LSQEval) error
	// Damping is Levenberg–Marquardt's initial μ, relative to the
	// largest diagonal entries of J̃ᵀJ̃ (finite and ≥ 0); 0 means
	// Gauss–Newton, undamped.
	Damping float64
	// MaxIter bounds each group's steps (accepted steps with LM); 0
	// means 100. Negative is an error.
	MaxIter int
	// StepTol holds each parameter's absolute step tolerance (length k,
	// each > 0): a group has converged after a step h with |h_c| <
	// StepTol[c] for every c (with LM also a rejected step that small).
	// +Inf leaves a parameter out of the test (one at least must be
	// finite). Nil means DefaultStepTol for every parameter.
	StepTol []float64
	// Progress, if not nil, is called after each evaluation, from the
	// goroutine that called RunLSQ.
	Progress func(LSQProgress)
}

// LSQEval is one evaluation that RunLSQ asks of LSQ.Eval: the points of
// all groups, which of them are still fitting, and the arrays the
// callback fills for those.
type LSQEval struct {
	// Evaluation counts the evaluations: 1 for the first.
	Evaluation int
	// Theta holds every group's point, G·k values (Point(g) is group
	// g's): for an active group the point to evaluate, for a stopped
	// one its estimate. Eval must not modify it.
	Theta []float64
	// Active says which groups are still fitting. Eval must fill the
	// rows of R and J of every active group; the rows of the others are
	// not read.
	Active []bool
	// R holds the residuals, G·m values (Residual(g) is group g's).
	R []float64
	// J holds the Jacobians, G·m·k values: group g's m×k row-major
	// block (Jacobian(g)) has J_ic = ∂r_i/∂θ_c.
	J []float64

	k, m int
	fail []error
}

// Point returns group g's point, k values.
func (e *LSQEval) Point(g int) []float64 { return e.Theta[g*e.k : (g+1)*e.k : (g+1)*e.k] }

// Residual returns group g's residuals to fill, m values.
func (e *LSQEval) Residual(g int) []float64 { return e.R[g*e.m : (g+1)*e.m : (g+1)*e.m] }

// Jacobian returns group g's Jacobian to fill, m×k row-major.
func (e *LSQEval) Jacobian(g int) []float64 {
	n := e.m * e.k
	return e.J[g*n : (g+1)*n : (g+1)*n]
}

// Fail reports that group g could not be evaluated at its point, with
// the reason: the group stops as Failed with Err wrapping err (with LM,
// a trial point that fails is rejected instead, and the group steps
// back). Calls for an inactive group are ignored.
func (e *LSQEval) Fail(g int, err error) {
	if g >= 0 && g < len(e.fail) && e.Active[g] {
		if err == nil {
			err = errors.New("evaluation failed")
		}
		e.fail[g] = err
	}
}

// LSQProgress is what LSQ.Progress sees after each evaluation.
type LSQProgress struct {
	// Evaluation counts the evaluations so far.
	Evaluation int
	// Active, Converged and Stopped count the groups still fitting,
	// those converged, and those stopped otherwise.
	Active, Converged, Stopped int
	// Elapsed is the time since RunLSQ started.
	Elapsed time.Duration
}

// LSQReport is what RunLSQ found.
type LSQReport struct {
	// Method is "gauss-newton" or "levenberg-marquardt".
	Method string
	// Params names the parameters (LSQ.Params).
	Params []string
	// Groups holds each group's result, in group order.
	Groups []LSQGroup
	// Evaluations counts the calls of LSQ.Eval.
	Evaluations int
	// Elapsed is the wall time of RunLSQ.
	Elapsed time.Duration
}

// LSQGroup is one group's result. Matrices are row-major k×k.
type LSQGroup struct {
	// Estimate is the group's final point: with Gauss–Newton the point
	// after its last step (for a Failed group, the point that failed),
	// with LM its last accepted point (the start where no step was
	// taken).
	Estimate []float64
	// At is the point of the group's last successful evaluation (nil if
	// none succeeded), where Chi2 and the Fisher information are: with
	// LM the Estimate; with Gauss–Newton the point its last step was
	// computed from, Estimate minus that step.
	At []float64
	// Chi2 is χ² at At; NaN if no evaluation succeeded.
	Chi2 float64
	// Iterations counts the steps taken (accepted ones with LM);
	// Evaluations the group's points evaluated successfully or not.
	Iterations, Evaluations int
	// Status says how the fit ended (Converged, MaxIterations, Stalled:
	// the normal equations could not be solved or LM found no step that
	// lowers χ², Failed, Cancelled); Converged is Status == Converged.
	Status    Status
	Converged bool
	// Err says, for a Failed or Stalled group, what went wrong.
	Err error
	// Fisher is F = J̃ᵀJ̃ = JᵀC⁻¹J at At, Covariance F⁻¹ and StdErr
	// √diag(F⁻¹); Covariance and StdErr are nil and FisherErr says why
	// where F is not positive definite or no evaluation succeeded.
	Fisher, Covariance, StdErr []float64
	FisherErr                  error
}

// lsqMaxRejections bounds LM's consecutive rejected steps of a group.
const lsqMaxRejections = 30

// lsqGroup is one group's state.
type lsqGroup struct {
	theta, trial []float64 // accepted point; point being evaluated (LM)
	have         bool      // an evaluation succeeded: at, chi2, a, g hold it
	at           []float64
	chi2         float64
	a, g         []float64 // J̃ᵀJ̃ and J̃ᵀr̃ at `at`
	h            []float64 // the last step
	mu, nu       float64
	diag         []float64
	rejections   int
	status       Status
	err          error
	iters, evals int
}

// lsqRun is a checked LSQ with its buffers.
type lsqRun struct {
	p       *LSQ
	k, m, G int
	w       *Whitener
	tol     []float64
	maxIter int
	wr, wj  []float64 // whitened residuals and Jacobian of one group
	a2, g2  []float64 // LM: the normal equations at a trial
}

// RunLSQ solves the batch p and returns the report.
//
// Every evaluation covers all groups: LSQ.Eval gets every group's point
// (the trial of each group still fitting, the estimate of the others)
// and fills the residuals and Jacobian of the active ones; RunLSQ then
// advances each active group by one step of its own. It returns when
// no group is left fitting.
//
// A bad LSQ gets a nil report and an error wrapping ErrInput that names
// the field and the rule broken. If ctx is cancelled, RunLSQ returns
// the report so far, the groups still fitting with status Cancelled,
// and an error wrapping ctx's; if Eval returns an error, the report so
// far and that error. A group's failure is not an error of RunLSQ: it
// is in its LSQGroup's Status and Err.
func RunLSQ(ctx context.Context, p *LSQ) (*LSQReport, error) {
	start := time.Now()
	if ctx == nil {
		return nil, inputErr("nil context")
	}
	r, err := newLSQRun(p)
	if err != nil {
		return nil, err
	}
	k, m, G := r.k, r.m, r.G
	gs := make([]lsqGroup, G)
	for g := range gs {
		st := p.Start
		if len(st) != k {
			st = st[g*k : (g+1)*k]
		}
		gs[g] = lsqGroup{theta: append([]float64(nil), st...), a: make([]float64, k*k), g: make([]float64, k),
			h: make([]float64, k), diag: make([]float64, k), chi2: math.NaN()}
		gs[g].trial = gs[g].theta
	}
	e := &LSQEval{Theta: make([]float64, G*k), Active: make([]bool, G), R: make([]float64, G*m),
		J: make([]float64, G*m*k), k: k, m: m, fail: make([]error, G)}
	rep := &LSQReport{Method: "gauss-newton", Params: append([]string(nil), p.Params...)}
	if p.Damping > 0 {
		rep.Method = "levenberg-marquardt"
	}
	var runErr error
	for {
		if err := ctx.Err(); err != nil {
			runErr = err
			break
		}
		for g := range gs {
			gr := &gs[g]
			e.Active[g], e.fail[g] = gr.status == Running, nil
			pt := gr.theta
			if e.Active[g] {
				pt = gr.trial
			}
			copy(e.Point(g), pt)
		}
		e.Evaluation = rep.Evaluations + 1
		err := p.Eval(ctx, e)
		rep.Evaluations++
		if err != nil {
			runErr = err
			break
		}
		counts := [3]int{}
		for g := range gs {
			gr := &gs[g]
			if e.Active[g] {
				gr.evals++
				r.tell(g, gr, e)
			}
			switch gr.status {
			case Running:
				counts[0]++
			case Converged:
				counts[1]++
			default:
				counts[2]++
			}
		}
		if p.Progress != nil {
			p.Progress(LSQProgress{Evaluation: rep.Evaluations, Active: counts[0], Converged: counts[1], Stopped: counts[2],
				Elapsed: time.Since(start)})
		}
		if counts[0] == 0 {
			break
		}
	}
	cancelled := runErr != nil && ctx.Err() != nil
	rep.Groups = make([]LSQGroup, G)
	for g := range gs {
		gr := &gs[g]
		if gr.status == Running {
			if cancelled {
				gr.status = Cancelled
			} else {
				gr.status, gr.err = Failed, runErr
			}
		}
		out := LSQGroup{Estimate: append([]float64(nil), gr.theta...), Chi2: gr.chi2, Iterations: gr.iters, Evaluations: gr.evals,
			Status: gr.status, Converged: gr.status == Converged, Err: gr.err}
		if gr.have {
			out.At = append([]float64(nil), gr.at...)
			out.Fisher = append([]float64(nil), gr.a...)
			out.Covariance, out.StdErr, out.FisherErr = covariance(out.Fisher, k)
		} else {
			out.FisherErr = errors.New("no evaluation of the group succeeded")
		}
		if out.FisherErr != nil {
			out.FisherErr = fmt.Errorf("fit: group %d: %w", g, out.FisherErr)
		}
		rep.Groups[g] = out
	}
	rep.Elapsed = time.Since(start)
	if cancelled {
		return rep, fmt.Errorf("fit: cancelled after %d evaluations: %w", rep.Evaluations, ctx.Err())
	}
	return rep, runErr
}

// newLSQRun checks p.
func newLSQRun(p *LSQ) (*lsqRun, error) {
	if p == nil {
		return nil, inputErr("nil LSQ")
	}
	k, m, G := len(p.Params), p.Residuals, p.Groups
	switch {
	case k == 0:
		return nil, inputErr("LSQ.Params is empty: name at least one parameter")
	case G < 1:
		return nil, inputErr("LSQ.Groups = %d: need at least 1", G)
	case m < 1:
		return nil, inputErr("LSQ.Residuals = %d: need at least 1", m)
	case m > math.MaxInt/k || G > math.MaxInt/(m*k):
		return nil, inputErr("LSQ: %d groups of %d residuals and %d parameters: the Jacobians' length G·m·k overflows an int", G, m, k)
	case p.Eval == nil:
		return nil, inputErr("LSQ.Eval is nil")
	case len(p.Start) != k && len(p.Start) != G*k:
		return nil, inputErr("LSQ.Start has length %d: want k = %d (shared) or G·k = %d", len(p.Start), k, G*k)
	case math.IsNaN(p.Damping) || math.IsInf(p.Damping, 0) || p.Damping < 0:
		return nil, inputErr("LSQ.Damping = %g: must be finite and ≥ 0 (0 means Gauss–Newton)", p.Damping)
	case p.MaxIter < 0:
		return nil, inputErr("LSQ.MaxIter = %d: must be ≥ 0 (0 means 100)", p.MaxIter)
	}
	for i, v := range p.Start {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, inputErr("LSQ.Start[%d] = %g: must be finite", i, v)
		}
	}
	tol := p.StepTol
	if tol == nil {
		tol = make([]float64, k)
		for c := range tol {
			tol[c] = DefaultStepTol
		}
	}
	if len(tol) != k {
		return nil, inputErr("LSQ.StepTol has length %d: want k = %d (one per parameter)", len(tol), k)
	}
	finite := false
	for c, v := range tol {
		if !(v > 0) {
			return nil, inputErr("LSQ.StepTol[%d] = %g: must be > 0 (+Inf leaves %s out of the test)", c, v, p.Params[c])
		}
		finite = finite || !math.IsInf(v, 1)
	}
	if !finite {
		return nil, inputErr("LSQ.StepTol: every entry is +Inf: no parameter is tested for convergence")
	}
	w, err := newWhitener(p.Noise, m, "LSQ.Noise")
	if err != nil {
		return nil, err
	}
	maxIter := p.MaxIter
	if maxIter == 0 {
		maxIter = 100
	}
	return &lsqRun{p: p, k: k, m: m, G: G, w: w, tol: tol, maxIter: maxIter,
		wr: make([]float64, m), wj: make([]float64, m*k), a2: make([]float64, k*k), g2: make([]float64, k)}, nil
}

// normal whitens group g's rows of e and forms χ², A = J̃ᵀJ̃ and b =
// J̃ᵀr̃ (into a and b), each a sum over the residuals in order; it
// returns an error naming the first non-finite residual or derivative.
func (r *lsqRun) normal(g int, e *LSQEval, a, b []float64) (float64, error) {
	k, m := r.k, r.m
	res, jac := e.Residual(g), e.Jacobian(g)
	for i, v := range res {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("fit: group %d: residual %d = %g at %v", g, i, v, e.Point(g))
		}
	}
	for i, v := range jac {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("fit: group %d: ∂r_%d/∂%s = %g at %v", g, i/k, r.p.Params[i%k], v, e.Point(g))
		}
	}
	r.w.whitenCols(r.wr, res, 1)
	r.w.whitenCols(r.wj, jac, k)
	wr, wj := r.wr, r.wj
	for c := range k {
		for d := c; d < k; d++ {
			var s float64
			for i := range m {
				s += wj[i*k+c] * wj[i*k+d]
			}
			a[c*k+d], a[d*k+c] = s, s
		}
		var s float64
		for i := range m {
			s += wj[i*k+c] * wr[i]
		}
		b[c] = s
	}
	chi2 := sumSquares(wr)
	if math.IsNaN(chi2) || math.IsInf(chi2, 0) || !allFinite(a) || !allFinite(b) {
		return 0, fmt.Errorf("fit: group %d: χ² or the normal equations overflow at %v", g, e.Point(g))
	}
	return chi2, nil
}

// small reports whether every |h_c| < StepTol[c].
func (r *lsqRun) small(h []float64) bool {
	for c, v := range h {
		if !(math.Abs(v) < r.tol[c]) {
			return false
		}
	}
	return true
}

// tell advances group g after an evaluation.
func (r *lsqRun) tell(g int, gr *lsqGroup, e *LSQEval) {
	err := e.fail[g]
	if err != nil {
		err = fmt.Errorf("fit: group %d: %w", g, err)
	}
	var chi2 float64
	if err == nil {
		chi2, err = r.normal(g, e, r.a2, r.g2)
	}
	if r.p.Damping == 0 || !gr.have {
		if err != nil {
			gr.status, gr.err = Failed, err
			return
		}
		r.take(gr, chi2)
		if r.p.Damping == 0 {
			r.gaussNewton(gr)
			return
		}
		gr.mu, gr.nu = r.p.Damping, 2
		if chi2 == 0 {
			gr.status = Converged
			return
		}
		r.propose(gr)
		return
	}
	// Levenberg–Marquardt: accept the trial if χ² fell as predicted.
	if err == nil {
		pred := -dot(gr.g, gr.h) - 0.5*quad(gr.a, gr.h)
		if actual := 0.5 * (gr.chi2 - chi2); pred > 0 && actual > 0 {
			rho := actual / pred
			r.take(gr, chi2)
			gr.iters++
			gr.mu *= math.Max(1.0/3, 1-math.Pow(2*rho-1, 3))
			gr.nu, gr.rejections = 2, 0
			switch {
			case chi2 == 0 || r.small(gr.h):
				gr.status = Converged
			case gr.iters >= r.maxIter:
				gr.status = MaxIterations
			default:
				r.propose(gr)
			}
			return
		}
	}
	if r.small(gr.h) {
		gr.status = Converged
		return
	}
	gr.rejections++
	if gr.rejections > lsqMaxRejections {
		gr.status, gr.err = Stalled, fmt.Errorf("fit: group %d: %d steps in a row did not lower χ²", g, gr.rejections)
		return
	}
	gr.mu *= gr.nu
	gr.nu *= 2
	r.propose(gr)
}

// take makes the evaluated point the group's: its χ² and normal
// equations (from r.a2, r.g2), and for LM its scaling D.
func (r *lsqRun) take(gr *lsqGroup, chi2 float64) {
	gr.have, gr.chi2 = true, chi2
	gr.at = append(gr.at[:0], gr.trial...)
	gr.theta = gr.at[:len(gr.at):len(gr.at)]
	copy(gr.a, r.a2)
	copy(gr.g, r.g2)
	if r.p.Damping > 0 {
		k := r.k
		var top float64
		for c := range k {
			gr.diag[c] = math.Max(gr.diag[c], gr.a[c*k+c])
			top = math.Max(top, gr.diag[c])
		}
		if top == 0 {
			top = 1
		}
		for c := range k {
			gr.diag[c] = math.Max(gr.diag[c], 1e-12*top)
		}
	}
}

// gaussNewton takes the full step from the group's evaluated point.
func (r *lsqRun) gaussNewton(gr *lsqGroup) {
	if err := solveNormal(gr.h, gr.a, gr.g, r.k, 0, nil); err != nil {
		gr.status, gr.err = Stalled, err
		return
	}
	next := make([]float64, r.k)
	for c := range next {
		next[c] = gr.at[c] + gr.h[c]
	}
	gr.theta, gr.trial = next, next
	gr.iters++
	switch {
	case r.small(gr.h):
		gr.status = Converged
	case gr.iters >= r.maxIter:
		gr.status = MaxIterations
	}
}

// propose solves LM's damped equations and sets the trial, raising μ
// while they cannot be solved.
func (r *lsqRun) propose(gr *lsqGroup) {
	for range 64 {
		if solveNormal(gr.h, gr.a, gr.g, r.k, gr.mu, gr.diag) == nil {
			trial := make([]float64, r.k)
			for c := range trial {
				trial[c] = gr.theta[c] + gr.h[c]
			}
			if allFinite(trial) {
				gr.trial = trial
				return
			}
		}
		gr.mu *= gr.nu
		gr.nu *= 2
		if math.IsInf(gr.mu, 0) {
			break
		}
	}
	gr.status, gr.err = Stalled, fmt.Errorf("fit: the damped normal equations could not be solved (μ = %g)", gr.mu)
}

// solveNormal solves (A + μ·diag(d))·h = −b for symmetric k×k A into h:
// in closed form for k ≤ 2 (Cramer's rule for k = 2), by Cholesky
// beyond. μ = 0 leaves A undamped (d is not read). It returns an error
// where the matrix is not positive definite or h is not finite.
func solveNormal(h, a, b []float64, k int, mu float64, d []float64) error {
	damp := func(c int) float64 {
		if mu == 0 {
			return a[c*k+c]
		}
		return a[c*k+c] + mu*d[c]
	}
	singular := errors.New("fit: the normal equations JᵀC⁻¹J·h = −JᵀC⁻¹r are singular (not positive definite): the data do not determine every parameter")
	switch k {
	case 1:
		a00 := damp(0)
		if !(a00 > 0) {
			return singular
		}
		h[0] = -b[0] / a00
	case 2:
		a00, a01, a11 := damp(0), a[1], damp(1)
		g0, g1 := b[0], b[1]
		det := a00*a11 - a01*a01
		if !(a00 > 0) || !(det > 0) {
			return singular
		}
		h[0] = -(a11*g0 - a01*g1) / det
		h[1] = -(-a01*g0 + a00*g1) / det
	default:
		m := mat.NewSymDense(k, nil)
		rhs := mat.NewVecDense(k, nil)
		for i := range k {
			rhs.SetVec(i, -b[i])
			for j := i; j < k; j++ {
				v := a[i*k+j]
				if i == j {
					v = damp(i)
				}
				m.SetSym(i, j, v)
			}
		}
		var ch mat.Cholesky
		if !ch.Factorize(m) {
			return singular
		}
		var x mat.VecDense
		if err := ch.SolveVecTo(&x, rhs); err != nil {
			var cond mat.Condition
			if !errors.As(err, &cond) {
				return err
			}
		}
		for i := range k {
			h[i] = x.AtVec(i)
		}
	}
	if !allFinite(h) {
		return singular
	}
	return nil
}
