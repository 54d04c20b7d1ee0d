// cuda_emu.h: the CUDA built-ins that gradsolve's generated kernels use,
// emulated on the host so that the same source compiles with a C++17
// compiler (g++ or clang++: -std=c++17 -O2 -ffp-contract=off
// -fno-fast-math) and a launch runs as loops over the grid.
//
// What it provides, and nothing more:
//
//   - the function qualifiers __global__, __device__, __host__,
//     __forceinline__, __noinline__ and the variable qualifier
//     __constant__, as nothing (or plain inline);
//   - the built-in variables threadIdx, blockIdx, blockDim and gridDim
//     (thread_local, so that blocks could run on several host threads);
//   - the intrinsics the kernels call: __dmul_rn, __fmul_rn (a product
//     rounded on its own: compile with -ffp-contract=off so that no
//     product is fused with a sum), __double_as_longlong,
//     __longlong_as_double, __float_as_int, __int_as_float, and the
//     math library's exact functions (sqrt, fabs, floor, ceil, rint,
//     trunc, round, ldexp, frexp) from <cmath>, which are IEEE's on both
//     sides;
//   - gs_emu_launch(grid, block, kernel, args...), which runs the kernel
//     once per thread of the grid, blocks and threads in order, one at a
//     time. That is a legal schedule for any kernel that does not
//     synchronise its threads (no __syncthreads, no shared memory, no
//     warp functions): the kernels of gradsolve give each thread its own
//     trajectories and never communicate.
//
// It emulates the semantics, not the speed: it is a test harness.
#ifndef GRADSOLVE_CUDA_EMU_H
#define GRADSOLVE_CUDA_EMU_H

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#error "cuda_emu.h emulates CUDA on the host; do not include it in device compilations"
#endif

#include <cmath>
#include <cstring>

#define GS_EMULATION 1

#define __global__
#define __device__
#define __host__
#define __constant__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))

struct uint3 {
  unsigned int x, y, z;
};

struct dim3 {
  unsigned int x, y, z;
  dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
};

inline thread_local uint3 threadIdx = {0, 0, 0};
inline thread_local uint3 blockIdx = {0, 0, 0};
inline thread_local dim3 blockDim;
inline thread_local dim3 gridDim;

// Products rounded on their own. With -ffp-contract=off the compiler
// fuses no product into a multiply-add anywhere; these exist because the
// device code calls them, where they forbid fusion whatever the flags.
inline double __dmul_rn(double a, double b) { return a * b; }
inline float __fmul_rn(float a, float b) { return a * b; }

inline long long __double_as_longlong(double x) {
  long long u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

inline double __longlong_as_double(long long u) {
  double x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

inline int __float_as_int(float x) {
  int u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

inline float __int_as_float(int u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

using std::ceil;
using std::fabs;
using std::floor;
using std::frexp;
using std::ldexp;
using std::rint;
using std::round;
using std::sqrt;
using std::trunc;

// gs_emu_launch runs kernel<<<grid, block>>>(args...) as loops: every
// block in order (x fastest), and in each block every thread in order.
template <typename... Params, typename... Args>
void gs_emu_launch(dim3 grid, dim3 block, void (*kernel)(Params...), Args&&... args) {
  gridDim = grid;
  blockDim = block;
  for (unsigned int bz = 0; bz < grid.z; ++bz)
    for (unsigned int by = 0; by < grid.y; ++by)
      for (unsigned int bx = 0; bx < grid.x; ++bx) {
        blockIdx = {bx, by, bz};
        for (unsigned int tz = 0; tz < block.z; ++tz)
          for (unsigned int ty = 0; ty < block.y; ++ty)
            for (unsigned int tx = 0; tx < block.x; ++tx) {
              threadIdx = {tx, ty, tz};
              kernel(args...);
            }
      }
}

#endif  // GRADSOLVE_CUDA_EMU_H
