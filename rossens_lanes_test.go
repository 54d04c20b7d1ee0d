package gradsolve_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/lanetest"
	"github.com/gradsolve/gradsolve/internal/testutil"
	"github.com/gradsolve/gradsolve/method"
)

// The forward sensitivities of a system above 12 components (16: the
// lanes' stages and columns from memory) run on cpu-ros-lanes — the
// router's choice as well as on request — and give cpu-ros's results
// bit for bit: states, save times, sensitivities at both, statuses and
// statistics, for both methods, re-stepped and dense save times. With
// a third column the attempt's code would pass its bound on eight lanes
// (ros.LaneCodeFits), and the router leaves the job to cpu-ros, saying
// so.
func TestRosSensLargeSystemInLanes(t *testing.T) {
	pr := sourceProblem(t, "ring16", lanetest.StiffRing("ring16", 16, 0.2))
	const n = 24
	p := make([]float64, 0, 3*n)
	t1 := make([]float64, n)
	for i := range n {
		x := float64(i)
		p = append(p, 1+0.1*x, 300+50*x, 2-0.05*x)
		t1[i] = 0.1 + 0.01*x
	}
	ens := &gradsolve.Ensemble{N: n, P: p, T0: []float64{0}, T1: t1, Save: []float64{0.01, 0.05}}
	sens := &gradsolve.Sensitivity{Wrt: []gradsolve.Wrt{gradsolve.Param(0), gradsolve.InitialValue(15)}}
	for _, tb := range method.AllRosenbrock() {
		for _, dense := range []bool{false, true} {
			var res []*gradsolve.Result
			for _, e := range []string{"cpu-ros", "cpu-ros-lanes", ""} {
				o := gradsolve.Options{Method: tb, RTol: 1e-6, ATol: 1e-9, DenseSave: dense, Engine: e, Sens: sens, Workers: 2}
				r, err := gradsolve.Solve(t.Context(), pr, ens, &o)
				if err != nil {
					if e == "cpu-ros-lanes" {
						t.Skipf("%s: %v", e, err)
					}
					t.Fatal(err)
				}
				if want := map[string]string{"": "cpu-ros-lanes"}[e]; e != "" && r.Engine != e || e == "" && r.Engine != want {
					t.Fatalf("%s %s: ran on %s (%s), want %s", tb.Name, e, r.Engine, r.EngineReason, e+want)
				}
				res = append(res, r)
			}
			ref := res[0]
			for _, r := range ref.Status {
				if r != gradsolve.Success {
					t.Fatalf("%s: a trajectory ends with %v", tb.Name, r)
				}
			}
			for _, r := range res[1:] {
				name := fmt.Sprintf("%s dense=%v %s against cpu-ros", tb.Name, dense, r.Engine)
				testutil.CheckBits(t, name+": Y", r.Y, ref.Y)
				testutil.CheckBits(t, name+": Saved", r.Saved, ref.Saved)
				testutil.CheckBits(t, name+": S", r.S, ref.S)
				testutil.CheckBits(t, name+": SavedS", r.SavedS, ref.SavedS)
				testutil.CheckBits(t, name+": T", r.T, ref.T)
				for i := range ref.Stats {
					if r.Stats[i] != ref.Stats[i] || r.Status[i] != ref.Status[i] {
						t.Errorf("%s: trajectory %d: %v %+v, want %v %+v", name, i, r.Status[i], r.Stats[i], ref.Status[i], ref.Stats[i])
					}
				}
			}
		}
	}
	o := gradsolve.Options{Method: method.Rodas5P, Sens: &gradsolve.Sensitivity{Wrt: append(sens.Wrt, gradsolve.Param(1))}}
	r, err := gradsolve.Solve(t.Context(), pr, ens, &o)
	if err != nil {
		t.Fatal(err)
	}
	if r.Engine != "cpu-ros" || !strings.Contains(r.EngineReason, "bound on machine code") {
		t.Errorf("3 columns: ran on %s (%s), want cpu-ros, for the bound on machine code", r.Engine, r.EngineReason)
	}
}
