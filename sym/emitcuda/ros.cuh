// ---- the adaptive loop of the Rosenbrock methods ----
//
// One trajectory per call of gs_ros_solve, which the kernels below call
// for each trajectory of their grid-stride loop. It is the CPU engine's
// loop (cpu-ros: package ivp's Solve driving package ros's stepper, with
// package control's controller, norm and initial step; the loop and
// those functions are the explicit driver's, gs_adaptive and the rest
// of erk.cuh) ported statement by statement: the same
// operations on the same operands in the same order, every product
// rounded on its own (gs_mul), so that in double precision each
// trajectory's results are the CPU engine's bit for bit. The LU
// factorisation with partial pivoting is ros/lu.go's, per thread. The
// method's stages come from its struct (written with the tableau's
// coefficients as constants, ros.go): stages, error, dense_weights and
// the constants S, ORDER, FSAL, DENSE, GAMMA.

// gs_ros_job is one launch's arguments: gs_erk_job's fields in its
// order, then the Rosenbrock ones (DenseSave and two more counters).
// Per-trajectory arrays are row-major, row i for trajectory i.
struct gs_ros_job {
  gs_i64 n;            // trajectories
  gs_i64 nsave;        // save times per trajectory (K)
  gs_i64 save_stride;  // 0: one list of K times for all; K: row i of save for trajectory i
  gs_i64 max_steps;    // the step budget: accepted plus rejected attempts (>= 1)
  double hmax;         // bound on |h|; +Inf: none beyond |t1 - t0|
  double h0;           // first step size; 0: automatic (the initial-step rule)
  double beta1, beta2, safety, qmin, qmax, qoldinit;  // the PI controller
  const double* rtol;  // the tolerances of the error norm's components (the state's: Dim)
  const double* atol;
  const double* t0;    // n
  const double* t1;    // n
  const double* y0;    // n x N (N: the kernel's Dim, the state and its sensitivity columns)
  const double* p;     // n x NP
  const double* save;  // K, or n x K
  double* y;           // n x N: the final state (the last accepted one on failure)
  double* t;           // n: the time reached
  double* h;           // n: the last step size tried
  double* saved;       // n x K x N: the states at the save times (NaN where not reached)
  gs_i64* status;      // n: a gradsolve Status
  gs_i64* accepted;    // n
  gs_i64* rejected;    // n
  gs_i64* fevals;      // n
  gs_i64 dense_save;   // nonzero: save times from the continuous extension (ros.Config.DenseSave)
  gs_i64* jac_evals;   // n: Jacobian evaluations
  gs_i64* lus;         // n: LU factorisations
};

// gs_ros_mesh is where a record kernel (gs_ros_<method>_record) writes
// each trajectory's mesh as cpu-ros records it (ivp.Mesh, every step
// kept): the start (t0, y0), then the time, step size and state at the
// end of each accepted step. Row i of each array is trajectory i's,
// with room for cap steps; a trajectory with more accepted steps than
// that ends at the first step that does not fit with status Cancelled
// (as a refused ivp.Mesh.Grow), so cap >= max_steps never runs out.
struct gs_ros_mesh {
  gs_i64 cap;     // steps per trajectory
  double* t;      // n x (cap + 1): t0, then the end of each accepted step
  double* h;      // n x cap: the accepted step sizes (signed)
  double* y;      // n x (cap + 1) x N: y0, then the state after each accepted step
  gs_i64* steps;  // n: the accepted steps recorded
};

// gs_none_fn stands for a derivative program a kernel does not call.
struct gs_none_fn {
  template <typename... A>
  __device__ __forceinline__ void operator()(A...) const {}
};

// gs_no_cols is the column set of a kernel without sensitivities.
struct gs_no_cols {
  template <int NS, int NP, typename real>
  __device__ static __forceinline__ void fill(real (&)[NS][NP]) {}
};

// gs_ros_traj is one trajectory's solve: its state, stages, Jacobian,
// LU factors and counters, and ros's stepper as the hooks of
// gs_adaptive (erk.cuh), the loop the explicit kernels run too. N is the
// model's Dim, NS the number of sensitivity columns (the state has
// NA = N(1 + NS) values: y, then one block of N per column).
//
// Job is the launch's struct: gs_ros_job, or gs_ros_job_f32 (ros32.cuh,
// written where Options.Float32 asks for it), whose states, parameters
// and tolerances are float. The state, the stages, f, J, f_t, the
// sensitivity programs, W, its LU factors and the norm are then
// float's arithmetic; times, step sizes and the controller stay double.
template <class M, class F, class Jac, class Dt, class Jvp, class JvpJac, class JvpDt, class Cols, int N_, int NS_, int NP,
          bool REC = false, class Job = gs_ros_job>
