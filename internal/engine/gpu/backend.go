package gpu

import (
	"math"
	"sync/atomic"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/sym/emitcuda"
)

// Backend is where the engine's kernels run: the CUDA driver's devices
// (CUDA, package internal/cuda) or the host, where the same generated
// source is compiled with the system C++ compiler against cudaemu's
// header and run as a program (Emulated). The engine does everything
// else — the source, the batches, the results — the same way on both.
type Backend interface {
	// Name says what the backend is, for messages ("CUDA", "emulated
	// CUDA").
	Name() string
	// Devices returns the number of devices, loading what the backend
	// needs once (the driver and NVRTC; the C++ compiler), or an error
	// wrapping cuda.ErrUnavailable that says what is missing.
	Devices() (int, error)
	// Open returns device n (0 ≤ n < Devices()), opened once and kept.
	Open(n int) (Device, error)
}

// Device is one device of a Backend.
type Device interface {
	// Load compiles src for the device (once per source) and returns
	// its module.
	Load(src *emitcuda.Source) (Module, error)
	// Memory returns the bytes of device memory a batch's launches may
	// use (a share of what is free), for the size of a chunk.
	Memory() (int64, error)
}

// Module is a loaded source.
type Module interface {
	// Run runs kernel k on the trajectories of b with the settings s,
	// at most chunk trajectories per launch, in order. It polls stop
	// before each launch and stops launching once it is set; it
	// returns how many trajectories (a prefix of b) have their results
	// written. An error is a failure of the device or the program, not
	// of a trajectory.
	Run(k Kernel, s *Settings, b *Batch, chunk int, stop *atomic.Bool) (done int, err error)
}

// Family is the kind of a kernel's job argument.
type Family int

const (
	// ERK kernels take gs_erk_job (the explicit methods:
	// emitcuda.Kernel).
	ERK Family = iota
	// ROS kernels take gs_ros_job, gs_erk_job's fields then dense_save,
	// jac_evals and lus (the Rosenbrock methods: emitcuda.RosKernel).
	ROS
)

// Kernel is a kernel as a Module runs it: its name, family, state size
// (the rows of y0, y and saved) and the number of components of the
// error norm (the length of the tolerances).
//
// Float32 marks a float32 kernel (gs_erk_job_f32, or gs_ros_job_f32 of
// a ROS kernel): the module rounds
// the batch's states, parameters and tolerances to float for it and
// widens its float results back (Float32Backend).
type Kernel struct {
	Name         string
	Family       Family
	Dim, NormDim int
	Float32      bool
}

// erkKernel and rosKernel describe the generated kernels.
func erkKernel(k emitcuda.Kernel) Kernel {
	return Kernel{Name: k.Name, Family: ERK, Dim: k.Dim, NormDim: k.NormDim, Float32: k.Float32}
}

func rosKernel(k emitcuda.RosKernel) Kernel {
	return Kernel{Name: k.Name, Family: ROS, Dim: k.Dim, NormDim: k.NormDim, Float32: k.Float32}
}

// Settings are a launch's options as gs_erk_job holds them: the step
// budget, hmax (+Inf for none), h0 (0: automatic), the controller, and
// the tolerances of the error norm's components (NormDim of each).
type Settings struct {
	MaxSteps   int
	HMax, H0   float64
	Controller control.PI
	RTol, ATol []float64
	// DenseSave takes the save times from the continuous extension
	// (gs_ros_job's dense_save; ROS kernels only).
	DenseSave bool
}

// Batch holds the trajectories of launches on the host, in gs_erk_job's
// layout: row i of each array is trajectory i. Save times are always
// per trajectory (save_stride K). Status holds ode.Status values.
type Batch struct {
	// N is the number of trajectories; Dim the kernel's state (the
	// augmented one for sensitivities), NP the parameters, K the save
	// times of each trajectory.
	N, Dim, NP, K int
	// The inputs.
	T0, T1, Y0, P, Save []float64
	// The outputs.
	Y, T, H, Saved                     []float64
	Status, Accepted, Rejected, FEvals []int64
	// JacEvals and LUs are the ROS kernels' counters (left as they are
	// by ERK kernels).
	JacEvals, LUs []int64
}

// NewBatch returns a batch of room for n trajectories.
func NewBatch(n, dim, np, k int) *Batch {
	return &Batch{N: n, Dim: dim, NP: np, K: k,
		T0: make([]float64, n), T1: make([]float64, n), Y0: make([]float64, n*dim), P: make([]float64, n*np),
		Save: make([]float64, n*k),
		Y:    make([]float64, n*dim), T: make([]float64, n), H: make([]float64, n), Saved: make([]float64, n*k*dim),
		Status: make([]int64, n), Accepted: make([]int64, n), Rejected: make([]int64, n), FEvals: make([]int64, n),
		JacEvals: make([]int64, n), LUs: make([]int64, n)}
}

