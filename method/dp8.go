package method

// Coefficients of DOP853, read from Hairer & Wanner's dop853.f (version of
// April 25, 1996, small corrections March 4, 2002), the PARAMETER blocks of
// subroutine DP86CO, as stored in github.com/cpmech/hwode, dop853.f
// (commit 784b80fe5ed0). They were compared digit for digit with the
// identical PARAMETER blocks of github.com/weinbe58/dop-src-c, dop853.f, and
// with the C transcription in the same repository, dop853_consts.h
// (commit 180a089c5202). Original distribution:
// http://www.unige.ch/~hairer/software.html.
//
// The values are the published 30-digit decimals, written unchanged as Go
// constants (Fortran's D exponent becomes e); the compiler rounds each to
// the nearest float64 once. Only the coefficients of the 12-stage method
// and of its error estimators are used; the dense-output stages 14–16 and
// the D coefficients are not.
const (
	dop853C2  = 0.526001519587677318785587544488e-01
	dop853C3  = 0.789002279381515978178381316732e-01
	dop853C4  = 0.118350341907227396726757197510e+00
	dop853C5  = 0.281649658092772603273242802490e+00
	dop853C6  = 0.333333333333333333333333333333e+00
	dop853C7  = 0.25e+00
	dop853C8  = 0.307692307692307692307692307692e+00
	dop853C9  = 0.651282051282051282051282051282e+00
	dop853C10 = 0.6e+00
	dop853C11 = 0.857142857142857142857142857142e+00

	dop853B1  = 5.42937341165687622380535766363e-2
	dop853B6  = 4.45031289275240888144113950566e0
	dop853B7  = 1.89151789931450038304281599044e0
	dop853B8  = -5.8012039600105847814672114227e0
	dop853B9  = 3.1116436695781989440891606237e-1
	dop853B10 = -1.52160949662516078556178806805e-1
	dop853B11 = 2.01365400804030348374776537501e-1
	dop853B12 = 4.47106157277725905176885569043e-2

	// Weights of the 3rd-order embedded solution (stages 1, 9 and 12).
	dop853BHH1 = 0.244094488188976377952755905512e+00
	dop853BHH2 = 0.733846688281611857341361741547e+00
	dop853BHH3 = 0.220588235294117647058823529412e-01

	// dop853's ER coefficients: b − b̂₅ for the 5th-order embedded solution.
	dop853ER1  = 0.1312004499419488073250102996e-01
	dop853ER6  = -0.1225156446376204440720569753e+01
	dop853ER7  = -0.4957589496572501915214079952e+00
	dop853ER8  = 0.1664377182454986536961530415e+01
	dop853ER9  = -0.3503288487499736816886487290e+00
	dop853ER10 = 0.3341791187130174790297318841e+00
	dop853ER11 = 0.8192320648511571246570742613e-01
	dop853ER12 = -0.2235530786388629525884427845e-01
)

