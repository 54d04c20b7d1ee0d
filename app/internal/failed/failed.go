// Package failed words the failed trajectories of an application's solve
// as one line of an error.
package failed

import (
	"fmt"

	"github.com/gradsolve/gradsolve"
)

// Error returns nil when every trajectory of res succeeded, and
// otherwise one line, "what: K of N trajectories failed; first: …", that
// wraps the first failure's *gradsolve.TrajectoryError (so errors.As
// finds it). name, when not nil, says what trajectory i is in the
// application's terms ("λ = 1.6"); its text comes before the failure's.
func Error(what string, res *gradsolve.Result, name func(i int) string) error {
	failed := res.Failed()
	if len(failed) == 0 {
		return nil
	}
	i := failed[0]
	first := ""
	if name != nil {
		first = name(i) + ": "
	}
	return fmt.Errorf("%s: %d of %d trajectories failed; first: %s%w", what, len(failed), res.N, first, res.Err(i))
}
