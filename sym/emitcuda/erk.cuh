// ---- the adaptive loop of the explicit Runge-Kutta methods ----
//
// One trajectory per call of gs_erk_solve, which the kernels below call
// for each trajectory of their grid-stride loop. It is the CPU engine's
// loop (cpu-erk: package ivp's Solve driving package erk's stepper, with
// package control's controller, norm and initial step) ported statement
// by statement: the same operations on the same operands in the same
// order, every product rounded on its own (gs_mul), so that in double
// precision each trajectory's results are the CPU engine's bit for bit.
// The loop itself (gs_adaptive) is written once, over a stepper's
// hooks, as the CPU engine core runs one loop over every stepper: erk's
// stepper is gs_erk_traj below, ros's is in ros.cuh. The
// method's stage sums come from its struct (written with the tableau's
// coefficients as constants): stages, restep and the constants S,
// ORDER, LASTB, EVALS, FSAL, DEFER, DOP853.

// gs_erk_job is one launch's arguments: the ensemble's inputs, the
// options, and where the results go. Per-trajectory arrays are
// row-major, row i for trajectory i.
struct gs_erk_job {
  gs_i64 n;            // trajectories
  gs_i64 nsave;        // save times per trajectory (K)
  gs_i64 save_stride;  // 0: one list of K times for all; K: row i of save for trajectory i
  gs_i64 max_steps;    // the step budget: accepted plus rejected attempts (>= 1)
  double hmax;         // bound on |h|; +Inf: none beyond |t1 - t0|
  double h0;           // first step size; 0: automatic (the initial-step rule)
  double beta1, beta2, safety, qmin, qmax, qoldinit;  // the PI controller
  const double* rtol;  // the tolerances of the error norm's components
  const double* atol;
  const double* t0;    // n
  const double* t1;    // n
  const double* y0;    // n x N
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
};

// ---- package control: Pow's log2 and exp2, the PI controller, the norm ----

// gs_frexp is control's frexp: the exponent from the bits for a normal
// x, and Go's math.Frexp otherwise (a subnormal scaled by 2^52 first;
// 0, infinities and NaN returned with exponent 0).
__device__ __forceinline__ double gs_frexp(double x, int* e) {
  if (x == 0 || x != x || fabs(x) == gs_d(0x7ff0000000000000ULL)) {
    *e = 0;
    return x;
  }
  int adj = 0;
  if (fabs(x) < 0x1p-1022) {
    x = gs_mul(x, 0x1p52);
    adj = -52;
  }
  gs_u64 b = gs_u(x);
  *e = adj + ((int)(b >> 52) & 0x7ff) - 1022;
  return gs_d((b & ~(0x7ffULL << 52)) | (1022ULL << 52));
}

// gs_log2 is control's log2: ln m = 2 atanh(s) by Estrin's scheme.
__device__ inline double gs_log2(double x) {
  int e;
  double m = gs_frexp(x, &e);
  if (m < GS_SQRT1_2) {
    m = gs_mul(m, 2.0);
    e--;
  }
  double s = (m - 1) / (m + 1);
  double z = gs_mul(s, s);
  double z2 = gs_mul(z, z);
  double z4 = gs_mul(z2, z2);
  double z8 = gs_mul(z4, z4);
  double p01 = 1 + gs_mul(z, 1.0 / 3);
  double p23 = 1.0 / 5 + gs_mul(z, 1.0 / 7);
  double p45 = 1.0 / 9 + gs_mul(z, 1.0 / 11);
  double p67 = 1.0 / 13 + gs_mul(z, 1.0 / 15);
  double q0 = p01 + gs_mul(z2, p23);
  double q1 = p45 + gs_mul(z2, p67);
  double r0 = q0 + gs_mul(z4, q1);
  double p = r0 + gs_mul(z8, 1.0 / 17);
  double lnm = gs_mul(gs_mul(2.0, s), p);
  return (double)e + gs_mul(lnm, GS_LOG2E);
}

