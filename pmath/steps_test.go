package pmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

// stepArgs returns the arguments the straight-line forms are checked
// on: random bit patterns (every exponent, both signs, NaNs with
// payloads, infinities), the special values, the thresholds and their
// neighbours, subnormals, and values spread over the ranges where the
// functions are finite.
func stepArgs() []float64 {
	rng := rand.New(rand.NewPCG(5, 6))
	xs := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(),
		math.Float64frombits(0xFFF8000000000123), math.Float64frombits(0x7FF0000000000001),
		math.SmallestNonzeroFloat64, minNormal, math.MaxFloat64, -math.MaxFloat64, 1, -1, 2, 0.5,
		math.Sqrt2, math.Sqrt2 / 2, 710, -746, 709.9, -745.5}
	for _, c := range []float64{ExpOverflow, ExpUnderflow, math.Sqrt2, minNormal, -708.4, -1022 * math.Ln2} {
		lo, hi := c, c
		for range 5 {
			lo, hi = math.Nextafter(lo, math.Inf(-1)), math.Nextafter(hi, math.Inf(1))
			xs = append(xs, lo, hi)
		}
	}
	for range 20000 {
		xs = append(xs, math.Float64frombits(rng.Uint64()))
		xs = append(xs, ExpUnderflow-2+(ExpOverflow-ExpUnderflow+4)*rng.Float64())
		xs = append(xs, (rng.Float64()-0.5)*math.Ldexp(1, 8-rng.IntN(70)))
	}
	return xs
}

// TestStepsMatchFunctions checks that the straight-line forms give the
// functions' bits, NaNs included.
func TestStepsMatchFunctions(t *testing.T) {
	for _, c := range []struct {
		name string
		p    *Program
		f    func(float64) float64
	}{{"Exp", ExpSteps(), Exp}, {"Log", LogSteps(), Log}} {
		bad := 0
		for _, x := range stepArgs() {
			got, want := c.p.Run(x), c.f(x)
			if math.Float64bits(got) != math.Float64bits(want) {
				if bad++; bad <= 5 {
					t.Errorf("%s steps at %v (%#x): %v (%#x), the function gives %v (%#x)",
						c.name, x, math.Float64bits(x), got, math.Float64bits(got), want, math.Float64bits(want))
				}
			}
		}
		if bad > 5 {
			t.Errorf("%s: %d mismatches in all", c.name, bad)
		}
	}
}

// allPrograms are the straight-line forms, by function name.
func allPrograms() map[string]*Program {
	return map[string]*Program{"Exp": ExpSteps(), "Log": LogSteps(), "Pow": PowSteps(), "Min": MinSteps(), "Max": MaxSteps(),
		"Sin": SinSteps(), "Cos": CosSteps(), "Tan": TanSteps(), "Tanh": TanhSteps(), "Atan": AtanSteps(), "Atan2": Atan2Steps()}
}

// TestStepsWellFormed checks the contract code generators rely on: the
// arguments' registers are never written, operands are in range, only
// B names constants, and StepIfAny blocks are closed and do not nest.
func TestStepsWellFormed(t *testing.T) {
	for name, p := range allPrograms() {
		checkWellFormed(t, name, p)
	}
}

// checkWellFormed is TestStepsWellFormed for one Program.
func checkWellFormed(t *testing.T, name string, p *Program) {
	t.Helper()
	{
		if p.Args < 1 || p.Args > 2 || p.Regs > 16 || int(p.Result) < p.Args || int(p.Result) >= p.Regs {
			t.Errorf("%s: %d arguments, %d registers, result in %d", name, p.Args, p.Regs, p.Result)
		}
		inBlock := false
		for i, s := range p.Steps {
			switch s.Op {
			case StepIfAny:
				if inBlock || s.C < 0 || int(s.C) >= p.Regs {
					t.Errorf("%s step %d: a nested block, or its mask out of range", name, i)
				}
				inBlock = true
				continue
			case StepEnd:
				if !inBlock {
					t.Errorf("%s step %d: StepEnd outside a block", name, i)
				}
				inBlock = false
				continue
			}
			if int(s.Dst) < p.Args || int(s.Dst) >= p.Regs || s.A < 0 || int(s.A) >= p.Regs || int(s.B) >= p.Regs ||
				-1-int(s.B) >= len(p.Consts) || (s.Op == StepBlend && (s.C < 0 || int(s.C) >= p.Regs)) ||
				(s.Op == StepGather && s.B >= 0) {
				t.Errorf("%s step %d: %+v out of range", name, i, s)
			}
		}
		if inBlock {
			t.Errorf("%s: a StepIfAny block is not closed", name)
		}
	}
}
