// Package gpu registers the CUDA engine, "cuda": one trajectory per GPU
// thread, in kernels that package sym/emitcuda writes from the
// problem's formulas (Problem.Symbolic), loaded through package
// internal/cuda (the driver API and NVRTC through purego, no cgo).
//
// The engine is a Backend (the CUDA driver's devices, or the emulated
// device that compiles the same source with the host's C++ compiler)
// and everything else: the source of a job (generated once per problem
// and set of sensitivity columns, every built-in explicit method's
// kernel in it), the batches the front end hands its one worker per
// device (engine.LaneSolver: Lanes() trajectories at a time), their
// launches in chunks sized from the device's memory on two streams,
// and the results, written as cpu-erk's Solver writes them.
//
// It runs the forward and forward-sensitivity jobs of the explicit
// methods (cpu-erk's bits) and of the Rosenbrock methods (cpu-ros's
// bits, DenseSave where the method has a continuous extension; the
// references per family: engine.FamilyReference), both families'
// recordings (the record kernels) and their gradients (the adjoint
// kernels, in a LaneReplayer), float32 forward and sensitivity jobs of
// both families on a backend that runs the float32 kernels
// (Float32Backend: both backends), and refuses the rest in the Go API's
// terms: float32 in a recording, and problems without a symbolic form. On a real
// device it first self-tests (Available, SelfTestEnv). Where the driver, a device or NVRTC
// is missing it says "unavailable: <reason>" (engine.Availability) and
// refuses everything with that reason, so the router passes it by and
// names it in the result's EngineReason.
//
// Registration: "cuda" (the CUDA backend) always, at Priority, above the
// CPU engines: on a machine with a GPU the router picks it for the
// ensembles it prefers (Prefers: at least MinPreferred trajectories).
// "cuda-emu" (the emulated backend) only where the environment variable
// GRADSOLVE_CUDA_EMULATE=1 is set, at priority −1, so that the router
// never picks it: it runs only where named (--engine cuda-emu). The
// conformance suite registers an emulated engine of its own.
package gpu

import (
	"fmt"
	"os"
	"sync"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/internal/cuda"
	"github.com/gradsolve/gradsolve/internal/engine"
	"github.com/gradsolve/gradsolve/internal/engine/cpu"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/sym/emitcuda"
	"github.com/gradsolve/gradsolve/sym/tape"
)

func init() {
	engine.Register(New("cuda", &CUDA{}, Config{Priority: Priority}))
	if os.Getenv("GRADSOLVE_CUDA_EMULATE") == "1" {
		engine.Register(New("cuda-emu", &Emulated{}, Config{Priority: -1}))
	}
}

// Priority is the cuda engine's priority: above the CPU engines' (0
// and the lane engines' 1), so that where it can run and prefers a
// request the router picks it; where it cannot run it refuses with
// "unavailable: …" and the router falls back to the CPU, naming the
// reason.
const Priority = 10

// MinPreferred is the smallest ensemble the router hands the cuda
// engine: below it a launch (and a kernel's first compile) costs more
// than the CPU engines take.
const MinPreferred = 4096

// DefaultBatch is the most trajectories a worker holds at once (Lanes),
// where Config.Batch is 0.
const DefaultBatch = 1 << 18

// Config sets an engine's sizes.
type Config struct {
	// Priority is the engine's priority (engine.Engine.Priority).
	Priority int
	// Batch is the most trajectories the worker takes from the front
	// end at once (LaneSolver.Lanes, at most the ensemble); 0 means
	// DefaultBatch.
	Batch int
	// Chunk is the most trajectories per launch; 0 means as many as
	// half the device's free memory holds (the two streams' buffers
	// share it), and at most half a batch, so that two streams
	// overlap one chunk's copies with another's kernel.
	Chunk int
}

// Engine is the CUDA engine on a backend.
type Engine struct {
	name    string
	backend Backend
	cfg     Config

	mu      sync.Mutex
	sources map[sourceKey]*emitcuda.Source

	selfOnce sync.Once
	selfErr  error
}

// New returns an engine of the given name on backend b. Nothing is
// loaded until the engine is first asked (Available).
func New(name string, b Backend, cfg Config) *Engine {
	return &Engine{name: name, backend: b, cfg: cfg, sources: map[sourceKey]*emitcuda.Source{}}
}

