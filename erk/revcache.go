package erk

import (
	"encoding/binary"

	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/ode"
)

// The reverse codes built (the fused reversed step, with or without the
// rounds after it, and the cotangent sums), shared by every lane
// replayer of the same tableau, dimensions, f and cotangent program, as
// fusedCache shares the forward codes: a replayer is made for each
// worker of each recording, so without the cache every recording's
// first gradient built its code again (some 0.5–1 ms, more than the
// gradient of a small ensemble). The codes read everything else
// through their arguments, and their coefficients are read only.
// (A cache of its own, so that neither kind pushes the other out.)
var revCache codeCache

// cachedFusedReverse is buildFusedReverse through revCache. Its key is
// fusedKey's for f's body (the tableau, dimensions, and which rounds
// follow: 3 for none, 4 for the reverse walk's, 6 for the reverse
// walk's with its partial steps, whose code depends on L and the
// dimension alone besides), then the cotangent program's body.
func cachedFusedReverse(sv *Solver, fk, vk *ode.LaneKernel, L, m int, rounds roundTail) *fusedReverse {
	if fk == nil || vk == nil {
		return buildFusedReverse(sv, fk, vk, L, m, rounds)
	}
	tail := 3
	switch rr := rounds.(type) {
	case nil:
	case *ivp.ReverseRounds:
		tail = 4
		if rr.Partials() {
			tail = 6
		}
	default:
		return buildFusedReverse(sv, fk, vk, L, m, rounds)
	}
	key := fusedKey(sv, fk, nil, L, m, tail)
	key = string(binary.LittleEndian.AppendUint64([]byte(key), uint64(len(vk.Body)))) + string(vk.Body)
	return cachedCode(&revCache, key, func() (*fusedReverse, int) {
		f := buildFusedReverse(sv, fk, vk, L, m, rounds)
		if f == nil {
			return nil, 0
		}
		return f, f.size
	})
}

// cachedRevSums is buildRevSums through revCache: its code depends on
// the tableau's b and A, the dimension and L alone.
func cachedRevSums(sv *Solver, L int) *revSums {
	key := "sums" + fusedKey(sv, &ode.LaneKernel{}, nil, L, 0, 5)
	return cachedCode(&revCache, key, func() (*revSums, int) {
		r := buildRevSums(sv, L)
		if r == nil {
			return nil, 0
		}
		return r, r.size
	})
}
