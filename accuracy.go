package gradsolve

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/gradsolve/gradsolve/method"
)

// Accuracy targets: users think in the error they can accept, not in
// tolerances. ChooseOptions runs the astrophysics paper's protocol as a
// pilot study: on an evenly spaced subsample of the ensemble it solves a
// converged reference, tries the methods over a half-decade grid of
// tolerances, and picks the cheapest configuration whose chosen
// quantile of the trajectories' errors meets the target.

// AccuracyTarget is what ChooseOptions aims at.
type AccuracyTarget struct {
	// Eps is the largest relative error of a trajectory's final state,
	// ‖y − y_ref‖₂ / ‖y_ref‖₂, allowed at the quantile (> 0).
	Eps float64
	// Quantile is the fraction of the pilot's trajectories that must
	// meet Eps (0 < Quantile ≤ 1); 0 means DefaultQuantile.
	Quantile float64
	// Pilot is the number of trajectories of the pilot, evenly spaced
	// over the ensemble; 0 means DefaultPilot (or all of a smaller
	// ensemble).
	Pilot int
	// Methods are the methods tried; nil means those of the family of
	// the method Options would run: Tsit5, DP5, Vern7 and DP8, or
	// Rosenbrock23 and Rodas5P. A method named in Options.Method is then
	// the only one tried.
	Methods []method.Method
	// Error, if not nil, is a trajectory's error in place of the
	// relative one: i indexes the trajectory in the ensemble, y is its
	// final state and ref the reference's (an application measures in
	// its own units). A NaN counts as +Inf.
	Error func(i int, y, ref []float64) float64
}

// The defaults of AccuracyTarget.
const (
	DefaultQuantile = 0.99
	DefaultPilot    = 256
)

// The tolerance grid of the pilot: rtol = 10^(−e) for e from 2 to 12 in
// steps of ½; atol = rtol·(Options.ATol/Options.RTol) where both are
// set, else atol = rtol.
const (
	pilotLooseExp = 2.0
	pilotTightExp = 12.0
)

// PilotPoint is one configuration a pilot tried.
type PilotPoint struct {
	Method     string
	RTol, ATol float64
	// Quantile, Median and Max are the pilot's relative errors, or
	// AccuracyTarget.Error's (+Inf for a trajectory that did not
	// succeed).
	Quantile, Median, Max float64
	// Cost is the pilot solve's work in right-hand-side evaluations,
	// FEvals + Dim·(JacEvals + LUs) summed over its trajectories: a
	// measure that does not change from run to run, so that the choice
	// does not either. Seconds is its time, for the report.
	Cost    int
	Seconds float64
	// Passes says Quantile ≤ Eps.
	Passes bool
}

// PilotReport is what ChooseOptions tried and what it chose.
type PilotReport struct {
	Eps, Quantile float64
	// Trajectories are the pilot's (indices into the ensemble).
	Trajectories []int
	// Reference names the reference solve: method and tolerances.
	Reference        string
	ReferenceSeconds float64
	// Points are the configurations tried, in order; Chosen indexes the
	// cheapest that passes.
	Points []PilotPoint
	Chosen int
	// Seconds is the whole pilot's time.
	Seconds float64
}

