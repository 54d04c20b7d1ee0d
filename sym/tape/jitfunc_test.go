package tape

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/pmath"
	"github.com/gradsolve/gradsolve/sym"
)

// laneFuncArgs returns arguments for exp and log in lane code: random
// bit patterns (every exponent and sign, NaNs, infinities, subnormals),
// the special values and the functions' thresholds with neighbours, and
// values spread over exp's finite range and around 1.
func laneFuncArgs(rng *rand.Rand) []float64 {
	xs := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 1, -1, 2, 0.5,
		math.SmallestNonzeroFloat64, 2.2250738585072014e-308, math.MaxFloat64, math.Sqrt2, 710, -746}
	for _, c := range []float64{pmath.ExpOverflow, pmath.ExpUnderflow, math.Sqrt2, 2.2250738585072014e-308} {
		lo, hi := c, c
		for range 3 {
			lo, hi = math.Nextafter(lo, math.Inf(-1)), math.Nextafter(hi, math.Inf(1))
			xs = append(xs, lo, hi)
		}
	}
	for range 3000 {
		xs = append(xs, math.Float64frombits(rng.Uint64()),
			pmath.ExpUnderflow-2+(pmath.ExpOverflow-pmath.ExpUnderflow+4)*rng.Float64(),
			1+(rng.Float64()-0.5)*math.Ldexp(1, -rng.IntN(40)))
	}
	return xs
}

// laneFuncCases are the functions lane code computes, with the scalar
// function whose bits it must give and how to build it in a model.
var laneFuncCases = []struct {
	name  string
	build func(x, y sym.Expr) sym.Expr
	want  func(x, y float64) float64
}{
	{"exp", func(x, _ sym.Expr) sym.Expr { return sym.Exp(x) }, func(x, _ float64) float64 { return pmath.Exp(x) }},
	{"log", func(x, _ sym.Expr) sym.Expr { return sym.Log(x) }, func(x, _ float64) float64 { return pmath.Log(x) }},
	{"pow", func(x, y sym.Expr) sym.Expr { return x.Pow(y) }, pmath.Pow},
	{"sin", func(x, _ sym.Expr) sym.Expr { return sym.Sin(x) }, func(x, _ float64) float64 { return pmath.Sin(x) }},
	{"cos", func(x, _ sym.Expr) sym.Expr { return sym.Cos(x) }, func(x, _ float64) float64 { return pmath.Cos(x) }},
	{"tan", func(x, _ sym.Expr) sym.Expr { return sym.Tan(x) }, func(x, _ float64) float64 { return pmath.Tan(x) }},
	{"tanh", func(x, _ sym.Expr) sym.Expr { return sym.Tanh(x) }, func(x, _ float64) float64 { return pmath.Tanh(x) }},
	{"atan2", func(x, y sym.Expr) sym.Expr { return sym.Atan2(x, y) }, pmath.Atan2},
	{"min", func(x, y sym.Expr) sym.Expr { return sym.Min(x, y) }, math.Min},
	{"max", func(x, y sym.Expr) sym.Expr { return sym.Max(x, y) }, math.Max},
}

