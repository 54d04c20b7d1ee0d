package pmath

import "math"

// Straight-line forms: Exp and Log as a list of operations on 64-bit
// lanes, for code generators (the SIMD lane code of package sym/tape;
// any other target that must give these functions' bits). Executing a
// Program's steps in order, each with IEEE double arithmetic or the
// integer and bitwise operation it names, gives bit for bit what the Go
// function gives, for every argument: TestStepsMatchFunctions checks
// this over the same arguments as the accuracy tests, the special values
// and random bit patterns.

// StepOp is the operation of a Step.
type StepOp uint8

// The operations. A and B are operands (registers, or constants for B:
// see Step), C a register holding a mask. The floating-point ones are
// the IEEE operations; Max and Min are those of x86's maxpd and minpd
// (A > B ? A : B and A < B ? A : B: B where either is NaN). The
// comparisons give a mask: all ones where the predicate holds, else
// zero.
const (
	StepLoad   StepOp = iota // Dst = B
	StepAdd                  // Dst = A + B
	StepSub                  // Dst = A − B
	StepMul                  // Dst = A · B
	StepDiv                  // Dst = A / B
	StepMax                  // Dst = A > B ? A : B
	StepMin                  // Dst = A < B ? A : B
	StepAnd                  // Dst = A & B (bits)
	StepOr                   // Dst = A | B (bits)
	StepAndNot               // Dst = ^A & B (bits)
	StepIAdd                 // Dst = A + B as 64-bit integers (wrapping)
	StepShl                  // Dst = A << Imm (bits, 64-bit lanes)
	StepShr                  // Dst = A >> Imm (bits, logical)
	StepLT                   // Dst = mask(A < B), false with a NaN
	StepGE                   // Dst = mask(A ≥ B), false with a NaN
	StepGT                   // Dst = mask(A > B), false with a NaN
	StepEQ                   // Dst = mask(A == B), false with a NaN
	StepNGE                  // Dst = mask(!(A ≥ B)), true with a NaN
	StepUnord                // Dst = mask(A or B is NaN)
	StepBlend                // Dst = C's sign bit set ? B : A
	StepXor                  // Dst = A ^ B (bits)
	StepISub                 // Dst = A − B as 64-bit integers (wrapping)
	StepIEq                  // Dst = mask(A == B as 64-bit integers)
	StepIGT                  // Dst = mask(A > B as signed 64-bit integers)
	StepShlV                 // Dst = A << B (bits; a count of 64 or more gives 0)
	StepShrV                 // Dst = A >> B (bits, logical; a count of 64 or more gives 0)
	StepRound                // Dst = A rounded to an integer: Imm 0 to nearest (ties to even), 1 down, 2 up, 3 toward zero
	StepGather               // Dst = Consts[−1−B + A], A a signed 64-bit integer index (the table starts at constant B), in range for every argument
	StepIfAny                // the steps up to the next StepEnd run only where C's sign bit is set (see Program)
	StepEnd                  // ends a StepIfAny block
)

// Step is one operation of a Program: Dst = Op(A, B, C). Operands are
// register numbers, except that B may be a constant: B < 0 names
// Consts[−1−B]. Register 0 holds the argument and is never written.
type Step struct {
	Op      StepOp
	Dst     int8
	A, B, C int8
	Imm     uint8
}

// Program is a function in straight-line form.
//
// A StepGather's index must be in its table's range for every
// argument, also inside a StepIfAny block where the block's mask is
// clear (vector code reads the table for every lane).
//
// A StepIfAny block (blocks do not nest) is a rarely taken path: code
// for several lanes at once may run it for all of them when any lane's
// mask is set, and skip it when none is. Its results must therefore
// matter only where the mask is set: the steps after the block blend
// them in under that mask. A register the block writes is otherwise
// dead after it.
type Program struct {
	Steps []Step
	// Consts are the constants' bit patterns.
	Consts []uint64
	// Args is the number of arguments (1 or 2), in registers 0 and 1
	// at entry; steps never write them.
	Args int
	// Regs is the number of registers the steps use (the arguments'
	// included); Result the one that holds the result at the end.
	Regs   int
	Result int8
}