// ChooseOptions returns opts (nil: the zero Options) with Method, RTol
// and ATol set to the cheapest configuration of the pilot (see the
// package's section on accuracy targets) whose target.Quantile of
// relative final-state errors (or target.Error's) is at most
// target.Eps, and the pilot's
// report. Per-component tolerances (RTolVec, ATolVec) are cleared in the
// returned options. The pilot's trajectories are solved with the other
// options as given (workers, step budget, engine). Run the ensemble
// with the options it returns.
//
// The reference is DP8 at rtol 1e-13 for explicit methods and Rodas5P
// at rtol 1e-11 for Rosenbrock ones (atol 1e-15 and 1e-14, step budget
// 10⁶): Eps must be at least 100 times the reference's rtol. It returns
// an error wrapping ErrInput for a bad target, and an error saying so
// when no configuration of the grid meets it (with the report).
func ChooseOptions(ctx context.Context, prob *Problem, ens *Ensemble, opts *Options, target AccuracyTarget) (*Options, *PilotReport, error) {
	start := time.Now()
	var o Options
	if opts != nil {
		o = *opts
	}
	q, eps := target.Quantile, target.Eps
	if q == 0 {
		q = DefaultQuantile
	}
	switch {
	case prob == nil || ens == nil:
		return nil, nil, fmt.Errorf("%w: ChooseOptions: nil problem or ensemble", ErrInput)
	case !(eps > 0) || math.IsInf(eps, 0):
		return nil, nil, fmt.Errorf("%w: AccuracyTarget.Eps = %g: must be finite and > 0", ErrInput, eps)
	case !(q > 0 && q <= 1):
		return nil, nil, fmt.Errorf("%w: AccuracyTarget.Quantile = %g: must lie in (0, 1]", ErrInput, q)
	case target.Pilot < 0:
		return nil, nil, fmt.Errorf("%w: AccuracyTarget.Pilot = %d: must be ≥ 0", ErrInput, target.Pilot)
	case ens.N < 1:
		return nil, nil, fmt.Errorf("%w: Ensemble.N = %d: must be ≥ 1", ErrInput, ens.N)
	}
	m, _, err := resolveMethod(prob, &o, prob.ProgramSet())
	if err != nil {
		return nil, nil, err
	}
	stiff := m.Family() == method.RosenbrockFamily
	methods := target.Methods
	switch {
	case methods != nil:
	case !method.IsNil(o.Method):
		methods = []method.Method{o.Method}
	case stiff:
		methods = []method.Method{method.Rosenbrock23, method.Rodas5P}
	default:
		methods = []method.Method{method.Tsit5, method.DP5, method.Vern7, method.DP8}
	}
	refM, refR, refA := method.Method(method.DP8), 1e-13, 1e-15
	if stiff {
		refM, refR, refA = method.Rodas5P, 1e-11, 1e-14
	}
	if eps < 100*refR {
		return nil, nil, fmt.Errorf("%w: AccuracyTarget.Eps = %g: below what the reference (%s at rtol %g) resolves; want at least %g", ErrInput, eps, refM.MethodName(), refR, 100*refR)
	}
	ratio := 1.0
	if o.RTol > 0 && o.ATol > 0 {
		ratio = o.ATol / o.RTol
	}

	// The pilot: an evenly spaced subsample.
	np := target.Pilot
	if np == 0 {
		np = DefaultPilot
	}
	np = min(np, ens.N)
	idx := make([]int, np)
	for j := range idx {
		idx[j] = int(int64(j) * int64(ens.N) / int64(np))
	}
	pilot := subEnsemble(prob, ens, idx)
	rep := &PilotReport{Eps: eps, Quantile: q, Trajectories: idx, Chosen: -1,
		Reference: fmt.Sprintf("%s at rtol %g, atol %g", refM.MethodName(), refR, refA)}

	ro := o
	ro.Method, ro.RTol, ro.ATol, ro.RTolVec, ro.ATolVec, ro.Sens, ro.MaxSteps = refM, refR, refA, nil, nil, nil, 1_000_000
	ro.Engine = ""
	t0 := time.Now()
	ref, err := Solve(ctx, prob, pilot, &ro)
	if err != nil {
		return nil, nil, fmt.Errorf("the pilot's reference: %w", err)
	}
	if err := ref.Errs(); err != nil {
		return nil, nil, fmt.Errorf("the pilot's reference (%s) did not converge: %w", rep.Reference, err)
	}
	rep.ReferenceSeconds = time.Since(t0).Seconds()

	for _, mt := range methods {
		for e := pilotLooseExp; e <= pilotTightExp+1e-9; e += 0.5 {
			rtol := math.Pow(10, -e)
			po := o
			po.Method, po.RTol, po.ATol, po.RTolVec, po.ATolVec, po.Sens = mt, rtol, rtol*ratio, nil, nil, nil
			res, err := Solve(ctx, prob, pilot, &po)
			if err != nil {
				return nil, nil, fmt.Errorf("the pilot at %s, rtol %g: %w", mt.MethodName(), rtol, err)
			}
			pt := PilotPoint{Method: mt.MethodName(), RTol: po.RTol, ATol: po.ATol, Seconds: res.Elapsed.Seconds()}
			errs := make([]float64, np)
			for i := range np {
				errs[i] = math.Inf(1)
				switch {
				case res.Status[i] != Success:
				case target.Error != nil:
					if e := target.Error(idx[i], res.Row(i), ref.Row(i)); !math.IsNaN(e) {
						errs[i] = e
					}
				default:
					errs[i] = relDiff(res.Row(i), ref.Row(i))
				}
				st := res.Stats[i]
				pt.Cost += st.FEvals + prob.Dim*(st.JacEvals+st.LUs)
			}
			slices.Sort(errs)
			pt.Quantile, pt.Median, pt.Max = quantile(errs, q), quantile(errs, 0.5), errs[np-1]
			pt.Passes = pt.Quantile <= eps
			rep.Points = append(rep.Points, pt)
			if pt.Passes {
				break // tighter tolerances cost more
			}
		}
	}
	for i, pt := range rep.Points {
		if pt.Passes && (rep.Chosen < 0 || pt.Cost < rep.Points[rep.Chosen].Cost) {
			rep.Chosen = i
		}
	}
	rep.Seconds = time.Since(start).Seconds()
	if rep.Chosen < 0 {
		return nil, rep, fmt.Errorf("no configuration of the pilot's grid (rtol 1e-2 to 1e-12) puts the %g quantile of the errors at or below %g", q, eps)
	}
	c := rep.Points[rep.Chosen]
	out := o
	out.RTol, out.ATol, out.RTolVec, out.ATolVec = c.RTol, c.ATol, nil, nil
	for _, mt := range methods {
		if mt.MethodName() == c.Method {
			out.Method = mt
		}
	}
	return &out, rep, nil
}

