package tape

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"

	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/sym"
	"github.com/gradsolve/gradsolve/sym/parse"
)

// Build compiles f only, and neither Programs nor a look at which
// evaluators it has builds anything: the graph does not grow until an
// evaluator runs, and then only by what that program needs.
func TestBuildIsLazy(t *testing.T) {
	m := lorenzModel()
	before := m.Graph().Len()
	s, err := Build(m)
	if err != nil {
		t.Fatal(err)
	}
	pg := s.Programs()
	if pg.JacY == nil || pg.DfDt == nil || pg.JVP == nil || pg.VJP == nil || pg.JVPJacY == nil ||
		pg.JVPDfDt == nil || pg.JVPVJP == nil || pg.DfDtVJP == nil {
		t.Fatal("Programs lacks an evaluator")
	}
	_ = s.Problem()
	if n := m.Graph().Len(); n != before {
		t.Errorf("graph grew from %d to %d nodes without a derivative being asked for", before, n)
	}
	for k := range numLazy {
		if s.built(k) != nil {
			t.Errorf("%s built before first use", lazyNames[k])
		}
	}
	y, p := []float64{1, 2, 3}, []float64{10, 28, 8.0 / 3}
	jac := make([]float64, 9)
	pg.JacY(0, y, p, jac)
	// J_y of Lorenz (σ, ρ, β order): [−σ σ 0; ρ−z −1 −x; y x −β].
	want := []float64{-10, 10, 0, 28 - 3, -1, -1, 2, 1, -8.0 / 3}
	for i := range want {
		if jac[i] != want[i] {
			t.Errorf("J_y[%d] = %v, want %v", i, jac[i], want[i])
		}
	}
	for k := range numLazy {
		if got := s.built(k) != nil; got != (k == lazyJacY) {
			t.Errorf("after J_y: %s built = %v", lazyNames[k], got)
		}
	}
	if got := s.Built(); len(got) != 1 || got[0] != "jac_y" {
		t.Errorf("Built() = %v after J_y, want [jac_y]", got)
	}
	// Programs asked for after the build hands out the built program.
	if s.Programs().JacY(0, y, p, jac); jac[0] != -10 {
		t.Errorf("J_y[0] = %v after the build", jac[0])
	}
}

// evalProgram evaluates a program of a Set, by its name's evaluator,
// into a fresh slice of its outputs.
func evalProgram(pg *Program, tt float64, y, p, v, w, u []float64) []float64 {
	dim := pg.layout.Dim
	out := make([]float64, len(pg.outs))
	r := pg.NewRegisters()
	switch pg.Name {
	case "f", "jac_y", "dfdt":
		pg.EvalF(r, tt, y, p, out)
	case "jvp", "jvp_jac_y", "jvp_dfdt":
		pg.EvalJVP(r, tt, y, p, v, w, out)
	case "vjp", "dfdt_vjp":
		pg.EvalVJP(r, tt, y, p, u, out[:dim], out[dim:])
	case "jvp_vjp":
		pg.EvalJVPVJP(r, tt, y, p, v, w, u, out[:dim], out[dim:])
	default:
		panic("no evaluator for " + pg.Name)
	}
	return out
}

// lazyModels are the models of the order test: the shipped examples
// and random models with nodes of many readers, where reverse mode's
// sums depend on the order of the nodes.
func lazyModels(t *testing.T) map[string]func() *sym.Model {
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "*.ode"))
	if err != nil || len(files) < 5 {
		t.Fatalf("examples: %v (%d files)", err, len(files))
	}
	models := map[string]func() *sym.Model{}
	for _, file := range files {
		models[filepath.Base(file)] = func() *sym.Model {
			m, err := parse.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
	}
	// x is read by three derivative nodes, cos(x), 1/x and x^(k−1),
	// which the reverse and the forward sweep create in opposite orders:
	// the order the first derivatives are derived in changes the bits of
	// the second derivatives in reverse mode here.
	models["readers"] = func() *sym.Model {
		m := sym.NewModel("readers")
		x, z := m.State("x", 1), m.State("z", 1)
		k := m.Param("k", 2.5)
		m.Deriv(x, sym.Sin(x).Add(sym.Log(x)).Add(x.Pow(k)).Add(sym.Sqrt(x.Mul(z))))
		m.Deriv(z, sym.Cos(x.Mul(z)).Add(sym.Exp(x.Div(z))).Add(sym.Tanh(x)).Mul(m.Time()))
		return m
	}
	for seed := range uint64(6) {
		models[fmt.Sprint("random", seed)] = func() *sym.Model {
			rng := rand.New(rand.NewPCG(seed, 99))
			return randomModel(rng, 2+int(seed%4), 1+int(seed%3), 40+10*int(seed))
		}
	}
	return models
}