// NewEmulated returns an engine on the emulated device (Emulated{}),
// for tests and the dry run of bench/gpu: it is registered by whoever
// wants it.
func NewEmulated(name string, cfg Config) *Engine { return New(name, &Emulated{}, cfg) }

// Name returns the engine's name.
func (e *Engine) Name() string { return e.name }

// Priority returns Config.Priority.
func (e *Engine) Priority() int { return e.cfg.Priority }

// Reference returns "cpu-erk", whose bits the explicit kernels give
// (in the emulation, checked by the conformance suite; on a device with
// --fmad=false, checked by the self-test). The Rosenbrock kernels give
// cpu-ros's: ReferenceFor (engine.FamilyReference).
func (e *Engine) Reference() string { return "cpu-erk" }

// ReferenceFor returns the engine whose bits the kernels of m give:
// cpu-erk for the explicit methods, cpu-ros for the Rosenbrock methods.
func (e *Engine) ReferenceFor(m method.Method) string {
	if m.Family() == method.RosenbrockFamily {
		return "cpu-ros"
	}
	return "cpu-erk"
}

// Runs reports whether m is an explicit Runge–Kutta method or a
// Rosenbrock method, the families the kernels have.
func (e *Engine) Runs(m method.Method) bool {
	return m.Family() == method.ExplicitFamily || m.Family() == method.RosenbrockFamily
}

// DefaultMethod returns method.Rodas5P for a problem marked stiff (the
// engine writes its Jacobian from the problem's formulas, as it does for
// every Rosenbrock kernel), else method.Tsit5: the router's defaults.
func (e *Engine) DefaultMethod(prob *ode.Problem) method.Method {
	if prob != nil && prob.Stiff {
		return method.Rodas5P
	}
	return method.Tsit5
}

// ReferenceJobs returns the jobs whose bits the engine claims to be its
// reference's for the explicit methods (engine.PartialReference):
// Forward and Sensitivities; ReferenceJobsFor says it per method.
func (e *Engine) ReferenceJobs() []engine.Job {
	return []engine.Job{engine.Forward, engine.Sensitivities}
}

// ReferenceJobsFor returns the jobs whose bits the engine claims to be
// m's reference's: Forward, Sensitivities, and Record (with its replays
// and gradients) for the Rosenbrock methods, and for the explicit
// methods once their record and adjoint kernels exist
// (erkRecordKernels).
func (e *Engine) ReferenceJobsFor(m method.Method) []engine.Job {
	if m.Family() == method.RosenbrockFamily || erkRecordKernels {
		return []engine.Job{engine.Forward, engine.Sensitivities, engine.Record}
	}
	return e.ReferenceJobs()
}

// erkRecordKernels says whether sym/emitcuda writes the explicit
// methods' record and adjoint kernels (gs_erk_<method>_record,
// gs_erk_<method>_adjoint): it does, so Record runs with the explicit
// methods as with the Rosenbrock methods.
const erkRecordKernels = true

// Available returns nil where the backend has a device, else its
// error, wrapping cuda.ErrUnavailable, whose text starts with
// "unavailable: " and says which of the driver, a device and NVRTC (or
// the emulation's C++ compiler) is missing.
//
// On a backend that asks for it (SelfTester: the real CUDA backend),
// the first call also runs the self-test on device 0, once per
// process: two small generated sources compiled by the device's NVRTC,
// a Lorenz ensemble with Tsit5 forward and with sensitivities and with
// Rodas5P forward, every output compared with cpu-erk's and cpu-ros's
// bits computed in the process. Any failure or difference makes the
// engine unavailable with the reason ("unavailable: self-test on
// device 0 failed: Tsit5 forward job: trajectory 2's y differs from
// cpu-erk's (…)"), so the router falls back to the CPU
// and names it. GRADSOLVE_CUDA_SELFTEST=off (SelfTestEnv) skips it.
func (e *Engine) Available() error {
	if _, err := e.backend.Devices(); err != nil {
		return err
	}
	if st, ok := e.backend.(SelfTester); ok && st.SelfTest() && !selfTestSkipped() {
		e.selfOnce.Do(func() {
			if err := e.selfTest(); err != nil {
				e.selfErr = fmt.Errorf("%w: %w", cuda.ErrUnavailable, err)
			}
		})
		return e.selfErr
	}
	return nil
}

