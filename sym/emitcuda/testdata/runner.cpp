// runner.cpp: the host side of the emulation tests (emu_test.go). The
// test writes one translation unit: cuda_emu.h and emu_io.h, the
// generated source, the table gs_kernels of its kernels, then this
// file. It reads a command from stdin and writes the results to stdout
// in emu_io.h's wire format.
//
//   mode 0 (solve): kernel, dim, nd, n, nsave, save_stride, max_steps,
//     hmax, h0, beta1, beta2, safety, qmin, qmax, qoldinit, grid, block,
//     rtol[nd], atol[nd], t0[n], t1[n], y0[n*dim], p[n*GS_NP],
//     save[nsave or n*nsave]; writes y, t, h, saved, status, accepted,
//     rejected, fevals.
//   mode 1 (f in double), 2 (f in float): n, then n rows of
//     (t, y[GS_DIM], p[GS_NP]); writes n rows of dy[GS_DIM].
//   mode 3 (the controller's Pow): n, then n pairs (x, a); writes n
//     values gs_ctl_pow(x, a).
//   mode 4 (solve in float): as mode 0 on a float32 kernel (kernel
//     indexes gs_kernels_f32); the inputs are rounded to float and the
//     float results widened to double.
//   mode 5 (record): as mode 0 on a record kernel (gs_kernels_rec), then
//     cap; writes mode 0's results, then steps[n], mesh_t[n*(cap+1)],
//     mesh_h[n*cap], mesh_y[n*(cap+1)*dim].
//   mode 6 (adjoint): kernel (gs_kernels_adj), dim, n, nsave,
//     save_stride, cap, grid, block, p[n*GS_NP], save, mesh_t, mesh_h,
//     mesh_y, steps[n], status[n], cot_y[n*dim], has_cot_saved,
//     cot_saved[n*nsave*dim] where it is 1; writes gy0[n*dim],
//     gp[n*GS_NP].

// fwd_io holds a forward job's inputs and results, read from stdin.
struct fwd_io {
  long long dim, nd, grid, block;
  gs_erk_job job;
  std::vector<double> rtol, atol, t0, t1, y0, p, save, y, t, h, saved;
  std::vector<long long> status, acc, rej, fev;

  // read reads a job after its kernel's index, for a kernel of dims
  // (dims, nds) in a table of nk.
  bool read(long long kernel, long long nk, const long long* dims, const long long* nds) {
    dim = gs_read_i64();
    nd = gs_read_i64();
    if (kernel < 0 || kernel >= nk || dim != dims[kernel] || nd != nds[kernel]) {
      std::fprintf(stderr, "runner: kernel %lld with dim %lld, nd %lld: no such kernel\n", kernel, dim, nd);
      return false;
    }
    job.n = gs_read_i64();
    job.nsave = gs_read_i64();
    job.save_stride = gs_read_i64();
    job.max_steps = gs_read_i64();
    job.hmax = gs_read_f64();
    job.h0 = gs_read_f64();
    job.beta1 = gs_read_f64();
    job.beta2 = gs_read_f64();
    job.safety = gs_read_f64();
    job.qmin = gs_read_f64();
    job.qmax = gs_read_f64();
    job.qoldinit = gs_read_f64();
    grid = gs_read_i64();
    block = gs_read_i64();
    long long n = job.n, ns = job.nsave;
    rtol = gs_read_f64s(nd);
    atol = gs_read_f64s(nd);
    t0 = gs_read_f64s(n);
    t1 = gs_read_f64s(n);
    y0 = gs_read_f64s(n * dim);
    p = gs_read_f64s(n * GS_NP);
    save = gs_read_f64s(job.save_stride == 0 ? ns : n * ns);
    y.assign(n * dim, 0);
    t.assign(n, 0);
    h.assign(n, 0);
    saved.assign(n * ns * dim, 0);
    status.assign(n, -1);
    acc.assign(n, 0);
    rej.assign(n, 0);
    fev.assign(n, 0);
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
    return true;
  }