// TestLaneFuncsMatchPmath checks the math functions in lane code
// against the scalar functions sym.Eval calls, lane by lane, bit for bit
// (any NaN for a NaN), with the arguments shuffled across lanes so that
// every lane sees special and ordinary values side by side, and with
// the arguments and one function's value live across the others (the
// temporaries must not clobber them).
func TestLaneFuncsMatchPmath(t *testing.T) {
	if !HasLaneCode() {
		t.Skip("no AVX2: lane code does not run here")
	}
	m := sym.NewModel("funcs")
	x := m.State("x", 1)
	y := m.State("y", 1)
	e := sym.Exp(x)
	m.Deriv(x, e)
	m.Deriv(y, e.Add(y).Mul(x)) // x, y and e live across the calls below
	for i, c := range laneFuncCases {
		m.Deriv(m.State(fmt.Sprint("z", i), 0), c.build(x, y))
	}
	s, err := Build(m)
	if err != nil {
		t.Fatal(err)
	}
	pg := s.F()
	if pg.laneCode() == nil || pg.lane.entry == 0 {
		t.Fatal("the lane code of the math functions is not of one piece")
	}
	if scalarFuncs && (pg.jit == nil || len(pg.jit.segs) != 1) {
		t.Fatal("the scalar machine code of the math functions is not of one piece")
	}
	const L = LaneWidth
	dim := 2 + len(laneFuncCases)
	rng := rand.New(rand.NewPCG(21, 22))
	xs := laneFuncArgs(rng)
	r := pg.NewLaneRegisters()
	rs, one := pg.NewRegisters(), make([]float64, dim)
	tl := make([]float64, L)
	in, out := make([]float64, dim*L), make([]float64, dim*L)
	for k := 0; k+2*L <= len(xs); k += 2 * L {
		rng.Shuffle(len(xs[k:k+2*L]), func(i, j int) { xs[k+i], xs[k+j] = xs[k+j], xs[k+i] })
		copy(in, xs[k:k+2*L])
		if k%(4*L) == 0 { // exponents of pow near the integers too
			for ln := range L {
				in[L+ln] = math.Round(in[L+ln]*4) / 4
			}
		}
		pg.EvalFLanes(r, tl, in, nil, out)
		for ln := range L {
			xv, yv := in[ln], in[L+ln]
			ev := pmath.Exp(xv)
			want := []float64{ev, (ev + yv) * xv}
			got := []float64{out[ln], out[L+ln]}
			for i, c := range laneFuncCases {
				want = append(want, c.want(xv, yv))
				got = append(got, out[(2+i)*L+ln])
			}
			if !testutil.CheckBits(t, fmt.Sprintf("x=%v y=%v lane %d", xv, yv, ln), got, want) {
				t.FailNow()
			}
			// The scalar machine code, on the same arguments.
			pg.EvalF(rs, 0, []float64{xv, yv, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}[:dim], nil, one)
			if !testutil.CheckBits(t, fmt.Sprintf("scalar x=%v y=%v", xv, yv), one, want) {
				t.FailNow()
			}
		}
	}
}

// expLogModel is a right-hand side of dim states, each with one exp and
// one log: y'_i = exp(−y_i)·a − log(1 + y_i²).
func expLogModel(dim int) *sym.Model {
	m := sym.NewModel("explog")
	a := m.Param("a", 0.5)
	for i := range dim {
		y := m.State(fmt.Sprint("y", i), 0.1*float64(i+1))
		m.Deriv(y, sym.Exp(y.Neg()).Mul(a).Sub(sym.Log(m.Const(1).Add(y.Mul(y)))))
	}
	return m
}

// BenchmarkLaneExpLog measures f with exp and log for four trajectories
// in lane code, computing them inline ("inline") and, as before they
// were lane code, as Go calls lane by lane between pieces ("calls"):
//
//	go test -run X -bench LaneExpLog -count 6 ./sym/tape
func BenchmarkLaneExpLog(b *testing.B) {
	if !HasLaneCode() {
		b.Skip("no AVX2")
	}
	const dim = 4
	for _, inline := range []bool{true, false} {
		name := "inline"
		if !inline {
			name = "calls"
		}
		b.Run(name, func(b *testing.B) {
			laneFuncsInline = inline
			defer func() { laneFuncsInline = true }()
			s, err := Build(expLogModel(dim))
			if err != nil {
				b.Fatal(err)
			}
			pg := s.F()
			const L = LaneWidth
			r, tl, y, p, out := pg.NewLaneRegisters(), make([]float64, L), make([]float64, dim*L), make([]float64, L), make([]float64, dim*L)
			for i := range y {
				y[i] = 0.1 * float64(i+1)
			}
			for i := range p {
				p[i] = 0.5
			}
			pg.EvalFLanes(r, tl, y, p, out) // compile outside the timer
			if (len(pg.lane.code.segs) == 1) != inline {
				b.Fatalf("%s: %d pieces of lane code", name, len(pg.lane.code.segs))
			}
			for b.Loop() {
				pg.EvalFLanes(r, tl, y, p, out)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(L*2*dim), "ns/func")
		})
	}
}

// TestLaneFuncsFit checks that every function pmath gives a
// straight-line form is lane code: none needs more vector registers than
// lane code has (else init leaves it a Go call).
func TestLaneFuncsFit(t *testing.T) {
	for op, p := range map[sym.Op]*pmath.Program{sym.OpExp: pmath.ExpSteps(), sym.OpLog: pmath.LogSteps(),
		sym.OpMin: pmath.MinSteps(), sym.OpMax: pmath.MaxSteps(), sym.OpPow: pmath.PowSteps(),
		sym.OpSin: pmath.SinSteps(), sym.OpCos: pmath.CosSteps(), sym.OpTan: pmath.TanSteps(),
		sym.OpTanh: pmath.TanhSteps(), sym.OpAtan2: pmath.Atan2Steps()} {
		if laneFuncs[op] != p {
			t.Errorf("%v: not lane code (%d vector registers needed, %d there)", op, laneFuncRegs(p), numSlots)
		}
	}
}