struct gs_ros_traj {
  enum { N = N_, NS = NS_, NA = N_ * (1 + NS_), NC = NS_ > 0 ? NS_ : 1, NPP = NP > 0 ? NP : 1 };
  typedef typename gs_real_of<Job>::type real;
  const Job& job;
  gs_i64 i;
  F f;
  Jac jac_y;
  Dt dfdt;
  Jvp jvp;
  JvpJac jvp_jac_y;
  JvpDt jvp_dfdt;
  real p[NPP];
  real w[NC][NPP];  // the parameter direction of each column (engine.Directions)
  real y[NA], y1[NA];
  real f0[N], fsi[N], flast[N], yt[N], acc[N], jv[N], ev[N], ev3[N], ft[N], ys[N];
  real jac[N * N];
  real a[N * N], inv[N];  // W and its LU factors (ros/lu.go's a and inv)
  int piv[N];
  real k[M::S][N];
  real l[NC][M::S][N];
  real mc[NC][N * N], ftc[NC][N];
  real accl[N], g[N], sin_[N];
  bool fresh;  // J and f_t belong to (t, y)
  gs_i64 accepted, rejected, fevals, jac_evals, lus;
  const gs_ros_mesh* mesh;  // REC: where the mesh goes
  gs_i64 nrec;              // REC: the steps recorded

  __device__ gs_ros_traj(const Job& j, gs_i64 idx, const gs_ros_mesh* ms = nullptr)
      : job(j), i(idx), fresh(false), accepted(0), rejected(0), fevals(0), jac_evals(0), lus(0), mesh(ms), nrec(0) {}

  // record writes mesh row k: the time t and the state y1 (and, for a
  // step, its size h); ivp.Mesh's Reset (k = 0) and Push.
  __device__ __forceinline__ void record(gs_i64 k, double t, double h, const real (&ys)[NA]) {
    const gs_i64 c = mesh->cap;
    mesh->t[i * (c + 1) + k] = t;
    if (k > 0) mesh->h[i * c + k - 1] = h;
    double* dst = mesh->y + (i * (c + 1) + k) * NA;
    GS_UNROLL for (int d = 0; d < NA; ++d) dst[d] = ys[d];
    mesh->steps[i] = k;
  }

  // lu_factor is lu.factor: W in a factored in place with partial
  // pivoting (the row exchanges written with constant indices, so that
  // the matrix can stay in registers). False if a pivot is zero or not
  // finite.
  __device__ __forceinline__ bool lu_factor() {
    GS_UNROLL for (int c = 0; c < N; ++c) {
      int pv = c;
      real big = fabs(a[c * N + c]);
      GS_UNROLL for (int r = c + 1; r < N; ++r) {
        real v = fabs(a[r * N + c]);
        if (v > big) {
          pv = r;
          big = v;
        }
      }
      if (!(big > 0) || big == gs_d(0x7ff0000000000000ULL)) return false;
      piv[c] = pv;
      GS_UNROLL for (int r = c + 1; r < N; ++r) {
        if (r == pv) {
          GS_UNROLL for (int j = 0; j < N; ++j) {
            real x = a[c * N + j];
            a[c * N + j] = a[r * N + j];
            a[r * N + j] = x;
          }
        }
      }
      real iv = 1 / a[c * N + c];
      inv[c] = iv;
      GS_UNROLL for (int r = c + 1; r < N; ++r) {
        real lv = gs_mul(a[r * N + c], iv);
        a[r * N + c] = lv;
        if (lv == 0) continue;
        GS_UNROLL for (int j = c + 1; j < N; ++j) a[r * N + j] -= gs_mul(lv, a[c * N + j]);
      }
    }
    return true;
  }

  // lu_solve is lu.solve: (L U) x = P b in place in b.
  __device__ __forceinline__ void lu_solve(real (&b)[N]) {
    GS_UNROLL for (int c = 0; c < N; ++c) {
      GS_UNROLL for (int r = c + 1; r < N; ++r) {
        if (r == piv[c]) {
          real x = b[c];
          b[c] = b[r];
          b[r] = x;
        }
      }
    }
    GS_UNROLL for (int r = 1; r < N; ++r) {
      real s = 0;
      GS_UNROLL for (int j = 0; j < r; ++j) s += gs_mul(a[r * N + j], b[j]);
      b[r] -= s;
    }
    GS_UNROLL for (int r = N - 1; r >= 0; --r) {
      real s = 0;
      GS_UNROLL for (int j = r + 1; j < N; ++j) s += gs_mul(a[r * N + j], b[j]);
      b[r] = gs_mul(b[r] - s, inv[r]);
    }
  }

