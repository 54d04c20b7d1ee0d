// Package emitgo turns the compiled programs of a symbolic model (a
// tape.Set) into Go source: the programs f, J_y·v + J_p·w, uᵀJ, the
// dense J_y, ∂f/∂t and the second derivatives the Rosenbrock methods
// need as plain Go functions, the right-hand side of
// the forward sensitivity system with f's terms shared by all columns,
// and a function that returns the model as an ode.Problem, ready to be
// checked in by `go generate`.
//
// Each generated function is the straight-line code of its tape program
// in static single assignment form: one local variable per instruction,
// inputs read directly from the argument slices, constants written as
// exact Go literals. It applies each operation with sym.Eval's
// arithmetic (the same Go operators and math functions), and every
// product is written float64(a * b): the Go specification lets a
// compiler fuse a product and a sum into one fused multiply–add, even
// across statements, unless an explicit conversion rounds the product,
// and the tape rounds every product. The generated functions therefore
// return the tape's results bit for bit on every architecture.
package emitgo

import (
	"bytes"
	"errors"
	"fmt"
	"go/format"
	"go/token"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gradsolve/gradsolve/sym"
	"github.com/gradsolve/gradsolve/sym/tape"
)

// Options control the generated file.
type Options struct {
	// Package is the name in the package clause. Required: a Go
	// identifier other than "_".
	Package string
	// Prefix starts the name of every generated function (<Prefix>F,
	// <Prefix>JVP, …, <Prefix>Problem). It must be an exported Go
	// identifier. Empty: derived from the model name by capitalising
	// each run of letters and digits and dropping the other characters
	// ("lorenz" → "Lorenz", "my-model_2" → "MyModel2"); Generate fails
	// when that gives no exported identifier ("3body").
	Prefix string
	// Source names what the model was read from (a problem file's
	// path); it appears in the "Code generated … DO NOT EDIT." header.
	// Empty: the model's name is shown instead.
	Source string
}

// Generate returns a gofmt-formatted Go file holding the programs of s
// as functions <Prefix>F, <Prefix>JVP, <Prefix>VJP, <Prefix>JacY,
// <Prefix>DfDt and the second derivatives <Prefix>JVPJacY,
// <Prefix>JVPDfDt, <Prefix>JVPVJP and <Prefix>DfDtVJP, with the
// signatures of the fields of ode.Programs;
// <Prefix>Sens, f and any number of sensitivity columns in one call,
// with <Prefix>SensF to serve it as ode.Problem.SensF; and
// <Prefix>Problem, which returns the model as an ode.Problem with its
// names and defaults. A model whose initial values depend on the
// parameters also gets <Prefix>Initial, y0(p) and ∂y0/∂p with the
// signature of ode.InitialFunc, served as ode.Problem.Initial. The
// functions keep no state and allocate nothing,
// and they return the same results as the tape's evaluators bit for
// bit.
func Generate(s *tape.Set, opts Options) ([]byte, error) {
	if s == nil || s.Model == nil {
		return nil, errors.New("emitgo: nil tape.Set or Set without a Model")
	}
	if s.F() == nil {
		return nil, fmt.Errorf("emitgo: model %q: the tape.Set lacks f (build it with tape.Build)", s.Model.Name)
	}
	// Every program, derived in the order that fixes their node ids (and
	// so the source): a Set builds its derivatives on demand.
	if err := s.BuildAll(); err != nil {
		return nil, fmt.Errorf("emitgo: %w", err)
	}
	if !token.IsIdentifier(opts.Package) || opts.Package == "_" {
		return nil, fmt.Errorf("emitgo: Options.Package %q is not a valid package name", opts.Package)
	}
	if strings.ContainsFunc(opts.Source, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) {
		return nil, fmt.Errorf("emitgo: Options.Source %q contains a line break or another unprintable character", opts.Source)
	}
	prefix := opts.Prefix
	if prefix == "" {
		var err error
		if prefix, err = DerivePrefix(s.Model.Name); err != nil {
			return nil, err
		}
	} else if !token.IsIdentifier(prefix) || !token.IsExported(prefix) {
		return nil, fmt.Errorf("emitgo: Options.Prefix %q is not an exported Go identifier", prefix)
	}
	g := &gen{m: s.Model, dim: s.Model.Dim(), np: s.Model.NumParams(), prefix: prefix}
	if g.dim < 1 {
		return nil, fmt.Errorf("emitgo: model %q has no states", s.Model.Name)
	}
	// What is read from the graph, read under its lock: the Set may be
	// building programs in other goroutines, which extends the graph.
	s.WithGraph(func(*sym.Graph) { g.fdoc, g.y0 = g.fDoc(), s.Model.Y0() })
	for _, f := range g.funcs(s) {
		if err := g.function(f); err != nil {
			return nil, fmt.Errorf("emitgo: model %q: %s: %w", s.Model.Name, f.pg.Name, err)
		}
	}
	fj, err := s.FJVP()
	if err == nil {
		err = g.sensFunction(fj)
	}
	if err != nil {
		return nil, fmt.Errorf("emitgo: model %q: sensitivities: %w", s.Model.Name, err)
	}
	ip, err := s.InitialProgram()
	if err == nil && ip != nil {
		g.initial = true
		err = g.function(g.initialFunc(ip))
	}
	if err != nil {
		return nil, fmt.Errorf("emitgo: model %q: initial values: %w", s.Model.Name, err)
	}
	g.problem()

	var out bytes.Buffer
	source := opts.Source
	if source == "" {
		source = "model " + strconv.Quote(s.Model.Name)
	}
	fmt.Fprintf(&out, "// Code generated by gradsolve gen from %s; DO NOT EDIT.\n\n", source)
	g.fileComment(&out)
	fmt.Fprintf(&out, "package %s\n\n", opts.Package)
	out.WriteString("import (\n")
	if g.usesFmt {
		out.WriteString("\t\"fmt\"\n")
	}
	if g.usesMath {
		out.WriteString("\t\"math\"\n")
	}
	out.WriteString("\n\t\"github.com/gradsolve/gradsolve/ode\"\n")
	if g.usesPmath {
		out.WriteString("\t\"github.com/gradsolve/gradsolve/pmath\"\n")
	}
	out.WriteString(")\n")
	out.Write(g.body.Bytes())
	src, err := format.Source(out.Bytes())
	if err != nil {
		return nil, fmt.Errorf("emitgo: internal error: the generated source does not parse: %w", err)
	}
	return src, nil
}

