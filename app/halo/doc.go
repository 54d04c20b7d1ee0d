// Package halo runs the stellar-orbit application: an ensemble of stars
// orbiting in the flattened logarithmic halo of systems.Halo,
//
//	Φ(x) = ½·vc²·ln(rc² + x² + y² + z²/q²),   ẋ = v,  v̇ = −∇Φ,
//
// with forward sensitivities of each final state to (vc, q), checked
// against a converged reference under an accuracy requirement fixed in
// advance: 99% of orbits within 1e-4 in state and 1e-3 in sensitivity,
// in the units of shared/reference/applications.md §A.3.
//
// Units are dimensionless (lengths in units of the halo's scale, speeds
// in units of vc = 1); the defaults are the paper's vc = 1, q = 0.7,
// rc = 0.2.
//
// Initial conditions (Draw) follow the recipe of applications.md §A.5,
// which is our proposal, not the paper's (unverified): R0 ~ U(0.5, 1.5),
// azimuth ~ U(0, 2π), z0 = 0.1·R0·N(0, 1); circularity η ~ U(0, 1) with a
// random sign s: v_t = η·v_c(R0), v_R = s·√(1−η²)·v_c(R0),
// v_z = 0.1·v_c(R0)·N(0, 1), where v_c(R)² = vc²R²/(rc² + R²). The end
// time t1 is 3.7 times the median orbital period T(E) = 2π·R_c(E)/v_c(R_c),
// R_c(E) the radius of the circular orbit of energy E. The initial
// conditions are held fixed when (vc, q) vary: S(0) = 0.
//
// Run solves a run at once; RunChunks (Prepare, then Plan.Stream)
// streams it in chunks of Config.Chunk stars with the same bits, and
// Plan.ChooseAccuracy picks the method and tolerances for a target state
// error by a pilot. A streamed run holds one chunk of stars at a time —
// their initial states and scales (10 numbers a star), the solve with
// its sensitivities and with Config.Check the reference and the errors
// — and, for the whole run, each star's period (8 bytes a star: the end
// time is MedianPeriods times their median, selected without a copy)
// and with Config.Check the largest 1% of each error (the exact 99th
// percentiles of all N, 0.16 bytes a star).
//
// Fit and FitRun fit a shared (vc, q) to a synthetic catalogue, the final
// states of a run plus Gaussian noise, with Fisher error bars, and refit
// noisy mocks to compare the error bars with the scatter of the
// estimates.
package halo
