// emu_io.h: the host side of cudaemu's wire format, for test programs
// that read their inputs from stdin and write their results to stdout:
// a sequence of little-endian 64-bit values, integers (int64) and
// floating-point numbers (IEEE binary64 bit patterns), in an order the
// program and its Go driver agree on. Any read past the end of the
// input ends the program with status 2.
#ifndef GRADSOLVE_EMU_IO_H
#define GRADSOLVE_EMU_IO_H

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

inline void gs_io_read(void* dst, size_t n) {
  if (n > 0 && std::fread(dst, 1, n, stdin) != n) {
    std::fprintf(stderr, "emu_io: input ends early\n");
    std::exit(2);
  }
}

inline long long gs_read_i64() {
  long long v;
  gs_io_read(&v, sizeof v);
  return v;
}

inline double gs_read_f64() {
  double v;
  gs_io_read(&v, sizeof v);
  return v;
}

inline std::vector<double> gs_read_f64s(long long n) {
  if (n < 0) {
    std::fprintf(stderr, "emu_io: negative length %lld\n", n);
    std::exit(2);
  }
  std::vector<double> v(static_cast<size_t>(n));
  gs_io_read(v.data(), v.size() * sizeof(double));
  return v;
}

inline void gs_write_i64(long long v) { std::fwrite(&v, sizeof v, 1, stdout); }

inline void gs_write_f64s(const double* v, size_t n) { std::fwrite(v, sizeof(double), n, stdout); }

inline void gs_write_i64s(const long long* v, size_t n) { std::fwrite(v, sizeof(long long), n, stdout); }

#endif  // GRADSOLVE_EMU_IO_H