// Loaded is Available (kept for the name the loading code's tests
// used).
func (e *Engine) Loaded() error { return e.Available() }

// errRecordFloat32 refuses a float32 Record job.
var errRecordFloat32 = fmt.Errorf("Options.Precision float32: the cuda engine records meshes and takes gradients in float64 only (its record and adjoint kernels are float64); float32 runs forward and forward-sensitivity jobs")

// float32Kernels says whether sym/emitcuda writes the float32 kernels
// gs_erk_<method>_f32[_sens<k>] and gs_ros_<method>_f32[_sens<k>]
// (Options.Float32): it does, and kernelFor and rosKernelFor find them
// by their Float32 mark.
const float32Kernels = true

// Float32Backend is a Backend that says whether its modules run the
// float32 kernels of both families (Kernel.Float32: the batch's states, parameters and
// tolerances rounded to float on the way in, the float results widened
// to float64 on the way out): nil where they do, else the reason. A
// backend that is not one refuses Options.Precision float32.
type Float32Backend interface {
	Float32() error
}

// symbolic returns the problem's tape.Set, or nil.
func symbolic(p *ode.Problem) *tape.Set {
	s, _ := p.Symbolic.(*tape.Set)
	if s == nil || s.Model == nil || s.F() == nil {
		return nil
	}
	return s
}

// devicesText says how many devices a backend has, "1 CUDA device (0)",
// "2 CUDA devices (0 to 1)".
func devicesText(n int, what string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s device (0)", what)
	}
	return fmt.Sprintf("%d %s devices (0 to %d)", n, what, n-1)
}

// Serves refuses, with the reason: everything where the backend cannot
// run (Available); a job other than Forward, Sensitivities and Record;
// DenseSave with an explicit method; float32 in a recording or on a
// backend without the float32 kernels; a problem without a symbolic form; a device index the machine does not
// have; and with a Rosenbrock method what cpu-ros refuses (DenseSave
// without a continuous extension, Sensitivity.ErrorTest).
func (e *Engine) Serves(req *engine.Request) error {
	if err := e.Available(); err != nil {
		return err
	}
	n, _ := e.backend.Devices()
	if req.Method != nil && req.Method.Family() == method.RosenbrockFamily {
		return e.servesRos(req, n)
	}
	switch {
	case req.Job != engine.Forward && req.Job != engine.Sensitivities && req.Job != engine.Record:
		return fmt.Errorf("the cuda engine runs forward, sensitivity and record jobs, not %v", req.Job)
	case req.DenseSave:
		return fmt.Errorf("DenseSave needs a Rosenbrock method with a continuous extension (Rodas5P, Rosenbrock23); %s re-steps its save times", req.Method.MethodName())
	case req.Float32 && req.Job == engine.Record:
		return errRecordFloat32
	case req.Float32 && e.float32() != nil:
		return e.float32()
	case symbolic(req.Problem) == nil:
		return fmt.Errorf("%s has no symbolic form (Problem.Symbolic): the cuda engine writes its kernels from the problem's formulas, so it runs problems compiled from them (package sym/tape, a .ode file), not Go functions", req.Name())
	case req.Device >= n:
		return fmt.Errorf("Options.Device = %d: the machine has %s", req.Device, devicesText(n, e.backend.Name()))
	}
	return nil
}

// servesRos is Serves for a Rosenbrock method: the kernels serve what
// cpu-ros serves, forward, sensitivities and recordings (replayed in
// reverse by the adjoint kernel), on a problem with a
// symbolic form (whose derivative programs the kernels are written
// from); float32 forward and sensitivity jobs where the backend runs
// the float32 kernels.
func (e *Engine) servesRos(req *engine.Request, n int) error {
	switch {
	case req.Job != engine.Forward && req.Job != engine.Sensitivities && req.Job != engine.Record:
		return fmt.Errorf("the cuda engine runs forward and sensitivity jobs, not %v", req.Job)
	case req.Float32 && req.Job == engine.Record:
		return errRecordFloat32
	case req.Float32 && e.float32() != nil:
		return e.float32()
	case symbolic(req.Problem) == nil:
		return fmt.Errorf("%s has no symbolic form (Problem.Symbolic): the cuda engine writes its kernels from the problem's formulas, so it runs problems compiled from them (package sym/tape, a .ode file), not Go functions", req.Name())
	case req.Device >= n:
		return fmt.Errorf("Options.Device = %d: the machine has %s", req.Device, devicesText(n, e.backend.Name()))
	}
	// What cpu-ros refuses besides precision (float32 is checked above:
	// cpu-ros computes in float64 only).
	r := *req
	r.Float32 = false
	return cpu.ROS{}.Serves(&r)
}