// DerivePrefix returns the function-name prefix Generate uses for a
// model named name when Options.Prefix is empty: each run of letters
// and digits with its first letter capitalised, the runs joined ("_"
// between two digits). It fails when the result is not an exported Go
// identifier.
func DerivePrefix(name string) (string, error) {
	var b strings.Builder
	lastDigit := false
	for _, part := range strings.FieldsFunc(name, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		r, n := utf8.DecodeRuneInString(part)
		if lastDigit && unicode.IsDigit(r) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
		b.WriteString(part[n:])
		last, _ := utf8.DecodeLastRuneInString(part)
		lastDigit = unicode.IsDigit(last)
	}
	p := b.String()
	if !token.IsIdentifier(p) || !token.IsExported(p) {
		return "", fmt.Errorf("emitgo: cannot derive an exported function-name prefix from the model name %q; set Options.Prefix", name)
	}
	return p, nil
}

// The input blocks of a register file, in Layout order.
const (
	blockT = iota
	blockY
	blockP
	blockV
	blockW
	blockU
	numBlocks
)

// gen accumulates the generated declarations.
type gen struct {
	m        *sym.Model
	dim, np  int
	prefix   string
	body     bytes.Buffer // everything after the import block
	usesMath bool
	// usesPmath: the code calls pmath (exp, log).
	usesPmath bool
	usesFmt   bool
	initial   bool // <Prefix>Initial was written
	// Read from the graph under its lock (see Generate): the doc comment
	// of <Prefix>F after its name, and the default initial state.
	fdoc []string
	y0   []float64
}

// outSlice is one result slice of a generated function.
type outSlice struct {
	name string
	n    int
}

// fn describes one generated function.
type fn struct {
	suffix string
	pg     *tape.Program
	params string            // the parameter list
	inputs [numBlocks]string // the slice (or scalar) holding each input block; "" where the function has none
	outs   []outSlice
	doc    []string // doc comment lines after the name
	// initial marks <Prefix>Initial: a program of the parameters alone
	// (a layout of 0 states), whose last output slice may be nil.
	initial bool
}

// initialFunc describes <Prefix>Initial, from the program of the
// model's initial values (tape.Set.InitialProgram).
func (g *gen) initialFunc(pg *tape.Program) fn {
	d, m := g.dim, g.np
	return fn{
		suffix: "Initial", pg: pg, params: "p, y0, jac []float64", inputs: [numBlocks]string{blockP: "p"},
		outs: []outSlice{{"y0", d}, {"jac", d * m}}, initial: true,
		doc: []string{
			"writes the initial state y0(p), a function of the parameters,",
			"into y0 and, when jac is not nil, its Jacobian ∂y0/∂p into jac,",
			fmt.Sprintf("row-major, %d×%d:", d, m),
			"",
			fmt.Sprintf("\tjac[i*%d + j] = ∂y0_i/∂p_j", m),
			"",
			"A solve without explicit initial states starts each trajectory",
			"from y0 of its own parameters (ode.Problem.Initial).",
		},
	}
}

// built returns a program of a Set after BuildAll, which built them all.
func built(program func() (*tape.Program, error)) *tape.Program {
	pg, _ := program()
	return pg
}

