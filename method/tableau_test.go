package method

import (
	"math"
	"math/big"
	"strings"
	"testing"
)

// prec is the working precision of the exact checks. Every float64 is
// exactly representable at this precision, and the sums and products below
// (a few hundred terms of moderate size) lose nothing visible at 1e-14, so
// the checks measure the stored coefficients, not the arithmetic.
const prec = 256

// orderTol bounds |Φ(t) − 1/γ(t)| for every order condition a weight
// vector claims, and the consistency sums (row sums, Σb − 1, ΣE). The
// coefficients are float64 roundings of published values; the residuals
// are of the order of those roundings, |coefficient|·2⁻⁵³ over a few terms.
const orderTol = 1e-14

// orderTolFor returns the order-condition tolerance of a built-in method:
// orderTol except where float64 rounding alone exceeds it.
//
// Tsit5: the order-5 condition of the bushy tree [τ τ τ τ], Σ b_i c_i⁴ =
// 1/5 with c = A·1, misses by 1.05e-14 (b), because its sensitivity to row
// 5 of A is 4·b₅·c₅³ ≈ −12.4 and the nearest float64 roundings of that
// row's coefficients (|a₅₂| ≈ 11.7, half an ulp ≈ 9e-16) leave its sum
// 7e-16 away from c₅. It is not a precision problem of the source: the
// coefficients are the correct float64 roundings of 85-digit values, whose
// residual is below 1e-80; with exact A and float64 b the residual is
// 2.7e-16, with float64 A 1.02e-14 (8.6e-15 from row 5 alone). Any float64
// Tsit5 with nearest-rounded coefficients (OrdinaryDiffEq.jl, diffrax, the
// JAX gradsolve) has the same residual, so the tolerance is 2e-14 rather
// than a nudge of one coefficient away from its nearest rounding.
func orderTolFor(tb *Tableau) float64 {
	if tb == Tsit5 {
		return 2e-14
	}
	return orderTol
}

// failTol is the least residual that counts as a genuinely violated order
// condition when checking that a method's order is not higher than
// declared.
const failTol = 1e-8

func bf(x float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(x) }

func bzero() *big.Float { return new(big.Float).SetPrec(prec) }

// absDiff returns |x − y|, rounded to float64 (only compared with
// tolerances).
func absDiff(x, y *big.Float) float64 {
	f, _ := bzero().Sub(x, y).Float64()
	return math.Abs(f)
}

func bigSum(v []*big.Float) *big.Float {
	s := bzero()
	for _, x := range v {
		s.Add(s, x)
	}
	return s
}

func bigVec(v []float64) []*big.Float {
	out := make([]*big.Float, len(v))
	for i, x := range v {
		out[i] = bf(x)
	}
	return out
}

// minus returns u − v elementwise, exactly.
func minus(u, v []*big.Float) []*big.Float {
	out := make([]*big.Float, len(u))
	for i := range u {
		out[i] = bzero().Sub(u[i], v[i])
	}
	return out
}

// bigTableau holds a tableau's float64 coefficients as exact values.
type bigTableau struct {
	s    int
	a    [][]*big.Float // s×s, zero on and above the diagonal
	b    []*big.Float
	bhat []*big.Float // B − E
	bh3  []*big.Float // B − E3; nil unless E3 is set
}

func toBig(tb *Tableau) *bigTableau {
	s := tb.Stages()
	bt := &bigTableau{s: s, b: bigVec(tb.B)}
	bt.a = make([][]*big.Float, s)
	for i := range s {
		bt.a[i] = make([]*big.Float, s)
		for j := range s {
			if j < i {
				bt.a[i][j] = bf(tb.A[i][j])
			} else {
				bt.a[i][j] = bzero()
			}
		}
	}
	bt.bhat = minus(bt.b, bigVec(tb.E))
	if tb.E3 != nil {
		bt.bh3 = minus(bt.b, bigVec(tb.E3))
	}
	return bt
}

// rootedTree is a rooted tree in canonical form: the root's subtrees as a
// non-increasing list of indices into the list built by rootedTrees.
type rootedTree struct {
	order    int
	children []int
	gamma    int64 // density γ(t)
	sigma    int64 // symmetry σ(t)
}

