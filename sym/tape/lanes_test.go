package tape

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve/internal/testutil"
)

// checkLanes evaluates pg for LaneWidth trajectories at once, through
// the lane evaluator that fits its inputs (EvalFLanes, EvalJVPLanes,
// EvalVJPLanes or EvalJVPVJPLanes), on random and special inputs, and
// requires each lane's outputs to have the bits the interpreter's scalar
// evaluator gives that trajectory alone (NaN with any payload where it
// gives a NaN: see testutil.SameBits). It reports whether lane machine
// code ran.
func checkLanes(t *testing.T, what string, pg *Program, trials int, rng *rand.Rand) bool {
	t.Helper()
	const L = LaneWidth
	l := pg.layout
	ip := interpreted(pg)
	ri := ip.NewRegisters()
	r := pg.NewLaneRegisters()
	nout, dim := len(pg.outs), l.Dim
	for k := range trials {
		special := k%2 == 1
		vec := func(n int) []float64 { return randomInputs(rng, n, special) }
		tl, y, p := vec(L), vec(dim*L), vec(l.NumParams*L)
		v, w, u := vec(dim*L), vec(l.NumParams*L), vec(dim*L)
		out := make([]float64, nout*L)
		sp := pg.split()
		jvp, vjp := pg.uses[3] || pg.uses[4], pg.uses[5]
		switch {
		case jvp && vjp:
			pg.EvalJVPVJPLanes(r, tl, y, p, v, w, u, out[:sp*L], out[sp*L:])
		case vjp:
			pg.EvalVJPLanes(r, tl, y, p, u, out[:sp*L], out[sp*L:])
		case jvp:
			pg.EvalJVPLanes(r, tl, y, p, v, w, out)
		default:
			pg.EvalFLanes(r, tl, y, p, out)
		}
		lane := func(x []float64, n, ln int) []float64 {
			s := make([]float64, n)
			for i := range s {
				s[i] = x[i*L+ln]
			}
			return s
		}
		for ln := range L {
			yl, pl := lane(y, dim, ln), lane(p, l.NumParams, ln)
			vl, wl, ul := lane(v, dim, ln), lane(w, l.NumParams, ln), lane(u, dim, ln)
			want := make([]float64, nout)
			switch {
			case jvp && vjp:
				ip.EvalJVPVJP(ri, tl[ln], yl, pl, vl, wl, ul, want[:sp], want[sp:])
			case vjp:
				ip.EvalVJP(ri, tl[ln], yl, pl, ul, want[:sp], want[sp:])
			case jvp:
				ip.EvalJVP(ri, tl[ln], yl, pl, vl, wl, want)
			default:
				ip.EvalF(ri, tl[ln], yl, pl, want)
			}
			// Lane-major out[:sp·L] then out[sp·L:] in the split
			// evaluators; lane-major out in the others.
			got := make([]float64, nout)
			for i := range got {
				switch {
				case !vjp:
					got[i] = out[i*L+ln]
				case i < sp:
					got[i] = out[i*L+ln]
				default:
					got[i] = out[sp*L+(i-sp)*L+ln]
				}
			}
			if !testutil.CheckBits(t, fmt.Sprintf("%s trial %d lane %d", what, k, ln), got, want) {
				t.FailNow()
			}
		}
	}
	return pg.lane.code != nil
}

// Every program of every example (f, J_y, ∂f/∂t, the fused sensitivity
// systems, the JVPs and VJPs and their combinations) gives, in each
// lane, the interpreter's bits for that lane's trajectory.
func TestLanesMatchInterpreter(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	ran := 0
	for _, s := range exampleSets(t) {
		for name, pg := range programs(t, s) {
			if checkLanes(t, s.Model.Name+" "+name, pg, 20, rng) {
				ran++
			}
		}
	}
	if HasLaneCode() && ran == 0 {
		t.Error("AVX2 is here, yet no program ran as lane code")
	}
}

// Random models with more live values than vector registers and with
// math functions, computed in lane code (laneFuncs) and, every other
// trial, as Go calls between pieces: the same in every lane.
func TestLanesMatchInterpreterRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	pressure, calls := 0, 0
	defer func() { laneFuncsInline = true }()
	for trial := range 40 {
		laneFuncsInline = trial%2 == 0
		dim, m := 1+rng.IntN(6), rng.IntN(4)
		s, err := Build(randomModel(rng, dim, m, 10+rng.IntN(60)))
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		for name, pg := range programs(t, s) {
			checkLanes(t, fmt.Sprint("random ", trial, " ", name), pg, 4, rng)
			if j := pg.lane.code; j != nil {
				if maxLive(pg) > 12 {
					pressure++
				}
				if len(j.segs) > 1 {
					calls++
				}
			}
		}
	}
	if HasLaneCode() && (pressure == 0 || calls == 0) {
		t.Errorf("%d programs with spills, %d with Go calls: the test no longer covers them", pressure, calls)
	}
}

