package method

import (
	"math"
	"math/big"
	"math/cmplx"
	"strings"
	"testing"
)

// This file tests the Rosenbrock methods. It shares the rooted trees and
// the math/big helpers (bf, bzero, absDiff, prec, failTol, rootedTrees,
// treeString, checkWeights) with tableau_test.go.

// rosBig holds a Rosenbrock method's float64 coefficients as exact values.
type rosBig struct {
	s     int
	alpha [][]*big.Float // s×s, zero on and above the diagonal
	beta  [][]*big.Float // α + Γ, s×s, with γ on the diagonal
	m     []*big.Float
	mhat  []*big.Float   // M − E
	dense [][]*big.Float // nil or 3×s
}

func rosToBig(r *Rosenbrock) *rosBig {
	s := r.Stages()
	rb := &rosBig{s: s, m: bigVec(r.M), mhat: minus(bigVec(r.M), bigVec(r.E))}
	rb.alpha = make([][]*big.Float, s)
	rb.beta = make([][]*big.Float, s)
	for i := range s {
		rb.alpha[i] = make([]*big.Float, s)
		rb.beta[i] = make([]*big.Float, s)
		for j := range s {
			switch {
			case j < i:
				rb.alpha[i][j] = bf(r.Alpha[i][j])
				rb.beta[i][j] = bzero().Add(bf(r.Alpha[i][j]), bf(r.GammaOff[i][j]))
			case j == i:
				rb.alpha[i][j] = bzero()
				rb.beta[i][j] = bf(r.Gamma)
			default:
				rb.alpha[i][j] = bzero()
				rb.beta[i][j] = bzero()
			}
		}
	}
	for _, row := range r.Dense {
		rb.dense = append(rb.dense, bigVec(row))
	}
	return rb
}

func matVec(a [][]*big.Float, v []*big.Float) []*big.Float {
	out := make([]*big.Float, len(a))
	for i, row := range a {
		out[i] = bzero()
		for j, x := range row {
			out[i].Add(out[i], bzero().Mul(x, v[j]))
		}
	}
	return out
}

// rosStageWeights returns g(t) for every tree, the stage vectors of the
// elementary weights of a Rosenbrock method (Hairer & Wanner II, §IV.7,
// Theorem 7.4 and Table 7.1): g(τ) = (1, …, 1); a vertex with a single
// subtree t₁ contributes (β·g(t₁))_i, with β = α + Γ including γ on the
// diagonal (the J-terms of the stages join a lone derivative); a vertex
// with subtrees t₁ … t_k, k ≥ 2, contributes Π_l (α·g(t_l))_i. The order
// conditions are then mᵀ·g(t) = 1/γ(t), exactly as for Runge–Kutta
// methods, so checkWeights applies. For instance the tree [[τ]] gives
// Σ m_i β_ij β_jk = 1/6, which with β = β₀ + γI is HW's
// Σ m_i β₀_ij β₀_j = 1/6 − γ + γ².
func rosStageWeights(rb *rosBig, trees []rootedTree) [][]*big.Float {
	g := make([][]*big.Float, len(trees))
	ag := make([][]*big.Float, len(trees)) // α·g(t)
	bg := make([][]*big.Float, len(trees)) // β·g(t)
	for ti, tr := range trees {
		v := make([]*big.Float, rb.s)
		for i := range rb.s {
			switch len(tr.children) {
			case 0:
				v[i] = bf(1)
			case 1:
				v[i] = bzero().Set(bg[tr.children[0]][i])
			default:
				v[i] = bf(1)
				for _, k := range tr.children {
					v[i].Mul(v[i], ag[k][i])
				}
			}
		}
		g[ti], ag[ti], bg[ti] = v, matVec(rb.alpha, v), matVec(rb.beta, v)
	}
	return g
}

// rosOrderTol bounds |Φ(t) − 1/γ(t)| for the order conditions a weight
// vector claims (and the Taylor coefficients of the stability functions,
// which are the tall-tree conditions). Rosenbrock23's coefficients are
// float64 roundings of exact values of size ≤ 2.5, and its residuals are
// a few ulps (≤ 3e-17 measured). Rodas5P's come from the 16–17 digit a/C
// data through Γ = (I/γ − C)⁻¹ (cond ≈ 2.6e3) and products over up to
// five stages with β entries up to 6.3, so the data's roundings of
// ~1e-17 are amplified by terms of size up to ~100: the measured worst
// residuals are 6.0e-15 for m, 2.4e-15 for m̂ and 1.8e-14 for the dense
// output (whose H entries reach 81). 1e-13 leaves a factor 5 over the
// worst of these; a coefficient wrong in its 12th digit breaks some
// condition by far more.
const rosOrderTol = 1e-13

func TestRosenbrockOrderConditions(t *testing.T) {
	trees := rootedTrees(7)
	for _, r := range AllRosenbrock() {
		t.Run(r.Name, func(t *testing.T) {
			rb := rosToBig(r)
			g := rosStageWeights(rb, trees)
			for _, w := range []struct {
				label string
				w     []*big.Float
				p     int
			}{{"m", rb.m, r.Order}, {"m̂ = M − E", rb.mhat, r.ErrOrder}} {
				rep := checkWeights(w.w, g, trees, w.p)
				t.Logf("%s: order ≤ %d: largest |Φ − 1/γ| = %.3g (tree %s); order %d: largest = %.3g",
					w.label, w.p, rep.worst, treeString(trees, rep.worstTree), w.p+1, rep.next)
				if rep.worst > rosOrderTol {
					t.Errorf("%s: order condition of %s (order %d) misses by %.3g > %g",
						w.label, treeString(trees, rep.worstTree), trees[rep.worstTree].order, rep.worst, rosOrderTol)
				}
				if rep.next <= failTol {
					t.Errorf("%s: every order-%d condition holds to %.3g: order is higher than the declared %d",
						w.label, w.p+1, rep.next, w.p)
				}
			}
		})
	}
}

// denseOrder is the order of each built-in continuous extension: ode23s's
// interpolant is of order 2 (Shampine & Reichelt 1997); Rodas5P's is of
// order 4 (Steinebach 2023; JAX reference §2.5).
var denseOrder = map[string]int{"Rosenbrock23": 2, "Rodas5P": 4}

