package halo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/app/internal/failed"
	"github.com/gradsolve/gradsolve/app/internal/quantile"
	"github.com/gradsolve/gradsolve/internal/memory"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/systems"
)

// The accuracy requirement, fixed in advance (issue 6): the 99th
// percentile of the orbits' state errors and sensitivity errors.
const (
	StateRequirement = 1e-4
	SensRequirement  = 1e-3
	Quantile         = 0.99
	// MedianPeriods is the median number of orbital periods integrated.
	MedianPeriods = 3.7
)

// Config describes a run. The zero value of each field means the
// default given in its comment.
type Config struct {
	// N is the number of stars (default 10000).
	N int
	// Seed seeds the initial conditions (0 is a valid seed).
	Seed uint64
	// VC, Q, RC are the halo's parameters (default 1, 0.7, 0.2).
	VC, Q, RC float64
	// Method, RTol and ATol set the solve. Default: Vern7 at rtol =
	// atol = 1e-7, the cheapest setting measured to meet the requirement
	// with a margin of ten or more (on 1000 stars: state p99 6.5e-6,
	// sensitivity p99 5.3e-5; TestDefaultsMeetRequirement).
	Method     *method.Tableau
	RTol, ATol float64
	// Engine names the engine of the solves at Method
	// (gradsolve.Options.Engine); empty lets the router pick.
	Engine string
	// Workers is the number of goroutines (0: all cores).
	Workers int
	// Chunk is the number of stars a streamed run (RunChunks,
	// Plan.Stream) solves at a time; 0 means ChunkSize's. Run solves all
	// N at once.
	Chunk int
	// Progress, if set, receives progress of the main solve.
	Progress func(done, total int)
	// Check solves the converged reference too and measures the errors
	// against the requirement (Result.StateErr … Pass); without it those
	// fields are empty.
	Check bool
}

func (c *Config) defaults() error {
	if c.N == 0 {
		c.N = 10000
	}
	if c.VC == 0 && c.Q == 0 && c.RC == 0 {
		c.VC, c.Q, c.RC = 1, 0.7, 0.2
	}
	if c.Method == nil {
		c.Method = method.Vern7
	}
	if c.RTol == 0 && c.ATol == 0 {
		c.RTol, c.ATol = 1e-7, 1e-7
	}
	switch {
	case c.N < 1:
		return fmt.Errorf("halo: N = %d: must be ≥ 1", c.N)
	case c.Chunk < 0:
		return fmt.Errorf("halo: Chunk = %d: must be ≥ 1, or 0 for the automatic chunk", c.Chunk)
	case !(c.VC > 0) || !(c.Q > 0) || !(c.RC > 0) || math.IsInf(c.VC+c.Q+c.RC, 0):
		return fmt.Errorf("halo: vc = %g, q = %g, rc = %g: all must be finite and > 0", c.VC, c.Q, c.RC)
	}
	return nil
}

// Stars holds the drawn initial conditions and their derived scales.
type Stars struct {
	// Y0 holds the initial states, N×6 (x, y, z, vx, vy, vz).
	Y0 []float64
	// E is each star's energy; Period its orbital period T(E); RE and VE
	// the error units r_E and v_E of applications.md §A.3.
	E, Period, RE, VE []float64
}

// drawer draws stars one after another from a seed's stream: the i-th
// star drawn is star i of the run, so stars drawn chunk by chunk are
// those of one Draw.
type drawer struct {
	rng *rand.Rand
	p   []float64
}

func newDrawer(seed uint64, p []float64) *drawer {
	return &drawer{rng: rand.New(rand.NewPCG(seed, 0x6a6f_686e_6861_6c6f)), p: p}
}