// gs_round is Go's math.Round (half away from zero) on the bits.
__device__ __forceinline__ double gs_round(double x) {
  gs_u64 b = gs_u(x);
  unsigned e = (unsigned)(b >> 52) & 0x7ff;
  if (e < 1023) {  // |x| < 1, subnormals included: +-0 or +-1
    b &= 1ULL << 63;
    if (e == 1022) b |= 0x3ff0000000000000ULL;
  } else if (e < 1023 + 52) {  // |x| >= 1 with a fraction
    e -= 1023;
    b += (1ULL << 51) >> e;
    b &= ~(((1ULL << 52) - 1) >> e);
  }
  return gs_d(b);
}

// gs_exp2 is control's exp2: 2^f = e^(f ln 2) by its Taylor polynomial.
__device__ inline double gs_exp2(double y) {
  if (y > 1024) return gs_d(0x7ff0000000000000ULL);
  if (y < -1075) return 0;
  double n = gs_round(y);
  double g = gs_mul(y - n, GS_LN2);
  double g2 = gs_mul(g, g);
  double g4 = gs_mul(g2, g2);
  double g8 = gs_mul(g4, g4);
  double p01 = 1 + g;
  double p23 = 0.5 + gs_mul(g, 1.0 / 6);
  double p45 = 1.0 / 24 + gs_mul(g, 1.0 / 120);
  double p67 = 1.0 / 720 + gs_mul(g, 1.0 / 5040);
  double p89 = 1.0 / 40320 + gs_mul(g, 1.0 / 362880);
  double p1011 = 1.0 / 3628800 + gs_mul(g, 1.0 / 39916800);
  double p1213 = 1.0 / 479001600 + gs_mul(g, 1.0 / 6227020800.0);
  double q0 = p01 + gs_mul(g2, p23);
  double q1 = p45 + gs_mul(g2, p67);
  double q2 = p89 + gs_mul(g2, p1011);
  double r0 = q0 + gs_mul(g4, q1);
  double r1 = q2 + gs_mul(g4, p1213);
  double p = r0 + gs_mul(g8, r1);
  if (n < -1021 || n > 1022) return ldexp(p, (int)n);  // p 2^n subnormal or overflowing: one rounding, as Go's math.Ldexp
  return gs_mul(p, gs_d((gs_u64)((gs_i64)n + 1023) << 52));
}

// gs_pow is control.Pow.
__device__ inline double gs_ctl_pow(double x, double a) {
  if (!(x > 0) || x > GS_MAXFLOAT64 || a != a || a == gs_d(0x7ff0000000000000ULL) || a == gs_d(0xfff0000000000000ULL))
    return gs_go_nan();
  return gs_exp2(gs_mul(a, gs_log2(x)));
}

// gs_min_step is control.MinStep.
__device__ __forceinline__ double gs_min_step(double t) {
  double m = gs_mul(0x1p-50, fabs(t));
  if (!(m < 0x1p-1022)) return m;
  return 0x1p-1022;
}

// gs_max_abs is control.MaxAbs.
__device__ __forceinline__ double gs_max_abs(double x, double y) {
  double a = fabs(x), b = fabs(y);
  if (b > a || b != b) return b;
  return a;
}

__device__ __forceinline__ float gs_max_abs(float x, float y) {
  float a = fabs(x), b = fabs(y);
  if (b > a || b != b) return b;
  return a;
}

struct gs_pi {
  double beta1, beta2, safety, qmin, qmax, qoldinit;
};

struct gs_pi_state {
  double log2_err_old, log2_q_old;
  bool rejected;
};

// gs_pi_init is control's (*PI).Init.
__device__ __forceinline__ void gs_pi_init(const gs_pi& c, gs_pi_state& st) {
  st.log2_q_old = gs_log2(c.qoldinit);
  st.log2_err_old = st.log2_q_old;
  st.rejected = false;
}