// Without lane code (no AVX2, or machine code off) the lane evaluators
// run the interpreter lane by lane, with the same bits: every program of
// the Lorenz set, seeds and split outputs included.
func TestLanesFallback(t *testing.T) {
	s, err := Build(lorenzModel())
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[[2]bool]bool{}
	rng := rand.New(rand.NewPCG(13, 14))
	for name, pg := range programs(t, s) {
		q := *pg
		q.lane = &laneState{}
		q.lane.once.Do(func() {}) // no lane code
		if checkLanes(t, "lorenz fallback "+name, &q, 6, rng) {
			t.Fatal("lane code ran in the fallback")
		}
		kinds[[2]bool{pg.uses[3] || pg.uses[4], pg.uses[5]}] = true
	}
	if len(kinds) != 4 {
		t.Errorf("the Lorenz set exercised %d of the 4 evaluator kinds", len(kinds))
	}
}

// A short slice panics naming it; a program that reads seeds is refused.
func TestLanesShortSlices(t *testing.T) {
	s, err := Build(lorenzModel())
	if err != nil {
		t.Fatal(err)
	}
	pg := s.F()
	const L = LaneWidth
	ok := func() ([]float64, []float64, []float64, []float64, []float64) {
		return pg.NewLaneRegisters(), make([]float64, L), make([]float64, 3*L), make([]float64, 3*L), make([]float64, 3*L)
	}
	for _, c := range []struct {
		name  string
		cut   func(r, tl, y, p, out []float64) ([]float64, []float64, []float64, []float64, []float64)
		wants string
	}{
		{"y", func(r, tl, y, p, out []float64) ([]float64, []float64, []float64, []float64, []float64) {
			return r, tl, y[:3*L-1], p, out
		}, "len(y) = 11, want at least 12"},
		{"t", func(r, tl, y, p, out []float64) ([]float64, []float64, []float64, []float64, []float64) {
			return r, tl[:1], y, p, out
		}, "len(t) = 1, want at least 4"},
		{"out", func(r, tl, y, p, out []float64) ([]float64, []float64, []float64, []float64, []float64) {
			return r, tl, y, p, out[:2]
		}, "want at least 12"},
	} {
		msg := func() (msg string) {
			defer func() { msg = fmt.Sprint(recover()) }()
			pg.EvalFLanes(c.cut(ok()))
			return ""
		}()
		if !strings.Contains(msg, c.wants) || !strings.Contains(msg, "lanes") {
			t.Errorf("%s short: panic %q, want it to contain %q", c.name, msg, c.wants)
		}
	}
	jvp, err := s.JVP()
	if err != nil {
		t.Fatal(err)
	}
	msg := func() (msg string) {
		defer func() { msg = fmt.Sprint(recover()) }()
		jvp.EvalFLanes(jvp.NewLaneRegisters(), make([]float64, L), make([]float64, 3*L), make([]float64, 3*L), make([]float64, 6*L))
		return ""
	}()
	if !strings.Contains(msg, "reads the seed") {
		t.Errorf("a JVP program in lanes: panic %q, want it refused", msg)
	}
}

// The lane evaluators allocate nothing, on lane code and on the
// fallback.
func TestLanesDoNotAllocate(t *testing.T) {
	s, err := Build(sinSumModel(3)) // math calls between pieces too
	if err != nil {
		t.Fatal(err)
	}
	pg := s.F()
	const L = LaneWidth
	r, tl, y, p, out := pg.NewLaneRegisters(), make([]float64, L), make([]float64, L), make([]float64, L), make([]float64, L)
	if a := testing.AllocsPerRun(100, func() { pg.EvalFLanes(r, tl, y, p, out) }); a != 0 {
		t.Errorf("EvalFLanes: %v allocations a call", a)
	}
	// sin as Go calls between pieces of lane code.
	laneFuncsInline = false
	sc, err := Build(sinSumModel(3))
	if err != nil {
		t.Fatal(err)
	}
	pc := sc.F()
	rc := pc.NewLaneRegisters()
	pc.EvalFLanes(rc, tl, y, p, out) // compiled with Go calls
	laneFuncsInline = true
	if j := pc.laneCode(); j != nil && len(j.segs) < 2 {
		t.Errorf("sin with laneFuncsInline off: %d pieces of lane code", len(j.segs))
	}
	if a := testing.AllocsPerRun(100, func() { pc.EvalFLanes(rc, tl, y, p, out) }); a != 0 {
		t.Errorf("EvalFLanes with Go calls between pieces: %v allocations a call", a)
	}
	q := *pg
	q.lane = &laneState{}
	q.lane.once.Do(func() {}) // the fallback
	if a := testing.AllocsPerRun(100, func() { q.EvalFLanes(r, tl, y, p, out) }); a != 0 {
		t.Errorf("EvalFLanes on the interpreter: %v allocations a call", a)
	}
	vjp, err := s.VJP()
	if err != nil {
		t.Fatal(err)
	}
	rv, u, gy, gp := vjp.NewLaneRegisters(), make([]float64, L), make([]float64, L), make([]float64, L)
	if a := testing.AllocsPerRun(100, func() { vjp.EvalVJPLanes(rv, tl, y, p, u, gy, gp) }); a != 0 {
		t.Errorf("EvalVJPLanes: %v allocations a call", a)
	}
}
