// Package cuda loads the CUDA driver API (libcuda.so.1) and NVRTC
// (libnvrtc.so) at run time through purego: no cgo, and no CUDA toolkit
// at build time. It offers what a GPU engine needs and nothing more:
// open the driver, pick a device and its compute capability, compile
// CUDA C++ with NVRTC for that architecture (contraction off,
// --fmad=false), load the PTX as a module (cached per source hash),
// look up kernels, allocate and copy device memory (and page-locked
// host memory), launch and synchronize, on the default stream or on
// streams of their own (asynchronous copies and launches).
//
// Every failure is an error value, never a panic. Where the machine
// cannot run CUDA at all — no driver library, a driver library missing
// a symbol, no device, no NVRTC — the error wraps ErrUnavailable and its
// text starts with "unavailable: ". Failures of the driver's calls name
// the call and the driver's error name (cuGetErrorName) and string; a
// failed compile carries NVRTC's program log.
//
// The library paths are Options fields, or the environment variables
// GRADSOLVE_CUDA_DRIVER and GRADSOLVE_NVRTC, so that the tests can load
// a fake driver built from C in the test.
package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// ErrUnavailable is wrapped by every error that says CUDA cannot run
// here: no driver library, a symbol missing from it, no device, or no
// NVRTC. Its text is "unavailable".
var ErrUnavailable = errors.New("unavailable")

// Options says where the libraries are. The zero value loads the
// system's libraries by their usual names.
type Options struct {
	// Driver is the path (or soname) of the driver library; "" means
	// $GRADSOLVE_CUDA_DRIVER, else "libcuda.so.1".
	Driver string
	// NVRTC is the path (or soname) of the NVRTC library; "" means
	// $GRADSOLVE_NVRTC, else the first of "libnvrtc.so",
	// "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2" that
	// loads.
	NVRTC string
}

// Result is a CUDA driver API status (CUresult).
type Result int32

// Driver is a loaded driver library with cuInit done. It is safe for
// concurrent use.
type Driver struct {
	path  string
	nvrtc *nvrtc // nil until first compile
	nvErr error
	nvMu  sync.Mutex
	opts  Options

	cuInit                    func(flags uint32) Result
	cuDeviceGetCount          func(n *int32) Result
	cuDeviceGet               func(dev *int32, ordinal int32) Result
	cuDeviceGetAttribute      func(v *int32, attr int32, dev int32) Result
	cuDevicePrimaryCtxRetain  func(ctx *uintptr, dev int32) Result
	cuDevicePrimaryCtxRelease func(dev int32) Result
	cuCtxSetCurrent           func(ctx uintptr) Result
	cuCtxSynchronize          func() Result
	cuModuleLoadData          func(mod *uintptr, image unsafe.Pointer) Result
	cuModuleUnload            func(mod uintptr) Result
	cuModuleGetFunction       func(fn *uintptr, mod uintptr, name string) Result
	cuMemAlloc                func(dptr *uint64, bytes uintptr) Result
	cuMemFree                 func(dptr uint64) Result
	cuMemcpyHtoD              func(dst uint64, src unsafe.Pointer, bytes uintptr) Result
	cuMemcpyDtoH              func(dst unsafe.Pointer, src uint64, bytes uintptr) Result
	cuLaunchKernel            func(f uintptr, gx, gy, gz, bx, by, bz, shared uint32, stream uintptr, params *unsafe.Pointer, extra *unsafe.Pointer) Result
	cuGetErrorName            func(r Result, s **byte) Result
	cuGetErrorString          func(r Result, s **byte) Result
	cuMemGetInfo              func(free, total *uintptr) Result
	cuStreamCreate            func(s *uintptr, flags uint32) Result
	cuStreamDestroy           func(s uintptr) Result
	cuStreamSynchronize       func(s uintptr) Result
	cuMemcpyHtoDAsync         func(dst uint64, src unsafe.Pointer, bytes uintptr, s uintptr) Result
	cuMemcpyDtoHAsync         func(dst unsafe.Pointer, src uint64, bytes uintptr, s uintptr) Result
	cuMemAllocHost            func(p *unsafe.Pointer, bytes uintptr) Result
	cuMemFreeHost             func(p unsafe.Pointer) Result
}

