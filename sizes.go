package gradsolve

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gradsolve/gradsolve/ensemble"
	"github.com/gradsolve/gradsolve/internal/memory"
	"github.com/gradsolve/gradsolve/ivp"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
)

// Sizes are the dimensions of an ensemble job, from which Footprint
// counts the memory of the arrays the job allocates.
type Sizes struct {
	// N is the number of trajectories (Ensemble.N), Dim the state
	// dimension (Problem.Dim), NumParams the parameter count
	// (Problem.NumParams) and K the number of save times per trajectory.
	N, Dim, NumParams, K int
	// NS is the number of sensitivity columns (len(Sensitivity.Wrt));
	// 0 for none.
	NS int
	// Record asks for a recording (Record, or the reverse route of
	// LossGradient): the meshes, the recording point, and the arrays of
	// Recording.Gradient.
	Record bool
	// Gradient adds the arrays of LossGradient: the gradient and the
	// cotangents of the final states and, with save times, of the saved
	// states (a loss may use them; LeastSquaresFit allocates them).
	Gradient bool
	// KeepStages is the number of stages a recording keeps per step
	// with Options.KeepStages (0: none).
	KeepStages int
	// Checkpoint is a recording's Options.Checkpoint: c ≥ 2 keeps the
	// state and time at every c-th step only (PerStep counts the step
	// size and a c-th of Dim + 1 numbers, rounded up to whole bytes),
	// and each worker holds one segment of the reverse sweep: at most
	// min(c, MaxSteps) steps of 1 + (1 + SegmentStages)·Dim numbers.
	// 0 or 1: every state.
	Checkpoint int
	// SegmentStages is the number of stage inputs a checkpointed
	// recording's reverse sweep keeps per step of its segment: at most
	// the explicit method's stage count less one (Stages() − 1, which
	// ensembleSizes takes); 0 for a Rosenbrock method.
	SegmentStages int
	// MaxSteps is the step budget per trajectory (Options.MaxSteps; 0
	// means DefaultMaxSteps): no segment is longer.
	MaxSteps int
	// Workers is the number of goroutines (0: GOMAXPROCS), for the
	// buffers each worker holds.
	Workers int
	// Implicit says a Rosenbrock method runs: each worker then holds a
	// Jacobian and its LU factors, Dim² numbers each (and one more per
	// sensitivity column).
	Implicit bool
	// InitialFromParams says the initial states are computed from each
	// trajectory's parameters (Problem.Initial with no Ensemble.Y0):
	// N·Dim more numbers, and with sensitivities N·Dim·NS more for
	// ∂y0/∂p.
	InitialFromParams bool
}

// Footprint is the memory a job's arrays take, in bytes.
type Footprint struct {
	// Bytes is what is allocated before the first step: the result
	// arrays, the sensitivities, the fixed part of a recording and the
	// gradient. The right-hand side's own memory and the inputs (the
	// Ensemble's arrays, which the caller holds) are not counted.
	Bytes uint64
	// PerStep is what a recording adds for every accepted step of
	// every trajectory: the state, the step's time and size, and the
	// stages it keeps; with Sizes.Checkpoint = c ≥ 2, the step's size
	// and a c-th of a state and its time (rounded up). 0 without a
	// recording.
	PerStep uint64
	// Arrays lists what Bytes is made of, by Go name ("Result.Y" …).
	Arrays []ArraySize
}

// ArraySize is one array of a Footprint.
type ArraySize struct {
	Name  string
	Bytes uint64
}

// Footprint returns the memory of the job's arrays. It returns an error
// wrapping ErrInput, naming the array and the fields whose product
// overflows, when a size does not fit an int.
func (s Sizes) Footprint() (Footprint, error) {
	b := s.budget()
	if b.Overflow() != "" {
		return Footprint{}, fmt.Errorf("%w: %w", ErrInput, &memory.Error{Subject: s.subject(), Overflow: b.Overflow(), Advice: s.advice()})
	}
	f := Footprint{Bytes: b.Total(), PerStep: s.perStep()}
	for _, p := range b.Parts {
		f.Arrays = append(f.Arrays, ArraySize{p.Name, p.Bytes})
	}
	return f, nil
}

// meshFixed is the fixed memory of one trajectory's recorded mesh: its
// header and pointer, the start time and the initial state.
func (s Sizes) meshFixed() int { return int(unsafe.Sizeof(ivp.Mesh{})) + 8 }

func (s Sizes) perStep() uint64 {
	if !s.Record {
		return 0
	}
	if c := s.Checkpoint; c >= 2 {
		// The step's size, and a c-th of a state and its time.
		return uint64(8*(1+s.KeepStages*s.Dim)) + (uint64(8*(s.Dim+1))+uint64(c)-1)/uint64(c)
	}
	return uint64(8 * (s.Dim + 2 + s.KeepStages*s.Dim))
}

// segmentSteps is the most steps of a checkpointed recording's segment.
func (s Sizes) segmentSteps() int {
	ms := s.MaxSteps
	if ms <= 0 {
		ms = DefaultMaxSteps
	}
	return min(s.Checkpoint, ms)
}

