package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/internal/memory"
	"github.com/gradsolve/gradsolve/npy"
	"github.com/gradsolve/gradsolve/ode"
)

// Streaming: solve and grad run the ensemble in chunks of trajectories
// (--chunk), in order, and write each chunk's rows to the output files
// before the next chunk is solved. So the memory a run takes is set by
// the chunk, not by n; the files are those one solve of the whole
// ensemble writes, byte for byte, whatever the chunk (trajectories are
// solved independently, and every engine gives its reference's bits).

// chunkBudget is the most memory the automatic chunk's arrays take (a
// quarter of what is available, and at most this): the library's
// gradsolve.ChunkBytes.
const chunkBudget = gradsolve.ChunkBytes

// maxFailures is how many failed trajectories stats.json lists.
const maxFailures = 10

// chunkPlan is how the run cuts its ensemble.
type chunkPlan struct {
	size    int    // trajectories per chunk (the last may have fewer)
	auto    bool   // chosen by the command, not --chunk
	perTraj uint64 // bytes per trajectory the size was chosen for, beyond the recording
	perStep uint64 // a recording's bytes per accepted step and trajectory (grad's reverse mode)
	budget  uint64 // bytes the automatic size keeps to
}

// planChunks chooses the chunk: --chunk, or as many trajectories as
// keep the run's arrays within chunkBudget (and a quarter of the
// memory available). A recording's size depends on the steps, which
// are not known before the first chunk: that chunk has at most 1024
// trajectories (and room for 1000 steps each), and each later one is
// sized for 1.5 times the mean steps of the chunk before (next).
func (j *job) planChunks(sf sizeFlags) (chunkPlan, error) {
	// The bytes one more trajectory adds, past the workers' own state
	// (which grows with n up to the number of workers): the difference
	// of two large ensembles.
	const a = 1 << 16
	s1, err := j.jobSizes(sizeFlags{n: a, k: sf.k})
	if err != nil {
		return chunkPlan{}, err
	}
	s2 := s1
	s2.N = 2 * a
	f1, err1 := s1.Footprint()
	f2, err2 := s2.Footprint()
	if err := errors.Join(err1, err2); err != nil {
		return chunkPlan{}, j.flagSizeError(err, sf)
	}
	per := (f2.Bytes-f1.Bytes)/a + uint64(8*(2*j.pr.Dim+2*j.pr.NumParams+2+sf.k)+4)
	p := chunkPlan{perTraj: per, perStep: f1.PerStep, budget: chunkBudget}
	if av := memory.Available(); av.Known {
		p.budget = min(p.budget, av.Bytes/4)
	}
	if j.fl.chunk > 0 {
		p.size = min(j.fl.chunk, sf.n)
		return p, nil
	}
	p.auto = true
	p.size = p.sizeFor(0)
	if p.perStep > 0 {
		// A recording's size is known once its steps are: a first chunk
		// of at most 1024 measures them (next).
		p.size = min(p.sizeFor(1000), 1024)
	}
	return p, nil
}

// sizeFor is the automatic chunk for trajectories of the given number
// of accepted steps.
func (p chunkPlan) sizeFor(steps uint64) int {
	per := p.perTraj + steps*p.perStep
	return int(max(1, min(p.budget/max(per, 1), 1<<30)))
}

// next sizes the chunk after one whose trajectories took meanSteps
// accepted steps on average (grad's recording), for an automatic plan.
func (p *chunkPlan) next(meanSteps float64) {
	if !p.auto || p.perStep == 0 {
		return
	}
	p.size = p.sizeFor(uint64(1.5*meanSteps) + 1)
}

// summary is what a run reports about its trajectories, gathered chunk
// by chunk as their rows are written out.
type summary struct {
	first    *gradsolve.Result // the first chunk's method, engine, options, workers (no arrays)
	n        int
	engines  []string // the engines that ran, in order of first use
	elapsed  time.Duration
	total    gradsolve.Stats
	counts   map[gradsolve.Status]int
	failures []error // the first maxFailures, indexed in the whole ensemble
	chunks   int
	maxChunk int
}

// add counts the chunk res of trajectories off, off+1, … of the whole
// ensemble.
func (s *summary) add(res *gradsolve.Result, off int) {
	if s.first == nil {
		// What describes the run, not the chunk's arrays: holding those
		// for the whole run would double its memory.
		s.first = &gradsolve.Result{Problem: res.Problem, Method: res.Method, Reason: res.Reason, Engine: res.Engine,
			EngineReason: res.EngineReason, N: res.N, Dim: res.Dim, K: res.K, NS: res.NS, Options: res.Options,
			Workers: res.Workers, Elapsed: res.Elapsed}
		s.counts = map[gradsolve.Status]int{}
	}
	if !slices.Contains(s.engines, res.Engine) {
		s.engines = append(s.engines, res.Engine)
	}
	s.n += res.N
	s.chunks++
	s.maxChunk = max(s.maxChunk, res.N)
	s.elapsed += res.Elapsed
	t := res.Total()
	s.total.Accepted += t.Accepted
	s.total.Rejected += t.Rejected
	s.total.FEvals += t.FEvals
	s.total.JacEvals += t.JacEvals
	s.total.LUs += t.LUs
	for i, st := range res.Status {
		s.counts[st]++
		if st != gradsolve.Success && len(s.failures) < maxFailures {
			e := res.Err(i)
			var te *ode.TrajectoryError
			if errors.As(e, &te) {
				c := *te
				c.Index += off
				e = &c
			}
			s.failures = append(s.failures, e)
		}
	}
}