// driverSymbols lists the driver API's symbols Open binds, with the
// field each goes to. The _v2 names are those cuda.h maps the plain
// names to since CUDA 4 (11 for the primary context's release).
func (d *Driver) driverSymbols() []struct {
	name string
	fptr any
} {
	return []struct {
		name string
		fptr any
	}{
		{"cuInit", &d.cuInit},
		{"cuDeviceGetCount", &d.cuDeviceGetCount},
		{"cuDeviceGet", &d.cuDeviceGet},
		{"cuDeviceGetAttribute", &d.cuDeviceGetAttribute},
		{"cuDevicePrimaryCtxRetain", &d.cuDevicePrimaryCtxRetain},
		{"cuDevicePrimaryCtxRelease_v2", &d.cuDevicePrimaryCtxRelease},
		{"cuCtxSetCurrent", &d.cuCtxSetCurrent},
		{"cuCtxSynchronize", &d.cuCtxSynchronize},
		{"cuModuleLoadData", &d.cuModuleLoadData},
		{"cuModuleUnload", &d.cuModuleUnload},
		{"cuModuleGetFunction", &d.cuModuleGetFunction},
		{"cuMemAlloc_v2", &d.cuMemAlloc},
		{"cuMemFree_v2", &d.cuMemFree},
		{"cuMemcpyHtoD_v2", &d.cuMemcpyHtoD},
		{"cuMemcpyDtoH_v2", &d.cuMemcpyDtoH},
		{"cuLaunchKernel", &d.cuLaunchKernel},
		{"cuGetErrorName", &d.cuGetErrorName},
		{"cuGetErrorString", &d.cuGetErrorString},
		{"cuMemGetInfo_v2", &d.cuMemGetInfo},
		{"cuStreamCreate", &d.cuStreamCreate},
		{"cuStreamDestroy_v2", &d.cuStreamDestroy},
		{"cuStreamSynchronize", &d.cuStreamSynchronize},
		{"cuMemcpyHtoDAsync_v2", &d.cuMemcpyHtoDAsync},
		{"cuMemcpyDtoHAsync_v2", &d.cuMemcpyDtoHAsync},
		{"cuMemAllocHost_v2", &d.cuMemAllocHost},
		{"cuMemFreeHost", &d.cuMemFreeHost},
	}
}

func envOr(v, env, def string) string {
	if v != "" {
		return v
	}
	if e := getenv(env); e != "" {
		return e
	}
	return def
}

// Open loads the driver library, binds the driver API and calls cuInit.
// It returns an error wrapping ErrUnavailable where there is no driver
// library or it lacks a symbol, and where cuInit fails (no device, or
// a driver that does not match the kernel module).
func Open(o Options) (*Driver, error) {
	path := envOr(o.Driver, "GRADSOLVE_CUDA_DRIVER", "libcuda.so.1")
	h, err := dlopen(path)
	if err != nil {
		return nil, fmt.Errorf("%w: no CUDA driver (%v)", ErrUnavailable, err)
	}
	d := &Driver{path: path, opts: o}
	if err := bind(h, path, d.driverSymbols()); err != nil {
		return nil, err
	}
	if r := d.cuInit(0); r != 0 {
		if r == errNoDevice {
			return nil, fmt.Errorf("%w: no CUDA device (cuInit: %s)", ErrUnavailable, d.describe(r))
		}
		return nil, fmt.Errorf("%w: the CUDA driver did not initialize (cuInit: %s)", ErrUnavailable, d.describe(r))
	}
	return d, nil
}

// The driver API's status codes the package tells apart (cuda.h).
const (
	errNoDevice Result = 100 // CUDA_ERROR_NO_DEVICE
	errNotFound Result = 500 // CUDA_ERROR_NOT_FOUND
)

// describe returns the driver's name and text of r, as
// "CUDA_ERROR_X (text)", or "CUDA error r" where the driver knows
// neither.
func (d *Driver) describe(r Result) string {
	var name, text *byte
	if d.cuGetErrorName(r, &name) != 0 || name == nil {
		return fmt.Sprintf("CUDA error %d", int32(r))
	}
	s := goString(name)
	if d.cuGetErrorString(r, &text) == 0 && text != nil {
		s += " (" + goString(text) + ")"
	}
	return s
}

