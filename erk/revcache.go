package erk

import (
	"encoding/binary"
	"sync"

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
var revCache struct {
	sync.Mutex
	m     map[string]any
	bytes int
}

// cachedRev returns the code cached under key, else builds it (nil:
// none to build), caches it with its size in bytes and returns it.
func cachedRev[T any](key string, build func() (*T, int)) *T {
	revCache.Lock()
	c, ok := revCache.m[key].(*T)
	revCache.Unlock()
	if ok {
		return c
	}
	c, size := build()
	if c == nil {
		return nil
	}
	revCache.Lock()
	defer revCache.Unlock()
	if revCache.m == nil || revCache.bytes+size > fusedCacheBytes {
		revCache.m, revCache.bytes = map[string]any{}, 0
	}
	revCache.m[key] = c
	revCache.bytes += size
	return c
}

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
	return cachedRev(key, func() (*fusedReverse, int) {
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
	return cachedRev(key, func() (*revSums, int) {
		r := buildRevSums(sv, L)
		if r == nil {
			return nil, 0
		}
		return r, r.size
	})
}
