package halo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/app/internal/failed"
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

// Draw draws n stars reproducibly from seed by the package's recipe for
// the halo p = (vc, q, rc).
func Draw(n int, seed uint64, p []float64) *Stars {
	rng := rand.New(rand.NewPCG(seed, 0x6a6f_686e_6861_6c6f))
	vc, rc := p[0], p[2]
	vcirc := func(r float64) float64 { return vc * r / math.Sqrt(rc*rc+r*r) }
	s := &Stars{Y0: make([]float64, 6*n), E: make([]float64, n), Period: make([]float64, n), RE: make([]float64, n), VE: make([]float64, n)}
	for i := range n {
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
		y := s.Y0[6*i : 6*i+6]
		y[0], y[1], y[2] = r0*c, r0*sn, z0
		y[3], y[4], y[5] = vR*c-vt*sn, vR*sn+vt*c, vz
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

// Result is a completed run.
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

// CheckSize refuses a run whose arrays overflow an int or do not fit in
// the memory available, before anything is drawn: the stars (ten numbers
// each), the solve with its sensitivities, and with cfg.Check the
// reference and the errors. Its error names Config.N and the bytes.
func CheckSize(cfg Config) error { return checkSize(cfg, false) }

// checkSize is CheckSize, and with fit the fit's arrays too (see
// CheckFitSize).
func checkSize(cfg Config, fit bool) error {
	n := cfg.N
	if n == 0 {
		n = 10000
	}
	var b memory.Budget
	b.Add("stars", "N·11", 8, n, 11) // Y0, E, Period, RE, VE and the sorted periods
	solves := 1
	if cfg.Check {
		solves = 2
		b.Add("errors", "N·4", 8, n, 4) // StateErr, SensErr and the command's errors.npy
	}
	f, err := gradsolve.Sizes{N: n, Dim: 6, NumParams: 3, NS: 2, Workers: cfg.Workers}.Footprint()
	if err != nil {
		return err
	}
	if fit {
		solves++
		b.Add("catalogue", "N·12", 8, n, 12) // the catalogue and the fit's targets
	}
	for range solves {
		for _, a := range f.Arrays {
			b.AddBytes(a.Name, a.Bytes)
		}
	}
	return memory.Check(&b, fmt.Sprintf("halo: Config.N = %d", n), "the arrays", "lower Config.N")
}

// Run draws the stars and solves them with sensitivities; with
// cfg.Check it also solves the reference and measures the errors.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	if err := CheckSize(cfg); err != nil {
		return nil, err
	}
	p := []float64{cfg.VC, cfg.Q, cfg.RC}
	stars := Draw(cfg.N, cfg.Seed, p)
	periods := append([]float64(nil), stars.Period...)
	sort.Float64s(periods)
	t1 := MedianPeriods * periods[len(periods)/2]
	pr := systems.Halo()
	ens := &gradsolve.Ensemble{N: cfg.N, Y0: stars.Y0, P: p, T0: []float64{0}, T1: []float64{t1}}
	sens := &gradsolve.Sensitivity{Wrt: []gradsolve.Wrt{gradsolve.Param(0), gradsolve.Param(1)}}
	res, err := gradsolve.Solve(ctx, pr, ens, &gradsolve.Options{Method: cfg.Method, Engine: cfg.Engine, RTol: cfg.RTol, ATol: cfg.ATol,
		Workers: cfg.Workers, Progress: cfg.Progress, Sens: sens})
	if err != nil {
		return nil, err
	}
	out := &Result{Config: cfg, Stars: stars, T1: t1, Solve: res}
	if !cfg.Check {
		return out, nil
	}
	refSens := *sens
	refSens.ErrorTest = true
	ref, err := gradsolve.Solve(ctx, pr, ens, &gradsolve.Options{Method: method.DP8, RTol: 1e-12, ATol: 1e-12,
		MaxSteps: 10_000_000, Workers: cfg.Workers, Sens: &refSens})
	if err != nil {
		return nil, err
	}
	if err := failed.Error("halo: the reference solve", ref, nil); err != nil {
		return nil, err
	}
	out.Ref = ref
	out.StateErr, out.SensErr = Errors(res, ref, stars, p)
	out.StateP99, out.SensP99 = quantile(out.StateErr, Quantile), quantile(out.SensErr, Quantile)
	out.Pass = out.StateP99 <= StateRequirement && out.SensP99 <= SensRequirement
	return out, nil
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
		a, b := res.Row(i), ref.Row(i)
		var dx, dv float64
		for d := range 3 {
			dx += (a[d] - b[d]) * (a[d] - b[d])
			dv += (a[d+3] - b[d+3]) * (a[d+3] - b[d+3])
		}
		state[i] = math.Max(math.Sqrt(dx)/stars.RE[i], math.Sqrt(dv)/stars.VE[i])
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

// quantile returns the q-quantile (nearest rank) of v.
func quantile(v []float64, q float64) float64 {
	w := append([]float64(nil), v...)
	sort.Float64s(w)
	k := int(math.Ceil(q*float64(len(w)))) - 1
	return w[max(0, min(k, len(w)-1))]
}

// Tracks solves the first k stars again with nt save times each and
// returns their positions, k tracks of nt×3 values, for plotting.
func Tracks(ctx context.Context, r *Result, k, nt int) ([][]float64, error) {
	if k < 1 || nt < 2 {
		return nil, errors.New("halo: Tracks needs k ≥ 1 and nt ≥ 2")
	}
	k = min(k, r.Config.N)
	save := make([]float64, nt)
	for j := range save {
		save[j] = r.T1 * float64(j) / float64(nt-1)
	}
	p := []float64{r.Config.VC, r.Config.Q, r.Config.RC}
	res, err := gradsolve.Solve(ctx, systems.Halo(), &gradsolve.Ensemble{N: k, Y0: r.Stars.Y0[:6*k], P: p,
		T0: []float64{0}, T1: []float64{r.T1}, Save: save}, &gradsolve.Options{Method: r.Config.Method, Engine: r.Config.Engine, RTol: r.Config.RTol, ATol: r.Config.ATol})
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