// budget adds up the arrays Solve, Record and LossGradient allocate
// (see solve, Record, Recording.Gradient, forwardLossGradient).
func (s Sizes) budget() *memory.Budget {
	var b memory.Budget
	n, dim, m, k, ns := s.N, s.Dim, s.NumParams, s.K, s.NS
	b.Add("Result.Y", "N·Dim", 8, n, dim)
	b.Add("Result.Saved", "N·K·Dim", 8, n, k, dim)
	b.Add("Result.T", "N", 16, n) // with the last step sizes
	b.Add("Result.Status", "N", int(unsafe.Sizeof(Status(0))), n)
	b.Add("Result.Stats", "N", int(unsafe.Sizeof(Stats{})), n)
	if s.InitialFromParams {
		b.Add("initial states y0(p)", "N·Dim", 8, n, dim)
		if ns > 0 {
			// ∂y0/∂p for the parameter columns, computed with y0(p).
			b.Add("initial sensitivities ∂y0/∂p", "N·Dim·NS", 8, n, dim, ns)
		}
	}
	nw := ensemble.Workers(max(n, 1), ensemble.Config{Workers: s.Workers})
	// Each worker's solver: a goroutine's stack and about 2·13+8 vectors
	// of the (augmented) state — 13 stages bound every method here.
	b.Add("worker state", "Workers", 16<<10, nw)
	b.Add("worker state", "Workers·34·Dim·(1+NS)", 8, nw, 34, dim, ns+1)
	if s.Implicit {
		b.Add("worker Jacobians", "Workers·Dim·Dim·(2+NS)", 8, nw, dim, dim, ns+2)
	}
	if ns > 0 {
		b.Add("Result.S", "N·Dim·NS", 8, n, dim, ns)
		b.Add("Result.SavedS", "N·K·Dim·NS", 8, n, k, dim, ns)
		b.Add("sensitivity buffers", "Workers·(K+2)·Dim·(1+NS)", 8, nw, k+2, dim, ns+1)
	}
	if s.Record {
		b.Add("recorded meshes", "N·(Dim+1)", 8, n, dim+1)
		b.Add("recorded meshes", "N", s.meshFixed(), n)
		b.Add("Recording points", "2·N·(Dim+NumParams)", 8, 2, n, dim+m) // the current point and the recording point
		if s.Checkpoint >= 2 {
			// Each worker's segment of the reverse sweep: its times and
			// states (one more than its steps) and the stages it keeps.
			b.Add("checkpoint segments", "Workers·(min(Checkpoint, MaxSteps)+1)·(1+Dim·(1+SegmentStages))", 8, nw, s.segmentSteps()+1, 1+dim*(1+s.SegmentStages))
		}
	}
	if s.Gradient || s.Record {
		b.Add("Gradient.P", "N·NumParams", 8, n, m)
		b.Add("Gradient.Y0", "N·Dim", 8, n, dim)
		b.Add("Cotangents.Y", "N·Dim", 8, n, dim)
	}
	if s.Gradient {
		// A loss of the saved states (LeastSquaresFit with
		// FitData.Saved) returns their cotangents, as large as
		// Result.Saved; one of the final states alone returns none, but
		// the loss is not known here.
		b.Add("Cotangents.Saved", "N·K·Dim", 8, n, k, dim)
	}
	return &b
}

// subject names the request in the Go API's terms.
func (s Sizes) subject() string {
	parts := []string{fmt.Sprintf("Ensemble.N = %d", s.N)}
	if s.K > 0 {
		parts = append(parts, fmt.Sprintf("K = %d save times (Ensemble.Save)", s.K))
	}
	if s.NS > 0 {
		parts = append(parts, fmt.Sprintf("NS = %d sensitivity columns (Options.Sens.Wrt)", s.NS))
	}
	parts = append(parts, fmt.Sprintf("Problem.Dim = %d", s.Dim))
	return strings.Join(parts, ", ")
}

func (s Sizes) advice() string {
	a := "lower Ensemble.N (solve the ensemble in parts)"
	if s.K > 0 {
		a += " or save at fewer times"
	}
	return a
}

// check refuses a job whose arrays overflow an int or do not fit in
// the memory available, with an error wrapping ErrInput.
func (s Sizes) check() error {
	b := s.budget()
	err := memory.Check(b, s.subject(), "the result arrays", s.advice())
	if err == nil {
		return nil
	}
	if me, ok := err.(*memory.Error); ok && s.Record && me.Overflow == "" {
		me.PerStep = memory.RecordingPerStep(s.perStep(), false)
	}
	return fmt.Errorf("%w: %w", ErrInput, err)
}