// stepsProbe is a straight-line form of two arguments that uses every
// step operation, each result folded into the result by xor, so that a
// wrong encoding of any of them shows: rounding in every mode, integer
// and variable shifts (counts past 63 included), a table lookup, and two
// rarely taken blocks, one whose mask holds in some lanes (its results
// blended in under the mask) and one whose mask holds in none for
// ordinary arguments (the jump over it).
func stepsProbe() *pmath.Program {
	p := &pmath.Program{Args: 2, Regs: 10, Result: 9}
	var consts []uint64
	k := func(x float64) int8 { consts = append(consts, math.Float64bits(x)); return int8(-len(consts)) }
	kb := func(b uint64) int8 { consts = append(consts, b); return int8(-len(consts)) }
	tab := make([]int8, 8)
	for i := range tab {
		tab[i] = k(float64(i) + 0.25)
	}
	st := func(op pmath.StepOp, d, a, b int8) { p.Steps = append(p.Steps, pmath.Step{Op: op, Dst: d, A: a, B: b}) }
	const x, y, t, u, m, acc = 0, 1, 2, 3, 4, 9
	fold := func(r int8) { st(pmath.StepXor, acc, acc, r) }
	st(pmath.StepLoad, acc, 0, k(0))
	st(pmath.StepAdd, t, x, y)
	st(pmath.StepSub, u, x, k(1.5))
	st(pmath.StepMul, t, t, u)
	st(pmath.StepDiv, t, t, k(3))
	fold(t)
	for _, op := range []pmath.StepOp{pmath.StepMax, pmath.StepMin, pmath.StepAnd, pmath.StepOr, pmath.StepAndNot,
		pmath.StepXor, pmath.StepIAdd, pmath.StepISub, pmath.StepIEq, pmath.StepIGT, pmath.StepLT, pmath.StepGE,
		pmath.StepGT, pmath.StepEQ, pmath.StepNGE, pmath.StepUnord} {
		st(op, u, x, y)
		fold(u)
		st(op, u, y, kb(0x4010000000000123))
		fold(u)
	}
	for mode := range uint8(4) {
		p.Steps = append(p.Steps, pmath.Step{Op: pmath.StepRound, Dst: u, A: t, Imm: mode})
		fold(u)
	}
	p.Steps = append(p.Steps, pmath.Step{Op: pmath.StepShl, Dst: u, A: x, Imm: 3}, pmath.Step{Op: pmath.StepShr, Dst: 5, A: y, Imm: 7})
	fold(u)
	fold(5)
	st(pmath.StepAnd, 5, y, kb(0x7F)) // shift counts 0…127
	st(pmath.StepShlV, u, x, 5)
	fold(u)
	st(pmath.StepShrV, u, x, 5)
	fold(u)
	st(pmath.StepLT, m, x, y)
	p.Steps = append(p.Steps, pmath.Step{Op: pmath.StepBlend, Dst: u, A: x, B: y, C: m})
	fold(u)
	st(pmath.StepAnd, 6, x, kb(7))
	st(pmath.StepGather, u, 6, tab[0])
	fold(u)
	// A block taken in the lanes where x < 0.
	st(pmath.StepLT, m, x, k(0))
	st(pmath.StepLoad, 7, 0, k(42))
	st(pmath.StepLoad, 8, 0, k(42))
	p.Steps = append(p.Steps, pmath.Step{Op: pmath.StepIfAny, C: m})
	st(pmath.StepMul, 7, x, y)
	st(pmath.StepAnd, 6, y, kb(7))
	st(pmath.StepGather, 6, 6, tab[0])
	st(pmath.StepAdd, 7, 7, 6)
	p.Steps = append(p.Steps, pmath.Step{Op: pmath.StepEnd})
	p.Steps = append(p.Steps, pmath.Step{Op: pmath.StepBlend, Dst: u, A: 8, B: 7, C: m})
	fold(u)
	// A block taken only where x > 1e300.
	st(pmath.StepGT, m, x, k(1e300))
	p.Steps = append(p.Steps, pmath.Step{Op: pmath.StepIfAny, C: m})
	st(pmath.StepSub, 7, y, x)
	p.Steps = append(p.Steps, pmath.Step{Op: pmath.StepEnd})
	p.Steps = append(p.Steps, pmath.Step{Op: pmath.StepBlend, Dst: u, A: 8, B: 7, C: m})
	fold(u)
	p.Consts = consts
	return p
}

