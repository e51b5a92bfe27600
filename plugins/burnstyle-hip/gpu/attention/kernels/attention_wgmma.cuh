// Building blocks of attention_wgmma.cu (sm_90a only): its sizes, the
// mbarrier, bulk tensor copy and wgmma fence instructions, and the shared
// memory matrix descriptor. The program is attention.cu (xa_t, xa_st),
// this file, attention_wgmma_ops.cuh (the wgmma wrappers), then
// attention_wgmma.cu. Everything compiles out below sm_90a (NVRTC defines
// __CUDA_ARCH_FEAT_SM90_ALL only for the "a" target).
#if XA_DT != 0 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define XW_NT 384  // 3 warpgroups: the producer, then two consumers
#define XW_BM 128  // query rows per block, 64 per consumer
#ifndef XW_BN
#define XW_BN 128  // keys per k/v tile: 128, 96 or 64 (wgmma.go's wgmmaTiles picks)
#endif
#ifndef XW_LSE
#define XW_LSE 0  // 1: the forward also writes the rows' lse (attention_wgmma.cu)
#endif
#define XW_DP XA_D
#define XW_NH (XW_DP / 64)         // 64-column halves (128-byte swizzle span)
#define XW_QB (XW_BM * XW_DP * 2)  // bytes of the q tile
#define XW_KB (XW_BN * XW_DP * 2)  // bytes of one k (or v) stage
// 1024 for aligning the base up, the tiles, then q's, k's, v's "full" and
// the stages' "empty" barriers.
#define XW_SMEM_BYTES (1024 + XW_QB + 2 * XW_ST * XW_KB + 8 * (1 + 3 * XW_ST))
#if XA_DT == 1
#define XW_T "bf16"
#else
#define XW_T "f16"
#endif

// CUtensorMap: the driver's 128 opaque bytes, taken by value.
struct __align__(64) xw_tmap {
  unsigned long long v[16];
};

__device__ __forceinline__ unsigned xw_saddr(const void* p) {
  unsigned s;
  asm volatile("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }" : "=r"(s) : "l"(p));
  return s;
}
__device__ __forceinline__ void xw_bar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
// One arrival that also announces bytes the copies will deliver.
__device__ __forceinline__ void xw_bar_expect(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void xw_bar_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
// Waits until the phase of parity completes. A fresh barrier is in phase
// 0, so waiting on parity 1 returns at once: the producer's first pass over
// the empty ring. No wait here lasts more than microseconds (one tile's
// copy or products), so one that lasts ~2^31 cycles (about a second) is a
// pipeline bug: trap, so the launch fails with an error (illegal
// instruction) instead of hanging the process.
__device__ __forceinline__ void xw_bar_wait(unsigned bar, unsigned parity) {
  unsigned done;
  const unsigned t0 = clock();  // 32 bits (one register): differences wrap correctly
  for (;;) {
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
    if (done) return;
    if ((unsigned)clock() - t0 > (1u << 31)) asm volatile("trap;");
  }
}
// A box of the 3-d tensor map (column, row, batch*head) into shared
// memory at dst, completing on bar.
__device__ __forceinline__ void xw_tma3(unsigned dst, const xw_tmap* m, int c0, int c1, int c2, unsigned bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(dst),
      "l"((unsigned long long)m), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
      : "memory");
}
// Named barriers 1 and 2 between the two consumer warpgroups (256
// threads): sync waits for the other's 128 arrivals, arrive does not wait.
__device__ __forceinline__ void xw_named_sync(int id) { asm volatile("bar.sync %0, 256;" ::"r"(id) : "memory"); }
__device__ __forceinline__ void xw_named_arrive(int id) { asm volatile("bar.arrive %0, 256;" ::"r"(id) : "memory"); }
__device__ __forceinline__ void xw_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void xw_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void xw_wait0() { asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory"); }
// Ties n accumulator registers to this point in the program: the compiler
// must not move their reads or writes across an issue or a wait (the
// asynchronous product writes them behind its back).
template <int n>
__device__ __forceinline__ void xw_hold(float* d) {
#pragma unroll
  for (int i = 0; i < n; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
// The shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor
// Format"): start address, leading and stride dimension byte offsets (all
// >> 4, 14 bits each), swizzle mode in bits 62-63 (1: 128-byte). Base
// offset 0: every atom starts 1024-aligned; a k step inside an atom moves
// the start by 32 bytes, which the hardware swizzles as the copy did.
__device__ __forceinline__ unsigned long long xw_desc(unsigned saddr, unsigned lbo, unsigned sbo) {
  return (unsigned long long)((saddr & 0x3ffff) >> 4) | ((unsigned long long)((lbo >> 4) & 0x3fff) << 16) |
         ((unsigned long long)((sbo >> 4) & 0x3fff) << 32) | (1ull << 62);
}
#endif
