package gpu

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gradsolve/gradsolve/internal/cuda"
	"github.com/gradsolve/gradsolve/sym/emitcuda"
)

// CUDA is the backend of the CUDA driver's devices (package
// internal/cuda: libcuda and NVRTC through purego).
type CUDA struct {
	// Opts names the libraries (the zero value: the system's).
	Opts cuda.Options

	once  sync.Once
	drv   *cuda.Driver
	count int
	err   error

	mu   sync.Mutex
	devs map[int]*cudaDevice
}

// Name returns "CUDA".
func (c *CUDA) Name() string { return "CUDA" }

// Float32 returns nil: the CUDA backend runs the float32 kernels of
// both families (Float32Backend), packing their float inputs and
// unpacking their float results (pack32, unpack32; gs_ros_job_f32 is
// gs_erk_job_f32 with gs_ros_job's three fields after it). The
// self-test checks float64 bits only: a device's float32 results are
// not checked.
func (c *CUDA) Float32() error { return nil }

// Devices opens the driver and NVRTC (once) and returns the number of
// devices; where the driver, a device or NVRTC is missing, an error
// wrapping cuda.ErrUnavailable that says which.
func (c *CUDA) Devices() (int, error) {
	c.once.Do(func() {
		d, err := cuda.Open(c.Opts)
		if err != nil {
			c.err = err
			return
		}
		n, err := d.DeviceCount()
		switch {
		case err != nil:
			c.err = fmt.Errorf("%w: %w", cuda.ErrUnavailable, err)
			return
		case n == 0:
			c.err = fmt.Errorf("%w: no CUDA device", cuda.ErrUnavailable)
			return
		}
		if err := d.NVRTC(); err != nil {
			c.err = err
			return
		}
		c.drv, c.count, c.devs = d, n, map[int]*cudaDevice{}
	})
	return c.count, c.err
}

