// Package lanecheck checks a right-hand side's lane form against its
// scalar form on a few inputs, bit for bit, before a lane engine uses it.
package lanecheck

import (
	"math"

	"github.com/gradsolve/gradsolve/ode"
)

// VJPAgrees is FuncAgrees for a cotangent program and its lane
// form, with cotangents u in [0.5, 1.5) too.
func VJPAgrees(vjp func(t float64, y, p, u, gy, gp []float64), vl func(t, y, p, u, gy, gp []float64), dim, m int) (ok bool) {
	const L = ode.LaneWidth
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	in := inputs(0x2545F4914F6CDD1D)
	t, y, p, u := in(L), in(dim*L), in(m*L), in(dim*L)
	gy, gp := make([]float64, dim*L), make([]float64, m*L)
	vl(t, y, p, u, gy, gp)
	ys, ps, us, wy, wp := make([]float64, dim), make([]float64, m), make([]float64, dim), make([]float64, dim), make([]float64, m)
	same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) || a != a && b != b }
	for l := range L {
		for d := range dim {
			ys[d], us[d] = y[d*L+l], u[d*L+l]
		}
		for j := range m {
			ps[j] = p[j*L+l]
		}
		vjp(t[l], ys, ps, us, wy, wp)
		for d := range dim {
			if !same(gy[d*L+l], wy[d]) {
				return false
			}
		}
		for j := range m {
			if !same(gp[j*L+l], wp[j]) {
				return false
			}
		}
	}
	return true
}

// inputs returns a maker of n values in [0.5, 1.5) from a fixed
// xorshift64 sequence seeded by x, so that every worker checks the same
// inputs.
func inputs(x uint64) func(n int) []float64 {
	return func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			v[i] = 0.5 + float64(x>>11)/(1<<53)
		}
		return v
	}
}

// JVPVJPAgrees is VJPAgrees for a second-derivative cotangent program
// (inputs t, y, p, v, w, u; outputs gy, gp) and its lane form.
func JVPVJPAgrees(f func(t float64, y, p, v, w, u, gy, gp []float64), fl func(t, y, p, v, w, u, gy, gp []float64), dim, m int) (ok bool) {
	const L = ode.LaneWidth
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	in := inputs(0xD1B54A32D192ED03)
	t, y, p, v, w, u := in(L), in(dim*L), in(m*L), in(dim*L), in(m*L), in(dim*L)
	gy, gp := make([]float64, dim*L), make([]float64, m*L)
	fl(t, y, p, v, w, u, gy, gp)
	ys, ps, vs, ws, us := make([]float64, dim), make([]float64, m), make([]float64, dim), make([]float64, m), make([]float64, dim)
	wy, wp := make([]float64, dim), make([]float64, m)
	same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) || a != a && b != b }
	for l := range L {
		for d := range dim {
			ys[d], vs[d], us[d] = y[d*L+l], v[d*L+l], u[d*L+l]
		}
		for j := range m {
			ps[j], ws[j] = p[j*L+l], w[j*L+l]
		}
		f(t[l], ys, ps, vs, ws, us, wy, wp)
		for d := range dim {
			if !same(gy[d*L+l], wy[d]) {
				return false
			}
		}
		for j := range m {
			if !same(gp[j*L+l], wp[j]) {
				return false
			}
		}
	}
	return true
}

// JVPAgrees is FuncAgrees for a tangent program of nout outputs and its
// lane form, with tangents v (dim values) and w (m values) in
// [0.5, 1.5) too.
func JVPAgrees(jvp func(t float64, y, p, v, w, out []float64), jl func(t, y, p, v, w, out []float64), dim, m, nout int) (ok bool) {
	const L = ode.LaneWidth
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	in := inputs(0x61C8864680B583EB)
	t, y, p, v, w := in(L), in(dim*L), in(m*L), in(dim*L), in(m*L)
	out := make([]float64, nout*L)
	jl(t, y, p, v, w, out)
	ys, ps, vs, ws, want := make([]float64, dim), make([]float64, m), make([]float64, dim), make([]float64, m), make([]float64, nout)
	for l := range L {
		for d := range dim {
			ys[d], vs[d] = y[d*L+l], v[d*L+l]
		}
		for j := range m {
			ps[j], ws[j] = p[j*L+l], w[j*L+l]
		}
		jvp(t[l], ys, ps, vs, ws, want)
		for d := range nout {
			if g, e := out[d*L+l], want[d]; math.Float64bits(g) != math.Float64bits(e) && !(g != g && e != e) {
				return false
			}
		}
	}
	return true
}

// FuncAgrees reports whether fl gives, lane by lane, the bits of f on a
// few states and parameters in [0.5, 1.5) and times in [0, 1): the lane
// engines rely on it (ode.LaneFunc), and a lane form that breaks it — a
// hand-written one, say — is not used (f then runs lane by lane, and a
// kernel, which must have FLanes's bits, is not used either). A panic
// in either counts as disagreement.
func FuncAgrees(f ode.Func, fl ode.LaneFunc, dim, m int) bool {
	return OutputsAgree(f, fl, dim, m, dim)
}

// OutputsAgree is FuncAgrees for a program of nout outputs (a Jacobian's
// dim² values).
func OutputsAgree(f ode.Func, fl ode.LaneFunc, dim, m, nout int) (ok bool) {
	const L = ode.LaneWidth
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	t, y, p, out := make([]float64, L), make([]float64, dim*L), make([]float64, m*L), make([]float64, nout*L)
	ys, ps, want := make([]float64, dim), make([]float64, m), make([]float64, nout)
	x := uint64(0x9E3779B97F4A7C15)
	next := func() float64 { // xorshift64: fixed, so every worker checks the same inputs
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return float64(x>>11) / (1 << 53)
	}
	for range 3 {
		for i := range t {
			t[i] = next()
		}
		for i := range y {
			y[i] = 0.5 + next()
		}
		for i := range p {
			p[i] = 0.5 + next()
		}
		fl(t, y, p, out)
		for l := range L {
			for d := range dim {
				ys[d] = y[d*L+l]
			}
			for j := range m {
				ps[j] = p[j*L+l]
			}
			f(t[l], ys, ps, want)
			for d := range nout {
				if g, w := out[d*L+l], want[d]; math.Float64bits(g) != math.Float64bits(w) && !(g != g && w != w) {
					return false
				}
			}
		}
	}
	return true
}
