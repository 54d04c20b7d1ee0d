package ivp

import (
	"math"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/ode"
)

// growth is a stepper for y' = y whose steps are exact (y1 = y·e^h) and
// whose error norm is a function of h chosen by the test, so that the
// driver's decisions can be checked on their own. It records the calls.
type growth struct {
	y, y1, f0, work []float64
	err             func(t, h float64) (float64, bool)
	onAttempt       func(n int) // called with the attempt's number (from 1)

	attempts int
	saves    [][3]float64 // (t, ts, Advances so far) of each Save
	accepts  []bool       // next of each Advance, in Attempt or not
	ends     []float64    // tEnd of each Advance
	starts   int
}

func newGrowth(err func(t, h float64) (float64, bool)) *growth {
	return &growth{y: make([]float64, 1), y1: make([]float64, 1), f0: make([]float64, 1), work: make([]float64, 1), err: err}
}

func (g *growth) Start() Arrays {
	g.starts++
	return Arrays{Y: &g.y, Y1: &g.y1, F0: g.f0, Work: g.work}
}

func (g *growth) Attempt(t, h float64, p []float64, moved bool, st *ode.Stats) (float64, bool) {
	if moved {
		g.Advance(t, p, true, st)
	}
	g.attempts++
	if g.onAttempt != nil {
		g.onAttempt(g.attempts)
	}
	st.FEvals++
	g.y1[0] = g.y[0] * math.Exp(h)
	return g.err(t, h)
}

func (g *growth) Save(dst []float64, t, _, ts float64, _ []float64, _ *ode.Stats) {
	g.saves = append(g.saves, [3]float64{t, ts, float64(len(g.accepts))})
	dst[0] = g.y[0] * math.Exp(ts-t)
}

func (g *growth) Advance(tEnd float64, _ []float64, next bool, _ *ode.Stats) {
	g.accepts = append(g.accepts, next)
	g.ends = append(g.ends, tEnd)
}

// smooth is an error norm that a fifth-order method would report with
// its best step near 0.05: err = (|h|/0.05)^5.
func smooth(_, h float64) (float64, bool) { return math.Pow(math.Abs(h)/0.05, 5), true }

// small is an error norm that accepts every step and lets it grow
// (err = 1e-3: the PI controller's factor is above 1), so that HMax
// fixes the steps.
func small(_, _ float64) (float64, bool) { return 1e-3, true }

func exp1(_ float64, y, _, dy []float64) { dy[0] = y[0] }

func testLoop() *Loop {
	return &Loop{F: exp1, Dim: 1, Order: 5, RTol: []float64{1e-6}, ATol: []float64{1e-9},
		HMax: math.Inf(1), MaxSteps: 10000, Controller: control.DefaultPI(5, 0, 0)}
}

