package gradsolve

import (
	"context"
	"fmt"

	"github.com/gradsolve/gradsolve/internal/memory"
	"github.com/gradsolve/gradsolve/router"
)

// Solving an ensemble in chunks: more trajectories than memory holds at
// once, or results a caller reduces as they come (a sum, a histogram, a
// file written row by row) without keeping N of them.

// EnsemblePart returns the trajectories [lo, hi) of a larger ensemble as
// an Ensemble of hi − lo (the source of SolveChunks's inputs). For an
// ensemble held in memory, Ensemble.Parts gives it; a caller with more
// trajectories than memory builds each part on demand — a parameter
// sweep evaluated for the rows asked, rows read from a file.
type EnsemblePart func(lo, hi int) (*Ensemble, error)

// Parts returns the EnsemblePart of e for problem prob: each part cuts
// the per-trajectory rows of Y0, P, T0, T1 and (with SavePerTrajectory)
// Save, and shares the rest. It does not check e: SolveChunks's solves
// do, part by part.
func (e *Ensemble) Parts(prob *Problem) EnsemblePart {
	return func(lo, hi int) (*Ensemble, error) {
		if lo < 0 || hi > e.N || lo >= hi {
			return nil, fmt.Errorf("%w: Ensemble part [%d, %d) of %d trajectories", ErrInput, lo, hi, e.N)
		}
		rows := func(v []float64, width int) []float64 {
			if width > 0 && len(v) == e.N*width && (e.N > 1 || len(v) != width) {
				return v[lo*width : hi*width : hi*width]
			}
			return v // shared (or malformed: the solve says so)
		}
		p := &Ensemble{N: hi - lo, Y0: rows(e.Y0, prob.Dim), P: rows(e.P, prob.NumParams),
			T0: rows(e.T0, 1), T1: rows(e.T1, 1), Save: e.Save, SavePerTrajectory: e.SavePerTrajectory}
		if e.SavePerTrajectory && e.N > 0 && len(e.Save)%e.N == 0 {
			k := len(e.Save) / e.N
			p.Save = e.Save[lo*k : hi*k : hi*k]
		}
		return p, nil
	}
}

// ChunkBytes is the most memory ChunkSize's chunk takes. Past about
// 10⁴ trajectories a chunk's own cost (starting the workers, choosing
// the engine) no longer shows in the time per trajectory (the
// throughput sweep of docs/benchmarks.md), so a larger chunk buys
// nothing but memory.
const ChunkBytes = 256 << 20

