package gpu

import (
	"sync/atomic"
	"unsafe"

	"github.com/gradsolve/gradsolve/internal/cuda"
	"github.com/gradsolve/gradsolve/ode"
)

// RosMesh is gs_ros_mesh: the room for steps (cap) and the device
// addresses of the meshes' times, step sizes, states and step counts.
type RosMesh struct {
	Cap            int64
	T, H, Y, Steps cuda.Ptr
}

// RosAdj is gs_ros_adj: the device addresses of the cotangents of the
// final and saved states (CotSaved 0 for none), of ∂L/∂y0 and ∂L/∂p,
// and of the scratch of save-time owners.
type RosAdj struct {
	CotY, CotSaved, GY0, GP, Owner cuda.Ptr
}

// ERKRecordJob is gs_erk_record_job, an explicit record kernel's one
// parameter: the forward job, the room for steps (cap) and the device
// addresses of the meshes' times, step sizes, states and step counts
// (−1 where the room ran out).
type ERKRecordJob struct {
	Fwd                        Job
	Cap                        int64
	MeshT, MeshH, MeshY, Steps cuda.Ptr
}

// ERKAdjointJob is gs_erk_adjoint_job, an explicit adjoint kernel's one
// parameter: the sizes, then the device addresses of the parameters,
// save times, meshes, step counts and statuses of the recordings, the
// cotangents of the final and saved states (CotSaved 0 for none), and
// the room for ∂L/∂y0 and ∂L/∂p.
type ERKAdjointJob struct {
	N, NSave, SaveStride, Cap                   int64
	P, Save, MeshT, MeshH, MeshY, Steps, Status cuda.Ptr
	CotY, CotSaved, GY0, GP                     cuda.Ptr
}

// Record runs a record kernel's chunks on the two streams as Run runs
// a forward kernel's (pipeline): each lane's buffers hold a chunk's
// inputs (those of the forward kernel) and its outputs (the forward
// results, then the meshes' times, step sizes, states and step
// counts: recordWords), so one chunk's meshes are copied back while
// the next chunk's kernel runs.
func (m *cudaModule) Record(k Kernel, s *Settings, b *Batch, ms *Meshes, chunk int, stop *atomic.Bool) (int, error) {
	fn, err := m.function(k.Name)
	if err != nil {
		return 0, err
	}
	tol, err := m.tolerances(s, false)
	if err != nil {
		return 0, err
	}
	defer m.dev.Free(tol)
	nc, dim, capa := counters(k.Family), b.Dim, ms.Cap
	in, out := recordWords(k.Family, dim, b.NP, b.K, capa)
	j := &chunkJob{fn: fn, n: b.N, in: in, out: out}
	j.pack = func(l *lane, lo, hi int) (int, int, []unsafe.Pointer) {
		rj, in, w := packForward(l, s, b.Slice(lo, hi), tol, nc)
		n, c1 := hi-lo, capa+1
		mesh := &RosMesh{Cap: int64(capa)}
		for _, a := range []struct {
			p     *cuda.Ptr
			words int
		}{{&mesh.T, n * c1}, {&mesh.H, n * capa}, {&mesh.Y, n * c1 * dim}, {&mesh.Steps, n}} {
			*a.p = at(l.devOut, w)
			w += a.words
		}
		if k.Family == ERK {
			ej := &ERKRecordJob{Fwd: rj.Job, Cap: mesh.Cap, MeshT: mesh.T, MeshH: mesh.H, MeshY: mesh.Y, Steps: mesh.Steps}
			return 8 * in, 8 * w, []unsafe.Pointer{unsafe.Pointer(ej)}
		}
		return 8 * in, 8 * w, []unsafe.Pointer{unsafe.Pointer(rj), unsafe.Pointer(mesh)}
	}
	j.unpack = func(l *lane, lo, hi int) {
		cm := ms.Slice(lo, hi)
		o := unpackForward(l, b.Slice(lo, hi), nc)
		f := l.pinOut.Float64s()
		for _, dst := range [][]float64{cm.T, cm.H, cm.Y} {
			o += copy(dst, f[o:o+len(dst)])
		}
		copy(cm.Steps, l.pinOut.Int64s()[o:o+len(cm.Steps)])
	}
	return m.pipeline(j, chunk, stop)
}

