package tape

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve/sym"
	"github.com/gradsolve/gradsolve/sym/parse"
)

// lorenzModel builds the Lorenz system with the parameter order of
// systems.Lorenz (σ, ρ, β) and the same expression trees as its Go code.
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

// Lorenz right-hand side, in one run (compare ns/op): the hand-written
// Go function, the tape as the engines call it (machine code where the
// platform has it, see jit.go), the tape on the interpreter, and the
// tape's lane code for LaneWidth trajectories a call (ns/traj).
// handLorenzF is systems.Lorenz's hand-written f, copied here: package
// systems builds its lane forms on this package, so these tests cannot
// import it.
func handLorenzF(_ float64, y, p, dy []float64) {
	x, yy, z := y[0], y[1], y[2]
	sigma, rho, beta := p[0], p[1], p[2]
	dy[0] = sigma * (yy - x)
	dy[1] = float64(x*(rho-z)) - yy
	dy[2] = float64(x*yy) - float64(beta*z)
}

func BenchmarkLorenzF(b *testing.B) {
	s, err := Build(lorenzModel())
	if err != nil {
		b.Fatal(err)
	}
	yv, p, dy := []float64{1, 2, 3}, []float64{10, 28, 8.0 / 3}, make([]float64, 3)
	for _, c := range []struct {
		name string
		f    func(t float64, y, p, dy []float64)
	}{
		{"handwritten", handLorenzF},
		{"tape", s.Programs().F},
		{"interpreter", interpreted(s.F()).NewFunc()},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				c.f(0, yv, p, dy)
			}
		})
	}
	// LaneWidth trajectories a call (lanes.go): compare ns/traj with the
	// others' ns/op.
	const L = LaneWidth
	pg := s.F()
	r, tl := pg.NewLaneRegisters(), make([]float64, L)
	yl, pl, out := make([]float64, 3*L), make([]float64, 3*L), make([]float64, 3*L)
	for d := range 3 {
		for l := range L {
			yl[d*L+l], pl[d*L+l] = yv[d]+float64(l), p[d]
		}
	}
	b.Run("lanes", func(b *testing.B) {
		for range b.N {
			pg.EvalFLanes(r, tl, yl, pl, out)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*L), "ns/traj")
	})
}

// linearModel is a linear chain of n states, y0' = −k·y0 and
// yi' = c·y(i−1) − k·yi: a right-hand side of size linear in n whose
// dense Jacobian has n² entries.
func linearModel(n int) *sym.Model {
	m := sym.NewModel("linear")
	k, c := m.Param("k", 1), m.Param("c", 0.5)
	y := make([]sym.Expr, n)
	for i := range y {
		y[i] = m.State("y"+strconv.Itoa(i), float64(min(1, 1-i)))
	}
	m.Deriv(y[0], k.Mul(y[0]).Neg())
	for i := 1; i < n; i++ {
		m.Deriv(y[i], c.Mul(y[i-1]).Sub(k.Mul(y[i])))
	}
	return m
}

// linearODE is linearModel as a problem file, as bench/bigode.sh writes
// it: states declared 50 a line.
func linearODE(n int) []byte {
	var b strings.Builder
	b.WriteString("name linear\nparam k = 1, c = 0.5\nspan 0 1\n")
	for lo := 0; lo < n; lo += 50 {
		b.WriteString("state ")
		for i := lo; i < min(n, lo+50); i++ {
			if i > lo {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "y%d = %d", i, min(1, 1-i))
		}
		b.WriteString("\n")
	}
	b.WriteString("y0' = -k*y0\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "y%d' = c*y%d - k*y%d\n", i, i-1, i)
	}
	return []byte(b.String())
}

