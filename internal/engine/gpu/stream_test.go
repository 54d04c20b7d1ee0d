package gpu

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gradsolve/gradsolve/internal/cuda"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/sym/emitcuda"
)

// The tests of this file run record and adjoint launches through the
// fake driver with its call log (FAKE_CUDA_CALLS): the order of the
// copies, launches and stream waits on the two streams, the device
// memory allocated (against the formula docs/gpu.md states), the
// failures of a copy or launch in the middle of a run, and a stop in
// the middle. The plumbing only: the fake solves nothing.

// recFamily is a record kernel and its adjoint kernel on the fake
// driver's device.
type recFamily struct {
	name     string
	m        *cudaModule
	rec, adj Kernel
}

// recFamilies loads the Lorenz record and adjoint kernels of Tsit5
// (explicit) and Rodas5P (Rosenbrock) on a fresh fake device.
func recFamilies(t *testing.T) []recFamily {
	t.Helper()
	dev := fakeDevice(t)
	load := func(o emitcuda.Options) (*cudaModule, *emitcuda.Source) { return fakeLoad(t, dev, o) }
	em, esrc := load(emitcuda.Options{Methods: []*method.Tableau{method.Tsit5}, Record: true, Adjoint: true})
	rm, rsrc := load(emitcuda.Options{Methods: []*method.Tableau{}, Rosenbrock: []*method.Rosenbrock{method.Rodas5P}, RosRecord: true, RosAdjoint: true})
	erec, err := kernelFor(esrc, method.Tsit5, emitcuda.Record, false)
	if err != nil {
		t.Fatal(err)
	}
	eadj, err := kernelFor(esrc, method.Tsit5, emitcuda.Adjoint, false)
	if err != nil {
		t.Fatal(err)
	}
	rrec, err := rosKernelOf(rsrc, method.Rodas5P, false)
	if err != nil {
		t.Fatal(err)
	}
	radj, err := rosKernelOf(rsrc, method.Rodas5P, true)
	if err != nil {
		t.Fatal(err)
	}
	return []recFamily{
		{"explicit", em, erkKernel(erec), erkKernel(eadj)},
		{"Rosenbrock", rm, rosKernel(rrec), rosKernel(radj)},
	}
}

// drainIdle frees the module's idle lanes, so that a run allocates its
// own.
func drainIdle(m *cudaModule) {
	for _, l := range m.idle {
		m.free(l)
	}
	m.idle = nil
}

// callLog starts a fresh log of the fake driver's calls.
func callLog(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "calls")
	t.Setenv("FAKE_CUDA_CALLS", p)
	return p
}

// readCalls returns the logged calls, one line each split into fields.
func readCalls(t *testing.T, path string) [][]string {
	t.Helper()
	text, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var calls [][]string
	for _, line := range strings.Split(strings.TrimSpace(string(text)), "\n") {
		if line != "" {
			calls = append(calls, strings.Fields(line))
		}
	}
	return calls
}

