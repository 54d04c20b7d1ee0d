package tape

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/sym"
	"github.com/gradsolve/gradsolve/sym/parse"
)

// interpreted returns a copy of pg that runs on the interpreter.
func interpreted(pg *Program) *Program {
	q := *pg
	q.jit, q.entry = nil, 0
	return &q
}

// programs returns every program of s with its name, the fused
// sensitivity program of the first parameter and of the first initial
// value included.
func programs(t *testing.T, s *Set) map[string]*Program {
	t.Helper()
	all := All(t, s)
	cols := []int{-1}
	if s.Model.NumParams() > 0 {
		cols = append(cols, 0)
	}
	if _, err := s.SensF(cols); err != nil {
		t.Fatal(err)
	}
	all["sens"] = s.sens[fmt.Sprint(cols)]
	return all
}

// specials are inputs that exercise the corners of select, abs, sqrt,
// min, max, the comparisons, sign, floor and ceil: signed zeros,
// infinities, NaN, halves, values that floor or ceil to −0, and values
// beyond 2^52 where every float64 is an integer.
var specials = []float64{0, math.Copysign(0, -1), 1, -1, math.Inf(1), math.Inf(-1), math.NaN(), 0.5, -2.5, -0.2, 1e300, 4.5e15}

// randomInputs returns n normal values of spread 2, with special set a
// third of them drawn from specials instead.
func randomInputs(rng *rand.Rand, n int, special bool) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64() * 2
		if special && rng.IntN(3) == 0 {
			x[i] = specials[rng.IntN(len(specials))]
		}
	}
	return x
}

// checkJIT evaluates every program of s on machine code and on the
// interpreter at random and special inputs and requires equal bits,
// through every evaluator (EvalF, EvalJVP, EvalVJP, EvalJVPVJP) and
// through NewFunc.
func checkJIT(t *testing.T, s *Set, trials int, rng *rand.Rand) {
	t.Helper()
	m := s.Model
	dim, np := m.Dim(), m.NumParams()
	for name, pg := range programs(t, s) {
		if pg.jit == nil {
			t.Fatalf("%s: program %s has no machine code", m.Name, name)
		}
		ip := interpreted(pg)
		l := pg.layout
		vec := func(n int, special bool) []float64 { return randomInputs(rng, n, special) }
		fn := pg.NewFunc()
		r, ri := pg.NewRegisters(), ip.NewRegisters()
		nout := len(pg.outs)
		for k := range trials {
			special := k%2 == 1
			tt := rng.NormFloat64()
			y, p := vec(l.Dim, special), vec(l.NumParams, special)
			v, w, u := vec(l.Dim, special), vec(l.NumParams, special), vec(l.Dim, special)
			got, want := make([]float64, nout), make([]float64, nout)
			switch {
			case pg.uses[5] && (pg.uses[3] || pg.uses[4]):
				pg.EvalJVPVJP(r, tt, y, p, v, w, u, got[:dim], got[dim:])
				ip.EvalJVPVJP(ri, tt, y, p, v, w, u, want[:dim], want[dim:])
			case pg.uses[5]:
				pg.EvalVJP(r, tt, y, p, u, got[:dim], got[dim:])
				ip.EvalVJP(ri, tt, y, p, u, want[:dim], want[dim:])
			case pg.uses[3] || pg.uses[4]:
				pg.EvalJVP(r, tt, y, p, v, w, got)
				ip.EvalJVP(ri, tt, y, p, v, w, want)
			default:
				pg.EvalF(r, tt, y, p, got)
				ip.EvalF(ri, tt, y, p, want)
				if !testutil.CheckBits(t, m.Name+" "+name+" EvalF", got, want) {
					t.FailNow()
				}
				clear(got)
				fn(tt, y, p, got)
				if !testutil.CheckBits(t, m.Name+" "+name+" NewFunc", got, want) {
					t.FailNow()
				}
			}
			if !testutil.CheckBits(t, m.Name+" "+name, got, want) {
				t.FailNow()
			}
			_ = np
		}
	}
}

