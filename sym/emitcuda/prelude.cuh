// ---- prelude: types and the exact operations every part below uses ----
//
// This source compiles with NVRTC or nvcc for the device (use
// --fmad=false: no product is fused into a multiply-add) and, for
// tests, with a host C++17 compiler after cuda_emu.h, which emulates the
// CUDA built-ins (package internal/cudaemu). It includes no header.
// (__CUDA__ is clang's CUDA mode.)

#if defined(__CUDACC__) || defined(__CUDACC_RTC__) || defined(__CUDA__)
#define GS_DEVICE_COMPILE 1
#elif !defined(GS_EMULATION)
#error "compile with NVRTC or nvcc, or include cuda_emu.h (package internal/cudaemu) first"
#endif

typedef unsigned long long gs_u64;
typedef long long gs_i64;

#if defined(GS_DEVICE_COMPILE)
#define GS_UNROLL _Pragma("unroll")
#else
#define GS_UNROLL
#endif

// The bits of a double and back.
__device__ __forceinline__ gs_u64 gs_u(double x) { return (gs_u64)__double_as_longlong(x); }
__device__ __forceinline__ double gs_d(gs_u64 u) { return __longlong_as_double((gs_i64)u); }

// A comparison's mask: all ones where it holds.
__device__ __forceinline__ gs_u64 gs_mask(bool c) { return c ? ~0ULL : 0ULL; }

// Products rounded on their own, never fused with a sum (Go's
// float64(a*b), which the tape and every CPU engine round).
__device__ __forceinline__ double gs_mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float gs_mul(float a, float b) { return __fmul_rn(a, b); }

// A constant given by its double bits (NaN payloads, infinities, -0),
// in the type real.
template <typename real>
__device__ __forceinline__ real gs_bits(gs_u64 b) { return (real)gs_d(b); }

// Go's math.NaN(): the NaN the CPU engines write where no value exists.
__device__ __forceinline__ double gs_go_nan() { return gs_d(0x7ff8000000000001ULL); }

__device__ __forceinline__ bool gs_isnan(double x) { return x != x; }

// Go's math.Min and math.Max, case for case: an infinity of the winning
// sign beats a NaN, a NaN beats every number, -0 is below +0.
__device__ __forceinline__ double gs_go_min(double x, double y) {
  if (x == gs_d(0xfff0000000000000ULL) || y == gs_d(0xfff0000000000000ULL)) return gs_d(0xfff0000000000000ULL);
  if (x != x || y != y) return gs_go_nan();
  if (x == 0 && x == y) return (gs_u(x) >> 63) ? x : y;
  return x < y ? x : y;
}

__device__ __forceinline__ double gs_go_max(double x, double y) {
  if (x == gs_d(0x7ff0000000000000ULL) || y == gs_d(0x7ff0000000000000ULL)) return gs_d(0x7ff0000000000000ULL);
  if (x != x || y != y) return gs_go_nan();
  if (x == 0 && x == y) return (gs_u(x) >> 63) ? y : x;
  return x > y ? x : y;
}

