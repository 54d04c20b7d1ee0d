package ivp

import (
	"math"
	"unsafe"

	"github.com/gradsolve/gradsolve/internal/jit"
)

// laneBlock is the memory the code of whole rounds addresses through
// R14 (LaneRounds, ReplayRounds, ReverseRounds): arrays of L values
// each (lane l of array k at [k·L + l]), then constants of four values
// each, then what the kind of rounds keeps after them. Masks are 64-bit
// lanes, all ones or all zeros; addresses are stored as their bits.
type laneBlock struct {
	L     int
	Block []float64
	// arrays is the number of arrays; rounds the constant whose first
	// value counts the rounds left in a call; moved the first of the
	// two mask arrays the stepper binds (moved, then pending).
	arrays, rounds, moved int
}

func newLaneBlock(L, arrays, consts, tail, rounds, moved int) laneBlock {
	return laneBlock{L: L, Block: make([]float64, arrays*L+4*consts+tail), arrays: arrays, rounds: rounds, moved: moved}
}

// setConst sets the four values of constant c.
func (b *laneBlock) setConst(c int, v float64) {
	for i := range 4 {
		b.Block[b.arrays*b.L+4*c+i] = v
	}
}

// tail returns the address of value i after the constants.
func (b *laneBlock) tail(consts, i int) *float64 { return &b.Block[b.arrays*b.L+4*consts+i] }

// F returns array k of the block (RoundT, RoundH or RoundErr), for the
// stepper's arrays.
func (b *laneBlock) F(k RoundArray) []float64 {
	i := int(k) * b.L
	return b.Block[i : i+b.L : i+b.L]
}

// Masks returns the moved and pending masks, 2L words: moved lanes at
// [0, L), pending ones at [L, 2L).
func (b *laneBlock) Masks() []uint64 {
	return unsafe.Slice((*uint64)(unsafe.Pointer(&b.Block[b.moved*b.L])), 2*b.L)
}

// Base returns the address of the block, which the code expects in R14.
func (b *laneBlock) Base() unsafe.Pointer { return unsafe.Pointer(&b.Block[0]) }

// SetRounds sets the number of rounds the next call of the code runs.
func (b *laneBlock) SetRounds(n int) {
	b.Block[b.arrays*b.L+4*b.rounds] = math.Float64frombits(uint64(n))
}

// RoundsLeft returns the count SetRounds set, as the last call of the
// code left it: a call that returns because some lane needs Go does
// not count its last round down, so a stepper that runs the code a
// round at a time (SetRounds(1)) learns from 1 that Go is due.
func (b *laneBlock) RoundsLeft() int {
	return int(math.Float64bits(b.Block[b.arrays*b.L+4*b.rounds]))
}

func (b *laneBlock) at(k, l int) *float64 { return &b.Block[k*b.L+l] }

func (b *laneBlock) mask(k, l int) bool { return math.Float64bits(b.Block[k*b.L+l]) != 0 }

func (b *laneBlock) setMask(k, l int, on bool) {
	var v uint64
	if on {
		v = ^uint64(0)
	}
	b.Block[k*b.L+l] = math.Float64frombits(v)
}

func (b *laneBlock) setAddr(k, l int, p *float64) {
	b.Block[k*b.L+l] = math.Float64frombits(uint64(uintptr(unsafe.Pointer(p))))
}

// blockGen emits the 256-bit code of group grp of a block: operands of
// its arrays (at the group's four lanes, or one lane) and its
// constants, through R14.
type blockGen struct {
	a   *jit.Asm
	b   *laneBlock
	grp int
}

const (
	bpp = jit.VexPP66
	bm0 = jit.Map0F
)

// The vcmppd predicates used.
const (
	cmpEQ    = 0x00 // ordered, false with NaN
	cmpLT    = 0x01
	cmpLE    = 0x02
	cmpUnord = 0x03
	cmpGE    = 0x0D
	cmpGT    = 0x0E
)

func (g blockGen) mem(k int) jit.Mem {
	return jit.Mem{Base: rBlock, Disp: int32(8 * (k*g.b.L + 4*g.grp))}
}
func (g blockGen) lane(k, l int) jit.Mem {
	return jit.Mem{Base: rBlock, Disp: int32(8 * (k*g.b.L + l))}
}
func (g blockGen) kc(c int) jit.Mem {
	return jit.Mem{Base: rBlock, Disp: int32(8 * (g.b.arrays*g.b.L + 4*c))}
}
func (g blockGen) ld(d byte, k int)  { g.a.VRM(bpp, bm0, true, jit.OpLoad, d, 0, g.mem(k)) }
func (g blockGen) ldC(d byte, c int) { g.a.VRM(bpp, bm0, true, jit.OpLoad, d, 0, g.kc(c)) }
func (g blockGen) st(k int, s byte)  { g.a.VRM(bpp, bm0, true, jit.OpSt, s, 0, g.mem(k)) }