// relDiff returns ‖a − b‖₂ / ‖b‖₂ (the absolute difference where b is
// zero).
func relDiff(a, b []float64) float64 {
	var d, n float64
	for i := range b {
		d += (a[i] - b[i]) * (a[i] - b[i])
		n += b[i] * b[i]
	}
	if n == 0 {
		return math.Sqrt(d)
	}
	return math.Sqrt(d / n)
}

// quantile returns the q-quantile of sorted values: the smallest value
// with at least a fraction q of them at or below it.
func quantile(sorted []float64, q float64) float64 {
	k := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(k, len(sorted)-1))]
}

// subEnsemble returns the trajectories idx of ens as an ensemble.
func subEnsemble(prob *Problem, ens *Ensemble, idx []int) *Ensemble {
	part := ens.Parts(prob)
	var out Ensemble
	out.N = len(idx)
	shared := func(v []float64, width int) bool {
		return width == 0 || len(v) != ens.N*width || ens.N == 1 && len(v) == width
	}
	dim, m := prob.Dim, prob.NumParams
	out.Y0, out.P, out.T0, out.T1 = ens.Y0, ens.P, ens.T0, ens.T1
	if !shared(ens.Y0, dim) {
		out.Y0 = nil
	}
	if !shared(ens.P, m) {
		out.P = nil
	}
	if !shared(ens.T0, 1) {
		out.T0 = nil
	}
	if !shared(ens.T1, 1) {
		out.T1 = nil
	}
	out.Save, out.SavePerTrajectory = nil, false // (saves do not move the steps: the final states are the same)
	for _, i := range idx {
		row, _ := part(i, i+1)
		if !shared(ens.Y0, dim) {
			out.Y0 = append(out.Y0, row.Y0...)
		}
		if !shared(ens.P, m) {
			out.P = append(out.P, row.P...)
		}
		if !shared(ens.T0, 1) {
			out.T0 = append(out.T0, row.T0...)
		}
		if !shared(ens.T1, 1) {
			out.T1 = append(out.T1, row.T1...)
		}
	}
	return &out
}
