package ivp

// Mesh is the record of one trajectory's accepted steps: step k went
// from T[k] to T[k+1] with step size H[k], and Y holds the state at
// every T[k], row-major (len(T) rows of Dim values). T[0] is t0 and
// the last T is the time reached (t1 on success). H[k] is the step the
// solver took, kept as such: T[k+1] − T[k] may differ from it in the
// last bit, and the last step lands on t1 exactly.
//
// A checkpointed mesh (Checkpoint = c ≥ 2) keeps the states and times
// at the checkpoints only, steps 0, c, 2c, …: row j of Y is the state
// at step j·c (State) and T[j] its time, ⌊Steps()/c⌋ + 1 of each; H
// still holds every step, and End the time reached. The times in
// between are the recording solve's sums, t_{k+1} = t_k + H[k] (the
// last step's end is End), which the walks form again (Times), and the
// states in between are recomputed from the checkpoint before them
// with the recorded step sizes (Walk.Forward, Walk.Reverse).
type Mesh struct {
	T, H, Y []float64
	// Checkpoint is the interval, in steps, of the states and times the
	// mesh keeps: 0 or 1, every one; c ≥ 2, every c-th (see above).
	// Set it before the mesh is filled (Reset keeps it).
	Checkpoint int
	// End is the time reached, the end of the last step (T's last on a
	// mesh that keeps every time). Push and Reset keep it.
	End float64
	// K, when KeepStages is set, holds the stages k_0 … k_lastB of every
	// accepted step (lastB: the last stage with a nonzero weight in b),
	// Stages()·Dim values per step, so that the reverse sweep rebuilds the
	// stage inputs without evaluating f again.
	K []float64
	// KeepStages asks Solve (and Replayer.Forward) to fill K.
	KeepStages bool
	// Grow, when not nil, is asked before the mesh allocates storage
	// for more steps, with the size of the new storage in bytes (the
	// storage it replaces becomes garbage). Returning false refuses:
	// the step is not recorded and the solve ends with status
	// Cancelled. Storage grows geometrically, so Grow is called about
	// log₂(steps) times per slice over a trajectory and never once a
	// reused Mesh has room for it: the hook costs nothing per step.
	Grow func(bytes uint64) bool
}

// minCap is the smallest capacity, in float64s, a mesh's slice grows to.
const minCap = 64

// Steps returns the number of accepted steps.
func (ms *Mesh) Steps() int { return len(ms.H) }

// Every returns the interval, in steps, of the states Y holds: 1 for
// a mesh that keeps every state, else Checkpoint.
func (ms *Mesh) Every() int { return max(ms.Checkpoint, 1) }

// State returns the state at the start of step k (a view into Y). Row
// k/Every() of Y holds it, so k must be a multiple of Every().
func (ms *Mesh) State(k, dim int) []float64 {
	j := k / ms.Every()
	return ms.Y[j*dim : (j+1)*dim]
}

// Times returns the times of steps a … b (b − a + 1 values: the start
// of step a to the end of step b − 1), a a multiple of Every(): a view
// of T on a mesh that keeps every time, else formed into dst (reused
// when large enough) as the recording solve formed them, from T's
// checkpoint at a: t_{k+1} = t_k + H[k], and End at the last step's end.
func (ms *Mesh) Times(a, b int, dst []float64) []float64 {
	c := ms.Every()
	if c == 1 {
		return ms.T[a : b+1]
	}
	if cap(dst) < b-a+1 {
		dst = make([]float64, b-a+1)
	}
	dst = dst[:b-a+1]
	t := ms.T[a/c]
	dst[0] = t
	for k := a; k < b; k++ {
		t = ms.next(k, t)
		dst[k-a+1] = t
	}
	return dst
}

// next returns the time at the end of step k, which starts at t.
func (ms *Mesh) next(k int, t float64) float64 {
	switch {
	case ms.Checkpoint <= 1:
		return ms.T[k+1]
	case k+1 == len(ms.H):
		return ms.End
	}
	return t + ms.H[k]
}

// Bytes returns the size in bytes of the mesh's steps (of their
// lengths, not capacities): what Clone allocates.
func (ms *Mesh) Bytes() uint64 {
	return 8 * uint64(len(ms.T)+len(ms.H)+len(ms.Y)+len(ms.K))
}