// float32 returns why the backend's modules cannot run the float32
// kernels, or nil.
func (e *Engine) float32() error {
	if !float32Kernels {
		return fmt.Errorf("Options.Precision float32: the cuda engine has no float32 kernels")
	}
	if fb, ok := e.backend.(Float32Backend); ok {
		return fb.Float32()
	}
	return fmt.Errorf("Options.Precision float32: the %s backend runs no float32 kernels", e.backend.Name())
}

// Prefers returns why the router should leave a request to the CPU: an
// ensemble smaller than MinPreferred.
func (e *Engine) Prefers(req *engine.Request) error {
	if req.N > 0 && req.N < MinPreferred {
		return fmt.Errorf("an ensemble of %d trajectories, below %d: a launch and the kernel's first compile cost more than the CPU takes", req.N, MinPreferred)
	}
	return nil
}

// sourceKey names a generated source: the model, the methods written
// (of one family) and the sensitivity columns.
type sourceKey struct {
	set     *tape.Set
	family  method.Family
	methods string
	sens    string
}

// builtins are the explicit methods every source has kernels for, so
// that one compile per problem (and set of columns) serves them all.
var builtins = []*method.Tableau{method.Tsit5, method.DP5, method.Vern7, method.DP8}

// source returns the generated source of set with the forward kernels
// of the built-in explicit methods (and tb, if it is another) and, for
// sens, their sensitivity kernels: generated once per key. With record
// it has the record and adjoint kernels instead of sensitivity kernels
// (a Record job's source).
//
// With f32 it also has the float32 twins of the forward and sensitivity
// kernels (Options.Float32).
func (e *Engine) source(set *tape.Set, tb *method.Tableau, sens *emitcuda.Sens, record, f32 bool) (*emitcuda.Source, error) {
	methods := builtins
	if !isBuiltin(tb) {
		methods = append(append([]*method.Tableau(nil), builtins...), tb)
	}
	key := sourceKey{set: set, methods: fmt.Sprintf("%p", tb)}
	if isBuiltin(tb) {
		key.methods = "builtins"
	}
	opts := emitcuda.Options{Methods: methods, Float32: f32 && !record}
	if opts.Float32 {
		key.methods += " float32"
	}
	switch {
	case record:
		key.sens = "record"
		opts.Record, opts.Adjoint = true, true
	case sens != nil:
		key.sens = fmt.Sprint(sens.Cols, sens.ErrorTest)
		opts.Sens = []emitcuda.Sens{*sens}
	}
	return e.generate(key, set, opts)
}

// generate returns the source of set generated with opts, once per key
// (the sources stay in e.sources for the engine's life).
func (e *Engine) generate(key sourceKey, set *tape.Set, opts emitcuda.Options) (*emitcuda.Source, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if s, ok := e.sources[key]; ok {
		return s, nil
	}
	s, err := emitcuda.Generate(set, opts)
	if err != nil {
		return nil, err
	}
	e.sources[key] = s
	return s, nil
}

// rosBuiltins are the Rosenbrock methods every Rosenbrock source has
// kernels for.
var rosBuiltins = []*method.Rosenbrock{method.Rosenbrock23, method.Rodas5P}