// check returns nil for success, else an error naming the call.
func (d *Driver) check(call string, r Result) error {
	if r == 0 {
		return nil
	}
	return &Error{Call: call, Code: r, Text: d.describe(r)}
}

// Error is a failed driver API call.
type Error struct {
	// Call names the call (and the kernel, for a launch).
	Call string
	// Code is the driver's status.
	Code Result
	// Text is the driver's name and description of Code.
	Text string
}

// Error returns "cuda: <call>: <name> (<text>)".
func (e *Error) Error() string { return "cuda: " + e.Call + ": " + e.Text }

// goString copies the NUL-terminated C string at p.
func goString(p *byte) string {
	var b []byte
	for q := unsafe.Pointer(p); *(*byte)(q) != 0; q = unsafe.Add(q, 1) {
		b = append(b, *(*byte)(q))
	}
	return string(b)
}

// DeviceCount returns the number of CUDA devices.
func (d *Driver) DeviceCount() (int, error) {
	var n int32
	if err := d.check("cuDeviceGetCount", d.cuDeviceGetCount(&n)); err != nil {
		return 0, err
	}
	return int(n), nil
}

// Device is one device with its primary context retained. Its methods
// make the context current on the calling goroutine's thread for the
// duration of each call, so a Device may be used from any goroutine;
// it is safe for concurrent use.
type Device struct {
	d       *Driver
	ordinal int
	dev     int32
	ctx     uintptr
	// Major and Minor are the compute capability.
	Major, Minor int

	mu       sync.Mutex
	modules  map[[32]byte]*Module
	compiles int // NVRTC compiles made (the cache's misses)
	closed   bool
}

// The attributes of the compute capability (CUdevice_attribute).
const (
	attrMajor = 75 // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
	attrMinor = 76 // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
)

// Device returns device n (0-based) with its primary context retained.
// It returns an error wrapping ErrUnavailable where the machine has no
// device, and an error naming the count where n is out of range.
func (d *Driver) Device(n int) (*Device, error) {
	count, err := d.DeviceCount()
	if err != nil {
		return nil, err
	}
	switch {
	case count == 0:
		return nil, fmt.Errorf("%w: no CUDA device", ErrUnavailable)
	case n < 0 || n >= count:
		return nil, fmt.Errorf("CUDA device %d does not exist: the machine has %d (0 to %d)", n, count, count-1)
	}
	dev := &Device{d: d, ordinal: n, modules: map[[32]byte]*Module{}}
	if err := d.check("cuDeviceGet", d.cuDeviceGet(&dev.dev, int32(n))); err != nil {
		return nil, err
	}
	var major, minor int32
	if err := d.check("cuDeviceGetAttribute(compute capability major)", d.cuDeviceGetAttribute(&major, attrMajor, dev.dev)); err != nil {
		return nil, err
	}
	if err := d.check("cuDeviceGetAttribute(compute capability minor)", d.cuDeviceGetAttribute(&minor, attrMinor, dev.dev)); err != nil {
		return nil, err
	}
	dev.Major, dev.Minor = int(major), int(minor)
	if err := d.check("cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain(&dev.ctx, dev.dev)); err != nil {
		return nil, err
	}
	return dev, nil
}

// Arch returns the virtual architecture NVRTC compiles for,
// "compute_XY" from the compute capability X.Y.
func (dev *Device) Arch() string { return fmt.Sprintf("compute_%d%d", dev.Major, dev.Minor) }

// Ordinal returns the device's index.
func (dev *Device) Ordinal() int { return dev.ordinal }

// with runs f with the device's context current on a locked thread.
func (dev *Device) with(f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if dev.closed {
		return fmt.Errorf("cuda: device %d is closed", dev.ordinal)
	}
	if err := dev.d.check("cuCtxSetCurrent", dev.d.cuCtxSetCurrent(dev.ctx)); err != nil {
		return err
	}
	return f()
}