// next draws the next star's initial state into y (6 numbers).
func (d *drawer) next(y []float64) {
	rng := d.rng
	vc, rc := d.p[0], d.p[2]
	vcirc := func(r float64) float64 { return vc * r / math.Sqrt(rc*rc+r*r) }
	r0 := 0.5 + rng.Float64()
	psi := 2 * math.Pi * rng.Float64()
	z0 := 0.1 * r0 * rng.NormFloat64()
	eta := rng.Float64()
	sign := 1.0
	if rng.IntN(2) == 0 {
		sign = -1
	}
	vcR := vcirc(r0)
	vt, vR, vz := eta*vcR, sign*math.Sqrt(1-eta*eta)*vcR, 0.1*vcR*rng.NormFloat64()
	c, sn := math.Cos(psi), math.Sin(psi)
	y[0], y[1], y[2] = r0*c, r0*sn, z0
	y[3], y[4], y[5] = vR*c-vt*sn, vR*sn+vt*c, vz
}

// stars draws the next len(periods) stars, whose periods are known.
func (d *drawer) stars(periods []float64) *Stars {
	n := len(periods)
	s := &Stars{Y0: make([]float64, 6*n), E: make([]float64, n), Period: append([]float64(nil), periods...),
		RE: make([]float64, n), VE: make([]float64, n)}
	for i := range n {
		y := s.Y0[6*i : 6*i+6]
		d.next(y)
		s.E[i] = systems.HaloEnergy(y, d.p)
		s.RE[i], s.VE[i] = systems.HaloScales(y, d.p)
	}
	return s
}

// Draw draws n stars reproducibly from seed by the package's recipe for
// the halo p = (vc, q, rc).
func Draw(n int, seed uint64, p []float64) *Stars {
	d := newDrawer(seed, p)
	s := &Stars{Y0: make([]float64, 6*n), E: make([]float64, n), Period: make([]float64, n), RE: make([]float64, n), VE: make([]float64, n)}
	for i := range n {
		y := s.Y0[6*i : 6*i+6]
		d.next(y)
		s.E[i] = systems.HaloEnergy(y, p)
		s.RE[i], s.VE[i] = systems.HaloScales(y, p)
		s.Period[i] = Period(s.E[i], p)
	}
	return s
}