// Run executes p's steps on x, one lane: the reference semantics of the
// straight-line form, which generated code must follow. For a Program
// of two arguments, x is the first and the second is 0 (use Run2).
func (p *Program) Run(x float64) float64 { return p.Run2(x, 0) }

// Run2 is Run for a Program of two arguments, x and y.
func (p *Program) Run2(x, y float64) float64 {
	var r [16]uint64
	r[0] = math.Float64bits(x)
	r[1] = math.Float64bits(y)
	skip := false
	for _, s := range p.Steps {
		if skip {
			skip = s.Op != StepEnd
			continue
		}
		a := r[s.A]
		var b uint64
		if s.B < 0 {
			b = p.Consts[-1-int(s.B)]
		} else {
			b = r[s.B]
		}
		fa, fb := math.Float64frombits(a), math.Float64frombits(b)
		var d uint64
		switch s.Op {
		case StepLoad:
			d = b
		case StepAdd:
			d = math.Float64bits(fa + fb)
		case StepSub:
			d = math.Float64bits(fa - fb)
		case StepMul:
			d = math.Float64bits(fa * fb)
		case StepDiv:
			d = math.Float64bits(fa / fb)
		case StepMax:
			d = b
			if fa > fb {
				d = a
			}
		case StepMin:
			d = b
			if fa < fb {
				d = a
			}
		case StepAnd:
			d = a & b
		case StepOr:
			d = a | b
		case StepAndNot:
			d = ^a & b
		case StepIAdd:
			d = a + b
		case StepShl:
			d = a << s.Imm
		case StepShr:
			d = a >> s.Imm
		case StepLT:
			d = mask(fa < fb)
		case StepGE:
			d = mask(fa >= fb)
		case StepGT:
			d = mask(fa > fb)
		case StepEQ:
			d = mask(fa == fb)
		case StepNGE:
			d = mask(!(fa >= fb))
		case StepUnord:
			d = mask(fa != fa || fb != fb)
		case StepBlend:
			d = a
			if r[s.C]>>63 != 0 {
				d = b
			}
		case StepXor:
			d = a ^ b
		case StepISub:
			d = a - b
		case StepIEq:
			d = mask(a == b)
		case StepIGT:
			d = mask(int64(a) > int64(b))
		case StepShlV:
			if b < 64 {
				d = a << b
			}
		case StepShrV:
			if b < 64 {
				d = a >> b
			}
		case StepRound:
			switch s.Imm {
			case 0:
				d = math.Float64bits(math.RoundToEven(fa))
			case 1:
				d = math.Float64bits(math.Floor(fa))
			case 2:
				d = math.Float64bits(math.Ceil(fa))
			default:
				d = math.Float64bits(math.Trunc(fa))
			}
		case StepGather:
			d = p.Consts[-1-int(s.B)+int(int64(a))]
		case StepIfAny:
			skip = r[s.C]>>63 == 0
			continue
		case StepEnd:
			continue
		}
		r[s.Dst] = d
	}
	return math.Float64frombits(r[p.Result])
}

func mask(c bool) uint64 {
	if c {
		return ^uint64(0)
	}
	return 0
}

// builder writes a Program, keeping its constants unique.
type builder struct {
	p   Program
	ids map[uint64]int8
}

// k returns the operand naming constant bits.
func (b *builder) k(bits uint64) int8 {
	if id, ok := b.ids[bits]; ok {
		return id
	}
	if b.ids == nil {
		b.ids = map[uint64]int8{}
	}
	b.p.Consts = append(b.p.Consts, bits)
	id := int8(-len(b.p.Consts))
	b.ids[bits] = id
	return id
}

// f returns the operand naming the constant x.
func (b *builder) f(x float64) int8 { return b.k(math.Float64bits(x)) }

func (b *builder) op(op StepOp, dst, a, bb int8) {
	b.p.Steps = append(b.p.Steps, Step{Op: op, Dst: dst, A: a, B: bb})
	b.p.Regs = max(b.p.Regs, int(dst)+1)
}