// rootedTrees returns all rooted trees of order 1..maxOrder, sorted by
// order. A tree of order n is a root over a multiset of smaller trees
// whose orders sum to n − 1; writing each multiset as a non-increasing
// sequence of indices generates every tree exactly once.
func rootedTrees(maxOrder int) []rootedTree {
	trees := []rootedTree{{order: 1, gamma: 1, sigma: 1}}
	for n := 2; n <= maxOrder; n++ {
		var build func(remaining, maxIdx int, kids []int)
		build = func(remaining, maxIdx int, kids []int) {
			if remaining == 0 {
				trees = append(trees, newTree(trees, n, kids))
				return
			}
			for i := maxIdx; i >= 0; i-- {
				if trees[i].order <= remaining {
					build(remaining-trees[i].order, i, append(kids, i))
				}
			}
		}
		build(n-1, len(trees)-1, nil)
	}
	return trees
}

// newTree builds the tree of order n over the subtrees kids (sorted,
// non-increasing) with γ(t) = n·Π γ(t_l) and σ(t) = Π σ(t_l)·Π m_k!, where
// m_k is the multiplicity of each distinct subtree.
func newTree(trees []rootedTree, n int, kids []int) rootedTree {
	t := rootedTree{order: n, children: append([]int(nil), kids...), gamma: int64(n), sigma: 1}
	run := 0
	for l, k := range kids {
		t.gamma *= trees[k].gamma
		t.sigma *= trees[k].sigma
		if l > 0 && kids[l-1] == k {
			run++
		} else {
			run = 1
		}
		t.sigma *= int64(run) // accumulates m_k! over each run of equal subtrees
	}
	return t
}