// CircularRadius returns the radius of the circular orbit in the plane
// with energy E, solving ½·v_c(R)² + ½·vc²·ln(rc² + R²) = E (the left
// side increases with R) by bisection to full precision. It returns NaN
// if E is below the energy of the centre, ½·vc²·ln rc².
func CircularRadius(E float64, p []float64) float64 {
	vc, rc := p[0], p[2]
	g := func(r float64) float64 {
		d := rc*rc + r*r
		return 0.5*vc*vc*r*r/d + 0.5*vc*vc*math.Log(d) - E
	}
	if g(0) > 0 || math.IsNaN(E) {
		return math.NaN()
	}
	lo, hi := 0.0, 1.0
	for g(hi) < 0 {
		hi *= 2
		if hi > 1e300 {
			return math.NaN()
		}
	}
	for range 200 {
		mid := 0.5 * (lo + hi)
		if mid == lo || mid == hi {
			break
		}
		if g(mid) < 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return 0.5 * (lo + hi)
}

// Period returns the orbital period of energy E, 2π·R_c/v_c(R_c) for the
// circular radius R_c = CircularRadius(E).
func Period(E float64, p []float64) float64 {
	r := CircularRadius(E, p)
	vc, rc := p[0], p[2]
	return 2 * math.Pi * r / (vc * r / math.Sqrt(rc*rc+r*r))
}

// Result is a completed run, held whole (Run).
type Result struct {
	Config Config
	Stars  *Stars
	// T1 is the end time, MedianPeriods times the median period.
	T1 float64
	// Solve is the ensemble solve with sensitivities to (vc, q); Ref the
	// converged reference (DP8 at rtol = atol = 1e-12, sensitivities in
	// the error test).
	Solve, Ref *gradsolve.Result
	// StateErr and SensErr are each orbit's errors against the reference
	// (see Errors).
	StateErr, SensErr []float64
	// StateP99 and SensP99 are their 99th percentiles; Pass says whether
	// both meet the requirement.
	StateP99, SensP99 float64
	Pass              bool
}

// persistent adds the arrays a streamed run keeps for all n stars.
func persistent(b *memory.Budget, n int, check bool) {
	b.Add("periods", "N", 8, n)
	if check {
		b.AddBytes("error quantiles", 2*quantile.TopBytes(n, Quantile))
	}
}

// chunkBudget adds the arrays of a chunk of c stars: the stars (ten
// numbers each), the solve with its sensitivities, with check the
// reference and the errors, and with fit the fit's arrays.
func chunkBudget(b *memory.Budget, c int, cfg Config, fit bool) error {
	b.Add("stars", "N·10", 8, c, 10) // Y0, E, Period, RE, VE
	solves := 1
	if cfg.Check {
		solves = 2
		b.Add("errors", "N·4", 8, c, 4) // StateErr, SensErr and the command's errors.npy rows
	}
	f, err := gradsolve.Sizes{N: c, Dim: 6, NumParams: 3, NS: 2, Workers: cfg.Workers}.Footprint()
	if err != nil {
		return err
	}
	if fit {
		solves++
		b.Add("catalogue", "N·12", 8, c, 12) // the catalogue and the fit's targets
	}
	for range solves {
		for _, a := range f.Arrays {
			b.AddBytes(a.Name, a.Bytes)
		}
	}
	return nil
}

// ChunkSize is the automatic chunk of a streamed run of cfg: as many
// stars as keep a chunk's arrays within gradsolve.ChunkBytes and a
// quarter of the memory available, at least 1 and at most N.
func ChunkSize(cfg Config) int {
	n := cfg.N
	if n < 1 {
		n = 10000
	}
	// Every array but the workers' grows by the same bytes with each
	// trajectory; the workers' stop growing at the worker count.
	const m = 1 << 16
	var at, next memory.Budget
	if chunkBudget(&at, m, cfg, false) != nil || chunkBudget(&next, m+1, cfg, false) != nil {
		return 1
	}
	per := next.Total() - at.Total()
	fixed := at.Total() - m*per
	return chunkFor(n, fixed, per, chunkBytes())
}

// chunkBytes is the automatic chunk's budget: gradsolve.ChunkBytes,
// and at most a quarter of the memory available.
func chunkBytes() uint64 {
	budget := uint64(gradsolve.ChunkBytes)
	if av := memory.Available(); av.Known {
		budget = min(budget, av.Bytes/4)
	}
	return budget
}

// chunkFor is the largest chunk of at most n trajectories whose arrays,
// fixed + per·chunk bytes, fit in budget (at least 1).
func chunkFor(n int, fixed, per, budget uint64) int {
	if budget <= fixed+per {
		return 1
	}
	return int(min(uint64(n), (budget-fixed)/max(per, 1)))
}

// CheckSize refuses a run whose arrays overflow an int or do not fit in
// the memory available, before anything is drawn: those a streamed run
// keeps for all N stars (see the package's doc), and a chunk's
// (Config.Chunk, or ChunkSize's; Run's chunk is all N). Its error names
// Config.N, or the chunk when a chunk is what does not fit, and the
// bytes.
func CheckSize(cfg Config) error { return checkSize(cfg, false) }

// checkSize is CheckSize, and with fit the fit's arrays too, for a
// chunk of all N (see CheckFitSize).
func checkSize(cfg Config, fit bool) error {
	n := cfg.N
	if n == 0 {
		n = 10000
	}
	// The output files' shapes (N×6×2) must index as ints, though only
	// a chunk is held at a time.
	if _, err := (gradsolve.Sizes{N: n, Dim: 6, NumParams: 3, NS: 2}).Footprint(); err != nil {
		return err
	}
	var b memory.Budget
	persistent(&b, n, cfg.Check)
	subject := fmt.Sprintf("halo: Config.N = %d", n)
	if err := memory.Check(&b, subject, "the arrays", "lower Config.N"); err != nil {
		return err
	}
	c := cfg.Chunk
	if c == 0 {
		c = ChunkSize(cfg)
	}
	if fit {
		c = n
	}
	c = min(c, n)
	if err := chunkBudget(&b, c, cfg, fit); err != nil {
		return err
	}
	advice := "lower Config.N"
	if c < n {
		subject = fmt.Sprintf("halo: Config.N = %d in chunks of Config.Chunk = %d", n, c)
		advice = "lower Config.Chunk (0: the automatic chunk)"
	}
	return memory.Check(&b, subject, "the arrays", advice)
}

// Plan is a run before its first solve: its configuration, defaults
// filled in, and its end time, found by drawing every star once.
type Plan struct {
	// Config is the run's, Chunk chosen (ChunkSize when 0);
	// ChooseAccuracy sets its Method, RTol and ATol.
	Config Config
	// T1 is the end time: MedianPeriods times the median period of the N
	// stars.
	T1 float64

	methodGiven bool      // Config.Method was set by the caller
	p           []float64 // (vc, q, rc)
	periods     []float64 // each star's period, in order
}

// Prepare checks cfg (CheckSize) and draws its N stars once, keeping
// their periods, for the end time.
func Prepare(cfg Config) (*Plan, error) {
	given := cfg.Method != nil
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	if err := CheckSize(cfg); err != nil {
		return nil, err
	}
	if cfg.Chunk == 0 {
		cfg.Chunk = ChunkSize(cfg)
	}
	cfg.Chunk = min(cfg.Chunk, cfg.N)
	p := []float64{cfg.VC, cfg.Q, cfg.RC}
	d := newDrawer(cfg.Seed, p)
	periods := make([]float64, cfg.N)
	var y [6]float64
	for i := range periods {
		d.next(y[:])
		periods[i] = Period(systems.HaloEnergy(y[:], p), p)
	}
	t1 := MedianPeriods * quantile.Select(periods, cfg.N/2)
	return &Plan{Config: cfg, T1: t1, methodGiven: given, p: p, periods: periods}, nil
}

// Chunk is one chunk of a streamed run: the stars Lo, Lo+1, … of the
// run, solved.
type Chunk struct {
	Lo    int
	Stars *Stars
	// Solve and Ref (with Config.Check) are the chunk's solves; StateErr
	// and SensErr its stars' errors (see Errors).
	Solve, Ref        *gradsolve.Result
	StateErr, SensErr []float64
}

// Summary is what a streamed run keeps of its stars.
type Summary struct {
	// Config is the run's, Chunk the chunk it ran in.
	Config Config
	T1     float64
	// Chunks is the number of chunks.
	Chunks int
	// StateP99 and SensP99 are the 99th percentiles of the errors of all
	// N stars (with Config.Check); Pass says whether both meet the
	// requirement.
	StateP99, SensP99 float64
	Pass              bool
}

// RunChunks draws and solves cfg's stars chunk by chunk (Prepare, then
// Plan.Stream).
func RunChunks(ctx context.Context, cfg Config, yield func(*Chunk) error) (*Summary, error) {
	pl, err := Prepare(cfg)
	if err != nil {
		return nil, err
	}
	return pl.Stream(ctx, yield)
}

// Stream draws the run's stars and solves them with sensitivities, in
// chunks of Config.Chunk stars, in order; with Config.Check it solves
// each chunk's reference too and measures its errors. Each chunk goes to
// yield before the next is drawn, so a run holds one chunk at a time
// (see the package's doc). The chunk's stars, solves and errors are
// those of Run, bit for bit, for any chunk and worker count (the stars
// come from one stream, and gradsolve solves each trajectory
// independently), and so are the 99th percentiles (exact, over all N).
// Between chunks of 65536 stars or more it collects the garbage
// (gcChunk). It stops at the first error, yield's included.
func (pl *Plan) Stream(ctx context.Context, yield func(*Chunk) error) (*Summary, error) {
	return pl.stream(ctx, pl.Config, yield)
}

// Run solves the plan's stars at once, in one chunk of all N (after
// checking that it fits), and returns them whole.
func (pl *Plan) Run(ctx context.Context) (*Result, error) {
	c := pl.Config
	c.Chunk = c.N
	if err := CheckSize(c); err != nil {
		return nil, err
	}
	out := &Result{T1: pl.T1}
	s, err := pl.stream(ctx, c, func(ch *Chunk) error {
		out.Stars, out.Solve, out.Ref, out.StateErr, out.SensErr = ch.Stars, ch.Solve, ch.Ref, ch.StateErr, ch.SensErr
		return nil
	})
	if err != nil {
		return nil, err
	}
	out.Config, out.StateP99, out.SensP99, out.Pass = s.Config, s.StateP99, s.SensP99, s.Pass
	return out, nil
}

// Run draws the stars and solves them with sensitivities, all at once;
// with cfg.Check it also solves the reference and measures the errors.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	cfg.Chunk = cfg.N
	pl, err := Prepare(cfg)
	if err != nil {
		return nil, err
	}
	return pl.Run(ctx)
}

