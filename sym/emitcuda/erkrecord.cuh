// ---- the record and adjoint kernels' drivers ----
//
// The record kernel is the forward kernel in double with a recording
// policy that writes each trajectory's mesh, as ivp's Mesh holds it
// for cpu-erk's recordings (gradsolve.Record): T, the times t0 and the
// end of every accepted step (steps + 1 values, the last the time
// reached); H, the step size each accepted step took (steps values, as
// the solver took it: the last one lands on t1 as rem = t1 - t); Y, the
// state at every T (steps + 1 rows of N values). The adjoint kernel
// walks such a mesh backwards as package ivp's Walk.Reverse does with
// erk's Replayer (erk/replay.go), recomputing each step's stages from
// its stored start state.

// gs_erk_record_job is one launch of a record kernel: the forward job
// (results as for gs_erk_job) and the mesh buffers, cap steps per
// trajectory. Trajectory i's mesh is row i of each buffer.
struct gs_erk_record_job {
  gs_erk_job fwd;   // the forward solve: inputs, options and results
  gs_i64 cap;       // the steps each trajectory's mesh can hold (>= 0)
  double* mesh_t;   // n x (cap + 1): T
  double* mesh_h;   // n x cap: H
  double* mesh_y;   // n x (cap + 1) x N: Y
  gs_i64* steps;    // n: the accepted steps recorded, or -1 where the mesh ran out of room
};

// gs_erk_mesh_rec is the record kernels' recording policy: ivp's
// Mesh.Reset and Mesh.Push on trajectory i's rows. A step that finds
// the mesh full is not recorded and the solve ends after it with status
// Cancelled (what a refused Mesh.Grow gives on the CPU), steps[i] = -1.
struct gs_erk_mesh_rec {
  double *t, *h, *y;
  gs_i64* steps;
  gs_i64 cap, k;
  bool full;

  template <int N, typename real>
  __device__ __forceinline__ void start(double t0, const real (&y0)[N]) {
    t[0] = t0;
    GS_UNROLL for (int d = 0; d < N; ++d) y[d] = y0[d];
    k = 0;
    full = false;
  }
  template <int N, typename real>
  __device__ __forceinline__ bool push(double hk, double tn, const real (&yn)[N]) {
    if (k >= cap) {
      full = true;
      return false;
    }
    h[k] = hk;
    t[k + 1] = tn;
    GS_UNROLL for (int d = 0; d < N; ++d) y[(k + 1) * N + d] = yn[d];
    k++;
    return true;
  }
  __device__ __forceinline__ void done() { *steps = full ? -1 : k; }
};

// gs_erk_record solves trajectory i of the job and records its mesh.
template <class M, class Fn, int N, int NP>
__device__ __forceinline__ void gs_erk_record(const gs_erk_record_job& job, gs_i64 i) {
  const gs_i64 c = job.cap;
  gs_erk_mesh_rec r = {job.mesh_t + i * (c + 1), job.mesh_h + i * c, job.mesh_y + i * (c + 1) * N, job.steps + i, c, 0, false};
  gs_erk_traj<M, Fn, N, N, NP, gs_erk_job, gs_erk_mesh_rec> tr(job.fwd, i, r);
  tr.solve();
}

// gs_erk_adjoint_job is one launch of an adjoint kernel: the meshes and
// statuses a record kernel wrote (the same buffers and cap), the
// parameters and save times of the recording, the cotangents of the
// final and the saved states, and where the gradients go.
struct gs_erk_adjoint_job {
  gs_i64 n;                 // trajectories
  gs_i64 nsave;             // save times per trajectory (K)
  gs_i64 save_stride;       // 0: one list of K times for all; K: row i of save for trajectory i
  gs_i64 cap;               // the record job's cap
  const double* p;          // n x NP: the parameters of the recording
  const double* save;       // K, or n x K: its save times
  const double* mesh_t;     // n x (cap + 1)
  const double* mesh_h;     // n x cap
  const double* mesh_y;     // n x (cap + 1) x N
  const gs_i64* steps;      // n: the record job's steps
  const gs_i64* status;     // n: the record job's statuses
  const double* cot_y;      // n x N: the cotangents of the final states
  const double* cot_saved;  // n x K x N: those of the saved states; null: zero
  double* gy0;              // n x N: dL/dy0 (NaN where the recording failed)
  double* gp;               // n x NP: dL/dp (likewise)
};

