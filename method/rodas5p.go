package method

// rodas5pAC is Rodas5P as published, in the transformed a/C form of
// RosenbrockAC (Hairer & Wanner II, §IV.7, (7.25)). The float64 literals
// are those of OrdinaryDiffEq.jl, lib/OrdinaryDiffEqRosenbrock/src/
// rosenbrock_tableaus.jl, function Rodas5PTableau (read at commit
// 0054db222947), which transcribes Steinebach (2023); they agree digit for
// digit with the JAX gradsolve reference (../shared/reference/
// gradsolve-jax.md §2.5: γ, c, d and the checksums A[2,1] = 3,
// C[2,1] = −14.155112264123755, C[8,7] = −9.48861652309627, Σ|H| =
// 415.89274467417624, which the tests check).
//
// Structure: rows 6, 7 and 8 of A differ only by a trailing 1 (the method
// is stiffly accurate twice over), B is row 8 of A followed by 1, so that
// y_new = Y_8 + U_8, and BTilde = e_8: the error estimate is U_8 itself,
// the embedded solution being the stage input Y_8.
var rodas5pAC = &RosenbrockAC{
	Name:     "Rodas5P",
	Source:   rodas5pSource,
	Order:    5,
	ErrOrder: 4,
	Gamma:    0.21193756319429014,
	C:        []float64{0, 0.6358126895828704, 0.4095798393397535, 0.9769306725060716, 0.4288403609558664, 1, 1, 1},
	D:        []float64{0.21193756319429014, -0.42387512638858027, -0.3384627126235924, 1.8046452872882734, 2.325825639765069, 0, 0, 0},
	A: [][]float64{
		{},
		{3.0},
		{2.849394379747939, 0.45842242204463923},
		{-6.954028509809101, 2.489845061869568, -10.358996098473584},
		{2.8029986275628964, 0.5072464736228206, -0.3988312541770524, -0.04721187230404641},
		{-7.502846399306121, 2.561846144803919, -11.627539656261098, -0.18268767659942256, 0.030198172008377946},
		{-7.502846399306121, 2.561846144803919, -11.627539656261098, -0.18268767659942256, 0.030198172008377946, 1},
		{-7.502846399306121, 2.561846144803919, -11.627539656261098, -0.18268767659942256, 0.030198172008377946, 1, 1},
	},
	CMat: [][]float64{
		{},
		{-14.155112264123755},
		{-17.97296035885952, -2.859693295451294},
		{147.12150275711716, -1.41221402718213, 71.68940251302358},
		{165.43517024871676, -0.4592823456491126, 42.90938336958603, -5.961986721573306},
		{24.854864614690072, -3.0009227002832186, 47.4931110020768, 5.5814197821558125, -0.6610691825249471},
		{30.91273214028599, -3.1208243349937974, 77.79954646070892, 34.28646028294783, -19.097331116725623, -28.087943162872662},
		{37.80277123390563, -3.2571969029072276, 112.26918849496327, 66.9347231244047, -40.06618937091002, -54.66780262877968, -9.48861652309627},
	},
	B:      []float64{-7.502846399306121, 2.561846144803919, -11.627539656261098, -0.18268767659942256, 0.030198172008377946, 1, 1, 1},
	BTilde: []float64{0, 0, 0, 0, 0, 0, 0, 1},
	H: [][]float64{
		{25.948786856663858, -2.5579724845846235, 10.433815404888879, -2.3679251022685204, 0.524948541321073, 1.1241088310450404, 0.4272876194431874, -0.17202221070155493},
		{-9.91568850695171, -0.9689944594115154, 3.0438037242978453, -24.495224566215796, 20.176138334709044, 15.98066361424651, -6.789040303419874, -6.710236069923372},
		{11.419903575922262, 2.8879645146136994, 72.92137995996029, 80.12511834622643, -52.072871366152654, -59.78993625266729, -0.15582684282751913, 4.883087185713722},
	},
}

const rodas5pSource = "Steinebach, Construction of Rosenbrock–Wanner method Rodas5P and numerical benchmarks within the Julia Differential Equations package, BIT Numer. Math. 63 (2023) 27, doi:10.1007/s10543-023-00967-x"

// Rodas5P is Steinebach's 8-stage Rosenbrock–Wanner pair of order 5(4):
// L-stable (R(∞) = 0), stiffly accurate, with a stiffly accurate
// embedded method of order 4 and a continuous extension of order 4 (Dense,
// three rows), consistent for non-autonomous problems (the f_t terms D).
// It is not FSAL: its last stage is evaluated at the embedded solution,
// not at y_new.
//
// It is converted at package initialisation from the published a/C form
// (rodas5pAC) by RosenbrockAC.Increment, in 256-bit arithmetic with one
// rounding per coefficient, so it is the same on every platform:
//
//	Γ = (I/γ − CMat)⁻¹,  α = A·Γ,  m = B·Γ,  e = e_8ᵀ·Γ (row 8 of Γ),  Dense = H·Γ.
//
// In particular E = m − m̂ is the last row of Γ (with γ in its last
// entry), and m̂ = m − e is row 8 of α followed by 0. The tests check
// c = α·1 and d = Γ·1 (γ included) to 1e-11 and the reference's
// checksums: cond₂(Γ⁻¹) ≈ 2557, Σ|Dense| = 102.01062464738597.
//
// Source: G. Steinebach, Construction of Rosenbrock–Wanner method Rodas5P
// and numerical benchmarks within the Julia Differential Equations
// package, BIT Numer. Math. 63 (2023) 27, doi:10.1007/s10543-023-00967-x.
var Rodas5P = mustIncrement(rodas5pAC)