// Clone returns a copy with its own storage, trimmed to size, without
// the Grow hook.
func (ms *Mesh) Clone() *Mesh {
	return &Mesh{
		T: append([]float64(nil), ms.T...),
		H: append([]float64(nil), ms.H...),
		Y: append([]float64(nil), ms.Y...),
		K: append([]float64(nil), ms.K...),

		Checkpoint: ms.Checkpoint,
		KeepStages: ms.KeepStages,
		End:        ms.End,
	}
}

// Reset empties the mesh and starts it at (t0, y0).
func (ms *Mesh) Reset(t0 float64, y0 []float64) {
	ms.T = append(ms.T[:0], t0)
	ms.End = t0
	ms.H = ms.H[:0]
	ms.Y = append(ms.Y[:0], y0...)
	ms.K = ms.K[:0]
}

// PushStages appends the stages of an accepted step; false when the
// mesh could not grow (see Grow).
func (ms *Mesh) PushStages(k [][]float64) bool {
	if n := len(k) * len(k[0]); len(ms.K)+n > cap(ms.K) {
		var ok bool
		if ms.K, ok = ms.grow(ms.K, n); !ok {
			return false
		}
	}
	for _, ki := range k {
		ms.K = append(ms.K, ki...)
	}
	return true
}

// Push records an accepted step of size h that ended at (t, y); a
// checkpointed mesh keeps t and y only when the step's number (Steps(),
// once pushed) is a multiple of Checkpoint. It returns false, recording
// nothing, when the mesh must grow and Grow refuses.
func (ms *Mesh) Push(h, t float64, y []float64) bool {
	keep := ms.Checkpoint <= 1 || (len(ms.H)+1)%ms.Checkpoint == 0
	ny, nt := 0, 0
	if keep {
		ny, nt = len(y), 1
	}
	if len(ms.H) == cap(ms.H) || len(ms.T)+nt > cap(ms.T) || len(ms.Y)+ny > cap(ms.Y) {
		var okH, okT, okY bool
		ms.H, okH = ms.grow(ms.H, 1)
		ms.T, okT = ms.grow(ms.T, nt)
		ms.Y, okY = ms.grow(ms.Y, ny)
		if !okH || !okT || !okY {
			return false
		}
	}
	ms.H = append(ms.H, h)
	ms.End = t
	if keep {
		ms.T = append(ms.T, t)
		ms.Y = append(ms.Y, y...)
	}
	return true
}

// grow returns s with room for n more values: s itself when it has the
// room, else a copy in storage of twice the capacity (at least minCap,
// and at least what is needed), once Grow, if set, agrees. ok is false
// when Grow refuses; s is then returned unchanged.
func (ms *Mesh) grow(s []float64, n int) (_ []float64, ok bool) {
	need := len(s) + n
	if need <= cap(s) {
		return s, true
	}
	c := max(2*cap(s), need, minCap)
	if ms.Grow != nil && !ms.Grow(8*uint64(c)) {
		return s, false
	}
	g := make([]float64, len(s), c)
	copy(g, s)
	return g, true
}

// Unreached is SaveOwners' owner of a save time past the mesh's last
// step (a trajectory that failed before reaching it): no step computed
// its state, so a reverse walk gives its cotangent to nothing.
const Unreached = -2

// SaveOwners returns, for each save time (ordered in the direction of
// integration), the step whose interval (T[k], T[k+1]] holds it, −1
// for a save at T[0], or Unreached for one beyond the mesh: the
// assignment the solve made when it computed them. It reuses owner's
// storage when large enough.
func (ms *Mesh) SaveOwners(save []float64, owner []int) []int {
	if cap(owner) < len(save) {
		owner = make([]int, len(save))
	}
	owner = owner[:len(save)]
	isave := 0
	t := ms.T[0]
	for isave < len(save) && save[isave] == t {
		owner[isave] = -1
		isave++
	}
	for step := range ms.H {
		if isave == len(save) {
			break // every save time has its owner: the rest of the mesh holds none
		}
		tn := ms.next(step, t)
		dir := 1.0
		if tn < t {
			dir = -1
		}
		for isave < len(save) && dir*(save[isave]-tn) <= 0 {
			owner[isave] = step
			isave++
		}
		t = tn
	}
	for ; isave < len(save); isave++ {
		owner[isave] = Unreached
	}
	return owner
}

// lastReached returns the index of the last save time whose owner
// (SaveOwners) is not Unreached, or −1: where a reverse walk starts.
func lastReached(owner []int) int {
	next := len(owner) - 1
	for next >= 0 && owner[next] == Unreached {
		next--
	}
	return next
}
