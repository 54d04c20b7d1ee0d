package sym

import "math"

// Add returns e + x.
func (e Expr) Add(x Expr) Expr { return Apply(OpAdd, e, x) }

// Sub returns e − x.
func (e Expr) Sub(x Expr) Expr { return Apply(OpSub, e, x) }

// Mul returns e · x.
func (e Expr) Mul(x Expr) Expr { return Apply(OpMul, e, x) }

// Div returns e / x. Division by the constant zero records an error.
func (e Expr) Div(x Expr) Expr { return Apply(OpDiv, e, x) }

// Pow returns e^x (pmath.Pow). Constant integer exponents −4…4 and ½
// become multiplications, divisions and square roots.
func (e Expr) Pow(x Expr) Expr { return Apply(OpPow, e, x) }

// Neg returns −e.
func (e Expr) Neg() Expr { return Apply(OpNeg, e) }

// AddConst returns e + c.
func (e Expr) AddConst(c float64) Expr { return e.Add(e.constant(c)) }

// MulConst returns c · e.
func (e Expr) MulConst(c float64) Expr { return e.constant(c).Mul(e) }

// PowConst returns e^c.
func (e Expr) PowConst(c float64) Expr { return e.Pow(e.constant(c)) }

func (e Expr) constant(c float64) Expr {
	if e.g == nil {
		return Expr{}
	}
	return e.g.Const(c)
}

// Sqrt returns √x.
func Sqrt(x Expr) Expr { return Apply(OpSqrt, x) }

// Exp returns e^x.
func Exp(x Expr) Expr { return Apply(OpExp, x) }

// Log returns the natural logarithm of x.
func Log(x Expr) Expr { return Apply(OpLog, x) }

// Sin returns sin x.
func Sin(x Expr) Expr { return Apply(OpSin, x) }

// Cos returns cos x.
func Cos(x Expr) Expr { return Apply(OpCos, x) }

// Tan returns tan x.
func Tan(x Expr) Expr { return Apply(OpTan, x) }

// Tanh returns tanh x.
func Tanh(x Expr) Expr { return Apply(OpTanh, x) }

// Atan2 returns the angle of the point (x, y), math.Atan2(y, x).
func Atan2(y, x Expr) Expr { return Apply(OpAtan2, y, x) }

// Abs returns |x|. Its derivative is taken as sign(x), and −1 at 0.
func Abs(x Expr) Expr { return Apply(OpAbs, x) }

// Min returns the smaller of a and b; its derivative follows the
// smaller operand (b's on a tie).
func Min(a, b Expr) Expr { return Apply(OpMin, a, b) }

// Max returns the larger of a and b; its derivative follows the larger
// operand (b's on a tie).
func Max(a, b Expr) Expr { return Apply(OpMax, a, b) }

// Select returns b where cond > 0 and c elsewhere (c where cond is
// NaN). Its derivative is that of the branch taken, Select(cond, b',
// c'); the condition contributes none.
func Select(cond, b, c Expr) Expr { return Apply(OpSelect, cond, b, c) }

// IfElse returns a where cond ≠ 0 and b where cond = 0. A NaN cond is
// ≠ 0, so it selects a, as in C. Its derivative is that of the branch
// taken, IfElse(cond, a', b'). It is a Select: on cond itself when cond
// is a comparison (its value is 1 or 0), else on Ne(cond, 0).
func IfElse(cond, a, b Expr) Expr {
	g := graphOf(cond, a, b)
	if g == nil {
		return Expr{}
	}
	if !g.own(OpSelect, cond, a, b) {
		return g.Const(math.NaN())
	}
	if !g.nodes[cond.id].Op.IsComparison() {
		cond = Ne(cond, g.Const(0))
	}
	return Select(cond, a, b)
}

// The comparisons return 1 where they hold and 0 elsewhere. Every
// comparison with a NaN operand is false, except Ne, which is true
// (IEEE 754). Their derivative is 0. Gt and Ge are Lt and Le with the
// operands swapped, which compares the same values.

// Lt returns 1 if a < b, else 0.
func Lt(a, b Expr) Expr { return Apply(OpLt, a, b) }

// Le returns 1 if a ≤ b, else 0.
func Le(a, b Expr) Expr { return Apply(OpLe, a, b) }

// Gt returns 1 if a > b, else 0: Lt(b, a).
func Gt(a, b Expr) Expr { return Apply(OpLt, b, a) }

// Ge returns 1 if a ≥ b, else 0: Le(b, a).
func Ge(a, b Expr) Expr { return Apply(OpLe, b, a) }

// Eq returns 1 if a = b, else 0 (0 = −0; NaN equals nothing).
func Eq(a, b Expr) Expr { return Apply(OpEq, a, b) }

// Ne returns 1 if a ≠ b, else 0 (1 when either is NaN).
func Ne(a, b Expr) Expr { return Apply(OpNe, a, b) }

// Floor returns ⌊x⌋ (math.Floor). Its derivative is taken as 0.
func Floor(x Expr) Expr { return Apply(OpFloor, x) }

// Ceil returns ⌈x⌉ (math.Ceil). Its derivative is taken as 0.
func Ceil(x Expr) Expr { return Apply(OpCeil, x) }

// Sign returns 1 for x > 0, −1 for x < 0, and x itself for ±0 and NaN
// (so sign(−0) = −0 and sign(NaN) = NaN). Its derivative is taken as 0.
func Sign(x Expr) Expr { return Apply(OpSign, x) }

// Sum returns x₁ + x₂ + … + xₙ, added left to right (0 for no terms).
// Building a long sum this way costs one node per term.
func Sum(xs ...Expr) Expr {
	if len(xs) == 0 {
		return Expr{}
	}
	s := xs[0]
	for _, x := range xs[1:] {
		s = s.Add(x)
	}
	return s
}

// Dot returns Σ a_i·b_i, added left to right.
func Dot(a, b []Expr) Expr {
	g := graphOf(append(append([]Expr(nil), a...), b...)...)
	if g == nil {
		return Expr{}
	}
	if len(a) != len(b) {
		g.fail("Dot: lengths %d and %d differ", len(a), len(b))
		return g.Const(0)
	}
	if len(a) == 0 {
		return g.Const(0)
	}
	s := a[0].Mul(b[0])
	for i := 1; i < len(a); i++ {
		s = s.Add(a[i].Mul(b[i]))
	}
	return s
}