// TestRosenbrockDenseOrder checks the continuous extension's order
// conditions Σ_i b_i(θ)·Φ_i(t) = θ^ρ(t)/γ(t) for ρ(t) ≤ p at several θ,
// where b_i(θ) = θ·m_i + θ(1−θ)·(D1_i + θ·D2_i + θ²·D3_i) are the
// weights of the formula of Rosenbrock.Dense. The stage vectors g(t) are
// those of the step (the stages do not depend on θ), so the conditions
// follow from comparing with the Taylor expansion of y(t + θh) as for
// the step itself. The tolerance is rosOrderTol (same coefficients, same
// arithmetic); that some order-(p+1) condition fails is checked too.
func TestRosenbrockDenseOrder(t *testing.T) {
	trees := rootedTrees(6)
	for _, r := range AllRosenbrock() {
		t.Run(r.Name, func(t *testing.T) {
			p, ok := denseOrder[r.Name]
			if !ok || r.Dense == nil {
				t.Fatalf("no dense output or no declared dense order")
			}
			rb := rosToBig(r)
			g := rosStageWeights(rb, trees)
			var worst, next float64
			for _, th := range []float64{0.125, 0.25, 0.5, 0.75, 0.9} {
				theta := bf(th)
				w := make([]*big.Float, rb.s)
				for i := range rb.s {
					// θ(1−θ)·(D1 + θ·(D2 + θ·D3)) + θ·m
					h := bzero().Mul(theta, rb.dense[2][i])
					h.Add(h, rb.dense[1][i]).Mul(h, theta).Add(h, rb.dense[0][i])
					h.Mul(h, bf(th*(1-th))) // exact: th has few bits
					w[i] = h.Add(h, bzero().Mul(theta, rb.m[i]))
				}
				for ti, tr := range trees {
					if tr.order > p+1 {
						continue
					}
					phi := bzero()
					for i := range rb.s {
						phi.Add(phi, bzero().Mul(w[i], g[ti][i]))
					}
					want := bf(math.Pow(th, float64(tr.order))) // exact: dyadic θ except 0.9, whose power is a rounding of ≤ 1e-16
					want.Quo(want, bf(float64(tr.gamma)))
					res := absDiff(phi, want)
					if tr.order <= p {
						worst = math.Max(worst, res)
					} else {
						next = math.Max(next, res)
					}
				}
			}
			t.Logf("dense order ≤ %d: largest residual %.3g; order %d: %.3g", p, worst, p+1, next)
			if worst > rosOrderTol {
				t.Errorf("dense output misses an order-≤%d condition by %.3g > %g", p, worst, rosOrderTol)
			}
			if next <= failTol {
				t.Errorf("dense output satisfies every order-%d condition (to %.3g): order higher than %d", p+1, next, p)
			}
		})
	}
}

// stabilitySeries returns the Taylor coefficients r_0..r_n of the
// stability function of the weights w: for y' = λy (J = λ, f_t = 0,
// z = hλ, y = 1) the stages are K_i = z·(1 + Σ_{j<i} β_ij·K_j)/(1 − γz)
// with β = α + Γ, and R(z) = 1 + Σ w_i·K_i. The series are computed in
// math/big from the float64 coefficients, so the result measures the
// coefficients only.
func stabilitySeries(r *Rosenbrock, w []float64, n int) []*big.Float {
	s := r.Stages()
	geo := make([]*big.Float, n+1) // 1/(1 − γz) = Σ γ^k z^k
	geo[0] = bf(1)
	for k := 1; k <= n; k++ {
		geo[k] = bzero().Mul(geo[k-1], bf(r.Gamma))
	}
	K := make([][]*big.Float, s)
	for i := range s {
		S := make([]*big.Float, n+1) // 1 + Σ β_ij K_j
		for k := range S {
			S[k] = bzero()
		}
		S[0].SetInt64(1)
		for j := range i {
			b := bzero().Add(bf(r.Alpha[i][j]), bf(r.GammaOff[i][j]))
			for k := range n + 1 {
				S[k].Add(S[k], bzero().Mul(b, K[j][k]))
			}
		}
		K[i] = make([]*big.Float, n+1)
		K[i][0] = bzero()
		for k := 1; k <= n; k++ { // (z·S·geo)_k = Σ_{l<k} S_l·geo_{k−1−l}
			K[i][k] = bzero()
			for l := range k {
				K[i][k].Add(K[i][k], bzero().Mul(S[l], geo[k-1-l]))
			}
		}
	}
	R := make([]*big.Float, n+1)
	for k := range R {
		R[k] = bzero()
		for i := range s {
			R[k].Add(R[k], bzero().Mul(bf(w[i]), K[i][k]))
		}
	}
	R[0].Add(R[0], bf(1))
	return R
}

// stability evaluates R(z) = 1 + Σ w_i·K_i in complex128.
func stability(r *Rosenbrock, w []float64, z complex128) complex128 {
	s := r.Stages()
	K := make([]complex128, s)
	R := complex(1, 0)
	for i := range s {
		S := complex(1, 0)
		for j := range i {
			S += complex(r.Alpha[i][j]+r.GammaOff[i][j], 0) * K[j]
		}
		K[i] = z * S / (1 - complex(r.Gamma, 0)*z)
		R += complex(w[i], 0) * K[i]
	}
	return R
}

// stabilityAtInfinity returns R(∞) computed in math/big, and the size
// Σ_i |w_i·K_i| of the terms it sums: as z → ∞ the stages tend to
// K_i = −(1 + Σ_{j<i} β_ij·K_j)/γ and R(∞) = 1 + Σ w_i·K_i.
func stabilityAtInfinity(r *Rosenbrock, w []float64) (rinf, size float64) {
	s := r.Stages()
	K := make([]*big.Float, s)
	R := bf(1)
	for i := range s {
		S := bf(1)
		for j := range i {
			b := bzero().Add(bf(r.Alpha[i][j]), bf(r.GammaOff[i][j]))
			S.Add(S, b.Mul(b, K[j]))
		}
		K[i] = S.Quo(S, bf(-r.Gamma))
		term := bzero().Mul(bf(w[i]), K[i])
		R.Add(R, term)
		x, _ := term.Float64()
		size += math.Abs(x)
	}
	rinf, _ = R.Float64()
	return rinf, size
}

func embedded(r *Rosenbrock) []float64 {
	mh := make([]float64, r.Stages())
	for i := range mh {
		mh[i] = r.M[i] - r.E[i]
	}
	return mh
}