// Open returns device n with its primary context retained (once).
func (c *CUDA) Open(n int) (Device, error) {
	if _, err := c.Devices(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.devs[n]; ok {
		return d, nil
	}
	dev, err := c.drv.Device(n)
	if err != nil {
		return nil, err
	}
	d := &cudaDevice{dev: dev, mods: map[*cuda.Module]*cudaModule{}}
	c.devs[n] = d
	return d, nil
}

type cudaDevice struct {
	dev  *cuda.Device
	mu   sync.Mutex
	mods map[*cuda.Module]*cudaModule // one per loaded module (cuda caches them per source hash)
}

// Memory returns half the device's free memory: the two streams'
// buffers of a batch share it.
func (d *cudaDevice) Memory() (int64, error) {
	free, _, err := d.dev.MemInfo()
	return free / 2, err
}

// Load compiles src with NVRTC and loads it (cached per source hash).
func (d *cudaDevice) Load(src *emitcuda.Source) (Module, error) {
	mod, err := d.dev.Module(string(src.Code), src.Model+".cu")
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if m, ok := d.mods[mod]; ok {
		return m, nil
	}
	m := &cudaModule{dev: d.dev, mod: mod, fns: map[string]*cuda.Function{}}
	d.mods[mod] = m
	return m, nil
}

type cudaModule struct {
	dev  *cuda.Device
	mod  *cuda.Module
	mu   sync.Mutex
	fns  map[string]*cuda.Function
	idle []*lane // buffers and streams of earlier runs, for reuse
	// issued, where set (by tests), is called after each chunk's
	// copies and launch are queued.
	issued func(lo, hi int)
}

func (m *cudaModule) function(name string) (*cuda.Function, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if f, ok := m.fns[name]; ok {
		return f, nil
	}
	f, err := m.mod.Function(name)
	if err != nil {
		return nil, err
	}
	m.fns[name] = f
	return f, nil
}

// Job is the argument of a generated kernel, gs_erk_job of
// sym/emitcuda's erk.cuh, field for field: 8-byte fields only, so the
// layouts agree without padding (TestJobLayout checks it against the C
// struct compiled by the host compiler). The pointers are device
// addresses.
type Job struct {
	N, NSave, SaveStride, MaxSteps             int64
	HMax, H0                                   float64
	Beta1, Beta2, Safety, QMin, QMax, QOldInit float64
	RTol, ATol, T0, T1, Y0, P, Save            cuda.Ptr
	Y, T, H, Saved                             cuda.Ptr
	Status, Accepted, Rejected, FEvals         cuda.Ptr
}

// RosJob is the argument of a generated Rosenbrock kernel, gs_ros_job
// of sym/emitcuda's ros.cuh: Job's fields, then dense_save, jac_evals
// and lus (TestRosJobLayout checks it against the C struct).
type RosJob struct {
	Job
	DenseSave     int64
	JacEvals, LUs cuda.Ptr
}

// Block is the number of threads per block of a launch.
const Block = 128

// lane is one of the two streams of a run with its buffers: the chunk's
// inputs and outputs in page-locked host memory and on the device, one
// contiguous region each (every value is 8 bytes), and the chunk in
// flight on it.
type lane struct {
	st            *cuda.Stream
	pinIn, pinOut *cuda.HostMem
	devIn, devOut cuda.Ptr
	inCap, outCap int // bytes of the input and output buffers
	pending       bool
	lo, hi        int // the chunk in flight
}

// acquire returns a lane with buffers of at least in and out bytes: an
// idle one of the module's (the buffers of an earlier run, so that a
// solve of many batches allocates its page-locked and device memory
// once), else a new one — freeing first an idle lane too small for
// the run (a record lane has a small input and a large output region,
// an adjoint lane the other way), so that a module that alternates
// between kinds of launch holds two lanes, not four.
func (m *cudaModule) acquire(in, out int) (*lane, error) {
	m.mu.Lock()
	for i, l := range m.idle {
		if l.inCap >= in && l.outCap >= out {
			m.idle = append(m.idle[:i], m.idle[i+1:]...)
			m.mu.Unlock()
			l.pending = false
			return l, nil
		}
	}
	var unfit *lane
	if len(m.idle) > 0 {
		unfit, m.idle = m.idle[0], m.idle[1:]
	}
	m.mu.Unlock()
	if unfit != nil {
		m.free(unfit)
	}
	l := &lane{inCap: in, outCap: out}
	var err error
	if l.st, err = m.dev.NewStream(); err == nil {
		if l.pinIn, err = m.dev.AllocHost(in); err == nil {
			if l.pinOut, err = m.dev.AllocHost(out); err == nil {
				if l.devIn, err = m.dev.Alloc(in); err == nil {
					l.devOut, err = m.dev.Alloc(out)
				}
			}
		}
	}
	if err != nil {
		m.free(l)
		return nil, err
	}
	return l, nil
}

// maxIdle is the most idle lanes a module keeps: one run's two.
const maxIdle = 2

// release waits for the lane's stream and keeps the lane for a later
// run where the run succeeded (in place of a smaller idle lane when
// maxIdle are kept already), or frees it.
func (m *cudaModule) release(l *lane, reuse bool) {
	if l.st != nil && l.st.Synchronize() != nil {
		reuse = false
	}
	m.mu.Lock()
	if reuse && len(m.idle) < maxIdle {
		m.idle = append(m.idle, l)
		m.mu.Unlock()
		return
	}
	if reuse {
		// Keep the larger buffers: they serve the smaller runs too.
		small := 0
		for i, o := range m.idle {
			if o.inCap+o.outCap < m.idle[small].inCap+m.idle[small].outCap {
				small = i
			}
		}
		if o := m.idle[small]; o.inCap+o.outCap < l.inCap+l.outCap {
			m.idle[small], l = l, o
		}
	}
	m.mu.Unlock()
	m.free(l)
}

// free frees a lane's stream and buffers.
func (m *cudaModule) free(l *lane) {
	if l.st != nil {
		l.st.Destroy()
	}
	for _, h := range []*cuda.HostMem{l.pinIn, l.pinOut} {
		if h != nil {
			h.Free()
		}
	}
	for _, p := range []cuda.Ptr{l.devIn, l.devOut} {
		if p != 0 {
			m.dev.Free(p)
		}
	}
}

// chunkJob is one kind of chunked launch on the two-stream pipeline
// (cudaModule.pipeline): a forward kernel's (Run), a record kernel's
// (Record) or an adjoint kernel's (Adjoint). Every value in a lane's
// buffers is 8 bytes (a float32 kernel's floats take less room than
// their words: pack32).
type chunkJob struct {
	fn *cuda.Function
	// n is the number of trajectories; in and out the 8-byte words of
	// one trajectory's inputs and outputs in a lane's buffers (its
	// page-locked and its device memory).
	n, in, out int
	// pack writes trajectories [lo, hi)'s inputs into l.pinIn and
	// returns the bytes of them to copy to l.devIn, the bytes of
	// results to copy back from l.devOut, and the kernel's parameters
	// (each a pointer to a job struct whose device addresses lie in
	// l.devIn, l.devOut and the launch's shared arrays).
	pack func(l *lane, lo, hi int) (in, out int, args []unsafe.Pointer)
	// unpack copies trajectories [lo, hi)'s results from l.pinOut to
	// the host's arrays, once the lane's stream has finished.
	unpack func(l *lane, lo, hi int)
}

// chunkError is a failure of the pipeline's step what on the chunk
// [lo, hi) of kernel name: the driver's error, then what failed.
func chunkError(err error, what, name string, lo, hi int) error {
	return fmt.Errorf("%w (%s the chunk of trajectories [%d, %d) of %s)", err, what, lo, hi, name)
}

// pipeline runs job j's chunks alternately on two streams: chunk q on
// lane q mod 2, whose stream queues the copy of its inputs to the
// device, the kernel and the copy of its results back; while one
// stream's kernel runs the host packs the next chunk and queues it on
// the other, and a lane's results are unpacked when the lane is next
// needed (or at the end, in order). It polls stop before each chunk.
// It returns how many trajectories, a prefix, have their results
// unpacked; an error names the step, the chunk and the kernel, and the
// lanes of a failed run are freed (those of a run that succeeded are
// kept for the next: acquire, release).
func (m *cudaModule) pipeline(j *chunkJob, chunk int, stop *atomic.Bool) (done int, err error) {
	if j.n == 0 {
		return 0, nil
	}
	chunk = max(1, min(chunk, j.n))
	var lanes [2]*lane
	defer func() {
		for _, l := range lanes {
			if l != nil {
				m.release(l, err == nil)
			}
		}
	}()
	nl := 1
	if j.n > chunk {
		nl = 2
	}
	for i := range nl {
		if lanes[i], err = m.acquire(8*chunk*j.in, 8*chunk*j.out); err != nil {
			return 0, chunkError(err, "allocating a lane for", j.fn.Name(), 0, min(chunk, j.n))
		}
	}
	// finish waits for lane l's chunk and unpacks its results.
	finish := func(l *lane) error {
		if !l.pending {
			return nil
		}
		l.pending = false
		if err := l.st.Synchronize(); err != nil {
			return chunkError(err, "waiting for", j.fn.Name(), l.lo, l.hi)
		}
		j.unpack(l, l.lo, l.hi)
		done = l.hi
		return nil
	}
	for q, lo := 0, 0; lo < j.n; q, lo = q+1, lo+chunk {
		l := lanes[q%nl]
		if err := finish(l); err != nil {
			return done, err
		}
		if stop.Load() {
			break
		}
		hi := min(lo+chunk, j.n)
		in, out, args := j.pack(l, lo, hi)
		if err := l.st.CopyIn(l.devIn, l.pinIn, 0, in); err != nil {
			return done, chunkError(err, "copying in", j.fn.Name(), lo, hi)
		}
		grid := uint32((hi - lo + Block - 1) / Block)
		if err := j.fn.LaunchOn(l.st, grid, Block, args...); err != nil {
			return done, chunkError(err, "launching", j.fn.Name(), lo, hi)
		}
		if err := l.st.CopyOut(l.pinOut, 0, l.devOut, out); err != nil {
			return done, chunkError(err, "copying out", j.fn.Name(), lo, hi)
		}
		l.pending, l.lo, l.hi = true, lo, hi
		if m.issued != nil {
			m.issued(lo, hi)
		}
	}
	// The chunks still in flight, in order.
	first := 0
	if nl == 2 && lanes[1].pending && (!lanes[0].pending || lanes[1].lo < lanes[0].lo) {
		first = 1
	}
	for i := range nl {
		if err := finish(lanes[(first+i)%nl]); err != nil {
			return done, err
		}
	}
	return done, nil
}

// tolerances allocates the device copy of the tolerances rtol then
// atol, shared by a launch's chunks (as floats for a float32 kernel);
// the caller frees it.
func (m *cudaModule) tolerances(s *Settings, f32 bool) (cuda.Ptr, error) {
	nd := len(s.RTol)
	tol, err := m.dev.Alloc(8 * max(2*nd, 1))
	if err != nil {
		return 0, err
	}
	v := append(append([]float64(nil), s.RTol...), s.ATol...)
	if f32 {
		v32 := make([]float32, len(v))
		for i, x := range v {
			v32[i] = float32(x)
		}
		err = cuda.CopyIn(m.dev, tol, v32)
	} else {
		err = cuda.CopyIn(m.dev, tol, v)
	}
	if err != nil {
		m.dev.Free(tol)
		return 0, err
	}
	return tol, nil
}

// counters returns the number of per-trajectory counters of a kernel
// family's job: status, accepted, rejected, f evaluations, and for the
// Rosenbrock kernels Jacobian evaluations and LUs.
func counters(f Family) int {
	if f == ROS {
		return 6
	}
	return 4
}

// forwardIn and forwardOut are the 8-byte words of one trajectory's
// inputs (t0, t1, y0, p, save) and outputs (y, t, h, saved, the
// counters) of a forward kernel of state dim with np parameters, k
// save times and nc counters.
func forwardIn(dim, np, k int) int  { return 2 + dim + np + k }
func forwardOut(dim, k, nc int) int { return dim + 2 + k*dim + nc }

// at returns the device address words 8-byte values past base.
func at(base cuda.Ptr, words int) cuda.Ptr { return base + cuda.Ptr(8*words) }

// packForward writes chunk c's inputs (t0, t1, y0, p, save) at the
// start of l.pinIn and returns the job of the chunk (its inputs at the
// start of l.devIn, its outputs y, t, h, saved and the nc counters at
// the start of l.devOut) and the words of its inputs and outputs.
func packForward(l *lane, s *Settings, c *Batch, tol cuda.Ptr, nc int) (rj *RosJob, in, out int) {
	n, dim, np, K := c.N, c.Dim, c.NP, c.K
	f := l.pinIn.Float64s()
	for _, src := range [][]float64{c.T0, c.T1, c.Y0, c.P, c.Save} {
		in += copy(f[in:], src)
	}
	ctl := s.Controller
	rj = &RosJob{}
	job := &rj.Job
	*job = Job{N: int64(n), NSave: int64(K), SaveStride: int64(K), MaxSteps: int64(s.MaxSteps),
		HMax: s.HMax, H0: s.H0,
		Beta1: ctl.Beta1, Beta2: ctl.Beta2, Safety: ctl.Safety, QMin: ctl.QMin, QMax: ctl.QMax, QOldInit: ctl.QOldInit,
		RTol: tol, ATol: at(tol, len(s.RTol))}
	if s.DenseSave {
		rj.DenseSave = 1
	}
	w := 0
	for _, a := range []struct {
		p     *cuda.Ptr
		words int
	}{{&job.T0, n}, {&job.T1, n}, {&job.Y0, n * dim}, {&job.P, n * np}, {&job.Save, n * K}} {
		*a.p = at(l.devIn, w)
		w += a.words
	}
	for _, a := range []struct {
		p     *cuda.Ptr
		words int
	}{{&job.Y, n * dim}, {&job.T, n}, {&job.H, n}, {&job.Saved, n * K * dim},
		{&job.Status, n}, {&job.Accepted, n}, {&job.Rejected, n}, {&job.FEvals, n}, {&rj.JacEvals, n}, {&rj.LUs, n}}[:8+nc-4] {
		*a.p = at(l.devOut, out)
		out += a.words
	}
	return rj, in, out
}

// unpackForward copies chunk c's forward results (y, t, h, saved, the
// nc counters) from the start of l.pinOut and returns the words read.
func unpackForward(l *lane, c *Batch, nc int) int {
	f, in := l.pinOut.Float64s(), l.pinOut.Int64s()
	o := 0
	for _, dst := range [][]float64{c.Y, c.T, c.H, c.Saved} {
		o += copy(dst, f[o:o+len(dst)])
	}
	for _, dst := range [][]int64{c.Status, c.Accepted, c.Rejected, c.FEvals, c.JacEvals, c.LUs}[:nc] {
		o += copy(dst, in[o:o+len(dst)])
	}
	return o
}

// Run runs the chunks of b on the two streams (pipeline): while one
// stream's kernel runs, the host packs the next chunk and queues its
// copy to the device and its kernel on the other. Each trajectory's
// results are the kernel's for it alone, so they do not depend on the
// chunk size.
func (m *cudaModule) Run(k Kernel, s *Settings, b *Batch, chunk int, stop *atomic.Bool) (done int, err error) {
	fn, err := m.function(k.Name)
	if err != nil {
		return 0, err
	}
	tol, err := m.tolerances(s, k.Float32)
	if err != nil {
		return 0, err
	}
	defer m.dev.Free(tol)
	nc := counters(k.Family)
	j := &chunkJob{fn: fn, n: b.N, in: forwardIn(b.Dim, b.NP, b.K), out: forwardOut(b.Dim, b.K, nc)}
	if k.Float32 {
		j.pack = func(l *lane, lo, hi int) (int, int, []unsafe.Pointer) { return pack32(l, s, b.Slice(lo, hi), tol, nc) }
		j.unpack = func(l *lane, lo, hi int) { unpack32(l, b.Slice(lo, hi), nc) }
		return m.pipeline(j, chunk, stop)
	}
	j.pack = func(l *lane, lo, hi int) (int, int, []unsafe.Pointer) {
		rj, in, out := packForward(l, s, b.Slice(lo, hi), tol, nc)
		arg := unsafe.Pointer(&rj.Job)
		if k.Family == ROS {
			arg = unsafe.Pointer(rj)
		}
		return 8 * in, 8 * out, []unsafe.Pointer{arg}
	}
	j.unpack = func(l *lane, lo, hi int) { unpackForward(l, b.Slice(lo, hi), nc) }
	return m.pipeline(j, chunk, stop)
}

// pack32 packs chunk c of a float32 kernel's batch into lane l: the
// 8-byte inputs (t0, t1, save) first, then y0 and p rounded to float;
// the outputs are t, h and the nc counters (4 for an explicit kernel,
// 6 with a Rosenbrock kernel's Jacobian evaluations and LUs), then y and
// saved in float (unpack32 widens them). It returns the bytes to copy
// in and out and the kernel's parameter: gs_erk_job_f32, or for nc = 6
// gs_ros_job_f32 (the same fields, then dense_save, jac_evals, lus).
func pack32(l *lane, s *Settings, c *Batch, tol cuda.Ptr, nc int) (int, int, []unsafe.Pointer) {
	n, dim, K := c.N, c.Dim, c.K
	nd := len(s.RTol)
	f := l.pinIn.Float64s()
	o := 0
	for _, src := range [][]float64{c.T0, c.T1, c.Save} {
		o += copy(f[o:], src)
	}
	f32 := l.pinIn.Float32s()[2*o:]
	o32 := 0
	for _, src := range [][]float64{c.Y0, c.P} {
		for j, v := range src {
			f32[o32+j] = float32(v)
		}
		o32 += len(src)
	}
	ctl := s.Controller
	rj := &RosJob{}
	job := &rj.Job
	*job = Job{N: int64(n), NSave: int64(K), SaveStride: int64(K), MaxSteps: int64(s.MaxSteps),
		HMax: s.HMax, H0: s.H0,
		Beta1: ctl.Beta1, Beta2: ctl.Beta2, Safety: ctl.Safety, QMin: ctl.QMin, QMax: ctl.QMax, QOldInit: ctl.QOldInit,
		RTol: tol, ATol: tol + cuda.Ptr(4*nd)}
	// gs_erk_job_f32 and gs_ros_job_f32 have Job's and RosJob's
	// layouts (their float pointers are pointers).
	job.T0 = l.devIn
	job.T1 = job.T0 + cuda.Ptr(8*n)
	job.Save = job.T1 + cuda.Ptr(8*n)
	job.Y0 = job.Save + cuda.Ptr(8*n*K)
	job.P = job.Y0 + cuda.Ptr(4*n*dim)
	out := l.devOut
	for _, p := range []*cuda.Ptr{&job.T, &job.H, &job.Status, &job.Accepted, &job.Rejected, &job.FEvals, &rj.JacEvals, &rj.LUs}[:2+nc] {
		*p = out
		out += cuda.Ptr(8 * n)
	}
	job.Y = out
	job.Saved = job.Y + cuda.Ptr(4*n*dim)
	arg := unsafe.Pointer(job)
	if nc == counters(ROS) {
		if s.DenseSave {
			rj.DenseSave = 1
		}
		arg = unsafe.Pointer(rj)
	}
	return 8*o + 4*o32, 8*(2+nc)*n + 4*(n*dim+n*K*dim), []unsafe.Pointer{arg}
}

// unpack32 copies a float32 kernel's chunk results back: t, h
// (double), the nc counters, then y and saved widened from float.
func unpack32(l *lane, c *Batch, nc int) {
	f, in := l.pinOut.Float64s(), l.pinOut.Int64s()
	o := 0
	for _, dst := range [][]float64{c.T, c.H} {
		o += copy(dst, f[o:o+len(dst)])
	}
	for _, dst := range [][]int64{c.Status, c.Accepted, c.Rejected, c.FEvals, c.JacEvals, c.LUs}[:nc] {
		o += copy(dst, in[o:o+len(dst)])
	}
	f32 := l.pinOut.Float32s()[2*o:]
	o = 0
	for _, dst := range [][]float64{c.Y, c.Saved} {
		for j := range dst {
			dst[j] = float64(f32[o+j])
		}
		o += len(dst)
	}
}
