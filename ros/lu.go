package ros

import "math"

// lu is the LU factorisation with partial pivoting of an n×n matrix, in
// place: the solver forms W in a, factor overwrites it with L (unit
// lower, below the diagonal) and U, recording the row exchanges in piv
// and the reciprocals of U's diagonal in inv, so that the many solves of
// a step (one per stage and sensitivity column) multiply where they
// would divide: a division's latency sits on the chain of the back
// substitution.
type lu struct {
	n   int
	a   []float64 // row-major
	piv []int
	inv []float64
}

func newLU(n int) lu {
	return lu{n: n, a: make([]float64, n*n), piv: make([]int, n), inv: make([]float64, n)}
}

// factor factors a in place. It reports false if a pivot is zero or not
// finite (W singular to working precision).
func (f *lu) factor() bool {
	n, a, piv := f.n, f.a, f.piv
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
		f.inv[k] = inv
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

// solve solves (L·U)·x = P·b in place in b (len(b) ≥ n).
func (f *lu) solve(b []float64) {
	n, a, inv := f.n, f.a, f.inv[:f.n]
	b = b[:n]
	for k, p := range f.piv[:n] {
		if p != k {
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
		ri := a[i*n+i+1 : (i+1)*n]
		bi := b[i+1:]
		for j, u := range ri {
			s += float64(u * bi[j])
		}
		b[i] = float64((b[i] - s) * inv[i])
	}
}

// solveT solves Wᵀ·x = b in place in b, with the factors of W from
// factor (P·W = L·U, so Wᵀ = Uᵀ·Lᵀ·P).
func (f *lu) solveT(b []float64) {
	n, a, inv := f.n, f.a, f.inv[:f.n]
	b = b[:n]
	for i := range n { // Uᵀ·z = b
		var s float64
		for j := range i {
			s += float64(a[j*n+i] * b[j])
		}
		b[i] = float64((b[i] - s) * inv[i])
	}
	for i := n - 1; i >= 0; i-- { // Lᵀ·u = z, unit diagonal
		var s float64
		for j := i + 1; j < n; j++ {
			s += float64(a[j*n+i] * b[j])
		}
		b[i] -= s
	}
	for k := n - 1; k >= 0; k-- { // x = Pᵀ·u
		if p := f.piv[k]; p != k {
			b[k], b[p] = b[p], b[k]
		}
	}
}