// TestRosenbrockStabilityFunction checks that the stability function R of
// the solution weights agrees with e^z through z^Order and the embedded
// R̂ through z^ErrOrder, and not beyond for R (a method whose R matched
// one more term would be declared with too low an order for linear
// problems only, which is possible; only the declared terms are
// required, the next one is logged). Coefficients are compared with
// 1/k! to rosOrderTol (the linear conditions are the tall-tree order
// conditions, same arithmetic). Then, independently, R(z) is evaluated
// in complex128 at small z along several rays: |R(z) − e^z| / |z|^(p+1)
// must stay bounded, by 2·|r_{p+1} − 1/(p+1)!| + 1 (the leading error
// coefficient, with room for the higher terms at |z| ≤ 0.1 and for
// rounding: at the smallest |z| = 0.0125, |z|^(p+1) ≥ 3.8e-12 for p ≤ 5,
// so a rounding error of 1e-15 in R adds at most 3e-4 to the ratio).
func TestRosenbrockStabilityFunction(t *testing.T) {
	for _, r := range AllRosenbrock() {
		t.Run(r.Name, func(t *testing.T) {
			for _, c := range []struct {
				label string
				w     []float64
				p     int
			}{{"R", r.M, r.Order}, {"R̂", embedded(r), r.ErrOrder}} {
				R := stabilitySeries(r, c.w, c.p+1)
				fact := bf(1)
				var lead float64
				for k := 0; k <= c.p+1; k++ {
					if k > 0 {
						fact.Mul(fact, bf(float64(k)))
					}
					res := absDiff(R[k], bzero().Quo(bf(1), fact))
					if k <= c.p && res > rosOrderTol {
						t.Errorf("%s: z^%d coefficient differs from 1/%d! by %.3g", c.label, k, k, res)
					}
					if k == c.p+1 {
						lead = res
						t.Logf("%s: |r_%d − 1/%d!| = %.6g", c.label, k, k, res)
					}
				}
				bound := 2*lead + 1
				for _, phi := range []float64{0, 0.5, 1, 2, 3} { // rays z = ρ·e^{iφ}, φ = π (negative reals) and others
					for _, rho := range []float64{0.1, 0.05, 0.025, 0.0125} {
						z := cmplx.Rect(rho, math.Pi-phi)
						q := cmplx.Abs(stability(r, c.w, z)-cmplx.Exp(z)) / math.Pow(rho, float64(c.p+1))
						if q > bound {
							t.Errorf("%s: |R(z) − e^z|/|z|^%d = %.3g at z = %v, above %.3g", c.label, c.p+1, q, z, bound)
						}
					}
				}
			}
		})
	}
}

// TestRosenbrockLStable samples |R(z)| on the imaginary axis and in the
// left half-plane (|z| from 1e-3 to 1e8) and requires |R(z)| ≤ 1 + 1e-13
// (A-stability; near z = 0 |R| is 1 − O(|z|^(p+1)), and complex128
// evaluation over at most 8 stages with coefficients below 13 rounds to
// well under 1e-13). It requires R(∞) = 0 (L-stability), evaluated in
// math/big from the float64 coefficients: each coefficient carries a
// rounding of at most 2⁻⁵³ relative, so R(∞) may be off zero by a few
// such units of the terms it sums, Σ|w_i·K_i(∞)| (≈ 1 for Rosenbrock23,
// ≈ 198 for Rodas5P, whose R(∞) is −9e-15): the tolerance is 1e-15 times
// that size (9 units of 2⁻⁵³). Finally |R(−1e12)| ≤ 1e-10: R(z) =
// R(∞) + O(1/z), and |z·R(z)| measures 4.83 (Rosenbrock23) and 12.5
// (Rodas5P) for z from −1e8 to −1e12.
func TestRosenbrockLStable(t *testing.T) {
	for _, r := range AllRosenbrock() {
		t.Run(r.Name, func(t *testing.T) {
			worst := 0.0
			for e := -3.0; e <= 8; e += 0.25 {
				rho := math.Pow(10, e)
				for k := 0; k <= 32; k++ { // φ from π/2 to 3π/2, both ends on the imaginary axis
					phi := math.Pi/2 + math.Pi*float64(k)/32
					z := cmplx.Rect(rho, phi)
					if k == 0 || k == 32 {
						z = complex(0, imag(z))
					}
					a := cmplx.Abs(stability(r, r.M, z))
					worst = math.Max(worst, a)
					if a > 1+1e-13 {
						t.Errorf("|R(%v)| = %.17g > 1", z, a)
					}
				}
			}
			t.Logf("largest sampled |R(z)| on Re z ≤ 0: %.17g", worst)
			ri, size := stabilityAtInfinity(r, r.M)
			if math.Abs(ri) > 1e-15*size {
				t.Errorf("R(∞) = %.3g, want 0 (to %.3g)", ri, 1e-15*size)
			}
			if a := cmplx.Abs(stability(r, r.M, -1e12)); a > 1e-10 {
				t.Errorf("|R(−1e12)| = %.3g, want ≈ 0", a)
			}
			rh, _ := stabilityAtInfinity(r, embedded(r))
			t.Logf("R(∞) = %.3g (terms of total size %.3g); R̂(∞) = %.6g; |R(−1e12)| = %.3g",
				ri, size, rh, cmplx.Abs(stability(r, r.M, -1e12)))
		})
	}
}

// ros23Problem is a small nonlinear, non-autonomous test problem with an
// analytic Jacobian and ∂f/∂t:
//
//	y1' = −λ·y1 + y1·y2 + sin(t)·y2
//	y2' = y1 − y2³ + t²
type ros23Problem struct{ lambda float64 }

func (p ros23Problem) f(t float64, y []float64) []float64 {
	return []float64{-p.lambda*y[0] + y[0]*y[1] + math.Sin(t)*y[1], y[0] - y[1]*y[1]*y[1] + t*t}
}

func (p ros23Problem) jac(t float64, y []float64) [2][2]float64 {
	return [2][2]float64{{-p.lambda + y[1], y[0] + math.Sin(t)}, {1, -3 * y[1] * y[1]}}
}

func (p ros23Problem) ft(t float64, y []float64) []float64 {
	return []float64{math.Cos(t) * y[1], 2 * t}
}

// solve2 solves w·x = b for a 2×2 w by Cramer's rule.
func solve2(w [2][2]float64, b []float64) []float64 {
	det := w[0][0]*w[1][1] - w[0][1]*w[1][0]
	return []float64{(w[1][1]*b[0] - w[0][1]*b[1]) / det, (w[0][0]*b[1] - w[1][0]*b[0]) / det}
}

