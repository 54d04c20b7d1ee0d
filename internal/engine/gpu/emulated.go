package gpu

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gradsolve/gradsolve/internal/cuda"
	"github.com/gradsolve/gradsolve/internal/cudaemu"
	"github.com/gradsolve/gradsolve/sym/emitcuda"
)

//go:embed emu_runner.cpp.in
var emuRunner string

// EmuMemory is the device memory the emulated device reports: 1 GiB,
// so that a chunk is sized as on a small GPU.
const EmuMemory = 1 << 30

// Emulated is the emulated device: the generated source compiled with
// the system C++ compiler against cudaemu's header (package
// internal/cudaemu), with a small host program (emu_runner.cpp.in) that
// reads a launch's inputs on stdin, runs the kernel's grid as loops and
// writes its results on stdout. Each launch is one run of the program;
// the compiled programs are kept in CacheDir, one per source. It has
// one device.
type Emulated struct {
	// CacheDir holds the compiled programs; "" means
	// $GRADSOLVE_CUDAEMU_CACHE, else gradsolve-cudaemu in the user's
	// cache directory (or the temporary directory).
	CacheDir string
	// Grid and Block are the emulated launch's shape (0: 4 blocks of
	// 32 threads, so that the grid-stride loop gives a thread several
	// trajectories).
	Grid, Block int

	once sync.Once
	cxx  string
	err  error
	dev  *emuDevice
}

// Name returns "emulated CUDA".
func (e *Emulated) Name() string { return "emulated CUDA" }

// Devices returns 1 where a C++ compiler is found, else an error
// wrapping cuda.ErrUnavailable.
func (e *Emulated) Devices() (int, error) {
	e.once.Do(func() {
		e.cxx, e.err = cudaemu.Compiler()
		if e.err != nil {
			e.err = fmt.Errorf("%w: no C++ compiler for the emulated CUDA device (%v)", cuda.ErrUnavailable, e.err)
			return
		}
		dir := e.CacheDir
		if dir == "" {
			dir = os.Getenv("GRADSOLVE_CUDAEMU_CACHE")
		}
		if dir == "" {
			base, err := os.UserCacheDir()
			if err != nil {
				base = os.TempDir()
			}
			dir = filepath.Join(base, "gradsolve-cudaemu")
		}
		grid, block := e.Grid, e.Block
		if grid <= 0 {
			grid = 4
		}
		if block <= 0 {
			block = 32
		}
		e.dev = &emuDevice{cxx: e.cxx, dir: dir, grid: grid, block: block, mods: map[string]*emuModule{}}
	})
	if e.err != nil {
		return 0, e.err
	}
	return 1, nil
}

// Float32 returns nil: the emulated device runs the float32 kernels of
// both families (Float32Backend), its host program rounding the inputs to float and
// widening the results.
func (e *Emulated) Float32() error { return nil }

// Open returns the emulated device (n must be 0).
func (e *Emulated) Open(n int) (Device, error) {
	if _, err := e.Devices(); err != nil {
		return nil, err
	}
	if n != 0 {
		return nil, fmt.Errorf("emulated CUDA device %d does not exist: there is one (0)", n)
	}
	return e.dev, nil
}

type emuDevice struct {
	cxx, dir    string
	grid, block int
	mu          sync.Mutex
	mods        map[string]*emuModule // by source text
}

func (d *emuDevice) Memory() (int64, error) { return EmuMemory, nil }