// The driver's outcomes on scripted error norms: statuses, the time
// reached, the attempts spent and the step sizes, each against what the
// loop's rules give by hand.
func TestSolveStatuses(t *testing.T) {
	nan := func(_, _ float64) (float64, bool) { return math.NaN(), false }
	inf := func(_, _ float64) (float64, bool) { return math.Inf(1), true }
	reject := func(_, _ float64) (float64, bool) { return 2, true }
	cases := []struct {
		name     string
		err      func(t, h float64) (float64, bool)
		t0, t1   float64
		maxSteps int
		h0, hmax float64
		status   ode.Status
		attempts int     // 0: not checked
		tEnd     float64 // NaN: not checked
	}{
		{"success", smooth, 0, 1, 10000, 0, 0, ode.Success, 0, 1},
		{"success backwards", smooth, 1, -1, 10000, 0, 0, ode.Success, 0, -1},
		// Every attempt rejected: the budget runs out first, after
		// exactly MaxSteps attempts, at t0.
		{"budget", reject, 0, 1, 7, 0.1, 0, ode.MaxStepsReached, 7, 0},
		// Non-finite attempts shrink h by QMin = 0.2 from 0.1 until it
		// falls below MinStep(1) = 4ε: after m rejections h is
		// 0.1·0.2^m, below 8.9e-16 first at m = 21, so 21 attempts and
		// then NonFinite.
		{"non-finite", nan, 1, 2, 10000, 0.1, 0, ode.NonFinite, 21, 1},
		// An infinite but valid error norm shrinks h by QMin too, and
		// ends in StepUnderflow.
		{"underflow", inf, 1, 2, 10000, 0.1, 0, ode.StepUnderflow, 21, 1},
		// H0 and HMax: the first step is H0 = 0.3, clamped to HMax.
		{"hmax", smooth, 0, 1, 10000, 0.3, 0.02, ode.Success, 0, 1},
	}
	for _, c := range cases {
		g := newGrowth(c.err)
		lp := testLoop()
		lp.MaxSteps, lp.H0 = c.maxSteps, c.h0
		if c.hmax > 0 {
			lp.HMax = c.hmax
		}
		ms := &Mesh{}
		out := &Output{Y: make([]float64, 1), Mesh: ms}
		Solve(g, lp, &Trajectory{T0: c.t0, T1: c.t1, Y0: []float64{1}}, out, nil)
		st := out.Stats
		switch {
		case out.Status != c.status:
			t.Errorf("%s: status %v, want %v", c.name, out.Status, c.status)
		case c.attempts != 0 && st.Accepted+st.Rejected != c.attempts:
			t.Errorf("%s: %d attempts, want %d", c.name, st.Accepted+st.Rejected, c.attempts)
		case out.T != c.tEnd:
			t.Errorf("%s: reached t = %v, want %v", c.name, out.T, c.tEnd)
		case g.attempts != st.Accepted+st.Rejected || st.FEvals < g.attempts:
			t.Errorf("%s: %d attempts made, stats %+v", c.name, g.attempts, st)
		case ms.Steps() != st.Accepted || len(g.accepts) != st.Accepted:
			t.Errorf("%s: %d accepted, %d mesh steps, %d Advances", c.name, st.Accepted, ms.Steps(), len(g.accepts))
		}
		// The final state is e^(T − t0), to the rounding of a product of
		// one exponential per step (≤ 200 steps here: 1e-13 relative).
		if want := math.Exp(out.T - c.t0); math.Abs(out.Y[0]-want) > 1e-13*want {
			t.Errorf("%s: y = %v, want %v", c.name, out.Y[0], want)
		}
		for k, h := range ms.H {
			lim := lp.HMax
			if k == len(ms.H)-1 && out.Status == ode.Success {
				lim *= 1.01 // the last step may be stretched to land on t1
			}
			if math.Abs(h) > lim {
				t.Errorf("%s: step %d: |h| = %v above HMax %v", c.name, k, h, lim)
			}
			if k == 0 && c.h0 > 0 && math.Abs(h) != math.Min(c.h0, lp.HMax) {
				t.Errorf("%s: first step %v, want min(H0, HMax)", c.name, h)
			}
		}
		if c.status == ode.Success {
			// The last step lands on t1 exactly, and only the last Advance
			// is told no step follows.
			if last := ms.T[len(ms.T)-1]; last != c.t1 {
				t.Errorf("%s: mesh ends at %v", c.name, last)
			}
			// Advance k is given t + h of step k (not t1 on the last).
			for k, next := range g.accepts {
				if next != (k < len(g.accepts)-1) || g.ends[k] != ms.T[k]+ms.H[k] {
					t.Errorf("%s: Advance %d: next = %v, tEnd = %v, step %v + %v", c.name, k, next, g.ends[k], ms.T[k], ms.H[k])
				}
			}
		}
	}
}

