// Package pmath holds gradsolve's portable elementary functions: the
// functions of the problem language (exp, log) computed so that they
// give the same bits on every platform, in every build and in every
// engine, scalar or SIMD lanes.
//
// Go's math.Exp and math.Log run assembly on some architectures and
// pure Go on others, and on amd64 math.Exp fuses multiply–adds where the
// processor has FMA: the same problem gives different bits on two
// machines, and a vector form of them could match only one. The
// functions here are plain IEEE double arithmetic: every product is
// rounded before it is added (explicit float64 conversions, so no Go
// build fuses them), there are no tables, and the main path has no
// branches, only selections at the end. The lane code of package
// sym/tape performs the same operations, in the same order, in the 64-bit
// lanes of vector registers, and so gives each lane the bits these
// functions give (TestLanesMatchInterpreter there).
//
// The algorithms are those of fdlibm (Sun Microsystems, 1993: e_exp.c
// and e_log.c, as distributed with FreeBSD's msun), with their published
// polynomial coefficients; the range reduction and the scaling are
// rewritten without branches. Both are faithfully rounded: the error is
// below one ulp, measured here against 256-bit references
// (TestExpAccuracy, TestLogAccuracy).
package pmath
