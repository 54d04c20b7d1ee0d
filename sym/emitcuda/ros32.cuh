
// ---- the float32 Rosenbrock kernels' job ----
//
// gs_ros_job_f32 is gs_ros_job with float states, as gs_erk_job_f32 is
// gs_erk_job: the initial and final states, the saved states, the
// parameters and the tolerances are float, while the times (t0, t1, the
// save times, the time reached and the last step size), the options and
// the counters stay as they are. Every field is 8 bytes, in gs_ros_job's
// order, so both structs have one layout.
//
// The kernels taking it run gs_ros_traj over float: f, J, f_t and the
// sensitivity programs (gs_f<float> and the others), W = I - h gamma J,
// its LU factors and solves, the stage sums and the error norm are
// float's arithmetic; the time, the step size, the step floor, the
// landing on t1, the initial-step rule and the PI controller are
// double's, on the norm widened to double.
struct gs_ros_job_f32 {
  gs_i64 n;            // trajectories
  gs_i64 nsave;        // save times per trajectory (K)
  gs_i64 save_stride;  // 0: one list of K times for all; K: row i of save for trajectory i
  gs_i64 max_steps;    // the step budget: accepted plus rejected attempts (>= 1)
  double hmax;         // bound on |h|; +Inf: none beyond |t1 - t0|
  double h0;           // first step size; 0: automatic (the initial-step rule)
  double beta1, beta2, safety, qmin, qmax, qoldinit;  // the PI controller
  const float* rtol;   // the tolerances of the error norm's components (the state's: Dim)
  const float* atol;
  const double* t0;    // n
  const double* t1;    // n
  const float* y0;     // n x N (N: the kernel's Dim, the state and its sensitivity columns)
  const float* p;      // n x NP
  const double* save;  // K, or n x K
  float* y;            // n x N: the final state (the last accepted one on failure)
  double* t;           // n: the time reached
  double* h;           // n: the last step size tried
  float* saved;        // n x K x N: the states at the save times (NaN where not reached)
  gs_i64* status;      // n: a gradsolve Status
  gs_i64* accepted;    // n
  gs_i64* rejected;    // n
  gs_i64* fevals;      // n
  gs_i64 dense_save;   // nonzero: save times from the continuous extension
  gs_i64* jac_evals;   // n: Jacobian evaluations
  gs_i64* lus;         // n: LU factorisations
};

template <>
struct gs_real_of<gs_ros_job_f32> {
  typedef float type;
};