// gs_pi_next is control's (*PI).Next: whether the step is accepted, and
// in *factor the ratio of the next step size to this one.
__device__ __forceinline__ bool gs_pi_next(const gs_pi& c, double err, gs_pi_state& st, double* factor) {
  if (!(err <= 1)) {
    st.rejected = true;
    if (err > 1 && err <= GS_MAXFLOAT64) {
      double q11 = gs_exp2(gs_mul(c.beta1, gs_log2(err)));
      *factor = 1 / gs_go_min(1 / c.qmin, q11 / c.safety);
      return false;
    }
    *factor = c.qmin;
    return false;
  }
  double q;
  if (err == 0) {
    q = 1 / c.qmax;
    st.log2_err_old = st.log2_q_old;
  } else {
    double l = gs_log2(err);
    q = gs_exp2(gs_mul(c.beta1, l) - gs_mul(c.beta2, st.log2_err_old)) / c.safety;
    q = gs_go_max(1 / c.qmax, gs_go_min(1 / c.qmin, q));
    st.log2_err_old = gs_go_max(l, st.log2_q_old);
  }
  double f = 1 / q;
  if (st.rejected && f > 1) f = 1;
  st.rejected = false;
  *factor = f;
  return true;
}

// gs_norm is control's Norm.Of over the first ND components (RMS, or
// DOP853's combined form), with the finiteness test of every component
// of the proposal y1: +Inf and *ok false when anything is not finite.
//
// It is generic over the state's type real (double, or float for the
// float32 kernels): the norm is then float's arithmetic on h rounded to
// float, and the result widened to double for the controller.
template <int N, int ND, bool DOP853, typename real = double>
__device__ __forceinline__ double gs_norm(double h, const real (&y)[N], const real (&y1)[N], const real (&ev)[ND],
                                 const real (&ev3)[ND], const real* atol, const real* rtol, bool* ok) {
  const real hr = (real)h;
  real sum5 = 0, sum3 = 0, fin = 0;
  GS_UNROLL for (int d = 0; d < ND; ++d) {
    real sc = atol[d] + gs_mul(rtol[d], gs_max_abs(y[d], y1[d]));
    real r = gs_mul(hr, ev[d]) / sc;
    sum5 += gs_mul(r, r);
    if (DOP853) {
      real r3 = gs_mul(hr, ev3[d]) / sc;
      sum3 += gs_mul(r3, r3);
    }
    fin += y1[d] - y1[d];
  }
  GS_UNROLL for (int d = ND; d < N; ++d) fin += y1[d] - y1[d];
  real err;
  if (!DOP853) {
    err = sqrt(sum5 / (real)ND);
  } else {
    err = 0;
    real den = sum5 + gs_mul((real)0.01, sum3);
    if (den > 0) err = sum5 / sqrt(gs_mul((real)ND, den));
  }
  if (fin + (err - err) != 0) {
    *ok = false;
    return gs_d(0x7ff0000000000000ULL);
  }
  *ok = true;
  return (double)err;
}

// gs_finite is control.Finite.
template <int N, typename real = double>
__device__ __forceinline__ bool gs_finite(const real (&v)[N]) {
  real s = 0;
  GS_UNROLL for (int d = 0; d < N; ++d) s += v[d] - v[d];
  return s == 0;
}

__device__ __forceinline__ double gs_sq(double x) { return gs_mul(x, x); }
__device__ __forceinline__ float gs_sq(float x) { return gs_mul(x, x); }

