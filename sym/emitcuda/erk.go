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
func writeMethod(w *bytes.Buffer, name string, tb *method.Tableau) error {
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
		fmt.Fprintf(w, "%s  double a = gs_mul(%s, %s[d]);\n", indent, lit(row[0].a), stage(row[0].j))
		for _, c := range row[1:] {
			fmt.Fprintf(w, "%s  a = a + gs_mul(%s, %s[d]);\n", indent, lit(c.a), stage(c.j))
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
	w.WriteString("  template <class Fn, int N, int ND>\n")
	w.WriteString("  __device__ static __forceinline__ void stages(const Fn& f, double t, double h, const double* p, const double (&y)[N],\n")
	w.WriteString("      double (&y1)[N], double (&yt)[N], double (&k)[S][N], double (&ev)[ND], double (&ev3)[ND]) {\n")
	end := s
	if fsal {
		end = s - 1
	}
	for i := 1; i < end; i++ {
		fmt.Fprintf(w, "    // stage %d, c = %s\n", i+1, strconv.FormatFloat(tb.C[i], 'g', -1, 64))
		sum("    ", "N", "yt", "y", "h", rows[i], kj)
		fmt.Fprintf(w, "    f(t + gs_mul(%s, h), yt, p, k[%d]);\n", lit(tb.C[i]), i)
	}
	if fsal {
		fmt.Fprintf(w, "    // stage %d (FSAL): its input is the proposal\n", s)
		sum("    ", "N", "y1", "y", "h", rows[s-1], kj)
		if !deferLast {
			fmt.Fprintf(w, "    f(t + h, y1, p, k[%d]);\n", s-1)
		} else {
			w.WriteString("    // evaluated once the step is accepted (DEFER)\n")
		}
	} else {
		w.WriteString("    // the proposal\n")
		sum("    ", "N", "y1", "y", "h", b, kj)
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
	w.WriteString("  template <class Fn, int N>\n")
	w.WriteString("  __device__ static __forceinline__ void restep(const Fn& f, double t, double hs, const double* p, const double (&y)[N],\n")
	w.WriteString("      const double (&k0)[N], double (&yt)[N], double (&ks)[LASTB + 1][N], double* dst) {\n")
	ksj := func(j int) string {
		if j == 0 {
			return "k0"
		}
		return fmt.Sprintf("ks[%d]", j)
	}
	for i := 1; i <= lastB; i++ {
		sum("    ", "N", "yt", "y", "hs", rows[i], ksj)
		fmt.Fprintf(w, "    f(t + gs_mul(%s, hs), yt, p, ks[%d]);\n", lit(tb.C[i]), i)
	}
	sum("    ", "N", "dst", "y", "hs", b, ksj)
	w.WriteString("  }\n};\n\n")
	return nil
}