// Load compiles src with its kernel table and the runner (once per
// source: cudaemu.Build keeps the program by content hash).
func (d *emuDevice) Load(src *emitcuda.Source) (Module, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if m, ok := d.mods[string(src.Code)]; ok {
		return m, nil
	}
	var b strings.Builder
	b.WriteString("#include \"cuda_emu.h\"\n#include \"emu_io.h\"\n\n")
	b.Write(src.Code)
	table := func(fn, prefix string, names []string, dims, nds []int) {
		fmt.Fprintf(&b, "\nstatic void (*const %s[])(%s) = {", prefix, fn)
		for _, n := range names {
			b.WriteString(n + ", ")
		}
		fmt.Fprintf(&b, "nullptr};\nstatic const long long %s_n = %d;\n", prefix, len(names))
		for _, a := range []struct {
			suffix string
			v      []int
		}{{"dims", dims}, {"normdims", nds}} {
			fmt.Fprintf(&b, "static const long long %s_%s[] = {", prefix, a.suffix)
			for _, v := range a.v {
				fmt.Fprintf(&b, "%d, ", v)
			}
			b.WriteString("0};\n")
		}
	}
	// The explicit methods' tables: forward and sensitivity kernels
	// (gs_erk_job), record kernels (gs_erk_record_job), adjoint
	// kernels (gs_erk_adjoint_job).
	var names, erec, eadj, f32 []string
	var dims, nds, erd, ernd, ead, eand, fd, fnd []int
	for _, k := range src.Kernels {
		switch {
		case k.Float32:
			f32, fd, fnd = append(f32, k.Name), append(fd, k.Dim), append(fnd, k.NormDim)
		case k.Kind == emitcuda.Record:
			erec, erd, ernd = append(erec, k.Name), append(erd, k.Dim), append(ernd, k.NormDim)
		case k.Kind == emitcuda.Adjoint:
			eadj, ead, eand = append(eadj, k.Name), append(ead, k.Dim), append(eand, k.NormDim)
		default:
			names, dims, nds = append(names, k.Name), append(dims, k.Dim), append(nds, k.NormDim)
		}
	}
	table("gs_erk_job", "gs_kernels", names, dims, nds)
	if len(f32) > 0 {
		b.WriteString("#define GS_ERK_F32 1\n")
		table("gs_erk_job_f32", "gs_kernels_f32", f32, fd, fnd)
	}
	if len(erec) > 0 || len(eadj) > 0 {
		b.WriteString("#define GS_ERK_RECORD 1\n")
		table("gs_erk_record_job", "gs_erk_record_kernels", erec, erd, ernd)
		table("gs_erk_adjoint_job", "gs_erk_adjoint_kernels", eadj, ead, eand)
	}
	if len(src.RosKernels) > 0 {
		// The Rosenbrock tables: forward and sensitivity kernels
		// (gs_ros_job), record kernels (gs_ros_job, gs_ros_mesh),
		// adjoint kernels (gs_ros_job, gs_ros_mesh, gs_ros_adj).
		b.WriteString("#define GS_ROS 1\n")
		var fw, rec, adj, f32 []string
		var fd, fnd, rd, rnd, ad, and, f32d, f32nd []int
		for _, k := range src.RosKernels {
			switch {
			case k.Float32:
				f32, f32d, f32nd = append(f32, k.Name), append(f32d, k.Dim), append(f32nd, k.NormDim)
			case k.Record:
				rec, rd, rnd = append(rec, k.Name), append(rd, k.Dim), append(rnd, k.NormDim)
			case k.Adjoint:
				adj, ad, and = append(adj, k.Name), append(ad, k.Dim), append(and, k.NormDim)
			default:
				fw, fd, fnd = append(fw, k.Name), append(fd, k.Dim), append(fnd, k.NormDim)
			}
		}
		table("gs_ros_job", "gs_ros_kernels", fw, fd, fnd)
		table("gs_ros_job, gs_ros_mesh", "gs_ros_record_kernels", rec, rd, rnd)
		table("gs_ros_job, gs_ros_mesh, gs_ros_adj", "gs_ros_adjoint_kernels", adj, ad, and)
		if len(f32) > 0 {
			b.WriteString("#define GS_ROS_F32 1\n")
			table("gs_ros_job_f32", "gs_ros_kernels_f32", f32, f32d, f32nd)
		}
	}
	if len(names) == 0 && len(src.RosKernels) == 0 {
		return nil, errors.New("gpu: the source has no kernel")
	}
	b.WriteString("\n")
	b.WriteString(emuRunner)
	exe, err := cudaemu.Build(context.Background(), d.cxx, d.dir, []byte(b.String()))
	if err != nil {
		return nil, fmt.Errorf("gpu: compiling %s for the emulated device: %w", src.Model, err)
	}
	m := &emuModule{dev: d, src: src, exe: exe}
	d.mods[string(src.Code)] = m
	return m, nil
}