// gs_initial_step is control.InitialStep (Hairer, Norsett & Wanner I,
// II.4): the norms over the first ND components, the Euler probe over
// all N. It costs one evaluation of f. Over float states (real float)
// the sums are float's and the norms d0, d1, d2 are widened to double,
// where the rule itself runs.
template <int N, int ND, class Fn, typename real = double>
__device__ __forceinline__ double gs_initial_step(const Fn& f, const real* p, double t0, double dir, const real (&y0)[N],
                                         const real (&f0)[N], int order, const real* atol, const real* rtol,
                                         double hmax, real (&y1)[N], real (&f1)[N]) {
  real s0 = 0, s1 = 0;
  GS_UNROLL for (int i = 0; i < ND; ++i) {
    real sc = atol[i] + gs_mul(rtol[i], (real)fabs(y0[i]));
    s0 += gs_sq(y0[i] / sc);
    s1 += gs_sq(f0[i] / sc);
  }
  double d0 = (double)(real)sqrt(s0 / (real)ND);
  double d1 = (double)(real)sqrt(s1 / (real)ND);
  double h0 = 1e-6;
  if (d0 >= 1e-5 && d1 >= 1e-5) h0 = gs_mul(0.01, d0) / d1;
  h0 = gs_go_min(h0, hmax);
  const real dh = (real)gs_mul(dir, h0);
  GS_UNROLL for (int i = 0; i < N; ++i) y1[i] = y0[i] + gs_mul(dh, f0[i]);
  f((real)(t0 + gs_mul(dir, h0)), y1, p, f1);
  real s2 = 0;
  GS_UNROLL for (int i = 0; i < ND; ++i) {
    real sc = atol[i] + gs_mul(rtol[i], (real)fabs(y0[i]));
    s2 += gs_sq((f1[i] - f0[i]) / sc);
  }
  double d2 = (double)(real)sqrt(s2 / (real)ND) / h0;
  double hmin = gs_go_min(gs_min_step(t0), hmax);
  if (d2 != d2 || d2 == gs_d(0x7ff0000000000000ULL) || d2 == gs_d(0xfff0000000000000ULL)) return gs_go_max(h0, hmin);
  double dmax = gs_go_max(d1, d2);
  double h1;
  if (dmax <= 1e-15) {
    h1 = gs_go_max(1e-6, gs_mul(h0, 1e-3));
  } else {
    h1 = gs_ctl_pow(0.01 / dmax, 1 / (double)order);
  }
  return gs_go_max(gs_go_min(gs_go_min(gs_mul(100.0, h0), h1), hmax), hmin);
}

// ---- package ivp: the adaptive loop (Solve), over a stepper ----

