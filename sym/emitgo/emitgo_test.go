package emitgo_test

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"go/parser"
	"go/token"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve/sym"
	"github.com/gradsolve/gradsolve/sym/emitgo"
	"github.com/gradsolve/gradsolve/sym/tape"
)

var update = flag.Bool("update", false, "rewrite testdata/lorenz.golden.go.txt and lorenz_gen_test.go from the generator's output")

// lorenzModel builds the Lorenz system with the parameter order of
// systems.Lorenz (σ, ρ, β) and the same expression trees as its Go code
// (a copy of the model in sym/tape's tests).
func lorenzModel() *sym.Model {
	m := sym.NewModel("lorenz")
	x, y, z := m.State("x", 1), m.State("y", 0), m.State("z", 0)
	sigma, rho, beta := m.Param("sigma", 10), m.Param("rho", 28), m.Param("beta", 8.0/3)
	m.Deriv(x, sigma.Mul(y.Sub(x)))
	m.Deriv(y, x.Mul(rho.Sub(z)).Sub(y))
	m.Deriv(z, x.Mul(y).Sub(beta.Mul(z)))
	m.T0, m.T1 = 0, 1
	return m
}

// allOpsModel uses every operation: + − · / and unary minus, pow with a
// variable and with a non-integer (and a negative) constant exponent,
// sqrt exp log sin cos tan tanh atan2 abs min max select, the time t, a
// constant folded from an expression of constants and negative
// constants.
func allOpsModel() *sym.Model {
	m := sym.NewModel("all-ops")
	a, b, c := m.State("a", 0.5), m.State("b", -1), m.State("c", 2)
	k1, k2, k3 := m.Param("k1", 1.25), m.Param("k2", 0.3), m.Param("k3", 2)
	t := m.Time()
	one := m.Const(1)
	twoPi := m.Const(2).Mul(m.Const(math.Pi)) // folded to one constant
	m.Deriv(a, sym.Sum(
		sym.Sqrt(a.Mul(a).Add(k1)),
		sym.Exp(b.Mul(k2).Neg()),
		sym.Log(sym.Abs(c).Add(one)).Neg(),
		t.Mul(k3),
	))
	m.Deriv(b, sym.Sum(
		sym.Sin(t.Mul(k3).Add(twoPi)).Mul(sym.Cos(a)),
		sym.Tan(b.Div(m.Const(5))),
		sym.Tanh(c).Neg(),
		a.Div(b.Mul(b).Add(one)),
	))
	m.Deriv(c, sym.Sum(
		sym.Atan2(b, a),
		sym.Abs(a).Add(one).Pow(k1),
		b.Mul(b).Add(one).PowConst(1.5),
		c.Mul(c).AddConst(2).PowConst(-0.5),
		sym.Min(a, b),
		sym.Max(c, k2).Neg(),
		sym.Select(a.Sub(b), c, m.Const(-2.5)),
		c.MulConst(-3.25),
		sym.Sqrt(m.Const(2)).Mul(a), // √2 folded
		t.Mul(t).Div(k3.Add(one)),
	))
	m.T0, m.T1 = 0, 3
	return m
}

// edgeModel has no parameters, an output that is a constant NaN with a
// payload, infinite and tiny constants, a state named "t" and a name
// that is no identifier, a negative T0 and Stiff set.
func edgeModel() *sym.Model {
	m := sym.NewModel("edge-case_2")
	a, b := m.State("t", -0.5), m.State("b-2", 3)
	m.Deriv(a, m.Const(math.Float64frombits(0x7ff8000000000123)))
	m.Deriv(b, sym.Sum(
		sym.Min(a, m.Const(math.Inf(1))),
		sym.Max(b, m.Const(math.Inf(-1))),
		a.MulConst(-2.5),
		m.Const(1e-300).Div(b),
		a.Sub(m.Const(-7)),
		b.MulConst(5e-324),
		b.MulConst(1e300),
	))
	m.T0, m.T1, m.Stiff = -1, 2.5, true
	return m
}

