package engine

import (
	"errors"
	"slices"
	"testing"

	"github.com/gradsolve/gradsolve/method"
	"github.com/gradsolve/gradsolve/ode"
)

type stub struct {
	name     string
	priority int
}

func (s stub) Name() string                             { return s.name }
func (s stub) Priority() int                            { return s.priority }
func (s stub) Reference() string                        { return "" }
func (s stub) Runs(method.Method) bool                  { return true }
func (s stub) DefaultMethod(*ode.Problem) method.Method { return method.Tsit5 }
func (s stub) Serves(*Request) error                    { return nil }
func (s stub) Prepare(*Spec) (Plan, error)              { return nil, errors.New("stub") }

// The registry orders engines by priority, then name, whatever the
// order of registration, and refuses a name twice or a malformed one.
func TestRegistry(t *testing.T) {
	Register(stub{"b-low", -1})
	Register(stub{"z-high", 5})
	Register(stub{"a-low", -1})
	Register(stub{"m-mid", 0})
	if got, want := Names(), []string{"z-high", "m-mid", "a-low", "b-low"}; !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	if e := Lookup("m-mid"); e == nil || e.Name() != "m-mid" {
		t.Errorf("Lookup(m-mid) = %v", e)
	}
	if e := Lookup("nope"); e != nil {
		t.Errorf("Lookup(nope) = %v", e)
	}
	for _, name := range []string{"m-mid", "", "Upper", "two words", "a,b"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%q) did not panic", name)
				}
			}()
			Register(stub{name, 0})
		}()
	}
}

func TestDirections(t *testing.T) {
	w := Directions([]int{2, -1, 0}, 3)
	want := [][]float64{{0, 0, 1}, {0, 0, 0}, {1, 0, 0}}
	for c := range want {
		if !slices.Equal(w[c], want[c]) {
			t.Errorf("column %d: %v, want %v", c, w[c], want[c])
		}
	}
	for j, s := range map[Job]string{Forward: "forward", Sensitivities: "sensitivities", Record: "record", Job(9): "Job(9)"} {
		if j.String() != s {
			t.Errorf("%d: %q, want %q", int(j), j.String(), s)
		}
	}
}