// Slice returns the trajectories [lo, hi) of b as a batch sharing b's
// arrays.
func (b *Batch) Slice(lo, hi int) *Batch {
	d, np, k := b.Dim, b.NP, b.K
	return &Batch{N: hi - lo, Dim: d, NP: np, K: k,
		T0: b.T0[lo:hi], T1: b.T1[lo:hi], Y0: b.Y0[lo*d : hi*d], P: b.P[lo*np : hi*np], Save: b.Save[lo*k : hi*k],
		Y: b.Y[lo*d : hi*d], T: b.T[lo:hi], H: b.H[lo:hi], Saved: b.Saved[lo*k*d : hi*k*d],
		Status: b.Status[lo:hi], Accepted: b.Accepted[lo:hi], Rejected: b.Rejected[lo:hi], FEvals: b.FEvals[lo:hi],
		JacEvals: b.JacEvals[lo:hi], LUs: b.LUs[lo:hi]}
}

// bytesPer returns the device memory of one trajectory of a kernel of
// state dim with np parameters and k save times: its inputs and
// outputs, 8 bytes each.
func bytesPer(dim, np, k int) int64 {
	in := 2 + dim + np + k
	out := dim + 2 + k*dim + 6 // the ROS kernels' two more counters
	return 8 * int64(in+out)
}

// hmaxOf returns gs_erk_job's hmax of a Spec's HMax (0: no bound).
func hmaxOf(h float64) float64 {
	if h == 0 {
		return math.Inf(1)
	}
	return h
}

// Recorder is a Module that also runs record kernels
// (gs_ros_<method>_record) and adjoint kernels
// (gs_ros_<method>_adjoint): both backends' modules are.
type Recorder interface {
	Module
	// Record runs record kernel k on b as Run runs a forward kernel,
	// and writes each trajectory's mesh into m (m.Cap steps of room;
	// a trajectory that needs more ends Cancelled with Steps = Cap).
	Record(k Kernel, s *Settings, b *Batch, m *Meshes, chunk int, stop *atomic.Bool) (done int, err error)
	// Adjoint runs adjoint kernel k on the recorded meshes and
	// cotangents of a: ∂L/∂y0 and ∂L/∂p into a.GY0 and a.GP.
	Adjoint(k Kernel, s *Settings, a *AdjBatch, chunk int, stop *atomic.Bool) (done int, err error)
}

// Meshes are the meshes of a batch as gs_ros_mesh holds them: row i of
// T has t0 and the end of each accepted step (Cap + 1 values), of H the
// step sizes (Cap), of Y y0 and the state after each step ((Cap + 1)·Dim),
// and Steps[i] the steps recorded.
type Meshes struct {
	N, Cap, Dim int
	T, H, Y     []float64
	Steps       []int64
}

// NewMeshes returns room for n meshes of cap steps of dim values.
func NewMeshes(n, cap, dim int) *Meshes {
	return &Meshes{N: n, Cap: cap, Dim: dim, T: make([]float64, n*(cap+1)), H: make([]float64, n*cap),
		Y: make([]float64, n*(cap+1)*dim), Steps: make([]int64, n)}
}

// Slice returns meshes [lo, hi) sharing m's arrays.
func (m *Meshes) Slice(lo, hi int) *Meshes {
	c, d := m.Cap, m.Dim
	return &Meshes{N: hi - lo, Cap: c, Dim: d, T: m.T[lo*(c+1) : hi*(c+1)], H: m.H[lo*c : hi*c],
		Y: m.Y[lo*(c+1)*d : hi*(c+1)*d], Steps: m.Steps[lo:hi]}
}

// AdjBatch is a batch of adjoint jobs as gs_ros_job, gs_ros_mesh and
// gs_ros_adj take them: the parameters and save times (per trajectory),
// the meshes, the cotangents of the final states (N×Dim) and of the
// saved states (N×K×Dim, or nil for none), and the gradients' room.
type AdjBatch struct {
	N, Dim, NP, K  int
	P, Save        []float64
	Mesh           *Meshes
	CotY, CotSaved []float64
	GY0, GP        []float64
}

// Slice returns jobs [lo, hi) sharing a's arrays.
func (a *AdjBatch) Slice(lo, hi int) *AdjBatch {
	d, np, k := a.Dim, a.NP, a.K
	s := &AdjBatch{N: hi - lo, Dim: d, NP: np, K: k, P: a.P[lo*np : hi*np], Save: a.Save[lo*k : hi*k],
		Mesh: a.Mesh.Slice(lo, hi), CotY: a.CotY[lo*d : hi*d], GY0: a.GY0[lo*d : hi*d], GP: a.GP[lo*np : hi*np]}
	if a.CotSaved != nil {
		s.CotSaved = a.CotSaved[lo*k*d : hi*k*d]
	}
	return s
}
