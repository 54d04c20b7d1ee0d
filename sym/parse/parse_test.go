package parse_test

import (
	"errors"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/sym"
	"github.com/gradsolve/gradsolve/sym/parse"
	"github.com/gradsolve/gradsolve/sym/tape"
	"github.com/gradsolve/gradsolve/systems"
)

// fusesFMA reports whether the Go compiler may fuse x*y + z into one
// rounding on this architecture (it does on arm64, ppc64x, s390x,
// riscv64 and loong64, never on amd64 or 386). Hand-written Go code can
// then differ from the tape, which rounds every operation, by an ulp of
// an intermediate result.
var fusesFMA = !slices.Contains([]string{"amd64", "386", "wasm"}, runtime.GOARCH)

// same reports whether got equals want bitwise; where the compiler may
// fuse multiply-adds it allows 1e-12 of the largest |want_i| (a fused
// product differs by at most an ulp of a product, and the test points
// keep products within a few orders of magnitude of the results).
func same(got, want float64, scale float64) bool {
	if math.Float64bits(got) == math.Float64bits(want) {
		return true
	}
	return fusesFMA && math.Abs(got-want) <= 1e-12*(1+scale)
}

func mustParse(t testing.TB, name, src string) *sym.Model {
	t.Helper()
	m, err := parse.Parse(name, []byte(src))
	if err != nil {
		t.Fatalf("Parse(%s):\n%v", name, err)
	}
	return m
}

func mustProblem(t testing.TB, m *sym.Model) *ode.Problem {
	t.Helper()
	s, err := tape.Build(m)
	if err != nil {
		t.Fatalf("tape.Build(%s): %v", m.Name, err)
	}
	return s.Problem()
}

// perm returns, for each name in to, its index in from.
func perm(t *testing.T, from, to []string) []int {
	t.Helper()
	if len(from) != len(to) {
		t.Fatalf("names %v and %v differ", from, to)
	}
	idx := make([]int, len(to))
	for i, n := range to {
		j := slices.Index(from, n)
		if j < 0 {
			t.Fatalf("name %s of %v not in %v", n, to, from)
		}
		idx[i] = j
	}
	return idx
}

// gather returns v reordered: out[i] = v[idx[i]].
func gather(v []float64, idx []int) []float64 {
	out := make([]float64, len(idx))
	for i, j := range idx {
		out[i] = v[j]
	}
	return out
}

// robertsonF is the Robertson right-hand side written in the order of
// examples/robertson.ode (y2^2 is built as y2*y2).
func robertsonF(_ float64, y, p, dy []float64) {
	y1, y2, y3 := y[0], y[1], y[2]
	k1, k2, k3 := p[0], p[1], p[2]
	dy[0] = -k1*y1 + k3*y2*y3
	dy[1] = k1*y1 - k3*y2*y3 - k2*(y2*y2)
	dy[2] = k2 * (y2 * y2)
}

func robertson() *ode.Problem {
	return &ode.Problem{
		Name: "robertson", Dim: 3, NumParams: 3, F: robertsonF,
		StateNames: []string{"y1", "y2", "y3"}, ParamNames: []string{"k1", "k2", "k3"},
		Y0: []float64{1, 0, 0}, P: []float64{0.04, 3e7, 1e4}, T0: 0, T1: 1e5, Stiff: true,
	}
}

// TestExamples parses every example, builds its tape, and checks that
// its defaults equal the built-in problem's and that its f agrees with
// the built-in's hand-written Go bitwise at random points: each example
// writes its expressions in the order of the Go code, so the tape
// performs the same float64 operations (see same for the exception).
// States and parameters are matched by name (lorenz.ode declares rho
// before sigma; systems.Lorenz has sigma first).
func TestExamples(t *testing.T) {
	rows := []struct {
		file string
		ref  func() *ode.Problem
		// draw fills y and p (in the reference's order) with a random point.
		draw func(r *rand.Rand, y, p []float64)
	}{
		{"lorenz.ode", systems.Lorenz, func(r *rand.Rand, y, p []float64) {
			y[0], y[1], y[2] = 10*r.NormFloat64(), 10*r.NormFloat64(), 30*r.NormFloat64()
			p[0], p[1], p[2] = 20*r.Float64(), 40*r.Float64(), 5*r.Float64()
		}},
		{"vanderpol.ode", systems.VanDerPol, func(r *rand.Rand, y, p []float64) {
			y[0], y[1] = 2*r.NormFloat64(), 2*r.NormFloat64()
			p[0] = 10 * r.Float64()
		}},
		{"halo.ode", systems.Halo, func(r *rand.Rand, y, p []float64) {
			for i := range y {
				y[i] = r.NormFloat64()
			}
			p[0], p[1], p[2] = 0.5+r.Float64(), 0.5+0.5*r.Float64(), 0.1+0.4*r.Float64()
		}},
		{"kepler.ode", systems.Kepler, func(r *rand.Rand, y, p []float64) {
			for i := range y {
				y[i] = r.NormFloat64()
			}
			p[0] = 0.5 + r.Float64()
		}},
		{"robertson.ode", robertson, func(r *rand.Rand, y, p []float64) {
			for i := range y {
				y[i] = r.Float64()
			}
			p[0], p[1], p[2] = 0.08*r.Float64(), 6e7*r.Float64(), 2e4*r.Float64()
		}},
	}
	for _, row := range rows {
		t.Run(row.file, func(t *testing.T) {
			m, err := parse.ParseFile(filepath.Join("..", "..", "examples", row.file))
			if err != nil {
				t.Fatal(err)
			}
			got, want := mustProblem(t, m), row.ref()
			if got.Name != want.Name {
				t.Errorf("name %q, built-in %q", got.Name, want.Name)
			}
			ys := perm(t, want.StateNames, got.StateNames) // got's state i is want's state ys[i]
			ps := perm(t, want.ParamNames, got.ParamNames)
			if !slices.Equal(got.Y0, gather(want.Y0, ys)) || !slices.Equal(got.P, gather(want.P, ps)) {
				t.Errorf("defaults y0 = %v, p = %v; built-in (reordered) %v, %v", got.Y0, got.P, gather(want.Y0, ys), gather(want.P, ps))
			}
			if got.T0 != want.T0 || got.T1 != want.T1 || got.Stiff != want.Stiff {
				t.Errorf("span [%v, %v] stiff %v; built-in [%v, %v] %v", got.T0, got.T1, got.Stiff, want.T0, want.T1, want.Stiff)
			}
			rng := rand.New(rand.NewPCG(1, uint64(len(row.file))))
			y, p := make([]float64, want.Dim), make([]float64, want.NumParams)
			dyGot, dyWant := make([]float64, got.Dim), make([]float64, want.Dim)
			for range 1000 {
				row.draw(rng, y, p)
				tt := rng.NormFloat64()
				want.F(tt, y, p, dyWant)
				got.F(tt, gather(y, ys), gather(p, ps), dyGot)
				scale := 0.0
				for _, v := range dyWant {
					scale = max(scale, math.Abs(v))
				}
				for i, v := range gather(dyWant, ys) {
					if !same(dyGot[i], v, scale) {
						t.Fatalf("f(%v, %v, %v): %s' = %v, built-in %v", tt, y, p, got.StateNames[i], dyGot[i], v)
					}
				}
			}
		})
	}
}

