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

// devArrays allocates device memory for each of the values' arrays (8
// bytes a value) and frees them all with free.
type devArrays struct {
	dev  *cuda.Device
	ptrs []cuda.Ptr
}

func (a *devArrays) alloc(words int) (cuda.Ptr, error) {
	p, err := a.dev.Alloc(8 * max(words, 1))
	if err == nil {
		a.ptrs = append(a.ptrs, p)
	}
	return p, err
}

func (a *devArrays) in(v []float64) (cuda.Ptr, error) {
	p, err := a.alloc(len(v))
	if err == nil && len(v) > 0 {
		err = cuda.CopyIn(a.dev, p, v)
	}
	return p, err
}

func (a *devArrays) free() {
	for _, p := range a.ptrs {
		a.dev.Free(p)
	}
	a.ptrs = nil
}

// Record runs a record kernel chunk by chunk, each chunk's copies and
// launch in turn on the default stream (no overlap: a recording is
// made once and replayed many times, and its meshes dominate the
// copies).
func (m *cudaModule) Record(k Kernel, s *Settings, b *Batch, ms *Meshes, chunk int, stop *atomic.Bool) (int, error) {
	fn, err := m.function(k.Name)
	if err != nil {
		return 0, err
	}
	chunk = max(1, min(chunk, b.N))
	dim, K, c1 := b.Dim, b.K, ms.Cap+1
	for lo := 0; lo < b.N; lo += chunk {
		if stop.Load() {
			return lo, nil
		}
		hi := min(lo+chunk, b.N)
		c, cm := b.Slice(lo, hi), ms.Slice(lo, hi)
		n := c.N
		if err := m.recordChunk(fn, k, s, c, cm, n, dim, K, c1); err != nil {
			return lo, err
		}
	}
	return b.N, nil
}

func (m *cudaModule) recordChunk(fn *cuda.Function, k Kernel, s *Settings, c *Batch, cm *Meshes, n, dim, K, c1 int) error {
	a := &devArrays{dev: m.dev}
	defer a.free()
	var rj RosJob
	ctl := s.Controller
	rj.Job = Job{N: int64(n), NSave: int64(K), SaveStride: int64(K), MaxSteps: int64(s.MaxSteps), HMax: s.HMax, H0: s.H0,
		Beta1: ctl.Beta1, Beta2: ctl.Beta2, Safety: ctl.Safety, QMin: ctl.QMin, QMax: ctl.QMax, QOldInit: ctl.QOldInit}
	if s.DenseSave {
		rj.DenseSave = 1
	}
	var err error
	for _, x := range []struct {
		p *cuda.Ptr
		v []float64
	}{{&rj.RTol, s.RTol}, {&rj.ATol, s.ATol}, {&rj.T0, c.T0}, {&rj.T1, c.T1}, {&rj.Y0, c.Y0}, {&rj.P, c.P}, {&rj.Save, c.Save}} {
		if *x.p, err = a.in(x.v); err != nil {
			return err
		}
	}
	for _, x := range []struct {
		p     *cuda.Ptr
		words int
	}{{&rj.Y, n * dim}, {&rj.T, n}, {&rj.H, n}, {&rj.Saved, n * K * dim}, {&rj.Status, n}, {&rj.Accepted, n},
		{&rj.Rejected, n}, {&rj.FEvals, n}, {&rj.JacEvals, n}, {&rj.LUs, n}} {
		if *x.p, err = a.alloc(x.words); err != nil {
			return err
		}
	}
	mesh := RosMesh{Cap: int64(cm.Cap)}
	for _, x := range []struct {
		p     *cuda.Ptr
		words int
	}{{&mesh.T, n * c1}, {&mesh.H, n * cm.Cap}, {&mesh.Y, n * c1 * dim}, {&mesh.Steps, n}} {
		if *x.p, err = a.alloc(x.words); err != nil {
			return err
		}
	}
	grid := uint32((n + Block - 1) / Block)
	if k.Family == ERK {
		ej := ERKRecordJob{Fwd: rj.Job, Cap: mesh.Cap, MeshT: mesh.T, MeshH: mesh.H, MeshY: mesh.Y, Steps: mesh.Steps}
		err = fn.Launch(grid, Block, unsafe.Pointer(&ej))
	} else {
		err = fn.Launch(grid, Block, unsafe.Pointer(&rj), unsafe.Pointer(&mesh))
	}
	if err != nil {
		return err
	}
	if err := m.dev.Synchronize(); err != nil {
		return err
	}
	for _, x := range []struct {
		dst []float64
		src cuda.Ptr
	}{{c.Y, rj.Y}, {c.T, rj.T}, {c.H, rj.H}, {c.Saved, rj.Saved}, {cm.T, mesh.T}, {cm.H, mesh.H}, {cm.Y, mesh.Y}} {
		if len(x.dst) > 0 {
			if err := cuda.CopyOut(m.dev, x.dst, x.src); err != nil {
				return err
			}
		}
	}
	for _, x := range []struct {
		dst []int64
		src cuda.Ptr
	}{{c.Status, rj.Status}, {c.Accepted, rj.Accepted}, {c.Rejected, rj.Rejected}, {c.FEvals, rj.FEvals},
		{c.JacEvals, rj.JacEvals}, {c.LUs, rj.LUs}, {cm.Steps, mesh.Steps}} {
		if k.Family == ERK && (x.src == rj.JacEvals || x.src == rj.LUs) {
			continue // the explicit kernels have no such counters
		}
		if err := cuda.CopyOut(m.dev, x.dst, x.src); err != nil {
			return err
		}
	}
	return nil
}