// manyParamsModel has more parameters than emitgo specializes the
// sensitivity columns for, so <Prefix>Sens takes the general form.
func manyParamsModel() *sym.Model {
	m := sym.NewModel("many")
	x, y := m.State("x", 1), m.State("y", 0.5)
	var p []sym.Expr
	for j := range 10 {
		p = append(p, m.Param(fmt.Sprint("k", j), 0.1*float64(j+1)))
	}
	m.Deriv(x, p[0].Mul(y).Sub(p[1].Mul(x).Mul(x)).Add(p[2]).Add(p[3].Mul(sym.Sin(p[4].Mul(y)))))
	m.Deriv(y, p[5].Mul(x).Sub(p[6].Mul(y)).Add(p[7].Mul(x).Mul(y)).Sub(p[8].Div(p[9].Add(x.Mul(x)))))
	m.T0, m.T1 = 0, 1
	return m
}

// orbitModel has initial values that depend on its parameters: a
// circular orbit of radius r0 at angle phi with speed factor q, and one
// state (z) whose initial value is a number.
func orbitModel() *sym.Model {
	m := sym.NewModel("orbit")
	r0, phi, q := m.Param("r0", 2), m.Param("phi", 0.5), m.Param("q", 1)
	v := sym.Sqrt(m.Const(1).Div(r0)).Mul(q)
	x := m.StateExpr("x", r0.Mul(sym.Cos(phi)))
	y := m.StateExpr("y", r0.Mul(sym.Sin(phi)))
	vx := m.StateExpr("vx", v.Neg().Mul(sym.Sin(phi)))
	vy := m.StateExpr("vy", v.Mul(sym.Cos(phi)))
	z := m.State("z", 1)
	r3 := x.Mul(x).Add(y.Mul(y)).PowConst(1.5)
	m.Deriv(x, vx)
	m.Deriv(y, vy)
	m.Deriv(vx, x.Neg().Div(r3))
	m.Deriv(vy, y.Neg().Div(r3))
	m.Deriv(z, q.Mul(z))
	m.T0, m.T1 = 0, 1
	return m
}

// piecewiseModel uses every piecewise operation: comparisons, ifelse on
// a comparison and on a number, sign, floor and ceil.
func piecewiseModel() *sym.Model {
	m := sym.NewModel("piecewise")
	a, b := m.State("a", 1.2), m.State("b", -0.3)
	k := m.Param("k", 0.8)
	t := m.Time()
	m.Deriv(a, sym.IfElse(sym.Gt(a, b), k.Mul(a).Mul(b), sym.Sin(b)).Add(sym.Sign(b).Mul(a.Mul(a))).
		Add(sym.Floor(b.MulConst(3).Add(t)).Mul(k)).Add(sym.Eq(a, b)).Sub(sym.Ne(b, k).Mul(t)))
	m.Deriv(b, sym.Lt(a, m.Const(1.5)).Mul(k).Mul(b).Add(sym.IfElse(a.Sub(k), sym.Exp(b), a)).
		Add(sym.Ceil(a.Sub(t)).Mul(b)).Add(sym.Ge(k, b).Mul(a)))
	m.T0, m.T1 = 0, 1
	return m
}

// nanModel sends NaN and signed zeros through the piecewise operations
// alone, whose results do not depend on which NaN operand propagates:
// comparisons (false with NaN except !=), ifelse (NaN ≠ 0), sign, floor
// and ceil (NaN unchanged).
func nanModel() *sym.Model {
	m := sym.NewModel("nan")
	x, y := m.State("x", 0), m.State("y", 0)
	z, u, w := m.State("z", 0), m.State("u", 0), m.State("w", 0)
	m.Deriv(x, sym.Sum(sym.Lt(x, y), sym.Le(x, y).MulConst(2), sym.Eq(x, y).MulConst(4), sym.Ne(x, y).MulConst(8),
		sym.Gt(x, y).MulConst(16), sym.Ge(x, y).MulConst(32)))
	m.Deriv(y, sym.IfElse(x, m.Const(1), m.Const(2)).Add(sym.IfElse(sym.Gt(y, m.Const(0)), m.Const(4), m.Const(8))))
	m.Deriv(z, sym.Sign(x))
	m.Deriv(u, sym.Floor(y))
	m.Deriv(w, sym.Ceil(x))
	m.T0, m.T1 = 0, 1
	return m
}

