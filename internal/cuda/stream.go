package cuda

import (
	"fmt"
	"runtime"
	"unsafe"
)

// MemInfo returns the device's free and total memory in bytes
// (cuMemGetInfo).
func (dev *Device) MemInfo() (free, total int64, err error) {
	var f, t uintptr
	err = dev.with(func() error { return dev.d.check("cuMemGetInfo", dev.d.cuMemGetInfo(&f, &t)) })
	return int64(f), int64(t), err
}

// Stream is a CUDA stream of a device: the copies and launches issued on
// it run in order, and those of two streams may overlap.
type Stream struct {
	dev *Device
	s   uintptr
}

// streamNonBlocking is CU_STREAM_NON_BLOCKING: the stream does not
// synchronize with the legacy default stream.
const streamNonBlocking = 1

// NewStream creates a stream (cuStreamCreate, non-blocking).
func (dev *Device) NewStream() (*Stream, error) {
	var s uintptr
	err := dev.with(func() error { return dev.d.check("cuStreamCreate", dev.d.cuStreamCreate(&s, streamNonBlocking)) })
	if err != nil {
		return nil, err
	}
	return &Stream{dev: dev, s: s}, nil
}

// Synchronize waits for the stream's work and returns the first error
// of its asynchronous copies and launches, as the driver reports it.
func (st *Stream) Synchronize() error {
	return st.dev.with(func() error { return st.dev.d.check("cuStreamSynchronize", st.dev.d.cuStreamSynchronize(st.s)) })
}

// Destroy destroys the stream (its pending work still completes).
func (st *Stream) Destroy() error {
	return st.dev.with(func() error { return st.dev.d.check("cuStreamDestroy", st.dev.d.cuStreamDestroy(st.s)) })
}

// HostMem is page-locked host memory (cuMemAllocHost), which the
// asynchronous copies need so that they overlap with kernels: memory
// outside the Go heap, of a fixed size, freed by Free.
type HostMem struct {
	dev *Device
	p   unsafe.Pointer
	n   int
}

// AllocHost allocates n bytes of page-locked host memory.
func (dev *Device) AllocHost(n int) (*HostMem, error) {
	if n <= 0 {
		return nil, fmt.Errorf("cuda: AllocHost of %d bytes", n)
	}
	var p unsafe.Pointer
	err := dev.with(func() error {
		return dev.d.check(fmt.Sprintf("cuMemAllocHost(%d bytes)", n), dev.d.cuMemAllocHost(&p, uintptr(n)))
	})
	if err != nil {
		return nil, err
	}
	return &HostMem{dev: dev, p: p, n: n}, nil
}

// Len returns the size in bytes.
func (h *HostMem) Len() int { return h.n }

// Float64s returns the memory as float64 values (a view, valid until
// Free).
func (h *HostMem) Float64s() []float64 { return unsafe.Slice((*float64)(h.p), h.n/8) }

// Float32s returns the memory as float32 values (a view, valid until
// Free).
func (h *HostMem) Float32s() []float32 { return unsafe.Slice((*float32)(h.p), h.n/4) }

// Int64s returns the memory as int64 values (a view, valid until Free).
func (h *HostMem) Int64s() []int64 { return unsafe.Slice((*int64)(h.p), h.n/8) }

// Free frees the memory (cuMemFreeHost).
func (h *HostMem) Free() error {
	if h.p == nil {
		return nil
	}
	err := h.dev.with(func() error { return h.dev.d.check("cuMemFreeHost", h.dev.d.cuMemFreeHost(h.p)) })
	h.p, h.n = nil, 0
	return err
}

// span checks that [off, off+n) lies inside h.
func (h *HostMem) span(off, n int) error {
	if h.p == nil || off < 0 || n < 0 || off+n > h.n {
		return fmt.Errorf("cuda: bytes [%d, %d) of page-locked memory of %d bytes", off, off+n, h.n)
	}
	return nil
}

// CopyIn queues a copy of bytes [off, off+n) of h to the device memory
// at dst on the stream (cuMemcpyHtoDAsync).
func (st *Stream) CopyIn(dst Ptr, h *HostMem, off, n int) error {
	if err := h.span(off, n); err != nil || n == 0 {
		return err
	}
	return st.dev.with(func() error {
		return st.dev.d.check("cuMemcpyHtoDAsync", st.dev.d.cuMemcpyHtoDAsync(uint64(dst), unsafe.Add(h.p, off), uintptr(n), st.s))
	})
}

// CopyOut queues a copy of n bytes of device memory at src into bytes
// [off, off+n) of h on the stream (cuMemcpyDtoHAsync).
func (st *Stream) CopyOut(h *HostMem, off int, src Ptr, n int) error {
	if err := h.span(off, n); err != nil || n == 0 {
		return err
	}
	return st.dev.with(func() error {
		return st.dev.d.check("cuMemcpyDtoHAsync", st.dev.d.cuMemcpyDtoHAsync(unsafe.Add(h.p, off), uint64(src), uintptr(n), st.s))
	})
}

// Name returns the kernel's name.
func (f *Function) Name() string { return f.name }

// LaunchOn is Launch on the stream st: the kernel runs after the work
// queued on st before it, and may overlap with other streams' work.
func (f *Function) LaunchOn(st *Stream, grid, block uint32, args ...unsafe.Pointer) error {
	if grid == 0 || block == 0 {
		return fmt.Errorf("cuda: launch of %s on a grid of %d blocks of %d threads", f.name, grid, block)
	}
	var params *unsafe.Pointer
	if len(args) > 0 {
		params = &args[0]
	}
	err := f.dev.with(func() error {
		return f.dev.d.check("cuLaunchKernel("+f.name+")", f.dev.d.cuLaunchKernel(f.fn, grid, 1, 1, block, 1, 1, 0, st.s, params, nil))
	})
	runtime.KeepAlive(args)
	return err
}