func (b *builder) shift(op StepOp, dst, a int8, n uint8) {
	b.p.Steps = append(b.p.Steps, Step{Op: op, Dst: dst, A: a, Imm: n})
	b.p.Regs = max(b.p.Regs, int(dst)+1)
}

func (b *builder) blend(dst, a, bb, m int8) {
	b.p.Steps = append(b.p.Steps, Step{Op: StepBlend, Dst: dst, A: a, B: bb, C: m})
	b.p.Regs = max(b.p.Regs, int(dst)+1)
}

// ExpSteps returns Exp in straight-line form. The Program is shared:
// do not modify it.
func ExpSteps() *Program { return expSteps }

// LogSteps returns Log in straight-line form. The Program is shared:
// do not modify it.
func LogSteps() *Program { return logSteps }

var (
	expSteps = buildExp()
	logSteps = buildLog()
)

// buildExp writes Exp's operations: the argument clamped to
// [−746, 710] (the results outside [ExpUnderflow, ExpOverflow] are
// replaced at the end), then Exp's main path, then the selections of
// the special values.
func buildExp() *Program {
	var b builder
	const x, xc, k, hi, lo, rr, p = 0, 1, 2, 3, 4, 5, 6
	const r, y, s1, m = xc, xc, hi, rr
	b.op(StepMax, xc, x, b.f(-746))
	b.op(StepMin, xc, xc, b.f(710))
	b.op(StepMul, k, xc, b.f(invLn2))
	b.op(StepAdd, k, k, b.f(roundMagic))
	b.op(StepSub, k, k, b.f(roundMagic)) // k = round(x/ln 2)
	b.op(StepMul, hi, k, b.f(ln2Hi))
	b.op(StepSub, hi, xc, hi)
	b.op(StepMul, lo, k, b.f(ln2Lo))
	b.op(StepSub, r, hi, lo)
	b.op(StepMul, rr, r, r)
	b.op(StepMul, p, rr, b.f(expP5))
	for _, c := range []float64{expP4, expP3, expP2, expP1} {
		b.op(StepAdd, p, p, b.f(c))
		b.op(StepMul, p, p, rr)
	}
	b.op(StepSub, p, r, p)  // c
	b.op(StepMul, rr, r, p) // r·c
	b.op(StepLoad, r, 0, b.f(2))
	b.op(StepSub, r, r, p)   // 2 − c
	b.op(StepDiv, rr, rr, r) // r·c/(2 − c)
	b.op(StepSub, lo, lo, rr)
	b.op(StepSub, lo, lo, hi)
	b.op(StepLoad, y, 0, b.f(1))
	b.op(StepSub, y, y, lo) // y = 1 − ((lo − r·c/(2−c)) − hi)
	// 2^k₁ and 2^k₂ from the low bits of k₁ + 1.5·2⁵² and k₂ + 1.5·2⁵².
	b.op(StepMul, s1, k, b.f(0.5))
	b.op(StepAdd, s1, s1, b.f(roundMagic))
	b.op(StepIAdd, lo, s1, b.k(1023))
	b.shift(StepShl, lo, lo, 52) // 2^k₁
	b.op(StepSub, s1, s1, b.f(roundMagic))
	b.op(StepSub, k, k, s1) // k₂ = k − k₁
	b.op(StepAdd, k, k, b.f(roundMagic))
	b.op(StepIAdd, k, k, b.k(1023))
	b.shift(StepShl, k, k, 52) // 2^k₂
	b.op(StepMul, y, y, lo)
	b.op(StepMul, y, y, k)
	// Special values.
	b.op(StepGT, m, x, b.f(ExpOverflow))
	b.blend(y, y, b.f(math.Inf(1)), m)
	b.op(StepLT, m, x, b.f(ExpUnderflow))
	b.op(StepAndNot, y, m, y)
	b.op(StepUnord, m, x, x)
	b.blend(y, y, x, m)
	b.p.Result = y
	b.p.Args = 1
	return &b.p
}