// rr is d = s1 op s2; rm is d = s1 op array k; rc is d = s1 op constant c.
func (g blockGen) rr(op, d, s1, s2 byte)    { g.a.VRR(bpp, bm0, true, op, d, s1, s2) }
func (g blockGen) rm(op, d, s1 byte, k int) { g.a.VRM(bpp, bm0, true, op, d, s1, g.mem(k)) }
func (g blockGen) rc(op, d, s1 byte, c int) { g.a.VRM(bpp, bm0, true, op, d, s1, g.kc(c)) }

// cmp, cmpM and cmpC are vcmppd of s1 with s2, array k or constant c.
func (g blockGen) cmp(d, s1, s2, pred byte) { g.a.VRRI(bpp, bm0, true, jit.OpCmp, d, s1, s2, pred) }
func (g blockGen) cmpM(d, s1 byte, k int, pred byte) {
	g.a.VRMI(bpp, bm0, true, jit.OpCmp, d, s1, g.mem(k), pred)
}
func (g blockGen) cmpC(d, s1 byte, c int, pred byte) {
	g.a.VRMI(bpp, bm0, true, jit.OpCmp, d, s1, g.kc(c), pred)
}

// The lanes' values at their own addresses, in general registers p
// (lane i's at p[i]): the tails gather them into a vector register, or
// scatter one to them, lane by lane in registers rather than through
// the block, since a 256-bit load of what 64-bit stores just wrote
// waits for the stores to reach the cache (the processor forwards a
// store only to a load it contains).

// addrs moves the four addresses in vector register v into p (x is a
// scratch vector register).
func (g blockGen) addrs(p [4]byte, v, x byte) {
	a := g.a
	a.VMovqFromX(p[0], v)
	a.VPextrq1(p[1], v)
	a.VExtractHigh(x, v)
	a.VMovqFromX(p[2], x)
	a.VPextrq1(p[3], x)
}

// gather emits d = the four values at p[i] + disp (x is a scratch
// vector register, not d).
func (g blockGen) gather(d, x byte, p [4]byte, disp int32) {
	a := g.a
	a.VMovsdLoad(d, jit.Mem{Base: p[0], Disp: disp})
	a.VMovhpdLoad(d, d, jit.Mem{Base: p[1], Disp: disp})
	a.VMovsdLoad(x, jit.Mem{Base: p[2], Disp: disp})
	a.VMovhpdLoad(x, x, jit.Mem{Base: p[3], Disp: disp})
	a.VInsertHigh(d, d, x)
}

// scatter emits the stores of v's four values to p[i] + disp (x is a
// scratch vector register, not v).
func (g blockGen) scatter(v, x byte, p [4]byte, disp int32) {
	a := g.a
	a.VMovsdStore(jit.Mem{Base: p[0], Disp: disp}, v)
	a.VMovhpdStore(jit.Mem{Base: p[1], Disp: disp}, v)
	a.VExtractHigh(x, v)
	a.VMovsdStore(jit.Mem{Base: p[2], Disp: disp}, x)
	a.VMovhpdStore(jit.Mem{Base: p[3], Disp: disp}, x)
}

// prefetch emits a prefetch of p[i] + off for each lane: the rounds
// read (and write) every lane's mesh one step a round, which makes
// eight or more streams through memory, more than the cache's own
// prefetchers follow.
func (g blockGen) prefetch(p [4]byte, off int) {
	for _, r := range p {
		g.a.Prefetch(jit.Mem{Base: r, Disp: int32(off)})
	}
}

// prefetchSteps is how many steps ahead of a lane the rounds ask for
// its mesh.
const prefetchSteps = 4

// loop emits the end of a round: return where a lane is slow (ySlow),
// else count the round down and jump back to loop while any is left;
// then the code's return.
func (b *laneBlock) loop(a *jit.Asm, loop int) {
	a.VPtest(ySlow, ySlow)
	exit := a.Jnz32(-1)
	a.DecMem64(jit.Mem{Base: rBlock, Disp: int32(8 * (b.arrays*b.L + 4*b.rounds))})
	a.Jnz32(loop)
	a.Patch32(exit, len(a.B))
	a.Vzeroupper()
	a.Ret()
}