// TestBuildsAsWritten checks the graph structure: building the intended
// tree again in the parsed model's graph must return the very node the
// parser made (the graph hash-conses nodes), and a reassociated tree a
// different one.
func TestBuildsAsWritten(t *testing.T) {
	m := mustParse(t, "f.ode", `
state x = 1, y = 0, z = 0
param rho = 28, a = 1, b = 2, c = 3
x' = x*(rho - z) - y
y' = a + b + c
z' = -a*x^2/b/c
`)
	f, err := m.F()
	if err != nil {
		t.Fatal(err)
	}
	g := m.Graph()
	x, y, z := g.State(0), g.State(1), g.State(2)
	rho, a, b, c := g.Param(0), g.Param(1), g.Param(2), g.Param(3)
	for i, row := range []struct {
		want, other sym.Expr
	}{
		{x.Mul(rho.Sub(z)).Sub(y), x.Mul(rho).Sub(x.Mul(z)).Sub(y)},
		{a.Add(b).Add(c), a.Add(b.Add(c))},
		{a.Neg().Mul(x.Mul(x)).Div(b).Div(c), a.Neg().Mul(x.Mul(x)).Div(b.Mul(c))},
	} {
		if f[i].ID() != row.want.ID() {
			t.Errorf("derivative %d: node %d, want node %d", i, f[i].ID(), row.want.ID())
		}
		if f[i].ID() == row.other.ID() {
			t.Errorf("derivative %d: reassociated tree gives the same node", i)
		}
	}
}

// TestPrecedence evaluates f = EXPR with the single state y = 3 at
// t = 0.5 and p = (2) and compares it bitwise with the same expression
// written in Go: both perform the same float64 operations (sym lowers
// y^2 and y^3 to products, written so in Go; constant subexpressions
// fold with the same float64 arithmetic).
func TestPrecedence(t *testing.T) {
	const y, tt, k = 3.0, 0.5, 2.0
	rows := []struct {
		expr string
		want float64
	}{
		{"2^3^2", 512},
		{"-2^2", -4},
		{"(-2)^2", 4},
		{"-y^2", -(y * y)},
		{"1-2-3", -4},
		{"8/4/2", 1},
		{"2+3*4", 14},
		{"(2+3)*4", 20},
		{"2*3^2", 18},
		{"2^3*2", 16},
		{"2^-1", 0.5},
		{"2^-1^2", 0.5},
		{"-y*k", -y * k},
		{"y*-k", y * -k},
		{"y - -k", y - -k},
		{"y-k-1", y - k - 1},
		{"y/k/2", y / k / 2},
		{"y/k*2", y / k * 2},
		{"+y", y},
		{"--y", y},
		{"-+-y", y},
		{"1 + y*k - y/k", 1 + y*k - y/k},
		{"y^3", y * y * y},
		{"y^k", math.Pow(y, k)},
		{"k^y^0.5", math.Pow(k, math.Sqrt(y))},
		{"8/3", 8.0 / 3},
		{"1e-3 + .5 + 2.5E+4 + 1.", sum4(1e-3, .5, 2.5e+4, 1.)},
		{"sqrt(y) + exp(k) - log(y)", math.Sqrt(y) + math.Exp(k) - math.Log(y)},
		{"sin(y)*cos(k)/tan(t)", math.Sin(y) * math.Cos(k) / math.Tan(tt)},
		{"tanh(y - 4)", math.Tanh(y - 4)},
		{"atan2(y, -k)", math.Atan2(y, -k)},
		{"pow(y, 1.5)", math.Pow(y, 1.5)},
		{"pow(2, 10)", 1024},
		{"abs(k - y)", math.Abs(k - y)},
		{"min(y, k) + max(y, k)*10", math.Min(y, k) + math.Max(y, k)*10},
		{"pi", math.Pi},
		{"2*pi*t", 2 * math.Pi * tt},
		{"t^2", tt * tt},
		{"sin(pi/2)", math.Sin(math.Pi / 2)},
		{"((y))", y},
		// Comparisons bind more loosely than + and −, and give 1 or 0.
		{"y < k + 2", 1},
		{"y + 1 < k*2", 0},
		{"y <= 3", 1},
		{"y > 3", 0},
		{"y >= 3", 1},
		{"y == 3", 1},
		{"y != 3", 0},
		{"2*(y > k) - 1", 1},
		{"(y < k) + (y > k)*10", 10},
		{"-y < -k", 1},
		{"ifelse(y > k, y, k)", y},
		{"ifelse(y < k, y, k)", k},
		{"ifelse(y - 3, 1, 2)", 2},
		{"ifelse(y, 1, 2)", 1},
		{"ifelse(y > k, ifelse(t < 1, 5, 6), 7)", 5},
		{"sign(k - y) + sign(y) + sign(y - 3)", 0},
		{"floor(y/k) + ceil(y/k)*10", 1 + 2*10},
		{"floor(-y/k)", -2},
		{"ceil(-t)", math.Copysign(0, -1)},
		{"sign(-(t - 0.5))", math.Copysign(0, -1)},
		{"floor(t) - 2*floor(t/2) == 0", 1},
	}
	for _, row := range rows {
		src := "state y = 3\nparam k = 2\ny' = " + row.expr + "\n"
		m := mustParse(t, "prec.ode", src)
		pr := mustProblem(t, m)
		dy := make([]float64, 1)
		pr.F(tt, []float64{y}, []float64{k}, dy)
		if math.Float64bits(dy[0]) != math.Float64bits(row.want) {
			t.Errorf("%s = %v, want %v", row.expr, dy[0], row.want)
		}
	}
}

