package tape

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/sym"
	"github.com/gradsolve/gradsolve/sym/parse"
)

// sentinel fills the capacity past a slice's length: an evaluator that
// wrote there would change it.
var sentinel = math.Float64frombits(0x7ff8dead0000beef)

// evalArgs are the slice arguments of one evaluator call, with their
// names in ode.Programs, in the order the evaluator checks them.
type evalArgs struct {
	names []string
	need  []int
	s     [][]float64
}

// argsOf returns the names and needed lengths of the arguments of the
// evaluator that runs program pg.
func argsOf(pg *Program) evalArgs {
	l := pg.layout
	var a evalArgs
	add := func(name string, n int) {
		a.names, a.need = append(a.names, name), append(a.need, n)
	}
	add("y", l.Dim)
	add("p", l.NumParams)
	switch kindOf(pg) {
	case evalF:
		add(outName(pg.Name), len(pg.outs))
	case evalJVP:
		add("v", l.Dim)
		add("w", l.NumParams)
		add(outName(pg.Name), len(pg.outs))
	case evalVJP:
		add("u", l.Dim)
		add("gy", pg.split())
		add("gp", len(pg.outs)-pg.split())
	case evalJVPVJP:
		add("v", l.Dim)
		add("w", l.NumParams)
		add("u", l.Dim)
		add("gy", pg.split())
		add("gp", len(pg.outs)-pg.split())
	}
	return a
}

// initialArgsOf returns the names and needed lengths of the arguments
// of Problem.Initial's evaluator (ode.InitialFunc) for the
// initial-value program pg of a model of dim states, without jac when
// withJac is false.
func initialArgsOf(pg *Program, dim int, withJac bool) evalArgs {
	np := pg.layout.NumParams
	a := evalArgs{names: []string{"p", "y0"}, need: []int{np, dim}}
	if withJac {
		a.names, a.need = append(a.names, "jac"), append(a.need, dim*np)
	}
	return a
}

// fillArgs returns the arguments a names, each of length need+extra,
// or need−1 for argument short (−1: none), and capacity need+4, with
// sentinel past the need or the length.
func fillArgs(spec evalArgs, short, extra int) evalArgs {
	a := evalArgs{names: spec.names, need: spec.need}
	for i, n := range a.need {
		length := n + extra
		if i == short {
			length = n - 1
		}
		s := make([]float64, n+4)
		for k := range s {
			s[k] = 0.25 + 0.5*float64(k%5)
			if k >= min(n, length) { // past what the program may read or write
				s[k] = sentinel
			}
		}
		a.s = append(a.s, s[:length])
	}
	return a
}

// kindOf returns the evaluator of a program of a Set, by its name.
func kindOf(pg *Program) evalKind {
	switch pg.Name {
	case "jvp", "jvp_jac_y", "jvp_dfdt":
		return evalJVP
	case "vjp", "dfdt_vjp":
		return evalVJP
	case "jvp_vjp":
		return evalJVPVJP
	}
	return evalF
}

// call runs pg's evaluator on a, through the Program's method, or
// through the matching evaluator of ode.Programs when pgs is set.
func call(pg *Program, pgs *ode.Programs, a evalArgs) {
	s, r := a.s, pg.NewRegisters()
	if pgs == nil {
		switch kindOf(pg) {
		case evalF:
			pg.EvalF(r, 0.5, s[0], s[1], s[2])
		case evalJVP:
			pg.EvalJVP(r, 0.5, s[0], s[1], s[2], s[3], s[4])
		case evalVJP:
			pg.EvalVJP(r, 0.5, s[0], s[1], s[2], s[3], s[4])
		case evalJVPVJP:
			pg.EvalJVPVJP(r, 0.5, s[0], s[1], s[2], s[3], s[4], s[5], s[6])
		}
		return
	}
	switch pg.Name {
	case "f":
		pgs.F(0.5, s[0], s[1], s[2])
	case "jac_y":
		pgs.JacY(0.5, s[0], s[1], s[2])
	case "dfdt":
		pgs.DfDt(0.5, s[0], s[1], s[2])
	case "jvp":
		pgs.JVP(0.5, s[0], s[1], s[2], s[3], s[4])
	case "jvp_jac_y":
		pgs.JVPJacY(0.5, s[0], s[1], s[2], s[3], s[4])
	case "jvp_dfdt":
		pgs.JVPDfDt(0.5, s[0], s[1], s[2], s[3], s[4])
	case "vjp":
		pgs.VJP(0.5, s[0], s[1], s[2], s[3], s[4])
	case "dfdt_vjp":
		pgs.DfDtVJP(0.5, s[0], s[1], s[2], s[3], s[4])
	case "jvp_vjp":
		pgs.JVPVJP(0.5, s[0], s[1], s[2], s[3], s[4], s[5], s[6])
	}
}

