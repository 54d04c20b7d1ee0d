package gradsolve_test

import (
	"context"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/engine/cpu"
	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/systems"
)

// The built-in systems' lane forms run on the lane engines with their
// references' bits: Lorenz forward, the halo forward and with
// sensitivities (its lane sensitivity system) on cpu-lanes, Robertson,
// HIRES and the stiff Van der Pol oscillator on cpu-ros-lanes; the
// router picks the lane engines for them.
func TestBuiltinSystemsInLanes(t *testing.T) {
	if err := cpu.LanesAvailable(); err != nil {
		t.Skipf("cpu-lanes cannot run here: %v", err)
	}
	ctx := context.Background()
	halo, ph := haloEnsemble(21)
	lorenz, pl := lorenzEnsemble(21)
	rob := &gradsolve.Ensemble{N: 13, P: make([]float64, 0, 39), T0: []float64{0}, T1: []float64{1e4}, Save: []float64{1, 100}}
	for i := range rob.N {
		rob.P = append(rob.P, 0.02+0.003*float64(i), 3e7, 1e4)
	}
	hires := &gradsolve.Ensemble{N: 9, T0: []float64{0}, T1: []float64{10, 20, 40, 80, 160, 321.8122, 5, 1, 2}}
	vdp := &gradsolve.Ensemble{N: 10, P: linspace(1e2, 1e4, 10), T0: []float64{0}, T1: []float64{2}}
	for _, c := range []struct {
		name, engine, ref string
		pr                *gradsolve.Problem
		ens               *gradsolve.Ensemble
		o                 gradsolve.Options
	}{
		{"lorenz", "cpu-lanes", "cpu-erk", lorenz, pl, gradsolve.Options{Method: method.Tsit5, RTol: 1e-8, ATol: 1e-10}},
		{"halo", "cpu-lanes", "cpu-erk", halo, ph, gradsolve.Options{Method: method.DP8, RTol: 1e-8, ATol: 1e-8}},
		{"halo sensitivities", "cpu-lanes", "cpu-erk", systems.Halo(), ph, gradsolve.Options{Method: method.Vern7, RTol: 1e-8, ATol: 1e-8,
			Sens: &gradsolve.Sensitivity{Wrt: []gradsolve.Wrt{gradsolve.Param(0), gradsolve.Param(1), gradsolve.InitialValue(2)}}}},
		{"robertson", "cpu-ros-lanes", "cpu-ros", systems.Robertson(), rob, gradsolve.Options{Method: method.Rodas5P, RTol: 1e-7, ATol: 1e-11}},
		{"hires", "cpu-ros-lanes", "cpu-ros", systems.HIRES(), hires, gradsolve.Options{Method: method.Rodas5P, RTol: 1e-7, ATol: 1e-9}},
		{"vdp stiff", "cpu-ros-lanes", "cpu-ros", systems.VanDerPolStiff(0), vdp, gradsolve.Options{Method: method.Rosenbrock23, RTol: 1e-6, ATol: 1e-8}},
	} {
		lanes, err := gradsolve.Solve(ctx, c.pr, c.ens, &c.o)
		if err != nil {
			t.Fatal(err)
		}
		ref := c.o
		ref.Engine = c.ref
		want, err := gradsolve.Solve(ctx, c.pr, c.ens, &ref)
		if err != nil {
			t.Fatal(err)
		}
		if lanes.Engine != c.engine {
			t.Errorf("%s: the router picked %s (%s)", c.name, lanes.Engine, lanes.EngineReason)
		}
		for _, v := range [][2][]float64{{lanes.Y, want.Y}, {lanes.S, want.S}, {lanes.T, want.T}, {lanes.Saved, want.Saved}} {
			testutil.CheckBits(t, c.name, v[0], v[1])
		}
		for i := range lanes.Stats {
			if lanes.Stats[i] != want.Stats[i] || lanes.Status[i] != want.Status[i] {
				t.Fatalf("%s: trajectory %d: %+v %v in lanes, %+v %v on %s", c.name, i, lanes.Stats[i], lanes.Status[i], want.Stats[i], want.Status[i], c.ref)
			}
		}
	}
}
