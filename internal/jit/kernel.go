package jit

// LaneKernel is a right-hand side's lane code (four trajectories per
// 256-bit register, lane-major blocks) as straight-line machine code
// that other generated code copies into its own, so that a whole step
// attempt of the lane engine runs as one function without calls in
// between. Body:
//
//   - reads the addresses of its blocks from DI (the register file,
//     whose first four values hold the lanes' times), SI (y) and DX
//     (p), and writes every output, lane-major, to [R11];
//   - clobbers R12 and every vector register, and no other general
//     register (BX, R13 and the rest keep their values);
//   - has no branches, no RIP-relative operands and no stack use, so
//     it runs the same wherever it is copied;
//   - ends without vzeroupper or ret.
type LaneKernel struct {
	Body []byte
	// Registers returns a fresh register file for Body, with its
	// constants loaded: one per goroutine.
	Registers func() []float64
}