// Machine code gives the interpreter's bits for every program of every
// shipped example.
// exampleSets builds the program sets of every problem file in
// examples/.
func exampleSets(t *testing.T) []*Set {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "*.ode"))
	if err != nil || len(files) < 5 {
		t.Fatalf("examples: %v (%d files)", err, len(files))
	}
	var sets []*Set
	for _, file := range files {
		m, err := parse.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Build(m)
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, s)
	}
	return sets
}

func TestJITMatchesInterpreterExamples(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, s := range exampleSets(t) {
		if s.F().jit == nil {
			t.Skip("no machine code on this platform")
		}
		checkJIT(t, s, 40, rng)
	}
}

// randomModel builds a model of dim states and m parameters whose right
// hand sides are random expressions of n operations over every
// operation kind, with long-lived intermediates so that more values are
// live than there are vector registers.
func randomModel(rng *rand.Rand, dim, m, n int) *sym.Model {
	md := sym.NewModel("random")
	var pool []sym.Expr
	for i := range dim {
		pool = append(pool, md.State(fmt.Sprint("y", i), 1))
	}
	for j := range m {
		pool = append(pool, md.Param(fmt.Sprint("p", j), 1))
	}
	pool = append(pool, md.Time(), md.Const(0.75), md.Const(-3))
	pick := func() sym.Expr { return pool[rng.IntN(len(pool))] }
	for range n {
		a, b, c := pick(), pick(), pick()
		var e sym.Expr
		switch rng.IntN(22) {
		case 0, 1:
			e = a.Add(b)
		case 2, 3:
			e = a.Sub(b)
		case 4, 5:
			e = a.Mul(b)
		case 6:
			e = a.Div(b.Mul(b).AddConst(1))
		case 7:
			e = a.Neg()
		case 8:
			e = sym.Sqrt(sym.Abs(a))
		case 9:
			e = sym.Abs(a)
		case 10:
			e = sym.Select(a, b, c)
		case 11:
			e = sym.Min(a, b)
		case 12:
			e = sym.Max(a, b)
		case 13:
			e = sym.Sin(a)
		case 14:
			e = sym.Lt(a, b)
		case 15:
			e = sym.Le(a, b)
		case 16:
			e = sym.Eq(a, b).Add(sym.Ne(b, c))
		case 17:
			e = sym.IfElse(a, b, c)
		case 18:
			e = sym.Sign(a)
		case 19:
			e = sym.Floor(a.MulConst(2.5))
		case 20:
			e = sym.Ceil(a.MulConst(2.5))
		case 21:
			e = sym.IfElse(sym.Gt(a, b), b.Mul(c), sym.Sign(c))
		}
		pool = append(pool, e)
	}
	for i := range dim {
		// Each derivative sums a spread of the pool: many values stay live.
		f := pool[len(pool)-1-i]
		for k := 0; k < len(pool); k += 1 + rng.IntN(7) {
			f = f.Add(pool[k])
		}
		md.Deriv(pool[i], f)
	}
	return md
}

// Machine code gives the interpreter's bits on random models that use
// every operation, with register pressure beyond the 12 vector
// registers and math functions between pieces of machine code.
func TestJITMatchesInterpreterRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	pressure, calls := 0, 0
	defer func() {
		if !t.Skipped() && (pressure == 0 || calls == 0) {
			t.Errorf("%d programs with more live values than vector registers, %d with Go calls: the test no longer covers spills or pieces", pressure, calls)
		}
	}()
	// Math functions inline (where the processor has AVX2) and, every
	// other trial, as Go calls between pieces.
	inline := scalarFuncs
	defer func() { scalarFuncs = inline }()
	for trial := range 40 {
		scalarFuncs = inline && trial%2 == 0
		dim, m := 1+rng.IntN(6), rng.IntN(4)
		md := randomModel(rng, dim, m, 10+rng.IntN(60))
		s, err := Build(md)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if s.F().jit == nil {
			t.Skip("no machine code on this platform")
		}
		checkJIT(t, s, 6, rng)
		for _, pg := range programs(t, s) {
			if maxLive(pg) > 12 { // the vector registers for values on amd64
				pressure++
			}
			if len(pg.jit.segs) > 1 {
				calls++
			}
		}
	}
}