// rosSource returns the generated source of set with the kernels of the
// built-in Rosenbrock methods (and rt, if it is another) and, for sens,
// their sensitivity kernels: generated once per key.
//
// With record it has the record and adjoint kernels instead of
// sensitivity kernels (a Record job's source); with f32 (and not
// record) also the float32 twins of the forward and sensitivity
// kernels.
func (e *Engine) rosSource(set *tape.Set, rt *method.Rosenbrock, sens *emitcuda.Sens, record, f32 bool) (*emitcuda.Source, error) {
	methods := rosBuiltins
	key := sourceKey{set: set, family: method.RosenbrockFamily, methods: "builtins"}
	if rt != method.Rosenbrock23 && rt != method.Rodas5P {
		methods = append(append([]*method.Rosenbrock(nil), rosBuiltins...), rt)
		key.methods = fmt.Sprintf("%p", rt)
	}
	opts := emitcuda.Options{Methods: []*method.Tableau{}, Rosenbrock: methods, Float32: f32 && !record}
	if opts.Float32 {
		key.methods += " float32"
	}
	switch {
	case record:
		key.sens = "record"
		opts.RosRecord, opts.RosAdjoint = true, true
	case sens != nil:
		key.sens = fmt.Sprint(sens.Cols)
		opts.Sens = []emitcuda.Sens{*sens}
	}
	return e.generate(key, set, opts)
}

// rosKernelOf returns the record (adjoint false) or adjoint kernel of
// src that runs rt.
func rosKernelOf(src *emitcuda.Source, rt *method.Rosenbrock, adjoint bool) (emitcuda.RosKernel, error) {
	for _, k := range src.RosKernels {
		if k.Method == rt && ((adjoint && k.Adjoint) || (!adjoint && k.Record)) {
			return k, nil
		}
	}
	return emitcuda.RosKernel{}, fmt.Errorf("gpu: the generated source of %s has no record or adjoint kernel of %s", src.Model, rt.Name)
}

// rosKernelFor returns the Rosenbrock kernel of src that runs rt: the
// forward kernel, or with sens the sensitivity kernel; the float64 one,
// or with f32 the float32 one.
func rosKernelFor(src *emitcuda.Source, rt *method.Rosenbrock, sens, f32 bool) (emitcuda.RosKernel, error) {
	for _, k := range src.RosKernels {
		if k.Method == rt && !k.Record && !k.Adjoint && (k.Sens >= 0) == sens && k.Float32 == f32 {
			return k, nil
		}
	}
	return emitcuda.RosKernel{}, fmt.Errorf("gpu: the generated source of %s has no kernel of %s", src.Model, rt.Name)
}

func isBuiltin(tb *method.Tableau) bool {
	for _, b := range builtins {
		if tb == b {
			return true
		}
	}
	return false
}

// kernelFor returns the kernel of src of the given kind that runs tb:
// the float64 one, or with f32 the float32 one.
func kernelFor(src *emitcuda.Source, tb *method.Tableau, kind emitcuda.KernelKind, f32 bool) (emitcuda.Kernel, error) {
	for _, k := range src.Kernels {
		if k.Method == tb && k.Kind == kind && k.Float32 == f32 {
			return k, nil
		}
	}
	return emitcuda.Kernel{}, fmt.Errorf("gpu: the generated source of %s has no kernel of %s (kind %d)", src.Model, tb.Name, kind)
}

// Prepare generates the job's source (once per problem and columns),
// compiles it for the device (once per source) and returns the plan.
func (e *Engine) Prepare(spec *engine.Spec) (engine.Plan, error) {
	if err := e.Serves(&spec.Request); err != nil {
		return nil, err
	}
	return e.prepare(spec)
}

