package emitcuda

import (
	"bytes"
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/sym/tape"
)

//go:embed ros.cuh
var rosDriver string

//go:embed ros32.cuh
var ros32Driver string

// RosKernel describes one Rosenbrock kernel of a Source: a forward
// kernel gs_ros_<method>(gs_ros_job) or, for entry k of Options.Sens,
// the forward-sensitivity kernel gs_ros_<method>_sens<k>(gs_ros_job);
// their float32 twins gs_ros_<method>_f32[_sens<k>](gs_ros_job_f32)
// (Options.Float32); a record or an adjoint kernel.
type RosKernel struct {
	// Name is the kernel's extern "C" name: gs_ros_<method> (the
	// method's name in lower case, other characters than letters and
	// digits dropped), with _sens<k> for a sensitivity kernel.
	Name string
	// Method is the Rosenbrock method whose steps it takes.
	Method *method.Rosenbrock
	// Sens is the index in Options.Sens of a sensitivity kernel's
	// columns, −1 for a forward kernel; SensCols are those columns.
	Sens     int
	SensCols []int
	// Dim is the size of its state: the rows of gs_ros_job's y0, y and
	// saved (the model's Dim·(1 + len(SensCols))). NormDim is the number
	// of leading components in the error norm, the length of its rtol
	// and atol: the model's Dim (a Rosenbrock method's columns follow
	// the state's mesh, as cpu-ros's do).
	Dim, NormDim int
	// Dense reports whether the method has a continuous extension, so
	// that gs_ros_job's dense_save may be set (cpu-ros refuses DenseSave
	// for a method without one; the kernel then re-steps).
	Dense bool
	// Record marks a record kernel, gs_ros_<method>_record(gs_ros_job,
	// gs_ros_mesh) (Options.RosRecord): a forward solve that also writes
	// each trajectory's mesh. Its Sens is −1.
	Record bool
	// Float32 marks a float32 kernel (Options.Float32), which takes a
	// gs_ros_job_f32: its states, parameters and tolerances are float,
	// and so are its f, J, ∂f/∂t, sensitivity programs, W, LU and norm.
	Float32 bool
	// Adjoint marks an adjoint kernel, gs_ros_<method>_adjoint(gs_ros_job,
	// gs_ros_mesh, gs_ros_adj) (Options.RosAdjoint): the discrete adjoint
	// of a recorded solve, walking its mesh backwards. Its Sens is −1.
	Adjoint bool
}

// rosPart is the Rosenbrock part of a Source being generated: the
// kernels, and the derivative programs they call.
type rosPart struct {
	kernels []RosKernel
	names   []string // the method structs, one per method
	progs   []programFunc
}

// rosPrograms are the programs of the Rosenbrock kernels: J_y and ∂f/∂t
// for every kernel, J·v + J_p·w and its derivatives in y and t for the
// sensitivity kernels, as cpu-ros evaluates them (ode.Programs from the
// tape: JacY, DfDt, JVP, JVPJacY, JVPDfDt).
// The cotangent programs of the adjoint (ode.Programs' VJP, JVPVJP,
// DfDtVJP, as ros.Replayer evaluates them) write u^T d/dy then u^T d/dp
// into one array.
var rosPrograms = []struct {
	name, doc string
	get       func(*tape.Set) (*tape.Program, error)
	in        string // the input blocks beyond t, y, p: "vw", "u", "vwu"
	out       string
	use       int // rosBase, rosSens, rosAdjoint: which kernels call it
}{
	{"gs_jac_y", "the Jacobian df/dy, row-major", (*tape.Set).JacY, "", "jac", rosBase},
	{"gs_dfdt", "the time derivative df/dt", (*tape.Set).DfDt, "", "out", rosBase},
	{"gs_jvp", "the tangent J_y v + J_p w", (*tape.Set).JVP, "vw", "out", rosSens},
	{"gs_jvp_jac_y", "d(J_y v + J_p w)/dy, row-major", (*tape.Set).JVPJacY, "vw", "jac", rosSens},
	{"gs_jvp_dfdt", "d(J_y v + J_p w)/dt", (*tape.Set).JVPDfDt, "vw", "out", rosSens},
	{"gs_ros_vjp", "the cotangent u^T J_y, then u^T J_p", (*tape.Set).VJP, "u", "out", rosAdjoint},
	{"gs_jvp_vjp", "u^T d(J_y v + J_p w)/dy, then d/dp", (*tape.Set).JVPVJP, "vwu", "out", rosAdjoint},
	{"gs_dfdt_vjp", "u^T d(df/dt)/dy, then d/dp", (*tape.Set).DfDtVJP, "u", "out", rosAdjoint},
}

