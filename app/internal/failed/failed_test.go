package failed

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/systems"
)

// Error is nil for a solve without failures, and otherwise one line that
// counts the failures, names the first in the caller's terms and wraps
// its *gradsolve.TrajectoryError.
func TestError(t *testing.T) {
	solve := func(maxSteps int) *gradsolve.Result {
		t.Helper()
		// Lorenz over its span t ∈ [0, 1] takes tens of steps: a budget
		// of 2 runs out for every trajectory.
		res, err := gradsolve.Solve(context.Background(), systems.Lorenz(), &gradsolve.Ensemble{N: 3}, &gradsolve.Options{MaxSteps: maxSteps})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if err := Error("app: the solve", solve(100000), nil); err != nil {
		t.Errorf("no failures: %v", err)
	}
	err := Error("app: the solve", solve(2), func(i int) string { return "star " + string(rune('A'+i)) })
	want := "app: the solve: 3 of 3 trajectories failed; first: star A: trajectory 0: "
	if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Error = %q, want one line starting %q", err, want)
	}
	var te *gradsolve.TrajectoryError
	if !errors.As(err, &te) || te.Index != 0 || te.Status != gradsolve.MaxStepsReached {
		t.Errorf("errors.As: %+v", te)
	}
}
