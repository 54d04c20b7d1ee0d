package fit

import (
	"fmt"
	"math"
	"strconv"
)

// Transform maps an optimiser's working coordinate z to a quantity's
// natural value θ, so that constraints hold by construction:
//
//	Identity:        θ = s·z                       (s: Param.Scale)
//	Log:             θ = exp(z)                    (θ > 0)
//	Logit(lo, hi):   θ = lo + (hi − lo)/(1 + e^(−z))   (lo < θ < hi)
//
// Gradients follow by the chain rule, ∂L/∂z = ∂L/∂θ · dθ/dz with
// dθ/dz = s, θ and (θ − lo)(hi − θ)/(hi − lo). The zero Transform is
// Identity. In floating point a Logit value far out in the tails
// rounds to its bound (|z| > 37): it never leaves [lo, hi].
type Transform struct {
	kind   transformKind
	lo, hi float64
}

type transformKind uint8

const (
	identity transformKind = iota
	logT
	logitT
)

// Identity returns the identity transform (the zero Transform): no
// constraint.
func Identity() Transform { return Transform{} }

// Log returns the log transform θ = exp(z), for a positive quantity.
func Log() Transform { return Transform{kind: logT} }

// Logit returns the scaled logistic transform onto (lo, hi), for a
// bounded quantity. The bounds must be finite with lo < hi (Run checks
// them).
func Logit(lo, hi float64) Transform { return Transform{kind: logitT, lo: lo, hi: hi} }

// Bounds returns the interval of values the transform reaches:
// (−Inf, +Inf), (0, +Inf) or (lo, hi).
func (t Transform) Bounds() (lo, hi float64) {
	switch t.kind {
	case logT:
		return 0, math.Inf(1)
	case logitT:
		return t.lo, t.hi
	}
	return math.Inf(-1), math.Inf(1)
}

// String returns "identity", "log" or "logit(lo, hi)".
func (t Transform) String() string {
	switch t.kind {
	case logT:
		return "log"
	case logitT:
		return fmt.Sprintf("logit(%g, %g)", t.lo, t.hi)
	}
	return "identity"
}

// check returns an error if the transform is malformed.
func (t Transform) check() error {
	switch t.kind {
	case identity, logT:
		return nil
	case logitT:
		if math.IsNaN(t.lo) || math.IsNaN(t.hi) || math.IsInf(t.lo, 0) || math.IsInf(t.hi, 0) || !(t.lo < t.hi) {
			return fmt.Errorf("logit bounds (%g, %g): need finite lo < hi", t.lo, t.hi)
		}
		if math.IsInf(t.hi-t.lo, 0) {
			return fmt.Errorf("logit bounds (%g, %g): hi − lo overflows", t.lo, t.hi)
		}
		return nil
	}
	return fmt.Errorf("unknown transform kind %d", t.kind)
}

// inside reports whether θ lies strictly inside the transform's domain.
func (t Transform) inside(theta float64) bool {
	switch t.kind {
	case logT:
		return theta > 0 && !math.IsInf(theta, 1)
	case logitT:
		return theta > t.lo && theta < t.hi
	}
	return !math.IsNaN(theta) && !math.IsInf(theta, 0)
}

// toWorking returns z for θ (θ inside the domain; s the identity's
// scale).
func (t Transform) toWorking(theta, s float64) float64 {
	switch t.kind {
	case logT:
		return math.Log(theta)
	case logitT:
		return math.Log((theta - t.lo) / (t.hi - theta))
	}
	return theta / s
}

// natural returns θ(z) and dθ/dz.
func (t Transform) natural(z, s float64) (theta, dtheta float64) {
	switch t.kind {
	case logT:
		theta = math.Exp(z)
		return theta, theta
	case logitT:
		// σ(z) and 1 − σ(z) each computed without cancellation.
		var sig, comp float64
		if z >= 0 {
			e := math.Exp(-z)
			sig, comp = 1/(1+e), e/(1+e)
		} else {
			e := math.Exp(z)
			sig, comp = e/(1+e), 1/(1+e)
		}
		w := t.hi - t.lo
		theta = t.lo + w*sig
		if comp < sig { // nearer hi: measure from hi, then clamp
			theta = t.hi - w*comp
		}
		theta = math.Min(math.Max(theta, t.lo), t.hi)
		return theta, w * sig * comp
	}
	return s * z, s
}

func itoa(i int) string { return strconv.Itoa(i) }
