package sym

// Add returns e + x.
func (e Expr) Add(x Expr) Expr { return Apply(OpAdd, e, x) }

// Sub returns e − x.
func (e Expr) Sub(x Expr) Expr { return Apply(OpSub, e, x) }

// Mul returns e · x.
func (e Expr) Mul(x Expr) Expr { return Apply(OpMul, e, x) }

// Div returns e / x. Division by the constant zero records an error.
func (e Expr) Div(x Expr) Expr { return Apply(OpDiv, e, x) }

// Pow returns e^x (math.Pow). Constant integer exponents −4…4 and ½
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

// Select returns b where cond > 0 and c elsewhere.
func Select(cond, b, c Expr) Expr { return Apply(OpSelect, cond, b, c) }

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
