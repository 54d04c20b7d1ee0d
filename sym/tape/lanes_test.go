package tape

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve/internal/testutil"
)

// laneProgram reports whether pg takes t, y and p only (EvalFLanes's
// programs).
func laneProgram(pg *Program) bool { return !pg.uses[3] && !pg.uses[4] && !pg.uses[5] }

// checkLanes evaluates pg for LaneWidth trajectories at once on random
// and special inputs and requires each lane's outputs to have the bits
// the interpreter gives that trajectory alone (NaN with any payload
// where it gives a NaN: see testutil.SameBits). It reports whether lane
// machine code ran.
func checkLanes(t *testing.T, what string, pg *Program, trials int, rng *rand.Rand) bool {
	t.Helper()
	const L = LaneWidth
	l := pg.layout
	ip := interpreted(pg)
	ri := ip.NewRegisters()
	r := pg.NewLaneRegisters()
	nout := len(pg.outs)
	for k := range trials {
		special := k%2 == 1
		val := func() float64 {
			if special && rng.IntN(3) == 0 {
				return specials[rng.IntN(len(specials))]
			}
			return rng.NormFloat64() * 2
		}
		tl, y, p := make([]float64, L), make([]float64, l.Dim*L), make([]float64, l.NumParams*L)
		for i := range tl {
			tl[i] = val()
		}
		for i := range y {
			y[i] = val()
		}
		for i := range p {
			p[i] = val()
		}
		out := make([]float64, nout*L)
		pg.EvalFLanes(r, tl, y, p, out)
		for ln := range L {
			yl, pl := make([]float64, l.Dim), make([]float64, l.NumParams)
			for d := range yl {
				yl[d] = y[d*L+ln]
			}
			for j := range pl {
				pl[j] = p[j*L+ln]
			}
			want, got := make([]float64, nout), make([]float64, nout)
			ip.EvalF(ri, tl[ln], yl, pl, want)
			for i := range got {
				got[i] = out[i*L+ln]
			}
			if !testutil.CheckBits(t, fmt.Sprintf("%s trial %d lane %d", what, k, ln), got, want) {
				t.FailNow()
			}
		}
	}
	return pg.lane.code != nil
}

// Every program of every example that takes t, y and p (f, J_y, ∂f/∂t,
// the fused sensitivity systems) gives, in each lane, the interpreter's
// bits for that lane's trajectory.
func TestLanesMatchInterpreter(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	ran := 0
	for _, s := range exampleSets(t) {
		for name, pg := range programs(t, s) {
			if !laneProgram(pg) {
				continue
			}
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
// math calls between pieces: the same in every lane.
func TestLanesMatchInterpreterRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	pressure, calls := 0, 0
	for trial := range 40 {
		dim, m := 1+rng.IntN(6), rng.IntN(4)
		s, err := Build(randomModel(rng, dim, m, 10+rng.IntN(60)))
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		pg := s.F()
		checkLanes(t, fmt.Sprint("random ", trial), pg, 6, rng)
		if j := pg.lane.code; j != nil {
			if maxLive(pg) > 12 {
				pressure++
			}
			if len(j.segs) > 1 {
				calls++
			}
		}
	}
	if HasLaneCode() && (pressure == 0 || calls == 0) {
		t.Errorf("%d programs with spills, %d with Go calls: the test no longer covers them", pressure, calls)
	}
}

// Without lane code (no AVX2, or machine code off) EvalFLanes runs the
// interpreter lane by lane, with the same bits.
func TestLanesFallback(t *testing.T) {
	s, err := Build(lorenzModel())
	if err != nil {
		t.Fatal(err)
	}
	pg := s.F()
	q := *pg
	q.lane = &laneState{}
	q.lane.once.Do(func() {}) // no lane code
	if checkLanes(t, "lorenz fallback", &q, 10, rand.New(rand.NewPCG(13, 14))) {
		t.Fatal("lane code ran in the fallback")
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
	if !strings.Contains(msg, "seeds") {
		t.Errorf("a JVP program in lanes: panic %q, want it refused", msg)
	}
}

// EvalFLanes allocates nothing, on lane code and on the fallback.
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
	q := *pg
	q.lane = &laneState{}
	q.lane.once.Do(func() {}) // the fallback
	if a := testing.AllocsPerRun(100, func() { q.EvalFLanes(r, tl, y, p, out) }); a != 0 {
		t.Errorf("EvalFLanes on the interpreter: %v allocations a call", a)
	}
}