// gs_adaptive is ivp's begin and Solve for one trajectory: the loop the
// CPU engine core runs over every stepper, here over the stepper St of
// a kernel family (gs_erk_traj, and the Rosenbrock one of ros.cuh),
// whose hooks are the stepper's part of each step. St provides:
//
//   real, NA       the state's type and size (the rows of y0, y, saved)
//   job, i         the launch's job and the trajectory's index
//   y, y1          the state and the proposal (real[NA])
//   accepted, rejected
//                  the step counters
//   start(t0)      the stepper's Start with y loaded: the mesh's first row
//   first(t0)      f at (t0, y), counted; false if it is not finite
//   initial_step(t0, dir, hmax)
//                  the initial-step rule (control.InitialStep), counted
//   advance(t, next)
//                  Advance after an accepted step
//   try_step(t, h, &ok)
//                  Attempt: the proposal into y1 and its error norm; ok
//                  false if a value is not finite (or W singular)
//   accept()       what Accept keeps of the attempt before the saves
//   save_at(dst, t, h, ts)
//                  the state at the save time ts inside the accepted
//                  step (t, t + h] into dst
//   push(h, tn)    ivp's Mesh.Push of (h, tn, y1); false if full
//   finish(status, t, h)
//                  writes the trajectory's results
//
// The loop is ivp's statement by statement: the step budget, the
// landing on t1 (h = t1 - t once 1.01 h reaches it), the step floor,
// the attempt, the PI controller's accept or reject (a non-finite
// attempt rejected with qmin), the save times inside (t, tn], the mesh,
// and hmax.
template <class St>
__device__ __forceinline__ void gs_adaptive(St& s) {
  typedef typename St::real real;
  constexpr int NA = St::NA;
  const auto& job = s.job;
  const gs_i64 i = s.i;
  const double t0 = job.t0[i], t1 = job.t1[i];
  const gs_i64 nsave = job.nsave;
  const double* save = job.save + i * job.save_stride;
  real* saved = job.saved + i * nsave * NA;
  const gs_pi ctl = {job.beta1, job.beta2, job.safety, job.qmin, job.qmax, job.qoldinit};

  // ivp's begin.
  double dir = 1.0;
  if (t1 < t0) dir = -1;
  const double hmax = gs_go_min(job.hmax, fabs(t1 - t0));
  GS_UNROLL for (int d = 0; d < NA; ++d) s.y[d] = job.y0[i * NA + d];
  for (gs_i64 r = 0; r < nsave * NA; ++r) saved[r] = (real)gs_go_nan();
  s.start(t0);
  gs_i64 isave = 0;
  for (; isave < nsave && save[isave] == t0; ++isave) {
    GS_UNROLL for (int d = 0; d < NA; ++d) saved[isave * NA + d] = s.y[d];
  }
  if (!s.first(t0)) {
    s.finish(GS_NON_FINITE, t0, 0);
    return;
  }
  double h = job.h0;
  if (h == 0) h = s.initial_step(t0, dir, hmax);
  h = gs_mul(dir, gs_go_min(h, hmax));

  // ivp's Solve.
  gs_pi_state cst;
  gs_pi_init(ctl, cst);
  double t = t0;
  bool non_finite = false;  // the last rejection was a non-finite attempt
  bool moved = false;       // the last attempt was accepted; advance is due
  for (;;) {
    if (s.accepted + s.rejected >= job.max_steps) {
      // ivp's Output.end: the due advance, then the results.
      if (moved) s.advance(t, true);
      s.finish(GS_MAX_STEPS_REACHED, t, h);
      return;
    }
    bool last = false;
    double rem = t1 - t;
    if (gs_mul(dir, t + gs_mul(1.01, h) - t1) >= 0) {
      h = rem;
      last = true;
    }
    if (fabs(h) < gs_min_step(t) || t + h == t || h != h) {
      if (moved) s.advance(t, true);
      s.finish(non_finite ? GS_NON_FINITE : GS_STEP_UNDERFLOW, t, h);
      return;
    }

    // The stepper's Attempt.
    if (moved) s.advance(t, true);
    bool ok;
    double err = s.try_step(t, h, &ok);
    moved = false;

    double factor;
    bool accept = gs_pi_next(ctl, err, cst, &factor);
    if (!ok) {
      accept = false;
      factor = ctl.qmin;
    }
    if (!accept) {
      s.rejected++;
      non_finite = !ok;
      h = gs_mul(h, factor);
      continue;
    }
    s.accepted++;
    non_finite = false;
    s.accept();
    double tn = t + h;
    if (last) tn = t1;
    // Save times inside (t, tn]: at tn the proposal, else the stepper's.
    for (; isave < nsave && gs_mul(dir, save[isave] - tn) <= 0; ++isave) {
      real* dst = saved + isave * NA;
      if (save[isave] == tn) {
        GS_UNROLL for (int d = 0; d < NA; ++d) dst[d] = s.y1[d];
      } else {
        s.save_at(dst, t, h, save[isave]);
      }
    }
    // ivp's Mesh.Push: a full mesh stops the solve at tn with status
    // Cancelled, as a refused Mesh.Grow does on the CPU.
    const bool recorded = s.push(h, tn);
    GS_UNROLL for (int d = 0; d < NA; ++d) s.y[d] = s.y1[d];
    if (!recorded || last) {
      s.advance(t + h, false);
      s.finish(recorded ? GS_SUCCESS : GS_CANCELLED, tn, h);
      return;
    }
    t = tn;
    moved = true;
    h = gs_mul(h, factor);
    if (fabs(h) > hmax) h = gs_mul(dir, hmax);
  }
}

// ---- erk's stepper ----

// gs_real_of<Job>::type is the type of the states of a job: double for
// gs_erk_job; the float32 kernels' job (gs_erk_job_f32, written only
// where Options.Float32 asks for it) specialises it to float.
template <class Job>
struct gs_real_of {
  typedef double type;
};

// gs_erk_norec is the recording policy of the forward kernels: it
// records nothing (and its push always succeeds, so that the loop's
// test of it folds away). The record kernels' policy
// (gs_erk_mesh_rec) writes each accepted step into the trajectory's
// mesh buffers.
struct gs_erk_norec {
  template <int N, typename real>
  __device__ __forceinline__ void start(double, const real (&)[N]) {}
  template <int N, typename real>
  __device__ __forceinline__ bool push(double, double, const real (&)[N]) { return true; }
  __device__ __forceinline__ void done() {}
};

