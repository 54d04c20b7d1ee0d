package enginetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/internal/engine"
	"github.com/gradsolve/gradsolve/sym/parse"
	"github.com/gradsolve/gradsolve/sym/tape"
)

// blowupSource is y' = p·y², y(0) = 1, whose solution 1/(1 − p·t) has
// a pole at t = 1/p, on a time scale of 1e−300: with p = 1e300 the pole
// is at 1e−300, where the step floor is the absolute 2^−1022
// (control.MinStep), far below the steps near the pole; so the state
// grows until p·y² overflows (at y ≈ 1.3e4) while the steps are still
// well above the floor, every trial then holds an infinity, and the
// rejections drive h down to the floor: status NonFinite. A trajectory
// whose pole lies beyond t1 (p = 0.2e300 and 0.3e300 on [0, 2e−300])
// succeeds with y(t1) = 1/(1 − p·t1) = 1/0.6 and 1/0.4.
const blowupSource = `name blowup
param p = 1
state y = 1
y' = p*y^2
`

const blowupT1 = 2e-300

var (
	blowupOnce sync.Once
	blowupProb *gradsolve.Problem
	blowupErr  error
)

func blowupProblem(t T) *gradsolve.Problem {
	t.Helper()
	blowupOnce.Do(func() {
		m, err := parse.Parse("blowup.ode", []byte(blowupSource))
		if err == nil {
			var set *tape.Set
			if set, err = tape.Build(m); err == nil {
				blowupProb = set.Problem()
			}
		}
		blowupErr = err
	})
	if blowupErr != nil {
		t.Fatal(blowupErr)
	}
	return blowupProb
}

// Failures checks the statuses of failed trajectories and what they
// report: a step budget too small ends every trajectory with
// MaxStepsReached after exactly that many attempts, at a time T inside
// the span whose state is the closed form's there and with the saved
// states before T filled and after it NaN; a blow-up ends its
// trajectory with NonFinite at the pole, the step below the floor,
// while the trajectories beside it succeed.
func Failures(t T, e engine.Engine) {
	ctx := context.Background()
	for _, m := range Methods(e) {
		name := m.MethodName()
		// A budget no method meets on [0, 2] (DP8 takes about ten
		// attempts), and save times before and after where it stops.
		const budget = 4
		ens := &gradsolve.Ensemble{N: n, P: params(n), T0: []float64{0}, T1: []float64{2}, Save: []float64{1e-9, 1.9}}
		o := options(e, m)
		o.MaxSteps = budget
		res, err := gradsolve.Solve(ctx, mustProblem(t), ens, o)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			var te *gradsolve.TrajectoryError
			if !errors.As(res.Err(i), &te) || te.Status != gradsolve.MaxStepsReached || te.Index != i || te.T != res.T[i] {
				t.Errorf("%s: trajectory %d: status %v, error %v; want MaxStepsReached at T = %g", name, i, res.Status[i], res.Err(i), res.T[i])
				continue
			}
			if a := res.Stats[i].Attempts(); a != budget {
				t.Errorf("%s: trajectory %d: %d attempts, budget %d", name, i, a, budget)
			}
			if !(te.T > 1e-9 && te.T < 1.9) || !(te.H > 0) || math.IsInf(te.H, 0) {
				t.Errorf("%s: trajectory %d: stopped at T = %g with h = %g: want inside (1e-9, 1.9), h > 0 finite", name, i, te.T, te.H)
				continue
			}
			p := ens.P[i*numParams : (i+1)*numParams]
			y, _ := exact(0, te.T, p, 1, p[3])
			if err := relErr(res.Row(i), y[:], 0); err > accuracy(m) {
				t.Errorf("%s: trajectory %d: the state at T = %g errs by %.2g relative, bound %.2g", name, i, te.T, err, accuracy(m))
			}
			early, late := res.SavedRow(i, 0), res.SavedRow(i, 1)
			y, _ = exact(0, 1e-9, p, 1, p[3])
			if err := relErr(early, y[:], 0); err > accuracy(m) || !math.IsNaN(late[0]) || !math.IsNaN(late[1]) {
				t.Errorf("%s: trajectory %d: saved %v before T (error %.2g), %v after: want the state, then NaN", name, i, early, err, late)
			}
		}

		bp := blowupProblem(t)
		pb := []float64{0.2e300, 1e300, 0.3e300}
		bens := &gradsolve.Ensemble{N: len(pb), P: pb, T0: []float64{0}, T1: []float64{blowupT1}}
		res, err = gradsolve.Solve(ctx, bp, bens, options(e, m))
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range pb {
			if p*blowupT1 < 1 { // no pole in the span
				want := 1 / (1 - p*blowupT1)
				if res.Status[i] != gradsolve.Success || math.Abs(res.Y[i]-want) > accuracy(m)*want {
					t.Errorf("%s: blow-up ensemble: trajectory %d (no pole): %v, y = %g, want %g", name, i, res.Status[i], res.Y[i], want)
				}
				continue
			}
			var te *gradsolve.TrajectoryError
			if !errors.As(res.Err(i), &te) || te.Status != gradsolve.NonFinite {
				t.Errorf("%s: blow-up: trajectory %d: status %v (%v), want NonFinite", name, i, res.Status[i], res.Err(i))
				continue
			}
			// The trajectory stops short of the pole — no later than the
			// numerical solution's own pole, within a global error
			// (accuracy(m) relative) of the true one — where trial steps
			// first overflow: p·y² passes the largest float64 once
			// y > 1.3e4, within 1e−4 of the pole, and trials from states
			// a hundred times smaller can reach it, so the last accepted
			// state is above 100 (measured: 1e3 to 1e4, T within 1e−3 of
			// the pole). The last step tried is below the floor at T.
			pole := 1 / p
			if !(te.T > pole*(1-1e-2) && te.T < pole*(1+accuracy(m))) || math.Abs(te.H) >= control.MinStep(te.T) || te.H == 0 {
				t.Errorf("%s: blow-up: stopped at T = %g (pole %g) with h = %g (floor %g)", name, te.T, pole, te.H, control.MinStep(te.T))
			}
			if v := res.Y[i]; math.IsNaN(v) || math.IsInf(v, 0) || v < 100 {
				t.Errorf("%s: blow-up: the last accepted state is %g", name, v)
			}
			measured(t, fmt.Sprintf("blow-up %s: 1 − T/pole, last state", name), 1-te.T/pole)
			measured(t, fmt.Sprintf("blow-up %s: last state", name), res.Y[i])
		}
	}
}