func (pl *Plan) stream(ctx context.Context, c Config, yield func(*Chunk) error) (*Summary, error) {
	n, size, p := c.N, c.Chunk, pl.p
	pr := systems.Halo()
	sens := &gradsolve.Sensitivity{Wrt: []gradsolve.Wrt{gradsolve.Param(0), gradsolve.Param(1)}}
	opts := &gradsolve.Options{Method: c.Method, Engine: c.Engine, RTol: c.RTol, ATol: c.ATol, Workers: c.Workers, Sens: sens}
	refSens := *sens
	refSens.ErrorTest = true
	refOpts := &gradsolve.Options{Method: method.DP8, RTol: 1e-12, ATol: 1e-12, MaxSteps: 10_000_000, Workers: c.Workers, Sens: &refSens}
	done := 0
	if c.Progress != nil {
		opts.Progress = func(k, _ int) { c.Progress(done+k, n) }
	}
	var stateTop, sensTop *quantile.Top
	if c.Check {
		stateTop, sensTop = quantile.NewTop(n, Quantile), quantile.NewTop(n, Quantile)
	}
	s := &Summary{Config: c, T1: pl.T1}
	d := newDrawer(c.Seed, p)
	for lo := 0; lo < n; {
		hi := min(n, lo+size)
		stars := d.stars(pl.periods[lo:hi])
		ens := &gradsolve.Ensemble{N: hi - lo, Y0: stars.Y0, P: p, T0: []float64{0}, T1: []float64{pl.T1}}
		res, err := gradsolve.Solve(ctx, pr, ens, opts)
		if err != nil {
			return nil, chunkError(err, lo, hi, n)
		}
		ch := &Chunk{Lo: lo, Stars: stars, Solve: res}
		if c.Check {
			ref, err := gradsolve.Solve(ctx, pr, ens, refOpts)
			if err == nil {
				var name func(i int) string // a chunk's trajectory i is star lo + i
				if size < n {
					name = func(i int) string { return fmt.Sprintf("star %d", lo+i) }
				}
				err = failed.Error("halo: the reference solve", ref, name)
			}
			if err != nil {
				return nil, chunkError(err, lo, hi, n)
			}
			ch.Ref = ref
			ch.StateErr, ch.SensErr = Errors(res, ref, stars, p)
			stateTop.Add(ch.StateErr...)
			sensTop.Add(ch.SensErr...)
		}
		s.Chunks++
		if err := yield(ch); err != nil {
			return nil, err
		}
		done, lo = hi, hi
		if lo < n && size >= gcChunk {
			runtime.GC() // see gcChunk
		}
	}
	if c.Check {
		s.StateP99, s.SensP99 = stateTop.Quantile(), sensTop.Quantile()
		s.Pass = s.StateP99 <= StateRequirement && s.SensP99 <= SensRequirement
	}
	return s, nil
}