// DP8 is DOP853, the explicit Runge–Kutta method of order 8 of Dormand and
// Prince with Hairer and Wanner's combined 5th- and 3rd-order error
// estimate (Kind ErrorDOP853).
//
// The method proper has 12 stages (c₁₂ = 1). As in dop853, the derivative
// at the accepted point, f(t+h, y₁), becomes the first stage of the next
// step; here that evaluation is written as a 13th stage with c₁₃ = 1, row
// 13 of A equal to B and b₁₃ = 0, so DP8 has 13 stages and is FSAL: a
// step costs 12 new function evaluations. E holds dop853's ER coefficients
// (b − b̂₅, embedded order 5, so ErrOrder = 5), and E3 holds b − b̂₃ where
// b̂₃ puts BHH1, BHH2 and BHH3 on stages 1, 9 and 12, so that h·Σ E3_i·k_i
// is dop853's ERR2 = K5 − BHH1·K1 − BHH2·K9 − BHH3·K12 times h. E and E3
// vanish on stage 13. QMin = 0.333 and QMax = 6 are dop853's defaults FAC1
// and FAC2.
//
// Sources: J. R. Dormand and P. J. Prince, A family of embedded
// Runge–Kutta formulae, J. Comput. Appl. Math. 6 (1980) 19–26,
// doi:10.1016/0771-050X(80)90013-3, for the construction of embedded
// pairs; the 8(5,3) coefficients and the combined error estimate are those
// of E. Hairer, S. P. Nørsett and G. Wanner, Solving Ordinary Differential
// Equations I, 2nd ed., Springer (1993), §II.10, and of the code dop853.f
// (dop853.c), http://www.unige.ch/~hairer/software.html.
var DP8 = &Tableau{
	Name: "DP8",
	Source: "Dormand & Prince, J. Comput. Appl. Math. 6 (1980) 19–26, doi:10.1016/0771-050X(80)90013-3; " +
		"Hairer, Nørsett & Wanner, Solving ODEs I (1993) §II.10, dop853.f, http://www.unige.ch/~hairer/software.html",
	Order:    8,
	ErrOrder: 5,
	C: []float64{
		0, dop853C2, dop853C3, dop853C4, dop853C5, dop853C6, dop853C7,
		dop853C8, dop853C9, dop853C10, dop853C11, 1, 1,
	},
	A: [][]float64{
		{},
		{5.26001519587677318785587544488e-2},
		{1.97250569845378994544595329183e-2, 5.91751709536136983633785987549e-2},
		{2.95875854768068491816892993775e-2, 0, 8.87627564304205475450678981324e-2},
		{2.41365134159266685502369798665e-1, 0, -8.84549479328286085344864962717e-1, 9.24834003261792003115737966543e-1},
		{3.7037037037037037037037037037e-2, 0, 0, 1.70828608729473871279604482173e-1, 1.25467687566822425016691814123e-1},
		{3.7109375e-2, 0, 0, 1.70252211019544039314978060272e-1, 6.02165389804559606850219397283e-2, -1.7578125e-2},
		{
			3.70920001185047927108779319836e-2, 0, 0,
			1.70383925712239993810214054705e-1,
			1.07262030446373284651809199168e-1,
			-1.53194377486244017527936158236e-2,
			8.27378916381402288758473766002e-3,
		},
		{
			6.24110958716075717114429577812e-1, 0, 0,
			-3.36089262944694129406857109825e0,
			-8.68219346841726006818189891453e-1,
			2.75920996994467083049415600797e1,
			2.01540675504778934086186788979e1,
			-4.34898841810699588477366255144e1,
		},
		{
			4.77662536438264365890433908527e-1, 0, 0,
			-2.48811461997166764192642586468e0,
			-5.90290826836842996371446475743e-1,
			2.12300514481811942347288949897e1,
			1.52792336328824235832596922938e1,
			-3.32882109689848629194453265587e1,
			-2.03312017085086261358222928593e-2,
		},
		{
			-9.3714243008598732571704021658e-1, 0, 0,
			5.18637242884406370830023853209e0,
			1.09143734899672957818500254654e0,
			-8.14978701074692612513997267357e0,
			-1.85200656599969598641566180701e1,
			2.27394870993505042818970056734e1,
			2.49360555267965238987089396762e0,
			-3.0467644718982195003823669022e0,
		},
		{
			2.27331014751653820792359768449e0, 0, 0,
			-1.05344954667372501984066689879e1,
			-2.00087205822486249909675718444e0,
			-1.79589318631187989172765950534e1,
			2.79488845294199600508499808837e1,
			-2.85899827713502369474065508674e0,
			-8.87285693353062954433549289258e0,
			1.23605671757943030647266201528e1,
			6.43392746015763530355970484046e-1,
		},
		// Stage 13 = f(t+h, y₁): the first stage of the next step.
		{
			dop853B1, 0, 0, 0, 0, dop853B6, dop853B7, dop853B8,
			dop853B9, dop853B10, dop853B11, dop853B12,
		},
	},
	B: []float64{
		dop853B1, 0, 0, 0, 0, dop853B6, dop853B7, dop853B8,
		dop853B9, dop853B10, dop853B11, dop853B12, 0,
	},
	E: []float64{
		dop853ER1, 0, 0, 0, 0, dop853ER6, dop853ER7, dop853ER8,
		dop853ER9, dop853ER10, dop853ER11, dop853ER12, 0,
	},
	// b − b̂₃, each difference evaluated exactly in constant arithmetic and
	// rounded once.
	E3: []float64{
		dop853B1 - dop853BHH1, 0, 0, 0, 0, dop853B6, dop853B7, dop853B8,
		dop853B9 - dop853BHH2, dop853B10, dop853B11, dop853B12 - dop853BHH3, 0,
	},
	Kind: ErrorDOP853,
	QMin: 0.333,
	QMax: 6,
}