type emuModule struct {
	dev *emuDevice
	src *emitcuda.Source
	exe string
}

// index returns kernel k's family code on the wire (0: gs_kernels, 1:
// gs_ros_kernels, 6: gs_kernels_f32, 7: gs_ros_kernels_f32) and its
// index in that table.
func (m *emuModule) index(k Kernel) (family, index int, err error) {
	if k.Family == ROS {
		i := 0
		for _, kk := range m.src.RosKernels {
			if kk.Record || kk.Adjoint || kk.Float32 != k.Float32 {
				continue
			}
			if kk.Name == k.Name {
				if k.Float32 {
					return 7, i, nil
				}
				return 1, i, nil
			}
			i++
		}
	} else {
		i := 0
		for _, kk := range m.src.Kernels {
			if kk.Float32 != k.Float32 || kk.Kind == emitcuda.Record || kk.Kind == emitcuda.Adjoint {
				continue
			}
			if kk.Name == k.Name {
				if k.Float32 {
					return 6, i, nil
				}
				return 0, i, nil
			}
			i++
		}
	}
	return 0, 0, fmt.Errorf("gpu: module %s has no kernel %s", m.src.Model, k.Name)
}

// rosIndex returns the index of the record (or adjoint) kernel k in
// its table (the Rosenbrock or the explicit methods').
func (m *emuModule) rosIndex(k Kernel, adjoint bool) (int, error) {
	name := k.Name
	i := 0
	if k.Family == ERK {
		for _, kk := range m.src.Kernels {
			if !kk.Float32 && ((adjoint && kk.Kind == emitcuda.Adjoint) || (!adjoint && kk.Kind == emitcuda.Record)) {
				if kk.Name == name {
					return i, nil
				}
				i++
			}
		}
		return 0, fmt.Errorf("gpu: module %s has no kernel %s", m.src.Model, name)
	}
	for _, kk := range m.src.RosKernels {
		if (adjoint && kk.Adjoint) || (!adjoint && kk.Record) {
			if kk.Name == name {
				return i, nil
			}
			i++
		}
	}
	return 0, fmt.Errorf("gpu: module %s has no kernel %s", m.src.Model, name)
}

// Run runs each chunk of b as one run of the program.
func (m *emuModule) Run(k Kernel, s *Settings, b *Batch, chunk int, stop *atomic.Bool) (int, error) {
	return m.run(k, s, b, nil, chunk, stop)
}

// Record runs a record kernel's chunks, each one run of the program.
func (m *emuModule) Record(k Kernel, s *Settings, b *Batch, ms *Meshes, chunk int, stop *atomic.Bool) (int, error) {
	return m.run(k, s, b, ms, chunk, stop)
}