// sum4 adds in float64, left to right (a Go constant expression would
// be evaluated exactly and rounded once).
func sum4(a, b, c, d float64) float64 { return a + b + c + d }

// TestStatements checks what the statements set on the model.
func TestStatements(t *testing.T) {
	m := mustParse(t, "dir/my-model.ode", `
# comment line
   # indented comment
const d0 = 3
state a = 1 + 1, b = -2^2   # trailing comment
state c = 2*d0
param p = 8/3, q = atan2(1, 1)
const d1 = 3
let l = a*p + d1
span 1, -1
stiff
a' = l
b' = t
c' = q
`)
	if m.Name != "my-model" {
		t.Errorf("default name %q, want my-model", m.Name)
	}
	if !slices.Equal(m.StateNames(), []string{"a", "b", "c"}) || !slices.Equal(m.ParamNames(), []string{"p", "q"}) {
		t.Errorf("names %v %v", m.StateNames(), m.ParamNames())
	}
	if y0 := m.Y0(); !slices.Equal(y0, []float64{2, -4, 2 * 3}) {
		t.Errorf("y0 = %v", y0)
	}
	if p := m.P(); !slices.Equal(p, []float64{8.0 / 3, math.Atan2(1, 1)}) {
		t.Errorf("p = %v", p)
	}
	if m.T0 != 1 || m.T1 != -1 || !m.Stiff {
		t.Errorf("span [%v, %v], stiff %v", m.T0, m.T1, m.Stiff)
	}
	pr := mustProblem(t, m)
	dy := make([]float64, 3)
	pr.F(0.25, []float64{1, 2, 3}, []float64{5, 7}, dy)
	if want := []float64{1*5 + 3, 0.25, 7}; !slices.Equal(dy, want) {
		t.Errorf("f = %v, want %v", dy, want)
	}
}

// TestLineEnds checks CRLF line ends, a span with a parenthesized
// negative t1, and a name statement using a keyword.
func TestLineEnds(t *testing.T) {
	m := mustParse(t, "crlf.ode", "name state\r\nstate x = 1\r\nspan 0 (-1)\r\nx' = -x\r\n")
	if m.Name != "state" || m.T0 != 0 || m.T1 != -1 {
		t.Errorf("name %q, span [%v, %v]", m.Name, m.T0, m.T1)
	}
}

func TestStatementsConst(t *testing.T) {
	m := mustParse(t, "c.ode", "const g = 9.81\nconst h = g/2\nlet k = h*2\nstate v = k\nparam drag = 0.1\nv' = -g - drag*v\n")
	if y0 := m.Y0(); y0[0] != 9.81/2*2 {
		t.Errorf("y0 = %v", y0)
	}
	if m.T0 != 0 || m.T1 != 0 || m.Stiff || m.Name != "c" {
		t.Errorf("span [%v, %v], stiff %v, name %q: want no span, not stiff, name c", m.T0, m.T1, m.Stiff, m.Name)
	}
}

// Const and let lines take comma lists, as state and param lines do;
// each binding may use the ones before it on the line.
func TestBindingLists(t *testing.T) {
	m := mustParse(t, "lists.ode", "const a = 1, b = 2/3, c = a + b\nstate x = c\nlet u = x*a, w = u - b\nx' = w\n")
	a, b := 1.0, 2.0/3 // float64 arithmetic, as the file's
	if y0 := m.Y0(); y0[0] != a+b {
		t.Errorf("y0 = %v, want %v", y0, a+b)
	}
	pr := mustProblem(t, m)
	dy := make([]float64, 1)
	pr.F(0, []float64{3}, nil, dy)
	if want := 3*a - b; dy[0] != want {
		t.Errorf("f(3) = %v, want %v", dy[0], want)
	}
	for _, row := range []errRow{
		{"const list missing comma", "const a = 1 b = 2\n", 1, 13, []string{`unexpected name "b"`, `expected "," or end of line`}},
		{"const list trailing comma", "const a = 1,\n", 1, 13, []string{"expected a name after const"}},
		{"const list duplicate", "const a = 1, a = 2\n", 1, 14, []string{"a is already defined", "const at f.ode:1:7"}},
		{"let list own definition", "state x = 1\nlet u = x, w = w\nx' = u\n", 2, 16, []string{"w is used in its own definition"}},
	} {
		t.Run(row.name, func(t *testing.T) { checkError(t, row) })
	}
}

// Initial values and consts may use parameters: the model then carries
// the initial values as expressions of p, a const that uses a parameter
// is an expression of p (like a let), and Y0 is the value at the
// defaults.
func TestInitialFromParams(t *testing.T) {
	m := mustParse(t, "orbit.ode", `param r0 = 2, phi = 0.5, ecc = 0.5
const e2 = ecc^2, half = 1/2
let vc = sqrt((1 + ecc)/r0)
state x = r0*cos(phi), y = r0*sin(phi)
state vx = -vc*sin(phi), vy = vc*cos(phi), w = half
x' = vx
y' = vy
vx' = -x*e2
vy' = -y
w' = 0
`)
	if !m.InitialDependsOnParams() {
		t.Fatal("InitialDependsOnParams = false")
	}
	r0, phi, ecc := 2.0, 0.5, 0.5
	vc := math.Sqrt((1 + ecc) / r0)
	want := []float64{r0 * math.Cos(phi), r0 * math.Sin(phi), -vc * math.Sin(phi), vc * math.Cos(phi), 0.5}
	if y0 := m.Y0(); !testutil.IdenticalBits(y0, want) {
		t.Errorf("Y0 = %v, want %v", y0, want)
	}
	if c, ok := m.Initial()[4].IsConst(); !ok || c != 0.5 {
		t.Errorf("w's initial value is not the constant 0.5")
	}
	// The initial values follow p.
	p := []float64{3, 1, 0.2}
	vc = math.Sqrt((1 + p[2]) / p[0])
	want = []float64{p[0] * math.Cos(p[1]), p[0] * math.Sin(p[1]), -vc * math.Sin(p[1]), vc * math.Cos(p[1]), 0.5}
	if got := m.Graph().Evaluate(m.Initial(), 0, nil, p); !testutil.IdenticalBits(got, want) {
		t.Errorf("y0(%v) = %v, want %v", p, got, want)
	}
	// e2 is ecc^2 = ecc*ecc, an expression of p in f.
	pr := mustProblem(t, m)
	dy := make([]float64, 5)
	pr.F(0, []float64{1, 1, 0, 0, 0}, p, dy)
	if dy[2] != -(p[2] * p[2]) {
		t.Errorf("vx' = %v, want %v", dy[2], -(p[2] * p[2]))
	}
	// A file whose initial values are numbers has none that depend on p.
	if mustParse(t, "c.ode", "param k = 1\nconst c = 2\nstate x = c\nx' = k*x\n").InitialDependsOnParams() {
		t.Error("constant initial values depend on parameters")
	}
}