// Which kernels call a program of rosPrograms.
const (
	rosBase = iota
	rosSens
	rosAdjoint
)

// prepareRos checks opts.Rosenbrock, names its kernels and builds the
// programs they need.
func prepareRos(s *tape.Set, opts Options, dim int) (*rosPart, error) {
	if len(opts.Rosenbrock) == 0 {
		return nil, nil
	}
	rp := &rosPart{}
	seen := map[string]bool{}
	for i, tb := range opts.Rosenbrock {
		if tb == nil {
			return nil, fmt.Errorf("emitcuda: Options.Rosenbrock[%d] is nil", i)
		}
		if err := tb.Validate(); err != nil {
			return nil, fmt.Errorf("emitcuda: Options.Rosenbrock[%d]: %w", i, err)
		}
		name, err := kernelName(tb.Name)
		if err != nil {
			return nil, fmt.Errorf("emitcuda: Options.Rosenbrock[%d]: %w", i, err)
		}
		name = "gs_ros_" + strings.TrimPrefix(name, "gs_erk_")
		if seen[name] {
			return nil, fmt.Errorf("emitcuda: Options.Rosenbrock[%d] (%s): a second method with the kernel name %s", i, tb.Name, name)
		}
		seen[name] = true
		rp.names = append(rp.names, name+"_m")
		rp.kernels = append(rp.kernels, RosKernel{Name: name, Method: tb, Sens: -1, Dim: dim, NormDim: dim, Dense: len(tb.Dense) == 3})
	}
	nm := len(rp.kernels)
	for k, sn := range opts.Sens {
		if sn.ErrorTest {
			return nil, fmt.Errorf("emitcuda: Options.Sens[%d].ErrorTest with Options.Rosenbrock: a Rosenbrock method's sensitivities follow the state's mesh (cpu-ros refuses it too)", k)
		}
		for _, fk := range rp.kernels[:nm] {
			rp.kernels = append(rp.kernels, RosKernel{Name: fmt.Sprintf("%s_sens%d", fk.Name, k), Method: fk.Method, Sens: k,
				SensCols: append([]int(nil), sn.Cols...), Dim: dim * (1 + len(sn.Cols)), NormDim: dim, Dense: fk.Dense})
		}
	}
	if opts.Float32 {
		ns := len(rp.kernels)
		for ki, k := range rp.kernels[:ns] {
			base := rp.kernels[ki%nm].Name // the method's forward kernel
			k.Name, k.Float32 = base+"_f32"+strings.TrimPrefix(k.Name, base), true
			k.SensCols = append([]int(nil), k.SensCols...)
			rp.kernels = append(rp.kernels, k)
		}
	}
	if opts.RosRecord {
		for _, fk := range rp.kernels[:nm] {
			rec := fk
			rec.Name, rec.Record = fk.Name+"_record", true
			rp.kernels = append(rp.kernels, rec)
		}
	}
	if opts.RosAdjoint {
		for _, fk := range rp.kernels[:nm] {
			adj := fk
			adj.Name, adj.Adjoint = fk.Name+"_adjoint", true
			rp.kernels = append(rp.kernels, adj)
		}
	}
	for _, rpg := range rosPrograms {
		if rpg.use == rosSens && len(opts.Sens) == 0 || rpg.use == rosAdjoint && !opts.RosAdjoint {
			continue
		}
		pg, err := rpg.get(s)
		if err != nil {
			return nil, fmt.Errorf("emitcuda: model %q: %s: %w", s.Model.Name, rpg.name, err)
		}
		in := [numBlocks]string{blockT: "t", blockY: "y", blockP: "p"}
		for _, b := range rpg.in {
			in[map[rune]int{'v': blockV, 'w': blockW, 'u': blockU}[b]] = string(b)
		}
		rp.progs = append(rp.progs, programFunc{name: rpg.name, doc: rpg.doc, pg: pg, inputs: in, out: rpg.out})
	}
	return rp, nil
}