func wMatrix(J [2][2]float64, hg float64) [2][2]float64 {
	return [2][2]float64{{1 - hg*J[0][0], -hg * J[0][1]}, {-hg * J[1][0], 1 - hg*J[1][1]}}
}

// ode23sStep is one step of ode23s exactly as Shampine & Reichelt write it
// (see the doc comment of Rosenbrock23), returning y_new, their error
// vector h/6·(k1 − 2k2 + k3), k1 and k2.
func ode23sStep(p ros23Problem, t, h float64, y []float64) (ynew, err, k1, k2 []float64) {
	d := 1 / (2 + math.Sqrt2)
	e32 := 6 + math.Sqrt2
	J, T := p.jac(t, y), p.ft(t, y)
	W := wMatrix(J, h*d)
	F0 := p.f(t, y)
	k1 = solve2(W, []float64{F0[0] + h*d*T[0], F0[1] + h*d*T[1]})
	F1 := p.f(t+h/2, []float64{y[0] + h/2*k1[0], y[1] + h/2*k1[1]})
	k2 = solve2(W, []float64{F1[0] - k1[0], F1[1] - k1[1]})
	k2[0] += k1[0]
	k2[1] += k1[1]
	ynew = []float64{y[0] + h*k2[0], y[1] + h*k2[1]}
	F2 := p.f(t+h, ynew)
	var b3 [2]float64
	for i := range 2 {
		b3[i] = F2[i] - e32*(k2[i]-F1[i]) - 2*(k1[i]-F0[i]) + h*d*T[i]
	}
	k3 := solve2(W, b3[:])
	err = make([]float64, 2)
	for i := range 2 {
		err[i] = h / 6 * (k1[i] - 2*k2[i] + k3[i])
	}
	return ynew, err, k1, k2
}

// incrementStep is one step of the increment form of Rosenbrock for a
// 2-state problem, written from the formula in the type's doc comment.
// It returns y_new, the error Σ e_i·K_i, the stages K and the f value
// of the last stage.
func incrementStep(r *Rosenbrock, p ros23Problem, t, h float64, y []float64) (ynew, err []float64, K [][]float64, flast []float64) {
	s := r.Stages()
	J, T := p.jac(t, y), p.ft(t, y)
	W := wMatrix(J, h*r.Gamma)
	K = make([][]float64, s)
	for i := range s {
		yi := append([]float64(nil), y...)
		acc := []float64{0, 0}
		for j := range i {
			for n := range 2 {
				yi[n] += r.Alpha[i][j] * K[j][n]
				acc[n] += r.GammaOff[i][j] * K[j][n]
			}
		}
		fi := p.f(t+r.C[i]*h, yi)
		flast = fi
		rhs := make([]float64, 2)
		for n := range 2 {
			rhs[n] = h*fi[n] + h*(J[n][0]*acc[0]+J[n][1]*acc[1]) + h*h*r.D[i]*T[n]
		}
		K[i] = solve2(W, rhs)
	}
	ynew = append([]float64(nil), y...)
	err = []float64{0, 0}
	for i := range s {
		for n := range 2 {
			ynew[n] += r.M[i] * K[i][n]
			err[n] += r.E[i] * K[i][n]
		}
	}
	return ynew, err, K, flast
}

// denseAt evaluates the continuous extension of Rosenbrock.Dense.
func denseAt(r *Rosenbrock, theta float64, y, ynew []float64, K [][]float64) []float64 {
	out := make([]float64, len(y))
	for n := range y {
		var D [3]float64
		for k := range 3 {
			for i := range K {
				D[k] += r.Dense[k][i] * K[i][n]
			}
		}
		out[n] = (1-theta)*y[n] + theta*(ynew[n]+(1-theta)*(D[0]+theta*(D[1]+theta*D[2])))
	}
	return out
}

// TestRosenbrock23IsOde23s applies ode23s as Shampine & Reichelt write it
// and the increment form with Rosenbrock23's coefficients to a nonlinear,
// non-autonomous problem, mildly and strongly stiff, and compares y_new,
// the error vector (ode23s's is −Σ e_i·K_i: E = m − m̂), the dense
// output (against y + h·(θ(1−θ)/(1−2d)·k1 + θ(θ−2d)/(1−2d)·k2)) and the
// FSAL value f(t + h, y_new).
//
// Tolerances: the two computations are the same algebra in a different
// order of float64 operations, so they differ by rounding only. y_new =
// y + K2 must agree to 1e-14 relative to max(|y|, |y_new|), the size of
// the terms of that sum (with λ = 100 y1 falls from 1 to −0.17, and the
// two routes differ by 9e-16 there, 5e-15 of |y_new|), and the dense
// values to 1e-14 relative to their size. The error
// vector is a difference of stage values that cancel down to O(h³), so
// its rounding is relative to the stages that produce it, not to itself:
// it must agree to 1e-14·max_i |K_i| (max norm), and the measured
// differences are logged.
func TestRosenbrock23IsOde23s(t *testing.T) {
	r := Rosenbrock23
	d := 1 / (2 + math.Sqrt2)
	y := []float64{1, 0.5}
	const t0 = 0.3
	for _, c := range []struct{ lambda, h float64 }{{1, 0.05}, {1, 0.2}, {100, 0.05}, {1e4, 0.1}} {
		p := ros23Problem{c.lambda}
		ynRef, errRef, k1, k2 := ode23sStep(p, t0, c.h, y)
		yn, errv, K, flast := incrementStep(r, p, t0, c.h, y)
		scale := 0.0
		for _, k := range K {
			scale = math.Max(scale, math.Max(math.Abs(k[0]), math.Abs(k[1])))
		}
		var dy, de, dd float64
		for n := range 2 {
			ysc := math.Max(math.Abs(y[n]), math.Abs(ynRef[n]))
			dy = math.Max(dy, math.Abs(yn[n]-ynRef[n])/ysc)
			de = math.Max(de, math.Abs(errv[n]+errRef[n])/scale)
		}
		for _, theta := range []float64{0.3, 0.7} {
			c1 := theta * (1 - theta) / (1 - 2*d)
			c2 := theta * (theta - 2*d) / (1 - 2*d)
			got := denseAt(r, theta, y, yn, K)
			for n := range 2 {
				want := y[n] + c.h*(c1*k1[n]+c2*k2[n])
				dd = math.Max(dd, math.Abs(got[n]-want)/math.Abs(want))
			}
		}
		t.Logf("λ = %g, h = %g: y_new %.3g, err %.3g (err size %.3g, stage size %.3g), dense %.3g",
			c.lambda, c.h, dy, de, math.Hypot(errRef[0], errRef[1]), scale, dd)
		if dy > 1e-14 {
			t.Errorf("λ = %g, h = %g: y_new = %v, ode23s gives %v (relative %.3g)", c.lambda, c.h, yn, ynRef, dy)
		}
		if de > 1e-14 {
			t.Errorf("λ = %g, h = %g: −Σ e_i·K_i = %v, ode23s error %v (%.3g of the stage size)", c.lambda, c.h, errv, errRef, de)
		}
		if dd > 1e-14 {
			t.Errorf("λ = %g, h = %g: dense output differs from ode23s's interpolant by %.3g relative", c.lambda, c.h, dd)
		}
		// FSAL: the last stage's f is f(t + h, y_new), bit for bit.
		if f2 := p.f(t0+c.h, yn); f2[0] != flast[0] || f2[1] != flast[1] {
			t.Errorf("λ = %g, h = %g: last stage f = %v, f(t+h, y_new) = %v", c.lambda, c.h, flast, f2)
		}
	}
}