// A step that would end within 1% of its size before t1 is stretched to
// land on t1 exactly. Every attempt is accepted (small) and the next
// step clamped to HMax = 0.3, so the steps are 0.3 until t + 1.01·0.3
// reaches t1, then t1 − t: with 0.3·3 = 0.9 (in float64 0.8999…),
// t1 = 1 gives a last step of 0.1; t1 = 1.202 a last step of 0.302,
// stretched beyond HMax by less than 1%; t1 = 1.21 one more full step
// and then 0.01.
func TestSolveLanding(t *testing.T) {
	for _, c := range []struct {
		t1   float64
		full int // steps of 0.3 before the last
	}{{1, 3}, {1.202, 3}, {1.21, 4}} {
		g := newGrowth(small)
		lp := testLoop()
		lp.H0, lp.HMax = 0.3, 0.3
		ms := &Mesh{}
		out := &Output{Y: make([]float64, 1), Mesh: ms}
		Solve(g, lp, &Trajectory{T0: 0, T1: c.t1, Y0: []float64{1}}, out, nil)
		if out.Status != ode.Success || out.T != c.t1 || len(ms.H) != c.full+1 {
			t.Errorf("t1 = %v: %v at %v after steps %v, want %d of 0.3 and one more", c.t1, out.Status, out.T, ms.H, c.full)
			continue
		}
		tt := 0.0
		for k := range c.full {
			if ms.H[k] != 0.3 || ms.T[k+1] != tt+0.3 {
				t.Errorf("t1 = %v: step %d = %v to %v", c.t1, k, ms.H[k], ms.T[k+1])
			}
			tt += 0.3
		}
		if last := ms.H[c.full]; last != c.t1-tt || ms.T[c.full+1] != c.t1 || out.H != last {
			t.Errorf("t1 = %v: last step %v to %v (out.H %v), want %v to t1", c.t1, last, ms.T[c.full+1], out.H, c.t1-tt)
		}
	}
}

// Save times: one at t0 is y0 and one at the end of a step is the
// step's result, with no Save call; the others are computed by Save
// from the start of the step that holds them (t < ts < tn), in order,
// before that step's Advance. Times not reached are NaN.
func TestSolveSaveTimes(t *testing.T) {
	for _, dir := range []float64{1, -1} {
		g := newGrowth(smooth)
		ms := &Mesh{}
		save := []float64{0, 0, 0.01 * dir, 0.2 * dir, 0.2 * dir, 0.55 * dir, dir}
		out := &Output{Y: make([]float64, 1), Saved: make([]float64, len(save)), Mesh: ms}
		Solve(g, testLoop(), &Trajectory{T0: 0, T1: dir, Y0: []float64{1}, Save: save}, out, nil)
		if out.Status != ode.Success {
			t.Fatalf("dir %v: %v", dir, out.Status)
		}
		for i, ts := range save {
			// Exact steps: every saved value is e^ts to rounding.
			if want := math.Exp(ts); math.Abs(out.Saved[i]-want) > 1e-13*want {
				t.Errorf("dir %v: save %d at %v = %v, want %v", dir, i, ts, out.Saved[i], want)
			}
		}
		// Save calls for the inner times only, each inside its step.
		want := 0
		for _, ts := range save {
			if ts != 0 && ts != dir {
				want++
			}
		}
		if len(g.saves) != want {
			t.Fatalf("dir %v: %d Save calls %v, want %d", dir, len(g.saves), g.saves, want)
		}
		for i, s := range g.saves {
			// Computed within step k, from its start, before its Advance.
			k := slices.Index(ms.T, s[0])
			if k < 0 || k == ms.Steps() || dir*(s[1]-ms.T[k]) <= 0 || dir*(s[1]-ms.T[k+1]) >= 0 || int(s[2]) != k {
				t.Errorf("dir %v: save at %v computed from t = %v after %v Advances; mesh %v", dir, s[1], s[0], s[2], ms.T)
			}
			if i > 0 && dir*(s[1]-g.saves[i-1][1]) < 0 {
				t.Errorf("dir %v: saves out of order: %v", dir, g.saves)
			}
		}
	}
	// A failed solve leaves the times it did not reach NaN.
	g := newGrowth(smooth)
	lp := testLoop()
	lp.MaxSteps = 3
	out := &Output{Y: make([]float64, 1), Saved: make([]float64, 2)}
	Solve(g, lp, &Trajectory{T0: 0, T1: 1, Y0: []float64{1}, Save: []float64{0, 0.9}}, out, nil)
	if out.Status != ode.MaxStepsReached || out.Saved[0] != 1 || !math.IsNaN(out.Saved[1]) {
		t.Errorf("budget 3: %v, saved %v", out.Status, out.Saved)
	}
}

