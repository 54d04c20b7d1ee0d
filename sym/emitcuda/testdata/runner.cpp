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
  if (mode != 0) {
    std::fprintf(stderr, "runner: unknown mode %lld\n", mode);
    return 2;
  }
  long long kernel = gs_read_i64(), dim = gs_read_i64(), nd = gs_read_i64();
  long long nk = sizeof gs_kernels / sizeof gs_kernels[0];
  if (kernel < 0 || kernel >= nk || dim != gs_kernel_dims[kernel] || nd != gs_kernel_normdims[kernel]) {
    std::fprintf(stderr, "runner: kernel %lld with dim %lld, nd %lld: no such kernel\n", kernel, dim, nd);
    return 2;
  }
  gs_erk_job job;
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
  long long grid = gs_read_i64(), block = gs_read_i64();
  long long n = job.n, ns = job.nsave;
  std::vector<double> rtol = gs_read_f64s(nd), atol = gs_read_f64s(nd);
  std::vector<double> t0 = gs_read_f64s(n), t1 = gs_read_f64s(n), y0 = gs_read_f64s(n * dim);
  std::vector<double> p = gs_read_f64s(n * GS_NP), save = gs_read_f64s(job.save_stride == 0 ? ns : n * ns);
  std::vector<double> y(n * dim), t(n), h(n), saved(n * ns * dim);
  std::vector<long long> status(n, -1), acc(n), rej(n), fev(n);
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
  gs_emu_launch(dim3((unsigned)grid), dim3((unsigned)block), gs_kernels[kernel], job);
  gs_write_f64s(y.data(), y.size());
  gs_write_f64s(t.data(), n);
  gs_write_f64s(h.data(), n);
  gs_write_f64s(saved.data(), saved.size());
  gs_write_i64s(status.data(), n);
  gs_write_i64s(acc.data(), n);
  gs_write_i64s(rej.data(), n);
  gs_write_i64s(fev.data(), n);
  return 0;
}
