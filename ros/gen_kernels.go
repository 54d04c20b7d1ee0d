//go:build ignore

// gen_kernels writes kernels_gen.go: for each Rosenbrock method of
// package method, the stages of a step attempt without sensitivities,
// with the coefficients as constants and each component summed in a
// register. Run with `go generate ./ros` after changing a tableau;
// TestKernelsUpToDate fails while the file is stale.
package main

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/gradsolve/gradsolve/internal/kernelgen"
	"github.com/gradsolve/gradsolve/method"
)

func main() {
	kernelgen.Main("ros", func(b *bytes.Buffer) {
		b.WriteString("// kernels lists the generated stage kernels, each with the coefficients\n")
		b.WriteString("// it was generated from (see kernelFor).\n")
		b.WriteString("var kernels = []kernel{\n")
		for _, tb := range method.AllRosenbrock() {
			fmt.Fprintf(b, "\t{%q, (*Solver).stages%s, %s},\n", tb.Name, tb.Name, kernelgen.Floats(kernelgen.Rosenbrock(tb)))
		}
		b.WriteString("}\n")
		for _, tb := range method.AllRosenbrock() {
			kernelFunc(b, tb)
		}
	})
}

// terms returns the products a_j·v_j[d] of the nonzero coefficients,
// each rounded, joined by " + ": the order of combineInto and gammaSum.
func terms(a []float64, v string) string {
	var t []string
	for j, x := range a {
		if x != 0 {
			t = append(t, fmt.Sprintf("float64(%s*%s%d[d])", kernelgen.Lit(x), v, j))
		}
	}
	return strings.Join(t, " + ")
}

func kernelFunc(b *bytes.Buffer, tb *method.Rosenbrock) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	s := tb.Stages()
	p("\n// stages%s is the generated stage loop of attempt for %s without\n", tb.Name, tb.Name)
	p("// sensitivities: the increments into k, f at the stage inputs into fs\n")
	p("// and y_new into ynew, with W's factors in sv.lu.\n")
	p("func (sv *Solver) stages%s(t, h float64, p []float64, k, fs [][]float64, ynew []float64) {\n", tb.Name)
	p("\tf, n := sv.cfg.F, sv.dim\n")
	p("\tlu := &sv.lu\n")
	p("\ty, yt, acc, jv, ft := sv.y[:n], sv.yt[:n], sv.acc[:n], sv.jv[:n], sv.ft[:n]\n")
	p("\tk, fs = k[:%d], fs[:%d]\n", s, s)
	for j := range s {
		p("\tk%d, fs%d := k[%d][:n], fs[%d][:n]\n", j, j, j, j)
	}
	p("\th2 := h * h\n")
	p("\t_, _, _ = acc, jv, h2\n")
	for i := range s {
		if i == 0 {
			p("\tcopy(fs0, sv.f0)\n")
		} else {
			if t := terms(tb.Alpha[i], "k"); t != "" {
				p("\tfor d := range yt {\n\t\tyt[d] = y[d] + %s\n\t}\n", t)
			} else {
				p("\tcopy(yt, y)\n")
			}
			p("\tf(t+float64(%s*h), yt, p, fs%d)\n", kernelgen.Lit(tb.C[i]), i)
		}
		if t := terms(tb.GammaOff[i], "k"); t != "" {
			p("\tfor d := range acc {\n\t\tacc[d] = %s\n\t}\n", t)
			p("\tmatVec(jv, sv.jac, acc, n)\n")
			p("\tfor d := range k%d {\n\t\tk%d[d] = float64(h*fs%d[d]) + float64(h*jv[d])\n\t}\n", i, i, i)
		} else {
			p("\tfor d := range k%d {\n\t\tk%d[d] = h * fs%d[d]\n\t}\n", i, i, i)
		}
		if tb.D[i] != 0 {
			p("\t{\n\t\tc := h2 * %s\n\t\tfor d := range k%d {\n\t\t\tk%d[d] += float64(c * ft[d])\n\t\t}\n\t}\n", kernelgen.Lit(tb.D[i]), i, i)
		}
		p("\tlu.solve(k%d)\n", i)
	}
	p("\tynew = ynew[:n]\n")
	p("\tfor d := range ynew {\n\t\tynew[d] = y[d] + %s\n\t}\n", terms(tb.M, "k"))
	p("}\n")
}
