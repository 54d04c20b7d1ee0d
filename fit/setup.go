package fit

import (
	"errors"
	"fmt"
	"math"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/router"
)

// ErrInput is wrapped by every error Run returns for a bad Spec. Errors
// that the solves find in the ensemble or the options wrap
// gradsolve.ErrInput as well.
var ErrInput = errors.New("fit: invalid spec")

func inputErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInput}, args...)...)
}

// errorf makes a plain error with the package's prefix.
func errorf(format string, args ...any) error {
	return fmt.Errorf("fit: "+format, args...)
}

// setup is a checked Spec with everything derived from it.
type setup struct {
	prob       *gradsolve.Problem
	n, dim, m  int
	k          int // save times per trajectory
	ens        gradsolve.Ensemble
	opts       gradsolve.Options
	baseP      []float64 // N×m: the template's parameters
	baseY0     []float64 // N×Dim, only where initial values are fitted
	fitY0      bool
	params     []Param
	names      []string
	wrt        []gradsolve.Wrt
	np         int
	groupOf    []int
	members    [][]int
	start      [][]float64 // per group, natural
	scale      [][]float64 // per group, the identity transforms' units
	data       *lsq
	loss       gradsolve.Loss
	opt        Optimizer
	maxIter    int
	tol        Tolerances
	mode       router.Mode
	modeReason string
	rerecord   Rerecord
	driftEvery int
	noise      *Noise
	sigma      float64
	progress   func(Progress)
}

// G returns the number of groups.
func (s *setup) G() int { return len(s.members) }

// newSetup checks spec and derives the setup. Every error names the
// field and the rule broken.
func newSetup(spec *Spec) (*setup, error) {
	if spec == nil {
		return nil, inputErr("nil Spec")
	}
	prob := spec.Problem
	if prob == nil {
		return nil, inputErr("Spec.Problem is nil")
	}
	if err := prob.Validate(); err != nil {
		return nil, fmt.Errorf("%w: Spec.Problem: %w", ErrInput, err)
	}
	s := &setup{prob: prob, n: spec.Ensemble.N, dim: prob.Dim, m: prob.NumParams, ens: spec.Ensemble, opts: spec.Options,
		params: spec.Params, np: len(spec.Params), progress: spec.Progress}
	if s.n < 1 {
		return nil, inputErr("Spec.Ensemble.N = %d: must be ≥ 1", s.n)
	}
	o := spec.Options
	switch {
	case o.Sens != nil:
		return nil, inputErr("Spec.Options.Sens is set: the fit asks for the sensitivities it needs itself; leave it nil")
	case o.Mode != router.Auto:
		return nil, inputErr("Spec.Options.Mode = %v: set Spec.Mode to choose the route, and leave Options.Mode unset", o.Mode)
	case o.GradientWrt != nil:
		return nil, inputErr("Spec.Options.GradientWrt is set: Spec.Params says what is fitted; leave it nil")
	}
	// Save times (the solves check them in full).
	s.k = len(s.ens.Save)
	if s.ens.SavePerTrajectory {
		if s.k%s.n != 0 {
			return nil, inputErr("Spec.Ensemble.Save has %d times with SavePerTrajectory: must be N·K = %d·K", s.k, s.n)
		}
		s.k /= s.n
	}
	if err := s.checkParams(); err != nil {
		return nil, err
	}
	if err := s.resolveGroups(spec); err != nil {
		return nil, err
	}
	if err := s.resolveStart(spec.Start); err != nil {
		return nil, err
	}
	if err := s.resolveLoss(spec); err != nil {
		return nil, err
	}
	if err := s.resolveOptimizer(spec); err != nil {
		return nil, err
	}
	if err := s.resolveMode(spec.Mode); err != nil {
		return nil, err
	}
	if err := s.resolveRerecord(spec); err != nil {
		return nil, err
	}
	if err := s.resolveNoise(spec.Noise); err != nil {
		return nil, err
	}
	return s, nil
}