// Adjoint runs an adjoint kernel's chunks, each one run of the program.
func (m *emuModule) Adjoint(k Kernel, s *Settings, a *AdjBatch, chunk int, stop *atomic.Bool) (int, error) {
	ki, err := m.rosIndex(k, true)
	if err != nil {
		return 0, err
	}
	chunk = max(1, chunk)
	for lo := 0; lo < a.N; lo += chunk {
		if stop.Load() {
			return lo, nil
		}
		c := a.Slice(lo, min(lo+chunk, a.N))
		var e cudaemu.Encoder
		dense := 0
		if s.DenseSave {
			dense = 1
		}
		fam := 3
		if k.Family == ERK {
			fam = 5
		}
		for _, v := range []int{fam, ki, c.N, c.K, dense, c.Mesh.Cap, m.dev.grid, m.dev.block} {
			e.Int(int64(v))
		}
		e.Floats(c.P)
		e.Floats(c.Save)
		for _, v := range c.Mesh.Steps {
			e.Int(v)
		}
		for _, v := range [][]float64{c.Mesh.T, c.Mesh.H, c.Mesh.Y, c.CotY} {
			e.Floats(v)
		}
		if c.CotSaved != nil {
			e.Int(1)
			e.Floats(c.CotSaved)
		} else {
			e.Int(0)
		}
		out, err := cudaemu.Run(context.Background(), m.exe, e.Bytes())
		if err != nil {
			return lo, fmt.Errorf("gpu: the emulated launch of %s: %w", k.Name, err)
		}
		d := cudaemu.NewDecoder(out)
		copy(c.GY0, d.Floats(len(c.GY0)))
		copy(c.GP, d.Floats(len(c.GP)))
		if d.Err != nil || d.Rest() != 0 {
			return lo, fmt.Errorf("gpu: the emulated launch of %s: output: %v, %d bytes left over", k.Name, d.Err, d.Rest())
		}
	}
	return a.N, nil
}

// run runs a forward kernel's chunks (ms nil) or a record kernel's.
func (m *emuModule) run(k Kernel, s *Settings, b *Batch, ms *Meshes, chunk int, stop *atomic.Bool) (int, error) {
	fam, ki, err := 0, 0, error(nil)
	if ms != nil {
		fam = 2
		if k.Family == ERK {
			fam = 4
		}
		ki, err = m.rosIndex(k, false)
	} else {
		fam, ki, err = m.index(k)
	}
	if err != nil {
		return 0, err
	}
	chunk = max(1, chunk)
	for lo := 0; lo < b.N; lo += chunk {
		if stop.Load() {
			return lo, nil
		}
		c := b.Slice(lo, min(lo+chunk, b.N))
		var e cudaemu.Encoder
		dense := 0
		if s.DenseSave {
			dense = 1
		}
		e.Int(int64(fam))
		e.Int(int64(ki))
		if ms != nil {
			e.Int(int64(ms.Cap))
		}
		for _, v := range []int{c.N, c.K, s.MaxSteps, dense} {
			e.Int(int64(v))
		}
		ctl := s.Controller
		e.Floats([]float64{s.HMax, s.H0, ctl.Beta1, ctl.Beta2, ctl.Safety, ctl.QMin, ctl.QMax, ctl.QOldInit})
		e.Int(int64(m.dev.grid))
		e.Int(int64(m.dev.block))
		for _, v := range [][]float64{s.RTol, s.ATol, c.T0, c.T1, c.Y0, c.P, c.Save} {
			e.Floats(v)
		}
		out, err := cudaemu.Run(context.Background(), m.exe, e.Bytes())
		if err != nil {
			return lo, fmt.Errorf("gpu: the emulated launch of %s: %w", k.Name, err)
		}
		d := cudaemu.NewDecoder(out)
		for _, f := range [][]float64{c.Y, c.T, c.H, c.Saved} {
			copy(f, d.Floats(len(f)))
		}
		counters := [][]int64{c.Status, c.Accepted, c.Rejected, c.FEvals}
		if fam == 1 || fam == 2 || fam == 7 {
			counters = append(counters, c.JacEvals, c.LUs)
		}
		for _, f := range counters {
			copy(f, d.Ints(len(f)))
		}
		if ms != nil {
			cm := ms.Slice(lo, lo+c.N)
			copy(cm.Steps, d.Ints(c.N))
			for _, f := range [][]float64{cm.T, cm.H, cm.Y} {
				copy(f, d.Floats(len(f)))
			}
		}
		if d.Err != nil || d.Rest() != 0 {
			return lo, fmt.Errorf("gpu: the emulated launch of %s: output: %v, %d bytes left over", k.Name, d.Err, d.Rest())
		}
	}
	return b.N, nil
}