// Adjoint runs an adjoint kernel's chunks on the two streams
// (pipeline): each lane's buffers hold a chunk's inputs (parameters,
// save times, meshes, cotangents, step counts and, for the explicit
// kernels, statuses) and its outputs (∂L/∂y0, ∂L/∂p and, for the
// Rosenbrock kernels, the save times' owners, which stay on the
// device): adjointWords.
func (m *cudaModule) Adjoint(k Kernel, s *Settings, ab *AdjBatch, chunk int, stop *atomic.Bool) (int, error) {
	fn, err := m.function(k.Name)
	if err != nil {
		return 0, err
	}
	dim, np, K, capa := ab.Dim, ab.NP, ab.K, ab.Mesh.Cap
	in, out := adjointWords(k.Family, dim, np, K, capa, ab.CotSaved != nil)
	j := &chunkJob{fn: fn, n: ab.N, in: in, out: out}
	j.pack = func(l *lane, lo, hi int) (int, int, []unsafe.Pointer) {
		c := ab.Slice(lo, hi)
		n := c.N
		f, iv := l.pinIn.Float64s(), l.pinIn.Int64s()
		w := 0
		put := func(p *cuda.Ptr, v []float64) {
			*p = at(l.devIn, w)
			w += copy(f[w:], v)
		}
		rj := &RosJob{}
		rj.N, rj.NSave, rj.SaveStride = int64(n), int64(K), int64(K)
		if s.DenseSave {
			rj.DenseSave = 1
		}
		mesh := &RosMesh{Cap: int64(capa)}
		adj := &RosAdj{}
		put(&rj.P, c.P)
		put(&rj.Save, c.Save)
		put(&mesh.T, c.Mesh.T)
		put(&mesh.H, c.Mesh.H)
		put(&mesh.Y, c.Mesh.Y)
		put(&adj.CotY, c.CotY)
		if c.CotSaved != nil {
			put(&adj.CotSaved, c.CotSaved)
		}
		mesh.Steps = at(l.devIn, w)
		w += copy(iv[w:], c.Mesh.Steps)
		var status cuda.Ptr
		if k.Family == ERK {
			// The engine hands the adjoint only successful
			// recordings: their statuses are Success.
			status = at(l.devIn, w)
			for i := range n {
				iv[w+i] = int64(ode.Success)
			}
			w += n
		}
		adj.GY0, adj.GP = l.devOut, at(l.devOut, n*dim)
		back := 8 * (n*dim + n*np)
		if k.Family == ERK {
			ej := &ERKAdjointJob{N: rj.N, NSave: rj.NSave, SaveStride: rj.SaveStride, Cap: mesh.Cap, P: rj.P, Save: rj.Save,
				MeshT: mesh.T, MeshH: mesh.H, MeshY: mesh.Y, Steps: mesh.Steps, Status: status,
				CotY: adj.CotY, CotSaved: adj.CotSaved, GY0: adj.GY0, GP: adj.GP}
			return 8 * w, back, []unsafe.Pointer{unsafe.Pointer(ej)}
		}
		adj.Owner = at(l.devOut, n*dim+n*np) // scratch: not copied back
		return 8 * w, back, []unsafe.Pointer{unsafe.Pointer(rj), unsafe.Pointer(mesh), unsafe.Pointer(adj)}
	}
	j.unpack = func(l *lane, lo, hi int) {
		c := ab.Slice(lo, hi)
		f := l.pinOut.Float64s()
		copy(c.GY0, f[:len(c.GY0)])
		copy(c.GP, f[len(c.GY0):len(c.GY0)+len(c.GP)])
	}
	return m.pipeline(j, chunk, stop)
}