// Adjoint runs an adjoint kernel chunk by chunk on the default stream.
func (m *cudaModule) Adjoint(k Kernel, s *Settings, ab *AdjBatch, chunk int, stop *atomic.Bool) (int, error) {
	fn, err := m.function(k.Name)
	if err != nil {
		return 0, err
	}
	chunk = max(1, min(chunk, ab.N))
	for lo := 0; lo < ab.N; lo += chunk {
		if stop.Load() {
			return lo, nil
		}
		if err := m.adjointChunk(fn, k, s, ab.Slice(lo, min(lo+chunk, ab.N))); err != nil {
			return lo, err
		}
	}
	return ab.N, nil
}

func (m *cudaModule) adjointChunk(fn *cuda.Function, k Kernel, s *Settings, c *AdjBatch) error {
	a := &devArrays{dev: m.dev}
	defer a.free()
	n := c.N
	var rj RosJob
	rj.N, rj.NSave, rj.SaveStride = int64(n), int64(c.K), int64(c.K)
	if s.DenseSave {
		rj.DenseSave = 1
	}
	mesh := RosMesh{Cap: int64(c.Mesh.Cap)}
	var adj RosAdj
	var err error
	for _, x := range []struct {
		p *cuda.Ptr
		v []float64
	}{{&rj.P, c.P}, {&rj.Save, c.Save}, {&mesh.T, c.Mesh.T}, {&mesh.H, c.Mesh.H}, {&mesh.Y, c.Mesh.Y}, {&adj.CotY, c.CotY}} {
		if *x.p, err = a.in(x.v); err != nil {
			return err
		}
	}
	if mesh.Steps, err = a.alloc(n); err != nil {
		return err
	}
	if err := cuda.CopyIn(m.dev, mesh.Steps, c.Mesh.Steps); err != nil {
		return err
	}
	if c.CotSaved != nil {
		if adj.CotSaved, err = a.in(c.CotSaved); err != nil {
			return err
		}
	}
	for _, x := range []struct {
		p     *cuda.Ptr
		words int
	}{{&adj.GY0, len(c.GY0)}, {&adj.GP, len(c.GP)}, {&adj.Owner, n * c.K}} {
		if *x.p, err = a.alloc(x.words); err != nil {
			return err
		}
	}
	grid := uint32((n + Block - 1) / Block)
	if k.Family == ERK {
		// The engine hands the adjoint only successful recordings:
		// their statuses are Success.
		var status cuda.Ptr
		if status, err = a.alloc(n); err != nil {
			return err
		}
		ok := make([]int64, n)
		for i := range ok {
			ok[i] = int64(ode.Success)
		}
		if err := cuda.CopyIn(m.dev, status, ok); err != nil {
			return err
		}
		ej := ERKAdjointJob{N: rj.N, NSave: rj.NSave, SaveStride: rj.SaveStride, Cap: mesh.Cap, P: rj.P, Save: rj.Save,
			MeshT: mesh.T, MeshH: mesh.H, MeshY: mesh.Y, Steps: mesh.Steps, Status: status,
			CotY: adj.CotY, CotSaved: adj.CotSaved, GY0: adj.GY0, GP: adj.GP}
		err = fn.Launch(grid, Block, unsafe.Pointer(&ej))
	} else {
		err = fn.Launch(grid, Block, unsafe.Pointer(&rj), unsafe.Pointer(&mesh), unsafe.Pointer(&adj))
	}
	if err != nil {
		return err
	}
	if err := m.dev.Synchronize(); err != nil {
		return err
	}
	if err := cuda.CopyOut(m.dev, c.GY0, adj.GY0); err != nil {
		return err
	}
	if len(c.GP) > 0 {
		return cuda.CopyOut(m.dev, c.GP, adj.GP)
	}
	return nil
}