// gs_erk_traj is one trajectory's solve: its state, stages and
// counters, and erk's stepper as the hooks of gs_adaptive. Job is the launch's
// struct (gs_erk_job; or gs_erk_job_f32, whose states, parameters and
// tolerances are float: the stages, f and the norm are then float's
// arithmetic, while times, step sizes and the controller stay double),
// Rec the recording policy (gs_erk_norec, or the record kernels').
template <class M, class Fn, int N, int ND, int NP, class Job = gs_erk_job, class Rec = gs_erk_norec>
struct gs_erk_traj {
  typedef typename gs_real_of<Job>::type real;
  enum { NA = N };
  const Job& job;
  gs_i64 i;
  Fn f;
  Rec rec;
  real p[NP > 0 ? NP : 1];
  real y[N], y1[N], yt[N];
  real k[M::S][N];
  real ks[M::LASTB + 1][N];  // the stages of the save-time re-steps (ks[0] unused: k[0] is the first)
  real ev[ND], ev3[ND];
  gs_i64 accepted, rejected, fevals;

  __device__ gs_erk_traj(const Job& j, gs_i64 idx, Rec r = Rec()) : job(j), i(idx), rec(r), accepted(0), rejected(0), fevals(0) {}

  // advance is erk's Advance: a deferred FSAL stage evaluated and
  // moved into k[0], or f at the new point for a method without FSAL.
  // (erk exchanges k[0] and k[S-1]; the copy gives k[0] the same
  // values, and k[S-1] is written again before it is read.)
  __device__ __forceinline__ void advance(double tend, bool next) {
    if (M::FSAL) {
      if (M::DEFER) {
        f((real)tend, y, p, k[M::S - 1]);
        fevals++;
      }
      GS_UNROLL for (int d = 0; d < N; ++d) k[0][d] = k[M::S - 1][d];
    } else if (next) {
      f((real)tend, y, p, k[0]);
      fevals++;
    }
  }

  // finish writes the trajectory's results.
  __device__ __forceinline__ void finish(gs_i64 status, double t, double h) {
    GS_UNROLL for (int d = 0; d < N; ++d) job.y[i * N + d] = y[d];
    job.t[i] = t;
    job.h[i] = h;
    job.status[i] = status;
    job.accepted[i] = accepted;
    job.rejected[i] = rejected;
    job.fevals[i] = fevals;
    rec.done();
  }

  // The hooks of gs_adaptive.

  // start is the mesh's first row (t0, y0).
  __device__ __forceinline__ void start(double t0) { rec.start(t0, y); }

  // first evaluates k[0] = f(t0, y0).
  __device__ __forceinline__ bool first(double t0) {
    f((real)t0, y, p, k[0]);
    fevals++;
    return gs_finite<N>(k[0]);
  }

  __device__ __forceinline__ double initial_step(double t0, double dir, double hmax) {
    const double h = gs_initial_step<N, ND>(f, p, t0, dir, y, k[0], M::ORDER, job.atol, job.rtol, hmax, y1, yt);
    fevals += 1;
    return h;
  }

  // try_step is erk's Attempt: the stages, the proposal and the norm.
  __device__ __forceinline__ double try_step(double t, double h, bool* ok) {
    fevals += M::EVALS;
    M::stages(f, t, h, p, y, y1, yt, k, ev, ev3);
    return gs_norm<N, ND, M::DOP853>(h, y, y1, ev, ev3, job.atol, job.rtol, ok);
  }

  __device__ __forceinline__ void accept() {}

  // save_at re-steps the save time ts from t (erk's dense output is
  // the re-step).
  __device__ __forceinline__ void save_at(real* dst, double t, double, double ts) {
    M::restep(f, t, ts - t, p, y, k[0], yt, ks, dst);
    fevals += M::LASTB;
  }

  __device__ __forceinline__ bool push(double h, double tn) { return rec.push(h, tn, y1); }

  __device__ __forceinline__ void solve() {
    GS_UNROLL for (int j = 0; j < NP; ++j) p[j] = job.p[i * NP + j];
    gs_adaptive(*this);
  }
};

// gs_erk_solve solves trajectory i of the job.
template <class M, class Fn, int N, int ND, int NP, class Job = gs_erk_job>
__device__ __forceinline__ void gs_erk_solve(const Job& job, gs_i64 i) {
  gs_erk_traj<M, Fn, N, ND, NP, Job> tr(job, i);
  tr.solve();
}