// writePrograms writes the derivative programs.
func (rp *rosPart) writePrograms(w *bytes.Buffer, model string) error {
	for _, f := range rp.progs {
		if err := writeProgram(w, f); err != nil {
			return fmt.Errorf("emitcuda: model %q: %w", model, err)
		}
	}
	return nil
}

// writeKernels writes the driver, the method structs, the column sets
// of the sensitivity kernels and the kernels.
func (rp *rosPart) writeKernels(w *bytes.Buffer, opts Options) error {
	w.WriteString(rosDriver)
	if opts.Float32 {
		w.WriteString(ros32Driver)
	}
	w.WriteString("\n// ---- the Rosenbrock methods: their coefficients as constants ----\n\n")
	for i, tb := range opts.Rosenbrock {
		if err := writeRosMethod(w, rp.names[i], tb); err != nil {
			return fmt.Errorf("emitcuda: %s: %w", tb.Name, err)
		}
	}
	for k, sn := range opts.Sens {
		fmt.Fprintf(w, "// gs_ros_cols%d sets the parameter direction of each column %v: e_j for a\n", k, sn.Cols)
		w.WriteString("// parameter j, zero for an initial value (engine.Directions).\n")
		fmt.Fprintf(w, "struct gs_ros_cols%d {\n  template <int NS, int NP, typename real>\n  __device__ static __forceinline__ void fill(real (&w)[NS][NP]) {\n", k)
		for c, j := range sn.Cols {
			if j >= 0 {
				fmt.Fprintf(w, "    w[%d][%d] = 1;\n", c, j)
			}
		}
		w.WriteString("    (void)w;\n  }\n};\n\n")
	}
	w.WriteString("// ---- the Rosenbrock kernels: one trajectory per thread, grid-stride ----\n\n")
	nm := len(opts.Rosenbrock)
	for ki, k := range rp.kernels {
		m := rp.names[ki%nm]
		fns := "gs_f_fn, gs_jac_y_fn, gs_dfdt_fn, gs_none_fn, gs_none_fn, gs_none_fn, gs_no_cols"
		what := "forward"
		ns := 0
		if k.Sens >= 0 {
			fns = fmt.Sprintf("gs_f_fn, gs_jac_y_fn, gs_dfdt_fn, gs_jvp_fn, gs_jvp_jac_y_fn, gs_jvp_dfdt_fn, gs_ros_cols%d", k.Sens)
			what = fmt.Sprintf("with the sensitivity columns %v", k.SensCols)
			ns = len(k.SensCols)
		}
		if k.Adjoint {
			fmt.Fprintf(w, "// %s runs the discrete adjoint of %s on the meshes of a record kernel.\n", k.Name, k.Method.Name)
			fmt.Fprintf(w, "extern \"C\" __global__ void %s(gs_ros_job job, gs_ros_mesh mesh, gs_ros_adj adj) {\n", k.Name)
			w.WriteString("  for (gs_i64 i = blockIdx.x * (gs_i64)blockDim.x + threadIdx.x; i < job.n; i += (gs_i64)blockDim.x * gridDim.x) {\n")
			fmt.Fprintf(w, "    gs_ros_adjoint<%s, gs_f_fn, gs_jac_y_fn, gs_dfdt_fn, gs_ros_vjp_fn, gs_jvp_vjp_fn, gs_dfdt_vjp_fn, GS_DIM, GS_NP> ad(job, mesh, adj, i);\n", m)
			w.WriteString("    ad.run();\n  }\n}\n\n")
			continue
		}
		if k.Record {
			fmt.Fprintf(w, "// %s solves the trajectories of job with %s and writes their meshes.\n", k.Name, k.Method.Name)
			fmt.Fprintf(w, "extern \"C\" __global__ void %s(gs_ros_job job, gs_ros_mesh mesh) {\n", k.Name)
			w.WriteString("  for (gs_i64 i = blockIdx.x * (gs_i64)blockDim.x + threadIdx.x; i < job.n; i += (gs_i64)blockDim.x * gridDim.x)\n")
			fmt.Fprintf(w, "    gs_ros_record<%s, gs_f_fn, gs_jac_y_fn, gs_dfdt_fn, GS_DIM, GS_NP>(job, mesh, i);\n}\n\n", m)
			continue
		}
		if k.Float32 {
			fmt.Fprintf(w, "// %s solves the trajectories of job with %s (%s) in float.\n", k.Name, k.Method.Name, what)
			fmt.Fprintf(w, "extern \"C\" __global__ void %s(gs_ros_job_f32 job) {\n", k.Name)
			w.WriteString("  for (gs_i64 i = blockIdx.x * (gs_i64)blockDim.x + threadIdx.x; i < job.n; i += (gs_i64)blockDim.x * gridDim.x)\n")
			fmt.Fprintf(w, "    gs_ros_solve<%s, %s, GS_DIM, %d, GS_NP, gs_ros_job_f32>(job, i);\n}\n\n", m, fns, ns)
			continue
		}
		fmt.Fprintf(w, "// %s solves the trajectories of job with %s (%s).\n", k.Name, k.Method.Name, what)
		fmt.Fprintf(w, "extern \"C\" __global__ void %s(gs_ros_job job) {\n", k.Name)
		w.WriteString("  for (gs_i64 i = blockIdx.x * (gs_i64)blockDim.x + threadIdx.x; i < job.n; i += (gs_i64)blockDim.x * gridDim.x)\n")
		fmt.Fprintf(w, "    gs_ros_solve<%s, %s, GS_DIM, %d, GS_NP>(job, i);\n}\n\n", m, fns, ns)
	}
	return nil
}

