package fit

import (
	"fmt"
	"math"
)

// Gaussian is a Gaussian noise model of m residuals r (data minus model,
// or model minus data): r ~ N(0, C) with
//
//	C = σ²·I                 (Sigma alone; σ = 1 where Sigma is 0),
//	C = σ²·diag(1/w_i)        (Weights: the precision w_i of residual i),
//	C = Covariance            (a full, symmetric positive-definite m×m C).
//
// At most one of Weights and Covariance may be set, and Sigma must be 0
// with Covariance. The whitened residuals are r̃ = L⁻¹r, with L the
// lower-triangular Cholesky factor C = L·Lᵀ (for the diagonal models
// L = diag(σ/√w_i)), so that χ² = rᵀC⁻¹r = ‖r̃‖² and r̃ ~ N(0, I).
type Gaussian struct {
	// Sigma is the standard deviation σ, > 0, of every residual (with
	// Weights: of a residual of weight 1); 0 means 1.
	Sigma float64
	// Weights, when set, holds the precision of each residual (length
	// m, each finite and ≥ 0). A residual of weight 0 counts for
	// nothing.
	Weights []float64
	// Covariance, when set, is the covariance matrix C, m×m row-major:
	// finite, symmetric (to 1e-12 of √(C_ii·C_jj)) and positive
	// definite.
	Covariance []float64
}

// Whitener is a checked Gaussian noise model of m residuals, factored
// once: it whitens residuals and Jacobians (r̃ = L⁻¹r), computes χ², and
// draws noise (L·z). It is not modified after NewWhitener and may be
// used from several goroutines.
type Whitener struct {
	m    int
	kind int       // noiseScalar, noiseDiag or noiseFull
	s    float64   // σ (noiseScalar)
	f    []float64 // √w_i/σ (noiseDiag)
	l    []float64 // Cholesky factor of C, m×m row-major (noiseFull)
}

const (
	noiseScalar = iota
	noiseDiag
	noiseFull
)

// NewWhitener checks g as the noise model of m residuals and factors
// it. A bad model gets an error wrapping ErrInput that names the field
// (Gaussian.Sigma, Gaussian.Weights, Gaussian.Covariance) and the rule
// broken; a covariance that is not positive definite is refused with
// the pivot at which the Cholesky factorisation failed.
func NewWhitener(g Gaussian, m int) (*Whitener, error) {
	return newWhitener(g, m, "Gaussian")
}

// newWhitener is NewWhitener with the field's name in messages (name =
// "Gaussian", or "LSQ.Noise").
func newWhitener(g Gaussian, m int, name string) (*Whitener, error) {
	if m < 1 {
		return nil, inputErr("%d residuals: need at least 1", m)
	}
	if math.IsNaN(g.Sigma) || math.IsInf(g.Sigma, 0) || g.Sigma < 0 {
		return nil, inputErr("%s.Sigma = %g: must be finite and ≥ 0 (0 means 1)", name, g.Sigma)
	}
	sigma := g.Sigma
	if sigma == 0 {
		sigma = 1
	}
	switch {
	case g.Weights != nil && g.Covariance != nil:
		return nil, inputErr("%s: both Weights and Covariance are set: give one", name)
	case g.Covariance != nil:
		if g.Sigma != 0 {
			return nil, inputErr("%s.Sigma = %g with Covariance: the covariance is the whole model; leave Sigma 0", name, g.Sigma)
		}
		return factorCovariance(g.Covariance, m, name)
	case g.Weights != nil:
		if len(g.Weights) != m {
			return nil, inputErr("%s.Weights has length %d: want m = %d (one per residual)", name, len(g.Weights), m)
		}
		f := make([]float64, m)
		for i, w := range g.Weights {
			if math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
				return nil, inputErr("%s.Weights[%d] = %g: must be finite and ≥ 0", name, i, w)
			}
			f[i] = math.Sqrt(w) / sigma
		}
		return &Whitener{m: m, kind: noiseDiag, f: f}, nil
	}
	return &Whitener{m: m, kind: noiseScalar, s: sigma}, nil
}