func TestParseFileErrors(t *testing.T) {
	_, err := parse.ParseFile(filepath.Join(t.TempDir(), "missing.ode"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ParseFile(missing) = %v, want fs.ErrNotExist", err)
	}
	path := filepath.Join(t.TempDir(), "bad.ode")
	if err := os.WriteFile(path, []byte("state x = 1\nx' = y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = parse.ParseFile(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+":2:6: unknown name y") {
		t.Errorf("ParseFile(bad) = %v, want %s:2:6: unknown name y", err, path)
	}
}

// errRow is one expected error: the source, the position (line 0 for an
// error about the whole file) and words the message must contain.
type errRow struct {
	name      string
	src       string
	line, col int
	words     []string
}

func TestErrors(t *testing.T) {
	rows := []errRow{
		// Unknown names.
		{"unknown name", "state x = 1\nparam sigma = 1\nx' = sigm*x\n", 3, 6, []string{"unknown name sigm", "did you mean sigma"}},
		{"unknown name no suggestion", "state x = 1\nx' = zeta*x\n", 2, 6, []string{"unknown name zeta"}},
		{"used before declaration", "state x = 1\nx' = k*x\nparam k = 1\n", 2, 6, []string{"k is used before its declaration", "param at f.ode:3:7"}},
		{"own definition", "state x = 1\nlet a = a + 1\nx' = x\n", 2, 9, []string{"a is used in its own definition"}},
		{"own definition state", "state x = 2*x\nx' = x\n", 1, 13, []string{"x is used in its own definition"}},
		{"unknown function", "state x = 1\nx' = sqr(x)\n", 2, 6, []string{"unknown function sqr", "did you mean sqrt"}},
		{"call of a state", "state x = 1\nx' = x(2)\n", 2, 6, []string{"x is a state, not a function"}},
		{"function without call", "state x = 1\nx' = sqrt\n", 2, 6, []string{"sqrt is a function", "sqrt(…)"}},
		{"keyword as value", "state x = 1\nx' = state\n", 2, 6, []string{"state is a keyword, not a value"}},
		// Derivatives.
		{"state without derivative", "state x = 1, y = 2\nx' = y\n", 1, 14, []string{"state y has no derivative", "y' ="}},
		{"derivative of a param", "state x = 1\nparam k = 1\nx' = k\nk' = 1\n", 4, 1, []string{"derivative of k", "param", "f.ode:2:7", "not a state"}},
		{"derivative of unknown", "state x = 1\nx' = 1\nz' = 1\n", 3, 1, []string{"derivative of unknown state z"}},
		{"derivative before state", "x' = 1\nstate x = 1\n", 1, 1, []string{"x is used before its declaration", "state at f.ode:2:7"}},
		{"duplicate derivative", "state x = 1\nx' = 1\nx' = 2\n", 3, 1, []string{"duplicate derivative of x", "first at f.ode:2:1"}},
		{"second derivative", "state x = 1\nx'' = 1\n", 2, 3, []string{"only first derivatives"}},
		// Definitions.
		{"duplicate state/param", "state x = 1\nparam x = 2\nx' = 1\n", 2, 7, []string{"x is already defined", "state at f.ode:1:7"}},
		{"duplicate in one line", "state x = 1, x = 2\nx' = 1\n", 1, 14, []string{"x is already defined", "state at f.ode:1:7"}},
		{"duplicate const/let", "state x = 1\nconst c = 1\nlet c = x\nx' = c\n", 3, 5, []string{"c is already defined", "const at f.ode:2:7"}},
		{"reserved function", "state x = 1\nlet sin = 2\nx' = 1\n", 2, 5, []string{"sin is reserved for the function sin(…)", "cannot name a let", "rename the let"}},
		{"reserved pi", "state pi = 1\n", 1, 7, []string{"pi is the constant π", "cannot be defined"}},
		{"reserved t", "state x = 1\nparam t = 1\nx' = 1\n", 2, 7, []string{"t is the time variable", "cannot be defined"}},
		{"reserved keyword", "state state = 1\n", 1, 7, []string{"state is a keyword", "cannot be defined"}},
		// Division by zero.
		{"division by literal zero", "state x = 1\nx' = x/0\n", 2, 7, []string{"division by zero"}},
		{"division by folded zero", "state x = 1\nx' = x/(2 - 2)\n", 2, 7, []string{"division by zero"}},
		{"division by x - x", "state x = 1\nx' = 1/(x - x)\n", 2, 7, []string{"division by zero"}},
		{"division by zero const", "const c = 1/(3*0)\nstate x = c\nx' = x\n", 1, 12, []string{"division by zero"}},
		// Parentheses.
		{"unclosed paren", "state x = 1\nx' = 2*(x + 1\n", 2, 8, []string{`unclosed "("`, `missing ")"`}},
		{"unclosed call", "state x = 1\nx' = sqrt(x\n", 2, 10, []string{`unclosed "("`, "sqrt"}},
		{"stray paren", "state x = 1\nx' = x + 1)\n", 2, 11, []string{`unmatched ")"`}},
		{"stray paren inside", "state x = 1\nx' = (x))*2\n", 2, 9, []string{`unmatched ")"`}},
		{"stray paren in state", "state x = (1)), y = 2\n", 1, 14, []string{`unmatched ")"`}},
		// Unexpected tokens and missing operands.
		{"missing operand at end", "state x = 1\nx' = x +\n", 2, 9, []string{`missing operand after "+"`}},
		{"missing operand before", "state x = 1\nx' = * x\n", 2, 6, []string{`unexpected "*"`, "missing operand"}},
		{"missing operand between", "state x = 1\nx' = x + * 2\n", 2, 10, []string{`unexpected "*"`, "missing operand"}},
		{"empty parentheses", "state x = 1\nx' = ()\n", 2, 7, []string{`unexpected ")"`, "missing operand"}},
		{"missing expression", "state x = 1\nx' =\n", 2, 5, []string{"missing operand after \"=\""}},
		{"missing operator", "state x = 1\nx' = x x\n", 2, 8, []string{`unexpected name "x"`, "missing operator"}},
		{"missing equals", "state x 1\n", 1, 9, []string{`expected "="`, "state x", "number 1"}},
		{"missing name", "state = 1\n", 1, 7, []string{"expected a name after state"}},
		{"bad separator", "state x = 1; y = 2\n", 1, 12, []string{`unexpected character ';'`}},
		{"missing comma", "state x = 1 y = 2\n", 1, 13, []string{`unexpected name "y"`, `expected "," or end of line`}},
		{"bad argument list", "state x = 1\nx' = atan2(x; 1)\n", 2, 13, []string{"unexpected character"}},
		{"bad argument separator", "state x = 1\nx' = atan2(x 1)\n", 2, 14, []string{"unexpected number 1", `"," or ")"`, "atan2"}},
		{"statement starts with number", "3 = x\n", 1, 1, []string{"unexpected number 3 at the start of a statement"}},
		{"non-ASCII name", "state σ = 1\n", 1, 7, []string{"unexpected character 'σ'", "ASCII"}},
		{"invalid UTF-8", "state x = 1\nx' = \xff\n", 2, 6, []string{"invalid UTF-8"}},
		{"too deep", "state x = 1\nx' = " + strings.Repeat("(", 2000) + "x" + strings.Repeat(")", 2000) + "\n", 2, 1006, []string{"nested too deeply"}},
		{"name needs a name", "name 3\n", 1, 6, []string{"expected the model's name"}},
		{"name twice", "name a\nname b\n", 2, 1, []string{"duplicate name statement", "f.ode:1:1"}},
		{"stiff twice", "stiff\nstiff\n", 2, 1, []string{"duplicate stiff statement"}},
		{"stiff with argument", "stiff 1\n", 1, 7, []string{"unexpected number 1"}},
		// Constant expressions.
		{"state default uses a state", "state x = 1, y = x\n", 1, 18, []string{"x is a state", "initial value of state y", "constant"}},
		{"param default uses t", "param k = 2*t\n", 1, 13, []string{"t (the time) is not constant", "default of param k"}},
		{"param default uses a param const", "param k = 1\nconst c = k\nparam q = c\n", 3, 11, []string{"c is a const that depends on params", "default of param q", "constant"}},
		{"param default uses a param", "param k = 1, q = 2*k\n", 1, 20, []string{"k is a param", "default of param q", "constant"}},
		{"span uses a param const", "param k = 1\nconst c = 2*k\nstate x = 1\nx' = x\nspan 0 c\n", 5, 8, []string{"c is a const that depends on params", "span"}},
		{"span uses a param let", "param k = 1\nlet c = 2*k\nstate x = 1\nx' = x\nspan 0 c\n", 5, 8, []string{"c is a let that depends on params", "span"}},
		{"state init uses t", "state x = 2*t\nx' = x\n", 1, 13, []string{"t (the time) is not constant", "initial value of state x", "may use params and constants"}},
		{"const uses t", "const c = t\n", 1, 11, []string{"t (the time) is not constant", "const c", "may use params"}},
		{"state init uses a varying let", "state x = 1\nlet a = x\nstate y = a\nx' = x\ny' = y\n", 3, 11, []string{"a is a let that depends on states or t", "initial value of state y"}},
		{"state init not finite at the defaults", "param k = 0\nstate x = log(k)\nx' = x\n", 2, 11, []string{"initial value of state x is -Inf at the params' defaults", "finite"}},
		// The second state reads the value of log(k) the first computed.
		{"state init not finite, shared", "param k = 0\nconst a = log(k)\nstate x = 2*a, y = 3*a\nx' = x\ny' = y\n", 3, 20, []string{"initial value of state y is -Inf at the params' defaults"}},
		{"const uses a varying let", "state x = 1\nlet a = x\nconst c = a\n", 3, 11, []string{"a is a let that depends on states", "const c"}},
		{"span uses a param", "param k = 1\nspan 0 k\n", 2, 8, []string{"k is a param", "span", "constant"}},
		// Span.
		{"span empty", "state x = 1\nx' = x\nspan 1 1\n", 3, 8, []string{"span is empty", "t1 = t0 = 1"}},
		{"span folds empty", "state x = 1\nx' = x\nspan 1, 2 - 1\n", 3, 9, []string{"span is empty"}},
		{"span one value", "state x = 1\nx' = x\nspan 5\n", 3, 7, []string{"span needs two values"}},
		{"span negative t1", "state x = 1\nx' = x\nspan 0 -1\n", 3, 10, []string{"span needs two values", "span t0, -t1"}},
		{"span twice", "state x = 1\nx' = x\nspan 0 1\nspan 0 2\n", 4, 1, []string{"duplicate span", "f.ode:3:1"}},
		// The whole file.
		{"empty file", "", 0, 0, []string{"empty file", "no states"}},
		{"comments only", "# nothing\n\n   \n", 0, 0, []string{"empty file", "no states"}},
		{"no states", "param k = 1\n", 0, 0, []string{"no states declared"}},
		// Keywords.
		{"unknown keyword", "stat x = 1\n", 1, 1, []string{`unknown statement keyword "stat"`, `did you mean "state"`}},
		{"assignment without let", "state x = 1\nx' = x\ny = 2\n", 3, 1, []string{`unknown statement keyword "y"`, "let y = …"}},
		{"unknown keyword other", "state x = 1\nx' = x\nsolve now\n", 3, 1, []string{`unknown statement keyword "solve"`}},
		// Argument counts.
		{"too few arguments", "state x = 1\nx' = atan2(x)\n", 2, 6, []string{"atan2 takes 2 arguments, got 1"}},
		{"too many arguments", "state x = 1\nx' = sqrt(x, 1)\n", 2, 6, []string{"sqrt takes 1 argument, got 2"}},
		{"no arguments", "state x = 1\nx' = sin()\n", 2, 6, []string{"sin takes 1 argument, got 0"}},
		{"pow one argument", "state x = 1\nx' = pow(x)\n", 2, 6, []string{"pow takes 2 arguments, got 1"}},
		// Comparisons.
		{"chained comparison", "state x = 1\nx' = 0 < x < 1\n", 2, 12, []string{"comparisons do not chain", "(a < b)*(b < c)"}},
		{"chained equality", "state x = 1\nx' = x == 1 == 1\n", 2, 13, []string{"comparisons do not chain"}},
		{"lone !", "state x = 1\nx' = !x\n", 2, 6, []string{"unexpected character '!'", "!=", "x == 0"}},
		{"comparison missing operand", "state x = 1\nx' = x <\n", 2, 9, []string{`missing operand after "<"`}},
		{"comparison operator alone", "state x = 1\nx' = <= x\n", 2, 6, []string{`unexpected "<="`, "missing operand"}},
		{"equality as assignment", "state x == 1\n", 1, 9, []string{`expected "="`, `"=="`}},
		{"ifelse arguments", "state x = 1\nx' = ifelse(x, 1)\n", 2, 6, []string{"ifelse takes 3 arguments, got 2"}},
		{"sign arguments", "state x = 1\nx' = sign(x, 1)\n", 2, 6, []string{"sign takes 1 argument, got 2"}},
		{"reserved ifelse", "state ifelse = 1\n", 1, 7, []string{"ifelse is reserved for the function ifelse(…)", "cannot name a state", "became reserved names"}},
		{"reserved floor", "state x = 1\nlet floor = x\nx' = 1\n", 2, 5, []string{"floor is reserved for the function floor(…)", "cannot name a let", "became reserved names"}},
		// Files that defined the names the piecewise functions took.
		{"reserved sign param", "param sign = 1\nstate x = 1\nx' = x\n", 1, 7, []string{"sign is reserved for the function sign(…)", "cannot name a param: rename the param", "ifelse, sign, floor and ceil became reserved"}},
		{"reserved ceil const", "const a = 1, ceil = 2\n", 1, 14, []string{"ceil is reserved for the function ceil(…)", "cannot name a const"}},
		{"reserved sign used", "param sign = 1\nstate x = 1\nx' = sign*x\n", 3, 6, []string{"sign is the function sign(…), not a value", "definition at f.ode:1:7 was refused", "rename it"}},
		{"comparison uses a state in a const", "state x = 1\nconst c = x > 1\n", 2, 11, []string{"x is a state", "const c"}},
		// Numbers.
		{"overflow", "state x = 1\nx' = 1e999*x\n", 2, 6, []string{"number 1e999 overflows float64"}},
		{"two dots", "state x = 1\nx' = 1.2.3\n", 2, 6, []string{`malformed number "1.2.3"`}},
		{"juxtaposition", "state x = 1\nx' = 2x\n", 2, 6, []string{`malformed number "2x"`, "write 2*x"}},
		{"empty exponent", "state x = 1\nx' = 1e+x\n", 2, 6, []string{`malformed number "1e"`, "exponent has no digits"}},
		{"hex", "state x = 0x1F\n", 1, 11, []string{`malformed number "0x1F"`, "only decimal"}},
		{"underscore", "state x = 1_000\n", 1, 11, []string{`malformed number "1_000"`, "_"}},
		{"lone dot", "state x = .\n", 1, 11, []string{"unexpected character '.'"}},
		// Non-finite constants.
		{"log(0) in const", "const c = log(0)\nstate x = c\nx' = x\n", 1, 11, []string{"log(0) = -Inf", "not finite"}},
		{"sqrt(-1) in state", "state x = sqrt(-1)\nx' = x\n", 1, 11, []string{"sqrt(-1) = NaN", "not finite"}},
		{"exp overflow in derivative", "state x = 1\nx' = exp(1000)*x\n", 2, 6, []string{"exp(1000) = +Inf", "not finite"}},
		{"product overflow", "param k = 1e300*1e300\n", 1, 16, []string{"1e+300 * 1e+300 = +Inf"}},
		{"pow to -1 of 0", "state x = 1\nx' = x + 0^-1\n", 2, 11, []string{"0^-1 = +Inf"}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			checkError(t, row)
		})
	}
}

// checkError parses row.src and checks that the result is an ErrorList
// holding an error at row's position whose message has all of row.words,
// and that the list's text shows it as f.ode:line:col: msg.
func checkError(t *testing.T, row errRow) {
	t.Helper()
	m, err := parse.Parse("f.ode", []byte(row.src))
	if err == nil {
		t.Fatalf("no error; model %v", m.StateNames())
	}
	if m != nil {
		t.Errorf("a model returned with the error")
	}
	var list parse.ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("error %T is not an ErrorList: %v", err, err)
	}
	for _, e := range list {
		if e.Line != row.line || e.Col != row.col {
			continue
		}
		ok := true
		for _, w := range row.words {
			ok = ok && strings.Contains(e.Msg, w)
		}
		if !ok {
			continue
		}
		prefix := "f.ode: "
		if row.line > 0 {
			prefix = "f.ode:" + itoa(row.line) + ":" + itoa(row.col) + ": "
		}
		if !strings.HasPrefix(e.Error(), prefix) || !strings.Contains(err.Error(), e.Error()) {
			t.Errorf("error text %q, list text %q: want prefix %q", e.Error(), err.Error(), prefix)
		}
		return
	}
	t.Errorf("no error at %d:%d with %q; got:\n%v", row.line, row.col, row.words, err)
}