  // lu_solve_t is lu.solveT: W^T x = b in place in b, with W's factors.
  __device__ __forceinline__ void lu_solve_t(real (&b)[N]) {
    GS_UNROLL for (int r = 0; r < N; ++r) {
      real s = 0;
      GS_UNROLL for (int j = 0; j < r; ++j) s += gs_mul(a[j * N + r], b[j]);
      b[r] = gs_mul(b[r] - s, inv[r]);
    }
    GS_UNROLL for (int r = N - 1; r >= 0; --r) {
      real s = 0;
      GS_UNROLL for (int j = r + 1; j < N; ++j) s += gs_mul(a[j * N + r], b[j]);
      b[r] -= s;
    }
    GS_UNROLL for (int c = N - 1; c >= 0; --c) {
      GS_UNROLL for (int r = c + 1; r < N; ++r) {
        if (r == piv[c]) {
          real x = b[c];
          b[c] = b[r];
          b[r] = x;
        }
      }
    }
  }

  // matvec is ros's matVec: dst = A x, each row summed from 0 in order.
  __device__ __forceinline__ void matvec(real (&dst)[N], const real (&m)[N * N], const real (&x)[N]) {
    GS_UNROLL for (int r = 0; r < N; ++r) {
      real s = 0;
      GS_UNROLL for (int j = 0; j < N; ++j) s += gs_mul(m[r * N + j], x[j]);
      dst[r] = s;
    }
  }

  // attempt is ros's (*Solver).attempt: one step of size h from (t, y)
  // with J and f_t of (t, y), the increments into k (and l), the result
  // into ynew. With the error test it returns the scaled error norm of
  // the state; *ok is false if W is singular or a value is not finite.
  // (Over float, h and gamma are rounded to float for W.)
  __device__ __forceinline__ double attempt(double t, double h, real* ynew, bool err_test, bool* ok) {
    const real hg = gs_mul((real)h, (real)M::GAMMA);
    GS_UNROLL for (int r = 0; r < N; ++r) {
      GS_UNROLL for (int j = 0; j < N; ++j) {
        real v = -gs_mul(hg, jac[r * N + j]);
        if (r == j) v += 1;
        a[r * N + j] = v;
      }
    }
    lus++;
    if (!lu_factor()) {
      *ok = false;
      return gs_d(0x7ff0000000000000ULL);
    }
    M::stages(*this, t, h, ynew);
    fevals += (M::S - 1) + M::S * NS;
    if (!err_test) {
      real s = 0;
      GS_UNROLL for (int d = 0; d < NA; ++d) s += ynew[d] - ynew[d];
      *ok = s == 0;
      return *ok ? 0 : gs_d(0x7ff0000000000000ULL);
    }
    M::error(*this);
    // The increments include h already: the norm's h is 1.
    return gs_norm<NA, N, false>(1.0, y, y1, ev, ev3, job.atol, job.rtol, ok);
  }

  // advance is the stepper's Advance: the last stage's f carried into
  // the next step (FSAL) or f at the new point, and J marked stale.
  __device__ __forceinline__ void advance(double tend, bool next) {
    if (M::FSAL) {
      GS_UNROLL for (int d = 0; d < N; ++d) f0[d] = flast[d];
    } else if (next) {
      f((real)tend, y, p, f0);
      fevals++;
    }
    fresh = false;
  }

  // jacobians evaluates J and f_t (and each column's M_c and the time
  // derivative of its tangent) at (t, y): the stepper's Attempt.
  __device__ __forceinline__ void jacobians(double t) {
    const real tf = (real)t;
    jac_y(tf, y, p, jac);
    dfdt(tf, y, p, ft);
    GS_UNROLL for (int c = 0; c < NS; ++c) {
      jvp_jac_y(tf, y, p, y + N * (1 + c), w[c], mc[c]);
      jvp_dfdt(tf, y, p, y + N * (1 + c), w[c], ftc[c]);
    }
    jac_evals++;
    fresh = true;
  }