func (g *gen) funcs(s *tape.Set) []fn {
	d, m := g.dim, g.np
	std := [numBlocks]string{blockT: "t", blockY: "y", blockP: "p"}
	withVW, withU := std, std
	withVW[blockV], withVW[blockW] = "v", "w"
	withU[blockU] = "u"
	withVWU := withVW
	withVWU[blockU] = "u"
	return []fn{
		{
			suffix: "F", pg: s.F(), params: "t float64, y, p, dy []float64", inputs: std,
			outs: []outSlice{{"dy", d}},
			doc:  g.fdoc,
		},
		{
			suffix: "JVP", pg: built(s.JVP), params: "t float64, y, p, v, w, out []float64", inputs: withVW,
			outs: []outSlice{{"out", d}},
			doc: []string{
				"writes the Jacobian-vector product J_y·v + J_p·w into out,",
				fmt.Sprintf("where J_y = ∂f/∂y (%d×%d) and J_p = ∂f/∂p (%d×%d) at (t, y, p):", d, d, d, m),
				"",
				"\tout[i] = Σ_j ∂f_i/∂y_j·v[j] + Σ_k ∂f_i/∂p_k·w[k]",
				"",
				fmt.Sprintf("len(v) = %d, len(w) = %d.", d, m),
			},
		},
		{
			suffix: "VJP", pg: built(s.VJP), params: "t float64, y, p, u, gy, gp []float64", inputs: withU,
			outs: []outSlice{{"gy", d}, {"gp", m}},
			doc: []string{
				"writes the vector-Jacobian products uᵀJ_y into gy and",
				"uᵀJ_p into gp, with J_y = ∂f/∂y and J_p = ∂f/∂p at (t, y, p):",
				"",
				"\tgy[j] = Σ_i u[i]·∂f_i/∂y_j",
				"\tgp[k] = Σ_i u[i]·∂f_i/∂p_k",
				"",
				fmt.Sprintf("len(u) = len(gy) = %d, len(gp) = %d.", d, m),
			},
		},
		{
			suffix: "JacY", pg: built(s.JacY), params: "t float64, y, p, jac []float64", inputs: std,
			outs: []outSlice{{"jac", d * d}},
			doc: []string{
				"writes the Jacobian J_y = ∂f/∂y at (t, y, p) into jac,",
				fmt.Sprintf("row-major, %d×%d:", d, d),
				"",
				fmt.Sprintf("\tjac[i*%d + j] = ∂f_i/∂y_j", d),
			},
		},
		{
			suffix: "DfDt", pg: built(s.DfDt), params: "t float64, y, p, out []float64", inputs: std,
			outs: []outSlice{{"out", d}},
			doc:  []string{"writes the partial derivative ∂f/∂t at (t, y, p) into out."},
		},
		// The second derivatives the Rosenbrock methods need for
		// sensitivities and for the reverse replay.
		{
			suffix: "JVPJacY", pg: built(s.JVPJacY), params: "t float64, y, p, v, w, jac []float64", inputs: withVW,
			outs: []outSlice{{"jac", d * d}},
			doc: []string{
				"writes ∂(J_y·v + J_p·w)/∂y at (t, y, p) into jac,",
				fmt.Sprintf("row-major, %d×%d: the Jacobian of the tangent, which forward", d, d),
				"sensitivities of a Rosenbrock method need.",
			},
		},
		{
			suffix: "JVPDfDt", pg: built(s.JVPDfDt), params: "t float64, y, p, v, w, out []float64", inputs: withVW,
			outs: []outSlice{{"out", d}},
			doc:  []string{"writes ∂(J_y·v + J_p·w)/∂t at (t, y, p) into out."},
		},
		{
			suffix: "JVPVJP", pg: built(s.JVPVJP), params: "t float64, y, p, v, w, u, gy, gp []float64", inputs: withVWU,
			outs: []outSlice{{"gy", d}, {"gp", m}},
			doc: []string{
				"writes uᵀ·∂(J_y·v + J_p·w)/∂y into gy and uᵀ·∂(J_y·v + J_p·w)/∂p",
				"into gp, at (t, y, p): what the reverse replay of a Rosenbrock",
				"method needs.",
			},
		},
		{
			suffix: "DfDtVJP", pg: built(s.DfDtVJP), params: "t float64, y, p, u, gy, gp []float64", inputs: withU,
			outs: []outSlice{{"gy", d}, {"gp", m}},
			doc:  []string{"writes uᵀ·∂(∂f/∂t)/∂y into gy and uᵀ·∂(∂f/∂t)/∂p into gp, at (t, y, p)."},
		},
	}
}

func (g *gen) fileComment(w *bytes.Buffer) {
	m := g.m
	lines := []string{
		fmt.Sprintf("The functions below evaluate the model %s (%s, %s):", strconv.Quote(m.Name), plural(g.dim, "state"), plural(g.np, "parameter")),
		fmt.Sprintf("y holds %s and p holds %s.", nameList(m.StateNames()), nameList(m.ParamNames())),
		"Each is the straight-line code of the model's compiled tape program",
		"(package sym/tape), one local variable per instruction, with the",
		"tape's arithmetic; every product is written float64(a * b) so that",
		"no compiler fuses it into a fused multiply-add. The results equal",
		"the tape's bit for bit. They keep no state, allocate nothing and may",
		"be called from any number of goroutines.",
	}
	writeComment(w, "", lines)
	w.WriteByte('\n')
}

// nameList lists names for a comment: identifiers as they are, other
// names quoted (a name may hold any character, even a line break), at
// most maxNames of them.
func nameList(names []string) string {
	if len(names) == 0 {
		return "nothing"
	}
	var shown []string
	for i, n := range names {
		if i == maxNames {
			shown = append(shown, fmt.Sprintf("… (%d in all)", len(names)))
			break
		}
		if !token.IsIdentifier(n) {
			n = strconv.Quote(n)
		}
		shown = append(shown, n)
	}
	return strings.Join(shown, ", ")
}

// maxNames bounds the names listed, and the formulas shown, in comments.
const maxNames = 20

func writeComment(w *bytes.Buffer, first string, lines []string) {
	for i, l := range lines {
		switch {
		case l == "":
			w.WriteString("//\n")
		case i == 0 && first != "":
			fmt.Fprintf(w, "// %s %s\n", first, l)
		default:
			fmt.Fprintf(w, "// %s\n", l)
		}
	}
}