// gcChunk is the chunk from which a streamed run collects its garbage
// between chunks (runtime.GC): the chunk before is garbage then, and
// collected it leaves its memory to the next, where the collector's own
// pace would first grow the heap to twice a chunk (measured: 1.5·10⁶
// stars in chunks of 5·10⁵ peaked at 323 MB without, 166 MB with). A
// smaller chunk's arrays are not worth a collection each.
const gcChunk = 1 << 16

// chunkError says which chunk of a run of n an error came from (when
// there are several); a cancellation stays as it is.
func chunkError(err error, lo, hi, n int) error {
	if hi-lo == n || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("halo: stars %d to %d (a chunk of the run): %w", lo, hi-1, err)
}

// ChooseAccuracy runs the pilot of an accuracy target
// (gradsolve.ChooseOptions) on target.Pilot stars evenly spaced over the
// run (0: gradsolve.DefaultPilot, at most N) and sets the plan's Method,
// RTol and ATol to its choice. The error of a star is its state error,
// as Errors measures it (the larger of ‖Δx‖/r_E and ‖Δv‖/v_E), unless
// target.Error says otherwise; the sensitivities are not part of the
// pilot (they follow the state's mesh, and --check measures them). The
// methods tried are the explicit ones, or Config.Method alone when the
// caller set it; atol/rtol keeps Config's ratio. It returns the pilot's
// report, whose Trajectories are the stars' indices in the run, and
// with it any error (none of the grid meets the target: the plan is
// unchanged).
func (pl *Plan) ChooseAccuracy(ctx context.Context, target gradsolve.AccuracyTarget) (*gradsolve.PilotReport, error) {
	c := pl.Config
	np := target.Pilot
	if np == 0 {
		np = gradsolve.DefaultPilot
	}
	if np < 0 {
		return nil, fmt.Errorf("halo: AccuracyTarget.Pilot = %d: must be ≥ 0", np)
	}
	np = min(np, c.N)
	idx := make([]int, np)
	for j := range idx {
		idx[j] = int(int64(j) * int64(c.N) / int64(np))
	}
	st := pl.draw(idx)
	target.Pilot = np
	if target.Error == nil {
		target.Error = func(i int, y, ref []float64) float64 { return stateError(y, ref, st.RE[i], st.VE[i]) }
	}
	opts := &gradsolve.Options{Engine: c.Engine, RTol: c.RTol, ATol: c.ATol, Workers: c.Workers}
	if pl.methodGiven {
		opts.Method = c.Method
	}
	ens := &gradsolve.Ensemble{N: np, Y0: st.Y0, P: pl.p, T0: []float64{0}, T1: []float64{pl.T1}}
	chosen, rep, err := gradsolve.ChooseOptions(ctx, systems.Halo(), ens, opts, target)
	if rep != nil {
		rep.Trajectories = idx
	}
	if err != nil {
		return rep, err
	}
	m, ok := chosen.Method.(*method.Tableau)
	if !ok {
		return rep, fmt.Errorf("halo: the pilot chose %s, which is not an explicit method", chosen.Method.MethodName())
	}
	pl.Config.Method, pl.Config.RTol, pl.Config.ATol = m, chosen.RTol, chosen.ATol
	return rep, nil
}