// failed is the number of trajectories that did not succeed.
func (s *summary) failed() int { return s.n - s.counts[gradsolve.Success] }

// errs words the failures as Result.Errs does.
func (s *summary) errs() string {
	f := s.failed()
	if f == 0 {
		return ""
	}
	lines := []string{fmt.Sprintf("%d of %d trajectories failed", f, s.n)}
	const shown = 5
	for _, e := range s.failures[:min(len(s.failures), shown)] {
		lines = append(lines, e.Error())
	}
	if f > shown {
		lines = append(lines, fmt.Sprintf("… and %d more", f-shown))
	}
	return strings.Join(lines, "\n")
}

// streamFile is an output file written piece by piece into the stage.
type streamFile struct {
	name string
	f    *os.File
	bw   *bufio.Writer
}

// create stages name as a file written piece by piece: the writer, and
// finish, which flushes, syncs and closes it. The file is in the stage,
// so a run that fails leaves the directory as it was (commit moves the
// set in).
func (o *outSet) create(ctx context.Context, name string) (io.Writer, func() error, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	f, err := os.Create(o.path(name))
	if err != nil {
		return nil, nil, o.writeErr(ctx, name, err)
	}
	sf := &streamFile{name: name, f: f, bw: bufio.NewWriterSize(f, 1<<20)}
	finish := func() error {
		err := sf.bw.Flush()
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return o.writeErr(ctx, name, err)
		}
		return nil
	}
	return ctxWriter{ctx, sf.bw}, finish, nil
}

// rowWriters are the .npy files of the per-trajectory arrays, written
// chunk by chunk.
type rowWriters struct {
	out    *outSet
	ctx    context.Context
	f64    map[string]*npy.Float64Writer
	i32    *npy.Int32Writer
	finish []func() error
	order  []string
}

func newRowWriters(ctx context.Context, out *outSet) *rowWriters {
	return &rowWriters{out: out, ctx: ctx, f64: map[string]*npy.Float64Writer{}}
}

// float64s opens name as a float64 array of shape.
func (rw *rowWriters) float64s(name string, shape []int) error {
	w, finish, err := rw.out.create(rw.ctx, name)
	if err != nil {
		return err
	}
	fw, err := npy.NewFloat64Writer(w, shape)
	if err != nil {
		finish()
		return rw.out.writeErr(rw.ctx, name, err)
	}
	rw.f64[name] = fw
	rw.finish = append(rw.finish, func() error {
		if err := fw.Finish(); err != nil {
			return rw.out.writeErr(rw.ctx, name, err)
		}
		return finish()
	})
	rw.order = append(rw.order, name)
	return nil
}

// status opens status.npy, n int32 codes.
func (rw *rowWriters) status(n int) error {
	w, finish, err := rw.out.create(rw.ctx, "status.npy")
	if err != nil {
		return err
	}
	iw, err := npy.NewInt32Writer(w, []int{n})
	if err != nil {
		finish()
		return rw.out.writeErr(rw.ctx, "status.npy", err)
	}
	rw.i32 = iw
	rw.finish = append(rw.finish, func() error {
		if err := iw.Finish(); err != nil {
			return rw.out.writeErr(rw.ctx, "status.npy", err)
		}
		return finish()
	})
	return nil
}

// put appends data to the array name.
func (rw *rowWriters) put(name string, data []float64) error {
	if err := rw.f64[name].Append(data); err != nil {
		return rw.out.writeErr(rw.ctx, name, err)
	}
	return nil
}

// putStatus appends the codes of statuses.
func (rw *rowWriters) putStatus(statuses []gradsolve.Status, buf []int32) ([]int32, error) {
	buf = buf[:0]
	for _, s := range statuses {
		buf = append(buf, statusCode[s])
	}
	if err := rw.i32.Append(buf); err != nil {
		return buf, rw.out.writeErr(rw.ctx, "status.npy", err)
	}
	return buf, nil
}

// close finishes every file.
func (rw *rowWriters) close() error {
	var first error
	for _, f := range rw.finish {
		if err := f(); err != nil && first == nil {
			first = err
		}
	}
	rw.finish = nil
	return first
}

// chunkWork solves one chunk: the trajectories lo, lo+1, … of the run
// whose inputs are e. It returns the chunk's result, and its rows of
// any further outputs go to rw (nil without --out).
type chunkWork func(ctx context.Context, lo int, e *gradsolve.Ensemble, rw *rowWriters) (*gradsolve.Result, error)

