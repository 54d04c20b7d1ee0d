package control

import "math"

// ErrorNorm returns the scaled error norm of a step attempt that went
// from y to the proposal y1 with step size h and error estimate h·e
// (e = Σ_i (b_i − b̂_i)·k_i, the error weights applied to the stages),
// over the first len(e) components:
//
//	sc_d = atol_d + rtol_d·max(|y_d|, |y1_d|)
//	r_d  = (h·e_d) / sc_d
//	‖·‖  = sqrt(Σ_d r_d² / n)                                 (e3 nil: RMS)
//	‖·‖  = Σ_d r_d² / sqrt(n·(Σ_d r_d² + 0.01·Σ_d r3_d²))      (e3 set: DOP853)
//
// with n = len(e) and r3_d = (h·e3_d)/sc_d; the DOP853 form is Hairer's
// combined estimate of dop853 (method.ErrorDOP853), 0 when both sums
// are 0. Each product and quotient is rounded as written (no fused
// multiply–add) and the sums run over d in ascending order, so every
// engine that uses this function, or does the same operations in the
// same order, gets the same bits. A family whose error estimate already
// includes h (Rosenbrock increments) passes h = 1, which is exact.
//
// A proposal that is not finite in any of these components has no
// error estimate: the norm is then +Inf. y, y1, atol, rtol (and e3) must
// hold at least len(e) values.
func ErrorNorm(h float64, e, e3, y, y1, atol, rtol []float64) float64 {
	n := len(e)
	y, y1, atol, rtol = y[:n], y1[:n], atol[:n], rtol[:n]
	var sum5, sum3, fin float64
	if e3 == nil {
		for d := range e {
			sc := atol[d] + float64(rtol[d]*MaxAbs(y[d], y1[d]))
			r := float64(h*e[d]) / sc
			sum5 += float64(r * r)
			fin += y1[d] - y1[d] // 0 if finite, NaN otherwise
		}
	} else {
		e3 = e3[:n]
		for d := range e {
			sc := atol[d] + float64(rtol[d]*MaxAbs(y[d], y1[d]))
			r := float64(h*e[d]) / sc
			r3 := float64(h*e3[d]) / sc
			sum5 += float64(r * r)
			sum3 += float64(r3 * r3)
			fin += y1[d] - y1[d]
		}
	}
	if fin != 0 {
		return math.Inf(1)
	}
	return NormOfSquares(sum5, sum3, n, e3 != nil)
}

// NormOfSquares finishes ErrorNorm from the sums of the squared terms,
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
	if den := sum5 + 0.01*sum3; den > 0 {
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