  void write() {
    long long n = job.n;
    gs_write_f64s(y.data(), y.size());
    gs_write_f64s(t.data(), n);
    gs_write_f64s(h.data(), n);
    gs_write_f64s(saved.data(), saved.size());
    gs_write_i64s(status.data(), n);
    gs_write_i64s(acc.data(), n);
    gs_write_i64s(rej.data(), n);
    gs_write_i64s(fev.data(), n);
  }
};

static std::vector<float> gs_to_f32(const std::vector<double>& v) {
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = (float)v[i];
  return out;
}

static void gs_from_f32(std::vector<double>& dst, const std::vector<float>& v) {
  for (size_t i = 0; i < v.size(); ++i) dst[i] = v[i];
}

int main() {
  long long mode = gs_read_i64();
  if (mode == 1 || mode == 2) {
    long long n = gs_read_i64();
    std::vector<double> out;
    for (long long r = 0; r < n; ++r) {
      double t = gs_read_f64();
      std::vector<double> y = gs_read_f64s(GS_DIM), p = gs_read_f64s(GS_NP > 0 ? GS_NP : 0);
      double dy[GS_DIM];
      if (mode == 1) {
        gs_f<double>(t, y.data(), p.data(), dy);
      } else {
        float yf[GS_DIM], pf[GS_NP > 0 ? GS_NP : 1], dyf[GS_DIM];
        for (int i = 0; i < GS_DIM; ++i) yf[i] = (float)y[i];
        for (int i = 0; i < GS_NP; ++i) pf[i] = (float)p[i];
        gs_f<float>((float)t, yf, pf, dyf);
        for (int i = 0; i < GS_DIM; ++i) dy[i] = dyf[i];
      }
      gs_write_f64s(dy, GS_DIM);
    }
    return 0;
  }
  if (mode == 3) {
    long long n = gs_read_i64();
    for (long long r = 0; r < n; ++r) {
      double x = gs_read_f64(), a = gs_read_f64();
      double v = gs_ctl_pow(x, a);
      gs_write_f64s(&v, 1);
    }
    return 0;
  }
  if (mode == 0 || mode == 4 || mode == 5) {
    long long kernel = gs_read_i64();
    fwd_io io;
    bool ok = false;
    if (mode == 0) ok = io.read(kernel, sizeof gs_kernels / sizeof gs_kernels[0], gs_kernel_dims, gs_kernel_normdims);
#ifdef GS_HAVE_F32
    if (mode == 4) ok = io.read(kernel, sizeof gs_kernels_f32 / sizeof gs_kernels_f32[0], gs_kernel_f32_dims, gs_kernel_f32_normdims);
#endif
#ifdef GS_HAVE_REC
    if (mode == 5) ok = io.read(kernel, sizeof gs_kernels_rec / sizeof gs_kernels_rec[0], gs_kernel_rec_dims, gs_kernel_rec_dims);
#endif
    if (!ok) return 2;
    dim3 grid((unsigned)io.grid), block((unsigned)io.block);
    if (mode == 0) {
      gs_emu_launch(grid, block, gs_kernels[kernel], io.job);
      io.write();
      return 0;
    }
#ifdef GS_HAVE_F32
    if (mode == 4) {
      std::vector<float> rtol = gs_to_f32(io.rtol), atol = gs_to_f32(io.atol), y0 = gs_to_f32(io.y0), p = gs_to_f32(io.p);
      std::vector<float> y(io.y.size()), saved(io.saved.size());
      gs_erk_job_f32 j;
      j.n = io.job.n;
      j.nsave = io.job.nsave;
      j.save_stride = io.job.save_stride;
      j.max_steps = io.job.max_steps;
      j.hmax = io.job.hmax;
      j.h0 = io.job.h0;
      j.beta1 = io.job.beta1;
      j.beta2 = io.job.beta2;
      j.safety = io.job.safety;
      j.qmin = io.job.qmin;
      j.qmax = io.job.qmax;
      j.qoldinit = io.job.qoldinit;
      j.rtol = rtol.data();
      j.atol = atol.data();
      j.t0 = io.job.t0;
      j.t1 = io.job.t1;
      j.y0 = y0.data();
      j.p = p.data();
      j.save = io.job.save;
      j.y = y.data();
      j.t = io.job.t;
      j.h = io.job.h;
      j.saved = saved.data();
      j.status = io.job.status;
      j.accepted = io.job.accepted;
      j.rejected = io.job.rejected;
      j.fevals = io.job.fevals;
      gs_emu_launch(grid, block, gs_kernels_f32[kernel], j);
      gs_from_f32(io.y, y);
      gs_from_f32(io.saved, saved);
      io.write();
      return 0;
    }
#endif
#ifdef GS_HAVE_REC
    gs_erk_record_job r;
    r.fwd = io.job;
    r.cap = gs_read_i64();
    long long n = io.job.n, c = r.cap;
    std::vector<double> mt(n * (c + 1)), mh(n * c), my(n * (c + 1) * io.dim);
    std::vector<long long> steps(n, -2);
    r.mesh_t = mt.data();
    r.mesh_h = mh.data();
    r.mesh_y = my.data();
    r.steps = steps.data();
    gs_emu_launch(grid, block, gs_kernels_rec[kernel], r);
    io.write();
    gs_write_i64s(steps.data(), n);
    gs_write_f64s(mt.data(), mt.size());
    gs_write_f64s(mh.data(), mh.size());
    gs_write_f64s(my.data(), my.size());
    return 0;
#endif
  }
#ifdef GS_HAVE_ADJ
  if (mode == 6) {
  long long kernel = gs_read_i64(), dim = gs_read_i64();
  if (kernel < 0 || kernel >= (long long)(sizeof gs_kernels_adj / sizeof gs_kernels_adj[0]) || dim != gs_kernel_adj_dims[kernel]) {
    std::fprintf(stderr, "runner: adjoint kernel %lld with dim %lld: no such kernel\n", kernel, dim);
    return 2;
  }
  gs_erk_adjoint_job a;
  a.n = gs_read_i64();
  a.nsave = gs_read_i64();
  a.save_stride = gs_read_i64();
  a.cap = gs_read_i64();
  long long grid = gs_read_i64(), block = gs_read_i64();
  long long n = a.n, ns = a.nsave, c = a.cap;
  std::vector<double> p = gs_read_f64s(n * GS_NP), save = gs_read_f64s(a.save_stride == 0 ? ns : n * ns);
  std::vector<double> mt = gs_read_f64s(n * (c + 1)), mh = gs_read_f64s(n * c), my = gs_read_f64s(n * (c + 1) * dim);
  std::vector<long long> steps(n), status(n);
  for (auto& v : steps) v = gs_read_i64();
  for (auto& v : status) v = gs_read_i64();
  std::vector<double> cy = gs_read_f64s(n * dim), cs;
  bool has_cs = gs_read_i64() != 0;
  if (has_cs) cs = gs_read_f64s(n * ns * dim);
  std::vector<double> gy0(n * dim), gp(n * GS_NP);
  a.p = p.data();
  a.save = save.data();
  a.mesh_t = mt.data();
  a.mesh_h = mh.data();
  a.mesh_y = my.data();
  a.steps = steps.data();
  a.status = status.data();
  a.cot_y = cy.data();
  a.cot_saved = has_cs ? cs.data() : nullptr;
  a.gy0 = gy0.data();
  a.gp = gp.data();
  gs_emu_launch(dim3((unsigned)grid), dim3((unsigned)block), gs_kernels_adj[kernel], a);
  gs_write_f64s(gy0.data(), gy0.size());
  gs_write_f64s(gp.data(), gp.size());
  return 0;
  }
#endif
  std::fprintf(stderr, "runner: unknown mode %lld\n", mode);
  return 2;
}
