package control

import "math"

// PI is the proportional–integral step-size controller of Gustafsson
// (1991) in the form used by Hairer's DOPRI5 and by OrdinaryDiffEq.jl
// (lib/OrdinaryDiffEqCore/src/integrators/controllers.jl). With err the
// scaled error of the step just tried and errOld that of the previous
// accepted step,
//
//	q = clamp( err^Beta1 / errOld^Beta2 / Safety, 1/QMax, 1/QMin )
//	h_new = h / q                        (if err ≤ 1: accept)
//	h_new = h / min(1/QMin, err^Beta1/Safety)   (if err > 1: reject)
//
// and errOld ← max(err, QOldInit) after each accepted step. After a
// rejection the next accepted step may not propose a larger step than
// the one just accepted (Hairer's DOPRI5 rule), which stops a
// reject/accept oscillation. A NaN or infinite err rejects the step and
// shrinks it by QMin.
//
// The constants from DefaultPI(p) are those of OrdinaryDiffEq.jl and
// DiffEqGPU.jl for a method of order p: Beta1 = 7/(10p), Beta2 = 2/(5p),
// Safety = 0.9, QMin = 0.2, QMax = 10, QOldInit = 1e-4 (for Tsit5 this
// is diffrax's PIDController(pcoeff=0.4, icoeff=0.3)).
type PI struct {
	// Beta1 and Beta2 are the exponents of the current and previous
	// errors. Beta2 = 0 gives the classical I controller.
	Beta1, Beta2 float64
	// Safety is the factor γ < 1 that aims below the tolerance.
	Safety float64
	// QMin and QMax bound the ratio h_new/h: QMin < 1 < QMax.
	QMin, QMax float64
	// QOldInit is the floor of errOld, and its value before the first
	// accepted step.
	QOldInit float64
}

// DefaultPI returns the PI controller for a method of the given order
// with OrdinaryDiffEq.jl's constants (see PI). A qmin or qmax of zero
// takes the default 0.2 or 10.
func DefaultPI(order int, qmin, qmax float64) PI {
	if qmin == 0 {
		qmin = 0.2
	}
	if qmax == 0 {
		qmax = 10
	}
	p := float64(order)
	return PI{
		Beta1:    7 / (10 * p),
		Beta2:    2 / (5 * p),
		Safety:   0.9,
		QMin:     qmin,
		QMax:     qmax,
		QOldInit: 1e-4,
	}
}

// State is the memory of one trajectory's controller. Reset it with
// (*PI).Init before each solve.
type State struct {
	log2ErrOld float64 // log₂ errOld, kept so each attempt costs one log₂ and one 2^x
	log2QOld   float64 // log₂ QOldInit
	rejected   bool    // the last attempt was rejected
}

// Init resets st for a new solve.
func (c *PI) Init(st *State) {
	st.log2QOld = log2(c.QOldInit)
	st.log2ErrOld = st.log2QOld
	st.rejected = false
}

// Next judges a step whose scaled error is err and returns whether it is
// accepted and the factor by which to multiply h to get the next step
// size to try. It updates st.
func (c *PI) Next(err float64, st *State) (accept bool, factor float64) {
	if !(err <= 1) { // also catches NaN
		st.rejected = true
		if err > 1 && err <= math.MaxFloat64 {
			q11 := exp2(float64(c.Beta1 * log2(err)))
			return false, 1 / minOf(1/c.QMin, q11/c.Safety)
		}
		return false, c.QMin
	}
	var q float64
	if err == 0 {
		q = 1 / c.QMax
		st.log2ErrOld = st.log2QOld
	} else {
		// q = err^β1 / errOld^β2 / γ, as one power of two.
		l := log2(err)
		q = exp2(float64(c.Beta1*l)-float64(c.Beta2*st.log2ErrOld)) / c.Safety
		q = maxOf(1/c.QMax, minOf(1/c.QMin, q))
		st.log2ErrOld = maxOf(l, st.log2QOld)
	}
	factor = 1 / q
	if st.rejected && factor > 1 {
		factor = 1
	}
	st.rejected = false
	return true, factor
}

// minOf and maxOf are math.Min and math.Max, bit for bit for every pair
// of operands, in a form the compiler inlines: on amd64 math.Min and
// math.Max are assembly calls (math.archMin, archMax), which cost Next a
// few nanoseconds each. Where the operands are ordered (one is strictly
// below the other) the comparison decides, and that is all Next meets
// with a valid controller (its operands are then finite or +Inf,
// positive, and never two zeros: see the notes on NextLanes's machine
// code in pilanes_code.go); equal operands (among them a pair of zeros
// of opposite signs, where the sign of the zero matters) and NaN fall
// through to math's own rules.
func minOf(x, y float64) float64 {
	if x < y {
		return x
	}
	if y < x {
		return y
	}
	return math.Min(x, y)
}

func maxOf(x, y float64) float64 {
	if x > y {
		return x
	}
	if y > x {
		return y
	}
	return math.Max(x, y)
}