// A program built on demand is the program BuildAll builds, bit for bit,
// whatever was asked for before it: each program alone, all of them in
// reverse order, and a fused sensitivity program first. BuildAll itself
// derives in the order Build once derived everything in, so its programs
// are the same code as then (gradsolve gen's golden files check that).
func TestLazyProgramsSameBits(t *testing.T) {
	orders := map[string][]lazyID{"reverse": nil, "sens first": nil}
	for k := numLazy - 1; k >= 0; k-- {
		orders["reverse"] = append(orders["reverse"], k)
		orders["sens first"] = append(orders["sens first"], k)
	}
	for k := range numLazy {
		orders[lazyNames[k]+" alone"] = []lazyID{k}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for name, model := range lazyModels(t) {
		ref, err := Build(model())
		if err != nil {
			t.Fatal(err)
		}
		if err := ref.BuildAll(); err != nil {
			t.Fatal(err)
		}
		l := ref.F().layout
		vec := func(n int) []float64 {
			x := make([]float64, n)
			for i := range x {
				x[i] = 0.5 + rng.Float64()
			}
			return x
		}
		for oname, order := range orders {
			s, err := Build(model())
			if err != nil {
				t.Fatal(err)
			}
			if oname == "sens first" {
				cols := []int{-1}
				if l.NumParams > 0 {
					cols = append(cols, 0)
				}
				if _, err := s.SensF(cols); err != nil {
					t.Fatal(err)
				}
			}
			for _, k := range order {
				got, err := s.program(k)
				if err != nil {
					t.Fatal(err)
				}
				want := ref.built(k)
				for range 20 {
					tt, y, p := rng.Float64(), vec(l.Dim), vec(l.NumParams)
					v, w, u := vec(l.Dim), vec(l.NumParams), vec(l.Dim)
					g, wv := evalProgram(got, tt, y, p, v, w, u), evalProgram(want, tt, y, p, v, w, u)
					for i := range wv {
						if math.Float64bits(g[i]) != math.Float64bits(wv[i]) && !(math.IsNaN(g[i]) && math.IsNaN(wv[i])) {
							t.Fatalf("%s, %s: %s[%d] = %v, built with all others %v", name, oname, lazyNames[k], i, g[i], wv[i])
						}
					}
				}
			}
		}
	}
}

// Many workers asking for the same program at once build it once and
// all get it.
func TestLazyConcurrent(t *testing.T) {
	s, err := Build(lorenzModel())
	if err != nil {
		t.Fatal(err)
	}
	y, p := []float64{1, 2, 3}, []float64{10, 28, 8.0 / 3}
	var wg sync.WaitGroup
	res := make([][]float64, 8)
	for i := range res {
		pg := s.Programs()
		wg.Go(func() {
			jac := make([]float64, 9)
			pg.JacY(0, y, p, jac)
			gy, gp := make([]float64, 3), make([]float64, 3)
			pg.JVPVJP(0, y, p, y, p, y, gy, gp)
			if _, err := s.SensF([]int{1}); err != nil {
				t.Error(err)
			}
			res[i] = append(jac, append(gy, gp...)...)
		})
	}
	wg.Wait()
	for i := range res {
		for k := range res[0] {
			if math.Float64bits(res[i][k]) != math.Float64bits(res[0][k]) {
				t.Fatalf("worker %d: result %d = %v, worker 0 %v", i, k, res[i][k], res[0][k])
			}
		}
	}
}

// Two Sets built from one model share its graph, and build their
// programs concurrently without a race (go test -race) and with the
// bits of one Set.
func TestTwoSetsOneModel(t *testing.T) {
	m := lorenzModel()
	s1, err := Build(m)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := Build(m)
	if err != nil {
		t.Fatal(err)
	}
	y, p := []float64{1, 2, 3}, []float64{10, 28, 8.0 / 3}
	res := make([][]float64, 2)
	var wg sync.WaitGroup
	for i, s := range []*Set{s1, s2} {
		wg.Go(func() {
			pg := s.Programs()
			if _, err := s.SensF([]int{0, -1}); err != nil {
				t.Error(err)
			}
			jac := make([]float64, 9)
			pg.JacY(0, y, p, jac)
			gy, gp := make([]float64, 3), make([]float64, 3)
			pg.JVPVJP(0, y, p, y, p, y, gy, gp)
			res[i] = append(jac, append(gy, gp...)...)
		})
	}
	wg.Wait()
	for k := range res[0] {
		if math.Float64bits(res[0][k]) != math.Float64bits(res[1][k]) {
			t.Fatalf("result %d: %v and %v", k, res[0][k], res[1][k])
		}
	}
	if _, err := (&Set{Model: m}).JacY(); err == nil {
		t.Error("a Set not made by Build built a program")
	}
}

// FJVP is f and J·v + J_p·w in one program: its outputs are those of F
// and JVP bit for bit, it is built once, under the graph's lock (beside
// SensF in another goroutine: run with -race), and it is not one of the
// programs Built lists.
func TestFJVP(t *testing.T) {
	s := mustBuildSet(t, lorenzModel())
	var wg sync.WaitGroup
	wg.Go(func() {
		for c := -1; c < 3; c++ {
			if _, err := s.SensF([]int{c}); err != nil {
				t.Error(err)
			}
		}
	})
	pg, err := s.FJVP()
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := s.FJVP(); again != pg {
		t.Error("FJVP compiled twice")
	}
	if got := s.Built(); len(got) != 0 {
		t.Errorf("Built() = %v after FJVP and SensF, want none", got)
	}
	jvp, err := s.JVP()
	if err != nil {
		t.Fatal(err)
	}
	y, p, v, w := []float64{1, 2, 3}, []float64{10, 28, 8.0 / 3}, []float64{0.5, -1, 2}, []float64{0.25, 1, -3}
	got := make([]float64, 6)
	pg.EvalJVP(pg.NewRegisters(), 0.5, y, p, v, w, got)
	want := append(evalProgram(s.F(), 0.5, y, p, nil, nil, nil), evalProgram(jvp, 0.5, y, p, v, w, nil)...)
	testutil.CheckBits(t, "f_jvp", got, want)
	s.WithGraph(func(g *sym.Graph) {
		if g != s.Model.Graph() {
			t.Error("WithGraph gave another graph")
		}
	})
}
