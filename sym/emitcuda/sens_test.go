package emitcuda_test

import (
	"fmt"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/ode"
)

// TestSensitivitiesBitwise solves each case's ensemble with forward
// sensitivities on cpu-erk (gradsolve.Solve with Options.Sens) and with
// the sensitivity kernels of every method in emulation, and compares
// the augmented states, final and saved, the statuses and the
// statistics bit for bit.
func TestSensitivitiesBitwise(t *testing.T) {
	for _, c := range forwardCases {
		if c.wrt == nil || testing.Short() && !shortCases[c.name] {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			set, src := c.source(t)
			prog := compile(t, src)
			prob := set.Problem()
			ens := makeEnsemble(prob, c, 7)
			dim, np, ns := prob.Dim, prob.NumParams, len(c.wrt)
			if c.y0FromP {
				ens.y0FromP = true
			}
			// The augmented initial states: y0, then each column's start —
			// e_i for y0[i], ∂y0/∂p_j for p[j] (zero where y0 is given).
			na := dim * (1 + ns)
			y0 := make([]float64, ensembleSize*na)
			jac := make([]float64, dim*np)
			for i := range ensembleSize {
				row := y0[i*na : (i+1)*na]
				if c.y0FromP {
					prob.Initial()(ens.p[i*np:(i+1)*np], row[:dim], jac)
				} else {
					copy(row, ens.y0[i*dim:(i+1)*dim])
				}
				for q, w := range c.wrt {
					col := row[dim*(1+q) : dim*(2+q)]
					switch {
					case w.Y0:
						col[w.Index] = 1
					case c.y0FromP:
						for d := range dim {
							col[d] = jac[d*np+w.Index]
						}
					}
				}
			}
			statuses := map[ode.Status]int{}
			for ki, kern := range src.Kernels {
				if kern.Sens < 0 {
					continue
				}
				o := gradsolve.Options{MaxSteps: c.maxSteps, Sens: &gradsolve.Sensitivity{Wrt: c.wrt, ErrorTest: c.errorTest}}
				res := cpuSolve(t, prob, ens, kern.Method, o)
				if res.NS != ns {
					t.Fatalf("the CPU solve has %d columns, want %d", res.NS, ns)
				}
				for _, s := range res.Status {
					statuses[s]++
				}
				got := prog.solve(t, kernelJob(ki, kern, &res.Options, ens, y0))
				compareResults(t, fmt.Sprintf("%s %s", c.name, kern.Name), expected(res), got, ens, na)
			}
			if statuses[ode.Success] == 0 || statuses[ode.MaxStepsReached] == 0 {
				t.Errorf("statuses %v: want successes and MaxStepsReached", statuses)
			}
		})
	}
}