// Without SSE4.1 floor and ceil are Go calls between pieces of machine
// code; that route gives the interpreter's bits too.
func TestJITFloorWithoutRoundSD(t *testing.T) {
	if !useRoundSD {
		t.Skip("no SSE4.1 here: the random models already take this route")
	}
	useRoundSD = false
	defer func() { useRoundSD = true }()
	rng := rand.New(rand.NewPCG(9, 10))
	for trial := range 10 {
		md := randomModel(rng, 1+rng.IntN(4), rng.IntN(3), 20+rng.IntN(40))
		s, err := Build(md)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if s.F().jit == nil {
			t.Skip("no machine code on this platform")
		}
		checkJIT(t, s, 6, rng)
	}
}

// maxLive returns the largest number of computed values of pg that are
// live at once.
func maxLive(pg *Program) int {
	last := map[int32]int{} // the last reader of each value, by writer
	writer := map[int32]int{}
	for i, in := range pg.code {
		ops := [3]int32{in.A, in.B, in.C}
		for _, a := range ops[:in.Op.Arity()] {
			if w, ok := writer[a]; ok {
				last[int32(w)] = i
			}
		}
		writer[in.Dst] = i
	}
	most := 0
	for i := range pg.code {
		live := 0
		for w, l := range last {
			if int(w) < i && l > i {
				live++
			}
		}
		most = max(most, live)
	}
	return most
}

// A short slice passed to a machine-code ode.Func panics with the
// lengths, as EvalF does, instead of reading or writing past its end.
func TestJITFuncShortSlices(t *testing.T) {
	m := sym.NewModel("two")
	x, y := m.State("x", 1), m.State("y", 2)
	a := m.Param("a", 3)
	m.Deriv(x, a.Mul(y))
	m.Deriv(y, x.Neg())
	s, err := Build(m)
	if err != nil {
		t.Fatal(err)
	}
	if s.F().jit == nil {
		t.Skip("no machine code on this platform")
	}
	f := s.F().NewFunc()
	ok := []float64{1, 2}
	for _, c := range []struct {
		name     string
		y, p, dy []float64
		want     string
	}{
		{"y", ok[:1], []float64{3}, make([]float64, 2), "tape: f: len(y) = 1, want at least 2"},
		{"p", ok, nil, make([]float64, 2), "tape: f: len(p) = 0, want at least 1"},
		{"out", ok, []float64{3}, make([]float64, 1), "tape: f: len(dy) = 1, want at least 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if msg := fmt.Sprint(recover()); msg != c.want {
					t.Errorf("panic %q, want %q", msg, c.want)
				}
			}()
			f(0, c.y, c.p, c.dy)
		})
	}
	dy := make([]float64, 2)
	f(0, ok, []float64{3}, dy)
	if dy[0] != 6 || dy[1] != -1 {
		t.Errorf("f = %v, want [6 -1]", dy)
	}
}

// FuzzJITMatchesInterpreter builds a random model from the fuzzer's
// seed and sizes and requires the machine code to give the
// interpreter's bits on every program (go test -fuzz
// FuzzJITMatchesInterpreter ./sym/tape; plain go test runs the seeds).
func FuzzJITMatchesInterpreter(f *testing.F) {
	for _, seed := range [][4]uint64{{1, 2, 3, 40}, {7, 1, 0, 90}, {11, 6, 2, 15}, {5, 4, 3, 120}} {
		f.Add(seed[0], uint8(seed[1]), uint8(seed[2]), uint8(seed[3]))
	}
	f.Fuzz(func(t *testing.T, seed uint64, dim, np, ops uint8) {
		rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		md := randomModel(rng, 1+int(dim%8), int(np%5), 1+int(ops%160))
		s, err := Build(md)
		if err != nil {
			t.Skip(err) // a random model may fold to an invalid constant
		}
		if s.F().jit == nil {
			t.Skip("no machine code on this platform")
		}
		checkJIT(t, s, 4, rng)
	})
}