// refSample is the trajectories --ref checks, evenly spaced over the
// run, with their final states and statuses as the run solved them.
type refSample struct {
	idx    []int
	y      []float64
	status []gradsolve.Status
}

func newRefSample(n, k int) *refSample {
	s := &refSample{idx: make([]int, k)}
	for j := range s.idx {
		s.idx[j] = int(int64(j) * int64(n) / int64(k))
	}
	return s
}

// take keeps the sampled rows of the chunk res of trajectories lo, ….
func (s *refSample) take(lo int, res *gradsolve.Result) {
	for _, i := range s.idx[len(s.status):] {
		if i >= lo+res.N {
			return
		}
		s.y = append(s.y, res.Row(i-lo)...)
		s.status = append(s.status, res.Status[i-lo])
	}
}

// outFile is a float64 output of a run: its name and shape.
type outFile struct {
	name  string
	shape []int
}

// stream runs the ensemble chunk by chunk with work, writing (with
// --out) y_final.npy, y_saved.npy with save times, status.npy and
// params.npy row by row; ns > 0 adds sens.npy and sens_saved.npy, and
// more the files work fills (through rw.put). It returns the summary of the trajectories and, with --ref, the
// sample's rows.
func (j *job) stream(ctx context.Context, plan *chunkPlan, opts *gradsolve.Options, bar *progressBar, ns int, ref int, more []outFile, work chunkWork) (*summary, *refSample, error) {
	in, pr := j.in, j.pr
	n, dim, m, k := in.n, pr.Dim, pr.NumParams, in.k
	var rw *rowWriters
	if j.out != nil {
		rw = newRowWriters(ctx, j.out)
		defer rw.close() // after an error (the stage is then removed)
		files := []struct {
			name  string
			shape []int
			on    bool
		}{
			{"y_final.npy", []int{n, dim}, true},
			{"y_saved.npy", []int{n, k, dim}, k > 0},
			{"params.npy", []int{n, m}, true},
			{"sens.npy", []int{n, dim, ns}, ns > 0},
			{"sens_saved.npy", []int{n, k, dim, ns}, ns > 0 && k > 0},
		}
		for _, f := range files {
			if f.on {
				if err := rw.float64s(f.name, f.shape); err != nil {
					return nil, nil, err
				}
			}
		}
		for _, f := range more {
			if err := rw.float64s(f.name, f.shape); err != nil {
				return nil, nil, err
			}
		}
		if err := rw.status(n); err != nil {
			return nil, nil, err
		}
	}
	sample := newRefSample(n, ref)
	sum := &summary{}
	done := 0
	if bar != nil {
		opts.Progress = func(d, _ int) { bar.update(done+d, n) }
	}
	var codes []int32
	var paramBuf []float64 // shared parameters repeated, a chunk's rows
	for lo := 0; lo < n; {
		hi := min(n, lo+plan.size)
		e, err := in.part(lo, hi)
		if err != nil {
			return nil, nil, err
		}
		res, err := work(ctx, lo, e, rw)
		if err != nil {
			err = j.userError(err)
			if plan.size < n {
				err = chunkError(err, in.off+lo, in.off+hi)
			}
			return nil, nil, err
		}
		sum.add(res, in.off+lo)
		sample.take(lo, res)
		if rw != nil {
			if err := rw.put("y_final.npy", res.Y); err != nil {
				return nil, nil, err
			}
			if k > 0 {
				if err := rw.put("y_saved.npy", res.Saved); err != nil {
					return nil, nil, err
				}
			}
			if ns > 0 {
				if err := rw.put("sens.npy", res.S); err != nil {
					return nil, nil, err
				}
				if k > 0 {
					if err := rw.put("sens_saved.npy", res.SavedS); err != nil {
						return nil, nil, err
					}
				}
			}
			if codes, err = rw.putStatus(res.Status, codes); err != nil {
				return nil, nil, err
			}
			params := paramRows(pr, e, paramBuf)
			if e.P == nil || len(e.P) != e.N*m {
				paramBuf = params // the buffer, not the chunk's own rows
			}
			if err := rw.put("params.npy", params); err != nil {
				return nil, nil, err
			}
		}
		if plan.auto && res.N > 0 {
			plan.next(float64(res.Total().Accepted) / float64(res.N))
		}
		if res.N >= 1<<16 {
			// The chunk's arrays are garbage now: collect them before the
			// next chunk's are made, so the heap holds one chunk, not two
			// (the collector's pace would let it grow to twice the live
			// heap first).
			res = nil
			runtime.GC()
		}
		done = hi
		lo = hi
	}
	if rw != nil {
		if err := rw.close(); err != nil {
			return nil, nil, err
		}
	}
	return sum, sample, nil
}

// chunkError says which chunk an error (in the command's terms) came
// from, in the whole ensemble's rows; a cancellation or a size error
// stays as it is.
func chunkError(err error, lo, hi int) error {
	var me *memory.Error
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &me) {
		return err
	}
	return &translated{msg: fmt.Sprintf("trajectories %d to %d (a --chunk of the ensemble): %v", lo, hi-1, err), err: err}
}
