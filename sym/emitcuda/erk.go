package emitcuda

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/gradsolve/gradsolve/method"
)

// coef is one nonzero coefficient of a tableau row.
type coef struct {
	j int
	a float64
}

// nonzero returns the nonzero coefficients of v in order, as erk's
// Solver keeps them: a zero coefficient takes no part in a sum.
func nonzero(v []float64) []coef {
	var out []coef
	for j, a := range v {
		if a != 0 {
			out = append(out, coef{j, a})
		}
	}
	return out
}

// lit returns x as an exact C++ double literal.
func lit(x float64) string {
	s := strconv.FormatFloat(x, 'x', -1, 64)
	if x < 0 {
		return "(" + s + ")"
	}
	return s
}

// writeMethod writes the struct of tableau tb: its constants and its
// stage sums, as erk's generic stepper computes them (genericStages,
// restep): the stages after the first in order, each stage input
// y + h·Σ a_ij·k_j summed over the nonzero a_ij in ascending j with
// every product rounded, the stage at t + c_i·h; for an FSAL method the
// last stage's input built into y1 itself and, unless the method defers
// it (zero error weight), evaluated at t + h; the error vectors over
// the norm's components from the nonzero error weights.
//
// With adjoint set it also writes the functions of the adjoint
// kernels, stage_inputs and reverse (writeAdjoint).
func writeMethod(w *bytes.Buffer, name string, tb *method.Tableau, adjoint bool) error {
	s := tb.Stages()
	if s < 2 {
		return fmt.Errorf("%d stages: an explicit method needs at least 2", s)
	}
	rows := make([][]coef, s)
	for i := 1; i < s; i++ {
		if rows[i] = nonzero(tb.A[i]); len(rows[i]) == 0 {
			return fmt.Errorf("row %d of A has no nonzero coefficient", i)
		}
	}
	b, e := nonzero(tb.B), nonzero(tb.E)
	var e3 []coef
	dop853 := tb.Kind == method.ErrorDOP853
	if dop853 {
		e3 = nonzero(tb.E3)
	}
	if len(b) == 0 || len(e) == 0 || (dop853 && len(e3) == 0) {
		return fmt.Errorf("a row of weights (b, e or e3) has no nonzero coefficient")
	}
	fsal := tb.FSAL()
	deferLast := fsal && tb.E[s-1] == 0 && (tb.E3 == nil || tb.E3[s-1] == 0)
	lastB := b[len(b)-1].j
	evals := s - 1
	if deferLast {
		evals--
	}

	fmt.Fprintf(w, "// %s: %s (order %d, %d stages). %s\n", name, tb.Name, tb.Order, s, tb.Source)
	fmt.Fprintf(w, "struct %s {\n", name)
	fmt.Fprintf(w, "  enum { S = %d, ORDER = %d, LASTB = %d, EVALS = %d };\n", s, tb.Order, lastB, evals)
	fmt.Fprintf(w, "  static constexpr bool FSAL = %t, DEFER = %t, DOP853 = %t;\n\n", fsal, deferLast, dop853)

	// sum writes dst[d] = base[d] + h·Σ a_j·stage(j)[d] (base "" : the
	// sum alone) for d < n.
	sum := func(indent, n, dst, base, h string, row []coef, stage func(j int) string) {
		fmt.Fprintf(w, "%sGS_UNROLL for (int d = 0; d < %s; ++d) {\n", indent, n)
		fmt.Fprintf(w, "%s  real a = gs_mul((real)%s, %s[d]);\n", indent, lit(row[0].a), stage(row[0].j))
		for _, c := range row[1:] {
			fmt.Fprintf(w, "%s  a = a + gs_mul((real)%s, %s[d]);\n", indent, lit(c.a), stage(c.j))
		}
		if base == "" {
			fmt.Fprintf(w, "%s  %s[d] = a;\n", indent, dst)
		} else {
			fmt.Fprintf(w, "%s  %s[d] = %s[d] + gs_mul(%s, a);\n", indent, dst, base, h)
		}
		fmt.Fprintf(w, "%s}\n", indent)
	}
	kj := func(j int) string { return fmt.Sprintf("k[%d]", j) }

	w.WriteString("  // stages writes the stages 2..S into k (k[0] holds f(t, y)), the proposal into y1\n")
	w.WriteString("  // and the error vector(s) of the norm's ND components into ev (and ev3).\n")
	w.WriteString("  // Over float states (real float) the sums are float's, with h and the\n")
	w.WriteString("  // coefficients rounded to float; the stage times are double's, rounded.\n")
	w.WriteString("  template <class Fn, int N, int ND, typename real>\n")
	w.WriteString("  __device__ static __forceinline__ void stages(const Fn& f, double t, double h, const real* p, const real (&y)[N],\n")
	w.WriteString("      real (&y1)[N], real (&yt)[N], real (&k)[S][N], real (&ev)[ND], real (&ev3)[ND]) {\n")
	w.WriteString("    const real hr = (real)h;\n")
	end := s
	if fsal {
		end = s - 1
	}
	for i := 1; i < end; i++ {
		fmt.Fprintf(w, "    // stage %d, c = %s\n", i+1, strconv.FormatFloat(tb.C[i], 'g', -1, 64))
		sum("    ", "N", "yt", "y", "hr", rows[i], kj)
		fmt.Fprintf(w, "    f((real)(t + gs_mul(%s, h)), yt, p, k[%d]);\n", lit(tb.C[i]), i)
	}
	if fsal {
		fmt.Fprintf(w, "    // stage %d (FSAL): its input is the proposal\n", s)
		sum("    ", "N", "y1", "y", "hr", rows[s-1], kj)
		if !deferLast {
			fmt.Fprintf(w, "    f((real)(t + h), y1, p, k[%d]);\n", s-1)
		} else {
			w.WriteString("    // evaluated once the step is accepted (DEFER)\n")
		}
	} else {
		w.WriteString("    // the proposal\n")
		sum("    ", "N", "y1", "y", "hr", b, kj)
	}
	w.WriteString("    // the error vector(s)\n")
	sum("    ", "ND", "ev", "", "", e, kj)
	if dop853 {
		sum("    ", "ND", "ev3", "", "", e3, kj)
	} else {
		w.WriteString("    (void)ev3;\n")
	}
	w.WriteString("  }\n\n")

	w.WriteString("  // restep takes one step of size hs from (t, y), whose first stage is k0, into dst,\n")
	w.WriteString("  // with its own stages ks (the accepted step's stay intact): the stages up to LASTB.\n")
	w.WriteString("  template <class Fn, int N, typename real>\n")
	w.WriteString("  __device__ static __forceinline__ void restep(const Fn& f, double t, double hs, const real* p, const real (&y)[N],\n")
	w.WriteString("      const real (&k0)[N], real (&yt)[N], real (&ks)[LASTB + 1][N], real* dst) {\n")
	w.WriteString("    const real hr = (real)hs;\n")
	ksj := func(j int) string {
		if j == 0 {
			return "k0"
		}
		return fmt.Sprintf("ks[%d]", j)
	}
	for i := 1; i <= lastB; i++ {
		sum("    ", "N", "yt", "y", "hr", rows[i], ksj)
		fmt.Fprintf(w, "    f((real)(t + gs_mul(%s, hs)), yt, p, ks[%d]);\n", lit(tb.C[i]), i)
	}
	sum("    ", "N", "dst", "y", "hr", b, ksj)
	w.WriteString("  }\n")
	if adjoint {
		writeAdjoint(w, tb, rows, b, lastB)
	}
	w.WriteString("};\n\n")
	return nil
}