func itoa(n int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
		if n == 0 {
			return string(b)
		}
	}
}

// TestManyErrors checks that independent errors on different lines are
// all reported, sorted, and that the text stops after MaxReported.
func TestManyErrors(t *testing.T) {
	var src strings.Builder
	src.WriteString("state x = 1\nx' = x\n")
	for range 15 {
		src.WriteString("let = 1\n") // a syntax error on each line
	}
	src.WriteString("x' = q\n") // duplicate derivative and unknown name on one line
	_, err := parse.Parse("many.ode", []byte(src.String()))
	var list parse.ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("error %v is not an ErrorList", err)
	}
	if len(list) != 17 {
		t.Errorf("%d errors, want 17:\n%v", len(list), err)
	}
	for i := 1; i < len(list); i++ {
		if list.Less(i, i-1) {
			t.Errorf("errors not sorted: %v before %v", list[i-1], list[i])
		}
	}
	text := err.Error()
	if n := strings.Count(text, "\n"); n != parse.MaxReported {
		t.Errorf("text has %d lines, want %d + 1:\n%s", n+1, parse.MaxReported, text)
	}
	if !strings.HasSuffix(text, "(and 7 more errors)") || !strings.HasPrefix(text, "many.ode:3:5: expected a name after let") {
		t.Errorf("text:\n%s", text)
	}
	// errors.As finds the first *Error through Unwrap.
	var e *parse.Error
	if !errors.As(err, &e) || e.Line != 3 {
		t.Errorf("errors.As(*Error) = %v", e)
	}
}

