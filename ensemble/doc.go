// Package ensemble runs independent jobs, one per trajectory, on a pool
// of goroutine workers with dynamic scheduling.
//
// Workers take chunks of consecutive indices from a shared atomic
// counter, so trajectories whose step counts differ balance themselves:
// a worker that drew cheap trajectories simply draws more. Each index is
// processed exactly once, by whichever worker drew it, and writes only
// its own output slots, so results never depend on the number of
// workers or on scheduling.
package ensemble