// ChunkSize returns the number of trajectories per chunk SolveChunks
// takes by default for n trajectories of prob with opts and k save
// times each: as many as fit in ChunkBytes, and in a quarter of the
// memory available to the process (MemAvailable, the cgroup's limit,
// GOMEMLIMIT), counting each trajectory's results (Sizes.Footprint) and
// its inputs, and at most n; where the available memory is not known,
// at most 65536.
func ChunkSize(prob *Problem, n, k int, opts *Options) int {
	if n < 1 {
		return 1
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	// The bytes one more trajectory adds, past the workers' own state
	// (which grows with N up to the number of workers): the difference
	// of two large ensembles.
	const a = 1 << 16
	s := Sizes{N: a, Dim: prob.Dim, NumParams: prob.NumParams, K: k, Workers: max(o.Workers, 0)}
	if o.Sens != nil {
		s.NS = len(o.Sens.Wrt)
	}
	one, err1 := s.Footprint()
	s.N = 2 * a
	two, err2 := s.Footprint()
	av := memory.Available()
	if err1 != nil || err2 != nil || !av.Known {
		return min(n, 1<<16)
	}
	// Per trajectory: its results, and its inputs (y0, p, the span and
	// its save times).
	per := (two.Bytes-one.Bytes)/a + uint64(8*(prob.Dim+prob.NumParams+2+k))
	c := min(av.Bytes/4, ChunkBytes) / max(per, 1)
	return int(max(1, min(uint64(n), c)))
}

// SolveChunks solves n trajectories of prob in chunks of at most chunk
// (0: ChunkSize's default, with the save times of the first part), in
// order: each chunk's inputs come from part(lo, hi), and its Result (of
// hi − lo trajectories, trajectory lo first) goes to yield before the
// next chunk is solved. So at most one chunk's inputs and results are
// held at a time, besides what yield keeps. Every trajectory's values —
// final state, saved states, sensitivities, statistics, status — are
// those one Solve of all n gives it, bit for bit, for any chunk size
// and worker count: trajectories are solved independently of one
// another, and every engine gives the bits of its reference. (A chunk
// smaller than the lanes of the lane engines runs on their reference
// engine, with the same bits.)
//
// It stops at the first error and returns it: a bad argument or part
// (wrapping ErrInput, naming it), a solve's error (bad options or
// inputs, ctx done), or yield's.
func SolveChunks(ctx context.Context, prob *Problem, n, chunk int, part EnsemblePart, opts *Options, yield func(lo int, res *Result) error) error {
	switch {
	case prob == nil:
		return fmt.Errorf("%w: SolveChunks: nil problem", ErrInput)
	case n < 1:
		return fmt.Errorf("%w: SolveChunks: n = %d trajectories: must be ≥ 1", ErrInput, n)
	case chunk < 0:
		return fmt.Errorf("%w: SolveChunks: chunk = %d: must be ≥ 1, or 0 for the default", ErrInput, chunk)
	case part == nil || yield == nil:
		return fmt.Errorf("%w: SolveChunks: nil part or yield", ErrInput)
	}
	size := chunk
	if size == 0 {
		first, err := part(0, 1)
		if err != nil {
			return err
		}
		size = ChunkSize(prob, n, first.saveTimes(), opts)
	}
	for lo := 0; lo < n; {
		hi := min(n, lo+size)
		ens, err := getPart("SolveChunks", part, lo, hi)
		if err != nil {
			return err
		}
		res, err := Solve(ctx, prob, ens, opts)
		if err != nil {
			return fmt.Errorf("trajectories [%d, %d): %w", lo, hi, err)
		}
		if err := yield(lo, res); err != nil {
			return err
		}
		lo = hi
	}
	return nil
}

// saveTimes returns the number of save times per trajectory of e.
func (e *Ensemble) saveTimes() int {
	if e.SavePerTrajectory && e.N > 0 {
		return len(e.Save) / e.N
	}
	return len(e.Save)
}

// GradientChunks is LossGradient over n trajectories in chunks of at
// most chunk (0: ChunkSize's default, with the first part's save
// times; for the reverse replay, with room in ChunkBytes for the
// recording of 1000 accepted steps a trajectory — a recording that
// outgrows the memory available stops with an error, as Record's does):
// each chunk's inputs come from part(lo, hi); it is solved,
// differentiated, and its Result and Gradient (of hi − lo
// trajectories, trajectory lo first) go to yield before the next chunk
// is solved, so at most one chunk's recording, results and gradient are
// held at a time. It returns the loss, the sum over every chunk. Sum
// the rows of Gradient.P in yield for parameters the trajectories
// share.
//
// The route is decided once, for all n (GradientDecision), and every
// chunk is differentiated by it; each Gradient's Decision is that one,
// with the engine the chunk ran on. So every trajectory's gradient row,
// result and status is the one LossGradient on all n gives it, bit for
// bit, for any chunk size and worker count; the loss too, for a loss
// that adds its terms one trajectory after another (SumSquaresChunks,
// LeastSquaresChunks).
//
// It stops at the first error and returns it, as SolveChunks does.
func GradientChunks(ctx context.Context, prob *Problem, n, chunk int, part EnsemblePart, opts *Options, loss ChunkLoss, yield func(lo int, res *Result, g *Gradient) error) (float64, error) {
	switch {
	case prob == nil:
		return 0, fmt.Errorf("%w: GradientChunks: nil problem", ErrInput)
	case n < 1:
		return 0, fmt.Errorf("%w: GradientChunks: n = %d trajectories: must be ≥ 1", ErrInput, n)
	case chunk < 0:
		return 0, fmt.Errorf("%w: GradientChunks: chunk = %d: must be ≥ 1, or 0 for the default", ErrInput, chunk)
	case part == nil || yield == nil || loss == nil:
		return 0, fmt.Errorf("%w: GradientChunks: nil part, loss or yield", ErrInput)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	d, err := GradientDecision(prob, n, &o)
	if err != nil {
		return 0, err
	}
	o.Mode = d.Mode
	size := chunk
	if size == 0 {
		first, err := part(0, 1)
		if err != nil {
			return 0, err
		}
		size = ChunkSize(prob, n, first.saveTimes(), &o)
		if d.Mode == router.Reverse {
			size = recordChunk(prob, first, &o, size)
		}
	}
	var acc float64
	for lo := 0; lo < n; {
		hi := min(n, lo+size)
		ens, err := getPart("GradientChunks", part, lo, hi)
		if err != nil {
			return 0, err
		}
		var res *Result
		chunkLoss := func(r *Result) (float64, Cotangents, error) {
			res = r
			return loss(lo, r, acc)
		}
		l, g, _, err := LossGradient(ctx, prob, ens, &o, chunkLoss)
		if err != nil {
			return 0, fmt.Errorf("trajectories [%d, %d): %w", lo, hi, err)
		}
		acc = l
		g.Decision.Mode, g.Decision.Reason = d.Mode, d.Reason
		if err := yield(lo, res, g); err != nil {
			return 0, err
		}
		lo = hi
	}
	return acc, nil
}

// recordChunk lowers the default chunk size of a recording so that the
// recording of 1000 accepted steps a trajectory fits in ChunkBytes too
// (the steps are not known before the solve).
func recordChunk(prob *Problem, first *Ensemble, o *Options, size int) int {
	s, ok := ensembleSizes(prob, first, o, true, prob.ProgramSet())
	if !ok {
		return size
	}
	f, err := s.Footprint()
	if err != nil || f.PerStep == 0 {
		return size
	}
	return max(1, min(size, int(ChunkBytes/(1000*f.PerStep))))
}

// getPart returns part(lo, hi), refusing (for the function fn) an
// ensemble that does not hold hi − lo trajectories.
func getPart(fn string, part EnsemblePart, lo, hi int) (*Ensemble, error) {
	ens, err := part(lo, hi)
	if err != nil {
		return nil, err
	}
	if ens == nil || ens.N != hi-lo {
		got := 0
		if ens != nil {
			got = ens.N
		}
		return nil, fmt.Errorf("%w: %s: part(%d, %d) returned an Ensemble of N = %d, want %d", ErrInput, fn, lo, hi, got, hi-lo)
	}
	return ens, nil
}