// checkParams checks Spec.Params and the template's parameters and
// initial values they need.
func (s *setup) checkParams() error {
	if s.np == 0 {
		return inputErr("Spec.Params is empty: nothing to fit (list at least one parameter or initial value)")
	}
	seen := map[gradsolve.Wrt]int{}
	for c, p := range s.params {
		w := p.Wrt
		limit, what := s.m, "parameter"
		if w.Y0 {
			limit, what = s.dim, "initial value"
		}
		if w.Index < 0 || w.Index >= limit {
			return inputErr("Spec.Params[%d]: %s index %d out of range [0, %d)", c, what, w.Index, limit)
		}
		if prev, ok := seen[w]; ok {
			return inputErr("Spec.Params[%d]: %v is already Spec.Params[%d]", c, w, prev)
		}
		seen[w] = c
		if err := p.Transform.check(); err != nil {
			return inputErr("Spec.Params[%d] (%s): %v", c, s.name(w), err)
		}
		if math.IsNaN(p.Scale) || math.IsInf(p.Scale, 0) || p.Scale < 0 {
			return inputErr("Spec.Params[%d] (%s): Scale = %g: must be finite and ≥ 0 (0 means automatic)", c, s.name(w), p.Scale)
		}
		s.wrt = append(s.wrt, w)
		s.names = append(s.names, s.name(w))
		s.fitY0 = s.fitY0 || w.Y0
	}
	// The template's parameters, N×m.
	p := s.ens.P
	if p == nil {
		p = s.prob.P
	}
	if p == nil && s.m > 0 {
		return inputErr("Spec.Ensemble.P is nil and the problem has no default parameters: give %d per trajectory (or %d shared)", s.n*s.m, s.m)
	}
	var err error
	if s.baseP, err = expandRows("Spec.Ensemble.P", p, s.n, s.m, "NumParams"); err != nil {
		return err
	}
	if s.fitY0 {
		y0 := s.ens.Y0
		if y0 == nil {
			if s.prob.Initial != nil {
				return inputErr("Spec.Params fits an initial value, but the problem computes its initial state from the parameters: set Spec.Ensemble.Y0")
			}
			y0 = s.prob.Y0
		}
		if y0 == nil {
			return inputErr("Spec.Params fits an initial value, but Spec.Ensemble.Y0 is nil and the problem has no default initial state")
		}
		if s.baseY0, err = expandRows("Spec.Ensemble.Y0", y0, s.n, s.dim, "Dim"); err != nil {
			return err
		}
	}
	return nil
}

// name returns the name of a fitted quantity.
func (s *setup) name(w gradsolve.Wrt) string {
	if w.Y0 {
		if s.prob.StateNames != nil {
			return "y0." + s.prob.StateNames[w.Index]
		}
		return fmt.Sprintf("y0[%d]", w.Index)
	}
	if s.prob.ParamNames != nil {
		return s.prob.ParamNames[w.Index]
	}
	return fmt.Sprintf("p[%d]", w.Index)
}

// expandRows returns v (width values shared, or n·width) as n rows, and
// checks that it is finite.
func expandRows(name string, v []float64, n, width int, wname string) ([]float64, error) {
	if len(v) != width && len(v) != n*width {
		return nil, inputErr("%s has length %d: want %s = %d (shared) or N·%s = %d", name, len(v), wname, width, wname, n*width)
	}
	for k, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, inputErr("%s[%d] = %g is not finite", name, k, x)
		}
	}
	if len(v) == n*width {
		return append([]float64(nil), v...), nil
	}
	out := make([]float64, 0, n*width)
	for range n {
		out = append(out, v...)
	}
	return out, nil
}