// prepare is Prepare without Serves's checks (the self-test's, which
// Available runs before the engine serves anything).
func (e *Engine) prepare(spec *engine.Spec) (engine.Plan, error) {
	if rt, ok := spec.Method.(*method.Rosenbrock); ok {
		return e.prepareRos(spec, rt)
	}
	tb, ok := spec.Method.(*method.Tableau)
	if !ok {
		return nil, fmt.Errorf("the cuda engine does not run %s", spec.Method.MethodName())
	}
	set := symbolic(spec.Problem)
	dim := spec.Problem.Dim
	var sens *emitcuda.Sens
	if spec.Job == engine.Sensitivities {
		sens = &emitcuda.Sens{Cols: append([]int(nil), spec.SensCols...), ErrorTest: spec.ErrorTest}
	}
	record := spec.Job == engine.Record
	f32 := spec.Float32 && !record
	src, err := e.source(set, tb, sens, record, f32)
	if err != nil {
		return nil, fmt.Errorf("%s: generating the CUDA source: %w", spec.Name(), err)
	}
	kind := emitcuda.Forward
	switch {
	case record:
		kind = emitcuda.Record
	case sens != nil:
		kind = emitcuda.Sensitivities
	}
	k, err := kernelFor(src, tb, kind, f32)
	var adj emitcuda.Kernel
	if err == nil && record {
		adj, err = kernelFor(src, tb, emitcuda.Adjoint, false)
	}
	if err != nil {
		return nil, err
	}
	dev, err := e.backend.Open(spec.Device)
	if err != nil {
		return nil, err
	}
	mod, err := dev.Load(src)
	if err != nil {
		return nil, err
	}
	pl := &plan{e: e, spec: spec, dev: dev, mod: mod, kernel: erkKernel(k), dim: dim}
	if record {
		rec, ok := mod.(Recorder)
		if !ok {
			return nil, fmt.Errorf("gpu: the %s device's modules run no record kernels", e.backend.Name())
		}
		pl.rec, pl.adjoint = rec, erkKernel(adj)
	}
	pl.set = Settings{MaxSteps: spec.MaxSteps, HMax: hmaxOf(spec.HMax), H0: spec.H0}
	if spec.Controller != nil {
		pl.set.Controller = *spec.Controller
	} else {
		pl.set.Controller = control.DefaultPI(tb.Order, tb.QMin, tb.QMax)
	}
	// The norm's tolerances: the state's, repeated for each column when
	// the columns are in the norm (as cpu-erk's augmented tolerances).
	for len(pl.set.RTol) < k.NormDim {
		pl.set.RTol = append(pl.set.RTol, spec.RTol...)
		pl.set.ATol = append(pl.set.ATol, spec.ATol...)
	}
	pl.set.RTol, pl.set.ATol = pl.set.RTol[:k.NormDim], pl.set.ATol[:k.NormDim]
	return pl, nil
}

// prepareRos is prepare for a Rosenbrock method: the Rosenbrock source
// (once per problem and columns), its kernel of rt, and the settings
// as cpu-ros resolves them (the default controller of the error
// estimate's order; the state's tolerances alone in the norm).
func (e *Engine) prepareRos(spec *engine.Spec, rt *method.Rosenbrock) (engine.Plan, error) {
	set := symbolic(spec.Problem)
	var sens *emitcuda.Sens
	if spec.Job == engine.Sensitivities {
		sens = &emitcuda.Sens{Cols: append([]int(nil), spec.SensCols...)}
	}
	record := spec.Job == engine.Record
	f32 := spec.Float32 && !record
	src, err := e.rosSource(set, rt, sens, record, f32)
	if err != nil {
		return nil, fmt.Errorf("%s: generating the CUDA source: %w", spec.Name(), err)
	}
	var k, adj emitcuda.RosKernel
	if record {
		if k, err = rosKernelOf(src, rt, false); err == nil {
			adj, err = rosKernelOf(src, rt, true)
		}
	} else {
		k, err = rosKernelFor(src, rt, sens != nil, f32)
	}
	if err != nil {
		return nil, err
	}
	dev, err := e.backend.Open(spec.Device)
	if err != nil {
		return nil, err
	}
	mod, err := dev.Load(src)
	if err != nil {
		return nil, err
	}
	pl := &plan{e: e, spec: spec, dev: dev, mod: mod, kernel: rosKernel(k), dim: spec.Problem.Dim}
	if record {
		rec, ok := mod.(Recorder)
		if !ok {
			return nil, fmt.Errorf("gpu: the %s device's modules run no record kernels", e.backend.Name())
		}
		pl.rec, pl.adjoint = rec, rosKernel(adj)
	}
	pl.set = Settings{MaxSteps: spec.MaxSteps, HMax: hmaxOf(spec.HMax), H0: spec.H0, DenseSave: spec.DenseSave,
		RTol: spec.RTol, ATol: spec.ATol}
	if spec.Controller != nil {
		pl.set.Controller = *spec.Controller
	} else {
		pl.set.Controller = control.DefaultPI(rt.EstimateOrder(), rt.QMin, rt.QMax) // as cpu-ros
	}
	return pl, nil
}
