package emitcuda

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/sym"
	"github.com/gradsolve/gradsolve/sym/tape"
)

//go:embed prelude.cuh
var prelude string

//go:embed erk.cuh
var erkDriver string

//go:embed erk32.cuh
var erk32Driver string

//go:embed erkrecord.cuh
var erkRecordDriver string

// Options choose the kernels of a Source.
type Options struct {
	// Methods are the explicit Runge–Kutta tableaus to write forward
	// kernels for, one kernel each. Nil means method.Tsit5, DP5, Vern7
	// and DP8; empty but not nil, none (the source then holds the device
	// functions alone). Each must pass Validate; their kernel names must
	// differ.
	Methods []*method.Tableau
	// Sens lists forward-sensitivity kernels to write, one per method
	// for each entry, beside the forward kernels.
	Sens []Sens
	// Rosenbrock are the Rosenbrock methods to write kernels for
	// (Source.RosKernels): a forward kernel gs_ros_<method>(gs_ros_job)
	// each, and one per entry of Sens, whose ErrorTest must then be
	// false. Nil or empty: none, and no derivative program is built.
	// Each must pass Validate; their kernel names must differ.
	Rosenbrock []*method.Rosenbrock
	// RosRecord also writes a record kernel gs_ros_<method>_record of
	// each Rosenbrock method (RosKernel.Record), after the others.
	RosRecord bool
	// RosAdjoint also writes an adjoint kernel gs_ros_<method>_adjoint
	// of each Rosenbrock method (RosKernel.Adjoint), after the others,
	// and the cotangent programs it calls.
	RosAdjoint bool
	// Float32 also writes float32 kernels: for every forward and
	// sensitivity kernel gs_erk_<method>[_sens<k>] a twin
	// gs_erk_<method>_f32[_sens<k>] taking a gs_erk_job_f32, and for
	// every Rosenbrock one gs_ros_<method>[_sens<k>] a twin
	// gs_ros_<method>_f32[_sens<k>] taking a gs_ros_job_f32, whose
	// states, parameters and tolerances are float (see docs/gpu.md).
	// The record and adjoint kernels stay float64 only.
	Float32 bool
	// Record also writes the record kernels gs_erk_<method>_record
	// (taking a gs_erk_record_job): the forward solve in double that
	// also writes each trajectory's mesh.
	Record bool
	// Adjoint also writes the adjoint kernels gs_erk_<method>_adjoint
	// (taking a gs_erk_adjoint_job): the discrete adjoint of the steps
	// of a mesh the record kernel wrote, in double, with the model's
	// cotangent program (tape.Set.VJP) emitted as gs_vjp.
	Adjoint bool
}

// KernelKind says what a kernel computes and which job it takes.
type KernelKind int

const (
	// Forward is a forward kernel (gs_erk_job, or gs_erk_job_f32).
	Forward KernelKind = iota
	// Sensitivities is a forward-sensitivity kernel (the same jobs).
	Sensitivities
	// Record is a record kernel (gs_erk_record_job).
	Record
	// Adjoint is an adjoint kernel (gs_erk_adjoint_job).
	Adjoint
)

// Sens describes the forward-sensitivity kernels of one set of columns:
// the state augmented with the columns S_c = ∂y/∂θ_c, integrated on the
// state's mesh as cpu-erk integrates them, with the fused sensitivity
// program of the model (tape.Set.SensProgram) as the right-hand side.
type Sens struct {
	// Cols holds one entry per column: the parameter index j of a
	// column ∂y/∂p_j, or −1 for a column of an initial value (whose
	// start, a unit vector, is in the augmented initial state), as
	// tape.Set.SensF takes them.
	Cols []int
	// ErrorTest puts the columns in the error norm
	// (gradsolve.Sensitivity.ErrorTest); false: the state alone
	// chooses the steps.
	ErrorTest bool
}

// Kernel describes one kernel of a Source.
type Kernel struct {
	// Name is the kernel's extern "C" name, gs_erk_<method> (the
	// method's name in lower case, other characters than letters and
	// digits dropped): what cuModuleGetFunction looks up.
	Name string
	// Method is the tableau whose steps it takes.
	Method *method.Tableau
	// Sens is the index in Options.Sens of a sensitivity kernel's
	// columns, −1 for a forward kernel; SensCols are those columns.
	Sens     int
	SensCols []int
	// Kind is what it computes (the zero value, Forward, for the
	// forward kernels). Float32 marks the float32 kernels.
	Kind    KernelKind
	Float32 bool
	// Dim is the size of its state: the rows of gs_erk_job's y0, y and
	// saved (the model's Dim·(1 + len(SensCols)): the state, then one
	// block of Dim values per column). NormDim is the number of leading
	// components in the error norm, the length of its rtol and atol.
	Dim, NormDim int
}