// sinSumModel has one state x and terms sin terms: x' = Σ_i sin(a_i·x
// + b), with a_i = 1 + i/terms: every term a math call between pieces
// of machine code.
func sinSumModel(terms int) *sym.Model {
	m := sym.NewModel("sinsum")
	x := m.State("x", 0.5)
	b := m.Param("b", 0.25)
	sum := m.Const(0)
	for i := range terms {
		a := m.Const(1 + float64(i)/float64(terms))
		sum = sum.Add(sym.Sin(a.Mul(x).Add(b)))
	}
	m.Deriv(x, sum)
	return m
}

// Building a problem costs time and memory linear in its size: Build
// compiles f (derivative programs wait until asked for, see Set), and
// the machine-code compiler is linear in the program. Run with
// go test -run X -bench Build -benchmem ./sym/tape: ns/op and B/op
// should grow tenfold from n=1000 to n=10000, and from 1e4 to 1e5 sin
// terms. The model is built outside the timer; its parse cost is in
// cmd/gradsolve's figures (docs/benchmarks.md).
func BenchmarkBuildLinear(b *testing.B) {
	for _, n := range []int{1000, 2000, 5000, 10000} {
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			benchBuild(b, false, func() *sym.Model { return linearModel(n) })
		})
	}
}

// BenchmarkParseBuildLinear is BenchmarkBuildLinear from the text of a
// problem file (the route of gradsolve solve FILE.ode): parse, check
// and build.
func BenchmarkParseBuildLinear(b *testing.B) {
	for _, n := range []int{1000, 2000, 5000, 10000} {
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			src := linearODE(n)
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for range b.N {
				m, err := parse.Parse("linear.ode", src)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Build(m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// linearY0PODE is linearODE with initial values that depend on a
// parameter, yi = k*i: y0(p), which the parser evaluates at the
// defaults and the model checks for every state.
func linearY0PODE(n int) []byte {
	src := string(linearODE(n))
	for i := range n {
		src = strings.Replace(src, fmt.Sprintf("y%d = %d", i, min(1, 1-i)), fmt.Sprintf("y%d = k*%d", i, i), 1)
	}
	return []byte(src)
}

// BenchmarkParseBuildLinearY0P is BenchmarkParseBuildLinear with
// initial values that depend on a parameter (linearY0PODE): parsing and
// checking them is linear in the number of states too. The problem
// variants also make the ode.Problem, as gradsolve solve does, which
// compiles y0(p) (alone: ∂y0/∂p waits for a sensitivity job, see
// Set.InitialProgram).
func BenchmarkParseBuildLinearY0P(b *testing.B) {
	for _, n := range []int{1000, 2000, 5000, 10000} {
		src := linearY0PODE(n)
		for _, problem := range []bool{false, true} {
			name := "n=" + strconv.Itoa(n)
			if problem {
				name += "/problem"
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(len(src)))
				b.ReportAllocs()
				for range b.N {
					m, err := parse.Parse("linear.ode", src)
					if err != nil {
						b.Fatal(err)
					}
					s, err := Build(m)
					if err != nil {
						b.Fatal(err)
					}
					if problem && s.Problem().Initial == nil {
						b.Fatal("no y0(p)")
					}
				}
			})
		}
	}
}

// BenchmarkBuildSinSum: see BenchmarkBuildLinear. The all variants
// build every program too (one state: the Jacobians are as small as f).
func BenchmarkBuildSinSum(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run("terms="+strconv.Itoa(n), func(b *testing.B) {
			benchBuild(b, false, func() *sym.Model { return sinSumModel(n) })
		})
		b.Run("terms="+strconv.Itoa(n)+"/all", func(b *testing.B) {
			benchBuild(b, true, func() *sym.Model { return sinSumModel(n) })
		})
	}
}

func benchBuild(b *testing.B, all bool, model func() *sym.Model) {
	b.ReportAllocs()
	for range b.N {
		b.StopTimer()
		m := model()
		b.StartTimer()
		s, err := Build(m)
		if err != nil {
			b.Fatal(err)
		}
		_ = s.Programs() // what an engine asks for; builds nothing more
		if all {
			if err := s.BuildAll(); err != nil {
				b.Fatal(err)
			}
		}
	}
}