// resolveGroups derives each trajectory's group and each group's
// members from Owner and Group.
func (s *setup) resolveGroups(spec *Spec) error {
	n := s.n
	s.groupOf = make([]int, n)
	switch spec.Owner {
	case Shared, PerTrajectory:
		if spec.Group != nil {
			return inputErr("Spec.Group is set but Spec.Owner = %v: it is only read with Owner = Grouped", spec.Owner)
		}
		if spec.Owner == PerTrajectory {
			for i := range n {
				s.groupOf[i] = i
			}
		}
	case Grouped:
		if len(spec.Group) != n {
			return inputErr("Spec.Group has length %d: want one group index per trajectory, N = %d", len(spec.Group), n)
		}
		g := 0
		for i, x := range spec.Group {
			if x < 0 || x >= n {
				return inputErr("Spec.Group[%d] = %d: group index out of range [0, N = %d)", i, x, n)
			}
			g = max(g, x+1)
			s.groupOf[i] = x
		}
		count := make([]int, g)
		for _, x := range spec.Group {
			count[x]++
		}
		for x, c := range count {
			if c == 0 {
				return inputErr("Spec.Group: group %d has no trajectories: number the groups 0 … G−1 = %d without gaps", x, g-1)
			}
		}
	default:
		return inputErr("Spec.Owner = %d: want Shared, PerTrajectory or Grouped", int(spec.Owner))
	}
	G := 0
	for _, x := range s.groupOf {
		G = max(G, x+1)
	}
	s.members = make([][]int, G)
	for i, x := range s.groupOf {
		s.members[x] = append(s.members[x], i)
	}
	return nil
}

// resolveStart derives each group's start and identity scales.
func (s *setup) resolveStart(start []float64) error {
	G, np := s.G(), s.np
	switch len(start) {
	case 0:
		if start != nil {
			return inputErr("Spec.Start is empty: want nil (the template's values), len(Params) = %d or G·len(Params) = %d values", np, G*np)
		}
	case np, G * np:
	default:
		return inputErr("Spec.Start has length %d: want len(Params) = %d (shared) or G·len(Params) = %d (G = %d groups)", len(start), np, G*np, G)
	}
	s.start, s.scale = make([][]float64, G), make([][]float64, G)
	for g := range G {
		th := make([]float64, np)
		first := s.members[g][0]
		for c, w := range s.wrt {
			switch {
			case len(start) == np:
				th[c] = start[c]
			case start != nil:
				th[c] = start[g*np+c]
			case w.Y0:
				th[c] = s.baseY0[first*s.dim+w.Index]
			default:
				th[c] = s.baseP[first*s.m+w.Index]
			}
			tr := s.params[c].Transform
			if !tr.inside(th[c]) {
				where := "Spec.Start"
				switch {
				case len(start) == np:
					where = fmt.Sprintf("Spec.Start[%d]", c)
				case start != nil:
					where = fmt.Sprintf("Spec.Start[%d] (group %d)", g*np+c, g)
				default:
					where = fmt.Sprintf("the template's value (group %d, trajectory %d; Spec.Start is nil)", g, first)
				}
				lo, hi := tr.Bounds()
				return inputErr("%s: start of %s = %g lies outside the domain (%g, %g) of its %v transform", where, s.names[c], th[c], lo, hi, tr)
			}
		}
		sc := make([]float64, np)
		for c, p := range s.params {
			switch {
			case p.Scale > 0:
				sc[c] = p.Scale
			case th[c] != 0:
				sc[c] = math.Abs(th[c])
			default:
				sc[c] = 1
			}
		}
		s.start[g], s.scale[g] = th, sc
	}
	return nil
}

// resolveLoss checks Data or Loss.
func (s *setup) resolveLoss(spec *Spec) error {
	switch {
	case spec.Data == nil && spec.Loss == nil:
		return inputErr("neither Spec.Data nor Spec.Loss is set: give the least-squares targets or a loss")
	case spec.Data != nil && spec.Loss != nil:
		return inputErr("both Spec.Data and Spec.Loss are set: give one")
	case spec.Loss != nil:
		s.loss = spec.Loss
		return nil
	}
	d, err := newLSQ(*spec.Data, s.n, s.dim, s.k)
	if err != nil {
		return err
	}
	s.data = d
	return nil
}

