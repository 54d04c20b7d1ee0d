package compiled_test

import (
	"bytes"
	"context"
	"math"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/examples/compiled"
	"github.com/gradsolve/gradsolve/internal/engine/cpu"
	"github.com/gradsolve/gradsolve/internal/gencheck"
	"github.com/gradsolve/gradsolve/internal/lanetest"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/sym/tape"
)

// tapeSet compiles examples/NAME.ode to the tape.
func tapeSet(t *testing.T, name string) *tape.Set {
	t.Helper()
	return lanetest.Set(t, "../"+name+".ode", "")
}

// Each generated file is what gradsolve gen writes from its problem file
// now.
func TestUpToDate(t *testing.T) {
	for _, name := range []string{"lorenz", "halo", "robertson", "pendulum"} {
		gencheck.UpToDateWith(t, name+"_gen.go", []string{name + "_gen_lanes_amd64.go", name + "_gen_lanes_amd64.s"},
			"run", "../../cmd/gradsolve", "gen", "../"+name+".ode", "-package", "compiled")
	}
}

// The generated lane form (the tape's lane code as Go assembly) is
// linked in on amd64 with AVX2, its kernel is the tape's lane code byte
// for byte, and the lane engine on it gives the tape's bits: forward,
// with save times, and recorded.
func TestLanesMatchTape(t *testing.T) {
	if err := cpu.LanesAvailable(); err != nil {
		t.Skipf("cpu-lanes cannot run here: %v", err)
	}
	for _, c := range []struct {
		name string
		pr   *ode.Problem
		m    method.Method
	}{
		{"lorenz", compiled.LorenzProblem(), method.Tsit5},
		{"halo", compiled.HaloProblem(), method.DP8},
		{"robertson", compiled.RobertsonProblem(), method.Vern7},
		{"pendulum", compiled.PendulumProblem(), method.Tsit5}, // sin and cos in the lane code
	} {
		set := tapeSet(t, c.name)
		pg := c.pr.Programs()
		body, _, _ := set.F().LaneCode()
		if pg.FLanes == nil || pg.Kernel == nil || !bytes.Equal(pg.Kernel.Body, body) {
			t.Fatalf("%s: the generated lane form is missing or differs from the tape's lane code", c.name)
		}
		// Eleven trajectories, each with its own parameters, so that the
		// lanes hold different steps.
		const n = 11
		ens := &gradsolve.Ensemble{N: n, Save: []float64{c.pr.T1 / 3}}
		for i := range n {
			for _, v := range c.pr.P {
				ens.P = append(ens.P, v*(1+0.03*float64(i)))
			}
		}
		if c.name == "robertson" { // stiff: a short span for an explicit method
			ens.T0, ens.T1 = []float64{0}, []float64{0.01}
			ens.Save = []float64{0.004}
		}
		o := &gradsolve.Options{Method: c.m, RTol: 1e-7, ATol: 1e-9, Engine: "cpu-lanes"}
		a, err := gradsolve.Solve(context.Background(), c.pr, ens, o)
		if err != nil {
			t.Fatal(err)
		}
		ref := *o
		ref.Engine = "cpu-erk"
		b, err := gradsolve.Solve(context.Background(), set.Problem(), ens, &ref)
		if err != nil {
			t.Fatal(err)
		}
		if a.Errs() != nil || b.Errs() != nil || a.Engine != "cpu-lanes" {
			t.Fatalf("%s: %v / %v (engine %s)", c.name, a.Errs(), b.Errs(), a.Engine)
		}
		for _, v := range [][2][]float64{{a.Y, b.Y}, {a.Saved, b.Saved}, {a.T, b.T}} {
			for i := range v[0] {
				if math.Float64bits(v[0][i]) != math.Float64bits(v[1][i]) {
					t.Fatalf("%s: generated in lanes %v, tape %v at %d", c.name, v[0][i], v[1][i], i)
				}
			}
		}
		for i := range a.Stats {
			if a.Stats[i] != b.Stats[i] {
				t.Fatalf("%s: trajectory %d: stats %+v in lanes, %+v on the tape", c.name, i, a.Stats[i], b.Stats[i])
			}
		}
		// With sensitivities to every parameter and an initial value:
		// the generated sensitivity system in lanes (SensLanes).
		if c.pr.SensLanes == nil {
			t.Fatalf("%s: no lane form of the sensitivity system", c.name)
		}
		so, sr := *o, ref
		sens := &gradsolve.Sensitivity{Wrt: []gradsolve.Wrt{gradsolve.InitialValue(0)}}
		for j := range c.pr.NumParams {
			sens.Wrt = append(sens.Wrt, gradsolve.Param(j))
		}
		so.Sens, sr.Sens = sens, sens
		as, err := gradsolve.Solve(context.Background(), c.pr, ens, &so)
		if err != nil {
			t.Fatal(err)
		}
		bs, err := gradsolve.Solve(context.Background(), set.Problem(), ens, &sr)
		if err != nil {
			t.Fatal(err)
		}
		if as.Engine != "cpu-lanes" || as.Errs() != nil || bs.Errs() != nil {
			t.Fatalf("%s: sensitivities on %s: %v / %v", c.name, as.Engine, as.Errs(), bs.Errs())
		}
		for _, v := range [][2][]float64{{as.Y, bs.Y}, {as.S, bs.S}, {as.SavedS, bs.SavedS}} {
			for i := range v[0] {
				if math.Float64bits(v[0][i]) != math.Float64bits(v[1][i]) {
					t.Fatalf("%s: sensitivities: generated in lanes %v, tape %v at %d", c.name, v[0][i], v[1][i], i)
				}
			}
		}
	}
}

// The generated problems solve to the tape's numbers bit for bit, with
// sensitivities to every parameter (and Robertson with Rodas5P, which
// uses the generated Jacobian).
func TestSolvesMatchTape(t *testing.T) {
	for _, c := range []struct {
		name string
		pr   *ode.Problem
		opts gradsolve.Options
	}{
		{"lorenz", compiled.LorenzProblem(), gradsolve.Options{Method: method.Vern7, RTol: 1e-8, ATol: 1e-10}},
		{"halo", compiled.HaloProblem(), gradsolve.Options{Method: method.DP8, RTol: 1e-8, ATol: 1e-8}},
		{"robertson", compiled.RobertsonProblem(), gradsolve.Options{Method: method.Rodas5P, RTol: 1e-6, ATol: 1e-10}},
	} {
		set := tapeSet(t, c.name)
		o := c.opts
		o.Sens = &gradsolve.Sensitivity{}
		for j := range c.pr.NumParams {
			o.Sens.Wrt = append(o.Sens.Wrt, gradsolve.Param(j))
		}
		ens := &gradsolve.Ensemble{N: 3, Save: []float64{c.pr.T1 / 3}}
		a, err := gradsolve.Solve(context.Background(), c.pr, ens, &o)
		if err != nil {
			t.Fatal(err)
		}
		b, err := gradsolve.Solve(context.Background(), set.Problem(), ens, &o)
		if err != nil {
			t.Fatal(err)
		}
		if a.Errs() != nil || b.Errs() != nil {
			t.Fatalf("%s: %v / %v", c.name, a.Errs(), b.Errs())
		}
		for _, v := range [][2][]float64{{a.Y, b.Y}, {a.S, b.S}, {a.Saved, b.Saved}, {a.SavedS, b.SavedS}} {
			for i := range v[0] {
				if math.Float64bits(v[0][i]) != math.Float64bits(v[1][i]) {
					t.Fatalf("%s: generated %v, tape %v at %d", c.name, v[0][i], v[1][i], i)
				}
			}
		}
	}
}
