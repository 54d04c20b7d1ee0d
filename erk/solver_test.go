package erk

import (
	"testing"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/systems"
)

func fill(v float64, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// A whole trajectory's solve, save times included, allocates nothing.
func TestSolveDoesNotAllocate(t *testing.T) {
	for _, pr := range []*ode.Problem{systems.Lorenz(), systems.Halo()} {
		for _, tb := range method.All() {
			sv, err := New(Config{Tableau: tb, F: pr.F, Dim: pr.Dim, RTol: fill(1e-8, pr.Dim), ATol: fill(1e-10, pr.Dim),
				MaxSteps: 100000, Controller: control.DefaultPI(tb.Order, tb.QMin, tb.QMax)})
			if err != nil {
				t.Fatal(err)
			}
			tr := &Trajectory{T0: pr.T0, T1: pr.T1, Y0: pr.Y0, P: pr.P, Save: []float64{pr.T0, (pr.T0 + pr.T1) / 2, pr.T1}}
			out := &Output{Y: make([]float64, pr.Dim), Saved: make([]float64, 3*pr.Dim)}
			allocs := testing.AllocsPerRun(20, func() { sv.Solve(tr, out, nil) })
			if allocs != 0 || out.Status != ode.Success {
				t.Errorf("%s %s: %v allocations per solve, status %v", pr.Name, tb.Name, allocs, out.Status)
			}
		}
	}
}

// New rejects a bad configuration with an error, never a panic.
func TestNewRejects(t *testing.T) {
	pr := systems.Lorenz()
	good := Config{Tableau: method.Tsit5, F: pr.F, Dim: 3, RTol: fill(1e-6, 3), ATol: fill(1e-9, 3), MaxSteps: 10,
		Controller: control.DefaultPI(5, 0, 0)}
	cases := map[string]func(c *Config){
		"nil tableau": func(c *Config) { c.Tableau = nil },
		"nil F":       func(c *Config) { c.F = nil },
		"dim":         func(c *Config) { c.Dim = 0 },
		"rtol length": func(c *Config) { c.RTol = fill(1e-6, 2) },
		"atol zero":   func(c *Config) { c.ATol = fill(0, 3) },
		"max steps":   func(c *Config) { c.MaxSteps = 0 },
		"hmax":        func(c *Config) { c.HMax = -1 },
		"h0":          func(c *Config) { c.H0 = -1 },
	}
	for name, mutate := range cases {
		c := good
		mutate(&c)
		if _, err := New(c); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := New(good); err != nil {
		t.Errorf("good config: %v", err)
	}
}
