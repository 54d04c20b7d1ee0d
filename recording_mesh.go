package gradsolve

import "github.com/gradsolve/gradsolve/ivp"

// Mesh returns trajectory i's recorded mesh: the accepted steps'
// times, sizes and states at the current point (see ivp.Mesh), or nil
// for an index outside [0, N) or a trajectory that has none. It is the
// recording's own storage, for reading (other engines' recordings are
// compared with it); changing it changes what Gradient and Replay walk.
func (rec *Recording) Mesh(i int) *ivp.Mesh {
	if i < 0 || i >= len(rec.meshes) {
		return nil
	}
	return rec.meshes[i]
}
