package control

import "math"

// LaneNorm is Norm for L trajectories side by side, as the SIMD lane
// engine holds them: every per-component array is lane-major, value d of
// lane l at [d·L + l]. Each lane's norm is computed with Norm.Of's
// operations in Norm.Of's order, so it has the bits Norm.Of gives for
// that trajectory alone.
type LaneNorm struct {
	// E and E3 are the error vectors (E3 nil: the RMS norm), lane-major,
	// N·L values each.
	E, E3 []float64
	// ATol and RTol are the tolerances of the N components, shared by
	// the lanes.
	ATol, RTol []float64
	// N is the number of components of the norm, L the number of lanes.
	N, L int
}

// Of writes into err[l] and ok[l], for every lane l with active[l], the
// norm of that lane's attempt from y to y1 with step size h[l]: Norm.Of
// of the lane alone, including its verdict (+Inf and false when the norm
// or any value of the lane's y1 is not finite). y and y1 are lane-major
// states of len(y1)/L components, of which the first N take part in the
// norm.
func (nm *LaneNorm) Of(h, y, y1 []float64, active []bool, err []float64, ok []bool) {
	n, L := nm.N, nm.L
	e, e3, atol, rtol := nm.E[:n*L], nm.E3, nm.ATol[:n], nm.RTol[:n]
	if e3 != nil {
		e3 = e3[:n*L]
	}
	y, y1n := y[:n*L], y1[:n*L]
	for l := range L {
		if !active[l] {
			continue
		}
		hl := h[l]
		var sum5, sum3, fin float64
		for d := range n {
			i := d*L + l
			sc := atol[d] + float64(rtol[d]*MaxAbs(y[i], y1n[i]))
			r := float64(hl*e[i]) / sc
			sum5 += float64(r * r)
			if e3 != nil {
				r3 := float64(hl*e3[i]) / sc
				sum3 += float64(r3 * r3)
			}
			fin += y1n[i] - y1n[i]
		}
		err[l], ok[l] = finishLane(sum5, sum3, fin, n, e3 != nil, y1, l, L)
	}
}

// finishLane ends a lane's norm as Norm.Of ends: the finiteness of the
// lane's components past the n of the norm joins fin, and the norm is
// NormOfSquares's.
func finishLane(sum5, sum3, fin float64, n int, dop853 bool, y1 []float64, l, L int) (float64, bool) {
	for i := n*L + l; i < len(y1); i += L {
		fin += y1[i] - y1[i]
	}
	err := NormOfSquares(sum5, sum3, n, dop853)
	if fin+(err-err) != 0 {
		return math.Inf(1), false
	}
	return err, true
}