// writeRosMethod writes the struct of Rosenbrock method tb: its
// constants and its stages as ros's generic stage loop
// (Solver.genericStages, and for the state alone the generated kernels
// of ros/kernels_gen.go, which do the same operations) computes them,
// the sums over the nonzero coefficients in ascending order with every
// product rounded: for each stage its input and f there (the first
// stage takes f(t, y)), Σ Γ_ij K_j and J times it, the increment's
// right-hand side h·f + h·J·ΣΓK + h²·d_i·f_t solved with W's factors,
// then each sensitivity column's stage
//
//	W·L_i = h·G_i + h·M_c·(ΣΓK + γ·K_i) + h·J·ΣΓL + h²·d_i·∂_t(tangent),
//
// G_i the tangent at the stage's input; then y_new, the error vector
// (summed from zero, as attempt does) and the continuous extension's
// weights.
func writeRosMethod(w *bytes.Buffer, name string, tb *method.Rosenbrock) error {
	s := tb.Stages()
	if s < 1 {
		return fmt.Errorf("%d stages: a Rosenbrock method needs at least 1", s)
	}
	m, e := nonzero(tb.M), nonzero(tb.E)
	if len(m) == 0 || len(e) == 0 {
		return fmt.Errorf("the weights m or e have no nonzero coefficient")
	}
	dense := len(tb.Dense) == 3
	fmt.Fprintf(w, "// %s: %s (order %d, %d stages). %s\n", name, tb.Name, tb.Order, s, tb.Source)
	fmt.Fprintf(w, "struct %s {\n", name)
	fmt.Fprintf(w, "  enum { S = %d, ORDER = %d };\n", s, tb.Order)
	fmt.Fprintf(w, "  static constexpr bool FSAL = %t, DENSE = %t;\n", tb.FSAL(), dense)
	fmt.Fprintf(w, "  static constexpr double GAMMA = %s;\n\n", lit(tb.Gamma))

	// sum writes dst = base + Σ a_j·v_j (combineInto: from base, in
	// order) or, with base "", Σ a_j·v_j from the first term (gammaSum).
	sum := func(indent, dst, base string, row []coef, v func(j int) string) {
		fmt.Fprintf(w, "%sGS_UNROLL for (int d = 0; d < T::N; ++d) {\n", indent)
		if base == "" {
			fmt.Fprintf(w, "%s  real a = gs_mul((real)%s, %s[d]);\n", indent, lit(row[0].a), v(row[0].j))
			row = row[1:]
		} else {
			fmt.Fprintf(w, "%s  real a = %s;\n", indent, base)
		}
		for _, c := range row {
			fmt.Fprintf(w, "%s  a = a + gs_mul((real)%s, %s[d]);\n", indent, lit(c.a), v(c.j))
		}
		fmt.Fprintf(w, "%s  %s = a;\n%s}\n", indent, dst, indent)
	}
	kj := func(j int) string { return fmt.Sprintf("tr.k[%d]", j) }
	lj := func(j int) string { return fmt.Sprintf("tr.l[c][%d]", j) }

	w.WriteString("  // stages writes the increments into tr.k (and tr.l), f at the last stage's input into\n")
	w.WriteString("  // tr.fsi and y_new (the state, then each column) into ynew, with W's factors in tr.\n")
	w.WriteString("  // Over float (T::real float) the sums are float's, with h and the coefficients\n")
	w.WriteString("  // rounded to float; the stage times are double's, rounded.\n")
	w.WriteString("  template <class T>\n")
	w.WriteString("  __device__ static __forceinline__ void stages(T& tr, double t, double h, typename T::real* ynew) {\n")
	w.WriteString("    typedef typename T::real real;\n")
	w.WriteString("    const real hr = (real)h;\n")
	w.WriteString("    const real h2 = gs_mul(hr, hr);\n")
	for i := range s {
		alpha, gam := nonzero(tb.Alpha[i]), nonzero(tb.GammaOff[i])
		fmt.Fprintf(w, "    // stage %d, c = %s\n    {\n", i+1, strconv.FormatFloat(tb.C[i], 'g', -1, 64))
		fs, stageY := "tr.f0", "tr.y"
		if i > 0 {
			fs, stageY = "tr.fsi", "tr.yt"
			sum("      ", "tr.yt[d]", "tr.y[d]", alpha, kj)
			fmt.Fprintf(w, "      tr.f((real)(t + gs_mul(%s, h)), tr.yt, tr.p, tr.fsi);\n", lit(tb.C[i]))
		}
		if len(gam) > 0 {
			sum("      ", "tr.acc[d]", "", gam, kj)
			w.WriteString("      tr.matvec(tr.jv, tr.jac, tr.acc);\n")
			fmt.Fprintf(w, "      GS_UNROLL for (int d = 0; d < T::N; ++d) tr.k[%d][d] = gs_mul(hr, %s[d]) + gs_mul(hr, tr.jv[d]);\n", i, fs)
		} else {
			w.WriteString("      GS_UNROLL for (int d = 0; d < T::N; ++d) tr.acc[d] = 0;  // no Gamma_ij: the columns' sum starts from 0\n")
			fmt.Fprintf(w, "      GS_UNROLL for (int d = 0; d < T::N; ++d) tr.k[%d][d] = gs_mul(hr, %s[d]);\n", i, fs)
		}
		if tb.D[i] != 0 {
			fmt.Fprintf(w, "      const real cd = gs_mul(h2, (real)%s);\n", lit(tb.D[i]))
			fmt.Fprintf(w, "      GS_UNROLL for (int d = 0; d < T::N; ++d) tr.k[%d][d] += gs_mul(cd, tr.ft[d]);\n", i)
		}
		fmt.Fprintf(w, "      tr.lu_solve(tr.k[%d]);\n", i)
		w.WriteString("      GS_UNROLL for (int c = 0; c < T::NS; ++c) {\n")
		sum("        ", "tr.sin_[d]", "tr.y[T::N * (1 + c) + d]", alpha, lj)
		fmt.Fprintf(w, "        tr.jvp((real)(t + gs_mul(%s, h)), %s, tr.p, tr.sin_, tr.w[c], tr.g);\n", lit(tb.C[i]), stageY)
		fmt.Fprintf(w, "        GS_UNROLL for (int d = 0; d < T::N; ++d) tr.accl[d] = tr.acc[d] + gs_mul((real)%s, tr.k[%d][d]);\n", lit(tb.Gamma), i)
		w.WriteString("        tr.matvec(tr.jv, tr.mc[c], tr.accl);\n")
		fmt.Fprintf(w, "        GS_UNROLL for (int d = 0; d < T::N; ++d) tr.l[c][%d][d] = gs_mul(hr, tr.g[d]) + gs_mul(hr, tr.jv[d]);\n", i)
		if len(gam) > 0 {
			sum("        ", "tr.accl[d]", "", gam, lj)
			w.WriteString("        tr.matvec(tr.jv, tr.jac, tr.accl);\n")
			fmt.Fprintf(w, "        GS_UNROLL for (int d = 0; d < T::N; ++d) tr.l[c][%d][d] += gs_mul(hr, tr.jv[d]);\n", i)
		}
		if tb.D[i] != 0 {
			fmt.Fprintf(w, "        GS_UNROLL for (int d = 0; d < T::N; ++d) tr.l[c][%d][d] += gs_mul(cd, tr.ftc[c][d]);\n", i)
		}
		fmt.Fprintf(w, "        tr.lu_solve(tr.l[c][%d]);\n      }\n    }\n", i)
	}
	w.WriteString("    // y_new\n")
	sum("    ", "ynew[d]", "tr.y[d]", m, kj)
	w.WriteString("    GS_UNROLL for (int c = 0; c < T::NS; ++c) {\n")
	sum("      ", "ynew[T::N * (1 + c) + d]", "tr.y[T::N * (1 + c) + d]", m, lj)
	w.WriteString("    }\n  }\n\n")

	w.WriteString("  // error writes the error vector sum e_i K_i into tr.ev, summed from zero.\n")
	w.WriteString("  template <class T>\n  __device__ static __forceinline__ void error(T& tr) {\n")
	w.WriteString("    typedef typename T::real real;\n")
	sum("    ", "tr.ev[d]", "0.0", e, kj)
	w.WriteString("  }\n")

	writeRosReverse(w, tb, kj)
	if dense {
		w.WriteString("\n  // dense_weights writes the continuous extension's weights\n")
		w.WriteString("  // b_i(theta) = theta m_i + theta (1 - theta) (H1_i + theta (H2_i + theta H3_i)).\n")
		w.WriteString("  __device__ static __forceinline__ void dense_weights(double theta, double (&b)[S]) {\n")
		w.WriteString("    const double tt = gs_mul(theta, 1 - theta);\n")
		for i := range s {
			fmt.Fprintf(w, "    b[%d] = gs_mul(theta, %s) + gs_mul(tt, %s + gs_mul(theta, %s + gs_mul(theta, %s)));\n", i,
				lit(tb.M[i]), lit(tb.Dense[0][i]), lit(tb.Dense[1][i]), lit(tb.Dense[2][i]))
		}
		w.WriteString("  }\n")
	}
	w.WriteString("};\n\n")
	return nil
}