// Source is a generated CUDA C++ translation unit: the model's device
// functions, the math functions they call, the adaptive driver and one
// kernel per method.
type Source struct {
	// Model names the model; Dim and NumParams are its sizes.
	Model          string
	Dim, NumParams int
	// Code is the source. It includes no header, so that NVRTC can
	// compile it as it is (with --fmad=false; not tried yet, see
	// docs/gpu.md); clang compiles it for the device, and a host C++
	// compiler after cuda_emu.h (package internal/cudaemu).
	Code []byte
	// Kernels lists the kernels: the forward kernels in the order of
	// Options.Methods, then for each entry of Options.Sens its kernel of
	// each method; then, as asked, the float32 twins of all those (in
	// the same order), the record kernels and the adjoint kernels (one
	// per method each, in the order of Options.Methods).
	Kernels []Kernel
	// RosKernels lists the Rosenbrock kernels (gs_ros_job) likewise:
	// the forward kernels in the order of Options.Rosenbrock, then for
	// each entry of Options.Sens its kernel of each method, then with
	// Options.Float32 the float32 twins of all those (in the same
	// order), then with Options.RosRecord the record kernel of each
	// method, then with Options.RosAdjoint the adjoint kernel of each
	// method.
	RosKernels []RosKernel
}

// Generate returns the CUDA C++ source of the model s: its right-hand
// side f as the device function template gs_f<real> (and its functor
// gs_f_fn), with the same operations as the tape's program in the same
// order, the math functions it calls as ports of pmath's, and for each
// method of opts a forward kernel gs_erk_<method>(gs_erk_job) that runs
// one trajectory per thread (a grid-stride loop over the ensemble) with
// the CPU engine's adaptive loop — cpu-erk's controller, error norm,
// initial step, step floor, landing on t1, hmax, step budget, statuses,
// re-stepped save times and statistics — so that in double precision
// its results are those of gradsolve.Solve on cpu-erk, bit for bit.
// For each entry of opts.Sens it also writes the fused sensitivity
// program as gs_sens<k><real> and a kernel gs_erk_<method>_sens<k> of
// each method, whose results are cpu-erk's forward sensitivities bit
// for bit. Options.Float32, Record and Adjoint add the float32 twins of
// those kernels, the record kernels (the forward solve writing each
// trajectory's mesh, bitwise cpu-erk's gradsolve.Record) and the adjoint
// kernels (the reverse replay on such a mesh, bitwise
// gradsolve.Recording.Gradient on cpu-erk); docs/gpu.md describes their
// jobs.
//
// For each method of opts.Rosenbrock it writes the dense Jacobian J_y
// and ∂f/∂t as gs_jac_y<real> and gs_dfdt<real> (with sensitivities
// also J·v + J_p·w, ∂(J·v + J_p·w)/∂y and ∂(J·v + J_p·w)/∂t as gs_jvp,
// gs_jvp_jac_y and gs_jvp_dfdt) and a kernel gs_ros_<method>(gs_ros_job)
// (and gs_ros_<method>_sens<k>) whose results are cpu-ros's bit for bit
// in double: per-thread LU with partial pivoting, singular W rejected,
// JacEvals and LUs counted, save times re-stepped or (dense_save) from
// the continuous extension.
//
// It builds nothing beyond f, the sensitivity programs asked for, with
// Options.Adjoint the cotangent program (tape.Set.VJP), and the
// programs the Rosenbrock kernels call: the Set's other derivative
// programs are not built.
func Generate(s *tape.Set, opts Options) (*Source, error) {
	if s == nil || s.Model == nil {
		return nil, errors.New("emitcuda: nil tape.Set or Set without a Model")
	}
	f := s.F()
	if f == nil {
		return nil, fmt.Errorf("emitcuda: model %q: the tape.Set lacks f (build it with tape.Build)", s.Model.Name)
	}
	dim, np := s.Model.Dim(), s.Model.NumParams()
	if dim < 1 {
		return nil, fmt.Errorf("emitcuda: model %q has no states", s.Model.Name)
	}
	if lay := f.Layout(); lay.Dim != dim || lay.NumParams != np || len(f.Outputs()) != dim {
		return nil, fmt.Errorf("emitcuda: model %q: f has layout %d×%d and %d outputs, want %d states and %d parameters",
			s.Model.Name, lay.Dim, lay.NumParams, len(f.Outputs()), dim, np)
	}
	methods := opts.Methods
	if methods == nil {
		methods = []*method.Tableau{method.Tsit5, method.DP5, method.Vern7, method.DP8}
	}
	src := &Source{Model: s.Model.Name, Dim: dim, NumParams: np}
	seen := map[string]bool{}
	for i, tb := range methods {
		if tb == nil {
			return nil, fmt.Errorf("emitcuda: Options.Methods[%d] is nil", i)
		}
		if err := tb.Validate(); err != nil {
			return nil, fmt.Errorf("emitcuda: Options.Methods[%d]: %w", i, err)
		}
		name, err := kernelName(tb.Name)
		if err != nil {
			return nil, fmt.Errorf("emitcuda: Options.Methods[%d]: %w", i, err)
		}
		if seen[name] {
			return nil, fmt.Errorf("emitcuda: Options.Methods[%d] (%s): a second method with the kernel name %s", i, tb.Name, name)
		}
		seen[name] = true
		src.Kernels = append(src.Kernels, Kernel{Name: name, Method: tb, Sens: -1, Dim: dim, NormDim: dim})
	}
	nf := len(src.Kernels)
	sens := make([]*tape.Program, len(opts.Sens))
	for k, sn := range opts.Sens {
		if len(sn.Cols) == 0 {
			return nil, fmt.Errorf("emitcuda: Options.Sens[%d] has no columns", k)
		}
		for c, j := range sn.Cols {
			if j < -1 || j >= np {
				return nil, fmt.Errorf("emitcuda: Options.Sens[%d].Cols[%d] = %d: want a parameter index in [0, %d) or -1 for an initial value", k, c, j, np)
			}
		}
		var err error
		if sens[k], err = s.SensProgram(sn.Cols); err != nil {
			return nil, fmt.Errorf("emitcuda: Options.Sens[%d]: %w", k, err)
		}
		na := dim * (1 + len(sn.Cols))
		nd := dim
		if sn.ErrorTest {
			nd = na
		}
		for _, fk := range src.Kernels[:nf] {
			src.Kernels = append(src.Kernels, Kernel{Name: fmt.Sprintf("%s_sens%d", fk.Name, k), Method: fk.Method, Sens: k,
				SensCols: append([]int(nil), sn.Cols...), Dim: na, NormDim: nd, Kind: Sensitivities})
		}
	}

	ns := len(src.Kernels)
	if opts.Float32 {
		for _, k := range src.Kernels[:ns] {
			k.Float32 = true
			k.Name = kernelBase(k) + "_f32" + strings.TrimPrefix(k.Name, kernelBase(k))
			k.SensCols = append([]int(nil), k.SensCols...)
			src.Kernels = append(src.Kernels, k)
		}
	}
	if opts.Record {
		for _, fk := range src.Kernels[:nf] {
			src.Kernels = append(src.Kernels, Kernel{Name: fk.Name + "_record", Method: fk.Method, Kind: Record, Sens: -1, Dim: dim, NormDim: dim})
		}
	}
	var vjp *tape.Program
	if opts.Adjoint {
		var err error
		if vjp, err = s.VJP(); err != nil {
			return nil, fmt.Errorf("emitcuda: model %q: the cotangent program: %w", s.Model.Name, err)
		}
		if lay := vjp.Layout(); lay.Dim != dim || lay.NumParams != np || len(vjp.Outputs()) != dim+np {
			return nil, fmt.Errorf("emitcuda: model %q: the cotangent program has layout %d×%d and %d outputs, want %d states, %d parameters and %d outputs",
				s.Model.Name, lay.Dim, lay.NumParams, len(vjp.Outputs()), dim, np, dim+np)
		}
		for _, fk := range src.Kernels[:nf] {
			src.Kernels = append(src.Kernels, Kernel{Name: fk.Name + "_adjoint", Method: fk.Method, Kind: Adjoint, Sens: -1, Dim: dim, NormDim: dim})
		}
	}

	rp, err := prepareRos(s, opts, dim)
	if err != nil {
		return nil, err
	}

	var w bytes.Buffer
	fmt.Fprintf(&w, "// Code generated by gradsolve (package sym/emitcuda) from model %s; DO NOT EDIT.\n//\n", strconv.QuoteToASCII(s.Model.Name))
	fmt.Fprintf(&w, "// The model's right-hand side (%d states, %d parameters) as CUDA device\n", dim, np)
	w.WriteString("// functions, and forward kernels of the explicit Runge-Kutta methods with\n")
	w.WriteString("// the CPU engine's adaptive loop, bit for bit in double precision.\n\n")
	w.WriteString(prelude)
	writeConstants(&w, dim, np)

	used := map[sym.Op]bool{}
	usedMath(f, used)
	for _, pg := range sens {
		usedMath(pg, used)
	}
	if rp != nil {
		for _, f := range rp.progs {
			usedMath(f.pg, used)
		}
	}
	if vjp != nil {
		usedMath(vjp, used)
	}
	if len(used) > 0 {
		w.WriteString("// ---- the math functions: pmath's, step by step ----\n\n")
	}
	for _, op := range mathOrder {
		if used[op] {
			if err := writeMathFunc(&w, mathFuncs[op]); err != nil {
				return nil, err
			}
		}
	}
	w.WriteString("// ---- the model ----\n\n")
	err = writeProgram(&w, programFunc{name: "gs_f", doc: "the right-hand side f(t, y, p)", pg: f,
		inputs: [numBlocks]string{blockT: "t", blockY: "y", blockP: "p"}, out: "dy"})
	if err != nil {
		return nil, fmt.Errorf("emitcuda: model %q: %w", s.Model.Name, err)
	}
	for k, pg := range sens {
		err := writeProgram(&w, programFunc{name: fmt.Sprintf("gs_sens%d", k), pg: pg,
			doc:    fmt.Sprintf("f(t, y, p) and the right-hand sides of the sensitivity columns %v (y holds the state, then one block per column)", opts.Sens[k].Cols),
			inputs: [numBlocks]string{blockT: "t", blockY: "y", blockP: "p"}, out: "dy"})
		if err != nil {
			return nil, fmt.Errorf("emitcuda: model %q: sensitivities %v: %w", s.Model.Name, opts.Sens[k].Cols, err)
		}
	}
	if rp != nil {
		if err := rp.writePrograms(&w, s.Model.Name); err != nil {
			return nil, err
		}
	}
	if vjp != nil {
		err := writeProgram(&w, programFunc{name: "gs_vjp", pg: vjp,
			doc:    "the cotangents uᵀJ_y (g[0..DIM)) and uᵀJ_p (g[DIM..DIM+NP)) at (t, y, p)",
			inputs: [numBlocks]string{blockT: "t", blockY: "y", blockP: "p", blockU: "u"}, out: "g"})
		if err != nil {
			return nil, fmt.Errorf("emitcuda: model %q: the cotangent program: %w", s.Model.Name, err)
		}
	}
	w.WriteString(erkDriver)
	if opts.Float32 {
		w.WriteString(erk32Driver)
	}
	if opts.Record || opts.Adjoint {
		w.WriteString(erkRecordDriver)
	}
	w.WriteString("// ---- the methods: their tableaus as constants ----\n\n")
	for _, k := range src.Kernels[:nf] {
		if err := writeMethod(&w, k.Name+"_m", k.Method, opts.Adjoint); err != nil {
			return nil, fmt.Errorf("emitcuda: %s: %w", k.Method.Name, err)
		}
	}
	w.WriteString("// ---- the kernels: one trajectory per thread, grid-stride ----\n\n")
	const loop = "  for (gs_i64 i = blockIdx.x * (gs_i64)blockDim.x + threadIdx.x; i < job.n; i += (gs_i64)blockDim.x * gridDim.x)\n"
	for _, k := range src.Kernels {
		m, fn, what := methodStruct(k), "gs_f_fn", "forward"
		if k.Sens >= 0 {
			fn = fmt.Sprintf("gs_sens%d_fn", k.Sens)
			what = fmt.Sprintf("with the sensitivity columns %v", k.SensCols)
			if opts.Sens[k.Sens].ErrorTest {
				what += " in the error norm"
			}
		}
		switch {
		case k.Kind == Record:
			fmt.Fprintf(&w, "// %s solves the trajectories of job with %s (forward) and writes their meshes.\n", k.Name, k.Method.Name)
			fmt.Fprintf(&w, "extern \"C\" __global__ void %s(gs_erk_record_job job) {\n", k.Name)
			w.WriteString(strings.Replace(loop, "job.n", "job.fwd.n", 1))
			fmt.Fprintf(&w, "    gs_erk_record<%s, %s, %d, GS_NP>(job, i);\n}\n\n", m, fn, k.Dim)
		case k.Kind == Adjoint:
			fmt.Fprintf(&w, "// %s runs the discrete adjoint of %s's steps on the meshes of job.\n", k.Name, k.Method.Name)
			fmt.Fprintf(&w, "extern \"C\" __global__ void %s(gs_erk_adjoint_job job) {\n", k.Name)
			w.WriteString(loop)
			fmt.Fprintf(&w, "    gs_erk_adjoint<%s, %s, gs_vjp_fn, %d, GS_NP>(job, i);\n}\n\n", m, fn, k.Dim)
		case k.Float32:
			fmt.Fprintf(&w, "// %s solves the trajectories of job with %s (%s) in float.\n", k.Name, k.Method.Name, what)
			fmt.Fprintf(&w, "extern \"C\" __global__ void %s(gs_erk_job_f32 job) {\n", k.Name)
			w.WriteString(loop)
			fmt.Fprintf(&w, "    gs_erk_solve<%s, %s, %d, %d, GS_NP, gs_erk_job_f32>(job, i);\n}\n\n", m, fn, k.Dim, k.NormDim)
		default:
			fmt.Fprintf(&w, "// %s solves the trajectories of job with %s (%s).\n", k.Name, k.Method.Name, what)
			fmt.Fprintf(&w, "extern \"C\" __global__ void %s(gs_erk_job job) {\n", k.Name)
			w.WriteString(loop)
			fmt.Fprintf(&w, "    gs_erk_solve<%s, %s, %d, %d, GS_NP>(job, i);\n}\n\n", m, fn, k.Dim, k.NormDim)
		}
	}
	if rp != nil {
		if err := rp.writeKernels(&w, opts); err != nil {
			return nil, err
		}
		src.RosKernels = rp.kernels
	}
	src.Code = w.Bytes()
	return src, nil
}