// resolveOptimizer checks the optimiser, MaxIter and the tolerances.
func (s *setup) resolveOptimizer(spec *Spec) error {
	opt := spec.Optimizer
	if opt == nil {
		if s.data != nil {
			opt = &LevenbergMarquardt{}
		} else {
			opt = &LBFGS{}
		}
	}
	switch o := opt.(type) {
	case *Adam:
		if o == nil {
			return inputErr("Spec.Optimizer is a nil *Adam")
		}
	case *LBFGS:
		if o == nil {
			return inputErr("Spec.Optimizer is a nil *LBFGS")
		}
	case *LevenbergMarquardt:
		if o == nil {
			return inputErr("Spec.Optimizer is a nil *LevenbergMarquardt")
		}
	}
	r, err := opt.resolved()
	if err != nil {
		return inputErr("Spec.Optimizer: %v", err)
	}
	s.opt = r
	if r.jacobian() && s.data == nil {
		return inputErr("Spec.Optimizer is %s, which needs least-squares residuals: set Spec.Data (not Spec.Loss)", r.Name())
	}
	switch {
	case spec.MaxIter < 0:
		return inputErr("Spec.MaxIter = %d: must be ≥ 0 (0 means %d for %s)", spec.MaxIter, r.defaultMaxIter(), r.Name())
	case spec.MaxIter == 0:
		s.maxIter = r.defaultMaxIter()
	default:
		s.maxIter = spec.MaxIter
	}
	t := spec.Tol
	for _, f := range []struct {
		name string
		v    float64
	}{{"Step", t.Step}, {"Loss", t.Loss}, {"Grad", t.Grad}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 {
			return inputErr("Spec.Tol.%s = %g: must be finite and ≥ 0", f.name, f.v)
		}
	}
	if t.Step == 0 {
		t.Step = DefaultStepTol
	}
	if t.Loss == 0 {
		t.Loss = DefaultLossTol
	}
	s.tol = t
	return nil
}

// Costs of one evaluation of a fit, in forward solves of the same
// ensemble, measured by BenchmarkAdamUpdate (go test ./fit -run XXX
// -bench AdamUpdate -benchtime 40x; 256 Lorenz trajectories, Tsit5 at
// rtol 1e-8, AMD EPYC, 2 cores, Go 1.26.8).
//
// On the scalar engines sensitivities to 1, 3 and 6
// fitted quantities cost 1.2–1.5, 1.8–2.1 and 2.7 solves, a replay with
// its reverse sweep 3.7–4.7.
//
// On cpu-lanes, where the solve, the forward replay and the reverse walk
// all run whole rounds in machine code (ivp.LaneRounds, ReplayRounds,
// ReverseRounds), the solve itself is about twice as fast: sensitivities
// to 1, 3 and 6 quantities cost 1.15–1.4, 2.1–2.8 and 3.6–4.8 solves, a
// replay with its reverse sweep 1.7–2.9 (interleaved runs, 2026-12-01);
// since the rounds' tails gather the lanes' mesh values in registers and
// owed saves run in lanes (2026-12-02, bench/results/fit-update-tails-2026-12-02.txt),
// 1.6–1.8 (Lorenz, 1, 3 or 6 quantities; the decay alike) and 2.1–2.3
// (the halo with nine save times), against 1.2–1.4, 2.3 and 3.8–4.5 for
// the sensitivities to 1, 3 and 6: the forward route for up to two
// quantities, the reverse beyond.
//
// On cpu-ros-lanes (256 Robertson trajectories, Rodas5P at rtol 1e-8,
// atol 1e-12, fitting 1, 2, 3 rates or the rates and the three initial
// values: fit/bench_test.go's robertson cases, interleaved runs on the
// same machine, 2026-12-02, bench/results/fit-robertson-update-2026-12-02.txt)
// sensitivities to 1, 2, 3 and 6 quantities cost 1.4–1.8, 2.3–2.5,
// 2.9–3.7 and 5.2–5.7 solves — about 1 + 0.7 per column. A replay with
// its reverse sweep, since both walks run whole rounds in machine code
// there too (ros.LaneReplayer as ivp.ReverseRounder, ros.LaneSolver as
// ivp.ReplayRounder), costs 2.1–2.6 whatever the count (2.5 typical;
// 2.8–3.6 before; interleaved pairs,
// bench/results/fit-robertson-update-2026-12-02-rounds.txt, where three
// rates cost 2.8–3.2 forward against 2.5–2.6 by the replay, two alike):
// the forward route for up to two quantities, the reverse beyond.
//
// The router's own constants (package router) are those of a recording
// and a gradient on the explicit engine, which a fit does not pay per
// update.
const (
	forwardColumnCost  = 0.3
	replayGradientCost = 4.0

	lanesForwardColumnCost  = 0.5
	lanesReplayGradientCost = 2.0

	rosLanesForwardColumnCost  = 0.7
	rosLanesReplayGradientCost = 2.5
)