// factorCovariance checks c (m×m) and returns its Cholesky factor,
// computed column by column (the Cholesky–Banachiewicz order: L_jj =
// √(C_jj − Σ_{k<j} L_jk²), then L_ij for i > j), which reads only the
// lower triangle of c.
func factorCovariance(c []float64, m int, name string) (*Whitener, error) {
	if len(c) != m*m {
		return nil, inputErr("%s.Covariance has length %d: want m·m = %d", name, len(c), m*m)
	}
	for i, v := range c {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, inputErr("%s.Covariance[%d][%d] = %g: must be finite", name, i/m, i%m, v)
		}
	}
	for i := range m {
		for j := range i {
			a, b := c[i*m+j], c[j*m+i]
			if math.Abs(a-b) > 1e-12*math.Sqrt(math.Abs(c[i*m+i]*c[j*m+j])) {
				return nil, inputErr("%s.Covariance is not symmetric: [%d][%d] = %g, [%d][%d] = %g", name, i, j, a, j, i, b)
			}
		}
	}
	l := make([]float64, m*m)
	for j := range m {
		s := c[j*m+j]
		for k := range j {
			s -= l[j*m+k] * l[j*m+k]
		}
		if !(s > 0) {
			return nil, inputErr("%s.Covariance is not positive definite: the Cholesky factorisation fails at pivot %d (%g)", name, j, s)
		}
		l[j*m+j] = math.Sqrt(s)
		for i := j + 1; i < m; i++ {
			s := c[i*m+j]
			for k := range j {
				s -= l[i*m+k] * l[j*m+k]
			}
			l[i*m+j] = s / l[j*m+j]
		}
	}
	return &Whitener{m: m, kind: noiseFull, l: l}, nil
}

// Len returns m, the number of residuals.
func (w *Whitener) Len() int { return w.m }

// Whiten writes L⁻¹·v into dst and returns it (a new slice if dst is
// nil); v has length m. With a full covariance this is forward
// substitution,
//
//	r̃_i = (v_i − Σ_{k<i} L_ik·r̃_k) / L_ii,
//
// the sum in increasing k. It panics if the lengths are not m.
func (w *Whitener) Whiten(dst, v []float64) []float64 {
	if dst == nil {
		dst = make([]float64, w.m)
	}
	w.whitenCols(dst, v, 1)
	return dst
}

// whitenCols whitens the k columns of the m×k row-major matrix v into
// dst (dst and v may not overlap): column c of dst is L⁻¹ times column
// c of v, each entry computed exactly as Whiten computes it.
func (w *Whitener) whitenCols(dst, v []float64, k int) {
	m := w.m
	if len(v) != m*k || len(dst) != m*k {
		panic(fmt.Sprintf("fit: Whitener of %d residuals given %d values (%d wanted) and %d in dst", m, len(v), m*k, len(dst)))
	}
	switch w.kind {
	case noiseScalar:
		for i, x := range v {
			dst[i] = x / w.s
		}
	case noiseDiag:
		for i := range m {
			for c := range k {
				dst[i*k+c] = v[i*k+c] * w.f[i]
			}
		}
	default:
		for i := range m {
			row := dst[i*k : i*k+k]
			copy(row, v[i*k:i*k+k])
			for q := range i {
				lv := w.l[i*m+q]
				for c := range k {
					row[c] -= lv * dst[q*k+c]
				}
			}
			d := w.l[i*m+i]
			for c := range k {
				row[c] /= d
			}
		}
	}
}

// Chi2 returns χ² = rᵀC⁻¹r = ‖L⁻¹r‖², the squares of Whiten's values
// summed in order. It allocates one vector of length m; it panics if
// len(r) is not m.
func (w *Whitener) Chi2(r []float64) float64 {
	return sumSquares(w.Whiten(nil, r))
}

func sumSquares(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return s
}

// Sample writes μ + L·z into dst and returns it (a new slice if dst is
// nil): with z independent standard normal values, a draw of data
// whose noise follows the model. Each entry is accumulated from μ_i in
// increasing column order, μ_i + L_i0·z_0 + L_i1·z_1 + …. A residual of
// weight 0 has infinite variance: its draw is not finite. It panics if
// the lengths are not m.
func (w *Whitener) Sample(dst, mu, z []float64) []float64 {
	m := w.m
	if len(mu) != m || len(z) != m {
		panic(fmt.Sprintf("fit: Whitener.Sample of %d residuals given μ of length %d and z of length %d", m, len(mu), len(z)))
	}
	if dst == nil {
		dst = make([]float64, m)
	}
	for i := range m {
		s := mu[i]
		switch w.kind {
		case noiseScalar:
			s += w.s * z[i]
		case noiseDiag:
			s += z[i] / w.f[i]
		default:
			for j := 0; j <= i; j++ {
				s += w.l[i*m+j] * z[j]
			}
		}
		dst[i] = s
	}
	return dst
}
