// Package fit fits parameters, and optionally initial values, of an
// ensemble of ODEs to data.
//
// A Spec names the problem, the ensemble (a gradsolve.Ensemble used as
// the template of every solve), the loss — weighted least squares on
// the final and/or saved states (gradsolve.FitData), or a
// gradsolve.Loss of one's own — the quantities to fit (Param, each with
// a Transform: Identity, Log for positivity, Logit for bounds), who
// owns them (Ownership: shared by the whole ensemble, one set per
// trajectory, or one set per group of trajectories), the optimiser and
// its tolerances. Run returns a Report: per group the estimate, its
// loss, iterations, status and history, and on request its Fisher
// information, covariance and standard errors.
//
// # Groups
//
// Each group is a fit of its own that happens to share the solves: it
// has its own optimiser state, iteration count, convergence test,
// status and history. All groups advance in lock-step. One evaluation
// solves (or replays) every trajectory of the ensemble at once, each at
// its group's next point; the loss and the gradient are then split per
// group by summing the trajectories' rows:
//
//	∂L_g/∂θ_g = Σ_{i ∈ g} ∂L/∂p_i |fitted columns
//
// A group that converges keeps its values while the others go on; a
// group whose trajectories fail stops with status Failed and does not
// stop the others.
//
// # Working coordinates
//
// Optimisers work on coordinates z in which a unit move is of the order
// of the quantity itself: z = log θ (Log), z = logit of θ's place in its
// bounds (Logit), z = θ/s with s the quantity's scale (Identity; see
// Param.Scale). Gradients pass through the chain rule, ∂L/∂z = ∂L/∂θ ·
// dθ/dz; estimates, histories, Fisher matrices and covariances are in
// natural units.
//
// # Optimisers and routes
//
// Adam and LBFGS need ∂L/∂z, LevenbergMarquardt the residuals' Jacobian
// J = ∂r/∂z. Two routes give them, both exact derivatives of the
// discrete solution:
//
//   - the reverse replay (gradsolve.Record, Recording.Replay,
//     Recording.Gradient): an evaluation replays the recorded meshes
//     at the new point and runs the discrete adjoint, at a cost that does
//     not grow with the number of fitted quantities: about 2 forward
//     solves on the lane engine (cpu-lanes), 4 on the others (measured);
//   - forward sensitivities (gradsolve.Solve with Options.Sens), a
//     fresh adaptive solve per evaluation: about 1 + 0.5 (cpu-lanes) or
//     1 + 0.3 (the others) forward solves per fitted quantity.
//
// LevenbergMarquardt takes forward sensitivities; Adam and LBFGS the
// cheaper route by that cost model (forward up to two fitted
// quantities on cpu-lanes and up to ten elsewhere, reverse beyond).
// Report.Mode and ModeReason say which, on which engine, and why;
// Spec.Mode overrides.
//
// # Recorded meshes and the re-record policy
//
// On the reverse route the mesh of a recording is data: replaying it at
// a new point holds the accepted steps fixed, so the loss is a smooth
// function of the parameters and its gradient exact, but the replay
// drifts from what an adaptive solve at the new point would give. The
// policy (Rerecord) records again when a fitted quantity has moved more
// than a threshold relative to its own size (RerecordAuto, 2% by
// default), every N evaluations (RerecordEvery) or never
// (RerecordNever). Spec.DriftEvery measures what the policy allows:
// every so many replays, a fresh recording at the same point is
// compared with the replay — the largest relative change of a final
// state, and the angle between the two gradients — and Report.Drift
// lists the figures.
//
// # Fisher information
//
// Under a Gaussian noise model (Noise: a scalar σ, or a precision per
// state component) the Fisher information of each group's natural
// parameters comes from forward sensitivities at the estimate,
//
//	F_g = Σ_{i ∈ g} Σ_r (w_r/σ²)·J_rᵀ J_r,   J_r = ∂r/∂θ,
//
// and the covariance is F_g⁻¹ (Cholesky, gonum/mat), the standard
// errors √diag(F_g⁻¹). J is the derivative of the discrete solution:
// for a well-resolved solve it matches the exact solution's derivative
// to the solve's accuracy.
//
// # Least squares on residuals of one's own
//
// RunLSQ is the layer beneath for models that are not weighted least
// squares on ODE states: a batch of independent problems, one per
// group, each minimising χ² = rᵀC⁻¹r over its own parameters, whose
// residuals r and Jacobian J = ∂r/∂θ the caller's LSQ.Eval computes —
// typically from one ensemble solve with forward sensitivities for all
// groups at once, plus whatever algebra maps states to observables.
// The noise model is Gaussian (Gaussian: scalar σ, weights, or a full
// covariance C = L·Lᵀ, factored once by NewWhitener); RunLSQ whitens
// r̃ = L⁻¹r and J̃ = L⁻¹J and takes Gauss–Newton steps, J̃ᵀJ̃·h =
// −J̃ᵀr̃ (Levenberg–Marquardt with LSQ.Damping > 0). Each group stops on
// its own step test (LSQ.StepTol, per parameter) with a Status, a
// group whose residuals are not finite fails alone, and each ends with
// its Fisher information J̃ᵀJ̃, covariance and standard errors. The
// quintessence profile (app/quintessence) is a user: one group per
// (data set, λ) pair, θ = (Ω_m, α), C the DESI DR2 covariance.
//
// Nothing here is random: a fit is reproducible bit for bit, for any
// number of workers. Cancel it through its context; follow it through
// Spec.Progress.
package fit
