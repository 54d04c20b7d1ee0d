package ensemble

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// Config controls Run. The zero value uses every core, an automatic
// chunk size and no progress reports.
type Config struct {
	// Workers is the number of goroutines; 0 means runtime.GOMAXPROCS(0).
	// It is capped at the number of jobs. Negative is an error.
	Workers int
	// Chunk is how many consecutive indices a worker takes at a time; 0
	// picks n/(64·Workers) clamped to [1, 256], small enough to balance
	// uneven jobs, large enough that the counter is not contended.
	Chunk int
	// Progress, if not nil, is called with the number of finished jobs
	// and the total, from a single goroutine (never concurrently), at
	// most every ProgressInterval and once more when Run ends.
	Progress func(done, total int)
	// ProgressInterval is the least time between Progress calls; 0
	// means 200 ms.
	ProgressInterval time.Duration
}

func (c Config) workers(n int) int {
	w := c.Workers
	if w == 0 {
		w = runtime.GOMAXPROCS(0)
	}
	return max(1, min(w, n))
}

// Workers returns how many workers Run will start for n jobs, so that a
// caller can size per-worker state before calling Run.
func Workers(n int, c Config) int { return c.workers(n) }

// PanicError reports a panic raised by a job, with the index of the job
// and the stack of the panicking goroutine.
type PanicError struct {
	Index int
	Value any
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("ensemble: job %d panicked: %v", e.Index, e.Value)
}

// Job processes index i on worker w (0 ≤ w < Workers(n, cfg)). A job
// that runs long should poll stop and return early when it is set.
type Job func(w, i int, stop *atomic.Bool)

// Run calls job once for every index in [0, n) and returns when all
// have finished. If ctx is cancelled, workers stop taking new indices,
// stop is set for running jobs, and Run returns ctx's error after the
// running jobs return. If a job panics, Run stops the others the same
// way and returns a *PanicError. The remaining indices are not run; the
// caller tells them apart by its own per-index state.
func Run(ctx context.Context, n int, cfg Config, job Job) error {
	return RunQueue(ctx, n, cfg, func(w int, q *Queue, stop *atomic.Bool) {
		for i, ok := q.Next(); ok; i, ok = q.Next() {
			job(w, i, stop)
			q.Done()
		}
	})
}

// Queue hands one worker of RunQueue its indices, in chunks it takes
// from the shared counter: the same dynamic scheduling as Run's. A
// worker may hold several indices at once (the lanes of a SIMD engine):
// it calls Done once for each index Next gave it, when that index has
// finished. A Queue belongs to one worker.
type Queue struct {
	ctx        context.Context
	n, chunk   int
	next, done *atomic.Int64
	stop       *atomic.Bool
	lo, hi     int // the worker's current chunk: lo is its next index
	last       int // the index Next gave last, for PanicError
}

// Next returns the worker's next index, or ok false when there is none
// left or the run is stopping (a cancelled context, a panic elsewhere).
func (q *Queue) Next() (i int, ok bool) {
	if q.stop.Load() {
		return 0, false
	}
	if q.lo >= q.hi {
		// Check the context itself at each chunk, not only the flag
		// the watcher sets: the watcher goroutine may not be scheduled
		// before busy workers finish every remaining job.
		if q.ctx.Err() != nil {
			q.stop.Store(true)
			return 0, false
		}
		lo := int(q.next.Add(int64(q.chunk))) - q.chunk
		if lo >= q.n {
			return 0, false
		}
		q.lo, q.hi = lo, min(lo+q.chunk, q.n)
	}
	i = q.lo
	q.lo++
	q.last = i
	return i, true
}

// Done reports that one index the worker took has finished, for the
// count of finished jobs (Progress, and Run's verdict that everything
// ran).
func (q *Queue) Done() { q.done.Add(1) }

// WorkerJob is one worker's share of RunQueue: it takes indices from q
// until q says there are none left, and calls q.Done for each once it
// has finished. It should poll stop in long jobs.
type WorkerJob func(w int, q *Queue, stop *atomic.Bool)

// RunQueue is Run for workers that take their indices themselves (see
// Queue): job is called once per worker. Cancellation, panics and
// progress are as for Run; a *PanicError names the index the panicking
// worker took last.
func RunQueue(ctx context.Context, n int, cfg Config, job WorkerJob) error {
	if n < 0 {
		return fmt.Errorf("ensemble: n = %d: must be ≥ 0", n)
	}
	if cfg.Workers < 0 {
		return fmt.Errorf("ensemble: Workers = %d: must be ≥ 0", cfg.Workers)
	}
	if cfg.Chunk < 0 {
		return fmt.Errorf("ensemble: Chunk = %d: must be ≥ 0", cfg.Chunk)
	}
	if n == 0 {
		return nil
	}
	nw := cfg.workers(n)
	chunk := cfg.Chunk
	if chunk == 0 {
		chunk = max(1, min(256, n/(64*nw)))
	}

	var (
		next, done atomic.Int64
		stop       atomic.Bool
		panicOnce  sync.Once
		panicErr   *PanicError
		wg         sync.WaitGroup
	)
	finished := make(chan struct{})
	watchDone := make(chan struct{})
	go func() { // turn cancellation into the stop flag
		defer close(watchDone)
		select {
		case <-ctx.Done():
			stop.Store(true)
		case <-finished:
		}
	}()

	progDone := make(chan struct{})
	if cfg.Progress != nil {
		interval := cfg.ProgressInterval
		if interval <= 0 {
			interval = 200 * time.Millisecond
		}
		go func() {
			defer close(progDone)
			tick := time.NewTicker(interval)
			defer tick.Stop()
			for {
				select {
				case <-tick.C:
					cfg.Progress(int(done.Load()), n)
				case <-finished:
					cfg.Progress(int(done.Load()), n)
					return
				}
			}
		}()
	} else {
		close(progDone)
	}

	worker := func(w int) {
		defer wg.Done()
		q := &Queue{ctx: ctx, n: n, chunk: chunk, next: &next, done: &done, stop: &stop, last: -1}
		defer func() {
			if r := recover(); r != nil {
				panicOnce.Do(func() { panicErr = &PanicError{Index: q.last, Value: r, Stack: debug.Stack()} })
				stop.Store(true)
			}
		}()
		job(w, q, &stop)
	}
	wg.Add(nw)
	for w := range nw {
		go worker(w)
	}
	wg.Wait()
	close(finished)
	<-watchDone
	<-progDone
	if panicErr != nil {
		return panicErr
	}
	if int(done.Load()) == n {
		return nil // everything ran, even if ctx ended just after
	}
	return ctx.Err()
}