// emitter turns the instructions of one program into SSA statements:
// one local variable s<k> per instruction k, inputs read from the
// slices named in inputs, constants as literals.
type emitter struct {
	g      *gen
	pg     *tape.Program
	lay    tape.Layout
	name   string            // the generated function's name, for errors
	inputs [numBlocks]string // the slice (or scalar) holding each input block
	nIn    int32
	nFixed int32
	read   [numBlocks]bool
	value  map[int32]int // temporary register → instruction whose variable holds it
	used   []bool
}

func (g *gen) newEmitter(pg *tape.Program, name string, inputs [numBlocks]string) *emitter {
	lay := pg.Layout()
	nIn := lay.NumInputs()
	return &emitter{g: g, pg: pg, lay: lay, name: name, inputs: inputs, nIn: nIn,
		nFixed: nIn + int32(len(pg.Consts())), value: map[int32]int{}, used: make([]bool, len(pg.Code()))}
}

// operand returns the Go expression for register r and whether it is a
// numeric literal.
func (e *emitter) operand(r int32) (string, bool, error) {
	switch {
	case r < 0:
		return "", false, fmt.Errorf("negative register %d", r)
	case r < e.nIn:
		b, i := inputOf(e.lay, r)
		name := e.inputs[b]
		if name == "" {
			return "", false, fmt.Errorf("reads input register %d (%s), which %s does not take", r, blockNames[b], e.name)
		}
		e.read[b] = true
		if b == blockT {
			return name, false, nil
		}
		return fmt.Sprintf("%s[%d]", name, i), false, nil
	case r < e.nFixed:
		return e.g.literal(e.pg.Consts()[r-e.nIn])
	}
	k, ok := e.value[r]
	if !ok {
		return "", false, fmt.Errorf("reads register %d before any instruction writes it", r)
	}
	e.used[k] = true
	return fmt.Sprintf("s%d", k), false, nil
}

// instr emits instruction k into w.
func (e *emitter) instr(w *bytes.Buffer, k int) error {
	in := e.pg.Code()[k]
	if in.Dst < e.nFixed {
		return fmt.Errorf("instruction %d writes input or constant register %d", k, in.Dst)
	}
	n := in.Op.Arity()
	if n == 0 {
		return fmt.Errorf("instruction %d has the leaf operation %v", k, in.Op)
	}
	var args [3]string
	var lit [3]bool
	for a, r := range []int32{in.A, in.B, in.C}[:n] {
		var err error
		if args[a], lit[a], err = e.operand(r); err != nil {
			return fmt.Errorf("instruction %d: %w", k, err)
		}
	}
	if err := e.g.instruction(w, k, in.Op, args, lit); err != nil {
		return err
	}
	e.value[in.Dst] = k
	return nil
}

// stores emits name[i] = output for the outputs outs.
func (e *emitter) stores(w *bytes.Buffer, name string, outs []int32) error {
	for i, o := range outs {
		x, _, err := e.operand(o)
		if err != nil {
			return fmt.Errorf("output %s[%d]: %w", name, i, err)
		}
		fmt.Fprintf(w, "\t%s[%d] = %s\n", name, i, x)
	}
	return nil
}

// unused emits _ = s<k> for the instructions of ks whose variable no
// one reads: that cannot happen for a tape program (it keeps only
// needed nodes), but keeps the code compiling.
func (e *emitter) unused(w *bytes.Buffer, ks []int) {
	for _, k := range ks {
		if !e.used[k] {
			fmt.Fprintf(w, "\t_ = s%d\n", k)
		}
	}
}

// hints emits one bounds check per input slice the code reads, instead
// of one per access.
func (e *emitter) hints(w *bytes.Buffer, sizes [numBlocks]int) {
	for b := blockY; b < numBlocks; b++ {
		if e.read[b] && sizes[b] > 0 {
			fmt.Fprintf(w, "\t_ = %s[%d]\n", e.inputs[b], sizes[b]-1)
		}
	}
}

// function emits one generated function.
func (g *gen) function(f fn) error {
	pg := f.pg
	lay := pg.Layout()
	wantDim := g.dim
	if f.initial {
		wantDim = 0
	}
	if lay.Dim != wantDim || lay.NumParams != g.np {
		return fmt.Errorf("layout has %d states and %d parameters, want %d and %d", lay.Dim, lay.NumParams, wantDim, g.np)
	}
	want := 0
	for _, o := range f.outs {
		want += o.n
	}
	if len(pg.Outputs()) != want {
		return fmt.Errorf("%d outputs, want %d", len(pg.Outputs()), want)
	}
	e := g.newEmitter(pg, g.prefix+f.suffix, f.inputs)
	var stmts bytes.Buffer
	all := make([]int, len(pg.Code()))
	for k := range all {
		all[k] = k
		if err := e.instr(&stmts, k); err != nil {
			return err
		}
	}
	var stores bytes.Buffer
	outs := pg.Outputs()
	for k, o := range f.outs {
		optional := f.initial && k == len(f.outs)-1 && o.n > 0
		if optional {
			fmt.Fprintf(&stores, "\tif %s == nil {\n\t\treturn\n\t}\n\t_ = %s[%d]\n", o.name, o.name, o.n-1)
		}
		if err := e.stores(&stores, o.name, outs[:o.n]); err != nil {
			return err
		}
		outs = outs[o.n:]
	}

	w := &g.body
	w.WriteByte('\n')
	doc := append(append([]string(nil), f.doc...), "", runs(len(pg.Code()), pg.Name))
	writeComment(w, g.prefix+f.suffix, doc)
	fmt.Fprintf(w, "func %s%s(%s) {\n", g.prefix, f.suffix, f.params)
	e.hints(w, [numBlocks]int{blockY: g.dim, blockP: g.np, blockV: g.dim, blockW: g.np, blockU: g.dim})
	for k, o := range f.outs {
		if o.n > 0 && !(f.initial && k == len(f.outs)-1) {
			fmt.Fprintf(w, "\t_ = %s[%d]\n", o.name, o.n-1)
		}
	}
	if stmts.Len() > 0 {
		w.WriteByte('\n')
		w.Write(stmts.Bytes())
		e.unused(w, all)
	}
	if stores.Len() > 0 {
		w.WriteByte('\n')
		w.Write(stores.Bytes())
	}
	w.WriteString("}\n")
	return nil
}