  // save_at is ros's saveAt: the solution at ts inside the accepted step
  // of size h from (t, y) into dst, from the continuous extension or a
  // re-step from t (which leaves dst as it was if its W is singular).
  __device__ __forceinline__ void save_at(real* dst, double t, double h, double ts) {
    if constexpr (M::DENSE) {
      if (job.dense_save) {
        dense(dst, (ts - t) / h);
        return;
      }
    }
    // The re-step overwrites the increments: nothing reads the accepted
    // step's again (the continuous extension is the other branch), and
    // each increment is written before it is read.
    bool ok;
    attempt(t, ts - t, dst, false, &ok);
  }

  // dense is ros's dense: the continuous extension at theta of the
  // accepted step, y + sum of b_j(theta) K_j over the nonzero weights.
  // (The weights are double's; over float each is rounded to float.)
  __device__ __forceinline__ void dense(real* dst, double theta) {
    {
      double b[M::S];
      M::dense_weights(theta, b);
      GS_UNROLL for (int d = 0; d < N; ++d) {
        real s = y[d];
        GS_UNROLL for (int j = 0; j < M::S; ++j) {
          if (b[j] != 0) s += gs_mul((real)b[j], k[j][d]);
        }
        dst[d] = s;
      }
      GS_UNROLL for (int c = 0; c < NS; ++c) {
        GS_UNROLL for (int d = 0; d < N; ++d) {
          real s = y[N * (1 + c) + d];
          GS_UNROLL for (int j = 0; j < M::S; ++j) {
            if (b[j] != 0) s += gs_mul((real)b[j], l[c][j][d]);
          }
          dst[N * (1 + c) + d] = s;
        }
      }
    }
  }

  // finish writes the trajectory's results.
  __device__ __forceinline__ void finish(gs_i64 status, double t, double h) {
    GS_UNROLL for (int d = 0; d < NA; ++d) job.y[i * NA + d] = y[d];
    job.t[i] = t;
    job.h[i] = h;
    job.status[i] = status;
    job.accepted[i] = accepted;
    job.rejected[i] = rejected;
    job.fevals[i] = fevals;
    job.jac_evals[i] = jac_evals;
    job.lus[i] = lus;
  }

  // The hooks of gs_adaptive.

  // start is the stepper's Start (J stale) and the mesh's first row.
  __device__ __forceinline__ void start(double t0) {
    if (REC) record(0, t0, 0, y);
  }

  // first evaluates f0 = f(t0, y0).
  __device__ __forceinline__ bool first(double t0) {
    f((real)t0, y, p, f0);
    fevals++;
    return gs_finite<N>(f0);
  }

  // initial_step runs the rule on the state alone (ys, its first N
  // values).
  __device__ __forceinline__ double initial_step(double t0, double dir, double hmax) {
    GS_UNROLL for (int d = 0; d < N; ++d) ys[d] = y[d];
    const double h = gs_initial_step<N, N>(f, p, t0, dir, ys, f0, M::ORDER, job.atol, job.rtol, hmax, yt, fsi);
    fevals += 1;
    return h;
  }

  // try_step is the stepper's Attempt: J and f_t at (t, y) where they
  // are stale, then the attempt with the error test.
  __device__ __forceinline__ double try_step(double t, double h, bool* ok) {
    if (!fresh) jacobians(t);
    return attempt(t, h, y1, true, ok);
  }

  // accept keeps the last stage's f for the next step (FSAL).
  __device__ __forceinline__ void accept() {
    if (M::FSAL) {
      GS_UNROLL for (int d = 0; d < N; ++d) flast[d] = fsi[d];
    }
  }

  // push is ivp.Mesh.Push of a record kernel; the mesh may be full.
  __device__ __forceinline__ bool push(double h, double tn) {
    if (REC) {
      if (nrec < mesh->cap) {
        nrec++;
        record(nrec, tn, h, y1);
      } else {
        return false;
      }
    }
    return true;
  }

  __device__ __forceinline__ void solve() {
    GS_UNROLL for (int j = 0; j < NP; ++j) p[j] = job.p[i * NP + j];
    GS_UNROLL for (int c = 0; c < NC; ++c) {
      GS_UNROLL for (int j = 0; j < NPP; ++j) w[c][j] = 0;
    }
    Cols::template fill<NC, NPP>(w);
    gs_adaptive(*this);
  }
};

// gs_ros_solve solves trajectory i of the job (gs_ros_job, or
// gs_ros_job_f32 for a float32 kernel).
template <class M, class F, class Jac, class Dt, class Jvp, class JvpJac, class JvpDt, class Cols, int N, int NS, int NP,
          class Job = gs_ros_job>
