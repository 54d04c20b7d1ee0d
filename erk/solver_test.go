package erk

import (
	"testing"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/ivp"
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
			tr := &ivp.Trajectory{T0: pr.T0, T1: pr.T1, Y0: pr.Y0, P: pr.P, Save: []float64{pr.T0, (pr.T0 + pr.T1) / 2, pr.T1}}
			out := &ivp.Output{Y: make([]float64, pr.Dim), Saved: make([]float64, 3*pr.Dim)}
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

// A recording solve, a forward replay and a reverse sweep allocate
// nothing once the mesh has grown to the trajectory's length.
func TestReplayDoesNotAllocate(t *testing.T) {
	pr := systems.Halo()
	pg := pr.Programs()
	for _, tb := range method.All() {
		for _, keep := range []bool{false, true} {
			cfg := Config{Tableau: tb, F: pr.F, Dim: 6, RTol: fill(1e-8, 6), ATol: fill(1e-8, 6), MaxSteps: 100000,
				Controller: control.DefaultPI(tb.Order, tb.QMin, tb.QMax)}
			sv, _ := New(cfg)
			rp, err := NewReplayer(cfg, 3, pg.VJP)
			if err != nil {
				t.Fatal(err)
			}
			save := []float64{5, 20}
			tr := &ivp.Trajectory{T0: 0, T1: 20, Y0: pr.Y0, P: pr.P, Save: save}
			ms := &ivp.Mesh{KeepStages: keep}
			out := &ivp.Output{Y: make([]float64, 6), Saved: make([]float64, 12), Mesh: ms}
			sv.Solve(tr, out, nil) // grow the mesh
			cot, cs, gy0, gp := fill(1, 6), fill(0.5, 12), make([]float64, 6), make([]float64, 3)
			allocs := testing.AllocsPerRun(10, func() {
				sv.Solve(tr, out, nil)
				rp.Forward(ms, pr.Y0, pr.P, save, out.Y, out.Saved)
				rp.Reverse(ms, pr.P, save, cot, cs, gy0, gp)
			})
			if allocs != 0 {
				t.Errorf("%s keep=%v: %v allocations per record+replay+reverse", tb.Name, keep, allocs)
			}
		}
	}
}
