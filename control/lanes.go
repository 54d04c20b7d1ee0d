package control

import "math"

// LaneNorm is Norm for L trajectories side by side, as the SIMD lane
// engine holds them: every per-component array is lane-major in groups
// of W lanes (W divides L), value d of lane l of an array of n
// components per lane at [(l/W)·n·W + d·W + l mod W] — with W = L, at
// [d·L + l]. Each lane's norm is computed with Norm.Of's operations in
// Norm.Of's order, so it has the bits Norm.Of gives for that trajectory
// alone.
type LaneNorm struct {
	// E and E3 are the error vectors (E3 nil: the RMS norm), laid out
	// like the states (all their components, of which the first N take
	// part).
	E, E3 []float64
	// ATol and RTol are the tolerances of the N components, shared by
	// the lanes.
	ATol, RTol []float64
	// N is the number of components of the norm, L the number of lanes,
	// W the width of a group (0: L).
	N, L, W int
}

// Of writes into err[l] and ok[l], for every lane l with active[l], the
// norm of that lane's attempt from y to y1 with step size h[l]: Norm.Of
// of the lane alone, including its verdict (+Inf and false when the norm
// or any value of the lane's y1 is not finite). y and y1 are lane-major
// states of len(y1)/L components, of which the first N take part in the
// norm.
func (nm *LaneNorm) Of(h, y, y1 []float64, active []bool, err []float64, ok []bool) {
	n, L, W := nm.N, nm.L, nm.W
	if W == 0 {
		W = L
	}
	dim := len(y1) / L
	e, e3, atol, rtol := nm.E, nm.E3, nm.ATol[:n], nm.RTol[:n]
	for l := range L {
		if !active[l] {
			continue
		}
		hl := h[l]
		base := (l/W)*dim*W + l%W
		var sum5, sum3, fin float64
		for d := range n {
			i := base + d*W
			sc := atol[d] + float64(rtol[d]*MaxAbs(y[i], y1[i]))
			r := float64(hl*e[i]) / sc
			sum5 += float64(r * r)
			if e3 != nil {
				r3 := float64(hl*e3[i]) / sc
				sum3 += float64(r3 * r3)
			}
			fin += y1[i] - y1[i]
		}
		// The lane's components past the norm's: finite or not.
		for d := n; d < dim; d++ {
			v := y1[base+d*W]
			fin += v - v
		}
		err[l] = NormOfSquares(sum5, sum3, n, e3 != nil)
		ok[l] = fin+(err[l]-err[l]) == 0
		if !ok[l] {
			err[l] = math.Inf(1)
		}
	}
}