func TestErrorFormat(t *testing.T) {
	for _, row := range []struct {
		e    parse.Error
		want string
	}{
		{parse.Error{File: "a.ode", Line: 2, Col: 3, Msg: "m"}, "a.ode:2:3: m"},
		{parse.Error{Line: 2, Col: 3, Msg: "m"}, "2:3: m"},
		{parse.Error{File: "a.ode", Msg: "m"}, "a.ode: m"},
		{parse.Error{Msg: "m"}, "m"},
	} {
		if got := row.e.Error(); got != row.want {
			t.Errorf("%#v.Error() = %q, want %q", row.e, got, row.want)
		}
	}
	if parse.ErrorList(nil).Err() != nil {
		t.Errorf("empty ErrorList.Err() is not nil")
	}
}

// TestFormatRoundTrip formats each example and parses the text back:
// same names, defaults, span and flag, and an f that agrees bitwise
// (the same operations on the same operands).
func TestFormatRoundTrip(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "*.ode"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, file := range files {
		m, err := parse.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		checkRoundTrip(t, m, rand.New(rand.NewPCG(5, 6)))
	}
	// Shared subexpressions become lets; negative numbers and powers
	// keep their meaning.
	m := mustParse(t, "r.ode", "state x = -1, y = 2\nparam k = -0.5\nspan 0, -3\nlet s = sin(x)*y\nx' = s + s^2 - (-2)^x + k^-1.5*y\ny' = -(x*y) - -s/(t - 1) + x^-2.5 + atan2(-x, y)\n")
	text := checkRoundTrip(t, m, rand.New(rand.NewPCG(7, 8)))
	for _, w := range []string{"let _1 = ", "span 0, -3", "state x = -1"} {
		if !strings.Contains(text, w) {
			t.Errorf("Format text lacks %q:\n%s", w, text)
		}
	}
	// Piecewise functions: comparisons in sums and as conditions, ifelse
	// on a comparison, on a number (written c > 0) and on the Go API's
	// Select, sign, floor and ceil.
	m = mustParse(t, "pw.ode", "state x = -1, y = 2\nparam k = 0.5\nlet c = x*y < k\n"+
		"x' = ifelse(c, sin(x), y - 1 > k) + (x == y) - 2*(y != k) + sign(x - k)\n"+
		"y' = ifelse(x*k, floor(y*3), ceil(t - x)) + ifelse(x > 0, y, k) + ifelse(t <= 1, 1, -1)\n")
	text = checkRoundTrip(t, m, rand.New(rand.NewPCG(9, 10)))
	for _, w := range []string{"ifelse(", " < ", " == ", " != ", " <= ", "sign(", "floor(", "ceil("} {
		if !strings.Contains(text, w) {
			t.Errorf("Format text lacks %q:\n%s", w, text)
		}
	}
	// Initial values that use parameters: the parameters come first,
	// then the lets the initial values share, then the states.
	m = mustParse(t, "iv.ode", "param r0 = 2, phi = 0.5\nconst c = cos(phi)\nstate x = r0*c, v = 1, y = r0*sin(phi) - c\nx' = c*y\ny' = -x*r0\nv' = v\n")
	text = checkRoundTrip(t, m, rand.New(rand.NewPCG(13, 14)))
	if !strings.HasPrefix(text, "name iv\nparam r0 = 2\nparam phi = 0.5\nlet _1 = cos(phi)\nstate x = ") || !strings.Contains(text, "state v = 1\n") {
		t.Errorf("Format of initial values that use parameters wrote:\n%s", text)
	}
	g := sym.NewModel("select")
	a := g.State("a", 1)
	g.Deriv(a, sym.Select(a.Sub(g.Const(0.5)), a, a.Neg()))
	if text = checkRoundTrip(t, g, rand.New(rand.NewPCG(11, 12))); !strings.Contains(text, "ifelse(a - 0.5 > 0, a, -a)") {
		t.Errorf("Format(Select) wrote:\n%s", text)
	}
}

