// Command neural trains a neural right-hand side end to end: a tanh
// network inside Robertson's stiff kinetics, fitted to data from the
// true equations with the reverse replay gradient of Rodas5P.
//
//	go run ./examples/neural [-out DIR] [-updates N] [-seed S] [-lr LR] [-decay D] [-q]
//
// # The model
//
// Robertson's reactions A → B (k1 = 0.04), B + B → C + B (k2 = 3e7) and
// B + C → A + C (k3 = 1e4) give
//
//	y1' = −k1·y1 + k3·y2·y3
//	y2' =  k1·y1 − k3·y2·y3 − k2·y2²
//	y3' =  k2·y2².
//
// The autocatalytic term k2·y2², in both equations it appears in, is
// replaced by
//
//	R(y; θ) = k1 · u2 · N(y1, u2, y3; θ),   u2 = y2 / √(k1/k2),
//
// where N is a fully connected network 3 → 16 → 16 → 1 with tanh hidden
// units and a linear output: 3·16 + 16 + 16·16 + 16 + 16 + 1 = 353
// weights θ, the model's parameters (named w1_i_j, b1_i, w2_i_j, b2_i,
// w3_0_j, b3_0). u2 is y2 in units of its quasi-steady value √(k1/k2) ≈
// 3.65e-5, so every input is of order one, and k1 = k2·(√(k1/k2))² is
// the scale of the term in those units: the truth is N = u2, R = k1·u2²
// = k2·y2². The factor u2 makes the rate vanish without B, so y2 stays
// non-negative whatever the weights; R enters y2' and y3' with opposite
// signs, so y1 + y2 + y3 = 1 is conserved for any θ; k1 and k3 keep
// their known values. The model is built with the sym API (Net.Model)
// and compiled by sym/tape (Net.Problem), which derives the Jacobian
// Rodas5P needs and the second derivatives its reverse replay needs.
//
// The starting weights are Glorot-uniform with zero hidden biases and
// output bias 1: the untrained network is N ≈ 1 plus a random function
// of order one, a first-order law R ≈ k1·u2 where the truth is second
// order, distorted at random.
//
// # The data and the loss
//
// True Robertson (systems.Robertson, Rodas5P at rtol 1e-10) is solved
// from six initial states — (1, 0, 0), (0.95, 0, 0.05), (0.8, 0, 0.2),
// (0.5, 0, 0.5), (1 − 1e-4, 1e-4, 0) and (0.7, 5e-5, 0.3 − 5e-5), the
// last two starting with y2 above its quasi-steady value — over
// [0, 1000], and its states are kept at 22 save times log-spaced from
// 1e-4 to 1e3 (three a decade). The loss is
//
//	L(θ) = ½ Σ_i Σ_k Σ_d ((y_d(t_k; y0_i, θ) − data_ikd)/σ_d)²,
//
// σ = (1e-3, 1e-3·√(k1/k2), 1e-3): residuals in units of 0.1% of each
// component's scale (gradsolve.LeastSquaresFit with per-component
// weights 1/σ_d²). A trajectory that fails is an error, not a term
// dropped from the sum.
//
// # Training
//
// The loop is written with the root package's Record, Recording.Replay
// and Recording.Gradient rather than fit.Run, so that the
// finite-difference check differentiates the very recording the
// training uses and the re-record policy is in view. Each evaluation
// either records the ensemble's meshes afresh (Rodas5P, rtol 1e-6,
// atol 1e-10 for y1 and y3 and 1e-10·√(k1/k2) for y2) or replays the
// last recording at the new weights, then runs the reverse sweep: the
// discrete adjoint of the Rosenbrock steps on the recorded mesh, the
// exact gradient of the replayed loss. It records again once some
// weight has moved more than 5% of max(|θ_j,rec|, 0.1) from the
// recording point (Trainer.Shift, the rule of Recording.ShiftWith with
// a floor of 0.1 for every weight). The gradient, summed over the six
// trajectories that share the weights, feeds Adam (β = 0.9, 0.999; step
// 0.02 decaying by 0.997 per update).
//
// # The finite-difference check
//
// At the starting and at the trained weights the program records a
// mesh, takes the replay gradient, and for two weights of each block
// (the largest gradient component and one drawn at random) compares it
// with central differences of the loss on that same mesh — every L a
// Recording.Replay at θ ± h·e_j — both the plain central difference at
// h = 1e-6·max(|θ_j|, 1) and its Richardson extrapolation (4·D(h/2) −
// D(h))/3 at h = 1e-4·max(|θ_j|, 1); see CentralEps for why two.
//
// # Output
//
// It prints the check and the loss per update, then the loss before and
// after, the time per update, a fresh adaptive solve's loss at both
// ends, and how far the learned rate is from k2·y2² along true
// trajectories (one trained on, two held out). With -out DIR it writes
// loss.png (loss against update, log scale), rate.png (true and learned
// rates along the three trajectories), history.csv (update, loss,
// gradient norm, recorded or replayed mesh, seconds) and fd.csv (the
// finite-difference checks). README.md in this directory has the
// figures of the default run.
package main
