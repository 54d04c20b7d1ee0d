package main

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/sym"
	"github.com/gradsolve/gradsolve/sym/tape"
)

// Robertson's rate constants (examples/robertson.ode).
const (
	K1 = 0.04
	K2 = 3e7
	K3 = 1e4
)

// Y2Scale is the scale of y2: √(k1/k2) ≈ 3.65e-5, the quasi-steady value
// of y2 while y1 ≈ 1 and y3 ≈ 0. The network sees u2 = y2/Y2Scale, of
// order one, and the autocatalytic term in these units is
//
//	k2·y2² = k2·Y2Scale²·u2² = k1·u2²,
//
// so the scale of the learned term is k1 (no new constant).
var Y2Scale = math.Sqrt(K1 / K2)

// Net is the shape of a fully connected tanh network: Sizes[0] inputs,
// hidden layers of Sizes[1 : len-1] tanh units, and Sizes[len-1]
// linear outputs.
type Net struct{ Sizes []int }

// DefaultNet is 3 → 16 → 16 → 1: 3·16+16 + 16·16+16 + 16·1+1 = 353
// weights.
var DefaultNet = Net{Sizes: []int{3, 16, 16, 1}}

// NumWeights returns the number of weights and biases.
func (n Net) NumWeights() int {
	c := 0
	for l := 1; l < len(n.Sizes); l++ {
		c += n.Sizes[l-1]*n.Sizes[l] + n.Sizes[l]
	}
	return c
}

// Names returns the parameter names in the order of the parameter
// vector: layer by layer, the matrix W_l row by row (wL_i_j: unit i of
// layer L from unit j of layer L−1), then the biases bL_i.
func (n Net) Names() []string {
	var names []string
	for l := 1; l < len(n.Sizes); l++ {
		for i := range n.Sizes[l] {
			for j := range n.Sizes[l-1] {
				names = append(names, fmt.Sprintf("w%d_%d_%d", l, i, j))
			}
		}
		for i := range n.Sizes[l] {
			names = append(names, fmt.Sprintf("b%d_%d", l, i))
		}
	}
	return names
}

// Blocks returns, per layer, the index ranges [lo, hi) of its matrix
// and of its biases in the parameter vector, and their names.
func (n Net) Blocks() []Block {
	var bs []Block
	k := 0
	for l := 1; l < len(n.Sizes); l++ {
		w := n.Sizes[l-1] * n.Sizes[l]
		bs = append(bs, Block{fmt.Sprintf("W%d", l), k, k + w})
		k += w
		bs = append(bs, Block{fmt.Sprintf("b%d", l), k, k + n.Sizes[l]})
		k += n.Sizes[l]
	}
	return bs
}

// Block is a named range of the parameter vector.
type Block struct {
	Name   string
	Lo, Hi int
}

// Init returns initial weights: each matrix Glorot-uniform,
// U(−a, a) with a = √(6/(fan_in + fan_out)), the hidden biases zero,
// the output bias 1. With the output bias at 1 the untrained network
// is N ≈ 1 plus a random function of order one, so the untrained
// model's autocatalytic rate is k1·u2·(1 + noise): first order in y2
// where the truth is second order, with a random distortion on top.
func (n Net) Init(seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 0x6e657572616c)) // "neural"
	var th []float64
	for l := 1; l < len(n.Sizes); l++ {
		a := math.Sqrt(6 / float64(n.Sizes[l-1]+n.Sizes[l]))
		for range n.Sizes[l] * n.Sizes[l-1] {
			th = append(th, a*(2*r.Float64()-1))
		}
		for range n.Sizes[l] {
			b := 0.0
			if l == len(n.Sizes)-1 {
				b = 1
			}
			th = append(th, b)
		}
	}
	return th
}

// Inputs returns the network's inputs for the state y: (y1, y2/Y2Scale,
// y3), each of order one on the trajectories trained on.
func Inputs(y1, y2, y3 float64) [3]float64 { return [3]float64{y1, y2 / Y2Scale, y3} }