func TestRosenbrockBuiltins(t *testing.T) {
	wants := []struct {
		r                     *Rosenbrock
		name                  string
		stages, order, errOrd int
		estimate              int
		fsal, stifflyAccurate bool
		doi                   string
	}{
		{Rosenbrock23, "Rosenbrock23", 3, 2, 3, 3, true, false, "10.1137/S1064827594276424"},
		{Rodas5P, "Rodas5P", 8, 5, 4, 5, false, true, "10.1007/s10543-023-00967-x"},
	}
	all := AllRosenbrock()
	if len(all) != len(wants) {
		t.Fatalf("AllRosenbrock() has %d methods, want %d", len(all), len(wants))
	}
	for k, w := range wants {
		t.Run(w.name, func(t *testing.T) {
			r := w.r
			if all[k] != r {
				t.Errorf("AllRosenbrock()[%d] = %s, want %s", k, all[k].Name, w.name)
			}
			if err := r.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
			if r.Name != w.name || r.Stages() != w.stages || r.Order != w.order || r.ErrOrder != w.errOrd {
				t.Errorf("%s: %d stages, order %d(%d); want %s: %d, %d(%d)", r.Name, r.Stages(), r.Order, r.ErrOrder, w.name, w.stages, w.order, w.errOrd)
			}
			if r.EstimateOrder() != w.estimate {
				t.Errorf("EstimateOrder() = %d, want %d", r.EstimateOrder(), w.estimate)
			}
			if r.FSAL() != w.fsal {
				t.Errorf("FSAL() = %v, want %v", r.FSAL(), w.fsal)
			}
			if r.StifflyAccurate() != w.stifflyAccurate {
				t.Errorf("StifflyAccurate() = %v, want %v", r.StifflyAccurate(), w.stifflyAccurate)
			}
			if !strings.Contains(r.Source, w.doi) {
				t.Errorf("Source %q does not cite doi:%s", r.Source, w.doi)
			}
			if r.Dense == nil {
				t.Errorf("no dense output")
			}
		})
	}
}

// TestRosenbrock23Coefficients checks the closed forms against the
// constants d = 1/(2+√2), e32 = 6+√2 computed in float64 as ode23s,
// OrdinaryDiffEq.jl and the JAX reference compute them; the two routes
// differ by rounding only (a few ulps of values ≤ 2.5, so 1e-15).
func TestRosenbrock23Coefficients(t *testing.T) {
	r := Rosenbrock23
	d := 1 / (2 + math.Sqrt2)
	e32 := 6 + math.Sqrt2
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"γ", r.Gamma, d},
		{"Γ21", r.GammaOff[1][0], -d},
		{"Γ31", r.GammaOff[2][0], d * (e32 - 2)},
		{"Γ32", r.GammaOff[2][1], -e32 * d},
		{"d1", r.D[0], d},
		{"d3", r.D[2], -d},
		{"Dense[0][0]", r.Dense[0][0], 1 / (1 - 2*d)},
		{"Dense[0][1]", r.Dense[0][1], -1 / (1 - 2*d)},
	} {
		if math.Abs(c.got-c.want) > 1e-15 {
			t.Errorf("%s = %.17g, want %.17g", c.name, c.got, c.want)
		}
	}
	// E = m − m̂ with m̂ = (1, 4, 1)/6, exactly.
	// float64 rounding of 4/6 and 1 − 4/6: within 1 ulp of 1/3, 1e-16.
	for i, mh := range []float64{1.0 / 6, 4.0 / 6, 1.0 / 6} {
		if math.Abs(r.M[i]-mh-r.E[i]) > 1e-16 {
			t.Errorf("E[%d] = %.17g, want m − m̂ = %.17g", i, r.E[i], r.M[i]-mh)
		}
	}
}

// gammaFull returns Γ of a Rosenbrock method as a dense lower-triangular
// matrix with γ on the diagonal.
func gammaFull(r *Rosenbrock) [][]float64 {
	s := r.Stages()
	G := make([][]float64, s)
	for i := range s {
		G[i] = make([]float64, s)
		copy(G[i], r.GammaOff[i])
		G[i][i] = r.Gamma
	}
	return G
}

// cond2 returns the 2-norm condition number of the invertible matrix a
// given with its inverse, from power iterations on aᵀa and a⁻¹a⁻ᵀ: 2000
// iterations from (1, …, 1) bring the Rayleigh quotients within far less
// than the 0.5 compared below, the eigenvalues being well separated
// (checked by the result's stability between 1000 and 2000 steps).
func cond2(a, ainv [][]float64) (c, cHalf float64) {
	top := func(m [][]float64, iters int) float64 {
		n := len(m)
		v := make([]float64, n)
		for i := range v {
			v[i] = 1
		}
		var lam float64
		for range iters {
			u := make([]float64, n) // u = m·v
			for i := range n {
				for j := range n {
					u[i] += m[i][j] * v[j]
				}
			}
			w := make([]float64, n) // w = mᵀ·u
			for i := range n {
				for j := range n {
					w[j] += m[i][j] * u[i]
				}
			}
			norm := 0.0
			for _, x := range w {
				norm += x * x
			}
			norm = math.Sqrt(norm)
			lam = norm // ‖mᵀm v‖ with ‖v‖ = 1 → σ_max²
			for i := range w {
				v[i] = w[i] / norm
			}
		}
		return math.Sqrt(lam)
	}
	return top(a, 2000) * top(ainv, 2000), top(a, 1000) * top(ainv, 1000)
}

