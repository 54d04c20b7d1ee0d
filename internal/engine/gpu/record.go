package gpu

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/gradsolve/gradsolve/internal/engine"
	"github.com/gradsolve/gradsolve/internal/engine/cpu"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/ode"
)

// FirstMeshCap is the room, in steps, of a record kernel's first launch
// (at most the step budget): a trajectory that needs more ends its
// launch Cancelled with its room full, and is run again alone with
// twice the room, up to the budget, so that every mesh is whole. A
// trajectory's results do not depend on the room (its thread's solve
// is a pure function of its inputs), so the re-run gives the bits a
// launch with room for the budget would.
const FirstMeshCap = 128

// meshWords returns the 8-byte words of one trajectory's mesh with
// room for cap steps of dim values as the record kernels write it and
// the adjoint kernels read it: (cap+1)·dim states, cap+1 times, cap
// step sizes and the count of steps.
func meshWords(cap, dim int) int { return (cap+1)*(dim+1) + cap + 1 }

// recordWords returns the 8-byte words of device memory one
// trajectory of a record launch of family f takes (CUDA backend: a
// lane's device buffers, and as much page-locked memory): its inputs
// t0, t1, y0 (dim), p (np) and the save times (k); its outputs y
// (dim), t, h, the saved states (k·dim), the family's counters
// (counters: 4, or 6 for the Rosenbrock kernels) and its mesh
// (meshWords). The launch also keeps the tolerances (2·NormDim
// values), whatever its size.
func recordWords(f Family, dim, np, k, cap int) (in, out int) {
	return forwardIn(dim, np, k), forwardOut(dim, k, counters(f)) + meshWords(cap, dim)
}

// adjointWords returns the 8-byte words of device memory one job of an
// adjoint launch of family f takes: its inputs p (np), the save times
// (k), the mesh (meshWords: times, step sizes, states, steps), the
// cotangent of the final state (dim) and, where given, of the saved
// states (k·dim), and for the explicit kernels its status; its outputs
// ∂L/∂y0 (dim), ∂L/∂p (np) and for the Rosenbrock kernels the owners
// of the save times (k).
func adjointWords(f Family, dim, np, k, cap int, cotSaved bool) (in, out int) {
	in = np + k + meshWords(cap, dim) + dim
	if cotSaved {
		in += k * dim
	}
	out = dim + np
	if f == ERK {
		in++
	} else {
		out += k
	}
	return in, out
}

// RecordBytes returns the bytes of device memory one trajectory of a
// record launch of family f takes on the CUDA backend (recordWords, 8
// bytes a word) for a state of dim values, np parameters, k save times
// and room for room steps; the launch takes as much page-locked host
// memory, and 16·NormDim bytes of tolerances beside.
func RecordBytes(f Family, dim, np, k, room int) int64 {
	in, out := recordWords(f, dim, np, k, room)
	return 8 * int64(in+out)
}

// AdjointBytes returns the bytes of device memory one job of an adjoint
// launch of family f takes on the CUDA backend (adjointWords) for a
// mesh of steps steps (the longest of its batch), with the saved
// states' cotangents where cotSaved; as much page-locked host memory
// beside.
func AdjointBytes(f Family, dim, np, k, steps int, cotSaved bool) int64 {
	in, out := adjointWords(f, dim, np, k, steps, cotSaved)
	return 8 * int64(in+out)
}

// chunkOf returns the chunk of a batch of n trajectories of per bytes
// each for mem bytes of device memory: as many as one of the two lanes'
// halves of mem holds, at most n, and at most half the batch where it
// has 2·MinChunk or more, so that the two streams overlap. It is 0
// where one trajectory does not fit.
func chunkOf(mem, per int64, n int) int {
	fit := mem / (2 * per)
	c := int(min(fit, int64(n)))
	if n >= 2*MinChunk {
		c = min(c, (n+1)/2)
	}
	return c
}

