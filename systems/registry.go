package systems

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gradsolve/gradsolve/ode"
)

// ErrInvalid is wrapped by every error a constructor, ByName or
// KeplerExact returns for an argument that breaks a stated rule.
var ErrInvalid = errors.New("systems: invalid argument")

// ErrUnbound is wrapped by the error KeplerExact returns for an orbit
// with energy ≥ 0 (parabolic or hyperbolic), which has no elliptic
// closed form.
var ErrUnbound = errors.New("systems: orbit is not bound")

// registry maps the names ByName accepts to constructors of the default
// problem, in the order All returns them.
var registry = []struct {
	name string
	make func() *ode.Problem
}{
	{"lorenz", Lorenz},
	{"vdp", VanDerPol},
	{"lorenz96", func() *ode.Problem {
		pr, err := Lorenz96(lorenz96DefaultN, lorenz96DefaultF)
		if err != nil {
			// The arguments are constants that satisfy Lorenz96's rules.
			panic("systems: internal error: default Lorenz96: " + err.Error())
		}
		return pr
	}},
	{"linear", func() *ode.Problem { return LinearDefault().Problem }},
	{"kepler", Kepler},
	{"halo", Halo},
	{"robertson", Robertson},
	{"hires", HIRES},
	{"vdp_stiff", func() *ode.Problem { return VanDerPolStiff(0) }},
	{"linear_stiff", func() *ode.Problem { return LinearStiffDefault().Problem }},
}

// All returns every built-in system at its defaults, freshly built, in
// the order lorenz, vdp, lorenz96 (n = 8, F = 8), linear (LinearDefault),
// kepler, halo, then the stiff ones (Stiff true): robertson, hires,
// vdp_stiff (mu = 1e3) and linear_stiff (LinearStiffDefault). A caller
// that runs only explicit methods should skip those with Stiff set.
func All() []*ode.Problem {
	out := make([]*ode.Problem, len(registry))
	for i, r := range registry {
		out[i] = r.make()
	}
	return out
}

// ByName returns a freshly built default problem by its short name:
// "lorenz", "vdp", "lorenz96" (n = 8, F = 8), "linear" (LinearDefault),
// "kepler", "halo", "robertson", "hires", "vdp_stiff" (mu = 1e3) or
// "linear_stiff" (LinearStiffDefault). An unknown name gives an error
// wrapping ErrInvalid that lists the known ones.
func ByName(name string) (*ode.Problem, error) {
	names := make([]string, len(registry))
	for i, r := range registry {
		if r.name == name {
			return r.make(), nil
		}
		names[i] = fmt.Sprintf("%q", r.name)
	}
	return nil, fmt.Errorf("%w: ByName: unknown system %q: known systems are %s",
		ErrInvalid, name, strings.Join(names, ", "))
}
