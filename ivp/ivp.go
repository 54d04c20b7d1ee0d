// Package ivp holds what every engine shares about one trajectory's
// solve: its data (Trajectory), its results (Output), the record of its
// accepted steps (Mesh), the adaptive loop (Solve, driving a method
// family's Stepper) and the walks over a recorded mesh (Forward, and
// the reverse walk of the discrete adjoint, Walk.Reverse).
package ivp

import "github.com/gradsolve/gradsolve/ode"

// Trajectory is one trajectory's data.
type Trajectory struct {
	// T0 and T1 bound the span; T1 < T0 integrates backwards. T1 ≠ T0.
	T0, T1 float64
	// Y0 is the initial state (length Dim), P the parameters.
	Y0, P []float64
	// Save lists times at which to record the state, ordered in the
	// direction of integration and inside [T0, T1]. The caller checks.
	Save []float64
}

// Output receives a trajectory's results. Y (length Dim) and Saved
// (length len(Save)·Dim, row i for Save[i]) are caller-owned.
type Output struct {
	Y     []float64
	Saved []float64
	// Mesh, when not nil, receives the accepted steps (see Mesh); its
	// slices are reused, so a Mesh kept per worker stops allocating once
	// it has grown to the longest trajectory. When its Grow hook
	// refuses to let it grow, the solve ends with status Cancelled.
	Mesh *Mesh
	// T is the time reached: T1 on success, else the end of the last
	// accepted step. H is the last step size tried (signed).
	T, H   float64
	Stats  ode.Stats
	Status ode.Status
}