// Eval evaluates the network at the inputs x with weights th (in
// float64, for checks and plots; the solver runs the compiled tape).
func (n Net) Eval(th []float64, x []float64) []float64 {
	a := append([]float64(nil), x...)
	k := 0
	for l := 1; l < len(n.Sizes); l++ {
		in, out := n.Sizes[l-1], n.Sizes[l]
		z := make([]float64, out)
		for i := range out {
			s := 0.0
			for j := range in {
				s += th[k+i*in+j] * a[j]
			}
			z[i] = s
		}
		k += in * out
		for i := range out {
			z[i] += th[k+i]
			if l < len(n.Sizes)-1 {
				z[i] = math.Tanh(z[i])
			}
		}
		k += out
		a = z
	}
	return a
}

// Rate returns the learned autocatalytic rate R(y) = k1·u2·N(y1, u2,
// y3), u2 = y2/Y2Scale, in float64. The true rate is k2·y2² = k1·u2².
func (n Net) Rate(th []float64, y1, y2, y3 float64) float64 {
	x := Inputs(y1, y2, y3)
	return K1 * x[1] * n.Eval(th, x[:])[0]
}

// Model builds Robertson's equations with the autocatalytic term k2·y2²
// replaced by the network:
//
//	y1' = −k1·y1 + k3·y2·y3
//	y2' =  k1·y1 − k3·y2·y3 − R
//	y3' =  R,      R = k1·u2·N(y1, u2, y3; θ),  u2 = y2/Y2Scale,
//
// N the tanh network with one linear output and θ its weights, the
// model's parameters (named as Names gives them). The factor u2 makes
// the rate vanish with y2 (no B + B reaction without B), so y2 stays
// non-negative whatever the weights; N = u2 gives back the true
// k2·y2² = k1·u2². The other two reactions keep their known rates, and
// R enters y2' and y3' with opposite signs, so y1 + y2 + y3 is
// conserved for any θ. The model is marked stiff.
func (n Net) Model(th []float64) (*sym.Model, error) {
	if len(n.Sizes) < 2 || n.Sizes[0] != 3 || n.Sizes[len(n.Sizes)-1] != 1 {
		return nil, fmt.Errorf("neural: network %v: want 3 inputs and 1 output", n.Sizes)
	}
	if th == nil {
		th = make([]float64, n.NumWeights())
	}
	if len(th) != n.NumWeights() {
		return nil, fmt.Errorf("neural: %d weights for a network of %d", len(th), n.NumWeights())
	}
	m := sym.NewModel("robertson-neural")
	m.Stiff = true
	y1, y2, y3 := m.State("y1", 1), m.State("y2", 0), m.State("y3", 0)
	names := n.Names()
	p := make([]sym.Expr, len(names))
	for k, name := range names {
		p[k] = m.Param(name, th[k])
	}
	u2 := y2.MulConst(1 / Y2Scale)
	a := []sym.Expr{y1, u2, y3}
	k := 0
	for l := 1; l < len(n.Sizes); l++ {
		in, out := n.Sizes[l-1], n.Sizes[l]
		z := make([]sym.Expr, out)
		for i := range out {
			terms := make([]sym.Expr, 0, in+1)
			for j := range in {
				terms = append(terms, p[k+i*in+j].Mul(a[j]))
			}
			terms = append(terms, p[k+in*out+i])
			z[i] = sym.Sum(terms...)
			if l < len(n.Sizes)-1 {
				z[i] = sym.Tanh(z[i])
			}
		}
		k += in*out + out
		a = z
	}
	r := u2.Mul(a[0]).MulConst(K1)
	b := y2.Mul(y3).MulConst(K3)
	m.Deriv(y1, y1.MulConst(-K1).Add(b))
	m.Deriv(y2, y1.MulConst(K1).Sub(b).Sub(r))
	m.Deriv(y3, r)
	return m, m.Err()
}

// Problem compiles the model (tape.Build) into a gradsolve problem.
func (n Net) Problem() (*gradsolve.Problem, error) {
	m, err := n.Model(nil)
	if err != nil {
		return nil, err
	}
	set, err := tape.Build(m)
	if err != nil {
		return nil, err
	}
	return set.Problem(), nil
}
