package control

import (
	"math"
	"math/bits"
	"unsafe"

	"github.com/gradsolve/gradsolve/internal/jit"
)

// LaneStates is the memory of L trajectories' controllers side by side,
// as the SIMD lane engine holds them: State's fields for each lane,
// lane-major (value of lane l at [l]), with the rejected flag as a
// 64-bit mask (all ones: the lane's last attempt was rejected) that
// vector code can blend. Make it with NewLaneStates and reset a lane
// with (*PI).InitLane before the lane's trajectory starts.
type LaneStates struct {
	log2ErrOld, log2QOld []float64
	rejected             []uint64
	// io is the machine code's exchange with Go: the active lanes as
	// bits in, the accepted and the deferred lanes as bits out.
	io [6]uint64 // two triples: four lanes each
}

// NewLaneStates returns the controller states of lanes lanes (lanes ≥
// 1), each to be started with InitLane.
func NewLaneStates(lanes int) *LaneStates {
	return &LaneStates{
		log2ErrOld: make([]float64, lanes),
		log2QOld:   make([]float64, lanes),
		rejected:   make([]uint64, lanes),
	}
}

// Lanes returns the number of lanes of s.
func (s *LaneStates) Lanes() int { return len(s.rejected) }

// InitLane is Init for lane l of s.
func (c *PI) InitLane(s *LaneStates, l int) {
	var st State
	c.Init(&st)
	s.put(l, &st)
}

// lane and put move lane l's state to and from a State.
func (s *LaneStates) lane(l int) State {
	return State{log2ErrOld: s.log2ErrOld[l], log2QOld: s.log2QOld[l], rejected: s.rejected[l] != 0}
}

func (s *LaneStates) put(l int, st *State) {
	s.log2ErrOld[l], s.log2QOld[l] = st.log2ErrOld, st.log2QOld
	s.rejected[l] = 0
	if st.rejected {
		s.rejected[l] = ^uint64(0)
	}
}

// NextLanes is Next for the lanes of s: for every lane l with active[l]
// it sets accept[l] and factor[l] to what Next(err[l], lane l's State)
// returns and updates lane l's state as Next updates a State, bit for
// bit; the other lanes' accept, factor and state are left as they are.
// err, active, accept and factor hold (at least) s.Lanes() values. It
// allocates nothing.
//
// Where the processor has AVX2 (jit.HasAVX2: not with GRADSOLVE_JIT=off)
// and the lanes are a multiple of four, each four lanes are judged at
// once by machine code (see laneCode), which defers to Next the rare
// lanes whose arithmetic leaves its fast path; elsewhere, and for those
// lanes, it is Next itself, lane by lane.
func (c *PI) NextLanes(err []float64, s *LaneStates, active, accept []bool, factor []float64) {
	L := len(s.rejected)
	err, active, accept, factor = err[:L], active[:L], accept[:L], factor[:L]
	if L%4 == 0 && useLaneCode && c.laneCodeFits() {
		if entry := laneEntry(); entry != 0 {
			l0 := 0
			for ; l0+8 <= L; l0 += 8 { // eight lanes a call: the two fours' chains overlap
				c.nextCode(laneCode.entry8, 2, err, s, active, accept, factor, l0)
			}
			if l0 < L {
				c.nextCode(entry, 1, err, s, active, accept, factor, l0)
			}
			return
		}
	}
	for l := range L {
		if active[l] {
			c.nextLane(err, s, l, accept, factor)
		}
	}
}

// nextLane is Next for lane l alone: the Go form of NextLanes (the
// formula exists once, in Next).
func (c *PI) nextLane(err []float64, s *LaneStates, l int, accept []bool, factor []float64) {
	st := s.lane(l)
	accept[l], factor[l] = c.Next(err[l], &st)
	s.put(l, &st)
}

// laneCodeFits says the machine code gives Next's bits for every lane
// with this controller: Safety, QMin and QMax positive and finite (as
// gradsolve's Options require, and DefaultPI gives), so that the
// quotients and bounds the code compares are positive numbers (see
// laneCode). Other controllers run NextLanes in Go.
func (c *PI) laneCodeFits() bool {
	const top = math.MaxFloat64
	return c.Safety > 0 && c.Safety <= top && c.QMin > 0 && c.QMin <= top && c.QMax > 0 && c.QMax <= top
}

