// Package gpu registers the CUDA engine, "cuda": one trajectory per GPU
// thread, from the kernels package sym/emitcuda generates, loaded
// through package internal/cuda (the driver API and NVRTC through
// purego, no cgo).
//
// The engine says whether it can run here (engine.Availability): it
// opens the driver, takes the device and loads NVRTC once per process,
// on first use, and where any of them is missing its Serves refuses
// every request with the reason, "unavailable: no CUDA driver (…)",
// "unavailable: no CUDA device", "unavailable: no NVRTC (…)". Its
// priority is below the CPU engines', so the router never picks it
// over them: it is run only where --engine (Options.Engine) names it.
//
// Where CUDA is available it still serves no job, and says
// "unavailable: the cuda engine runs no job yet: …": the kernels exist
// and are tested by CPU emulation (sym/emitcuda), and Forward launches
// one, but the launch of an ensemble's kernels is not wired into the
// front end yet, whose engines run one trajectory per Solver call.
package gpu

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gradsolve/gradsolve/internal/cuda"
	"github.com/gradsolve/gradsolve/internal/engine"
	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
)

func init() {
	engine.Register(New("cuda", cuda.Options{}, 0))
}

// Priority is the engine's priority: below the CPU engines' (0), so
// that only a request naming it runs on it.
const Priority = -1

// Engine is the CUDA engine on one device.
type Engine struct {
	name   string
	opts   cuda.Options
	device int

	once sync.Once
	dev  *cuda.Device
	err  error
}

// New returns a CUDA engine of the given name on device (0-based),
// loading the libraries opts names (the zero Options: the system's).
// Nothing is loaded until the engine is first asked (Available).
func New(name string, opts cuda.Options, device int) *Engine {
	return &Engine{name: name, opts: opts, device: device}
}

// Name returns the engine's name ("cuda").
func (e *Engine) Name() string { return e.name }

// Priority returns Priority.
func (e *Engine) Priority() int { return Priority }

// Reference returns "cpu-erk", whose bits the kernels give (in the CPU
// emulation; on a device, with --fmad=false, not yet measured).
func (e *Engine) Reference() string { return "cpu-erk" }

// Runs reports whether m is an explicit Runge–Kutta method, the only
// family the kernels have.
func (e *Engine) Runs(m method.Method) bool { return m.Family() == method.ExplicitFamily }

// DefaultMethod returns method.Tsit5.
func (e *Engine) DefaultMethod(*ode.Problem) method.Method { return method.Tsit5 }

// Available returns why the engine cannot run here: an error wrapping
// cuda.ErrUnavailable whose text starts with "unavailable: " and says
// which of the driver, the device and NVRTC is missing (Loaded's
// error), and where all three load, that the engine runs no job yet
// (errNoLaunch). So that the router and the conformance suite treat it
// as absent until its jobs are wired in, it never returns nil yet.
func (e *Engine) Available() error {
	if err := e.Loaded(); err != nil {
		return err
	}
	return errNoLaunch
}

// Loaded returns nil where the driver, the device and NVRTC load, else
// the error wrapping cuda.ErrUnavailable that says which is missing. It
// loads them once, on first call.
func (e *Engine) Loaded() error {
	e.once.Do(e.load)
	return e.err
}

func (e *Engine) load() {
	d, err := cuda.Open(e.opts)
	if err != nil {
		e.err = err
		return
	}
	dev, err := d.Device(e.device)
	if err != nil {
		if !errors.Is(err, cuda.ErrUnavailable) {
			err = fmt.Errorf("%w: %w", cuda.ErrUnavailable, err)
		}
		e.err = err
		return
	}
	if err := d.NVRTC(); err != nil {
		dev.Close()
		e.err = err
		return
	}
	e.dev = dev
}

// errNoLaunch is the refusal where CUDA is available.
var errNoLaunch = fmt.Errorf("%w: the cuda engine runs no job yet: its kernels are generated and tested in CPU emulation (sym/emitcuda), but launching them on an ensemble is not wired into the front end", cuda.ErrUnavailable)

// Serves refuses every request, with Available's reason.
func (e *Engine) Serves(req *engine.Request) error { return e.Available() }

// Prepare returns Serves's refusal.
func (e *Engine) Prepare(spec *engine.Spec) (engine.Plan, error) {
	return nil, e.Serves(&spec.Request)
}