// treeString writes a tree in bracket notation: τ for a single node,
// [t1 t2 …] for a root over the subtrees t1, t2, ….
func treeString(trees []rootedTree, i int) string {
	t := trees[i]
	if len(t.children) == 0 {
		return "τ"
	}
	parts := make([]string, len(t.children))
	for k, c := range t.children {
		parts[k] = treeString(trees, c)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func factorial(n int) int64 {
	f := int64(1)
	for k := 2; k <= n; k++ {
		f *= int64(k)
	}
	return f
}

func TestRootedTrees(t *testing.T) {
	want := []int{1, 1, 2, 4, 9, 20, 48, 115, 286} // OEIS A000081
	trees := rootedTrees(len(want))
	count := make([]int, len(want))
	labelled := make([]int64, len(want)) // Σ n!/σ(t)
	monotone := make([]int64, len(want)) // Σ n!/(σ(t)·γ(t))
	seen := map[string]bool{}
	for i, tr := range trees {
		n := tr.order
		count[n-1]++
		labelled[n-1] += factorial(n) / tr.sigma
		monotone[n-1] += factorial(n) / (tr.sigma * tr.gamma)
		s := treeString(trees, i)
		if seen[s] {
			t.Errorf("tree %s generated twice", s)
		}
		seen[s] = true
	}
	for k := range want {
		n := k + 1
		if count[k] != want[k] {
			t.Errorf("order %d: %d trees, want %d", n, count[k], want[k])
		}
		// Cayley: n^(n−1) labelled rooted trees on n nodes.
		if w := int64(math.Pow(float64(n), float64(n-1))); labelled[k] != w {
			t.Errorf("order %d: Σ n!/σ = %d, want n^(n−1) = %d", n, labelled[k], w)
		}
		// Monotonically labelled (recursive) trees: (n−1)!.
		if w := factorial(n - 1); monotone[k] != w {
			t.Errorf("order %d: Σ n!/(σγ) = %d, want (n−1)! = %d", n, monotone[k], w)
		}
	}
	for s, g := range map[string]int64{
		"τ": 1, "[τ]": 2, "[[τ]]": 6, "[τ τ]": 3, "[[[τ]]]": 24, "[[τ] τ]": 8, "[τ τ τ]": 4,
		"[τ τ τ τ τ τ τ τ]": 9, "[[[[[[[[τ]]]]]]]]": 362880,
	} {
		found := false
		for i, tr := range trees {
			if treeString(trees, i) == s {
				found = true
				if tr.gamma != g {
					t.Errorf("γ(%s) = %d, want %d", s, tr.gamma, g)
				}
			}
		}
		if !found {
			t.Errorf("tree %s not generated", s)
		}
	}
}

// stageWeights returns g(t) for every tree: g(τ) = (1, …, 1) and
// g([t1 … tk])_i = Π_l (A·g(t_l))_i, so that the elementary weight of t
// for weights w is Φ(t) = wᵀ·g(t).
func stageWeights(bt *bigTableau, trees []rootedTree) [][]*big.Float {
	s := bt.s
	g := make([][]*big.Float, len(trees))
	ag := make([][]*big.Float, len(trees)) // A·g(t)
	for ti, tr := range trees {
		v := make([]*big.Float, s)
		for i := range s {
			v[i] = bf(1)
			for _, k := range tr.children {
				v[i].Mul(v[i], ag[k][i])
			}
		}
		w := make([]*big.Float, s)
		for i := range s {
			w[i] = bzero()
			for j := range i {
				w[i].Add(w[i], bzero().Mul(bt.a[i][j], v[j]))
			}
		}
		g[ti], ag[ti] = v, w
	}
	return g
}

// orderReport summarises the residuals |Φ(t) − 1/γ(t)| of one weight
// vector against the order p it claims.
type orderReport struct {
	worst     float64 // largest residual over the trees of order ≤ p
	worstTree int     // where it occurs
	next      float64 // largest residual over the trees of order p+1
}

func checkWeights(w []*big.Float, g [][]*big.Float, trees []rootedTree, p int) orderReport {
	r := orderReport{worstTree: -1}
	for ti, tr := range trees {
		if tr.order > p+1 {
			continue
		}
		phi := bzero()
		for i, wi := range w {
			phi.Add(phi, bzero().Mul(wi, g[ti][i]))
		}
		res := absDiff(phi, bzero().Quo(bf(1), bf(float64(tr.gamma))))
		if tr.order <= p {
			if res >= r.worst {
				r.worst, r.worstTree = res, ti
			}
		} else {
			r.next = math.Max(r.next, res)
		}
	}
	return r
}

func TestOrderConditions(t *testing.T) {
	trees := rootedTrees(9)
	for _, tb := range All() {
		t.Run(tb.Name, func(t *testing.T) {
			if tb.Order+1 > 9 {
				t.Fatalf("Order %d: trees are generated only up to order 9", tb.Order)
			}
			bt := toBig(tb)
			g := stageWeights(bt, trees)
			type weights struct {
				label string
				w     []*big.Float
				p     int
			}
			ws := []weights{{"b", bt.b, tb.Order}, {"b̂ = B − E", bt.bhat, tb.ErrOrder}}
			if bt.bh3 != nil {
				ws = append(ws, weights{"b̂₃ = B − E3", bt.bh3, 3})
			}
			for _, w := range ws {
				r := checkWeights(w.w, g, trees, w.p)
				t.Logf("%s: order ≤ %d: largest |Φ − 1/γ| = %.3g (tree %s); order %d: largest = %.3g",
					w.label, w.p, r.worst, treeString(trees, r.worstTree), w.p+1, r.next)
				if tol := orderTolFor(tb); r.worst > tol {
					t.Errorf("%s: order condition of %s (order %d) misses by %.3g > %g",
						w.label, treeString(trees, r.worstTree), trees[r.worstTree].order, r.worst, tol)
				}
				if r.next <= failTol {
					t.Errorf("%s: every order-%d condition holds to %.3g: order is higher than the declared %d",
						w.label, w.p+1, r.next, w.p)
				}
			}
		})
	}
}

func TestConsistencySums(t *testing.T) {
	for _, tb := range All() {
		t.Run(tb.Name, func(t *testing.T) {
			worst := 0.0
			for i := range tb.Stages() {
				d := absDiff(bigSum(bigVec(tb.A[i])), bf(tb.C[i]))
				worst = math.Max(worst, d)
				if d > orderTol {
					t.Errorf("row %d: |Σ_j a_ij − c_i| = %.3g > %g", i, d, orderTol)
				}
			}
			t.Logf("largest |Σ_j a_ij − c_i| = %.3g", worst)
			if d := absDiff(bigSum(bigVec(tb.B)), bf(1)); d > orderTol {
				t.Errorf("|Σ b − 1| = %.3g > %g", d, orderTol)
			}
			if d := absDiff(bigSum(bigVec(tb.E)), bzero()); d > orderTol {
				t.Errorf("|Σ E| = %.3g > %g", d, orderTol)
			}
			if tb.E3 != nil {
				if d := absDiff(bigSum(bigVec(tb.E3)), bzero()); d > orderTol {
					t.Errorf("|Σ E3| = %.3g > %g", d, orderTol)
				}
			}
		})
	}
}

func TestBuiltins(t *testing.T) {
	type want struct {
		tb       *Tableau
		name     string
		stages   int
		order    int
		errOrder int
		fsal     bool
		kind     ErrorKind
		qmin     float64
		qmax     float64
		doi      string
	}
	wants := []want{
		{Tsit5, "Tsit5", 7, 5, 4, true, ErrorRMS, 0, 0, "10.1016/j.camwa.2011.06.002"},
		{DP5, "DP5", 7, 5, 4, true, ErrorRMS, 0, 0, "10.1016/0771-050X(80)90013-3"},
		{Vern7, "Vern7", 10, 7, 6, false, ErrorRMS, 0, 0, "10.1007/s11075-009-9290-3"},
		{DP8, "DP8", 13, 8, 5, true, ErrorDOP853, 0.333, 6, "10.1016/0771-050X(80)90013-3"},
	}
	all := All()
	if len(all) != len(wants) {
		t.Fatalf("All() has %d tableaus, want %d", len(all), len(wants))
	}
	for k, w := range wants {
		t.Run(w.name, func(t *testing.T) {
			tb := w.tb
			if tb == nil {
				t.Fatal("nil")
			}
			if all[k] != tb {
				t.Errorf("All()[%d] = %v, want %s", k, all[k].Name, w.name)
			}
			if err := tb.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
			if tb.Name != w.name {
				t.Errorf("Name = %q, want %q", tb.Name, w.name)
			}
			if tb.Stages() != w.stages {
				t.Errorf("Stages() = %d, want %d", tb.Stages(), w.stages)
			}
			if tb.Order != w.order || tb.ErrOrder != w.errOrder {
				t.Errorf("orders %d(%d), want %d(%d)", tb.Order, tb.ErrOrder, w.order, w.errOrder)
			}
			if tb.FSAL() != w.fsal {
				t.Errorf("FSAL() = %v, want %v", tb.FSAL(), w.fsal)
			}
			if tb.Kind != w.kind {
				t.Errorf("Kind = %d, want %d", tb.Kind, w.kind)
			}
			if (tb.E3 != nil) != (w.kind == ErrorDOP853) {
				t.Errorf("E3 set = %v for kind %d", tb.E3 != nil, tb.Kind)
			}
			if tb.QMin != w.qmin || tb.QMax != w.qmax {
				t.Errorf("QMin, QMax = %g, %g, want %g, %g", tb.QMin, tb.QMax, w.qmin, w.qmax)
			}
			if !strings.Contains(tb.Source, w.doi) {
				t.Errorf("Source %q does not cite doi:%s", tb.Source, w.doi)
			}
			if tb.C[tb.Stages()-1] != 1 {
				t.Errorf("last node %g, want 1", tb.C[tb.Stages()-1])
			}
		})
	}
}

// TestDP8ErrorRows checks that E and E3 of DP8 reproduce dop853's two error
// sums: E3 = b − (BHH1 on stage 1, BHH2 on 9, BHH3 on 12), E has weight on
// stages 1 and 6–12 only, and both vanish on the FSAL stage 13.
func TestDP8ErrorRows(t *testing.T) {
	bhh := map[int]float64{0: dop853BHH1, 8: dop853BHH2, 11: dop853BHH3}
	for i := range DP8.Stages() {
		want := bzero().Sub(bf(DP8.B[i]), bf(bhh[i]))
		if d := absDiff(bf(DP8.E3[i]), want); d > 1e-16 {
			t.Errorf("E3[%d] = %.17g, want b − bhh = %.17g", i, DP8.E3[i], want)
		}
	}
	for _, i := range []int{1, 2, 3, 4, 12} {
		if DP8.E[i] != 0 || DP8.B[i] != 0 {
			t.Errorf("stage %d: B = %g, E = %g, want 0", i+1, DP8.B[i], DP8.E[i])
		}
	}
	if DP8.E3[12] != 0 {
		t.Errorf("E3[12] = %g, want 0", DP8.E3[12])
	}
}

// TestVern7Structure checks the structural zeros listed in
// ../shared/reference/gradsolve-jax.md §2.3: a_i2 = 0 for rows 4–10,
// a_{10,8} = a_{10,9} = 0, b₂ = b₃ = b₁₀ = 0, b̂₂ = b̂₃ = b̂₈ = b̂₉ = 0 and
// b̂₁₀ ≠ 0 (1-based).
func TestVern7Structure(t *testing.T) {
	tb := Vern7
	for i := 3; i < 10; i++ {
		if tb.A[i][1] != 0 {
			t.Errorf("a_%d,2 = %g, want 0", i+1, tb.A[i][1])
		}
	}
	if tb.A[9][7] != 0 || tb.A[9][8] != 0 {
		t.Errorf("a_10,8, a_10,9 = %g, %g, want 0", tb.A[9][7], tb.A[9][8])
	}
	bhat := func(i int) float64 { return tb.B[i] - tb.E[i] }
	for _, i := range []int{1, 2, 9} {
		if tb.B[i] != 0 {
			t.Errorf("b_%d = %g, want 0", i+1, tb.B[i])
		}
	}
	for _, i := range []int{1, 2, 7, 8} {
		if bhat(i) != 0 {
			t.Errorf("b̂_%d = %g, want 0", i+1, bhat(i))
		}
	}
	if bhat(9) == 0 {
		t.Error("b̂_10 = 0: the embedded method must use stage 10")
	}
}

// TestReferenceValues compares spot values with independently published
// tables.
func TestReferenceValues(t *testing.T) {
	bhat := func(tb *Tableau, i int) *big.Float { return bzero().Sub(bf(tb.B[i]), bf(tb.E[i])) }
	rat := func(p, q int64) *big.Float { return bzero().Quo(bf(float64(p)), bf(float64(q))) }
	dec := func(s string) *big.Float {
		x, ok := bzero().SetString(s)
		if !ok {
			t.Fatalf("bad decimal %q", s)
		}
		return x
	}
	cases := []struct {
		name string
		got  *big.Float
		want *big.Float
		rel  float64
	}{
		// Tsit5: ../shared/reference/gradsolve-jax.md §2.2 (20 significant
		// digits, transcribed from the paper there).
		{"Tsit5 c5", bf(Tsit5.C[4]), dec("0.98002554090450968573"), 1e-15},
		{"Tsit5 a31", bf(Tsit5.A[2][0]), dec("-0.0084806554923569885444"), 1e-15},
		{"Tsit5 a43", bf(Tsit5.A[3][2]), dec("4.3622954328695814110"), 1e-15},
		{"Tsit5 a52", bf(Tsit5.A[4][1]), dec("-11.748883564062827878"), 1e-15},
		{"Tsit5 a65", bf(Tsit5.A[5][4]), dec("-0.028269050394068382909"), 1e-15},
		{"Tsit5 b1", bf(Tsit5.B[0]), dec("0.096460766818065229518"), 1e-15},
		{"Tsit5 b5", bf(Tsit5.B[4]), dec("-3.2900695154360806799"), 1e-15},
		{"Tsit5 b6", bf(Tsit5.B[5]), dec("2.3247105240997739824"), 1e-15},
		{"Tsit5 b̂1", bhat(Tsit5, 0), dec("0.094680755765839458075"), 1e-15},
		{"Tsit5 b̂2", bhat(Tsit5, 1), dec("0.0091835655403432530968"), 1e-15},
		{"Tsit5 b̂5", bhat(Tsit5, 4), dec("-2.7077123499835254549"), 1e-15},
		{"Tsit5 b̂6", bhat(Tsit5, 5), dec("1.8666284181705870358"), 1e-15},
		{"Tsit5 b̂7", bhat(Tsit5, 6), rat(1, 66), 1e-15},
		{"Tsit5 e7", bf(Tsit5.E[6]), rat(-1, 66), 1e-15},
		// DP5: b̂ as printed by Dormand & Prince (1980), RK5(4)7M, against
		// B − E with E from dopri5.f.
		{"DP5 b̂1", bhat(DP5, 0), rat(5179, 57600), 1e-15},
		{"DP5 b̂3", bhat(DP5, 2), rat(7571, 16695), 1e-15},
		{"DP5 b̂4", bhat(DP5, 3), rat(393, 640), 1e-15},
		{"DP5 b̂5", bhat(DP5, 4), rat(-92097, 339200), 1e-15},
		{"DP5 b̂6", bhat(DP5, 5), rat(187, 2100), 1e-15},
		{"DP5 b̂7", bhat(DP5, 6), rat(1, 40), 1e-15},
		// Vern7: the 40-digit decimals of Verner's floating-point file
		// (RKV76.IIa.Efficient.00001675585.081206), as transcribed in
		// github.com/jacobwilliams/rklib, src/rklib_variable_steps.f90.
		{"Vern7 c6", bf(Vern7.C[5]), dec(".6095094489978381317087004421486024949638"), 1e-15},
		{"Vern7 a10,3", bf(Vern7.A[9][2]), dec("187.3272437654588840752418206154201997384"), 1e-15},
		{"Vern7 a9,6", bf(Vern7.A[8][5]), dec("2.009862268377035895441943593011827554771"), 1e-15},
		{"Vern7 b6", bf(Vern7.B[5]), dec(".1521609265673855740323133199165117535523"), 1e-15},
		{"Vern7 b8", bf(Vern7.B[7]), dec("-.2943031171403250441557244744092703429139"), 1e-15},
		{"Vern7 b̂7", bhat(Vern7, 6), dec(".2289871705411202883378173889763552365362"), 1e-15},
		{"Vern7 b̂10", bhat(Vern7, 9), dec(".2029518466335628222767054793810430358554e-1"), 1e-15},
		// DP8: c6 = 1/3, c7 = 1/4, c9 = 127/195, c11 = 6/7 and bhh1 = 31/127,
		// bhh3 = 3/136 are rationals in dop853.f's decimals.
		{"DP8 c6", bf(DP8.C[5]), rat(1, 3), 1e-15},
		{"DP8 c9", bf(DP8.C[8]), rat(127, 195), 1e-15},
		{"DP8 c11", bf(DP8.C[10]), rat(6, 7), 1e-15},
		{"DP8 b1 − b̂₃1", bf(DP8.E3[0]), bzero().Sub(bf(DP8.B[0]), rat(31, 127)), 1e-15},
		{"DP8 b12 − b̂₃12", bf(DP8.E3[11]), bzero().Sub(bf(DP8.B[11]), rat(3, 136)), 1e-15},
	}
	for _, c := range cases {
		d := absDiff(c.got, c.want)
		w, _ := c.want.Float64()
		if d > c.rel*math.Abs(w) {
			g, _ := c.got.Float64()
			t.Errorf("%s = %.20g, want %.20g (relative difference %.3g)", c.name, g, w, d/math.Abs(w))
		}
	}
}

// copyTableau returns a deep copy of tb named name.
func copyTableau(tb *Tableau, name string) *Tableau {
	c := *tb
	c.Name = name
	c.C = append([]float64(nil), tb.C...)
	c.B = append([]float64(nil), tb.B...)
	c.E = append([]float64(nil), tb.E...)
	if tb.E3 != nil {
		c.E3 = append([]float64(nil), tb.E3...)
	}
	c.A = make([][]float64, len(tb.A))
	for i, row := range tb.A {
		c.A[i] = append([]float64{}, row...)
	}
	return &c
}

func TestValidateErrors(t *testing.T) {
	const name = "Broken"
	cases := []struct {
		desc   string
		base   *Tableau
		mutate func(tb *Tableau)
		words  []string // each must appear in the message, besides the name
	}{
		{"too few stages", DP5, func(tb *Tableau) {
			tb.C, tb.A, tb.B, tb.E = []float64{0}, [][]float64{{}}, []float64{1}, []float64{0}
		}, []string{"stages"}},
		{"B too short", DP5, func(tb *Tableau) { tb.B = tb.B[:6] }, []string{"len(B) = 6"}},
		{"E too long", DP5, func(tb *Tableau) { tb.E = append(tb.E, 0) }, []string{"len(E) = 8"}},
		{"A missing a row", DP5, func(tb *Tableau) { tb.A = tb.A[:6] }, []string{"len(A) = 6"}},
		{"A row too long", DP5, func(tb *Tableau) { tb.A[3] = append(tb.A[3], 0) }, []string{"len(A[3])", "lower triangular"}},
		{"C[0] not zero", DP5, func(tb *Tableau) { tb.C[0] = 0.1; tb.A[0] = []float64{} }, []string{"C[0]"}},
		{"row sum broken", DP5, func(tb *Tableau) { tb.A[3][0] += 1e-6 }, []string{"row 3", "sums to"}},
		{"node broken", Vern7, func(tb *Tableau) { tb.C[5] += 1e-9 }, []string{"row 5", "C[5]"}},
		{"B not summing to 1", DP5, func(tb *Tableau) { tb.B[0] += 1e-6 }, []string{"B sums to"}},
		{"E not summing to 0", Tsit5, func(tb *Tableau) { tb.E[6] = 1.0 / 66 }, []string{"E sums to"}},
		{"E3 not summing to 0", DP8, func(tb *Tableau) { tb.E3[0] += 1e-6 }, []string{"E3 sums to"}},
		{"NaN in A", DP5, func(tb *Tableau) { tb.A[4][1] = math.NaN() }, []string{"A[4][1]", "not finite"}},
		{"NaN in B", Vern7, func(tb *Tableau) { tb.B[3] = math.NaN() }, []string{"B[3]", "not finite"}},
		{"Inf in E", DP5, func(tb *Tableau) { tb.E[2] = math.Inf(1) }, []string{"E[2]", "not finite"}},
		{"NaN node", DP5, func(tb *Tableau) { tb.C[2] = math.NaN() }, []string{"C[2]"}},
		{"ErrOrder = Order", DP5, func(tb *Tableau) { tb.ErrOrder = 5 }, []string{"ErrOrder"}},
		{"ErrOrder > Order", Tsit5, func(tb *Tableau) { tb.ErrOrder = 6 }, []string{"ErrOrder"}},
		{"Order zero", DP5, func(tb *Tableau) { tb.Order = 0 }, []string{"Order"}},
		{"QMin ≥ 1", DP5, func(tb *Tableau) { tb.QMin = 1.5 }, []string{"QMin"}},
		{"QMax ≤ 1", DP8, func(tb *Tableau) { tb.QMax = 0.5 }, []string{"QMax"}},
		{"QMin negative", DP8, func(tb *Tableau) { tb.QMin = -0.2 }, []string{"QMin"}},
		{"ErrorDOP853 without E3", DP5, func(tb *Tableau) { tb.Kind = ErrorDOP853 }, []string{"ErrorDOP853", "E3"}},
		{"E3 too short", DP8, func(tb *Tableau) { tb.E3 = tb.E3[:12] }, []string{"E3"}},
		{"unknown kind", DP5, func(tb *Tableau) { tb.Kind = 7 }, []string{"error kind"}},
	}
	for _, c := range cases {
		t.Run(c.desc, func(t *testing.T) {
			tb := copyTableau(c.base, name)
			if err := tb.Validate(); err != nil {
				t.Fatalf("copy of %s invalid before mutation: %v", c.base.Name, err)
			}
			c.mutate(tb)
			err := tb.Validate()
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
	t.Run("nil tableau", func(t *testing.T) {
		var tb *Tableau
		err := tb.Validate()
		if err == nil || !strings.Contains(err.Error(), "nil") {
			t.Errorf("Validate on nil = %v, want an error naming nil", err)
		}
	})
	t.Run("unnamed tableau", func(t *testing.T) {
		tb := copyTableau(DP5, "")
		tb.B[0] += 1e-6
		err := tb.Validate()
		if err == nil || !strings.Contains(err.Error(), "unnamed") {
			t.Errorf("Validate = %v, want an error naming the unnamed tableau", err)
		}
	})
}

func TestByName(t *testing.T) {
	for name, want := range map[string]*Tableau{
		"tsit5": Tsit5, "TSIT5": Tsit5, "Tsit5": Tsit5,
		"dp5": DP5, "vern7": Vern7, "Vern7": Vern7,
		"DP8": DP8, "dp8": DP8,
	} {
		got, err := ByName(name)
		if err != nil || got != want {
			t.Errorf("ByName(%q) = %v, %v; want %s", name, got, err, want.Name)
		}
	}
	for _, name := range []string{"rk4", "", "tsit"} {
		got, err := ByName(name)
		if err == nil || got != nil {
			t.Errorf("ByName(%q) = %v, %v; want an error", name, got, err)
			continue
		}
		msg := err.Error()
		for _, w := range []string{"unknown method", "tsit5", "dp5", "vern7", "dp8"} {
			if !strings.Contains(msg, w) {
				t.Errorf("ByName(%q): message %q lacks %q", name, msg, w)
			}
		}
		if name != "" && !strings.Contains(msg, name) {
			t.Errorf("ByName(%q): message %q does not repeat the name", name, msg)
		}
	}
}