// TestRodas5PChecksums checks the stored a/C data and the converted
// coefficients against ../shared/reference/gradsolve-jax.md §2.5 and the
// structure of the method.
func TestRodas5PChecksums(t *testing.T) {
	ac, r := rodas5pAC, Rodas5P
	s := r.Stages()
	// Stored data, exactly as printed (1-based indices in the reference).
	if ac.A[1][0] != 3.0 || ac.CMat[1][0] != -14.155112264123755 || ac.CMat[7][6] != -9.48861652309627 {
		t.Errorf("A[2,1] = %.17g, C[2,1] = %.17g, C[8,7] = %.17g; want 3, −14.155112264123755, −9.48861652309627",
			ac.A[1][0], ac.CMat[1][0], ac.CMat[7][6])
	}
	if ac.Gamma != 0.21193756319429014 || r.Gamma != ac.Gamma {
		t.Errorf("γ = %.17g", r.Gamma)
	}
	// Σ|H| and Σ|Dense| (= Σ|HD|): sums of 24 terms of size ≤ 81; the
	// float64 summation error is below 24 ulps of the total, 1e-13
	// relative. The reference's HD was computed in float64 with a numpy
	// inverse of Γ⁻¹ (cond ≈ 2.6e3), ours with one rounding per entry,
	// so Σ|HD| may differ by ~cond·ε relative: 1e-12.
	sumAbs := func(m [][]float64) float64 {
		s := 0.0
		for _, row := range m {
			for _, x := range row {
				s += math.Abs(x)
			}
		}
		return s
	}
	if got, want := sumAbs(ac.H), 415.89274467417624; math.Abs(got-want) > 1e-13*want {
		t.Errorf("Σ|H| = %.17g, want %.17g", got, want)
	}
	if got, want := sumAbs(r.Dense), 102.01062464738597; math.Abs(got-want) > 1e-12*want {
		t.Errorf("Σ|HD| = %.17g, want %.17g", got, want)
	} else {
		t.Logf("Σ|HD| = %.17g (reference 102.01062464738597)", got)
	}
	// Consistency residuals, against the reference's 1e-11.
	var worstC, worstD float64
	for i := range s {
		sa, sg := 0.0, r.Gamma
		for j := range i {
			sa += r.Alpha[i][j]
			sg += r.GammaOff[i][j]
		}
		worstC = math.Max(worstC, math.Abs(sa-r.C[i]))
		worstD = math.Max(worstD, math.Abs(sg-r.D[i]))
	}
	sm := 0.0
	for _, m := range r.M {
		sm += m
	}
	t.Logf("max |Σα − c| = %.3g, max |γ + ΣΓ − d| = %.3g, |Σm − 1| = %.3g", worstC, worstD, math.Abs(sm-1))
	if worstC > 1e-11 || worstD > 1e-11 || math.Abs(sm-1) > 1e-11 {
		t.Errorf("consistency residuals above 1e-11")
	}
	// cond₂(Γ⁻¹) ≈ 2557 (the reference gives 4 digits).
	G := gammaFull(r)
	L := make([][]float64, s) // Γ⁻¹ = I/γ − CMat
	for i := range s {
		L[i] = make([]float64, s)
		for j := range i {
			L[i][j] = -ac.CMat[i][j]
		}
		L[i][i] = 1 / ac.Gamma
	}
	c, cHalf := cond2(L, G)
	t.Logf("cond₂(Γ⁻¹) = %.6g (after half the iterations %.6g)", c, cHalf)
	if math.Abs(c-2557) > 0.5 || math.Abs(c-cHalf) > 1e-6*c {
		t.Errorf("cond₂(Γ⁻¹) = %.6g, want 2557 ± 0.5 (converged: %.6g)", c, cHalf)
	}
	// Rows of Dense sum to zero; H·d = 0 in the stored form (the dense
	// output is exact for f = f(t) linear in t). Sums of 8 terms of size
	// ≤ 81·2.3: 1e-12.
	for k, row := range ac.H {
		hd := 0.0
		for i, x := range row {
			hd += x * ac.D[i]
		}
		if math.Abs(hd) > 1e-12 {
			t.Errorf("(H·d)[%d] = %.3g, want 0", k, hd)
		}
	}
	// Structure: E is row 8 of Γ (γ last); m̂ = m − E is row 8 of α
	// followed by 0 (the embedded solution is the stage input Y_8); and
	// that row is β₇ = row 7 of α + Γ with γ on stage 7 (the embedded
	// method is stiffly accurate on stage 7). E and Γ come from the same
	// big-float products rounded once, so E equals Γ's row exactly; the
	// others are sums of two roundings: 4 ulps of values ≤ 13, 1e-14.
	for j := range s {
		if want := G[s-1][j]; r.E[j] != want {
			t.Errorf("E[%d] = %.17g, want Γ[8][%d] = %.17g", j, r.E[j], j, want)
		}
		mh := r.M[j] - r.E[j]
		want := 0.0
		if j < s-1 {
			want = r.Alpha[s-1][j]
		}
		if math.Abs(mh-want) > 1e-14 {
			t.Errorf("m̂[%d] = %.17g, want α[8][%d] = %.17g", j, mh, j, want)
		}
	}
	for j := range s - 1 {
		want := r.Gamma
		if j < s-2 {
			want = r.Alpha[s-2][j] + r.GammaOff[s-2][j]
		}
		if math.Abs(r.Alpha[s-1][j]-want) > 1e-14 {
			t.Errorf("α[8][%d] = %.17g, want β[7][%d] = %.17g", j, r.Alpha[s-1][j], j, want)
		}
	}
}