__device__ __forceinline__ void gs_ros_solve(const Job& job, gs_i64 i) {
  gs_ros_traj<M, F, Jac, Dt, Jvp, JvpJac, JvpDt, Cols, N, NS, NP, false, Job> tr(job, i);
  tr.solve();
}

// gs_ros_record solves trajectory i of the job and writes its mesh.
template <class M, class F, class Jac, class Dt, int N, int NP>
__device__ __forceinline__ void gs_ros_record(const gs_ros_job& job, const gs_ros_mesh& mesh, gs_i64 i) {
  gs_ros_traj<M, F, Jac, Dt, gs_none_fn, gs_none_fn, gs_none_fn, gs_no_cols, N, 0, NP, true> tr(job, i, &mesh);
  tr.solve();
}

// ---- the discrete adjoint of a recorded Rosenbrock solve ----

// gs_ros_adj is an adjoint kernel's own arguments (beside the job, whose
// n, nsave, save_stride, save, p and dense_save it reads, and the mesh a
// record kernel wrote): the cotangents of the final and the saved
// states, where the gradients go, and scratch.
struct gs_ros_adj {
  const double* cot_y;      // n x N: dL/dy(t1)
  const double* cot_saved;  // n x K x N: dL/d(saved state); null where there are no save times
  double* gy0;              // n x N: dL/dy0
  double* gp;               // n x NP: dL/dp
  gs_i64* owner;            // n x K: scratch (the step owning each save time)
};

// gs_ros_adjoint is one trajectory's reverse walk: ros's Replayer.Reverse
// (package ivp's Walk.Reverse over a mesh that keeps every state, with
// ros's ReverseStep and ReversePartial), statement by statement. Each
// step's increments are recomputed from its recorded start (f, J, f_t,
// the LU, the stages) and reversed; nothing but the accepted states is
// stored.
template <class M, class F, class Jac, class Dt, class Vjp, class JvpVjp, class DtVjp, int N_, int NP>
struct gs_ros_adjoint {
  enum { N = N_, NPP = NP > 0 ? NP : 1 };
  gs_ros_traj<M, F, Jac, Dt, gs_none_fn, gs_none_fn, gs_none_fn, gs_no_cols, N_, 0, NP> tr;
  const gs_ros_mesh& mesh;
  const gs_ros_adj& adj;
  Vjp vjp;
  JvpVjp jvp_vjp;
  DtVjp dfdt_vjp;
  double kbar[M::S][N];
  double rbar[N], v[N], yi[N], ynew[N], ybar[N], ynext[N];
  double o[N + NP];  // a cotangent program's outputs: u^T d/dy, then u^T d/dp
  double gp[NPP], zero[NPP];

  __device__ gs_ros_adjoint(const gs_ros_job& j, const gs_ros_mesh& ms, const gs_ros_adj& a, gs_i64 idx)
      : tr(j, idx), mesh(ms), adj(a) {}

  // add_o adds the outputs of a cotangent program to ybar and gp.
  __device__ __forceinline__ void add_o() {
    GS_UNROLL for (int d = 0; d < N; ++d) ybar[d] += o[d];
    GS_UNROLL for (int j = 0; j < NP; ++j) gp[j] += o[N + j];
  }

  // mat_t_vec is ros's matTVec into o[:N]: J^T x.
  __device__ __forceinline__ void mat_t_vec(const double (&x)[N]) {
    GS_UNROLL for (int d = 0; d < N; ++d) o[d] = 0;
    GS_UNROLL for (int r = 0; r < N; ++r) {
      const double xr = x[r];
      GS_UNROLL for (int j = 0; j < N; ++j) o[j] += gs_mul(tr.jac[r * N + j], xr);
    }
  }

  // start is the Replayer's start: the state, f, J and f_t at (t, y).
  __device__ __forceinline__ void start(double t, const double* y) {
    GS_UNROLL for (int d = 0; d < N; ++d) tr.y[d] = y[d];
    tr.f(t, tr.y, tr.p, tr.f0);
    tr.jac_y(t, tr.y, tr.p, tr.jac);
    tr.dfdt(t, tr.y, tr.p, tr.ft);
  }