// The stop flag is read before the first attempt and then every
// stopEvery attempts: a flag set during attempt 5 stops the solve
// before attempt 65, at the time then reached.
func TestSolveCancel(t *testing.T) {
	var stop atomic.Bool
	stop.Store(true)
	g := newGrowth(smooth)
	out := &Output{Y: make([]float64, 1)}
	Solve(g, testLoop(), &Trajectory{T0: 0, T1: 1, Y0: []float64{1}}, out, &stop)
	if out.Status != ode.Cancelled || g.attempts != 0 || out.T != 0 {
		t.Errorf("stopped before the start: %v after %d attempts at %v", out.Status, g.attempts, out.T)
	}

	stop.Store(false)
	g = newGrowth(func(_, _ float64) (float64, bool) { return 0.5, true })
	g.onAttempt = func(n int) {
		if n == 5 {
			stop.Store(true)
		}
	}
	lp := testLoop()
	lp.H0, lp.HMax = 0.001, 0.001
	ms := &Mesh{}
	out = &Output{Y: make([]float64, 1), Mesh: ms}
	Solve(g, lp, &Trajectory{T0: 0, T1: 1, Y0: []float64{1}}, out, &stop)
	if out.Status != ode.Cancelled || g.attempts != stopEvery || out.T != ms.T[len(ms.T)-1] {
		t.Errorf("stopped during attempt 5: %v after %d attempts at %v", out.Status, g.attempts, out.T)
	}
}

// A mesh that may not grow ends the solve with Cancelled at the end of
// the step it could not record, and that step's Advance is told no step
// follows.
func TestSolveMeshRefusal(t *testing.T) {
	g := newGrowth(small)
	lp := testLoop()
	lp.H0, lp.HMax = 0.001, 0.001
	ms := &Mesh{Grow: func(b uint64) bool { return b <= 8*minCap }}
	out := &Output{Y: make([]float64, 1), Mesh: ms}
	Solve(g, lp, &Trajectory{T0: 0, T1: 1, Y0: []float64{1}}, out, nil)
	// minCap values: T holds t0 and 63 ends of steps; the 64th step is
	// accepted but cannot be recorded.
	if out.Status != ode.Cancelled || out.Stats.Accepted != minCap || ms.Steps() != minCap-1 {
		t.Fatalf("%v after %d accepted, %d recorded", out.Status, out.Stats.Accepted, ms.Steps())
	}
	if n := len(g.accepts); g.accepts[n-1] || !g.accepts[n-2] {
		t.Errorf("Advance's next: %v", g.accepts[n-2:])
	}
	if want := ms.T[len(ms.T)-1] + 0.001; out.T != want {
		t.Errorf("ended at %v, want the unrecorded step's end %v", out.T, want)
	}
}

// A right-hand side that is not finite at t0 ends the solve at once.
func TestSolveNonFiniteStart(t *testing.T) {
	g := newGrowth(smooth)
	lp := testLoop()
	lp.F = func(_ float64, _, _, dy []float64) { dy[0] = math.Inf(1) }
	out := &Output{Y: make([]float64, 1)}
	Solve(g, lp, &Trajectory{T0: 0, T1: 1, Y0: []float64{2}}, out, nil)
	if out.Status != ode.NonFinite || out.T != 0 || out.H != 0 || out.Y[0] != 2 || g.attempts != 0 || out.Stats.FEvals != 1 {
		t.Errorf("%v at t = %v, h = %v, y = %v, %d attempts, %+v", out.Status, out.T, out.H, out.Y, g.attempts, out.Stats)
	}
}

// The driver allocates nothing.
func TestSolveDoesNotAllocate(t *testing.T) {
	g := newGrowth(smooth)
	ms := &Mesh{}
	out := &Output{Y: make([]float64, 1), Saved: make([]float64, 2), Mesh: ms}
	tr := &Trajectory{T0: 0, T1: 1, Y0: []float64{1}, Save: []float64{0, 1}}
	lp := testLoop()
	if a := testing.AllocsPerRun(10, func() { Solve(g, lp, tr, out, nil) }); a != 0 {
		t.Errorf("%v allocations per solve", a)
	}
}