// TestRosenbrockACConversion checks RosenbrockAC.Increment against an
// independent float64 evaluation of its formulas for Rodas5P:
// (I/γ − CMat)·Γ = I, α = A·Γ, m = B·Γ, e = BTilde·Γ, Dense = H·Γ. Each
// float64 product of a row and a column of length ≤ 8 carries a rounding
// error below 8·ε·Σ_k |x_k|·|Γ_kj| (Higham, Accuracy and Stability of
// Numerical Algorithms, 2nd ed., §3.1), which is the tolerance, entry by
// entry, plus one ulp for the rounding of the converted value.
func TestRosenbrockACConversion(t *testing.T) {
	ac, r := rodas5pAC, Rodas5P
	s := r.Stages()
	G := gammaFull(r)
	const eps = 0x1p-52
	check := func(label string, row []float64, got []float64) {
		t.Helper()
		for j := range got {
			sum, mag := 0.0, 0.0
			for k := j; k < len(row); k++ {
				sum += row[k] * G[k][j]
				mag += math.Abs(row[k] * G[k][j])
			}
			tol := 8*eps*mag + eps*math.Abs(got[j])
			if math.Abs(sum-got[j]) > tol {
				t.Errorf("%s[%d] = %.17g, float64 product gives %.17g (tolerance %.3g)", label, j, got[j], sum, tol)
			}
		}
	}
	for i := range s {
		// Row i of (I/γ − CMat)·Γ against row i of I.
		want := make([]float64, i+1)
		want[i] = 1
		lrow := make([]float64, i+1)
		copy(lrow, ac.CMat[i])
		for j := range i {
			lrow[j] = -lrow[j]
		}
		lrow[i] = 1 / ac.Gamma
		for j := range i + 1 {
			sum, mag := 0.0, 0.0
			for k := j; k <= i; k++ {
				sum += lrow[k] * G[k][j]
				mag += math.Abs(lrow[k] * G[k][j])
			}
			if math.Abs(sum-want[j]) > 8*eps*mag+eps {
				t.Errorf("((I/γ − C)·Γ)[%d][%d] = %.3g, want %g", i, j, sum, want[j])
			}
		}
		check("α row "+string(rune('1'+i)), ac.A[i], r.Alpha[i])
	}
	check("m", ac.B, r.M)
	check("e", ac.BTilde, r.E)
	for k := range ac.H {
		check("Dense row "+string(rune('1'+k)), ac.H[k], r.Dense[k])
	}
	// The conversion is deterministic and reproduces the package value.
	again, err := ac.Increment()
	if err != nil {
		t.Fatal(err)
	}
	for i := range s {
		for j := range i {
			if again.Alpha[i][j] != r.Alpha[i][j] || again.GammaOff[i][j] != r.GammaOff[i][j] {
				t.Errorf("second conversion differs at [%d][%d]", i, j)
			}
		}
	}
}

// copyRosenbrock returns a deep copy of r named name.
func copyRosenbrock(r *Rosenbrock, name string) *Rosenbrock {
	c := *r
	c.Name = name
	cp := func(v []float64) []float64 { return append([]float64(nil), v...) }
	cp2 := func(m [][]float64) [][]float64 {
		if m == nil {
			return nil
		}
		out := make([][]float64, len(m))
		for i, row := range m {
			out[i] = append([]float64{}, row...)
		}
		return out
	}
	c.C, c.D, c.M, c.E = cp(r.C), cp(r.D), cp(r.M), cp(r.E)
	c.Alpha, c.GammaOff, c.Dense = cp2(r.Alpha), cp2(r.GammaOff), cp2(r.Dense)
	return &c
}