// writeAdjoint writes a method struct's functions of the adjoint
// kernels, in double: stage_inputs, erk's Replayer.stages (the stage
// inputs Y_0 = y, Y_i = y + h·Σ a_ij·k_j and the stages k_i = f(t +
// c_i·h, Y_i) up to the last stage with a nonzero weight in b, with
// erk's sums), and reverse, erk's Replayer.reverseStep: the cotangents
// of the stages k̄_i = h·b_i·ȳ_new + Σ_{l>i} h·a_li·Ȳ_l, each Ȳ_i =
// k̄_iᵀJ_y(Y_i) and k̄_iᵀJ_p(Y_i) from the cotangent program, in its
// order — every sum in the same order as the Go code.
func writeAdjoint(w *bytes.Buffer, tb *method.Tableau, rows [][]coef, b []coef, lastB int) {
	w.WriteString("\n  // stage_inputs writes erk's Replayer.stages of the step of size h from (t, y):\n")
	w.WriteString("  // the stage inputs into ys and the stages into k, up to LASTB.\n")
	w.WriteString("  template <class Fn, int N>\n")
	w.WriteString("  __device__ static __forceinline__ void stage_inputs(const Fn& f, double t, double h, const double* p, const double (&y)[N],\n")
	w.WriteString("      double (&ys)[LASTB + 1][N], double (&k)[LASTB + 1][N]) {\n")
	w.WriteString("    GS_UNROLL for (int d = 0; d < N; ++d) ys[0][d] = y[d];\n")
	w.WriteString("    f(t, y, p, k[0]);\n")
	for i := 1; i <= lastB; i++ {
		w.WriteString("    GS_UNROLL for (int d = 0; d < N; ++d) {\n")
		fmt.Fprintf(w, "      double a = gs_mul(%s, k[%d][d]);\n", lit(rows[i][0].a), rows[i][0].j)
		for _, c := range rows[i][1:] {
			fmt.Fprintf(w, "      a = a + gs_mul(%s, k[%d][d]);\n", lit(c.a), c.j)
		}
		fmt.Fprintf(w, "      ys[%d][d] = y[d] + gs_mul(h, a);\n    }\n", i)
		fmt.Fprintf(w, "    f(t + gs_mul(%s, h), ys[%d], p, k[%d]);\n", lit(tb.C[i]), i, i)
	}
	w.WriteString("  }\n\n")
	w.WriteString("  // reverse adds to ybar and gp the cotangents of y and p through the step of size h\n")
	w.WriteString("  // from (t, ys[0]) given ynb, that of its result (erk's Replayer.reverseStep).\n")
	w.WriteString("  template <class Vjp, int N, int NP>\n")
	w.WriteString("  __device__ static __forceinline__ void reverse(const Vjp& vjp, double t, double h, const double* p, const double (&ys)[LASTB + 1][N],\n")
	w.WriteString("      const double* ynb, double (&ybar)[N], double* gp, double (&kbar)[LASTB + 1][N], double (&g)[N + NP]) {\n")
	w.WriteString("    GS_UNROLL for (int i = 0; i <= LASTB; ++i) {\n      GS_UNROLL for (int d = 0; d < N; ++d) kbar[i][d] = 0;\n    }\n")
	for _, c := range b {
		fmt.Fprintf(w, "    {\n      const double hb = gs_mul(h, %s);\n", lit(c.a))
		fmt.Fprintf(w, "      GS_UNROLL for (int d = 0; d < N; ++d) kbar[%d][d] += gs_mul(hb, ynb[d]);\n    }\n", c.j)
	}
	w.WriteString("    GS_UNROLL for (int d = 0; d < N; ++d) ybar[d] += ynb[d];\n")
	for i := lastB; i >= 0; i-- {
		fmt.Fprintf(w, "    // stage %d\n", i+1)
		fmt.Fprintf(w, "    vjp(t + gs_mul(%s, h), ys[%d], p, kbar[%d], g);\n", lit(tb.C[i]), i, i)
		w.WriteString("    GS_UNROLL for (int d = 0; d < N; ++d) ybar[d] += g[d];\n")
		w.WriteString("    GS_UNROLL for (int j = 0; j < NP; ++j) gp[j] += g[N + j];\n")
		for _, c := range rows[i] {
			fmt.Fprintf(w, "    {\n      const double ha = gs_mul(h, %s);\n", lit(c.a))
			fmt.Fprintf(w, "      GS_UNROLL for (int d = 0; d < N; ++d) kbar[%d][d] += gs_mul(ha, g[d]);\n    }\n", c.j)
		}
	}
	w.WriteString("  }\n")
}
