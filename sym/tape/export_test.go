package tape

import "testing"

// LorenzModel gives the package's external tests the Lorenz model of
// its own tests.
var LorenzModel = lorenzModel

// All builds every program of s and returns them by name, f included:
// for tests, which fail on an error.
func All(t testing.TB, s *Set) map[string]*Program {
	t.Helper()
	if err := s.BuildAll(); err != nil {
		t.Fatal(err)
	}
	all := map[string]*Program{"f": s.F()}
	for k := range numLazy {
		all[lazyNames[k]] = s.built(k)
	}
	return all
}