// sensFunction emits <Prefix>Sens, f and the forward-sensitivity
// columns in one function, from pg, a program whose outputs are f then
// J_y·v + J_p·w (inputs t, y, p, v, w). The instructions that do not
// depend on the seeds v and w (f and everything the tangent reuses of
// it) run once; the others run once per column, with v the column's
// block of the augmented state and w its parameter direction. Each
// value is computed by the same operations as in the F and JVP
// functions, so the results are theirs bit for bit.
func (g *gen) sensFunction(pg *tape.Program) error {
	d, m := g.dim, g.np
	if len(pg.Outputs()) != 2*d {
		return fmt.Errorf("%d outputs, want %d", len(pg.Outputs()), 2*d)
	}
	e := g.newEmitter(pg, g.prefix+"Sens", [numBlocks]string{blockT: "t", blockY: "y", blockP: "p", blockV: "v", blockW: "w"})
	code := pg.Code()
	lay := pg.Layout()
	seedV, seedU := lay.V(), lay.U() // inputs in [V, U) are the seeds v and w
	dep := map[int32]bool{}          // registers holding seed-dependent values, as written so far
	var primal, tangent []int
	var once, each bytes.Buffer
	for k, in := range code {
		t := false
		for _, r := range []int32{in.A, in.B, in.C}[:in.Op.Arity()] {
			t = t || (r >= seedV && r < seedU) || dep[r]
		}
		dep[in.Dst] = t
		w := &once
		if t {
			w, tangent = &each, append(tangent, k)
		} else {
			primal = append(primal, k)
		}
		if err := e.instr(w, k); err != nil {
			return err
		}
	}
	var storeF, storeS bytes.Buffer
	if err := e.stores(&storeF, "dy", pg.Outputs()[:d]); err != nil {
		return err
	}
	if err := e.stores(&storeS, "out", pg.Outputs()[d:]); err != nil {
		return err
	}

	w := &g.body
	w.WriteByte('\n')
	writeComment(w, g.prefix+"Sens", []string{
		fmt.Sprintf("writes f(t, y, p) into dy[:%d] and, for each column c, the", d),
		"right-hand side of the forward sensitivity S_c = ∂y/∂θ_c,",
		"",
		"\tJ_y·S_c + J_p·ws[c],",
		"",
		fmt.Sprintf("into dy[%d·(1+c) : %d·(2+c)], with S_c = y[%d·(1+c) : %d·(2+c)] and ws[c]", d, d, d, d),
		fmt.Sprintf("the direction of θ_c in parameter space (%d values: a unit vector for a", m),
		"parameter, zero for an initial value). The terms of f and of the",
		"derivatives that do not involve S_c or ws[c] are computed once for all",
		"columns. The results equal F and one JVP per column bit for bit.",
		"",
		runs(len(code), pg.Name),
	})
	fmt.Fprintf(w, "func %sSens(t float64, y, p []float64, ws [][]float64, dy []float64) {\n", g.prefix)
	for b := blockY; b <= blockP; b++ {
		if size := [numBlocks]int{blockY: d, blockP: m}[b]; e.read[b] && size > 0 {
			fmt.Fprintf(w, "\t_ = %s[%d]\n", e.inputs[b], size-1)
		}
	}
	fmt.Fprintf(w, "\t_ = dy[%d]\n\n", d-1)
	w.Write(once.Bytes())
	e.unused(w, primal)
	w.Write(storeF.Bytes())
	fmt.Fprintf(w, "\tfor c, w := range ws {\n")
	fmt.Fprintf(w, "\t\tv, out := y[%d*(1+c):%d*(2+c)], dy[%d*(1+c):%d*(2+c)]\n", d, d, d, d)
	fmt.Fprintf(w, "\t\t_, _ = v[%d], out[%d]\n", d-1, d-1)
	if m > 0 {
		fmt.Fprintf(w, "\t\t_ = w[%d]\n", m-1)
	} else {
		w.WriteString("\t\t_ = w\n")
	}
	w.Write(each.Bytes())
	e.unused(w, tangent)
	w.Write(storeS.Bytes())
	w.WriteString("\t}\n}\n")

	fmt.Fprintf(w, "\n// %sSensF returns a source of %sSens for ode.Problem.SensF: each\n", g.prefix, g.prefix)
	w.WriteString("// entry of paramCols is the parameter of a column, or −1 for an initial\n")
	w.WriteString("// value. The function it makes keeps no state and may be shared.\n")
	fmt.Fprintf(w, "func %sSensF(paramCols []int) (func() ode.Func, error) {\n", g.prefix)
	w.WriteString("\tws := make([][]float64, len(paramCols))\n\tfor c, j := range paramCols {\n")
	msg := strconv.Quote(fmt.Sprintf("%s: sensitivity column %%d: parameter %%d, but the model has %d", strings.ReplaceAll(g.m.Name, "%", "%%"), m))
	fmt.Fprintf(w, "\t\tif j >= %d {\n\t\t\treturn nil, fmt.Errorf(%s, c, j)\n\t\t}\n", m, msg)
	fmt.Fprintf(w, "\t\tws[c] = make([]float64, %d)\n\t\tif j >= 0 {\n\t\t\tws[c][j] = 1\n\t\t}\n\t}\n", m)
	fmt.Fprintf(w, "\tf := func(t float64, y, p, dy []float64) { %sSens(t, y, p, ws, dy) }\n", g.prefix)
	w.WriteString("\treturn func() ode.Func { return f }, nil\n}\n")
	g.usesFmt = true
	return nil
}

