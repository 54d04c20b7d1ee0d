// Package pmath holds gradsolve's portable elementary functions: the
// functions of the problem language (exp, log, pow, sin, cos, tan, tanh,
// atan2, and the straight-line forms of min and max) computed so that
// they give
// the same bits on every platform, in every build and in every engine,
// scalar or SIMD lanes.
//
// Go's math.Exp and math.Log run assembly on some architectures and
// pure Go on others, and on amd64 math.Exp fuses multiply–adds where the
// processor has FMA: the same problem gives different bits on two
// machines, and a vector form of them could match only one. The
// functions here are plain IEEE double arithmetic: every product is
// rounded before it is added (explicit float64 conversions, so no Go
// build fuses them), and their straight-line forms have no branches,
// only selections (the Go functions may branch where the forms select:
// the results are the same). The one exception is the reduction of huge
// arguments of the trigonometric functions (|x| ≥ 2²⁰·π/2), a
// rarely taken path that reads a table of the bits of 2/π. Each
// function also exists in straight-line form (Program: ExpSteps,
// LogSteps, …), which the lane code of package sym/tape translates one
// step per AVX2 instruction; a Program's steps give the function's bits
// for every argument (TestStepsMatchFunctions and the tests beside each
// function), so every lane gets the bits these functions give.
//
// The algorithms are those of fdlibm (Sun Microsystems, 1993: e_exp.c,
// e_log.c, e_pow.c, k_sin.c, k_cos.c, k_tan.c, e_rem_pio2.c,
// k_rem_pio2.c, s_atan.c and e_atan2.c, as distributed with FreeBSD's
// msun), with their published polynomial coefficients; the range
// reductions and the scaling are rewritten without branches. tanh and
// atan2 depart from fdlibm where its versions are not faithful (2.07
// and 1.32 ulp measured): tanh is Cephes's rational approximation below
// |x| = 0.4 and (e^2x − 1)/(e^2x + 1) with e^2x kept as an unrounded sum
// above, the quotient corrected by its remainder; atan2 reduces on y
// and x themselves and rounds its result once. All are faithfully rounded:
// the error is below one ulp, measured against high-precision
// references (the accuracy tests of each function).
package pmath