// draw draws the stars idx (increasing) of the run.
func (pl *Plan) draw(idx []int) *Stars {
	d := newDrawer(pl.Config.Seed, pl.p)
	s := &Stars{}
	var y [6]float64
	next := 0
	for _, i := range idx {
		for ; next < i; next++ {
			d.next(y[:])
		}
		one := d.stars(pl.periods[i : i+1])
		next++
		s.Y0 = append(s.Y0, one.Y0...)
		s.E, s.Period = append(s.E, one.E...), append(s.Period, one.Period...)
		s.RE, s.VE = append(s.RE, one.RE...), append(s.VE, one.VE...)
	}
	return s
}

// Errors returns each orbit's state error — the larger of its position
// error ‖Δx‖/r_E and velocity error ‖Δv‖/v_E — and sensitivity error —
// ‖A − B‖_F/‖B‖_F for the 6×2 matrices whose rows are divided by r_E
// (positions) or v_E (velocities) and whose columns are multiplied by vc
// and q (applications.md §A.3; issue 6). A failed trajectory gets +Inf.
func Errors(res, ref *gradsolve.Result, stars *Stars, p []float64) (state, sens []float64) {
	n := res.N
	state, sens = make([]float64, n), make([]float64, n)
	for i := range n {
		if res.Status[i] != gradsolve.Success {
			state[i], sens[i] = math.Inf(1), math.Inf(1)
			continue
		}
		state[i] = stateError(res.Row(i), ref.Row(i), stars.RE[i], stars.VE[i])
		var num, den float64
		for d := range 6 {
			row := stars.RE[i]
			if d >= 3 {
				row = stars.VE[i]
			}
			for c := range 2 {
				scale := p[c] / row
				sa, sb := res.S[(i*6+d)*2+c]*scale, ref.S[(i*6+d)*2+c]*scale
				num += (sa - sb) * (sa - sb)
				den += sb * sb
			}
		}
		sens[i] = math.Sqrt(num / den)
	}
	return state, sens
}