// resolveMode chooses the route. LevenbergMarquardt needs the
// residuals' Jacobian: forward sensitivities. A gradient optimiser
// takes the cheaper of the two by the fit's cost model, per update,
//
//	                        cpu-lanes            cpu-ros-lanes        other engines
//	forward sensitivities:  1 + 0.5·len(Params)  1 + 0.7·len(Params)  1 + 0.3·len(Params) forward solves
//	reverse replay:         2.0                  2.5                  4 forward solves
//
// (the engine the fit's solves run on, gradsolve.ChooseEngine) among the
// routes whose derivative programs the problem offers.
func (s *setup) resolveMode(mode router.Mode) error {
	offers := s.prob.ProgramSet()
	canFwd, canRev := offers.Has(ode.HasJVP), offers.Has(ode.HasVJP)
	col, rev, on := forwardColumnCost, replayGradientCost, ""
	if ch, err := gradsolve.ChooseEngine(s.prob, s.n, &s.opts); err == nil {
		switch on = " on " + ch.Engine; ch.Engine {
		case "cpu-lanes":
			col, rev = lanesForwardColumnCost, lanesReplayGradientCost
		case "cpu-ros-lanes":
			col, rev = rosLanesForwardColumnCost, rosLanesReplayGradientCost
		}
	}
	fwd := 1 + col*float64(s.np)
	costs := fmt.Sprintf("estimated cost per update%s, in forward solves: forward sensitivities %.1f (%s), reverse replay %.1f (replay and gradient)", on, fwd, columns(s.np), rev)
	switch mode {
	case router.Auto, router.Forward, router.Reverse:
	default:
		return inputErr("Spec.Mode = %v: want router.Auto, router.Forward or router.Reverse", mode)
	}
	if s.opt.jacobian() {
		if mode == router.Reverse {
			return inputErr("Spec.Mode = reverse: %s needs the residuals' Jacobian, which forward sensitivities give; use router.Forward or router.Auto", s.opt.Name())
		}
		s.mode = router.Forward
		s.modeReason = fmt.Sprintf("%s needs the residuals' Jacobian: forward sensitivities (%s)", s.opt.Name(), columns(s.np))
		if mode == router.Forward {
			s.modeReason = "mode named by the user; " + s.modeReason
		}
		return nil
	}
	switch {
	case mode != router.Auto:
		s.mode, s.modeReason = mode, "mode named by the user; "+costs
	case fwd <= rev && canFwd, !canRev && canFwd:
		s.mode = router.Forward
		if fwd <= rev {
			s.modeReason = "forward sensitivities are cheaper: " + costs
		} else {
			s.modeReason = "forward sensitivities: the problem offers no cotangent program (VJP) for the reverse replay; " + costs
		}
	case canRev:
		s.mode = router.Reverse
		if fwd > rev {
			s.modeReason = "reverse replay is cheaper: " + costs
		} else {
			s.modeReason = "reverse replay: the problem offers no tangent program (JVP) for forward sensitivities; " + costs
		}
	default:
		return inputErr("Spec.Problem %q offers neither a tangent (JVP) nor a cotangent (VJP) program: the fit needs derivatives (compile the problem from formulas, package sym/tape, or set Problem.Programs)", s.prob.Name)
	}
	return nil
}