// memory returns the device and page-locked bytes still allocated at
// the end of the log, the peak of device bytes, and the streams
// created and not destroyed.
func memory(t *testing.T, calls [][]string) (dev, host, peak int64, streams int) {
	t.Helper()
	size := map[string]int64{}
	for _, c := range calls {
		switch c[0] {
		case "alloc", "hostalloc":
			n, err := strconv.ParseInt(c[2], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			size[c[0]+c[1]] = n
			if c[0] == "alloc" {
				dev += n
				peak = max(peak, dev)
			} else {
				host += n
			}
		case "free":
			dev -= size["alloc"+c[1]]
			delete(size, "alloc"+c[1])
		case "hostfree":
			host -= size["hostalloc"+c[1]]
			delete(size, "hostalloc"+c[1])
		case "stream":
			streams++
		case "streamdestroy":
			streams--
		}
	}
	return dev, host, peak, streams
}

// recordWordsStated and adjointWordsStated are the per-trajectory
// device memory of a record and an adjoint launch as docs/gpu.md
// states it, in 8-byte words, written out here apart from the
// engine's recordWords and adjointWords: for a state of D values, P
// parameters, K save times and room for S steps,
//
//	record:  inputs t0, t1, y0, p, save: 2 + D + P + K;
//	         outputs y, t, h, saved, counters (4; 6 for Rosenbrock): D + 2 + K·D + c;
//	         the mesh: (S+1)·D states, S+1 times, S step sizes, 1 step count;
//	adjoint: p, save, the mesh ((S+1)·(D+1) + S + 1), the cotangents of
//	         y(t1) (D) and of the saved states (K·D, where given), the
//	         status (explicit: 1); ∂L/∂y0 (D), ∂L/∂p (P), and the save
//	         times' owners (Rosenbrock: K).
func recordWordsStated(rosenbrock bool, D, P, K, S int) int {
	c := 4
	if rosenbrock {
		c = 6
	}
	return (2 + D + P + K) + (D + 2 + K*D + c) + (S+1)*D + (S + 1) + S + 1
}

func adjointWordsStated(rosenbrock bool, D, P, K, S int, cotSaved bool) int {
	w := P + K + (S+1)*D + (S + 1) + S + 1 + D + D + P
	if cotSaved {
		w += K * D
	}
	if rosenbrock {
		w += K
	} else {
		w++
	}
	return w
}

// recBatch is a batch of n trajectories of dim states, np parameters
// and k save times with distinct inputs, its meshes' room cap and the
// adjoint batch on them.
func recBatch(n, dim, np, k, cap int) (*Batch, *Meshes) {
	b := NewBatch(n, dim, np, k)
	for i := range n {
		b.T0[i], b.T1[i] = float64(i), float64(1000*i)
		for d := range dim {
			b.Y0[dim*i+d] = float64(i + d)
		}
		for j := range np {
			b.P[np*i+j] = float64(i) / 4
		}
		for j := range k {
			b.Save[k*i+j] = 0.25 * float64(j+1)
		}
	}
	return b, NewMeshes(n, cap, dim)
}

func recAdj(b *Batch, ms *Meshes, cotSaved bool) *AdjBatch {
	n := b.N
	a := &AdjBatch{N: n, Dim: b.Dim, NP: b.NP, K: b.K, P: b.P, Save: b.Save, Mesh: ms, CotY: make([]float64, n*b.Dim),
		GY0: make([]float64, n*b.Dim), GP: make([]float64, n*b.NP)}
	if cotSaved {
		a.CotSaved = make([]float64, n*b.K*b.Dim)
	}
	for i := range a.CotY {
		a.CotY[i] = float64(i)
	}
	return a
}

func tolSettings(nd int) *Settings {
	s := &Settings{MaxSteps: 77, HMax: 1, RTol: make([]float64, nd), ATol: make([]float64, nd)}
	for i := range nd {
		s.RTol[i], s.ATol[i] = 1e-6, 1e-6
	}
	return s
}

// TestRecordStreams: a record launch and an adjoint launch of 3 chunks
// (20 trajectories, chunks of 7) issue, for each family, the copy of a
// chunk's inputs, its kernel and the copy of its results on one of the
// engine's two streams in turn (never the default stream), the third
// chunk on the first stream only after waiting for the first chunk,
// the last two waited for in order; every copy is of the chunk's bytes
// by the stated formula.
func TestRecordStreams(t *testing.T) {
	const n, chunk, dim, np, k, capa = 20, 7, 3, 3, 2, 5
	for _, f := range recFamilies(t) {
		ros := f.rec.Family == ROS
		for _, c := range []struct {
			what    string
			kernel  string
			in, out func(m int) int // bytes of a chunk of m trajectories
			run     func() (int, error)
		}{
			{"record", f.rec.Name,
				func(m int) int { return 8 * m * (2 + dim + np + k) },
				func(m int) int { return 8 * m * (recordWordsStated(ros, dim, np, k, capa) - (2 + dim + np + k)) },
				func() (int, error) {
					b, ms := recBatch(n, dim, np, k, capa)
					var stop atomic.Bool
					return f.m.Record(f.rec, tolSettings(dim), b, ms, chunk, &stop)
				}},
			{"adjoint", f.adj.Name,
				func(m int) int {
					out := dim + np
					if ros {
						out += k // the owners stay on the device
					}
					return 8 * m * (adjointWordsStated(ros, dim, np, k, capa, true) - out)
				},
				func(m int) int { return 8 * m * (dim + np) },
				func() (int, error) {
					b, ms := recBatch(n, dim, np, k, capa)
					var stop atomic.Bool
					return f.m.Adjoint(f.adj, tolSettings(dim), recAdj(b, ms, true), chunk, &stop)
				}},
		} {
			t.Run(f.name+" "+c.what, func(t *testing.T) {
				drainIdle(f.m)
				log := callLog(t)
				if done, err := c.run(); done != n || err != nil {
					t.Fatalf("%d, %v; want %d, nil", done, err, n)
				}
				var got []string
				streams := map[string]string{} // the fake's stream: A or B
				name := func(s string) string {
					if streams[s] == "" {
						streams[s] = string(rune('A' + len(streams)))
					}
					return streams[s]
				}
				for _, cl := range readCalls(t, log) {
					switch cl[0] {
					case "htodasync", "dtohasync":
						got = append(got, fmt.Sprintf("%s %s %s", cl[0], name(cl[1]), cl[2]))
					case "launch":
						got = append(got, fmt.Sprintf("launch %s %s %s", cl[1], name(cl[2]), cl[3]))
					case "streamsync":
						got = append(got, "streamsync "+name(cl[1]))
					}
				}
				queue := func(s string, m int) []string {
					return []string{fmt.Sprintf("htodasync %s %d", s, c.in(m)), fmt.Sprintf("launch %s %s %d", c.kernel, s, m),
						fmt.Sprintf("dtohasync %s %d", s, c.out(m))}
				}
				var want []string
				want = append(want, queue("A", 7)...)
				want = append(want, queue("B", 7)...)
				want = append(want, "streamsync A") // chunk 0 done before chunk 2 reuses its lane
				want = append(want, queue("A", 6)...)
				want = append(want, "streamsync B", "streamsync A", // the chunks in flight, in order
					"streamsync A", "streamsync B") // the lanes released
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("stream calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				if _, ok := streams["0"]; ok || len(streams) != 2 {
					t.Errorf("streams %v: want two of the engine's own", streams)
				}
			})
		}
	}
}

// TestMeasuredMemory measures the device memory a record launch and an
// adjoint launch allocate (the fake driver's cuMemAlloc calls: the
// peak of the bytes allocated and not yet freed), per trajectory, and
// checks it against the formula docs/gpu.md states (recordWordsStated,
// adjointWordsStated, 8 bytes a word) plus the launch's fixed
// tolerances (2·NormDim values, record only): one launch of the whole
// batch (one lane) and chunks of 7 (two lanes of 7). The shapes are
// Lorenz's, the halo's and Robertson's with meshes of the lengths the
// docs report. After the run the memory still held is the two lanes
// kept for the next run, and as much page-locked memory.
func TestMeasuredMemory(t *testing.T) {
	fams := recFamilies(t)
	for _, c := range []struct {
		name       string
		fam        int // 0 explicit, 1 Rosenbrock
		dim, np, k int
		steps      int // the adjoint's mesh
		room       int // the record launch's room
	}{
		// The meshes' lengths are the longest of 64 trajectories of
		// the cases docs/gpu.md reports (cpu-erk's and cpu-ros's
		// accepted steps); a record launch's room is 128 doubled
		// until the longest fits (FirstMeshCap, Solver.record).
		{"lorenz (Tsit5, 1e-6, t1 = 1)", 0, 3, 3, 0, 61, 128},
		{"lorenz with save times", 0, 3, 3, 2, 61, 128},
		{"halo (Tsit5, 1e-8, t1 = 200)", 0, 6, 3, 0, 3266, 4096},
		{"halo (DP8, 1e-8, t1 = 20)", 0, 6, 3, 0, 100, 128},
		{"halo (DP8) with save times", 0, 6, 3, 5, 100, 128},
		{"robertson (Rodas5P, 1e-6)", 1, 3, 3, 0, 157, 256},
		{"robertson with save times", 1, 3, 3, 4, 157, 256},
	} {
		f := fams[c.fam]
		ros := c.fam == 1
		for _, chunk := range []int{7, 20} {
			const n = 20
			lanes := 2
			if chunk == n {
				lanes = 1
			}
			t.Run(fmt.Sprintf("%s chunk %d", c.name, chunk), func(t *testing.T) {
				// Record: the lanes hold chunk trajectories each;
				// the tolerances are 2·dim values.
				drainIdle(f.m)
				log := callLog(t)
				b, ms := recBatch(n, c.dim, c.np, c.k, c.room)
				var stop atomic.Bool
				if done, err := f.m.Record(f.rec, tolSettings(c.dim), b, ms, chunk, &stop); done != n || err != nil {
					t.Fatalf("record: %d, %v", done, err)
				}
				dev, host, peak, _ := memory(t, readCalls(t, log))
				tol := int64(8 * 2 * c.dim)
				per := float64(peak-tol) / float64(lanes*chunk)
				if want := 8 * recordWordsStated(ros, c.dim, c.np, c.k, c.room); per != float64(want) {
					t.Errorf("record: %v bytes per trajectory measured (peak %d, tolerances %d, %d lanes of %d); stated %d",
						per, peak, tol, lanes, chunk, want)
				}
				if dev != peak-tol || host != dev {
					t.Errorf("record: %d device and %d page-locked bytes kept after the run; want the lanes' %d of each", dev, host, peak-tol)
				}
				if RecordBytes(f.rec.Family, c.dim, c.np, c.k, c.room) != int64(per) {
					t.Errorf("RecordBytes = %d; measured %v", RecordBytes(f.rec.Family, c.dim, c.np, c.k, c.room), per)
				}
				t.Logf("record: %d bytes per trajectory (D %d, P %d, K %d, room for %d steps)", int(per), c.dim, c.np, c.k, c.room)
				// Adjoint, with and without the saved states'
				// cotangents: no tolerances.
				_, ms = recBatch(n, c.dim, c.np, c.k, c.steps)
				for _, cs := range []bool{false, true} {
					drainIdle(f.m)
					log := callLog(t)
					a := recAdj(b, ms, cs)
					if done, err := f.m.Adjoint(f.adj, tolSettings(c.dim), a, chunk, &stop); done != n || err != nil {
						t.Fatalf("adjoint: %d, %v", done, err)
					}
					_, _, peak, _ := memory(t, readCalls(t, log))
					per := float64(peak) / float64(lanes*chunk)
					if want := 8 * adjointWordsStated(ros, c.dim, c.np, c.k, c.steps, cs); per != float64(want) {
						t.Errorf("adjoint (saved cotangents %v): %v bytes per trajectory measured (peak %d, %d lanes of %d); stated %d",
							cs, per, peak, lanes, chunk, want)
					}
					if AdjointBytes(f.adj.Family, c.dim, c.np, c.k, c.steps, cs) != int64(per) {
						t.Errorf("AdjointBytes = %d; measured %v", AdjointBytes(f.adj.Family, c.dim, c.np, c.k, c.steps, cs), per)
					}
					t.Logf("adjoint (%d steps, saved cotangents %v): %d bytes per trajectory", c.steps, cs, int(per))
				}
			})
		}
	}
}

// TestRecordFailures: a copy (in or out) or a launch that fails in the
// middle of a record or adjoint launch of 3 chunks (the third chunk's,
// FAKE_CUDA_ASYNC_BYTES, FAKE_CUDA_LAUNCH_N), and a failing stream
// wait, come back as the driver's *cuda.Error with the step, the chunk
// and the kernel named; the chunks finished before it keep their
// results (done counts them); and every device and page-locked buffer,
// the tolerances and the streams are freed.
func TestRecordFailures(t *testing.T) {
	const n, chunk, dim, np, k, capa = 20, 7, 3, 3, 2, 5
	for _, f := range recFamilies(t) {
		ros := f.rec.Family == ROS
		recOut := recordWordsStated(ros, dim, np, k, capa) - (2 + dim + np + k)
		adjOut := dim + np
		if ros {
			adjOut += k
		}
		adjIn := adjointWordsStated(ros, dim, np, k, capa, true) - adjOut
		for _, c := range []struct {
			what, env, val, bytes, launchN string
			want                           string
			done                           int
		}{
			{"record", "FAKE_CUDA_ASYNC", "700", fmt.Sprint(8 * 6 * (2 + dim + np + k)), "",
				"cuda: cuMemcpyHtoDAsync: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered) (copying in the chunk of trajectories [14, 20) of " + f.rec.Name + ")", 7},
			{"record", "FAKE_CUDA_ASYNC", "700", fmt.Sprint(8 * 6 * recOut), "",
				"cuda: cuMemcpyDtoHAsync: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered) (copying out the chunk of trajectories [14, 20) of " + f.rec.Name + ")", 7},
			{"record", "FAKE_CUDA_LAUNCH", "719", "", "6",
				"cuda: cuLaunchKernel(" + f.rec.Name + "): CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure) (launching the chunk of trajectories [14, 20) of " + f.rec.Name + ")", 7},
			{"record", "FAKE_CUDA_STREAM_SYNC", "700", "", "",
				"cuda: cuStreamSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered) (waiting for the chunk of trajectories [0, 7) of " + f.rec.Name + ")", 0},
			{"adjoint", "FAKE_CUDA_ASYNC", "700", fmt.Sprint(8 * 6 * adjIn), "",
				"cuda: cuMemcpyHtoDAsync: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered) (copying in the chunk of trajectories [14, 20) of " + f.adj.Name + ")", 7},
			{"adjoint", "FAKE_CUDA_LAUNCH", "719", "", "6",
				"cuda: cuLaunchKernel(" + f.adj.Name + "): CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure) (launching the chunk of trajectories [14, 20) of " + f.adj.Name + ")", 7},
		} {
			t.Run(f.name+" "+c.what+" "+c.env, func(t *testing.T) {
				drainIdle(f.m)
				log := callLog(t)
				t.Setenv(c.env, c.val)
				t.Setenv("FAKE_CUDA_ASYNC_BYTES", c.bytes)
				t.Setenv("FAKE_CUDA_LAUNCH_N", c.launchN)
				b, ms := recBatch(n, dim, np, k, capa)
				var stop atomic.Bool
				var done int
				var err error
				a := recAdj(b, ms, true)
				if c.what == "record" {
					done, err = f.m.Record(f.rec, tolSettings(dim), b, ms, chunk, &stop)
				} else {
					for i := range ms.Steps {
						ms.Steps[i] = int64(i) // the fake's gy0 shows them
					}
					done, err = f.m.Adjoint(f.adj, tolSettings(dim), a, chunk, &stop)
				}
				var ce *cuda.Error
				if !errors.As(err, &ce) || err.Error() != c.want {
					t.Errorf("error %v;\nwant %s", err, c.want)
				}
				if done != c.done {
					t.Errorf("done %d, want %d", done, c.done)
				}
				// The finished chunk's results are there (the fake
				// writes t = t0 + t1, gy0 from the step count).
				for i := range done {
					if c.what == "record" && b.T[i] != float64(1001*i) {
						t.Errorf("trajectory %d: t %v", i, b.T[i])
					}
					// The fake's gy0 of a chunk's first job: cap·1000
					// + its steps, and for the explicit kernel its
					// status·100 + save_stride·10.
					want := float64(capa*1000 + i)
					if !ros {
						want += float64(ode.Success)*100 + k*10
					}
					if c.what == "adjoint" && i%chunk == 0 && a.GY0[i*dim] != want {
						t.Errorf("job %d: gy0 %v, want %v", i, a.GY0[i*dim], want)
					}
				}
				t.Setenv(c.env, "")
				dev, host, _, streams := memory(t, readCalls(t, log))
				if dev != 0 || host != 0 || streams != 0 || len(f.m.idle) != 0 {
					t.Errorf("after the failure: %d device bytes, %d page-locked bytes, %d streams, %d idle lanes left; want none",
						dev, host, streams, len(f.m.idle))
				}
			})
		}
	}
}

// TestRecordStop: a stop set once the first of 3 chunks is queued ends
// a record or adjoint launch after that chunk: done is 7, its results
// are unpacked, no second kernel is launched, and the lanes are kept
// for the next run.
func TestRecordStop(t *testing.T) {
	const n, chunk, dim, np, k, capa = 20, 7, 3, 3, 2, 5
	for _, f := range recFamilies(t) {
		for _, what := range []string{"record", "adjoint"} {
			t.Run(f.name+" "+what, func(t *testing.T) {
				drainIdle(f.m)
				log := callLog(t)
				var stop atomic.Bool
				f.m.issued = func(lo, hi int) { stop.Store(true) }
				defer func() { f.m.issued = nil }()
				b, ms := recBatch(n, dim, np, k, capa)
				a := recAdj(b, ms, false)
				var done int
				var err error
				if what == "record" {
					done, err = f.m.Record(f.rec, tolSettings(dim), b, ms, chunk, &stop)
				} else {
					done, err = f.m.Adjoint(f.adj, tolSettings(dim), a, chunk, &stop)
				}
				if done != chunk || err != nil {
					t.Fatalf("%d, %v; want %d, nil", done, err, chunk)
				}
				launches := 0
				for _, c := range readCalls(t, log) {
					if c[0] == "launch" {
						launches++
					}
				}
				if launches != 1 {
					t.Errorf("%d launches; want 1", launches)
				}
				// The fake writes t = t0 + t1 for each trajectory of
				// a record launch, and a nonzero gp for the first
				// job of each adjoint chunk (its save time 0.25
				// among the terms); the other chunks are untouched.
				for i := range n {
					if what == "record" {
						if want := map[bool]float64{true: float64(1001 * i)}[i < chunk]; b.T[i] != want {
							t.Errorf("trajectory %d: t %v, want %v", i, b.T[i], want)
						}
					} else if i%chunk == 0 && (i < chunk) != (a.GP[i*np] != 0) {
						t.Errorf("job %d: gp %v (done %d)", i, a.GP[i*np], done)
					}
				}
				if len(f.m.idle) != 2 {
					t.Errorf("%d idle lanes after a stopped run; want its 2", len(f.m.idle))
				}
			})
		}
	}
}

// TestRecordChunks: a record and an adjoint launch of 20 trajectories
// in chunks of 1, 7 and 20, each family: every chunk's inputs reach its
// kernel and its results come back to its own rows (the fake writes
// each output from inputs of the same trajectory, or of the same index
// within its launch, so a row out of place shows).
func TestRecordChunks(t *testing.T) {
	const n, dim, np, k, capa = 20, 3, 3, 2, 5
	for _, f := range recFamilies(t) {
		ros := f.rec.Family == ROS
		for _, chunk := range []int{1, 7, n} {
			b, ms := recBatch(n, dim, np, k, capa)
			var stop atomic.Bool
			if done, err := f.m.Record(f.rec, tolSettings(dim), b, ms, chunk, &stop); done != n || err != nil {
				t.Fatalf("%s record, chunk %d: %d, %v", f.name, chunk, done, err)
			}
			for i := range n {
				c := i % chunk
				size := min(chunk, n-(i-c))
				steps := int64(capa)
				if !ros && c%2 == 1 {
					steps = -1 // the explicit fake's room "ran out"
				}
				if b.T[i] != float64(1001*i) || b.Status[i] != 2002 || b.Accepted[i] != 77 || b.Rejected[i] != int64(c) ||
					b.FEvals[i] != int64(size) || ms.T[i*(capa+1)] != b.T0[i] || ms.H[i*capa] != b.T1[i] || ms.Steps[i] != steps ||
					(ros && (b.JacEvals[i] != int64(c) || b.LUs[i] != int64(c+1))) {
					t.Fatalf("%s record, chunk %d: trajectory %d: t %v status %d accepted %d rejected %d fevals %d mesh t %v h %v steps %d jac %d lus %d",
						f.name, chunk, i, b.T[i], b.Status[i], b.Accepted[i], b.Rejected[i], b.FEvals[i], ms.T[i*(capa+1)], ms.H[i*capa],
						ms.Steps[i], b.JacEvals[i], b.LUs[i])
				}
			}
			for i := range ms.Steps {
				ms.Steps[i] = int64(3 * i)
			}
			a := recAdj(b, ms, true)
			if done, err := f.m.Adjoint(f.adj, tolSettings(dim), a, chunk, &stop); done != n || err != nil {
				t.Fatalf("%s adjoint, chunk %d: %d, %v", f.name, chunk, done, err)
			}
			for i := range n {
				c := i % chunk
				lo := i - c
				// The fake's row c of a launch: gy0[c] and gp[c] of
				// the chunk's flat arrays, from trajectory lo + c's
				// steps, mesh rows and save times and the chunk's
				// flat cot_y, y, p at c.
				wy := float64(capa*1000 + 3*i)
				wp := a.CotY[lo*dim+c] + ms.T[i*(capa+1)] + ms.H[i*capa] + ms.Y[lo*(capa+1)*dim+c] + a.P[lo*np+c] + a.Save[i*k] + 0.5
				if ros {
					wp += 0.25 // the owners' scratch is there
				} else {
					wy += float64(ode.Success)*100 + k*10
				}
				if a.GY0[lo*dim+c] != wy || a.GP[lo*np+c] != wp {
					t.Fatalf("%s adjoint, chunk %d: job %d: gy0 %v gp %v; want %v %v", f.name, chunk, i, a.GY0[lo*dim+c], a.GP[lo*np+c], wy, wp)
				}
			}
		}
	}
}

// peakFrom returns the peak of the device bytes held at the calls from
// index from on (the memory allocated before them counted).
func peakFrom(t *testing.T, calls [][]string, from int) int64 {
	t.Helper()
	size := map[string]int64{}
	var dev, peak int64
	for i, c := range calls {
		switch c[0] {
		case "alloc":
			n, err := strconv.ParseInt(c[2], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			size[c[1]] = n
			dev += n
		case "free":
			dev -= size[c[1]]
			delete(size, c[1])
		}
		if i >= from {
			peak = max(peak, dev)
		}
	}
	return peak
}

// TestLaneReuse: a record launch, then an adjoint launch on the same
// module (a gradient), another adjoint, and a record again: the
// record's lanes (small inputs, large outputs) do not fit the adjoint,
// which frees each before allocating its own, so the device memory
// held never exceeds two lanes (and the record's tolerances), not
// four; after each run the module keeps the run's two lanes alone; the
// second adjoint allocates nothing.
func TestLaneReuse(t *testing.T) {
	const n, chunk, dim, np, k, capa = 20, 7, 3, 3, 2, 50
	for _, f := range recFamilies(t) {
		ros := f.rec.Family == ROS
		drainIdle(f.m)
		log := callLog(t)
		var stop atomic.Bool
		b, ms := recBatch(n, dim, np, k, capa)
		recLane := int64(8 * chunk * recordWordsStated(ros, dim, np, k, capa))
		adjLane := int64(8 * chunk * adjointWordsStated(ros, dim, np, k, capa, true))
		tol := int64(8 * 2 * dim)
		lanesOf := func() (dev int64) {
			for _, l := range f.m.idle {
				dev += int64(l.inCap + l.outCap)
			}
			return dev
		}
		for q, run := range []func() error{
			func() error { _, err := f.m.Record(f.rec, tolSettings(dim), b, ms, chunk, &stop); return err },
			func() error {
				_, err := f.m.Adjoint(f.adj, tolSettings(dim), recAdj(b, ms, true), chunk, &stop)
				return err
			},
			func() error {
				_, err := f.m.Adjoint(f.adj, tolSettings(dim), recAdj(b, ms, true), chunk, &stop)
				return err
			},
			func() error { _, err := f.m.Record(f.rec, tolSettings(dim), b, ms, chunk, &stop); return err },
		} {
			before := len(readCalls(t, log))
			if err := run(); err != nil {
				t.Fatalf("%s: run %d: %v", f.name, q, err)
			}
			calls := readCalls(t, log)
			dev, _, _, streams := memory(t, calls)
			if len(f.m.idle) != 2 || dev != lanesOf() || streams != 2 {
				t.Errorf("%s: after run %d: %d idle lanes of %d bytes, %d device bytes held, %d streams; want the run's 2 lanes alone",
					f.name, q, len(f.m.idle), lanesOf(), dev, streams)
			}
			if peak, bound := peakFrom(t, calls, before), 2*max(recLane, adjLane)+tol; peak > bound {
				t.Errorf("%s: run %d held %d device bytes at its peak; want at most two lanes' %d (lanes of %d and %d bytes)",
					f.name, q, peak, bound, recLane, adjLane)
			}
			allocs := 0
			for _, c := range calls[before:] {
				if c[0] == "alloc" {
					allocs++
				}
			}
			if q == 2 && allocs != 0 {
				t.Errorf("%s: the second adjoint allocated %d buffers; want none (it reuses the first's lanes)", f.name, allocs)
			}
		}
	}
}