// stateError is the state error of the final state a against the
// reference's b: max(‖Δx‖/rE, ‖Δv‖/vE).
func stateError(a, b []float64, rE, vE float64) float64 {
	var dx, dv float64
	for d := range 3 {
		dx += (a[d] - b[d]) * (a[d] - b[d])
		dv += (a[d+3] - b[d+3]) * (a[d+3] - b[d+3])
	}
	return math.Max(math.Sqrt(dx)/rE, math.Sqrt(dv)/vE)
}

// Tracks solves the first k stars again with nt save times each and
// returns their positions, k tracks of nt×3 values, for plotting.
func Tracks(ctx context.Context, r *Result, k, nt int) ([][]float64, error) {
	if k < 1 || nt < 2 {
		return nil, errors.New("halo: Tracks needs k ≥ 1 and nt ≥ 2")
	}
	k = min(k, r.Config.N)
	return TrackStars(ctx, r.Config, r.T1, r.Stars.Y0[:6*k], nt)
}

// TrackStars solves the stars whose initial states are y0 (6 numbers
// each) again from 0 to t1 with cfg's halo, method and tolerances, with
// nt save times each, and returns their positions, a track of nt×3
// values a star, for plotting.
func TrackStars(ctx context.Context, cfg Config, t1 float64, y0 []float64, nt int) ([][]float64, error) {
	if len(y0) == 0 || len(y0)%6 != 0 || nt < 2 {
		return nil, errors.New("halo: TrackStars needs 6 numbers a star, at least one star, and nt ≥ 2")
	}
	k := len(y0) / 6
	save := make([]float64, nt)
	for j := range save {
		save[j] = t1 * float64(j) / float64(nt-1)
	}
	p := []float64{cfg.VC, cfg.Q, cfg.RC}
	res, err := gradsolve.Solve(ctx, systems.Halo(), &gradsolve.Ensemble{N: k, Y0: y0, P: p,
		T0: []float64{0}, T1: []float64{t1}, Save: save}, &gradsolve.Options{Method: cfg.Method, Engine: cfg.Engine, RTol: cfg.RTol, ATol: cfg.ATol})
	if err != nil {
		return nil, err
	}
	tracks := make([][]float64, k)
	for i := range k {
		for j := range nt {
			tracks[i] = append(tracks[i], res.SavedRow(i, j)[:3]...)
		}
	}
	return tracks, nil
}