// nextCode judges lanes l0 … l0+4·groups−1 with the machine code of
// that many groups of four: the code writes the state and factor of each
// active lane it completes, and reports which lanes were accepted and
// which it deferred (which it left untouched); the deferred lanes then
// run Next here.
func (c *PI) nextCode(entry uintptr, groups int, err []float64, s *LaneStates, active, accept []bool, factor []float64, l0 int) {
	any := false
	for grp := range groups {
		var on uint64
		for i, a := range active[l0+4*grp : l0+4*grp+4] {
			if a {
				on |= 1 << i
			}
		}
		s.io[3*grp] = on
		any = any || on != 0
	}
	if !any {
		return
	}
	args := [8]unsafe.Pointer{
		unsafe.Pointer(&err[l0]), unsafe.Pointer(&s.log2ErrOld[l0]), unsafe.Pointer(&s.log2QOld[l0]),
		unsafe.Pointer(&s.rejected[l0]), unsafe.Pointer(&factor[l0]), unsafe.Pointer(&s.io[0]),
		unsafe.Pointer(c), unsafe.Pointer(&laneConsts[0]),
	}
	jit.Call(entry, &args)
	for grp := range groups {
		g0 := l0 + 4*grp
		on, acc, slow := s.io[3*grp], s.io[3*grp+1], s.io[3*grp+2]
		done := on &^ slow
		acpt := accept[g0 : g0+4]
		for i := range acpt {
			if done>>i&1 != 0 {
				acpt[i] = acc>>i&1 != 0
			}
		}
		for slow != 0 {
			i := bits.TrailingZeros64(slow)
			slow &= slow - 1
			c.nextLane(err, s, g0+i, accept, factor)
		}
	}
}

// NextLane is Next for lane l of s alone: accept[l] and factor[l] get
// what Next(err[l], lane l's State) returns, and lane l's state is
// updated as Next updates a State. The lane engine's machine code (see
// EmitNextLanes) leaves to it the lanes it defers.
func (c *PI) NextLane(err []float64, s *LaneStates, l int, accept []bool, factor []float64) {
	c.nextLane(err, s, l, accept, factor)
}

// LaneCodeFits says whether EmitNextLanes gives Next's bits for every
// lane with this controller (AVX2, and Safety, QMin and QMax positive
// and finite, as NextLanes requires for its machine code).
func (c *PI) LaneCodeFits() bool { return useLaneCode && c.laneCodeFits() }

// LaneArrays returns the lanes' controller state as the machine code of
// EmitNextLanes reads and writes it: log₂ of the previous accepted
// error, log₂ of the previous accepted factor's bound, and the rejected
// flags as 64-bit masks, one value per lane.
func (s *LaneStates) LaneArrays() (log2ErrOld, log2QOld []float64, rejected []uint64) {
	return s.log2ErrOld, s.log2QOld, s.rejected
}

// LaneConsts returns the address of the constants that the code of
// EmitNextLanes reads through CX. They live as long as the process.
func LaneConsts() unsafe.Pointer { return unsafe.Pointer(&laneConsts[0]) }

// EmitNextLanes appends to a the machine code that judges four lanes as
// NextLanes does, for a code that runs it inline instead of calling
// NextLanes (the lane engine's whole rounds). It expects DI at the four
// error norms, SI, DX and R8 at the lanes' log2ErrOld, log2QOld and
// rejected values (LaneArrays), R9 at their factors, R10 at three
// 64-bit words — the active lanes as bits 0–3 in, the accepted lanes
// and the deferred lanes as bits out —, R11 at the *PI and CX at
// LaneConsts(). It writes the state and factor of every active lane it
// completes, and leaves the deferred lanes (the rare ones off its fast
// path, see laneCode) untouched, for NextLane. It clobbers AX and every
// vector register, and uses no stack, no jumps and no RIP-relative
// operand. Only where c.LaneCodeFits() are its lanes Next's bits.
func EmitNextLanes(a *jit.Asm) {
	g := laneGen{a: *a}
	g.body()
	*a = g.a
}
