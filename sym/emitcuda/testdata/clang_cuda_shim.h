// clang_cuda_shim.h: what the generated source needs of the CUDA
// headers when clang compiles it for the device without a CUDA
// installation (clang++ -x cuda --cuda-device-only -nocudainc
// -nocudalib; TestDeviceCompile): the qualifiers, the built-in
// variables (clang's own header), and the intrinsics and exact math
// functions as clang's NVVM builtins or, where there is no builtin,
// declarations of libdevice's functions (left unresolved in the PTX).
#include <__clang_cuda_builtin_vars.h>
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __constant__ __attribute__((constant))
__device__ inline double __dmul_rn(double a, double b) { return __nvvm_mul_rn_d(a, b); }
__device__ inline float __fmul_rn(float a, float b) { return __nvvm_mul_rn_f(a, b); }
__device__ inline long long __double_as_longlong(double x) { return __nvvm_bitcast_d2ll(x); }
__device__ inline double __longlong_as_double(long long x) { return __nvvm_bitcast_ll2d(x); }
__device__ inline double sqrt(double x) { return __nvvm_sqrt_rn_d(x); }
__device__ inline float sqrt(float x) { return __nvvm_sqrt_rn_f(x); }
__device__ inline double fabs(double x) { return __nvvm_fabs_d(x); }
__device__ inline float fabs(float x) { return __nvvm_fabs_f(x); }
__device__ inline double floor(double x) { return __nvvm_floor_d(x); }
__device__ inline float floor(float x) { return __nvvm_floor_f(x); }
__device__ inline double ceil(double x) { return __nvvm_ceil_d(x); }
__device__ inline float ceil(float x) { return __nvvm_ceil_f(x); }
__device__ inline double rint(double x) { return __nvvm_round_d(x); }
__device__ inline double trunc(double x) { return __nvvm_trunc_d(x); }
extern "C" __device__ double __nv_round(double);
extern "C" __device__ double __nv_frexp(double, int*);
extern "C" __device__ double __nv_ldexp(double, int);
__device__ inline double round(double x) { return __nv_round(x); }
__device__ inline double frexp(double x, int* e) { return __nv_frexp(x, e); }
__device__ inline double ldexp(double x, int e) { return __nv_ldexp(x, e); }