// buildLog writes Log's operations: the subnormal scaling and the
// reduction by selections, Log's main path, then the special values.
func buildLog() *Program {
	var b builder
	const x, m, xs, k, h, s, z, w = 0, 1, 2, 3, 4, 5, 6, 7
	const f, t1, t2 = xs, m, z
	b.op(StepLT, m, x, b.f(minNormal))
	b.op(StepMul, xs, x, b.f(two52))
	b.blend(xs, x, xs, m)
	b.op(StepAnd, m, m, b.f(-52)) // the exponent's adjustment
	b.shift(StepShr, k, xs, 52)
	b.op(StepOr, k, k, b.k(two52Bit))
	b.op(StepSub, k, k, b.f(two52+1023))
	b.op(StepAdd, k, k, m)
	b.op(StepAnd, xs, xs, b.k(mantMask))
	b.op(StepOr, xs, xs, b.k(oneBits)) // the mantissa in [1, 2)
	b.op(StepGE, m, xs, b.f(math.Sqrt2))
	b.op(StepMul, h, xs, b.f(0.5))
	b.blend(xs, xs, h, m)
	b.op(StepAnd, m, m, b.f(1))
	b.op(StepAdd, k, k, m)
	b.op(StepSub, f, xs, b.f(1))
	b.op(StepAdd, s, f, b.f(2))
	b.op(StepDiv, s, f, s)
	b.op(StepMul, z, s, s)
	b.op(StepMul, w, z, z)
	b.op(StepMul, t1, w, b.f(lg7))
	for _, c := range []float64{lg5, lg3} {
		b.op(StepAdd, t1, t1, b.f(c))
		b.op(StepMul, t1, t1, w)
	}
	b.op(StepAdd, t1, t1, b.f(lg1))
	b.op(StepMul, t1, t1, z)
	b.op(StepMul, t2, w, b.f(lg6))
	b.op(StepAdd, t2, t2, b.f(lg4))
	b.op(StepMul, t2, t2, w)
	b.op(StepAdd, t2, t2, b.f(lg2))
	b.op(StepMul, t2, t2, w)
	b.op(StepAdd, t1, t1, t2) // R
	b.op(StepMul, h, f, b.f(0.5))
	b.op(StepMul, h, h, f) // f²/2
	b.op(StepAdd, t1, h, t1)
	b.op(StepMul, t1, s, t1)
	b.op(StepMul, w, k, b.f(ln2Lo))
	b.op(StepAdd, t1, t1, w)
	b.op(StepSub, h, h, t1)
	b.op(StepSub, h, h, f)
	b.op(StepMul, k, k, b.f(ln2Hi))
	b.op(StepSub, k, k, h)
	// Special values.
	b.op(StepEQ, m, x, b.f(math.Inf(1)))
	b.blend(k, k, x, m)
	b.op(StepEQ, m, x, b.f(0))
	b.blend(k, k, b.f(math.Inf(-1)), m)
	b.op(StepNGE, m, x, b.f(0))
	b.blend(k, k, b.k(nanBits), m)
	b.p.Result = k
	b.p.Args = 1
	return &b.p
}

// round appends dst = a rounded in the given StepRound mode.
func (b *builder) round(dst, a int8, mode uint8) {
	b.p.Steps = append(b.p.Steps, Step{Op: StepRound, Dst: dst, A: a, Imm: mode})
	b.p.Regs = max(b.p.Regs, int(dst)+1)
}

// table appends constants as one consecutive run (not shared with
// other constants) and returns the operand naming the first, for
// StepGather.
func (b *builder) table(bits []uint64) int8 {
	b.p.Consts = append(b.p.Consts, bits...)
	return int8(-(len(b.p.Consts) - len(bits) + 1))
}

// gather appends dst = table[idx].
func (b *builder) gather(dst, idx, table int8) {
	b.p.Steps = append(b.p.Steps, Step{Op: StepGather, Dst: dst, A: idx, B: table})
	b.p.Regs = max(b.p.Regs, int(dst)+1)
}

// ifAny opens a StepIfAny block under mask m; end closes it.
func (b *builder) ifAny(m int8) { b.p.Steps = append(b.p.Steps, Step{Op: StepIfAny, C: m}) }

func (b *builder) end() { b.p.Steps = append(b.p.Steps, Step{Op: StepEnd}) }