// A slice one shorter than a program needs panics naming the program,
// the argument and both lengths, through every evaluator — the Program
// methods on machine code and on the interpreter, the evaluators of
// ode.Programs (machine code called directly for f where it is one
// piece), NewFunc and Problem.F — and nothing is written, even where the
// slice's capacity has room. Longer slices give the results of exact
// ones and are not written past the outputs' lengths.
//
// The evaluators of Problem.Initial (y0(p) and ∂y0/∂p, for a model whose
// initial values depend on the parameters) are checked the same way,
// with and without jac, on the machine code and on the interpreter.
func TestSliceLengths(t *testing.T) {
	halo, err := parse.ParseFile(filepath.Join("..", "..", "examples", "halo.ode"))
	if err != nil {
		t.Fatal(err)
	}
	type route struct {
		spec evalArgs
		run  func(evalArgs)
	}
	for _, m := range []*Set{mustBuildSet(t, lorenzModel()), mustBuildSet(t, halo), mustBuildSet(t, orbitModel())} {
		all := All(t, m)
		cols := []int{-1, 0}
		if _, err := m.SensF(cols); err != nil {
			t.Fatal(err)
		}
		all["sens"] = m.sens[fmt.Sprint(cols)]
		initial, err := m.InitialProgram()
		if err != nil {
			t.Fatal(err)
		}
		initialY0, err := m.initialY0Program()
		if err != nil {
			t.Fatal(err)
		}
		if initial != nil {
			all["initial"], all["initial_y0"] = initial, initialY0
		}
		for name, pg := range all {
			spec := argsOf(pg)
			routes := map[string]route{
				"method":      {spec, func(a evalArgs) { call(pg, nil, a) }},
				"interpreter": {spec, func(a evalArgs) { call(interpreted(pg), nil, a) }},
			}
			if name != "sens" && name != "initial" && name != "initial_y0" {
				routes["ode.Programs"] = route{spec, func(a evalArgs) { call(pg, m.Programs(), a) }}
			}
			if kindOf(pg) == evalF {
				routes["NewFunc"] = route{spec, func(a evalArgs) { pg.NewFunc()(0.5, a.s[0], a.s[1], a.s[2]) }}
				routes["interpreter NewFunc"] = route{spec, func(a evalArgs) { interpreted(pg).NewFunc()(0.5, a.s[0], a.s[1], a.s[2]) }}
			}
			if name == "f" {
				routes["Problem.F"] = route{spec, func(a evalArgs) { m.Problem().F(0.5, a.s[0], a.s[1], a.s[2]) }}
			}
			if name == "initial" {
				dim := m.Model.Dim()
				for _, jit := range []bool{true, false} {
					prog, label := pg, "Problem.Initial"
					if !jit {
						prog, label = interpreted(pg), "interpreter Problem.Initial"
					}
					ev := m.Problem().Initial
					if !jit {
						ev = initialEvaluators(interpreted(initialY0), func() *Program { return prog }, dim)
					}
					routes[label] = route{initialArgsOf(pg, dim, true), func(a evalArgs) { ev()(a.s[0], a.s[1], a.s[2]) }}
					routes[label+" without jac"] = route{initialArgsOf(pg, dim, false), func(a evalArgs) { ev()(a.s[0], a.s[1], nil) }}
				}
			}
			for route, rt := range routes {
				run := rt.run
				exact := fillArgs(rt.spec, -1, 0)
				run(exact)
				long := fillArgs(rt.spec, -1, 3)
				run(long)
				for i, s := range long.s {
					n := long.need[i]
					for k := range s {
						if k < n && math.Float64bits(s[k]) != math.Float64bits(exact.s[i][k]) {
							t.Errorf("%s %s %s: long %s[%d] = %v, exact %v", m.Model.Name, name, route, long.names[i], k, s[k], exact.s[i][k])
						}
						if k >= n && math.Float64bits(s[k]) != math.Float64bits(sentinel) {
							t.Errorf("%s %s %s: long %s[%d] (past the %d the program uses) written", m.Model.Name, name, route, long.names[i], k, n)
						}
					}
				}
				for i, n := range exact.need {
					if n == 0 {
						continue
					}
					a := fillArgs(rt.spec, i, 0)
					want := fmt.Sprintf("tape: %s: len(%s) = %d, want at least %d", name, a.names[i], n-1, n)
					func() {
						defer func() {
							if msg := fmt.Sprint(recover()); msg != want {
								t.Errorf("%s %s %s: short %s: panic %q, want %q", m.Model.Name, name, route, a.names[i], msg, want)
							}
						}()
						run(a)
					}()
					for j, s := range a.s {
						s = s[:cap(s)]
						for k := len(a.s[j]); k < len(s); k++ {
							if math.Float64bits(s[k]) != math.Float64bits(sentinel) {
								t.Errorf("%s %s %s: short %s: %s[%d] written past its length", m.Model.Name, name, route, a.names[i], a.names[j], k)
							}
						}
					}
				}
			}
		}
	}
}

func mustBuildSet(t *testing.T, m *sym.Model) *Set {
	t.Helper()
	s, err := Build(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