// recordChunk returns the launch size of a record kernel with room for
// cap steps: Config.Chunk, else as many as the device memory holds
// (chunkOf).
func (s *Solver) recordChunk(cap int) (int, error) {
	pl := s.pl
	if c := pl.e.cfg.Chunk; c > 0 {
		return c, nil
	}
	mem, err := pl.dev.Memory()
	if err != nil {
		return 0, err
	}
	in, out := recordWords(pl.kernel.Family, pl.kernel.Dim, pl.spec.Problem.NumParams, s.b.K, cap)
	per := 8 * int64(in+out)
	c := chunkOf(mem, per, s.L)
	if c < 1 {
		return 0, fmt.Errorf("%s: one trajectory's recording (%d bytes with a mesh of %d steps) does not fit in the half of the device memory the engine may use for each of its two streams (%d bytes)",
			pl.spec.Name(), per, cap, mem/2)
	}
	return c, nil
}

// record runs the record kernel on b, then runs again, with twice the
// room each time, the trajectories whose room ran out, until every
// mesh is whole (or the room is the step budget, past which no solve
// goes). It returns how many trajectories, a prefix of b, have results.
func (s *Solver) record(b *Batch, stop *atomic.Bool) (int, error) {
	pl := s.pl
	budget := pl.spec.MaxSteps
	cap := min(budget, FirstMeshCap)
	if len(s.meshOf) < b.N {
		s.meshOf, s.meshRow = make([]*Meshes, s.L), make([]int, s.L)
	}
	chunk, err := s.recordChunk(cap)
	if err != nil {
		return 0, err
	}
	ms := NewMeshes(b.N, cap, pl.dim)
	done, err := pl.rec.Record(pl.kernel, &pl.set, b, ms, chunk, stop)
	if err != nil {
		return 0, err
	}
	for l := range done {
		s.meshOf[l], s.meshRow[l] = ms, l
	}
	for cap < budget {
		var redo []int
		for l := range done {
			m, r := s.meshOf[l], s.meshRow[l]
			// Room ran out: the Rosenbrock record kernels end such a
			// trajectory with its mesh full, the explicit ones with
			// steps −1.
			if ode.Status(b.Status[l]) == ode.Cancelled && (int(m.Steps[r]) == m.Cap || m.Steps[r] < 0) {
				redo = append(redo, l)
			}
		}
		if len(redo) == 0 {
			break
		}
		cap = min(budget, 2*cap)
		sub := NewBatch(len(redo), b.Dim, b.NP, b.K)
		for j, l := range redo {
			sub.T0[j], sub.T1[j] = b.T0[l], b.T1[l]
			copy(sub.Y0[j*b.Dim:(j+1)*b.Dim], b.Y0[l*b.Dim:(l+1)*b.Dim])
			copy(sub.P[j*b.NP:(j+1)*b.NP], b.P[l*b.NP:(l+1)*b.NP])
			copy(sub.Save[j*b.K:(j+1)*b.K], b.Save[l*b.K:(l+1)*b.K])
		}
		if chunk, err = s.recordChunk(cap); err != nil {
			return 0, err
		}
		sm := NewMeshes(len(redo), cap, pl.dim)
		d, err := pl.rec.Record(pl.kernel, &pl.set, sub, sm, chunk, stop)
		if err != nil {
			return 0, err
		}
		if d < len(redo) {
			// Stopped: the trajectories of the batch from the first
			// that could not be re-run have no results.
			done = redo[d]
		}
		for j, l := range redo[:d] {
			if l >= done {
				break
			}
			copy(b.Y[l*b.Dim:(l+1)*b.Dim], sub.Y[j*b.Dim:(j+1)*b.Dim])
			copy(b.Saved[l*b.K*b.Dim:(l+1)*b.K*b.Dim], sub.Saved[j*b.K*b.Dim:(j+1)*b.K*b.Dim])
			b.T[l], b.H[l], b.Status[l] = sub.T[j], sub.H[j], sub.Status[j]
			b.Accepted[l], b.Rejected[l], b.FEvals[l] = sub.Accepted[j], sub.Rejected[j], sub.FEvals[j]
			b.JacEvals[l], b.LUs[l] = sub.JacEvals[j], sub.LUs[j]
			s.meshOf[l], s.meshRow[l] = sm, j
		}
	}
	return done, nil
}