// resolveRerecord checks the re-record policy and the drift checks.
func (s *setup) resolveRerecord(spec *Spec) error {
	r := spec.Rerecord
	switch r.Mode {
	case RerecordAuto:
		if math.IsNaN(r.Threshold) || math.IsInf(r.Threshold, 0) || r.Threshold < 0 {
			return inputErr("Spec.Rerecord.Threshold = %g: must be finite and ≥ 0 (0 means %g)", r.Threshold, DefaultRerecordThreshold)
		}
		if r.Threshold == 0 {
			r.Threshold = DefaultRerecordThreshold
		}
		if r.Every != 0 {
			return inputErr("Spec.Rerecord.Every = %d with Mode = auto: it is only read with Mode = RerecordEvery", r.Every)
		}
	case RerecordNever:
		if r.Every != 0 || r.Threshold != 0 {
			return inputErr("Spec.Rerecord with Mode = never sets Every = %d and Threshold = %g: leave them zero", r.Every, r.Threshold)
		}
	case RerecordEvery:
		if r.Every < 1 {
			return inputErr("Spec.Rerecord.Every = %d with Mode = every: must be ≥ 1", r.Every)
		}
		if r.Threshold != 0 {
			return inputErr("Spec.Rerecord.Threshold = %g with Mode = every: it is only read with Mode = RerecordAuto", r.Threshold)
		}
	default:
		return inputErr("Spec.Rerecord.Mode = %d: want RerecordAuto, RerecordNever or RerecordEvery", int(r.Mode))
	}
	s.rerecord = r
	if spec.DriftEvery < 0 {
		return inputErr("Spec.DriftEvery = %d: must be ≥ 0 (0 means no drift checks)", spec.DriftEvery)
	}
	s.driftEvery = spec.DriftEvery
	return nil
}

// resolveNoise checks the noise model.
func (s *setup) resolveNoise(nz *Noise) error {
	if nz == nil {
		return nil
	}
	if s.data == nil {
		return inputErr("Spec.Noise is set without Spec.Data: the Fisher information is that of the least-squares residuals")
	}
	if math.IsNaN(nz.Sigma) || math.IsInf(nz.Sigma, 0) || nz.Sigma < 0 {
		return inputErr("Spec.Noise.Sigma = %g: must be finite and ≥ 0 (0 means 1)", nz.Sigma)
	}
	if nz.Weights != nil {
		if len(nz.Weights) != s.dim {
			return inputErr("Spec.Noise.Weights has length %d: want Dim = %d (one precision per state component)", len(nz.Weights), s.dim)
		}
		for d, w := range nz.Weights {
			if math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
				return inputErr("Spec.Noise.Weights[%d] = %g: must be finite and ≥ 0", d, w)
			}
		}
	}
	s.noise = nz
	s.sigma = nz.Sigma
	if s.sigma == 0 {
		s.sigma = 1
	}
	return nil
}

// rows returns the per-trajectory parameters (N×m) and, where initial
// values are fitted, initial states (N×Dim, else nil) at the groups'
// natural values theta.
func (s *setup) rows(theta [][]float64) (p, y0 []float64) {
	p = append([]float64(nil), s.baseP...)
	if s.fitY0 {
		y0 = append([]float64(nil), s.baseY0...)
	}
	for i, g := range s.groupOf {
		for c, w := range s.wrt {
			if w.Y0 {
				y0[i*s.dim+w.Index] = theta[g][c]
			} else {
				p[i*s.m+w.Index] = theta[g][c]
			}
		}
	}
	return p, y0
}

// ensemble returns the template with the given rows.
func (s *setup) ensemble(p, y0 []float64) *gradsolve.Ensemble {
	e := s.ens
	e.P = p
	if y0 != nil {
		e.Y0 = y0
	}
	return &e
}

// columns returns "1 column" or "n columns".
func columns(n int) string {
	if n == 1 {
		return "1 column"
	}
	return itoa(n) + " columns"
}
