// ros_runner.cpp: the host side of the emulation tests of the Rosenbrock
// kernels (ros_test.go). The test writes one translation unit:
// cuda_emu.h and emu_io.h, the generated source, the table
// gs_ros_kernels of its Rosenbrock kernels, then this file. It reads
// one launch from stdin and writes the results to stdout in emu_io.h's
// wire format:
//
//   cap, kernel, dim, nd, n, nsave, save_stride, max_steps, dense_save,
//   hmax, h0, beta1, beta2, safety, qmin, qmax, qoldinit, grid, block,
//   rtol[nd], atol[nd], t0[n], t1[n], y0[n*dim], p[n*GS_NP],
//   save[nsave or n*nsave]; writes y, t, h, saved, status, accepted,
//   rejected, fevals, jac_evals, lus. cap < 0: kernel indexes
//   gs_ros_kernels; cap >= 0: a record kernel, kernel indexing
//   gs_ros_record_kernels, with room for cap steps, which also writes
//   the meshes' steps, t, h and y. cap = -3: a float32 kernel, kernel
//   indexing gs_ros_kernels_f32 (gs_ros_job_f32): the inputs rtol,
//   atol, y0 and p are rounded to float, the float y and saved widened.
//
// With a first value of -2 it runs an adjoint kernel instead: kernel
// (its index in gs_ros_adjoint_kernels), n, nsave, save_stride,
// dense_save, cap, grid, block, p[n*GS_NP], save[nsave or n*nsave],
// the mesh (steps[n], t[n*(cap+1)], h[n*cap], y[n*(cap+1)*GS_DIM]),
// cot_y[n*GS_DIM], has_cot_saved, cot_saved[n*nsave*GS_DIM] if set;
// writes gy0[n*GS_DIM], gp[n*GS_NP].

static int adjoint() {
  long long kernel = gs_read_i64();
  long long nk = sizeof gs_ros_adjoint_kernels / sizeof gs_ros_adjoint_kernels[0];
  if (kernel < 0 || kernel >= nk || gs_ros_adjoint_kernels[kernel] == nullptr) {
    std::fprintf(stderr, "runner: no adjoint kernel %lld\n", kernel);
    return 2;
  }
  gs_ros_job job = {};
  job.n = gs_read_i64();
  job.nsave = gs_read_i64();
  job.save_stride = gs_read_i64();
  job.dense_save = gs_read_i64();
  long long cap = gs_read_i64(), grid = gs_read_i64(), block = gs_read_i64();
  long long n = job.n, ns = job.nsave;
  std::vector<double> p = gs_read_f64s(n * GS_NP), save = gs_read_f64s(job.save_stride == 0 ? ns : n * ns);
  std::vector<long long> steps(n);
  for (long long i = 0; i < n; ++i) steps[i] = gs_read_i64();
  std::vector<double> mt = gs_read_f64s(n * (cap + 1)), mh = gs_read_f64s(n * cap), my = gs_read_f64s(n * (cap + 1) * GS_DIM);
  std::vector<double> coty = gs_read_f64s(n * GS_DIM);
  long long has = gs_read_i64();
  std::vector<double> cots = gs_read_f64s(has ? n * ns * GS_DIM : 0);
  std::vector<double> gy0(n * GS_DIM), gp(n * GS_NP);
  std::vector<long long> owner(n * ns);
  job.p = p.data();
  job.save = save.data();
  gs_ros_mesh mesh = {cap, mt.data(), mh.data(), my.data(), steps.data()};
  gs_ros_adj adj = {coty.data(), has ? cots.data() : nullptr, gy0.data(), gp.data(), owner.data()};
  gs_emu_launch(dim3((unsigned)grid), dim3((unsigned)block), gs_ros_adjoint_kernels[kernel], job, mesh, adj);
  gs_write_f64s(gy0.data(), gy0.size());
  gs_write_f64s(gp.data(), gp.size());
  return 0;
}

