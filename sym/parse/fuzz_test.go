package parse_test

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve/sym/parse"
	"github.com/gradsolve/gradsolve/sym/tape"
)

// fuzzSeeds are small broken and odd files that steer the fuzzer to
// every statement and error path.
var fuzzSeeds = []string{
	"",
	"state x = 1\nx' = x\n",
	"state x = 1, y = 2\nparam k = 8/3\nconst c = 2^-1\nlet a = k*x - y\nspan 0, -1\nstiff\nx' = a\ny' = -x^2^k\n",
	"state x = 1\nx' = (x + 1\n",
	"state x = 1\nx' = x)\n",
	"state x = 1\nx' = x/0\n",
	"state x = 1\nx' = 1/(x - x)\n",
	"state x = 1\nx' = atan2(x)\n",
	"state x = log(0)\nx' = 1e999\n",
	"state x = 1\nx'' = 2x\n",
	"stat x = 1\nx' = q\nspan 1 1\n",
	"state x = 1\nx' = min(x, max(t, pi)) + pow(abs(x), 1.5) + tanh(tan(cos(sin(exp(sqrt(x))))))\n",
	"state x = 1, x = 2\nx' = x\nx' = x\n",
	"state x = 1\nx' = x^x^x^-x\n",
	"state x = 1\nx' = x*0 + 0/x + x^0 + 0^x\n",
	"name a\nname b\nstate x = 1 # c\nx' = x # c\n",
	"const a = 1, b = a < 2\nstate x = 1, y = 0\nlet c = x >= y, d = x != 0\nx' = ifelse(c, sign(y), floor(x) - ceil(t)) + (x == y)\ny' = ifelse(x - 1, d, -1) <= 0\n",
	"state x = 1\nx' = 0 < x < 1 + !x\n",
	"param r = 2, a = 0.5\nconst c = cos(a), d = 3\nlet s = r*sin(a)\nstate x = r*c, y = s, z = d\nx' = -y*c\ny' = x\nz' = s*z\n",
	"param k = 0\nstate x = log(k)\nstate y = t\nparam q = k\nx' = x\n",
}

// FuzzParse checks that Parse never panics; that every error carries a
// position (Line, Col ≥ 1), except the errors about the whole file
// (Line = Col = 0), and none is an internal error; and that a model Parse
// accepts passes m.F, builds a tape (tape.Build may return an error but
// must not panic), evaluates at its defaults, and survives a Format and
// Parse round trip unchanged (checkRoundTrip).
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "*.ode"))
	if err != nil {
		f.Fatal(err)
	}
	if len(files) == 0 {
		f.Fatal("no examples/*.ode")
	}
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		m, err := parse.Parse("fuzz.ode", src)
		if err != nil {
			if m != nil {
				t.Errorf("model and error returned")
			}
			var list parse.ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error %T is not a non-empty ErrorList: %v", err, err)
			}
			for _, e := range list {
				whole := e.Line == 0 && e.Col == 0
				if !whole && (e.Line < 1 || e.Col < 1) {
					t.Errorf("error without a position: %#v", e)
				}
				if e.File != "fuzz.ode" || e.Msg == "" || strings.Contains(e.Msg, "internal error") {
					t.Errorf("bad error %#v", e)
				}
			}
			return
		}
		if _, err := m.F(); err != nil {
			t.Fatalf("Parse accepted a model that m.F rejects: %v", err)
		}
		s, err := tape.Build(m)
		if err != nil {
			return // allowed; but none is known
		}
		pr := s.Problem()
		dy := make([]float64, pr.Dim)
		pr.F(pr.T0, pr.Y0, pr.P, dy)
		pg := s.Programs()
		v, w := make([]float64, pr.Dim), make([]float64, pr.NumParams)
		for i := range v {
			v[i] = 1
		}
		out, jac := make([]float64, pr.Dim), make([]float64, pr.Dim*pr.Dim)
		pg.JVP(pr.T0, pr.Y0, pr.P, v, w, out)
		pg.VJP(pr.T0, pr.Y0, pr.P, v, out, w)
		pg.JacY(pr.T0, pr.Y0, pr.P, jac)
		pg.DfDt(pr.T0, pr.Y0, pr.P, out)
		checkRoundTrip(t, m, rand.New(rand.NewPCG(1, 2)))
	})
}