// checkRoundTrip formats m, parses the text, compares the two models and
// returns the text.
func checkRoundTrip(t testing.TB, m *sym.Model, rng *rand.Rand) string {
	t.Helper()
	text, err := parse.Format(m)
	if err != nil {
		t.Fatalf("Format(%s): %v", m.Name, err)
	}
	m2, err := parse.Parse("roundtrip.ode", []byte(text))
	if err != nil {
		t.Fatalf("Parse(Format(%s)): %v\n%s", m.Name, err, text)
	}
	if m2.Name != m.Name || !slices.Equal(m2.StateNames(), m.StateNames()) || !slices.Equal(m2.ParamNames(), m.ParamNames()) ||
		!testutil.IdenticalBits(m2.Y0(), m.Y0()) || !testutil.IdenticalBits(m2.P(), m.P()) || m2.Stiff != m.Stiff ||
		(m.T0 != m.T1 && (m2.T0 != m.T0 || m2.T1 != m.T1)) {
		t.Fatalf("round trip of %s changed the model:\n%s", m.Name, text)
	}
	s1, err1 := tape.Build(m)
	s2, err2 := tape.Build(m2)
	if err1 != nil || err2 != nil {
		t.Fatalf("tape.Build: %v, %v", err1, err2)
	}
	f1, f2 := s1.Programs().F, s2.Programs().F
	y, p := make([]float64, m.Dim()), make([]float64, m.NumParams())
	dy1, dy2 := make([]float64, m.Dim()), make([]float64, m.Dim())
	for range 100 {
		for i := range y {
			y[i] = rng.NormFloat64()
		}
		for i := range p {
			p[i] = rng.NormFloat64()
		}
		tt := rng.NormFloat64()
		f1(tt, y, p, dy1)
		f2(tt, y, p, dy2)
		if !testutil.IdenticalBits(dy1, dy2) {
			t.Fatalf("round trip of %s: f(%v, %v, %v) = %v, after %v\n%s", m.Name, tt, y, p, dy1, dy2, text)
		}
		if i1, i2 := m.Graph().Evaluate(m.Initial(), 0, nil, p), m2.Graph().Evaluate(m2.Initial(), 0, nil, p); !testutil.IdenticalBits(i1, i2) {
			t.Fatalf("round trip of %s: y0(%v) = %v, after %v\n%s", m.Name, p, i1, i2, text)
		}
	}
	if m2.InitialDependsOnParams() != m.InitialDependsOnParams() {
		t.Fatalf("round trip of %s: initial values depend on the parameters: %v, after %v\n%s", m.Name, m.InitialDependsOnParams(), m2.InitialDependsOnParams(), text)
	}
	return text
}

