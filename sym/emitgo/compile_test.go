package emitgo_test

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/sym"
	"github.com/gradsolve/gradsolve/sym/emitgo"
)

// This file compiles generated code with the go command: it checks that
// the generated functions agree with the tape bit for bit on this
// machine, and that no product is fused into a multiply–add on the
// architectures whose compilers fuse.

// goTool returns the go command, or skips the test.
func goTool(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds generated code with the go command; skipped in -short mode")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	return gobin
}

// repoRoot returns the directory of this module (two levels above this
// file).
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("runtime.Caller failed")
	}
	root := filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found: %v", err)
	}
	return root
}

// goCmd runs the go command in dir, offline and outside any workspace.
func goCmd(t *testing.T, gobin, dir string, env []string, args ...string) (stdout []byte, stderr string) {
	t.Helper()
	cmd := exec.Command(gobin, args...)
	cmd.Dir = dir
	flags := strings.TrimSpace(os.Getenv("GOFLAGS") + " -mod=mod")
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOPROXY=off", "GOTOOLCHAIN=local", "GOFLAGS="+flags)
	cmd.Env = append(cmd.Env, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.Bytes(), errb.String()
}

// evalPrograms evaluates the nine programs at pt and labels each
// result. The generated main program (harness) does the same.
func evalPrograms(pg *ode.Programs, dim, np int, t float64, y, p, v, w, u []float64) (labels []string, vals []float64) {
	add := func(name string, xs []float64) {
		for i, x := range xs {
			labels = append(labels, fmt.Sprintf("%s[%d]", name, i))
			vals = append(vals, x)
		}
	}
	dy, jvp, gy, gp, jac, dt := make([]float64, dim), make([]float64, dim), make([]float64, dim), make([]float64, np), make([]float64, dim*dim), make([]float64, dim)
	pg.F(t, y, p, dy)
	pg.JVP(t, y, p, v, w, jvp)
	pg.VJP(t, y, p, u, gy, gp)
	pg.JacY(t, y, p, jac)
	pg.DfDt(t, y, p, dt)
	add("F", dy)
	add("JVP", jvp)
	add("VJP.gy", gy)
	add("VJP.gp", gp)
	add("JacY", jac)
	add("DfDt", dt)
	// The second derivatives.
	jj, jt, hy, hp, ty, tp := make([]float64, dim*dim), make([]float64, dim), make([]float64, dim), make([]float64, np), make([]float64, dim), make([]float64, np)
	pg.JVPJacY(t, y, p, v, w, jj)
	pg.JVPDfDt(t, y, p, v, w, jt)
	pg.JVPVJP(t, y, p, v, w, u, hy, hp)
	pg.DfDtVJP(t, y, p, u, ty, tp)
	add("JVPJacY", jj)
	add("JVPDfDt", jt)
	add("JVPVJP.gy", hy)
	add("JVPVJP.gp", hp)
	add("DfDtVJP.gy", ty)
	add("DfDtVJP.gp", tp)
	return labels, vals
}

func hexBits(x float64) string { return fmt.Sprintf("%016x", math.Float64bits(x)) }

func hexList(xs []float64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = hexBits(x)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// initialValues returns y0(p) then ∂y0/∂p from the problem's Initial,
// or nothing when it has none.
func initialValues(pr *ode.Problem, p []float64) []float64 {
	if pr.Initial == nil {
		return nil
	}
	y0, jac := make([]float64, pr.Dim), make([]float64, pr.Dim*pr.NumParams)
	pr.Initial()(p, y0, jac)
	y1 := make([]float64, pr.Dim)
	pr.Initial()(p, y1, nil)
	for i := range y0 {
		if math.Float64bits(y0[i]) != math.Float64bits(y1[i]) {
			panic("Initial without a Jacobian differs")
		}
	}
	return append(y0, jac...)
}

// problemMeta describes a problem's names and defaults exactly.
func problemMeta(pr *ode.Problem) string {
	return fmt.Sprintf("%q %d %d %q %q %s %s %s %s %t", pr.Name, pr.Dim, pr.NumParams, pr.StateNames, pr.ParamNames,
		hexList(pr.Y0), hexList(pr.P), hexBits(pr.T0), hexBits(pr.T1), pr.Stiff)
}

// harness is the generated main program's fixed part: the same
// evalPrograms, hexBits, hexList and problemMeta as above, and a check
// that the Problem's F and Programs are the generated functions.
const harness = `
type point struct{ t float64; y, p, v, w, u []float64 }

func check(name string, pr *ode.Problem, direct *ode.Programs, pts []point) {
	if err := pr.Validate(); err != nil {
		fmt.Println(name, "invalid problem:", err)
		os.Exit(1)
	}
	fmt.Printf("%s meta %s\n", name, problemMeta(pr))
	viaProblem := pr.Programs()
	for i, pt := range pts {
		labels, vals := evalPrograms(direct, pr.Dim, pr.NumParams, pt.t, pt.y, pt.p, pt.v, pt.w, pt.u)
		_, alt := evalPrograms(viaProblem, pr.Dim, pr.NumParams, pt.t, pt.y, pt.p, pt.v, pt.w, pt.u)
		dy := make([]float64, pr.Dim)
		pr.F(pt.t, pt.y, pt.p, dy)
		for j := range vals {
			if math.Float64bits(alt[j]) != math.Float64bits(vals[j]) || (j < pr.Dim && math.Float64bits(dy[j]) != math.Float64bits(vals[j])) {
				fmt.Println(name, "Problem's functions differ from the generated ones at", labels[j])
				os.Exit(1)
			}
			fmt.Printf("%s %d %s %s\n", name, i, labels[j], hexBits(vals[j]))
		}
		for j, v := range initialValues(pr, pt.p) {
			fmt.Printf("%s %d Initial[%d] %s\n", name, i, j, hexBits(v))
		}
		checkSens(name, pr, direct, pt)
	}
}

// checkSens checks the Problem's SensF against F and one JVP per column
// of the generated functions, bit for bit: an initial-value column and,
// when the model has parameters, a column of each.
func checkSens(name string, pr *ode.Problem, direct *ode.Programs, pt point) {
	d, m := pr.Dim, pr.NumParams
	cols := []int{-1}
	for j := range m {
		cols = append(cols, j)
	}
	src, err := pr.SensF(cols)
	if err != nil {
		fmt.Println(name, "SensF:", err)
		os.Exit(1)
	}
	if _, err := pr.SensF([]int{m}); err == nil || !strings.Contains(err.Error(), "parameter") {
		fmt.Println(name, "SensF accepted a parameter out of range:", err)
		os.Exit(1)
	}
	na := d * (1 + len(cols))
	ya, got, want := make([]float64, na), make([]float64, na), make([]float64, na)
	copy(ya, pt.y)
	for c := range cols {
		for i := range d {
			ya[d*(1+c)+i] = pt.v[i] * float64(c+1)
		}
	}
	src()(pt.t, ya, pt.p, got)
	direct.F(pt.t, pt.y, pt.p, want[:d])
	for c, j := range cols {
		w := make([]float64, m)
		if j >= 0 {
			w[j] = 1
		}
		direct.JVP(pt.t, pt.y, pt.p, ya[d*(1+c):d*(2+c)], w, want[d*(1+c):d*(2+c)])
	}
	for i := range got {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			fmt.Println(name, "SensF differs from F and JVP at component", i, got[i], want[i])
			os.Exit(1)
		}
	}
}
`

// sourceOf returns the source of the named top-level functions of this
// file, for the harness.
func sourceOf(t *testing.T, names ...string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && contains(names, fd.Name.Name) {
			fd.Doc = nil
			if err := format.Node(&b, fset, fd); err != nil {
				t.Fatal(err)
			}
			b.WriteString("\n\n")
		}
	}
	return b.String()
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// goFloat returns an exact Go expression for x (a NaN input is
// math.NaN()).
func goFloat(x float64) string {
	if math.IsNaN(x) {
		return "math.NaN()"
	}
	if x == 0 && math.Signbit(x) {
		return "math.Copysign(0, -1)"
	}
	if math.IsInf(x, 0) {
		return fmt.Sprintf("math.Inf(%d)", int(math.Copysign(1, x)))
	}
	return strconv.FormatFloat(x, 'x', -1, 64)
}

func goFloats(xs []float64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = goFloat(x)
	}
	return "[]float64{" + strings.Join(s, ", ") + "}"
}

type genModel struct {
	m      *sym.Model
	prefix string
	// draw returns random inputs: t, y, p.
	draw func(r *rand.Rand) (float64, []float64, []float64)
	// extra are hand-picked inputs (ties of min and max, zero
	// conditions of select and abs).
	extra [][]float64 // t, then y, then p, concatenated
}

func (g genModel) points(n int) [][6][]float64 {
	r := rand.New(rand.NewPCG(7, uint64(len(g.prefix))))
	dim, np := g.m.Dim(), g.m.NumParams()
	vec := func(k int) []float64 {
		x := make([]float64, k)
		for i := range x {
			x[i] = r.NormFloat64()
		}
		return x
	}
	var pts [][6][]float64
	for i := range n + len(g.extra) {
		var t float64
		var y, p []float64
		if i < n {
			t, y, p = g.draw(r)
		} else {
			e := g.extra[i-n]
			t, y, p = e[0], e[1:1+dim], e[1+dim:1+dim+np]
		}
		pts = append(pts, [6][]float64{{t}, y, p, vec(dim), vec(np), vec(dim)})
	}
	return pts
}

func testModels() []genModel {
	negz := math.Copysign(0, -1)
	norm := func(r *rand.Rand, k int, scale float64) []float64 {
		x := make([]float64, k)
		for i := range x {
			x[i] = scale * r.NormFloat64()
		}
		return x
	}
	return []genModel{
		{m: lorenzModel(), prefix: "Lorenz", draw: func(r *rand.Rand) (float64, []float64, []float64) {
			return r.Float64(), norm(r, 3, 15), []float64{10 * r.Float64(), 30 * r.Float64(), 3 * r.Float64()}
		}},
		{m: allOpsModel(), prefix: "AllOps", draw: func(r *rand.Rand) (float64, []float64, []float64) {
			return 5 * r.Float64(), norm(r, 3, 2), []float64{0.1 + 2*r.Float64(), r.NormFloat64(), 3 * r.Float64()}
		}, extra: [][]float64{
			{0, 1, 1, 1, 1, 1, 1},           // min, max and select at ties
			{1, 0, 0, 0, 0.5, 0, -1},        // zero arguments of abs, atan2, select
			{2, -1.5, -1.5, 0.3, 1, 0.3, 1}, // max(c, k2) tie
		}},
		{m: edgeModel(), prefix: "Edge", draw: func(r *rand.Rand) (float64, []float64, []float64) {
			return r.NormFloat64(), norm(r, 2, 1e3), nil
		}, extra: [][]float64{{0, math.Inf(1), 0}}},
		{m: manyParamsModel(), prefix: "Many", draw: func(r *rand.Rand) (float64, []float64, []float64) {
			return r.Float64(), norm(r, 2, 1), norm(r, 10, 1)
		}},
		{m: orbitModel(), prefix: "Orbit", draw: func(r *rand.Rand) (float64, []float64, []float64) {
			return r.Float64(), norm(r, 5, 1), []float64{0.5 + r.Float64(), r.NormFloat64(), r.Float64()}
		}},
		{m: piecewiseModel(), prefix: "Piecewise", draw: func(r *rand.Rand) (float64, []float64, []float64) {
			return 2 * r.Float64(), norm(r, 2, 2), norm(r, 1, 1)
		}, extra: [][]float64{
			{0, 1, 1, 1},         // a = b, ifelse(a - k) = ifelse(0)
			{0.5, 1.5, 0.5, 0.5}, // a = 1.5, b = k, floor and ceil at integers
			{0, -0.0, -0.0, 0},   // signed zeros
			{1, 2.5, -2.5, -0.0}, // halves
			{0, math.Inf(1), math.Inf(-1), math.Inf(1)},
		}},
		{m: nanModel(), prefix: "NaN", draw: func(r *rand.Rand) (float64, []float64, []float64) {
			return 0, norm(r, 5, 2), nil
		}, extra: [][]float64{
			{0, math.NaN(), 1, 0, 0, 0},
			{0, 1, math.NaN(), 0, 0, 0},
			{0, math.NaN(), math.NaN(), 0, 0, 0},
			{0, negz, 0, 0, 0, 0},
			{0, math.Inf(-1), -0.5, 0, 0, 0},
			{0, -0.5, 2.5, 0, 0, 0},
		}},
	}
}

// The generated functions compile and return the tape's results bit for
// bit: they apply the same operations (+ − · / as Go operators, the same
// math functions) in the same order, and no product is fused (so no
// tolerance: any difference is a bug). The generated Problem carries the
// model's names and defaults exactly.
func TestCompiledAgreesWithTape(t *testing.T) {
	gobin := goTool(t)
	root := repoRoot(t)
	dir := t.TempDir()
	write := func(name string, data []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", fmt.Appendf(nil, "module gentest\n\ngo 1.26\n\nrequire github.com/gradsolve/gradsolve v0.0.0\n\nreplace github.com/gradsolve/gradsolve => %s\n", root))
	if sum, err := os.ReadFile(filepath.Join(root, "go.sum")); err == nil {
		write("go.sum", sum)
	}

	var main, want bytes.Buffer
	main.WriteString("package main\n\nimport (\n\t\"fmt\"\n\t\"math\"\n\t\"os\"\n\t\"strings\"\n\n\t\"github.com/gradsolve/gradsolve/ode\"\n)\n")
	main.WriteString(harness)
	main.WriteString(sourceOf(t, "evalPrograms", "hexBits", "hexList", "problemMeta", "initialValues"))
	var calls strings.Builder
	for _, gm := range testModels() {
		s := mustBuild(t, gm.m)
		src, err := emitgo.Generate(s, emitgo.Options{Package: "main", Prefix: gm.prefix, Source: gm.m.Name})
		if err != nil {
			t.Fatal(err)
		}
		write(strings.ToLower(gm.prefix)+"_gen.go", src)

		pr, pg := s.Problem(), s.Programs()
		fmt.Fprintf(&want, "%s meta %s\n", gm.prefix, problemMeta(pr))
		fmt.Fprintf(&main, "var %sPoints = []point{\n", gm.prefix)
		for i, pt := range gm.points(40) {
			fmt.Fprintf(&main, "\t{%s, %s, %s, %s, %s, %s},\n", goFloat(pt[0][0]),
				goFloats(pt[1]), goFloats(pt[2]), goFloats(pt[3]), goFloats(pt[4]), goFloats(pt[5]))
			labels, vals := evalPrograms(pg, pr.Dim, pr.NumParams, pt[0][0], pt[1], pt[2], pt[3], pt[4], pt[5])
			for j := range vals {
				fmt.Fprintf(&want, "%s %d %s %s\n", gm.prefix, i, labels[j], hexBits(vals[j]))
			}
			for j, v := range initialValues(pr, pt[2]) {
				fmt.Fprintf(&want, "%s %d Initial[%d] %s\n", gm.prefix, i, j, hexBits(v))
			}
		}
		main.WriteString("}\n\n")
		fmt.Fprintf(&calls, "\tcheck(%q, %[1]sProblem(), &ode.Programs{F: %[1]sF, JVP: %[1]sJVP, VJP: %[1]sVJP, JacY: %[1]sJacY, DfDt: %[1]sDfDt, "+
			"JVPJacY: %[1]sJVPJacY, JVPDfDt: %[1]sJVPDfDt, JVPVJP: %[1]sJVPVJP, DfDtVJP: %[1]sDfDtVJP}, %[1]sPoints)\n", gm.prefix)
	}
	fmt.Fprintf(&main, "func main() {\n%s}\n", calls.String())
	src, err := format.Source(main.Bytes())
	if err != nil {
		t.Fatalf("harness: %v\n%s", err, main.Bytes())
	}
	write("main.go", src)

	out, _ := goCmd(t, gobin, dir, nil, "run", ".")
	got, exp := strings.Split(string(out), "\n"), strings.Split(want.String(), "\n")
	if len(got) != len(exp) {
		t.Errorf("generated program printed %d lines, want %d", len(got), len(exp))
	}
	bad := 0
	for i := range min(len(got), len(exp)) {
		if got[i] != exp[i] {
			if bad++; bad <= 10 {
				t.Errorf("generated: %s\n     tape: %s", got[i], exp[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d results differ", bad, len(exp))
	}
}

// fused matches the fused multiply–add instructions of arm64, ppc64le,
// s390x and riscv64 in the compiler's assembly listing.
var fused = regexp.MustCompile(`\)\t(FN?M(ADD|SUB)[A-Z]*|WFN?M[AS][A-Z]*)\t`)

// On the architectures whose compilers fuse x*y + z, the generated code
// contains no fused multiply–add: the float64 conversions round every
// product, as the tape does. A control function without the conversion
// shows the check can see fusion. The generated file is cross-compiled
// without its Problem function, so that only packages math and pmath
// (copied in, and checked too) are needed.
func TestNoFusedMultiplyAdd(t *testing.T) {
	gobin := goTool(t)
	dir := t.TempDir()
	var files []string
	for _, gm := range testModels()[:2] {
		src, err := emitgo.Generate(mustBuild(t, gm.m), emitgo.Options{Package: "fusecheck", Prefix: gm.prefix})
		if err != nil {
			t.Fatal(err)
		}
		name := strings.ToLower(gm.prefix) + "_gen.go"
		files = append(files, name)
		src = bytes.ReplaceAll(withoutProblem(t, src), []byte(`"github.com/gradsolve/gradsolve/pmath"`), []byte(`"fusecheck/pmath"`))
		if err := os.WriteFile(filepath.Join(dir, name), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module fusecheck\n\ngo 1.26\n"), 0o644))
	// Package pmath (the generated exp and log) goes in as a copy,
	// checked as well: it must not fuse either.
	must(os.MkdirAll(filepath.Join(dir, "pmath"), 0o755))
	pm, err := filepath.Glob(filepath.Join("..", "..", "pmath", "*.go"))
	must(err)
	for _, f := range pm {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		must(err)
		name := "pmath_" + filepath.Base(f)
		files = append(files, name)
		must(os.WriteFile(filepath.Join(dir, "pmath", name), b, 0o644))
	}
	must(os.WriteFile(filepath.Join(dir, "control.go"), []byte("package fusecheck\n\nfunc control(a, b, c float64) float64 { return a*b + c }\n"), 0o644))
	for _, arch := range []string{"arm64", "ppc64le", "s390x", "riscv64"} {
		_, asm := goCmd(t, gobin, dir, []string{"GOOS=linux", "GOARCH=" + arch, "CGO_ENABLED=0"}, "build", "-gcflags=fusecheck/...=-S", "./...")
		controlFused, genLines, pmathLines := false, 0, 0
		for _, l := range strings.Split(asm, "\n") {
			switch {
			case strings.Contains(l, "control.go:") && fused.MatchString(l):
				controlFused = true
			case containsAny(l, files):
				genLines++
				if strings.Contains(l, "/pmath_") {
					pmathLines++
				}
				if fused.MatchString(l) {
					t.Errorf("%s: fused multiply-add in generated code: %s", arch, strings.TrimSpace(l))
				}
			}
		}
		if !controlFused || genLines == 0 || pmathLines == 0 {
			t.Errorf("%s: the assembly listing shows no fusion in the control function (%v) or no generated code (%d lines, %d of pmath): the check is blind", arch, controlFused, genLines, pmathLines)
		}
	}
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, "/"+x+":") {
			return true
		}
	}
	return false
}

// withoutProblem drops the ode and fmt imports, the <Prefix>Problem
// and <Prefix>SensF functions and the lane hook (<Prefix>Sens, which
// holds the arithmetic, stays).
func withoutProblem(t *testing.T, src []byte) []byte {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "gen.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var decls []ast.Decl
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if strings.HasSuffix(d.Name.Name, "Problem") || strings.HasSuffix(d.Name.Name, "SensF") {
				continue
			}
		case *ast.GenDecl:
			if d.Tok == token.VAR && len(d.Specs) == 1 && strings.HasPrefix(d.Specs[0].(*ast.ValueSpec).Names[0].Name, "lanes") {
				continue
			}
			if d.Tok == token.IMPORT {
				var specs []ast.Spec
				for _, s := range d.Specs {
					if p := s.(*ast.ImportSpec).Path.Value; p != `"github.com/gradsolve/gradsolve/ode"` && p != `"fmt"` {
						specs = append(specs, s)
					}
				}
				if len(specs) == 0 {
					continue
				}
				d.Specs = specs
			}
		}
		decls = append(decls, d)
	}
	f.Decls = decls
	f.Comments = nil
	var b bytes.Buffer
	if err := format.Node(&b, fset, f); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