// gs_erk_adjoint is ivp's Walk.Reverse on a mesh that keeps every state,
// with erk's replayer (ReverseStep, ReversePartial) for trajectory i:
// from the last step to the first, the cotangents of the saves at a
// step's end joining that of its end state, the step's stages
// recomputed from its stored start state and reversed (M::reverse), the
// saves inside it reversed after it as partial steps from its start,
// and the saves at t0 added to dL/dy0 at the end. A save belongs to the
// first step whose end reaches it (ivp's Mesh.SaveOwners); as the save
// times are ordered in the direction of integration, the saves of step
// k among those not yet reversed are those beyond T[k], and those of
// step 0 those other than t0. A trajectory whose recording failed (a
// status other than Success, or a full mesh) gets NaN gradients, as
// gradsolve.Recording.Gradient gives it.
template <class M, class Fn, class Vjp, int N, int NP>
__device__ __forceinline__ void gs_erk_adjoint(const gs_erk_adjoint_job& job, gs_i64 i) {
  Fn f;
  Vjp vjp;
  const gs_i64 steps = job.steps[i];
  double* gy0 = job.gy0 + i * N;
  double* gpo = job.gp + i * NP;
  if (job.status[i] != GS_SUCCESS || steps < 0) {
    GS_UNROLL for (int d = 0; d < N; ++d) gy0[d] = gs_go_nan();
    GS_UNROLL for (int j = 0; j < NP; ++j) gpo[j] = gs_go_nan();
    return;
  }
  double p[NP > 0 ? NP : 1], gp[NP > 0 ? NP : 1];
  GS_UNROLL for (int j = 0; j < NP; ++j) {
    p[j] = job.p[i * NP + j];
    gp[j] = 0;
  }
  const double* T = job.mesh_t + i * (job.cap + 1);
  const double* H = job.mesh_h + i * job.cap;
  const double* Y = job.mesh_y + i * (job.cap + 1) * N;
  const gs_i64 K = job.nsave;
  const double* save = job.save + i * job.save_stride;
  const double* cs = job.cot_saved ? job.cot_saved + i * K * N : nullptr;
  double ybar[N], ynext[N], y[N];
  double ys[M::LASTB + 1][N], kk[M::LASTB + 1][N], kbar[M::LASTB + 1][N];
  double g[N + NP];
  GS_UNROLL for (int d = 0; d < N; ++d) ybar[d] = job.cot_y[i * N + d];
  gs_i64 next = K - 1;  // the last save not yet reversed
  for (gs_i64 k = steps - 1; k >= 0; --k) {
    const double t = T[k], h = H[k], tn = T[k + 1];
    GS_UNROLL for (int d = 0; d < N; ++d) y[d] = Y[k * N + d];
    gs_i64 first = next;
    if (k > 0) {
      const double dir = T[k] < T[k - 1] ? -1.0 : 1.0;  // step k-1's (SaveOwners's dir)
      while (first >= 0 && !(gs_mul(dir, save[first] - T[k]) <= 0)) first--;
    } else {
      while (first >= 0 && save[first] != T[0]) first--;
    }
    if (cs) {
      for (gs_i64 q = next; q > first; --q) {
        if (save[q] == tn) {
          GS_UNROLL for (int d = 0; d < N; ++d) ybar[d] += cs[q * N + d];
        }
      }
    }
    GS_UNROLL for (int d = 0; d < N; ++d) {
      ynext[d] = ybar[d];
      ybar[d] = 0;
    }
    M::stage_inputs(f, t, h, p, y, ys, kk);
    M::template reverse<Vjp, N, NP>(vjp, t, h, p, ys, ynext, ybar, gp, kbar, g);
    if (cs) {
      for (gs_i64 q = next; q > first; --q) {
        if (save[q] != tn) {
          const double hs = save[q] - t;
          M::stage_inputs(f, t, hs, p, y, ys, kk);
          M::template reverse<Vjp, N, NP>(vjp, t, hs, p, ys, cs + q * N, ybar, gp, kbar, g);
        }
      }
    }
    next = first;
  }
  if (cs) {
    for (gs_i64 q = next; q >= 0; --q) {
      GS_UNROLL for (int d = 0; d < N; ++d) ybar[d] += cs[q * N + d];
    }
  }
  GS_UNROLL for (int d = 0; d < N; ++d) gy0[d] = ybar[d];
  GS_UNROLL for (int j = 0; j < NP; ++j) gpo[j] = gp[j];
}