func TestFormatErrors(t *testing.T) {
	m := sym.NewModel("bad name")
	x := m.State("x y", 1)
	m.Deriv(x, x)
	if _, err := parse.Format(m); err == nil || !strings.Contains(err.Error(), "not an identifier") {
		t.Errorf("Format(state %q) = %v", "x y", err)
	}
	m = sym.NewModel("seed")
	x = m.State("x", 1)
	m.Deriv(x, x.Mul(m.Graph().Seed(sym.SeedV, 0)))
	if _, err := parse.Format(m); err == nil || !strings.Contains(err.Error(), "seed") {
		t.Errorf("Format(seed) = %v", err)
	}
	m = sym.NewModel("incomplete")
	m.State("x", 1)
	if _, err := parse.Format(m); err == nil {
		t.Errorf("Format(no derivative) = nil error")
	}
}

// TestNoCascade checks that an error in a line does not cause errors
// about its names elsewhere: a state whose derivative line has a syntax
// error has a derivative, and a name whose value has an error is still
// defined.
func TestNoCascade(t *testing.T) {
	for _, row := range []struct {
		src       string
		line, col int
	}{
		{"state x = 1\nx' = 2x\n", 2, 6},
		{"state x = 1\nx' = (x\n", 2, 6},
		{"state x = 1, y = 2 $\nx' = y\ny' = x\n", 1, 20},
		{"state x = 1\nlet a = x +\nx' = a\n", 2, 12},
		{"state x = 1\nconst c = 1/0\nx' = c*x\n", 2, 12},
		{"state x = 1\nparam k = log(-1)\nx' = k*x\n", 2, 11},
	} {
		_, err := parse.Parse("f.ode", []byte(row.src))
		var list parse.ErrorList
		if !errors.As(err, &list) || len(list) != 1 || list[0].Line != row.line || list[0].Col != row.col {
			t.Errorf("%q: want one error at %d:%d, got:\n%v", row.src, row.line, row.col, err)
		}
	}
}

// TestDocExample checks the error listing shown in docs/ode-format.md.
func TestDocExample(t *testing.T) {
	src := `# broken.ode
state x = 1, y = 0, z = 0
param rho = 28, sigma = 10, beta = 8/3
const c = log(0)
span 0 1
x' = sigm*(y - x)
y' = x*(rho - z - y
z' = x*y - beta*z)
y' = x/(rho - rho)
rho' = 1
stat w = 1
`
	want := `broken.ode:4:11: constant expression log(0) = -Inf is not finite
broken.ode:6:6: unknown name sigm (did you mean sigma?)
broken.ode:7:8: unclosed "(": missing ")" before the end of the line
broken.ode:8:18: unmatched ")"
broken.ode:9:1: duplicate derivative of y (first at broken.ode:7:1)
broken.ode:9:7: division by zero (the divisor is the constant 0)
broken.ode:10:1: derivative of rho, which is a param (defined at broken.ode:3:7), not a state
broken.ode:11:1: unknown statement keyword "stat" (did you mean "state"?)`
	_, err := parse.Parse("broken.ode", []byte(src))
	if err == nil || err.Error() != want {
		t.Errorf("got:\n%v\nwant:\n%s", err, want)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "ode-format.md"))
	if err != nil {
		t.Skip("docs/ode-format.md not found:", err)
	}
	if !strings.Contains(string(doc), src[len("# broken.ode\n"):]) || !strings.Contains(string(doc), want) {
		t.Errorf("docs/ode-format.md does not show this example and its errors")
	}
}

// TestDocShowsExamples checks that docs/ode-format.md shows each example
// file as it is, less its leading comment block.
func TestDocShowsExamples(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "ode-format.md"))
	if err != nil {
		t.Skip("docs/ode-format.md not found:", err)
	}
	files, _ := filepath.Glob(filepath.Join("..", "..", "examples", "*.ode"))
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(string(src), "\n")
		for len(lines) > 0 && (strings.HasPrefix(lines[0], "#") || strings.TrimSpace(lines[0]) == "") {
			lines = lines[1:]
		}
		if body := strings.Join(lines, ""); !strings.Contains(string(doc), body) {
			t.Errorf("docs/ode-format.md does not show %s:\n%s", file, body)
		}
	}
}

// examples/kepler_ecc.ode at its default eccentricity is
// examples/kepler.ode: the same initial state and, for the same mu, the
// same f bit for bit; at other e it starts at that orbit's pericentre.
func TestKeplerEccentricityExample(t *testing.T) {
	ecc, err := parse.ParseFile(filepath.Join("..", "..", "examples", "kepler_ecc.ode"))
	if err != nil {
		t.Fatal(err)
	}
	kep, err := parse.ParseFile(filepath.Join("..", "..", "examples", "kepler.ode"))
	if err != nil {
		t.Fatal(err)
	}
	if !testutil.IdenticalBits(ecc.Y0(), kep.Y0()) || !ecc.InitialDependsOnParams() {
		t.Errorf("kepler_ecc y0 = %v (depends on p: %v), kepler %v", ecc.Y0(), ecc.InitialDependsOnParams(), kep.Y0())
	}
	e := 0.2
	if got, want := ecc.Graph().Evaluate(ecc.Initial(), 0, nil, []float64{e, 1}), []float64{1 - e, 0, 0, math.Sqrt(1 * (1 + e) / (1 - e))}; !testutil.IdenticalBits(got, want) {
		t.Errorf("y0(e = %v) = %v, want %v", e, got, want)
	}
	fe, fk := mustProblem(t, ecc).F, mustProblem(t, kep).F
	rng := rand.New(rand.NewPCG(3, 4))
	y, d1, d2 := make([]float64, 4), make([]float64, 4), make([]float64, 4)
	for range 100 {
		for i := range y {
			y[i] = rng.NormFloat64()
		}
		mu := 0.5 + rng.Float64()
		fe(0, y, []float64{0.3, mu}, d1)
		fk(0, y, []float64{mu}, d2)
		if !testutil.IdenticalBits(d1, d2) {
			t.Fatalf("f(%v, mu = %v): kepler_ecc %v, kepler %v", y, mu, d1, d2)
		}
	}
}
