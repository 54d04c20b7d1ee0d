package gpu

import (
	"fmt"
	"unsafe"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/internal/cuda"
	"github.com/gradsolve/gradsolve/sym/emitcuda"
)

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

// Input is one forward launch's inputs, in gs_erk_job's terms (see
// docs/gpu.md): n trajectories of a kernel's Dim and the model's
// NumParams, K save times shared (SaveStride 0) or per trajectory
// (SaveStride K), the resolved options (HMax +Inf for none, H0 0 for
// automatic, the controller, the tolerances of the norm's NormDim
// components).
type Input struct {
	T0, T1, Y0, P, Save []float64
	K, SaveStride       int
	MaxSteps            int
	HMax, H0            float64
	Controller          control.PI
	RTol, ATol          []float64
}

// Output is a forward launch's results, as gs_erk_job's outputs.
type Output struct {
	Y, T, H, Saved                     []float64
	Status, Accepted, Rejected, FEvals []int64
}

// Block is the number of threads per block of a launch.
const Block = 128

// Forward runs kernel k of src on the engine's device for the
// trajectories of in: compile (cached per source), copy the inputs,
// launch, synchronize, copy the results back. It is not yet called by
// the front end; where the driver, device or NVRTC is missing it
// returns Loaded's error. Tested here only against the fake driver's plumbing (no GPU).
func (e *Engine) Forward(src *emitcuda.Source, k emitcuda.Kernel, in *Input) (*Output, error) {
	if err := e.Loaded(); err != nil {
		return nil, err
	}
	n := len(in.T0)
	switch {
	case n == 0:
		return nil, fmt.Errorf("gpu: Forward of no trajectories")
	case len(in.T1) != n || len(in.Y0) != n*k.Dim || len(in.P) != n*src.NumParams:
		return nil, fmt.Errorf("gpu: Forward: %d t0, %d t1, %d y0, %d p for %d trajectories of dim %d with %d parameters",
			len(in.T0), len(in.T1), len(in.Y0), len(in.P), n, k.Dim, src.NumParams)
	case in.SaveStride != 0 && in.SaveStride != in.K:
		return nil, fmt.Errorf("gpu: Forward: SaveStride %d, want 0 or K = %d", in.SaveStride, in.K)
	case in.SaveStride == 0 && len(in.Save) != in.K || in.SaveStride != 0 && len(in.Save) != n*in.K:
		return nil, fmt.Errorf("gpu: Forward: %d save times for K = %d, SaveStride %d", len(in.Save), in.K, in.SaveStride)
	case len(in.RTol) != k.NormDim || len(in.ATol) != k.NormDim:
		return nil, fmt.Errorf("gpu: Forward: %d rtol, %d atol for a norm of %d components", len(in.RTol), len(in.ATol), k.NormDim)
	case in.MaxSteps < 1:
		return nil, fmt.Errorf("gpu: Forward: MaxSteps %d, want ≥ 1", in.MaxSteps)
	}
	dev := e.dev
	mod, err := dev.Module(string(src.Code), src.Model+".cu")
	if err != nil {
		return nil, err
	}
	fn, err := mod.Function(k.Name)
	if err != nil {
		return nil, err
	}
	out := &Output{
		Y: make([]float64, n*k.Dim), T: make([]float64, n), H: make([]float64, n),
		Saved:  make([]float64, n*in.K*k.Dim),
		Status: make([]int64, n), Accepted: make([]int64, n), Rejected: make([]int64, n), FEvals: make([]int64, n),
	}
	var bufs []cuda.Ptr
	defer func() {
		for _, p := range bufs {
			dev.Free(p)
		}
	}()
	// alloc returns device memory for count 8-byte values (one at
	// least, so that an empty array has a valid address), filled from
	// init where given.
	alloc := func(count int, init []float64) (cuda.Ptr, error) {
		p, err := dev.Alloc(8 * max(count, 1))
		if err != nil {
			return 0, err
		}
		bufs = append(bufs, p)
		return p, cuda.CopyIn(dev, p, init)
	}
	ctl := in.Controller
	job := Job{N: int64(n), NSave: int64(in.K), SaveStride: int64(in.SaveStride), MaxSteps: int64(in.MaxSteps),
		HMax: in.HMax, H0: in.H0,
		Beta1: ctl.Beta1, Beta2: ctl.Beta2, Safety: ctl.Safety, QMin: ctl.QMin, QMax: ctl.QMax, QOldInit: ctl.QOldInit}
	for _, a := range []struct {
		p     *cuda.Ptr
		count int
		init  []float64
	}{
		{&job.RTol, len(in.RTol), in.RTol}, {&job.ATol, len(in.ATol), in.ATol},
		{&job.T0, n, in.T0}, {&job.T1, n, in.T1}, {&job.Y0, len(in.Y0), in.Y0}, {&job.P, len(in.P), in.P},
		{&job.Save, len(in.Save), in.Save},
		{&job.Y, len(out.Y), nil}, {&job.T, n, nil}, {&job.H, n, nil}, {&job.Saved, len(out.Saved), nil},
		{&job.Status, n, nil}, {&job.Accepted, n, nil}, {&job.Rejected, n, nil}, {&job.FEvals, n, nil},
	} {
		if *a.p, err = alloc(a.count, a.init); err != nil {
			return nil, err
		}
	}
	grid := uint32((n + Block - 1) / Block)
	if err := fn.Launch(grid, Block, unsafe.Pointer(&job)); err != nil {
		return nil, err
	}
	if err := dev.Synchronize(); err != nil {
		return nil, err
	}
	for _, c := range []error{
		cuda.CopyOut(dev, out.Y, job.Y), cuda.CopyOut(dev, out.T, job.T), cuda.CopyOut(dev, out.H, job.H),
		cuda.CopyOut(dev, out.Saved, job.Saved), cuda.CopyOut(dev, out.Status, job.Status),
		cuda.CopyOut(dev, out.Accepted, job.Accepted), cuda.CopyOut(dev, out.Rejected, job.Rejected),
		cuda.CopyOut(dev, out.FEvals, job.FEvals),
	} {
		if c != nil {
			return nil, c
		}
	}
	return out, nil
}