// methodStruct returns the name of the method struct kernel k steps
// with: its method's forward kernel's name and "_m" (Generate checked
// the name).
func methodStruct(k Kernel) string {
	name, _ := kernelName(k.Method.Name)
	return name + "_m"
}

// kernelBase returns the forward kernel name k's name starts with,
// gs_erk_<method>.
func kernelBase(k Kernel) string {
	if k.Sens >= 0 {
		return strings.TrimSuffix(k.Name, fmt.Sprintf("_sens%d", k.Sens))
	}
	return k.Name
}

// kernelName returns gs_erk_<name> for a method's name: its letters and
// digits, lower case.
func kernelName(name string) (string, error) {
	var b strings.Builder
	for _, r := range name {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	if b.Len() == 0 {
		return "", fmt.Errorf("method name %q has no ASCII letter or digit to name its kernel", name)
	}
	return "gs_erk_" + b.String(), nil
}

// writeConstants writes the sizes, the statuses (ode.Status's values)
// and the constants of package control's Pow, as Go computes them.
func writeConstants(w *bytes.Buffer, dim, np int) {
	w.WriteString("// ---- sizes, statuses and constants ----\n\n")
	fmt.Fprintf(w, "#define GS_DIM %d\n#define GS_NP %d\n\n", dim, np)
	for _, st := range []struct {
		name string
		s    ode.Status
	}{{"GS_SUCCESS", ode.Success}, {"GS_MAX_STEPS_REACHED", ode.MaxStepsReached}, {"GS_NON_FINITE", ode.NonFinite}, {"GS_STEP_UNDERFLOW", ode.StepUnderflow}, {"GS_CANCELLED", ode.Cancelled}} {
		fmt.Fprintf(w, "#define %s %d  // ode.%v\n", st.name, st.s, st.s)
	}
	w.WriteString("\n")
	for _, c := range []struct {
		name string
		x    float64
	}{{"GS_LN2", math.Ln2}, {"GS_LOG2E", math.Log2E}, {"GS_SQRT1_2", math.Sqrt2 / 2}, {"GS_MAXFLOAT64", math.MaxFloat64}} {
		fmt.Fprintf(w, "#define %s %s\n", c.name, strconv.FormatFloat(c.x, 'x', -1, 64))
	}
	w.WriteString("\n")
}
