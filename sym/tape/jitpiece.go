package tape

import (
	"math"

	"github.com/gradsolve/gradsolve/internal/jit"
	"github.com/gradsolve/gradsolve/sym"
)

// Machine code of the piecewise operations: comparisons, sign, floor
// and ceil. Each gives the bits of sym.Eval (the interpreter):
//
//   - a comparison is cmpsd, whose predicates are the IEEE ones Go's
//     operators use (lt, le and eq false with a NaN operand, neq true),
//     giving an all-ones or all-zeros mask that andpd turns into 1.0 or
//     +0.0;
//   - sign(x) is x where 0 < |x| fails (±0 and NaN, unchanged) and
//     1.0 with x's sign bit elsewhere, built from masks;
//   - floor and ceil are roundsd (SSE4.1) rounding down or up, which is
//     the instruction Go's math.Floor and math.Ceil run on such a
//     processor; without SSE4.1 they stay Go calls (see jitable).

// useRoundSD says floor and ceil become roundsd. A variable so that
// tests can take the other route.
var useRoundSD = jit.HasSSE41()

// cmpPredicate is the cmpsd predicate of each comparison.
var cmpPredicate = map[sym.Op]byte{
	sym.OpEq: 0, // eq (ordered): false with NaN
	sym.OpLt: 1, // lt
	sym.OpLe: 2, // le
	sym.OpNe: 4, // neq (unordered): true with NaN
}

// The bit patterns the piecewise code loads.
var (
	oneBits = math.Float64bits(1)
	absBits = uint64(1<<63 - 1)
)

// compare translates a comparison: d = (a op b) & 1.0.
func (g *jitGen) compare(in Instr, nx [3]int32) int {
	sa := g.ensure(in.A, nx[0])
	sb := g.touch(in.B, nx[1])
	d := g.dest(sa, sb)
	if sb >= 0 {
		g.rr(jit.PSD, jit.OpCmp, byte(d), byte(sb))
	} else {
		g.rm(jit.PSD, jit.OpCmp, byte(d), g.loc(in.B))
	}
	g.a.B = append(g.a.B, cmpPredicate[in.Op])
	g.mask(xTmp, oneBits)
	g.rr(jit.PPD, jit.OpAnd, byte(d), xTmp)
	return d
}

// sign translates sign(a). With m = (0 < |a|) as a mask,
//
//	sign(a) = (a &^ (m & abs)) | (m & 1.0)
//
// which is a itself where m is clear (±0, NaN) and 1.0 with a's sign
// bit where it is set.
func (g *jitGen) sign(in Instr, nx [3]int32) int {
	sa := byte(g.ensure(in.A, nx[0]))
	d := byte(g.alloc(int(sa)))
	g.mask(d, absBits)
	g.rr(jit.PPD, jit.OpAnd, d, sa) // d = |a|
	g.rr(jit.PPD, jit.OpXor, xTmp, xTmp)
	g.rr(jit.PSD, jit.OpCmp, xTmp, d) // tmp = m = (0 < |a|)
	g.a.B = append(g.a.B, 1)
	g.mask(d, absBits)
	g.rr(jit.PPD, jit.OpAnd, d, xTmp) // d = m & abs
	g.mask(xTmp, oneBits)
	g.rr(jit.PPD, jit.OpAnd, xTmp, d) // tmp = m & 1.0
	g.rr(jit.PPD, jit.OpAndN, d, sa)  // d = a &^ (m & abs)
	g.rr(jit.PPD, jit.OpOr, d, xTmp)  // d |= m & 1.0
	return int(d)
}

// round translates floor(a) and ceil(a) as roundsd d, a with the
// rounding mode in the immediate (1 down, 2 up; 8 suppresses the
// precision exception, which is masked anyway).
func (g *jitGen) round(in Instr, nx [3]int32) int {
	sa := g.ensure(in.A, nx[0])
	var d int
	if g.slots[sa].next == never {
		g.drop(sa)
		d = sa
	} else {
		d = g.alloc(sa)
	}
	mode := byte(8 | 1)
	if in.Op == sym.OpCeil {
		mode = 8 | 2
	}
	a := &g.a
	if g.lanes > 1 { // vroundpd d, a, mode
		a.VRR(jit.VexPP66, jit.Map0F3A, true, 0x09, byte(d), 0, byte(sa))
		a.B = append(a.B, mode)
		return d
	}
	a.B = append(a.B, 0x66) // roundsd: 66 [REX] 0F 3A 0B /r ib
	if rex := byte(0x40) | byte(d&8)>>1 | byte(sa&8)>>3; rex != 0x40 {
		a.B = append(a.B, rex)
	}
	a.B = append(a.B, 0x0F, 0x3A, 0x0B, 0xC0|byte(d&7)<<3|byte(sa&7), mode)
	return d
}