func mustBuild(t testing.TB, m *sym.Model) *tape.Set {
	t.Helper()
	s, err := tape.Build(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustGenerate(t testing.TB, m *sym.Model, opts emitgo.Options) []byte {
	t.Helper()
	out, err := emitgo.Generate(mustBuild(t, m), opts)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// compareFile compares got with a checked-in file, or rewrites the file
// under -update.
func compareFile(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range max(len(gl), len(wl)) {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("generated source differs from %s at line %d:\n got: %q\nwant: %q\n(go test -run %s -update rewrites it)", path, i+1, g, w, t.Name())
			}
		}
	}
}

// The Lorenz file, inspected by eye when the golden was written.
func TestGolden(t *testing.T) {
	got := mustGenerate(t, lorenzModel(), emitgo.Options{Package: "lorenz", Source: "lorenz.ode"})
	compareFile(t, filepath.Join("testdata", "lorenz.golden.go.txt"), got)
}

// lorenz_gen_test.go, which the benchmarks call, is the generator's
// output byte for byte: it cannot go stale.
func TestCommittedGeneratedUpToDate(t *testing.T) {
	got := mustGenerate(t, lorenzModel(), emitgo.Options{Package: "emitgo_test", Prefix: "GenLorenz", Source: "lorenzModel in emitgo_test.go"})
	compareFile(t, "lorenz_gen_test.go", got)
}

var header = regexp.MustCompile(`^// Code generated .* DO NOT EDIT\.$`)

// The output is gofmt-clean, starts with the standard header and
// imports math exactly when it uses it.
func TestFormatted(t *testing.T) {
	for _, c := range []struct {
		m        *sym.Model
		opts     emitgo.Options
		wantMath bool
	}{
		{lorenzModel(), emitgo.Options{Package: "main"}, false},
		{allOpsModel(), emitgo.Options{Package: "allops", Source: "testdata/all ops.ode"}, true},
		{edgeModel(), emitgo.Options{Package: "edge", Prefix: "E"}, true},
	} {
		out := mustGenerate(t, c.m, c.opts)
		f, err := format.Source(out)
		if err != nil {
			t.Fatalf("%s: %v", c.m.Name, err)
		}
		if !bytes.Equal(f, out) {
			t.Errorf("%s: output is not gofmt-clean", c.m.Name)
		}
		first, _, _ := strings.Cut(string(out), "\n")
		if !header.MatchString(first) {
			t.Errorf("%s: first line %q is not a generated-code header", c.m.Name, first)
		}
		if got := bytes.Contains(out, []byte(`"math"`)); got != c.wantMath {
			t.Errorf("%s: imports math: %v, want %v", c.m.Name, got, c.wantMath)
		}
	}
}

func TestDerivePrefix(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"lorenz", "Lorenz"},
		{"my-model_2", "MyModel2"},
		{"lorenz96_8", "Lorenz96_8"},
		{"van der Pol", "VanDerPol"},
		{"HIRES", "HIRES"},
		{"σ-model", "ΣModel"},
		{"  x  ", "X"},
	} {
		got, err := emitgo.DerivePrefix(c.name)
		if err != nil || got != c.want {
			t.Errorf("DerivePrefix(%q) = %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	for _, name := range []string{"", "3body", "--", "日本"} {
		if got, err := emitgo.DerivePrefix(name); err == nil {
			t.Errorf("DerivePrefix(%q) = %q, want an error", name, got)
		}
	}
}

func TestOptionErrors(t *testing.T) {
	s := mustBuild(t, lorenzModel())
	for _, opts := range []emitgo.Options{
		{},
		{Package: "_"},
		{Package: "func"},
		{Package: "a-b"},
		{Package: "main", Prefix: "lorenz"}, // not exported
		{Package: "main", Prefix: "Lo renz"},
		{Package: "main", Source: "a\nb"},
	} {
		if _, err := emitgo.Generate(s, opts); err == nil {
			t.Errorf("Generate(%+v) succeeded, want an error", opts)
		}
	}
	if _, err := emitgo.Generate(nil, emitgo.Options{Package: "main"}); err == nil {
		t.Error("Generate(nil) succeeded")
	}
	if _, err := emitgo.Generate(&tape.Set{Model: lorenzModel()}, emitgo.Options{Package: "main"}); err == nil {
		t.Error("Generate with no programs succeeded")
	}
	m := lorenzModel()
	m.Name = "3body"
	if _, err := emitgo.Generate(mustBuild(t, m), emitgo.Options{Package: "main"}); err == nil {
		t.Error("Generate derived a prefix from \"3body\"")
	}
	if _, err := emitgo.Generate(mustBuild(t, m), emitgo.Options{Package: "main", Prefix: "ThreeBody"}); err != nil {
		t.Errorf("Generate with an explicit prefix: %v", err)
	}
}

// Spot checks of the translation: products are wrapped in float64, a
// negative literal is parenthesised as an operand, NaN payloads and
// infinities are spelled through math, names fall back to slice
// elements in formulas, and a function with no parameters has no p or
// gp hint.
func TestTranslation(t *testing.T) {
	out := string(mustGenerate(t, edgeModel(), emitgo.Options{Package: "edge"}))
	for _, want := range []string{
		"func EdgeCase2F(t float64, y, p, dy []float64) {",
		"dy[0] = math.Float64frombits(0x7ff8000000000123)",
		"math.Min(y[0], math.Inf(1))",
		"math.Max(y[1], math.Inf(-1))",
		"float64(y[0] * (-2.5))",
		"1e-300 / y[1]",
		"y[0] - (-7)",
		"float64(y[1] * 5e-324)",
		"float64(y[1] * 1e+300)",
		"\tdy[0]/dt = NaN\n",
		"\tdy[1]/dt = ",
		`StateNames: []string{"t", "b-2"},`,
		"ParamNames: []string{},",
		"P:          []float64{},",
		"T0:         -1,",
		"Stiff:      true,",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	for _, bad := range []string{"_ = p[", "_ = gp[", "p[0]"} {
		if strings.Contains(out, bad) {
			t.Errorf("output of a model without parameters contains %q", bad)
		}
	}
	// Every multiplication of the all-ops model is rounded explicitly.
	all := string(mustGenerate(t, allOpsModel(), emitgo.Options{Package: "allops"}))
	mul := regexp.MustCompile(`:= (.*) \* `)
	for _, l := range strings.Split(all, "\n") {
		if m := mul.FindStringSubmatch(l); m != nil && !strings.HasPrefix(m[1], "float64(") {
			t.Errorf("unrounded product: %s", l)
		}
	}
	if !strings.Contains(all, "math.Pow(") || !strings.Contains(all, ", -0.5)") {
		t.Error("all-ops output lacks math.Pow with the exponent -0.5")
	}
	// Comparisons become Go comparisons setting 1, sign keeps its
	// operand unless it is > 0 or < 0, floor and ceil call math, and the
	// formulas show ifelse and the comparisons.
	pw := string(mustGenerate(t, piecewiseModel(), emitgo.Options{Package: "pw"}))
	for _, want := range []string{
		"\tif y[1] < y[0] {\n\t\ts0 = 1\n\t}\n",
		"\tif y[0] == y[1] {\n",
		"\tif y[1] != p[0] {\n",
		"\tif y[0] < 1.5 {\n",
		"\ts5 := y[1]\n\tif y[1] > 0 {\n\t\ts5 = 1\n\t} else if y[1] < 0 {\n\t\ts5 = -1\n\t}\n",
		":= math.Floor(", ":= math.Ceil(",
		"da/dt = ifelse(b < a, ", "ifelse(a - k != 0, exp(b), a)", "(a == b)",
	} {
		if !strings.Contains(pw, want) {
			t.Errorf("piecewise output lacks %q", want)
		}
	}
}

// Names may hold any character: they are quoted in comments, so a line
// break cannot end a comment and inject code. Large models get no
// formulas and a shortened name list.
func TestNamesInComments(t *testing.T) {
	m := sym.NewModel("odd")
	a := m.State("a\npackage x", 1)
	k := m.Param("k */ \"q\"", 2)
	m.Deriv(a, a.Mul(k))
	out := string(mustGenerate(t, m, emitgo.Options{Package: "odd"}))
	if _, err := format.Source([]byte(out)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`y holds "a\npackage x" and p holds "k */ \"q\""`, "\tdy[0]/dt = y[0]*p[0]\n", `StateNames: []string{"a\npackage x"},`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}

	big := sym.NewModel("big")
	var xs []sym.Expr
	for i := range 25 {
		xs = append(xs, big.State(fmt.Sprintf("x%d", i), 0))
	}
	for i, x := range xs {
		big.Deriv(x, xs[(i+1)%len(xs)].Sub(x))
	}
	out = string(mustGenerate(t, big, emitgo.Options{Package: "big"}))
	if !strings.Contains(out, "x18, x19, … (25 in all)") || strings.Contains(out, "/dt =") {
		t.Error("a model of 25 states should list 20 names and show no formulas")
	}
}

// A tape.Set is safe for concurrent use, and Generate reads the graph
// only under the Set's lock: another goroutine that builds sensitivity
// programs and problems meanwhile (which extends the graph) changes
// nothing in the output, and `go test -race` finds no race.
func TestGenerateConcurrent(t *testing.T) {
	for _, model := range []func() *sym.Model{lorenzModel, orbitModel} {
		opts := emitgo.Options{Package: "gen"}
		want := mustGenerate(t, model(), opts)
		s := mustBuild(t, model())
		np := s.Model.NumParams()
		done := make(chan error)
		go func() {
			for a := -1; a < np; a++ {
				for b := -1; b < np; b++ {
					if _, err := s.SensF([]int{a, b}); err != nil {
						done <- err
						return
					}
					_ = s.Problem()
				}
			}
			done <- nil
		}()
		got, err := emitgo.Generate(s, opts)
		if err := <-done; err != nil {
			t.Fatalf("%s: SensF: %v", s.Model.Name, err)
		}
		if err != nil {
			t.Fatalf("%s: Generate: %v", s.Model.Name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: Generate beside SensF gave other source than alone", s.Model.Name)
		}
	}
}

// GenerateLanes writes the tape's lane code of f into a Go file and a Go
// assembly file for amd64, byte for byte, where f has a lane form of
// one piece; a model whose f calls a math function has none.
func TestGenerateLanes(t *testing.T) {
	s := mustBuild(t, lorenzModel())
	goSrc, asmSrc, ok, err := emitgo.GenerateLanes(s, emitgo.Options{Package: "lorenz", Source: "lorenz.ode"})
	if err != nil || !ok {
		t.Fatalf("lorenz: ok %v, %v", ok, err)
	}
	fset := token.NewFileSet()
	if _, err := parser.ParseFile(fset, "lanes_amd64.go", goSrc, 0); err != nil {
		t.Fatalf("the lane Go file does not parse: %v", err)
	}
	body, _, _ := s.F().LaneCode()
	var hex []string
	for _, b := range body {
		hex = append(hex, fmt.Sprintf("BYTE $0x%02x", b))
	}
	asm := string(asmSrc)
	for _, want := range []string{"//go:build amd64", "TEXT ·lanesLorenzF(SB), NOSPLIT, $0-32", strings.Join(hex[:8], "; "), "VZEROUPPER\n\tRET\n"} {
		if !strings.Contains(asm, want) {
			t.Errorf("the assembly lacks %q", want)
		}
	}
	fOnly, sens, _ := strings.Cut(asm, "RET\n")
	if strings.Count(fOnly, "BYTE $") != len(body) || !bytes.Contains(goSrc, []byte("//go:build amd64")) {
		t.Errorf("the assembly of f holds %d bytes of the %d of its lane code", strings.Count(fOnly, "BYTE $"), len(body))
	}
	// The sensitivity columns: the lane code of f and J_y·v + J_p·w.
	fj, err := s.FJVP()
	if err != nil {
		t.Fatal(err)
	}
	fjBody, _, _ := fj.LaneCodeSeeded()
	if !strings.Contains(sens, "TEXT ·lanesLorenzFJVP(SB), NOSPLIT, $0-56") || strings.Count(sens, "BYTE $") != len(fjBody) ||
		!bytes.Contains(goSrc, []byte("func lanesLorenzSensLanes(paramCols []int)")) {
		t.Errorf("the sensitivity system's lane form is missing or holds %d bytes of the %d of its lane code", strings.Count(sens, "BYTE $"), len(fjBody))
	}
	// Every math function is lane code (pmath's straight-line forms):
	// a model with all of them has a lane form.
	m := sym.NewModel("decay")
	y := m.State("y", 1)
	m.Deriv(y, sym.Exp(y).Neg().Add(sym.Log(y)).Add(sym.Sin(y)).Add(y.Pow(sym.Cos(y))).Add(sym.Tan(y)).
		Add(sym.Tanh(y)).Add(sym.Atan2(y, sym.Min(y, sym.Max(y, sym.Sqrt(y))))))
	if _, _, ok, err := emitgo.GenerateLanes(mustBuild(t, m), emitgo.Options{Package: "decay"}); !ok || err != nil {
		t.Errorf("a model with every math function: ok %v, %v", ok, err)
	}
}