// Close unloads the device's modules and releases its primary context.
func (dev *Device) Close() error {
	dev.mu.Lock()
	defer dev.mu.Unlock()
	if dev.closed {
		return nil
	}
	var first error
	err := dev.with(func() error {
		for _, m := range dev.modules {
			if err := dev.d.check("cuModuleUnload", dev.d.cuModuleUnload(m.mod)); err != nil && first == nil {
				first = err
			}
		}
		return nil
	})
	if first == nil {
		first = err
	}
	dev.modules = nil
	dev.closed = true
	if err := dev.d.check("cuDevicePrimaryCtxRelease", dev.d.cuDevicePrimaryCtxRelease(dev.dev)); err != nil && first == nil {
		first = err
	}
	return first
}

// Ptr is a device address (CUdeviceptr).
type Ptr uint64

// Alloc allocates n bytes of device memory.
func (dev *Device) Alloc(n int) (Ptr, error) {
	if n <= 0 {
		return 0, fmt.Errorf("cuda: Alloc of %d bytes", n)
	}
	var p uint64
	err := dev.with(func() error {
		return dev.d.check(fmt.Sprintf("cuMemAlloc(%d bytes)", n), dev.d.cuMemAlloc(&p, uintptr(n)))
	})
	return Ptr(p), err
}

// Free frees device memory from Alloc.
func (dev *Device) Free(p Ptr) error {
	return dev.with(func() error { return dev.d.check("cuMemFree", dev.d.cuMemFree(uint64(p))) })
}

// CopyIn copies src to the device memory at dst.
func CopyIn[T any](dev *Device, dst Ptr, src []T) error {
	if len(src) == 0 {
		return nil
	}
	n := uintptr(len(src)) * unsafe.Sizeof(src[0])
	err := dev.with(func() error {
		return dev.d.check("cuMemcpyHtoD", dev.d.cuMemcpyHtoD(uint64(dst), unsafe.Pointer(&src[0]), n))
	})
	runtime.KeepAlive(src)
	return err
}

// CopyOut copies the device memory at src into dst.
func CopyOut[T any](dev *Device, dst []T, src Ptr) error {
	if len(dst) == 0 {
		return nil
	}
	n := uintptr(len(dst)) * unsafe.Sizeof(dst[0])
	err := dev.with(func() error {
		return dev.d.check("cuMemcpyDtoH", dev.d.cuMemcpyDtoH(unsafe.Pointer(&dst[0]), uint64(src), n))
	})
	runtime.KeepAlive(dst)
	return err
}

// Synchronize waits for the device's work and returns the first error
// of an earlier asynchronous launch, as the driver reports it.
func (dev *Device) Synchronize() error {
	return dev.with(func() error { return dev.d.check("cuCtxSynchronize", dev.d.cuCtxSynchronize()) })
}

// Module is a loaded module.
type Module struct {
	dev  *Device
	mod  uintptr
	name string
}

// Function is a kernel of a loaded module.
type Function struct {
	dev  *Device
	fn   uintptr
	name string
}

// Function returns the kernel of the given (extern "C") name.
func (m *Module) Function(name string) (*Function, error) {
	var fn uintptr
	err := m.dev.with(func() error {
		r := m.dev.d.cuModuleGetFunction(&fn, m.mod, name)
		if r == errNotFound {
			return fmt.Errorf("cuda: module %s has no kernel %s", m.name, name)
		}
		return m.dev.d.check("cuModuleGetFunction("+name+")", r)
	})
	if err != nil {
		return nil, err
	}
	return &Function{dev: m.dev, fn: fn, name: name}, nil
}

// Launch launches the kernel on a grid of grid blocks of block threads
// (x only), on the default stream, with the kernel's arguments: one
// pointer per parameter to its value (a Ptr, an int32, a struct passed
// by value), as cuLaunchKernel takes them. The launch is asynchronous;
// Synchronize reports errors of its execution.
func (f *Function) Launch(grid, block uint32, args ...unsafe.Pointer) error {
	if grid == 0 || block == 0 {
		return fmt.Errorf("cuda: launch of %s on a grid of %d blocks of %d threads", f.name, grid, block)
	}
	var params *unsafe.Pointer
	if len(args) > 0 {
		params = &args[0]
	}
	err := f.dev.with(func() error {
		return f.dev.d.check("cuLaunchKernel("+f.name+")", f.dev.d.cuLaunchKernel(f.fn, grid, 1, 1, block, 1, 1, 0, 0, params, nil))
	})
	runtime.KeepAlive(args)
	return err
}
