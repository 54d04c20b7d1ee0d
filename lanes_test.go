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

// The built-in systems' lane forms run on cpu-lanes with cpu-erk's bits:
// Lorenz forward, the halo forward and with sensitivities (its lane
// sensitivity system), and the router picks cpu-lanes for them.
func TestBuiltinSystemsInLanes(t *testing.T) {
	if err := cpu.LanesAvailable(); err != nil {
		t.Skipf("cpu-lanes cannot run here: %v", err)
	}
	ctx := context.Background()
	halo, ph := haloEnsemble(21)
	lorenz, pl := lorenzEnsemble(21)
	for _, c := range []struct {
		name string
		pr   *gradsolve.Problem
		ens  *gradsolve.Ensemble
		o    gradsolve.Options
	}{
		{"lorenz", lorenz, pl, gradsolve.Options{Method: method.Tsit5, RTol: 1e-8, ATol: 1e-10}},
		{"halo", halo, ph, gradsolve.Options{Method: method.DP8, RTol: 1e-8, ATol: 1e-8}},
		{"halo sensitivities", systems.Halo(), ph, gradsolve.Options{Method: method.Vern7, RTol: 1e-8, ATol: 1e-8,
			Sens: &gradsolve.Sensitivity{Wrt: []gradsolve.Wrt{gradsolve.Param(0), gradsolve.Param(1), gradsolve.InitialValue(2)}}}},
	} {
		lanes, err := gradsolve.Solve(ctx, c.pr, c.ens, &c.o)
		if err != nil {
			t.Fatal(err)
		}
		ref := c.o
		ref.Engine = "cpu-erk"
		want, err := gradsolve.Solve(ctx, c.pr, c.ens, &ref)
		if err != nil {
			t.Fatal(err)
		}
		if lanes.Engine != "cpu-lanes" {
			t.Errorf("%s: the router picked %s (%s)", c.name, lanes.Engine, lanes.EngineReason)
		}
		for _, v := range [][2][]float64{{lanes.Y, want.Y}, {lanes.S, want.S}, {lanes.T, want.T}} {
			testutil.CheckBits(t, c.name, v[0], v[1])
		}
		for i := range lanes.Stats {
			if lanes.Stats[i] != want.Stats[i] || lanes.Status[i] != want.Status[i] {
				t.Fatalf("%s: trajectory %d: %+v %v in lanes, %+v %v on cpu-erk", c.name, i, lanes.Stats[i], lanes.Status[i], want.Stats[i], want.Status[i])
			}
		}
	}
}
