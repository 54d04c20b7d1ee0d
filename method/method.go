package method

import "fmt"

// Family is a kind of method: the engines that run one family know its
// step, and nothing else about the method.
type Family int

const (
	// ExplicitFamily holds the explicit embedded Runge–Kutta methods
	// (*Tableau).
	ExplicitFamily Family = iota + 1
	// RosenbrockFamily holds the linearly implicit Rosenbrock methods
	// (*Rosenbrock), for stiff problems; they need the Jacobian ∂f/∂y.
	RosenbrockFamily
)

// String returns the family's name in prose: "explicit Runge–Kutta" or
// "Rosenbrock".
func (f Family) String() string {
	switch f {
	case ExplicitFamily:
		return "explicit Runge–Kutta"
	case RosenbrockFamily:
		return "Rosenbrock"
	}
	return fmt.Sprintf("Family(%d)", int(f))
}

// Method is a method of either family: an explicit Runge–Kutta
// *Tableau or a *Rosenbrock method. Those two types are its only
// implementations (the interface has an unexported method): an engine
// runs a family it knows, and a new family joins here, with its type.
//
// A nil *Tableau or *Rosenbrock held in a Method is a Method that is not
// nil; code that takes a Method treats it as no method (see IsNil).
type Method interface {
	// MethodName returns the method's published name (its Name field).
	MethodName() string
	// Family says which family the method belongs to.
	Family() Family
	// Validate checks the coefficients (see Tableau.Validate and
	// Rosenbrock.Validate).
	Validate() error

	method() // only the types of this package implement Method
}

// MethodName returns tb.Name.
func (tb *Tableau) MethodName() string { return tb.Name }

// Family returns ExplicitFamily.
func (tb *Tableau) Family() Family { return ExplicitFamily }

func (tb *Tableau) method() {}

// MethodName returns r.Name.
func (r *Rosenbrock) MethodName() string { return r.Name }

// Family returns RosenbrockFamily.
func (r *Rosenbrock) Family() Family { return RosenbrockFamily }

func (r *Rosenbrock) method() {}

// IsNil reports whether m is nil or holds a nil *Tableau or *Rosenbrock
// (as Options.Method = tb does for a tb that is nil).
func IsNil(m Method) bool {
	switch m := m.(type) {
	case nil:
		return true
	case *Tableau:
		return m == nil
	case *Rosenbrock:
		return m == nil
	}
	return false
}

// Lookup returns the built-in method of either family with the given
// name, compared case-insensitively: tsit5, dp5, vern7, dp8 (explicit),
// rosenbrock23, rodas5p (Rosenbrock).
func Lookup(name string) (Method, error) {
	if tb, err := ByName(name); err == nil {
		return tb, nil
	}
	if r, err := RosenbrockByName(name); err == nil {
		return r, nil
	}
	return nil, fmt.Errorf("method: unknown method %q: known methods are tsit5, dp5, vern7, dp8 (explicit), rosenbrock23, rodas5p (Rosenbrock)", name)
}

// Every returns the built-in methods of both families in a fixed order:
// All(), then AllRosenbrock().
func Every() []Method {
	var out []Method
	for _, tb := range All() {
		out = append(out, tb)
	}
	for _, r := range AllRosenbrock() {
		out = append(out, r)
	}
	return out
}