// ensembleSizes reads the sizes of a job from its inputs before they
// are resolved; ok is false when they are malformed (resolveInputs then
// says how).
func ensembleSizes(prob *Problem, ens *Ensemble, o *Options, record bool, offers ode.ProgramSet) (s Sizes, ok bool) {
	n := ens.N
	if n < 1 {
		return s, false
	}
	k := len(ens.Save)
	if ens.SavePerTrajectory {
		if k%n != 0 {
			return s, false
		}
		k /= n
	}
	// The method decides the per-worker memory; which engine runs it
	// is solve's to find out (and refuse), after the inputs.
	m, _, err := resolveMethod(prob, o, offers)
	if err != nil {
		return s, false // solve says so
	}
	s = Sizes{N: n, Dim: prob.Dim, NumParams: prob.NumParams, K: k, Record: record, Workers: max(o.Workers, 0),
		Implicit:          m.Family() == method.RosenbrockFamily,
		InitialFromParams: ens.Y0 == nil && prob.Initial != nil && len(ens.P) != prob.NumParams}
	if o.Sens != nil {
		s.NS = len(o.Sens.Wrt)
	}
	if tb, ok := m.(*method.Tableau); ok && record && o.KeepStages {
		s.KeepStages = tb.Stages()
	}
	if record && o.Checkpoint >= 2 {
		s.Checkpoint, s.MaxSteps = o.Checkpoint, max(o.MaxSteps, 0)
		if tb, ok := m.(*method.Tableau); ok {
			s.SegmentStages = tb.Stages() - 1
		}
	}
	return s, true
}

// meshLimit bounds the memory a recording's meshes may take as they
// grow: what was available when they first reached memory.Small
// together with the recording's fixed part, less that fixed part. It
// counts every allocation of mesh storage as it is made — each
// worker's mesh whenever its capacity grows (ivp.Mesh.Grow, a rare
// event: capacities double) and each trajectory's trimmed copy (its
// Clone) — and gives nothing back: the storage a growing mesh leaves
// behind is garbage the collector frees only later, and address space
// the Go runtime has mapped stays mapped (ulimit -v), so the count
// bounds what the meshes take from the process. Once it passes the
// limit every further allocation is refused and the ensemble is
// stopped: the trajectory whose mesh could not grow ends Cancelled, and
// Record returns the error.
//
// The memory available is looked up only once the count reaches
// memory.Small (as memory.Check does for a total below it): a lookup
// reads several files under /proc and /sys (0.05–0.3 ms, more than a
// small recording's solve), and a recording of less than 16 MiB is
// refused by nothing a lookup could tell.
type meshLimit struct {
	used   atomic.Uint64
	sizes  Sizes
	fixed  uint64
	once   sync.Once
	limit  uint64 // 0: no limit known (set by once)
	avail  memory.Info
	cancel context.CancelFunc
	err    atomic.Pointer[error]
}

func newMeshLimit(s Sizes, cancel context.CancelFunc) *meshLimit {
	return &meshLimit{sizes: s, fixed: s.budget().Total(), cancel: cancel}
}

// measure looks up the memory available and sets the limit.
func (ml *meshLimit) measure() {
	if a := memory.Available(); a.Known {
		ml.avail = a
		ml.limit = max(a.Bytes-min(a.Bytes, ml.fixed), 1)
	}
}

// grow counts an allocation of b bytes of mesh storage and says whether
// it may be made. The allocation that passes the limit records the
// error and stops the ensemble; it and every later one are refused.
func (ml *meshLimit) grow(b uint64) bool {
	if ml.err.Load() != nil {
		return false
	}
	u := ml.used.Add(b)
	if ml.fixed+u < memory.Small {
		return true
	}
	ml.once.Do(ml.measure)
	if ml.limit == 0 || u <= ml.limit {
		return true
	}
	if u-b <= ml.limit { // the allocation that crossed the limit
		me := &memory.Error{Subject: ml.sizes.subject(), What: memory.RecordedMeshes, Need: ml.fixed + u,
			PerStep: memory.RecordingPerStep(ml.sizes.perStep(), true),
			Avail:   memory.Info{Bytes: ml.avail.Bytes, Source: ml.avail.Source + ", as the recording grew", Known: true},
			Advice:  meshAdvice}
		err := fmt.Errorf("%w: %w", ErrInput, me)
		ml.err.Store(&err)
		ml.cancel()
	}
	return false
}

// meshAdvice is what the refusal of a recording whose meshes outgrow
// the memory says to do, in the Go API's terms.
const meshAdvice = "record fewer trajectories at a time (Ensemble.N), keep the state at every k-th step only (Options.Checkpoint), lower Options.MaxSteps, or loosen the tolerances for fewer steps"

// failed returns the error add recorded, or nil.
func (ml *meshLimit) failed() error {
	if ml == nil {
		return nil
	}
	if p := ml.err.Load(); p != nil {
		return *p
	}
	return nil
}

// checkLossSizes checks the sizes of LossGradient's job: forward
// sensitivities with ns columns, or a recording.
func checkLossSizes(prob *Problem, ens *Ensemble, o *Options, forward bool, ns int) error {
	if ens == nil {
		return nil // solve says so
	}
	s, ok := ensembleSizes(prob, ens, o, !forward, prob.ProgramSet())
	if !ok {
		return nil
	}
	s.Gradient = true
	if forward {
		s.NS = ns
	}
	return s.check()
}
