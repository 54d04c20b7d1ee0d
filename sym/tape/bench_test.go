package tape_test

import (
	"testing"

	"github.com/gradsolve/gradsolve/systems"
)

// Lorenz right-hand side: the tape interpreter against the hand-written
// Go function, in one run (compare ns/op).
func BenchmarkLorenzF(b *testing.B) {
	y, p, dy := []float64{1, 2, 3}, []float64{10, 28, 8.0 / 3}, make([]float64, 3)
	b.Run("handwritten", func(b *testing.B) {
		f := systems.Lorenz().F
		for range b.N {
			f(0, y, p, dy)
		}
	})
	b.Run("tape", func(b *testing.B) {
		f := mustBuild(b, lorenzModel()).Programs().F
		for range b.N {
			f(0, y, p, dy)
		}
	})
}