// writeRosReverse writes the method's reverse step as ros's
// (*Replayer).reverseStep computes it: reverse_init sets K̄_i = m_i·ȳ_new,
// reverse_stages walks the stages backwards (R̄_i = W⁻ᵀ·K̄_i, the
// cotangent through f at the stage input, through J·ΣΓK, through J's
// own dependence on (y, p) and through h²·d_i·f_t), adding into tr.ybar
// and tr.gp, with every sum in reverseStep's order.
func writeRosReverse(w *bytes.Buffer, tb *method.Rosenbrock, kj func(int) string) {
	s := tb.Stages()
	w.WriteString("\n  // reverse_init sets the increments' cotangents from that of y_new.\n")
	w.WriteString("  template <class A>\n  __device__ static __forceinline__ void reverse_init(A& ad, const double* ynewbar) {\n")
	for i := range s {
		fmt.Fprintf(w, "    GS_UNROLL for (int d = 0; d < A::N; ++d) ad.kbar[%d][d] = gs_mul(%s, ynewbar[d]);\n", i, lit(tb.M[i]))
	}
	w.WriteString("  }\n\n")
	w.WriteString("  // reverse_stages reverses the stages of the step of size h from (t, y = ad.tr.y), whose\n")
	w.WriteString("  // increments are ad.tr.k and W's factors ad.tr's, adding into ad.ybar and ad.gp.\n")
	w.WriteString("  template <class A>\n  __device__ static __forceinline__ void reverse_stages(A& ad, double t, double h) {\n")
	w.WriteString("    auto& tr = ad.tr;\n")
	for i := s - 1; i >= 0; i-- {
		alpha, gam := nonzero(tb.Alpha[i]), nonzero(tb.GammaOff[i])
		fmt.Fprintf(w, "    // stage %d\n    {\n", i+1)
		fmt.Fprintf(w, "      GS_UNROLL for (int d = 0; d < A::N; ++d) ad.rbar[d] = ad.kbar[%d][d];\n", i)
		w.WriteString("      tr.lu_solve_t(ad.rbar);\n")
		w.WriteString("      GS_UNROLL for (int d = 0; d < A::N; ++d) {\n        double a = tr.y[d];\n")
		for _, c := range alpha {
			fmt.Fprintf(w, "        a = a + gs_mul(%s, %s[d]);\n", lit(c.a), kj(c.j))
		}
		w.WriteString("        ad.yi[d] = a;\n      }\n")
		w.WriteString("      GS_UNROLL for (int d = 0; d < A::N; ++d) ad.v[d] = gs_mul(h, ad.rbar[d]);\n")
		fmt.Fprintf(w, "      ad.vjp(t + gs_mul(%s, h), ad.yi, tr.p, ad.v, ad.o);\n", lit(tb.C[i]))
		w.WriteString("      ad.add_o();\n")
		for _, c := range alpha {
			fmt.Fprintf(w, "      GS_UNROLL for (int d = 0; d < A::N; ++d) ad.kbar[%d][d] += gs_mul(%s, ad.o[d]);\n", c.j, lit(c.a))
		}
		if len(gam) > 0 {
			w.WriteString("      ad.mat_t_vec(ad.rbar);\n")
			for _, c := range gam {
				fmt.Fprintf(w, "      GS_UNROLL for (int d = 0; d < A::N; ++d) ad.kbar[%d][d] += gs_mul(gs_mul(h, %s), ad.o[d]);\n", c.j, lit(c.a))
			}
			w.WriteString("      GS_UNROLL for (int d = 0; d < A::N; ++d) {\n")
			fmt.Fprintf(w, "        double a = gs_mul(%s, %s[d]);\n", lit(gam[0].a), kj(gam[0].j))
			for _, c := range gam[1:] {
				fmt.Fprintf(w, "        a = a + gs_mul(%s, %s[d]);\n", lit(c.a), kj(c.j))
			}
			w.WriteString("        ad.v[d] = a;\n      }\n")
		} else {
			w.WriteString("      GS_UNROLL for (int d = 0; d < A::N; ++d) ad.v[d] = 0;\n")
		}
		fmt.Fprintf(w, "      GS_UNROLL for (int d = 0; d < A::N; ++d) ad.v[d] = gs_mul(h, ad.v[d] + gs_mul(%s, tr.k[%d][d]));\n", lit(tb.Gamma), i)
		w.WriteString("      ad.jvp_vjp(t, tr.y, tr.p, ad.v, ad.zero, ad.rbar, ad.o);\n")
		w.WriteString("      ad.add_o();\n")
		if tb.D[i] != 0 {
			fmt.Fprintf(w, "      const double cd = gs_mul(gs_mul(h, h), %s);\n", lit(tb.D[i]))
			w.WriteString("      GS_UNROLL for (int d = 0; d < A::N; ++d) ad.v[d] = gs_mul(cd, ad.rbar[d]);\n")
			w.WriteString("      ad.dfdt_vjp(t, tr.y, tr.p, ad.v, ad.o);\n")
			w.WriteString("      ad.add_o();\n")
		}
		w.WriteString("    }\n")
	}
	w.WriteString("  }\n")
}
