// Cross-CTA primitives of the cluster kernel (inner_linear_cl.cu), one
// vocabulary for CUDA (sm_90 PTX), the emulator (XB_EMU) and the portable
// one-block build (XB_CS = 1, where cluster barriers become block barriers).
//
// XB_CLX picks how the CTAs of a cluster exchange row statistics each
// mini-batch step:
//   1  two barrier.cluster rounds a step (run 6's kernel);
//   2  one barrier.cluster round a step: every sum the LayerNorm gradient
//      needs is formed before the row statistics are known (see the kernel);
//   3  one exchange a step, point to point: each CTA writes its partial sums
//      into every CTA's shared memory with st.async, which completes bytes on
//      the receiver's mbarrier; a CTA waits only for the bytes it receives,
//      with no release/acquire round of the whole cluster.
// Without clusters (XB_CS = 1) 3 runs as 2.
#ifndef XB_CLX
#define XB_CLX 1
#endif
#if XB_CLX == 3 && XB_CS == 1
#undef XB_CLX
#define XB_CLX 2
#endif
#if XB_CLX < 1 || XB_CLX > 3
#error "XB_CLX must be 1, 2 or 3"
#endif

#if XB_CS > 1 && defined(XB_EMU)
#define XB_CL_RANK() emu_cluster_rank(XB_CS)
#define XB_CL_ARRIVE()
#define XB_CL_WAIT() emu_cluster_sync()
#define XB_CL_MAP(p, r) ((float*)emu_cluster_map((void*)(p), (r)))
// Remote addresses are plain pointers into the other block's shared memory.
typedef void* xb_raddr;
#define XB_RADDR(p, r) emu_cluster_map((void*)(p), (r))
#define XB_MB_INIT(mb, n) emu_mb_init((mb), (n))
#define XB_MB_FENCE_INIT()
#define XB_MB_EXPECT(mb, bytes) emu_mb_expect((mb), (bytes))
#define XB_MB_WAIT(mb, parity) emu_mb_wait((mb), (parity))
#define XB_ST_ASYNC4(ra, v, rmb) emu_st_async((ra), &(v), 16, (rmb))
#elif XB_CS > 1 && !defined(__HIPCC_RTC__) && !defined(__HIPCC__) && defined(__CUDA_ARCH__) && \
    __CUDA_ARCH__ >= 900
__device__ __forceinline__ unsigned xb_cl_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ float* xb_cl_map(float* p, unsigned r) {
  unsigned long long o;
  asm volatile("mapa.u64 %0, %1, %2;" : "=l"(o) : "l"(p), "r"(r));
  return (float*)o;
}
#define XB_CL_RANK() ((int)xb_cl_rank())
#define XB_CL_ARRIVE() asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory")
#define XB_CL_WAIT() asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory")
#define XB_CL_MAP(p, r) xb_cl_map((p), (unsigned)(r))

// Point-to-point signalling (PTX ISA 8.1, sm_90). Shared-memory operands
// are 32-bit addresses: a CTA-local one from cvta.to.shared, a cluster one
// (the same offset in CTA r) from mapa.shared::cluster.
typedef unsigned xb_raddr;
__device__ __forceinline__ unsigned xb_smem_addr(const void* p) {
  unsigned long long a;
  asm("cvta.to.shared.u64 %0, %1;" : "=l"(a) : "l"(p));
  return (unsigned)a;
}
__device__ __forceinline__ unsigned xb_raddr_map(const void* p, unsigned r) {
  unsigned o;
  asm("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(o) : "r"(xb_smem_addr(p)), "r"(r));
  return o;
}
// An mbarrier expecting n arrivals a phase.
__device__ __forceinline__ void xb_mb_init(unsigned long long* mb, unsigned n) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(xb_smem_addr(mb)), "r"(n) : "memory");
}
// One arrival on the current phase, which then also waits for bytes more of
// transactions (st.async from any CTA of the cluster).
__device__ __forceinline__ void xb_mb_expect(unsigned long long* mb, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(xb_smem_addr(mb)), "r"(bytes)
               : "memory");
}
// Waits until the phase of the given parity has completed; acquire at
// cluster scope, so the bytes other CTAs stored are visible after it.
__device__ __forceinline__ void xb_mb_wait(unsigned long long* mb, unsigned parity) {
  const unsigned a = xb_smem_addr(mb);
  unsigned done = 0;
  while (!done)
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(a), "r"(parity)
        : "memory");
}
// 16 bytes into CTA-cluster address ra, completing 16 bytes of transactions
// on the mbarrier at cluster address rmb (in the same CTA as ra).
__device__ __forceinline__ void xb_st_async4(unsigned ra, float4 v, unsigned rmb) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, [%5];" ::"r"(ra),
               "r"(__float_as_uint(v.x)), "r"(__float_as_uint(v.y)), "r"(__float_as_uint(v.z)),
               "r"(__float_as_uint(v.w)), "r"(rmb)
               : "memory");
}
#define XB_RADDR(p, r) xb_raddr_map((p), (unsigned)(r))
#define XB_MB_INIT(mb, n) xb_mb_init((mb), (n))
// Makes the initialised mbarriers visible to the cluster's other CTAs (a
// cluster barrier follows before any of them signals one).
#define XB_MB_FENCE_INIT() asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory")
#define XB_MB_EXPECT(mb, bytes) xb_mb_expect((mb), (bytes))
#define XB_MB_WAIT(mb, parity) xb_mb_wait((mb), (parity))
#define XB_ST_ASYNC4(ra, v, rmb) xb_st_async4((ra), (v), (rmb))
#elif XB_CS > 1
#error "XB_CS > 1 needs thread-block clusters (CUDA sm_90 or newer); build with XB_CS=1"
#else
#define XB_CL_RANK() 0
#define XB_CL_ARRIVE()
#define XB_CL_WAIT() __syncthreads()
#define XB_CL_MAP(p, r) (p)
#endif
