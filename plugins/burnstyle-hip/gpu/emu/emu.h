// CUDA vocabulary for compiling the kernel sources with g++ (XB_EMU). The
// fake NVRTC in xbemu.cpp force-includes this file. Threads of a block are
// cooperative fibers, so __syncthreads and warp shuffles keep their meaning
// and a divergent barrier is reported instead of hanging.
#pragma once
#include <math.h>
#include <stddef.h>
#include <string.h>
#include <type_traits>
#include <utility>

#define XB_EMU 1
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) alignas(n)

struct alignas(16) float4 { float x, y, z, w; };
struct alignas(8) float2 { float x, y; };
struct emu_dim3 { unsigned x, y, z; };
struct emu_thread { emu_dim3 tid, bid, bdim, gdim; };

extern "C" emu_thread* emu_cur(void);
extern "C" void emu_syncthreads(void);
extern "C" float emu_shfl_xor_f(float v, int m);
extern "C" void* emu_dyn_smem(void);
extern "C" void emu_check_smem(long bytes);
// Thread-block clusters (cuLaunchKernelEx): the CTAs of one cluster run
// together; each has its own shared memory, reachable through emu_cluster_map.
extern "C" int emu_cluster_rank(int cs);
extern "C" void emu_cluster_sync(void);
extern "C" void* emu_cluster_map(void* p, int rank);
// mbarriers (8 bytes of shared memory) with transaction counts, and st.async:
// a store into (another block's) shared memory that completes its bytes on
// the mbarrier there. A wait yields until the phase of the given parity has
// completed; a wait nothing can complete is reported, not hung.
extern "C" void emu_mb_init(void* mb, int count);
extern "C" void emu_mb_expect(void* mb, int bytes);
extern "C" void emu_mb_wait(void* mb, unsigned parity);
extern "C" void emu_st_async(void* dst, const void* src, int bytes, void* mb);

#define threadIdx (emu_cur()->tid)
#define blockIdx (emu_cur()->bid)
#define blockDim (emu_cur()->bdim)
#define gridDim (emu_cur()->gdim)
#define __syncthreads() emu_syncthreads()
#define XB_SHFL_XOR(v, m) emu_shfl_xor_f((v), (m))
#define XB_DYN_SMEM(name) float* name = (float*)emu_dyn_smem()

inline float rsqrtf(float x) { return 1.f / sqrtf(x); }
inline long long clock64() { static long long c; return c += 100; }
// Fibers of one launch never preempt each other between a load and a store,
// so a plain read-modify-write is atomic here.
inline float atomicAdd(float* p, float v) { const float o = *p; *p = o + v; return o; }
inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }

// Unpacks cuLaunchKernel's void** parameter array into a typed call.
template <typename... A, size_t... I>
inline void emu_call_impl(void (*f)(A...), void** p, std::index_sequence<I...>) {
  f(*static_cast<std::remove_reference_t<A>*>(p[I])...);
}
template <typename... A>
inline void emu_call(void (*f)(A...), void** p) {
  emu_call_impl(f, p, std::index_sequence_for<A...>{});
}
template <typename... A>
constexpr int emu_arity(void (*)(A...)) { return sizeof...(A); }
// emu_nargs_<name> lets a captured launch (cuStreamBeginCapture) copy its
// arguments, as a real graph node keeps them, before the caller's go away.
#define XB_EXPORT(name) \
  extern "C" void emu_entry_##name(void** p) { emu_call(name, p); } \
  extern "C" int emu_nargs_##name(void) { return emu_arity(name); }