// TestLaneStepEncodings checks the lane code of every step operation
// against pmath.Program.Run, lane by lane, bit for bit: stepsProbe in
// place of atan2 (two arguments) in a program compiled for the test.
func TestLaneStepEncodings(t *testing.T) {
	if !HasLaneCode() {
		t.Skip("no AVX2: lane code does not run here")
	}
	probe := stepsProbe()
	if laneFuncRegs(probe) > numSlots {
		t.Fatalf("the probe needs %d registers", laneFuncRegs(probe))
	}
	laneFuncs[sym.OpAtan2] = probe
	defer delete(laneFuncs, sym.OpAtan2)
	m := sym.NewModel("probe")
	x := m.State("x", 1)
	y := m.State("y", 1)
	m.Deriv(x, sym.Atan2(x, y))
	m.Deriv(y, y.Mul(x)) // keeps x and y live across the function
	s, err := Build(m)
	if err != nil {
		t.Fatal(err)
	}
	pg := s.F()
	if pg.laneCode() == nil || pg.lane.entry == 0 {
		t.Fatal("the probe's lane code is not of one piece")
	}
	if scalarFuncs && (pg.jit == nil || len(pg.jit.segs) != 1) {
		t.Fatal("the probe's scalar machine code is not of one piece")
	}
	rs, one := pg.NewRegisters(), make([]float64, 2)
	const L = LaneWidth
	rng := rand.New(rand.NewPCG(31, 32))
	r, tl, out := pg.NewLaneRegisters(), make([]float64, L), make([]float64, 2*L)
	in := make([]float64, 2*L)
	for trial := range 2000 {
		for i := range in {
			switch {
			case trial%3 == 0:
				in[i] = math.Float64frombits(rng.Uint64())
			case trial%3 == 1:
				in[i] = math.Abs(rng.NormFloat64()) * 10 // no lane takes the first block
			default:
				in[i] = rng.NormFloat64() * 1e3
			}
		}
		pg.EvalFLanes(r, tl, in, nil, out)
		for ln := range L {
			want := probe.Run2(in[ln], in[L+ln])
			if math.Float64bits(out[ln]) != math.Float64bits(want) {
				t.Fatalf("trial %d lane %d (x=%v, y=%v): lane code %#x, Run2 %#x", trial, ln, in[ln], in[L+ln],
					math.Float64bits(out[ln]), math.Float64bits(want))
			}
			pg.EvalF(rs, 0, []float64{in[ln], in[L+ln]}, nil, one)
			if math.Float64bits(one[0]) != math.Float64bits(want) {
				t.Fatalf("trial %d (x=%v, y=%v): scalar machine code %#x, Run2 %#x", trial, in[ln], in[L+ln],
					math.Float64bits(one[0]), math.Float64bits(want))
			}
		}
	}
}

// A program whose math functions would add more than maxInlineSteps
// steps keeps them as Go calls between pieces, in scalar and in lane
// code, with the same bits; one below the bound computes them inline.
func TestLaneFuncsInlineBound(t *testing.T) {
	per := len(pmath.SinSteps().Steps)
	for _, c := range []struct {
		terms int
		calls bool
	}{{maxInlineSteps/per - 1, false}, {maxInlineSteps/per + 1, true}} {
		s, err := Build(sinSumModel(c.terms))
		if err != nil {
			t.Fatal(err)
		}
		pg := s.F()
		if pg.callFuncs != c.calls {
			t.Fatalf("%d sin terms (%d steps inline): callFuncs %v, want %v", c.terms, pg.inlineSteps(), pg.callFuncs, c.calls)
		}
		rng := rand.New(rand.NewPCG(41, 42))
		checkLanes(t, fmt.Sprintf("%d sin terms", c.terms), pg, 4, rng)
		if j := pg.laneCode(); j != nil && (len(j.segs) > 1) != c.calls {
			t.Errorf("%d sin terms: %d pieces of lane code", c.terms, len(j.segs))
		}
		if scalarFuncs && pg.jit != nil && (len(pg.jit.segs) > 1) != c.calls {
			t.Errorf("%d sin terms: %d pieces of scalar code", c.terms, len(pg.jit.segs))
		}
	}
}