  // reverse_step is the Replayer's reverseStep after the attempt that
  // computed the increments: ynewbar's cotangent through the step of
  // size h from (t, tr.y), and through the dense saves q in
  // (first, next] that are not at the step's end, added into ybar and gp.
  __device__ __forceinline__ void reverse_step(double t, double h, const double* ynewbar, bool dense, gs_i64 next, gs_i64 first,
                                               const double* save, const double* cots, double tn) {
    M::reverse_init(*this, ynewbar);
    GS_UNROLL for (int d = 0; d < N; ++d) ybar[d] += ynewbar[d];
    if constexpr (M::DENSE) {
      if (dense) {
        for (gs_i64 q = next; q > first; --q) {
          if (save[q] == tn) continue;
          const double* cot = cots + q * N;
          double b[M::S];
          M::dense_weights((save[q] - t) / h, b);
          GS_UNROLL for (int j = 0; j < M::S; ++j) {
            GS_UNROLL for (int d = 0; d < N; ++d) kbar[j][d] += gs_mul(b[j], cot[d]);
          }
          GS_UNROLL for (int d = 0; d < N; ++d) ybar[d] += cot[d];
        }
      }
    }
    M::reverse_stages(*this, t, h);
  }

  __device__ __forceinline__ void run() {
    const gs_ros_job& job = tr.job;
    const gs_i64 i = tr.i;
    GS_UNROLL for (int j = 0; j < NP; ++j) tr.p[j] = job.p[i * NP + j];
    GS_UNROLL for (int j = 0; j < NPP; ++j) {
      gp[j] = 0;
      zero[j] = 0;
    }
    const gs_i64 nsave = job.nsave, c = mesh.cap, steps = mesh.steps[i];
    const double* save = job.save + i * job.save_stride;
    const double* cots = adj.cot_saved ? adj.cot_saved + i * nsave * N : nullptr;
    const double* mt = mesh.t + i * (c + 1);
    const double* mh = mesh.h + i * c;
    const double* my = mesh.y + i * (c + 1) * N;
    const bool dense = job.dense_save != 0;
    gs_i64* owner = adj.owner + i * nsave;
    GS_UNROLL for (int d = 0; d < N; ++d) ybar[d] = adj.cot_y[i * N + d];

    // ivp's Mesh.SaveOwners (a save time past the mesh's end is owned
    // by no step).
    {
      gs_i64 q = 0;
      double t = mt[0];
      for (gs_i64 r = 0; r < nsave; ++r) owner[r] = -2;
      for (; q < nsave && save[q] == t; ++q) owner[q] = -1;
      for (gs_i64 k = 0; k < steps; ++k) {
        const double tn = mt[k + 1];
        double dir = 1.0;
        if (tn < t) dir = -1;
        for (; q < nsave && gs_mul(dir, save[q] - tn) <= 0; ++q) owner[q] = k;
        t = tn;
      }
    }

    // ivp's Walk.Reverse, each step as Walk.step.
    gs_i64 next = nsave - 1;
    for (gs_i64 k = steps - 1; k >= 0; --k) {
      const double t = mt[k], h = mh[k], tn = mt[k + 1];
      const double* yk = my + k * N;
      gs_i64 first = next;
      while (first >= 0 && owner[first] == k) first--;
      if (cots) {
        for (gs_i64 q = next; q > first; --q) {
          if (save[q] == tn) {
            GS_UNROLL for (int d = 0; d < N; ++d) ybar[d] += cots[q * N + d];
          }
        }
      }
      GS_UNROLL for (int d = 0; d < N; ++d) {
        ynext[d] = ybar[d];
        ybar[d] = 0;
      }
      // ReverseStep: the step recomputed, then reversed.
      bool ok;
      start(t, yk);
      tr.attempt(t, h, ynew, false, &ok);
      reverse_step(t, h, ynext, dense && cots, next, first, save, cots, tn);
      // ReversePartial of each re-stepped save time, latest first.
      if (!dense && cots) {
        for (gs_i64 q = next; q > first; --q) {
          if (save[q] == tn) continue;
          tr.attempt(t, save[q] - t, ynew, false, &ok);
          reverse_step(t, save[q] - t, cots + q * N, false, 0, 0, save, cots, tn);
        }
      }
      next = first;
    }
    if (cots) {
      for (gs_i64 q = next; q >= 0; --q) {
        GS_UNROLL for (int d = 0; d < N; ++d) ybar[d] += cots[q * N + d];
      }
    }
    GS_UNROLL for (int d = 0; d < N; ++d) adj.gy0[i * N + d] = ybar[d];
    GS_UNROLL for (int j = 0; j < NP; ++j) adj.gp[i * NP + j] = gp[j];
  }
};