// writeMesh fills out.Mesh with trajectory l's recorded mesh, as the
// CPU's solve pushes its steps (Mesh.Push: a checkpointed mesh keeps
// its checkpoints); a mesh whose Grow refuses ends the trajectory
// Cancelled, as on the CPU (whose solve stops there: here the results
// are those of the whole solve, and a Cancelled trajectory's are not
// used).
func (s *Solver) writeMesh(l int, out *ivp.Output) {
	m, r, d := s.meshOf[l], s.meshRow[l], s.pl.dim
	ms := out.Mesh
	c1 := m.Cap + 1
	t, h, y := m.T[r*c1:(r+1)*c1], m.H[r*m.Cap:(r+1)*m.Cap], m.Y[r*c1*d:(r+1)*c1*d]
	ms.Reset(t[0], y[:d])
	if m.Steps[r] < 0 {
		// The room ran out at the step budget (an explicit record
		// kernel's steps −1): as a refused Grow on the CPU.
		out.Status = ode.Cancelled
		return
	}
	for k := range int(m.Steps[r]) {
		if !ms.Push(h[k], t[k+1], y[(k+1)*d:(k+2)*d]) {
			out.Status = ode.Cancelled
			return
		}
	}
}

// NewReplayer returns a worker's replayer of a Record job's meshes: an
// engine.LaneReplayer whose ReverseLanes runs the adjoint kernel on
// batches of Lanes() recordings. Forward (the forward replay with the
// step sizes fixed) and Reverse of one recording (a checkpointed
// mesh's, whose states the kernel does not have) run on the
// reference's replayer (cpu-ros's or cpu-erk's), whose bits the kernels give: there is no forward-replay
// kernel.
func (pl *plan) NewReplayer() (engine.Replayer, error) {
	if pl.rec == nil {
		return nil, fmt.Errorf("the cuda engine replays only the recordings of its Record jobs")
	}
	var cp engine.Plan
	var err error
	if pl.kernel.Family == ROS {
		cp, err = cpu.ROS{}.Prepare(pl.spec)
	} else {
		cp, err = cpu.ERK{}.Prepare(pl.spec)
	}
	if err != nil {
		return nil, err
	}
	crp, err := cp.NewReplayer()
	if err != nil {
		return nil, err
	}
	L := pl.e.cfg.Batch
	if L <= 0 {
		L = DefaultBatch
	}
	if n := pl.spec.N; n > 0 {
		L = min(L, n)
	}
	return &Replayer{pl: pl, cpu: crp, L: L, jobs: make([]*ivp.ReverseJob, L)}, nil
}

// Replayer is the engine's replayer of its recordings (see
// plan.NewReplayer): the adjoint kernel on batches, the reference's replayer (cpu-ros's or cpu-erk's)
// for the rest.
type Replayer struct {
	pl   *plan
	cpu  engine.Replayer
	L    int
	jobs []*ivp.ReverseJob
	err  error
}

// Lanes returns the batch size of ReverseLanes.
func (r *Replayer) Lanes() int { return r.L }

// Err returns the first failure of the device in the last walk
// (engine.FailingReplayer), or nil.
func (r *Replayer) Err() error { return r.err }

// Forward replays ms forward on the reference's replayer (cpu-ros's or cpu-erk's).
func (r *Replayer) Forward(ms *ivp.Mesh, y0, p, save, yOut, saved []float64) {
	r.cpu.Forward(ms, y0, p, save, yOut, saved)
}

// Reverse reverses one recording on the reference's replayer (cpu-ros's or cpu-erk's).
func (r *Replayer) Reverse(ms *ivp.Mesh, p, save, cotY, cotSaved, gy0, gp []float64) {
	r.cpu.Reverse(ms, p, save, cotY, cotSaved, gy0, gp)
}