// runs says how many instructions a function runs.
func runs(n int, program string) string {
	switch n {
	case 0:
		return fmt.Sprintf("Every output is an input or a constant: the tape program %q has no instructions.", program)
	case 1:
		return fmt.Sprintf("It runs the one instruction of the tape program %q.", program)
	}
	return fmt.Sprintf("It runs the %d instructions of the tape program %q.", n, program)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

var blockNames = [numBlocks]string{"t", "y", "p", "v", "w", "u"}

// inputOf returns the block and index of input register r.
func inputOf(l tape.Layout, r int32) (block int, index int32) {
	starts := [numBlocks]int32{l.T(), l.Y(), l.P(), l.V(), l.W(), l.U()}
	for b := numBlocks - 1; b >= 0; b-- {
		if r >= starts[b] {
			return b, r - starts[b]
		}
	}
	return blockT, 0
}

// mathFuncs maps operations to the function sym.Eval calls: of package
// math, or of package pmath (the portable exp and log).
var mathFuncs = map[sym.Op]string{
	sym.OpPow: "pmath.Pow", sym.OpSqrt: "math.Sqrt", sym.OpExp: "pmath.Exp", sym.OpLog: "pmath.Log",
	sym.OpSin: "pmath.Sin", sym.OpCos: "pmath.Cos", sym.OpTan: "pmath.Tan", sym.OpTanh: "pmath.Tanh",
	sym.OpAtan2: "pmath.Atan2", sym.OpAbs: "math.Abs", sym.OpMin: "math.Min", sym.OpMax: "math.Max",
	sym.OpFloor: "math.Floor", sym.OpCeil: "math.Ceil",
}

// goComparison is the Go operator of each comparison.
var goComparison = map[sym.Op]string{sym.OpLt: "<", sym.OpLe: "<=", sym.OpEq: "==", sym.OpNe: "!="}

// instruction emits instruction k: s<k> = op(args). (Not v<k>: v is
// the tangent argument of JVP.)
func (g *gen) instruction(w *bytes.Buffer, k int, op sym.Op, args [3]string, lit [3]bool) error {
	n := op.Arity()
	// Operands of Go operators: an expression of numeric literals only
	// would be untyped constant arithmetic (exact, not float64), so wrap
	// them in a conversion (cannot happen for a tape program: constant
	// operations are folded); parenthesize negative literals.
	allLit := true
	for a := range n {
		allLit = allLit && lit[a]
	}
	var x [3]string
	for a := range n {
		x[a] = args[a]
		switch {
		case allLit:
			x[a] = "float64(" + x[a] + ")"
		case strings.HasPrefix(x[a], "-"):
			x[a] = "(" + x[a] + ")"
		}
	}
	v := fmt.Sprintf("s%d", k)
	switch op {
	case sym.OpNeg:
		fmt.Fprintf(w, "\t%s := -%s\n", v, x[0])
	case sym.OpAdd:
		fmt.Fprintf(w, "\t%s := %s + %s\n", v, x[0], x[1])
	case sym.OpSub:
		fmt.Fprintf(w, "\t%s := %s - %s\n", v, x[0], x[1])
	case sym.OpMul: // the conversion rounds the product: no fused multiply–add
		fmt.Fprintf(w, "\t%s := float64(%s * %s)\n", v, x[0], x[1])
	case sym.OpDiv:
		fmt.Fprintf(w, "\t%s := %s / %s\n", v, x[0], x[1])
	case sym.OpSelect:
		fmt.Fprintf(w, "\tvar %s float64\n\tif %s > 0 {\n\t\t%s = %s\n\t} else {\n\t\t%s = %s\n\t}\n", v, x[0], v, args[1], v, args[2])
	case sym.OpLt, sym.OpLe, sym.OpEq, sym.OpNe: // Go's comparisons are IEEE's: false with NaN, except !=
		fmt.Fprintf(w, "\tvar %s float64\n\tif %s %s %s {\n\t\t%s = 1\n\t}\n", v, x[0], goComparison[op], x[1], v)
	case sym.OpSign: // sym.Eval: 1, −1, or the operand itself (±0, NaN)
		fmt.Fprintf(w, "\t%s := %s\n\tif %s > 0 {\n\t\t%s = 1\n\t} else if %s < 0 {\n\t\t%s = -1\n\t}\n", v, args[0], x[0], v, x[0], v)
	default:
		name, ok := mathFuncs[op]
		if !ok || n > 2 {
			return fmt.Errorf("instruction %d: unsupported operation %v", k, op)
		}
		if strings.HasPrefix(name, "pmath.") {
			g.usesPmath = true
		} else {
			g.usesMath = true
		}
		fmt.Fprintf(w, "\t%s := %s(%s)\n", v, name, strings.Join(args[:n], ", "))
	}
	return nil
}

// literal returns a Go expression of type float64 (or an untyped
// constant that converts to it exactly) for x, and whether it is a
// numeric literal. strconv's shortest 'g' form round-trips exactly;
// −0, infinities and NaNs (with their payload bits) need math.
func (g *gen) literal(x float64) (string, bool, error) {
	switch {
	case math.IsNaN(x):
		g.usesMath = true
		if b := math.Float64bits(x); b != math.Float64bits(math.NaN()) {
			return fmt.Sprintf("math.Float64frombits(%#016x)", b), false, nil
		}
		return "math.NaN()", false, nil
	case math.IsInf(x, 1):
		g.usesMath = true
		return "math.Inf(1)", false, nil
	case math.IsInf(x, -1):
		g.usesMath = true
		return "math.Inf(-1)", false, nil
	case x == 0 && math.Signbit(x):
		g.usesMath = true
		return "math.Copysign(0, -1)", false, nil
	}
	return strconv.FormatFloat(x, 'g', -1, 64), true, nil
}

// problem emits <Prefix>Problem.
func (g *gen) problem() {
	m, p := g.m, g.prefix
	w := &g.body
	floats := func(xs []float64) string {
		s := make([]string, len(xs))
		for i, x := range xs {
			s[i], _, _ = g.literal(x)
		}
		return "[]float64{" + strings.Join(s, ", ") + "}"
	}
	strs := func(xs []string) string {
		s := make([]string, len(xs))
		for i, x := range xs {
			s[i] = strconv.Quote(x)
		}
		return "[]string{" + strings.Join(s, ", ") + "}"
	}
	lit := func(x float64) string { s, _, _ := g.literal(x); return s }
	fmt.Fprintf(w, "\n// %s, where the lane form of %sF is linked in (the files\n", laneHook(p), p)
	fmt.Fprintf(w, "// gradsolve gen -o writes beside this one, for amd64), sets FLanes and\n// Kernel of the Programs %sProblem returns.\n", p)
	fmt.Fprintf(w, "var %s func(*ode.Programs)\n", laneHook(p))
	fmt.Fprintf(w, "\n// %s, where the lane form is linked in, is the Problem's SensLanes.\n", laneSensHook(p))
	fmt.Fprintf(w, "var %s func(paramCols []int) (func() ode.LaneProgram, error)\n", laneSensHook(p))
	fmt.Fprintf(w, "\n// %sProblem returns the model %s as an ode.Problem: its names\n", p, strconv.Quote(m.Name))
	if g.initial {
		fmt.Fprintf(w, "// and defaults, with the generated functions as F, Programs, SensF and\n// Initial.\n")
	} else {
		fmt.Fprintf(w, "// and defaults, with the generated functions as F, Programs and SensF.\n")
	}
	fmt.Fprintf(w, "func %sProblem() *ode.Problem {\n\tpr := &ode.Problem{\n", p)
	fmt.Fprintf(w, "Name: %s,\nDim: %d,\nNumParams: %d,\nF: %sF,\n", strconv.Quote(m.Name), g.dim, g.np, p)
	fmt.Fprintf(w, "StateNames: %s,\nParamNames: %s,\n", strs(m.StateNames()), strs(m.ParamNames()))
	fmt.Fprintf(w, "Y0: %s,\nP: %s,\n", floats(g.y0), floats(m.P()))
	fmt.Fprintf(w, "T0: %s,\nT1: %s,\nStiff: %t,\n", lit(m.T0), lit(m.T1), m.Stiff)
	fmt.Fprintf(w, "Programs: func() *ode.Programs {\npg := &ode.Programs{F: %[1]sF, JVP: %[1]sJVP, VJP: %[1]sVJP, JacY: %[1]sJacY, DfDt: %[1]sDfDt,\n", p)
	fmt.Fprintf(w, "JVPJacY: %[1]sJVPJacY, JVPDfDt: %[1]sJVPDfDt, JVPVJP: %[1]sJVPVJP, DfDtVJP: %[1]sDfDtVJP}\n", p)
	fmt.Fprintf(w, "if %[1]s != nil {\n%[1]s(pg)\n}\nreturn pg\n},\n", laneHook(p))
	fmt.Fprintf(w, "SensF: %sSensF,\n", p)
	if g.initial {
		fmt.Fprintf(w, "Initial: func() ode.InitialFunc { return %sInitial },\n", p)
	}
	fmt.Fprintf(w, "}\nif %[1]s != nil {\npr.SensLanes = %[1]s\n}\nreturn pr\n}\n", laneSensHook(p))
}

// Formulas in doc comments.

// maxFormula bounds the length of a formula shown in a doc comment.
const maxFormula = 160

// fDoc returns the doc comment of <Prefix>F (after its name), with the
// formulas of small models.
func (g *gen) fDoc() []string {
	f := g.formulas()
	if len(f) == 0 || len(f) > maxNames {
		return []string{"writes the right-hand side f(t, y, p) into dy."}
	}
	return append([]string{"writes the right-hand side f(t, y, p) into dy:", ""}, f...)
}

// formulas returns one doc line per state: "dx/dt = …", the expression
// of f_i written with the state and parameter names. It reads the
// graph: call it under the graph's lock (tape.Set.WithGraph).
func (g *gen) formulas() []string {
	f, err := g.m.F()
	if err != nil {
		return nil
	}
	sn, pn := g.m.StateNames(), g.m.ParamNames()
	show := func(names []string, slice string, i int) string {
		if n := names[i]; token.IsIdentifier(n) && n != "t" {
			return n
		}
		return fmt.Sprintf("%s[%d]", slice, i)
	}
	lines := make([]string, 0, len(f))
	for i, e := range f {
		p := &printer{g: g.m.Graph(), state: func(j int) string { return show(sn, "y", j) }, param: func(j int) string { return show(pn, "p", j) }}
		p.expr(e.ID(), 0, 0)
		s := p.b.String()
		if p.tooLong {
			s = "(too long to show)"
		}
		lines = append(lines, fmt.Sprintf("\td%s/dt = %s", show(sn, "y", i), s))
	}
	return lines
}

// printer writes an expression in infix form with few parentheses.
type printer struct {
	g            *sym.Graph
	state, param func(int) string
	b            strings.Builder
	tooLong      bool
}

// precedence of the node's outermost operation: 0 for comparisons, 1
// for + −, 2 for · /, 3 for unary minus and negative constants, 4 for
// the rest.
func (p *printer) precedence(id int32) int {
	n := p.g.Node(id)
	switch n.Op {
	case sym.OpLt, sym.OpLe, sym.OpEq, sym.OpNe:
		return 0
	case sym.OpAdd, sym.OpSub:
		return 1
	case sym.OpMul, sym.OpDiv:
		return 2
	case sym.OpNeg:
		return 3
	case sym.OpConst:
		if math.Signbit(n.Value) {
			return 3
		}
	}
	return 4
}

// expr writes node id; min is the lowest precedence that needs no
// parentheses in this position.
func (p *printer) expr(id int32, min, depth int) {
	if p.tooLong || p.b.Len() > maxFormula || depth > maxFormula {
		p.tooLong = true
		return
	}
	if p.precedence(id) < min {
		p.b.WriteByte('(')
		defer p.b.WriteByte(')')
	}
	n := p.g.Node(id)
	a, b := n.Args[0], n.Args[1]
	switch n.Op {
	case sym.OpConst:
		p.b.WriteString(strconv.FormatFloat(n.Value, 'g', -1, 64))
	case sym.OpTime:
		p.b.WriteString("t")
	case sym.OpState:
		p.b.WriteString(p.state(int(n.Index)))
	case sym.OpParam:
		p.b.WriteString(p.param(int(n.Index)))
	case sym.OpSeed:
		fmt.Fprintf(&p.b, "%s[%d]", [...]string{"v", "w", "u"}[n.Kind%3], n.Index)
	case sym.OpNeg:
		p.b.WriteByte('-')
		p.expr(a, 4, depth+1)
	case sym.OpLt, sym.OpLe, sym.OpEq, sym.OpNe: // not chained: both operands above 0
		p.expr(a, 1, depth+1)
		p.b.WriteString(" " + n.Op.String() + " ")
		p.expr(b, 1, depth+1)
	case sym.OpSelect:
		p.b.WriteString("ifelse(")
		p.expr(a, 0, depth+1)
		if !p.g.Node(a).Op.IsComparison() {
			p.b.WriteString(" > 0")
		}
		for _, k := range n.Args[1:] {
			p.b.WriteString(", ")
			p.expr(k, 0, depth+1)
		}
		p.b.WriteByte(')')
	case sym.OpAdd, sym.OpSub, sym.OpMul, sym.OpDiv:
		prec := p.precedence(id)
		p.expr(a, p.operandMin(a, prec, true), depth+1)
		switch n.Op {
		case sym.OpAdd:
			p.b.WriteString(" + ")
		case sym.OpSub:
			p.b.WriteString(" - ")
		case sym.OpMul:
			p.b.WriteString("*")
		case sym.OpDiv:
			p.b.WriteString("/")
		}
		// The right operand of − and / needs parentheses at equal
		// precedence.
		right := prec
		if n.Op == sym.OpSub || n.Op == sym.OpDiv {
			right++
		}
		p.expr(b, p.operandMin(b, right, false), depth+1)
	default:
		p.b.WriteString(n.Op.String())
		p.b.WriteByte('(')
		for k := range n.Op.Arity() {
			if k > 0 {
				p.b.WriteString(", ")
			}
			p.expr(n.Args[k], 0, depth+1)
		}
		p.b.WriteByte(')')
	}
}

// operandMin returns the min argument of expr for operand id of a
// binary operator of precedence prec: a negation or negative constant
// is parenthesised unless it starts the formula or a parenthesis ("x +
// (-y)", "(-x)*y", but "-x*y" at the start).
func (p *printer) operandMin(id int32, prec int, left bool) int {
	if p.precedence(id) != 3 {
		return prec
	}
	s := p.b.String()
	if left && (s == "" || strings.HasSuffix(s, "(") || strings.HasSuffix(s, ", ")) {
		return prec
	}
	return 4
}
