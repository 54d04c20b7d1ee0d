package ensemble

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Every index runs exactly once, on a worker index in range, for any
// worker count and chunk size.
func TestEachIndexOnce(t *testing.T) {
	for _, n := range []int{1, 2, 7, 100, 1001} {
		for _, w := range []int{0, 1, 2, 3, 16} {
			for _, chunk := range []int{0, 1, 5, 300} {
				cfg := Config{Workers: w, Chunk: chunk}
				nw := Workers(n, cfg)
				counts := make([]atomic.Int32, n)
				err := Run(context.Background(), n, cfg, func(wk, i int, _ *atomic.Bool) {
					if wk < 0 || wk >= nw {
						t.Errorf("worker index %d outside [0, %d)", wk, nw)
					}
					counts[i].Add(1)
				})
				if err != nil {
					t.Fatal(err)
				}
				for i := range counts {
					if c := counts[i].Load(); c != 1 {
						t.Fatalf("n=%d workers=%d chunk=%d: index %d ran %d times", n, w, chunk, i, c)
					}
				}
			}
		}
	}
}

func TestWorkersCap(t *testing.T) {
	if w := Workers(3, Config{Workers: 8}); w != 3 {
		t.Errorf("Workers(3, 8) = %d, want 3", w)
	}
	if w := Workers(100, Config{Workers: 4}); w != 4 {
		t.Errorf("Workers(100, 4) = %d, want 4", w)
	}
	if w := Workers(0, Config{}); w != 1 {
		t.Errorf("Workers(0) = %d, want 1", w)
	}
}

// Uneven jobs balance: with one very slow index, the other worker takes
// all the rest.
func TestDynamicBalance(t *testing.T) {
	var mu sync.Mutex
	per := map[int]int{}
	err := Run(context.Background(), 40, Config{Workers: 2, Chunk: 1}, func(w, i int, _ *atomic.Bool) {
		if i == 0 {
			time.Sleep(50 * time.Millisecond)
		}
		mu.Lock()
		per[w]++
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	if per[0] == 0 || per[1] == 0 || max(per[0], per[1]) < 30 {
		t.Errorf("jobs per worker %v: the worker without the slow job should take most", per)
	}
}

func TestBadArguments(t *testing.T) {
	job := func(w, i int, _ *atomic.Bool) {}
	for name, c := range map[string]struct {
		n   int
		cfg Config
	}{
		"negative n":       {-1, Config{}},
		"negative workers": {10, Config{Workers: -1}},
		"negative chunk":   {10, Config{Chunk: -3}},
	} {
		if err := Run(context.Background(), c.n, c.cfg, job); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if err := Run(context.Background(), 0, Config{}, job); err != nil {
		t.Errorf("n = 0: %v", err)
	}
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var ran atomic.Int32
	var sawStop atomic.Bool
	err := Run(ctx, 10000, Config{Workers: 2, Chunk: 1}, func(w, i int, stop *atomic.Bool) {
		if ran.Add(1) == 10 {
			cancel()
			for !stop.Load() { // the running job sees the flag
				time.Sleep(time.Millisecond)
			}
			sawStop.Store(true)
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if !sawStop.Load() || ran.Load() >= 10000 {
		t.Errorf("ran %d jobs, stop seen %v", ran.Load(), sawStop.Load())
	}
}

// A cancellation that arrives after every job finished is not an error.
func TestCancelAfterDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	err := Run(ctx, 5, Config{Workers: 1}, func(w, i int, _ *atomic.Bool) {
		if i == 4 {
			cancel()
		}
	})
	if err != nil {
		t.Errorf("err = %v, want nil: all jobs ran", err)
	}
}

func TestPanic(t *testing.T) {
	err := Run(context.Background(), 100, Config{Workers: 3}, func(w, i int, _ *atomic.Bool) {
		if i == 42 {
			panic("boom")
		}
	})
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Index != 42 || pe.Value != "boom" || len(pe.Stack) == 0 {
		t.Fatalf("err = %v, want a PanicError for index 42", err)
	}
}

func TestProgress(t *testing.T) {
	var calls, last atomic.Int64
	n := 300
	err := Run(context.Background(), n, Config{Workers: 2, ProgressInterval: time.Millisecond,
		Progress: func(done, total int) {
			if total != n || int64(done) < last.Load() {
				t.Errorf("progress (%d, %d) after %d", done, total, last.Load())
			}
			last.Store(int64(done))
			calls.Add(1)
		}}, func(w, i int, _ *atomic.Bool) { time.Sleep(20 * time.Microsecond) })
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() < 2 || last.Load() != int64(n) {
		t.Errorf("%d progress calls, last done = %d; want several and a final %d", calls.Load(), last.Load(), n)
	}
}

// A RunQueue worker may hold several indices at once (the lanes of a
// SIMD engine): every index is handed out exactly once, Done counts
// them for the verdict and progress, and a cancellation stops the
// handing out while the held indices finish.
func TestRunQueueHoldsSeveral(t *testing.T) {
	const n, held = 103, 4
	for _, w := range []int{1, 2, 3} {
		for _, chunk := range []int{0, 1, 7} {
			counts := make([]atomic.Int32, n)
			var last atomic.Int64
			err := RunQueue(context.Background(), n, Config{Workers: w, Chunk: chunk, Progress: func(done, total int) { last.Store(int64(done)) }},
				func(_ int, q *Queue, _ *atomic.Bool) {
					var in []int
					for {
						for len(in) < held {
							i, ok := q.Next()
							if !ok {
								break
							}
							in = append(in, i)
						}
						if len(in) == 0 {
							return
						}
						counts[in[0]].Add(1) // finish the oldest
						in = in[1:]
						q.Done()
					}
				})
			if err != nil {
				t.Fatal(err)
			}
			for i := range counts {
				if c := counts[i].Load(); c != 1 {
					t.Fatalf("workers %d chunk %d: index %d finished %d times", w, chunk, i, c)
				}
			}
			if last.Load() != n {
				t.Errorf("workers %d chunk %d: progress ended at %d of %d", w, chunk, last.Load(), n)
			}
		}
	}
	// Cancelled while a worker holds indices: Next says no more, the held
	// ones finish, and RunQueue returns the context's error.
	ctx, cancel := context.WithCancel(context.Background())
	var finished atomic.Int32
	err := RunQueue(ctx, n, Config{Workers: 1, Chunk: 1}, func(_ int, q *Queue, _ *atomic.Bool) {
		var in []int
		for range held {
			i, _ := q.Next()
			in = append(in, i)
		}
		cancel()
		if _, ok := q.Next(); ok {
			t.Error("Next handed out an index after the cancellation")
		}
		for range in {
			finished.Add(1)
			q.Done()
		}
	})
	if !errors.Is(err, context.Canceled) || finished.Load() != held {
		t.Errorf("cancelled: %v, %d held indices finished", err, finished.Load())
	}
	// A panic names the index the worker took last.
	err = RunQueue(context.Background(), n, Config{Workers: 1, Chunk: 5}, func(_ int, q *Queue, _ *atomic.Bool) {
		q.Next()
		q.Next()
		panic("boom")
	})
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Index != 1 {
		t.Errorf("panic: %v", err)
	}
}