int main() {
  long long cap = gs_read_i64();
  if (cap == -2) return adjoint();
  long long kernel = gs_read_i64(), dim = gs_read_i64(), nd = gs_read_i64();
  bool rec = cap >= 0, f32 = cap == -3;
  long long nk = f32  ? (long long)(sizeof gs_ros_kernels_f32 / sizeof gs_ros_kernels_f32[0])
                 : rec ? (long long)(sizeof gs_ros_record_kernels / sizeof gs_ros_record_kernels[0])
                       : (long long)(sizeof gs_ros_kernels / sizeof gs_ros_kernels[0]);
  if (kernel < 0 || kernel >= nk || nd != GS_DIM ||
      dim != (rec ? GS_DIM : f32 ? gs_ros_kernel_f32_dims[kernel] : gs_ros_kernel_dims[kernel])) {
    std::fprintf(stderr, "runner: kernel %lld (record %d) with dim %lld, nd %lld: no such kernel\n", kernel, (int)rec, dim, nd);
    return 2;
  }
  gs_ros_job job;
  job.n = gs_read_i64();
  job.nsave = gs_read_i64();
  job.save_stride = gs_read_i64();
  job.max_steps = gs_read_i64();
  job.dense_save = gs_read_i64();
  job.hmax = gs_read_f64();
  job.h0 = gs_read_f64();
  job.beta1 = gs_read_f64();
  job.beta2 = gs_read_f64();
  job.safety = gs_read_f64();
  job.qmin = gs_read_f64();
  job.qmax = gs_read_f64();
  job.qoldinit = gs_read_f64();
  long long grid = gs_read_i64(), block = gs_read_i64();
  long long n = job.n, ns = job.nsave;
  std::vector<double> rtol = gs_read_f64s(nd), atol = gs_read_f64s(nd);
  std::vector<double> t0 = gs_read_f64s(n), t1 = gs_read_f64s(n), y0 = gs_read_f64s(n * dim);
  std::vector<double> p = gs_read_f64s(n * GS_NP), save = gs_read_f64s(job.save_stride == 0 ? ns : n * ns);
  std::vector<double> y(n * dim), t(n), h(n), saved(n * ns * dim);
  std::vector<long long> status(n, -1), acc(n), rej(n), fev(n), jev(n), lus(n);
  job.rtol = rtol.data();
  job.atol = atol.data();
  job.t0 = t0.data();
  job.t1 = t1.data();
  job.y0 = y0.data();
  job.p = p.data();
  job.save = save.data();
  job.y = y.data();
  job.t = t.data();
  job.h = h.data();
  job.saved = saved.data();
  job.status = status.data();
  job.accepted = acc.data();
  job.rejected = rej.data();
  job.fevals = fev.data();
  job.jac_evals = jev.data();
  job.lus = lus.data();
  gs_ros_mesh mesh;
  std::vector<double> mt, mh, my;
  std::vector<long long> msteps;
  if (f32) {
    auto narrow = [](const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); };
    std::vector<float> rtol32 = narrow(rtol), atol32 = narrow(atol), y032 = narrow(y0), p32 = narrow(p);
    std::vector<float> y32(y.size()), saved32(saved.size());
    gs_ros_job_f32 j;
    j.n = job.n;
    j.nsave = job.nsave;
    j.save_stride = job.save_stride;
    j.max_steps = job.max_steps;
    j.hmax = job.hmax;
    j.h0 = job.h0;
    j.beta1 = job.beta1;
    j.beta2 = job.beta2;
    j.safety = job.safety;
    j.qmin = job.qmin;
    j.qmax = job.qmax;
    j.qoldinit = job.qoldinit;
    j.rtol = rtol32.data();
    j.atol = atol32.data();
    j.t0 = job.t0;
    j.t1 = job.t1;
    j.y0 = y032.data();
    j.p = p32.data();
    j.save = job.save;
    j.y = y32.data();
    j.t = job.t;
    j.h = job.h;
    j.saved = saved32.data();
    j.status = job.status;
    j.accepted = job.accepted;
    j.rejected = job.rejected;
    j.fevals = job.fevals;
    j.dense_save = job.dense_save;
    j.jac_evals = job.jac_evals;
    j.lus = job.lus;
    gs_emu_launch(dim3((unsigned)grid), dim3((unsigned)block), gs_ros_kernels_f32[kernel], j);
    for (size_t i = 0; i < y.size(); ++i) y[i] = y32[i];
    for (size_t i = 0; i < saved.size(); ++i) saved[i] = saved32[i];
  } else if (cap < 0) {
    gs_emu_launch(dim3((unsigned)grid), dim3((unsigned)block), gs_ros_kernels[kernel], job);
  } else {
    mt.assign(n * (cap + 1), 0);
    mh.assign(n * cap, 0);
    my.assign(n * (cap + 1) * dim, 0);
    msteps.assign(n, -1);
    mesh.cap = cap;
    mesh.t = mt.data();
    mesh.h = mh.data();
    mesh.y = my.data();
    mesh.steps = msteps.data();
    gs_emu_launch(dim3((unsigned)grid), dim3((unsigned)block), gs_ros_record_kernels[kernel], job, mesh);
  }
  gs_write_f64s(y.data(), y.size());
  gs_write_f64s(t.data(), n);
  gs_write_f64s(h.data(), n);
  gs_write_f64s(saved.data(), saved.size());
  gs_write_i64s(status.data(), n);
  gs_write_i64s(acc.data(), n);
  gs_write_i64s(rej.data(), n);
  gs_write_i64s(fev.data(), n);
  gs_write_i64s(jev.data(), n);
  gs_write_i64s(lus.data(), n);
  if (cap >= 0) {
    gs_write_i64s(msteps.data(), n);
    gs_write_f64s(mt.data(), mt.size());
    gs_write_f64s(mh.data(), mh.size());
    gs_write_f64s(my.data(), my.size());
  }
  return 0;
}