// ReverseLanes runs the jobs of src in batches of Lanes() on the
// adjoint kernel: each job's mesh, parameters, save times and
// cotangents packed into an AdjBatch (room for the batch's longest
// mesh). A job whose mesh is checkpointed, or whose saved states'
// cotangents are given where the batch's first job's are not (or the
// other way), is reversed on the reference's replayer (cpu-ros's or cpu-erk's) instead. A failure of
// the device leaves its batch's gradients NaN and the rest of the walk
// to the reference's replayer (cpu-ros's or cpu-erk's), and Err returns it (the front end then fails
// the walk: engine.FailingReplayer).
func (r *Replayer) ReverseLanes(src ivp.ReverseSource, stop *atomic.Bool) {
	pl := r.pl
	r.err = nil // Err is the walk's
	dim, np := pl.dim, pl.spec.Problem.NumParams
	for !stop.Load() {
		n := 0
		for n < r.L {
			j, ok := src.Next(n)
			if !ok {
				break
			}
			if j.Mesh.Checkpoint > 1 || r.err != nil || (n > 0 && (j.CotSaved == nil) != (r.jobs[0].CotSaved == nil)) {
				r.one(j)
				src.Done(n)
				continue
			}
			r.jobs[n] = j
			n++
		}
		if n == 0 {
			return
		}
		k := len(r.jobs[0].Save)
		cap := 0
		for _, j := range r.jobs[:n] {
			cap = max(cap, j.Mesh.Steps())
		}
		a := &AdjBatch{N: n, Dim: dim, NP: np, K: k, P: make([]float64, n*np), Save: make([]float64, n*k),
			Mesh: NewMeshes(n, cap, dim), CotY: make([]float64, n*dim), GY0: make([]float64, n*dim), GP: make([]float64, n*np)}
		if r.jobs[0].CotSaved != nil {
			a.CotSaved = make([]float64, n*k*dim)
		}
		c1 := cap + 1
		for i, j := range r.jobs[:n] {
			copy(a.P[i*np:], j.P)
			copy(a.Save[i*k:], j.Save)
			copy(a.CotY[i*dim:], j.CotY)
			if a.CotSaved != nil {
				copy(a.CotSaved[i*k*dim:], j.CotSaved)
			}
			ms := j.Mesh
			a.Mesh.Steps[i] = int64(ms.Steps())
			copy(a.Mesh.T[i*c1:], ms.T)
			copy(a.Mesh.H[i*cap:], ms.H)
			copy(a.Mesh.Y[i*c1*dim:], ms.Y)
		}
		done := 0
		if r.err == nil {
			var err error
			chunk := pl.e.cfg.Chunk
			if chunk <= 0 {
				// As many jobs as the device memory holds
				// (adjointWords, chunkOf); where not one does, one
				// per launch (the allocation then fails, naming it).
				mem, merr := pl.dev.Memory()
				in, out := adjointWords(pl.adjoint.Family, dim, np, k, cap, a.CotSaved != nil)
				chunk = n
				if merr == nil {
					chunk = max(1, chunkOf(mem, 8*int64(in+out), n))
				}
			}
			done, err = pl.rec.Adjoint(pl.adjoint, &pl.set, a, chunk, stop)
			if err != nil && r.err == nil {
				r.err = err
				done = 0
			}
		}
		for i, j := range r.jobs[:n] {
			if i < done {
				copy(j.GY0, a.GY0[i*dim:(i+1)*dim])
				copy(j.GP, a.GP[i*np:(i+1)*np])
			} else {
				fillNaN(j.GY0)
				fillNaN(j.GP)
			}
			r.jobs[i] = nil
			src.Done(i)
		}
		if n < r.L {
			return
		}
	}
}

// one reverses job j on the reference's replayer (cpu-ros's or cpu-erk's).
func (r *Replayer) one(j *ivp.ReverseJob) {
	r.cpu.Reverse(j.Mesh, j.P, j.Save, j.CotY, j.CotSaved, j.GY0, j.GP)
}

func fillNaN(v []float64) {
	for i := range v {
		v[i] = math.NaN()
	}
}
