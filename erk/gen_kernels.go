//go:build ignore

// gen_kernels writes kernels_gen.go: for each explicit method of package
// method, the stages of one step attempt written out with the
// coefficients as constants and each component summed in a register.
// Run with `go generate ./erk` after changing a tableau; TestKernelsUpToDate
// fails while the file is stale.
package main

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/gradsolve/gradsolve/internal/kernelgen"
	"github.com/gradsolve/gradsolve/method"
)

func main() {
	kernelgen.Main("erk", func(b *bytes.Buffer) {
		b.WriteString("// kernels lists the generated step kernels, each with the coefficients\n")
		b.WriteString("// it was generated from (see kernelFor).\n")
		b.WriteString("var kernels = []kernel{\n")
		for _, tb := range method.All() {
			fmt.Fprintf(b, "\t{%q, (*Solver).stages%s, %s},\n", tb.Name, ident(tb.Name), kernelgen.Floats(kernelgen.Explicit(tb)))
		}
		b.WriteString("}\n")
		for _, tb := range method.All() {
			kernelFunc(b, tb)
		}
	})
}

func ident(name string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, name)
}

// sum returns Σ a_j·k_j[d] over the nonzero coefficients, left to
// right, each product rounded: the order of combine.
func sum(v []float64) string {
	var terms []string
	for j, a := range v {
		if a == 0 {
			continue
		}
		c := kernelgen.Lit(a)
		terms = append(terms, fmt.Sprintf("float64(%s*k%d[d])", c, j))
	}
	return strings.Join(terms, " + ")
}

func kernelFunc(b *bytes.Buffer, tb *method.Tableau) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	s := tb.Stages()
	fsal := tb.FSAL()
	deferLast := fsal && tb.E[s-1] == 0 && (tb.E3 == nil || tb.E3[s-1] == 0)
	p("\n// stages%s is the generated body of attempt for %s: the stages of a\n", ident(tb.Name), tb.Name)
	p("// step of size h from (t, sv.y), the proposed state into sv.y1 and the\n")
	p("// error vector(s) over the first nd components into sv.ev (and sv.ev3).\n")
	p("func (sv *Solver) stages%s(t, h float64, p []float64, nd int) {\n", ident(tb.Name))
	p("\tf, n := sv.cfg.F, sv.dim\n")
	p("\ty, yt, y1 := sv.y[:n], sv.yt[:n], sv.y1[:n]\n")
	p("\tk := sv.k[:%d]\n", s)
	for j := range s {
		if j == s-1 && deferLast {
			continue // only the engine evaluates it, once the step is accepted
		}
		p("\tk%d := k[%d][:n]\n", j, j)
	}
	end := s
	if fsal {
		end = s - 1
	}
	for i := 1; i < end; i++ {
		p("\tfor d := range yt {\n\t\tyt[d] = y[d] + float64(h*(%s))\n\t}\n", sum(tb.A[i]))
		p("\tf(t+float64(%s*h), yt, p, k%d)\n", kernelgen.Lit(tb.C[i]), i)
	}
	if fsal {
		p("\tfor d := range y1 {\n\t\ty1[d] = y[d] + float64(h*(%s))\n\t}\n", sum(tb.A[s-1]))
		if !deferLast {
			p("\tf(t+h, y1, p, k%d)\n", s-1)
		}
	} else {
		p("\tfor d := range y1 {\n\t\ty1[d] = y[d] + float64(h*(%s))\n\t}\n", sum(tb.B))
	}
	p("\tev := sv.ev[:nd]\n")
	p("\tfor d := range ev {\n\t\tev[d] = %s\n\t}\n", sum(tb.E))
	if tb.E3 != nil {
		p("\tev3 := sv.ev3[:nd]\n")
		p("\tfor d := range ev3 {\n\t\tev3[d] = %s\n\t}\n", sum(tb.E3))
	}
	p("}\n")
}