func TestRosenbrockValidateErrors(t *testing.T) {
	const name = "Broken"
	cases := []struct {
		desc   string
		base   *Rosenbrock
		mutate func(r *Rosenbrock)
		words  []string // each must appear in the message, besides the name
	}{
		{"no stages", Rosenbrock23, func(r *Rosenbrock) { r.C = nil }, []string{"stages"}},
		{"M too short", Rodas5P, func(r *Rosenbrock) { r.M = r.M[:7] }, []string{"len(M) = 7"}},
		{"E too long", Rosenbrock23, func(r *Rosenbrock) { r.E = append(r.E, 0) }, []string{"len(E) = 4"}},
		{"D too short", Rodas5P, func(r *Rosenbrock) { r.D = r.D[:1] }, []string{"len(D) = 1"}},
		{"Alpha missing a row", Rodas5P, func(r *Rosenbrock) { r.Alpha = r.Alpha[:7] }, []string{"len(Alpha) = 7"}},
		{"Alpha row too long", Rodas5P, func(r *Rosenbrock) { r.Alpha[3] = append(r.Alpha[3], 0) }, []string{"len(Alpha[3])", "lower triangular"}},
		{"GammaOff row too short", Rosenbrock23, func(r *Rosenbrock) { r.GammaOff[2] = r.GammaOff[2][:1] }, []string{"len(GammaOff[2]) = 1"}},
		{"Dense with 2 rows", Rodas5P, func(r *Rosenbrock) { r.Dense = r.Dense[:2] }, []string{"Dense has 2 rows"}},
		{"Dense row too short", Rodas5P, func(r *Rosenbrock) { r.Dense[1] = r.Dense[1][:7] }, []string{"len(Dense[1]) = 7"}},
		{"Dense row not summing to 0", Rosenbrock23, func(r *Rosenbrock) { r.Dense[0][0] += 1e-6 }, []string{"Dense[0] sums to"}},
		{"NaN in Alpha", Rodas5P, func(r *Rosenbrock) { r.Alpha[4][1] = math.NaN() }, []string{"Alpha[4][1]", "finite"}},
		{"Inf in GammaOff", Rodas5P, func(r *Rosenbrock) { r.GammaOff[6][0] = math.Inf(-1) }, []string{"GammaOff[6][0]", "finite"}},
		{"NaN in D", Rosenbrock23, func(r *Rosenbrock) { r.D[2] = math.NaN() }, []string{"D[2]", "finite"}},
		{"NaN in M", Rodas5P, func(r *Rosenbrock) { r.M[3] = math.NaN() }, []string{"M[3]", "not finite"}},
		{"Inf in Dense", Rodas5P, func(r *Rosenbrock) { r.Dense[2][5] = math.Inf(1) }, []string{"Dense[2][5]", "not finite"}},
		{"γ zero", Rosenbrock23, func(r *Rosenbrock) { r.Gamma = 0 }, []string{"Gamma = 0", "> 0"}},
		{"γ negative", Rodas5P, func(r *Rosenbrock) { r.Gamma = -0.2 }, []string{"Gamma = -0.2"}},
		{"γ NaN", Rodas5P, func(r *Rosenbrock) { r.Gamma = math.NaN() }, []string{"Gamma = NaN"}},
		{"C[0] not zero", Rosenbrock23, func(r *Rosenbrock) { r.C[0] = 0.1 }, []string{"C[0]"}},
		{"node broken", Rodas5P, func(r *Rosenbrock) { r.C[3] += 1e-9 }, []string{"row 3 of Alpha", "C[3]"}},
		{"d broken", Rodas5P, func(r *Rosenbrock) { r.D[4] += 1e-9 }, []string{"row 4 of GammaOff", "D[4]"}},
		{"Γ changed without d", Rosenbrock23, func(r *Rosenbrock) { r.GammaOff[1][0] = r.Gamma }, []string{"row 1 of GammaOff"}},
		{"Σm ≠ 1", Rodas5P, func(r *Rosenbrock) { r.M[0] += 1e-6 }, []string{"M sums to"}},
		{"Σe ≠ 0", Rosenbrock23, func(r *Rosenbrock) { r.E[0] = 1.0 / 6 }, []string{"E sums to"}},
		{"no error estimate", Rosenbrock23, func(r *Rosenbrock) { r.E = []float64{0, 0, 0} }, []string{"E is zero"}},
		{"ErrOrder = Order", Rodas5P, func(r *Rosenbrock) { r.ErrOrder = 5 }, []string{"ErrOrder"}},
		{"Order zero", Rosenbrock23, func(r *Rosenbrock) { r.Order = 0 }, []string{"Order = 0"}},
		{"QMin ≥ 1", Rodas5P, func(r *Rosenbrock) { r.QMin = 1 }, []string{"QMin"}},
		{"QMax ≤ 1", Rosenbrock23, func(r *Rosenbrock) { r.QMax = 0.9 }, []string{"QMax"}},
	}
	for _, c := range cases {
		t.Run(c.desc, func(t *testing.T) {
			r := copyRosenbrock(c.base, name)
			if err := r.Validate(); err != nil {
				t.Fatalf("copy of %s invalid before mutation: %v", c.base.Name, err)
			}
			c.mutate(r)
			err := r.Validate()
			if err == nil {
				t.Fatal("Validate returned nil")
			}
			msg := err.Error()
			for _, w := range append([]string{name}, c.words...) {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
		})
	}
	t.Run("nil", func(t *testing.T) {
		var r *Rosenbrock
		if err := r.Validate(); err == nil || !strings.Contains(err.Error(), "nil") {
			t.Errorf("Validate on nil = %v, want an error naming nil", err)
		}
	})
	t.Run("unnamed", func(t *testing.T) {
		r := copyRosenbrock(Rosenbrock23, "")
		r.M[1] += 1e-6
		if err := r.Validate(); err == nil || !strings.Contains(err.Error(), "unnamed") {
			t.Errorf("Validate = %v, want an error naming the unnamed method", err)
		}
	})
	t.Run("valid without dense output", func(t *testing.T) {
		r := copyRosenbrock(Rodas5P, name)
		r.Dense = nil
		if err := r.Validate(); err != nil {
			t.Errorf("Validate with Dense = nil: %v", err)
		}
	})
}

// copyAC returns a deep copy of w.
func copyAC(w *RosenbrockAC) *RosenbrockAC {
	c := *w
	cp := func(v []float64) []float64 { return append([]float64(nil), v...) }
	cp2 := func(m [][]float64) [][]float64 {
		out := make([][]float64, len(m))
		for i, row := range m {
			out[i] = append([]float64{}, row...)
		}
		return out
	}
	c.C, c.D, c.B, c.BTilde = cp(w.C), cp(w.D), cp(w.B), cp(w.BTilde)
	c.A, c.CMat, c.H = cp2(w.A), cp2(w.CMat), cp2(w.H)
	return &c
}

func TestRosenbrockACErrors(t *testing.T) {
	cases := []struct {
		desc   string
		mutate func(w *RosenbrockAC)
		words  []string
	}{
		{"B too short", func(w *RosenbrockAC) { w.B = w.B[:7] }, []string{"len(B) = 7"}},
		{"CMat row too long", func(w *RosenbrockAC) { w.CMat[2] = append(w.CMat[2], 0) }, []string{"len(CMat[2]) = 3"}},
		{"H row too short", func(w *RosenbrockAC) { w.H[0] = w.H[0][:3] }, []string{"len(H[0]) = 3"}},
		{"γ zero", func(w *RosenbrockAC) { w.Gamma = 0 }, []string{"Gamma = 0"}},
		{"NaN in A", func(w *RosenbrockAC) { w.A[5][2] = math.NaN() }, []string{"A[5][2]"}},
		{"Inf weight", func(w *RosenbrockAC) { w.BTilde[7] = math.Inf(1) }, []string{"not finite"}},
		// The sign convention of C is pinned by d: with −C the converted
		// Γ no longer sums to d.
		{"C with the wrong sign", func(w *RosenbrockAC) {
			for _, row := range w.CMat {
				for j := range row {
					row[j] = -row[j]
				}
			}
		}, []string{"GammaOff", "D["}},
		{"a digit changed in A", func(w *RosenbrockAC) { w.A[3][1] += 1e-9 }, []string{"row 3 of Alpha"}},
	}
	for _, c := range cases {
		t.Run(c.desc, func(t *testing.T) {
			w := copyAC(rodas5pAC)
			c.mutate(w)
			r, err := w.Increment()
			if err == nil {
				t.Fatalf("Increment returned %v and no error", r.Name)
			}
			for _, word := range append([]string{"Rodas5P"}, c.words...) {
				if !strings.Contains(err.Error(), word) {
					t.Errorf("message %q lacks %q", err, word)
				}
			}
		})
	}
	var w *RosenbrockAC
	if _, err := w.Increment(); err == nil {
		t.Error("Increment on nil: no error")
	}
}

func TestRosenbrockByName(t *testing.T) {
	for name, want := range map[string]*Rosenbrock{
		"rosenbrock23": Rosenbrock23, "Rosenbrock23": Rosenbrock23, "ROSENBROCK23": Rosenbrock23,
		"rodas5p": Rodas5P, "Rodas5P": Rodas5P, "RODAS5P": Rodas5P,
	} {
		got, err := RosenbrockByName(name)
		if err != nil || got != want {
			t.Errorf("RosenbrockByName(%q) = %v, %v; want %s", name, got, err, want.Name)
		}
	}
	for _, name := range []string{"", "tsit5", "rodas5", "ode23s"} {
		_, err := RosenbrockByName(name)
		if err == nil {
			t.Errorf("RosenbrockByName(%q): no error", name)
			continue
		}
		for _, w := range []string{"rosenbrock23", "rodas5p"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("RosenbrockByName(%q): message %q does not list %s", name, err, w)
			}
		}
	}
}
