package ros

import "math"

// luFactor factors the n×n row-major matrix a in place into L·U with
// partial pivoting, recording the row exchanges in piv. It reports false
// if a pivot is zero or not finite (W singular to working precision).
func luFactor(a []float64, n int, piv []int) bool {
	for k := range n {
		// Pivot: the largest |a_ik| for i ≥ k.
		p, big := k, math.Abs(a[k*n+k])
		for i := k + 1; i < n; i++ {
			if v := math.Abs(a[i*n+k]); v > big {
				p, big = i, v
			}
		}
		if !(big > 0) || math.IsInf(big, 0) {
			return false
		}
		piv[k] = p
		if p != k {
			rk, rp := a[k*n:(k+1)*n], a[p*n:(p+1)*n]
			for j := range rk {
				rk[j], rp[j] = rp[j], rk[j]
			}
		}
		inv := 1 / a[k*n+k]
		for i := k + 1; i < n; i++ {
			l := a[i*n+k] * inv
			a[i*n+k] = l
			if l == 0 {
				continue
			}
			ri, rk := a[i*n:(i+1)*n], a[k*n:(k+1)*n]
			for j := k + 1; j < n; j++ {
				ri[j] -= float64(l * rk[j])
			}
		}
	}
	return true
}

// luSolve solves (L·U)·x = P·b in place in b, with the factors from
// luFactor.
func luSolve(a []float64, n int, piv []int, b []float64) {
	for k := range n {
		if p := piv[k]; p != k {
			b[k], b[p] = b[p], b[k]
		}
	}
	for i := 1; i < n; i++ { // L·z = b, unit diagonal
		var s float64
		ri := a[i*n : i*n+i]
		for j, l := range ri {
			s += float64(l * b[j])
		}
		b[i] -= s
	}
	for i := n - 1; i >= 0; i-- { // U·x = z
		var s float64
		for j := i + 1; j < n; j++ {
			s += float64(a[i*n+j] * b[j])
		}
		b[i] = (b[i] - s) / a[i*n+i]
	}
}

// luSolveT solves Wᵀ·x = b in place in b, with the factors of W from
// luFactor (P·W = L·U, so Wᵀ = Uᵀ·Lᵀ·P).
func luSolveT(a []float64, n int, piv []int, b []float64) {
	for i := range n { // Uᵀ·z = b
		var s float64
		for j := range i {
			s += float64(a[j*n+i] * b[j])
		}
		b[i] = (b[i] - s) / a[i*n+i]
	}
	for i := n - 1; i >= 0; i-- { // Lᵀ·u = z, unit diagonal
		var s float64
		for j := i + 1; j < n; j++ {
			s += float64(a[j*n+i] * b[j])
		}
		b[i] -= s
	}
	for k := n - 1; k >= 0; k-- { // x = Pᵀ·u
		if p := piv[k]; p != k {
			b[k], b[p] = b[p], b[k]
		}
	}
}
