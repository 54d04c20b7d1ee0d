package control

import "math"

// Norm is the scaled error norm of one stepper's attempts: the error
// vector(s) the stepper writes and the tolerances, fixed when the
// stepper is made, so that each attempt passes only h and the states.
//
// Of a step attempt that went from y to the proposal y1 with step size
// h and error estimate h·e (e = Σ_i (b_i − b̂_i)·k_i, the error weights
// applied to the stages; E holds e), over the n = len(E) components of
// the norm:
//
//	sc_d = atol_d + rtol_d·max(|y_d|, |y1_d|)
//	r_d  = (h·e_d) / sc_d
//	‖·‖  = sqrt(Σ_d r_d² / n)                                 (E3 nil: RMS)
//	‖·‖  = Σ_d r_d² / sqrt(n·(Σ_d r_d² + 0.01·Σ_d r3_d²))      (E3 set: DOP853)
//
// with r3_d = (h·e3_d)/sc_d; the DOP853 form is Hairer's combined
// estimate of dop853 (method.ErrorDOP853), 0 when both sums are 0. Each
// product and quotient is rounded as written (no fused multiply–add)
// and the sums run over d in ascending order, so every engine that uses
// it, or does the same operations in the same order, gets the same
// bits. A family whose error estimate already includes h (Rosenbrock
// increments) passes h = 1, which is exact.
type Norm struct {
	// E is the error vector, E3 the DOP853 third-order one (nil: the
	// RMS norm); both of length n.
	E, E3 []float64
	// ATol and RTol are the tolerances, at least n values.
	ATol, RTol []float64
}

// Of returns the norm of the attempt from y to y1 with step size h, and
// true; or +Inf and false when the norm or any value of y1 is not finite
// (also the values past n, which take no part in the norm: sensitivities
// integrated on the state's mesh), since such a proposal has no usable
// error estimate. y and y1 hold at least n values.
func (nm *Norm) Of(h float64, y, y1 []float64) (err float64, ok bool) {
	e, e3 := nm.E, nm.E3
	n := len(e)
	y, y1n, atol, rtol := y[:n], y1[:n], nm.ATol[:n], nm.RTol[:n]
	var sum5, sum3, fin float64
	if e3 == nil {
		for d := range e {
			sc := atol[d] + float64(rtol[d]*MaxAbs(y[d], y1n[d]))
			r := float64(h*e[d]) / sc
			sum5 += float64(r * r)
			fin += y1n[d] - y1n[d] // 0 if finite, NaN otherwise
		}
	} else {
		e3 = e3[:n]
		for d := range e {
			sc := atol[d] + float64(rtol[d]*MaxAbs(y[d], y1n[d]))
			r := float64(h*e[d]) / sc
			r3 := float64(h*e3[d]) / sc
			sum5 += float64(r * r)
			sum3 += float64(r3 * r3)
			fin += y1n[d] - y1n[d]
		}
	}
	if len(y1) > n {
		for _, v := range y1[n:] {
			fin += v - v
		}
	}
	err = NormOfSquares(sum5, sum3, n, e3 != nil)
	if fin+(err-err) != 0 { // err − err: 0 if finite, NaN otherwise
		return math.Inf(1), false
	}
	return err, true
}

// OfSquares finishes Norm.Of for code that formed the squared terms
// itself (machine code, four components per instruction): r2 holds r_d²
// for the n = len(r2) components of the norm, r3 the r3_d² of the DOP853
// form (nil: RMS), and y1 the whole proposal. It sums the terms in
// ascending order, as Of does, so the bits are Of's, and gives Of's
// verdict: +Inf and false when the norm or any value of y1 is not
// finite. The finiteness test runs in the same pass as the sums, so that
// its additions overlap theirs instead of following them.
func OfSquares(r2, r3, y1 []float64) (err float64, ok bool) {
	n := len(r2)
	y1n := y1[:n]
	var sum5, sum3, fin float64
	if r3 == nil {
		for d, v := range r2 {
			sum5 += v
			fin += y1n[d] - y1n[d] // 0 if finite, NaN otherwise
		}
	} else {
		r3 = r3[:n]
		for d, v := range r2 {
			sum5 += v
			sum3 += r3[d]
			fin += y1n[d] - y1n[d]
		}
	}
	for _, v := range y1[n:] {
		fin += v - v
	}
	err = NormOfSquares(sum5, sum3, n, r3 != nil)
	if fin+(err-err) != 0 {
		return math.Inf(1), false
	}
	return err, true
}

// NormOfSquares finishes Norm.Of from the sums of the squared terms,
// sum5 = Σ r_d² and sum3 = Σ r3_d² over n components: the RMS norm, or
// with dop853 set Hairer's combined form. Code that forms the terms in
// its own way (machine code, four components per instruction) and sums
// them in ascending order ends here, so the formula exists once.
func NormOfSquares(sum5, sum3 float64, n int, dop853 bool) float64 {
	nf := float64(n)
	if !dop853 {
		return math.Sqrt(sum5 / nf)
	}
	var err float64
	if den := sum5 + float64(0.01*sum3); den > 0 { // the product rounded: no FMA under any GOAMD64
		err = sum5 / math.Sqrt(nf*den)
	}
	return err
}

// Finite reports whether every value of v is finite (neither ±Inf nor
// NaN), in one pass that adds v − v, which is 0 for a finite value and
// NaN otherwise.
func Finite(v []float64) bool {
	var s float64
	for _, x := range v {
		s += x - x
	}
	return s == 0
}
