package cuda

import (
	"crypto/sha256"
	"fmt"
	"os"
	"runtime"
	"strings"
	"unsafe"
)

var getenv = os.Getenv

// nvrtc is a loaded NVRTC library.
type nvrtc struct {
	path string

	createProgram  func(prog *uintptr, src, name *byte, numHeaders int32, headers, includeNames **byte) int32
	compileProgram func(prog uintptr, numOptions int32, options **byte) int32
	getLogSize     func(prog uintptr, n *uintptr) int32
	getLog         func(prog uintptr, log *byte) int32
	getPTXSize     func(prog uintptr, n *uintptr) int32
	getPTX         func(prog uintptr, ptx *byte) int32
	destroyProgram func(prog *uintptr) int32
	getErrorString func(r int32) string
}

// nvrtcCompilation is NVRTC_ERROR_COMPILATION (nvrtc.h).
const nvrtcCompilation = 6

// nvrtcNames are the sonames tried, in order, where no path is given.
var nvrtcNames = []string{"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"}

// loadNVRTC opens NVRTC at path, or the first of nvrtcNames that loads.
func loadNVRTC(path string) (*nvrtc, error) {
	names := nvrtcNames
	if path != "" {
		names = []string{path}
	}
	var h uintptr
	var why []string
	for _, n := range names {
		var err error
		if h, err = dlopen(n); err == nil {
			path = n
			break
		}
		why = append(why, err.Error())
	}
	if h == 0 {
		return nil, fmt.Errorf("%w: no NVRTC (%s)", ErrUnavailable, strings.Join(why, "; "))
	}
	n := &nvrtc{path: path}
	err := bind(h, path, []struct {
		name string
		fptr any
	}{
		{"nvrtcCreateProgram", &n.createProgram},
		{"nvrtcCompileProgram", &n.compileProgram},
		{"nvrtcGetProgramLogSize", &n.getLogSize},
		{"nvrtcGetProgramLog", &n.getLog},
		{"nvrtcGetPTXSize", &n.getPTXSize},
		{"nvrtcGetPTX", &n.getPTX},
		{"nvrtcDestroyProgram", &n.destroyProgram},
		{"nvrtcGetErrorString", &n.getErrorString},
	})
	if err != nil {
		return nil, err
	}
	return n, nil
}

// errorf returns an error naming the NVRTC call and its status.
func (n *nvrtc) errorf(call string, r int32) error {
	return fmt.Errorf("nvrtc: %s: %s", call, n.getErrorString(r))
}

// cstr returns s as a NUL-terminated byte slice.
func cstr(s string) []byte { return append([]byte(s), 0) }

// compile compiles src (named name in messages) with the options and
// returns its PTX, or an error with NVRTC's program log.
func (n *nvrtc) compile(src, name string, opts []string) ([]byte, error) {
	csrc, cname := cstr(src), cstr(name)
	var prog uintptr
	if r := n.createProgram(&prog, &csrc[0], &cname[0], 0, nil, nil); r != 0 {
		return nil, n.errorf("nvrtcCreateProgram", r)
	}
	defer n.destroyProgram(&prog)
	copts := make([][]byte, len(opts))
	ptrs := make([]*byte, len(opts)+1)
	for i, o := range opts {
		copts[i] = cstr(o)
		ptrs[i] = &copts[i][0]
	}
	r := n.compileProgram(prog, int32(len(opts)), &ptrs[0])
	runtime.KeepAlive(copts)
	runtime.KeepAlive(csrc)
	if r != 0 {
		err := n.errorf("nvrtcCompileProgram", r)
		if r != nvrtcCompilation {
			return nil, err
		}
		log, lerr := n.log(prog)
		if lerr != nil {
			return nil, fmt.Errorf("nvrtc: compiling %s (%s) failed, and its log could not be read: %v", name, strings.Join(opts, " "), lerr)
		}
		return nil, fmt.Errorf("nvrtc: compiling %s (%s) failed:\n%s", name, strings.Join(opts, " "), strings.TrimRight(log, "\x00\n"))
	}
	var size uintptr
	if r := n.getPTXSize(prog, &size); r != 0 {
		return nil, n.errorf("nvrtcGetPTXSize", r)
	}
	if size == 0 {
		return nil, fmt.Errorf("nvrtc: compiling %s gave no PTX", name)
	}
	ptx := make([]byte, size)
	if r := n.getPTX(prog, &ptx[0]); r != 0 {
		return nil, n.errorf("nvrtcGetPTX", r)
	}
	if ptx[len(ptx)-1] != 0 {
		ptx = append(ptx, 0)
	}
	return ptx, nil
}

// log returns the program's log.
func (n *nvrtc) log(prog uintptr) (string, error) {
	var size uintptr
	if r := n.getLogSize(prog, &size); r != 0 {
		return "", n.errorf("nvrtcGetProgramLogSize", r)
	}
	if size <= 1 {
		return "(empty log)", nil
	}
	b := make([]byte, size)
	if r := n.getLog(prog, &b[0]); r != 0 {
		return "", n.errorf("nvrtcGetProgramLog", r)
	}
	return string(b), nil
}

// NVRTC returns the driver's NVRTC, loading it on first use: an error
// wrapping ErrUnavailable where there is none.
func (d *Driver) NVRTC() error {
	_, err := d.loadNVRTC()
	return err
}

func (d *Driver) loadNVRTC() (*nvrtc, error) {
	d.nvMu.Lock()
	defer d.nvMu.Unlock()
	if d.nvrtc == nil && d.nvErr == nil {
		d.nvrtc, d.nvErr = loadNVRTC(envOr(d.opts.NVRTC, "GRADSOLVE_NVRTC", ""))
	}
	return d.nvrtc, d.nvErr
}

// CompileOptions are the NVRTC options of a compile for arch
// ("compute_XY"): C++17, and no contraction of products into fused
// multiply–adds, so that float64 kernels round as the CPU engine does.
func CompileOptions(arch string) []string {
	return []string{"--gpu-architecture=" + arch, "--fmad=false", "--std=c++17"}
}

// Compile compiles src with NVRTC for the device's architecture
// (CompileOptions) and returns the PTX.
func (dev *Device) Compile(src, name string) ([]byte, error) {
	nv, err := dev.d.loadNVRTC()
	if err != nil {
		return nil, err
	}
	return nv.compile(src, name, CompileOptions(dev.Arch()))
}

// Module returns src compiled for the device and loaded as a module.
// Modules are cached per source hash (SHA-256): a source already loaded
// on the device is neither compiled nor loaded again.
func (dev *Device) Module(src, name string) (*Module, error) {
	key := sha256.Sum256([]byte(src))
	dev.mu.Lock()
	defer dev.mu.Unlock()
	if dev.closed {
		return nil, fmt.Errorf("cuda: device %d is closed", dev.ordinal)
	}
	if m := dev.modules[key]; m != nil {
		return m, nil
	}
	ptx, err := dev.Compile(src, name)
	if err != nil {
		return nil, err
	}
	dev.compiles++
	m := &Module{dev: dev, name: name}
	err = dev.with(func() error {
		return dev.d.check("cuModuleLoadData("+name+")", dev.d.cuModuleLoadData(&m.mod, unsafe.Pointer(&ptx[0])))
	})
	runtime.KeepAlive(ptx)
	if err != nil {
		return nil, err
	}
	dev.modules[key] = m
	return m, nil
}
