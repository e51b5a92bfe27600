// Warp-level building blocks of attention_mma.cu (bfloat16, float16 only):
// the m16n8k16 product, float pairs packed to the dtype, 16-byte global to
// shared copies (cp.async), ldmatrix, and the tile loader; on the emulator
// (XB_EMU) each warp-wide instruction has a stand-in that follows the PTX
// ISA's definition, so the kernel's fragment bookkeeping is checked on the
// CPU. The program is attention.cu (xa_t, xa_ld, xa_st), this file (with
// the tensor-core kernel's derived sizes), then attention_mma.cu.
#if XA_DT != 0 && !XB_HIP  // tensor cores through PTX: CUDA only
#define XM_NT 128
#define XM_SS (XM_DP + 8)
#define XM_SMEM_BYTES ((XM_BM + 2 * XM_BN) * XM_SS * 2)
#define XM_NS (XM_BN / 8)  // 8-column score tiles per warp
#define XM_NO (XM_DP / 8)  // 8-column output tiles per warp
#define XM_MT (XM_BM / 64)  // 16-row m-tiles per warp (4 warps)

#ifdef XB_EMU
// One warp's m16n8k16 on the emulator: each lane posts its fragments to a
// per-warp table, a shuffle serves as the warp barrier (every lane must
// reach it), each lane computes its own four outputs in float32 from the
// exact 16-bit products, and a second shuffle keeps the table until all
// lanes have read it. Blocks run one at a time, so a static table is safe.
__device__ __forceinline__ float xm_half(unsigned w, int hi) { return xa_ld((xa_t)(hi ? w >> 16 : w & 0xffffu)); }
__device__ void xm_mma(float* d, const unsigned* a, const unsigned* b) {
  static unsigned tab[32][32][6];  // [warp][lane][a0..a3, b0, b1]
  const int lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
  unsigned(*W)[6] = tab[threadIdx.x >> 5];
  for (int i = 0; i < 4; ++i) W[lane][i] = a[i];
  W[lane][4] = b[0], W[lane][5] = b[1];
  XB_SHFL_XOR(0.f, 1);
  for (int e = 0; e < 4; ++e) {
    const int row = gq + 8 * (e >> 1), col = 2 * tq + (e & 1);
    float acc = d[e];
    for (int k = 0; k < 16; ++k) {
      // A (row, k): lane 4*(row%8) + (k%8)/2, register (row>=8) + 2*(k>=8), half k%2.
      const float x = xm_half(W[4 * (row & 7) + ((k & 7) >> 1)][(row >> 3) + 2 * (k >> 3)], k & 1);
      // B (k, col): lane 4*col + (k%8)/2, register 4 + (k>=8), half k%2.
      const float y = xm_half(W[4 * col + ((k & 7) >> 1)][4 + (k >> 3)], k & 1);
      acc += x * y;
    }
    d[e] = acc;
  }
  XB_SHFL_XOR(0.f, 1);
}
// Two floats rounded to the dtype, lo in the low half.
__device__ __forceinline__ unsigned xm_pack(float lo, float hi) {
  return (unsigned)xa_st(lo) | ((unsigned)xa_st(hi) << 16);
}
#else
__device__ __forceinline__ void xm_mma(float* d, const unsigned* a, const unsigned* b) {
#if XA_DT == 1
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
#else
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
#endif
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ unsigned xm_pack(float lo, float hi) { return xa_pack2(lo, hi); }
#endif

__device__ __forceinline__ unsigned xm_ld2(const xa_t* p) { return *(const unsigned*)p; }

// 16-byte global -> shared copies. With XM_FAST (CUDA) they are cp.async:
// issued without waiting, grouped by xm_commit, and complete for this
// thread after xm_wait (a barrier then makes them visible to the block),
// so a tile's load overlaps the other product. Elsewhere (the emulator,
// XM_FAST 0) a plain copy, and commit and wait do nothing.
#if XM_FAST && !defined(XB_EMU)
__device__ __forceinline__ unsigned xm_saddr(const void* p) {
  unsigned s;
  asm volatile("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }" : "=r"(s) : "l"(p));
  return s;
}
__device__ __forceinline__ void xm_cp16(xa_t* dst, const xa_t* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(xm_saddr(dst)), "l"(src) : "memory");
}
__device__ __forceinline__ void xm_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
__device__ __forceinline__ void xm_wait() { asm volatile("cp.async.wait_group 0;" ::: "memory"); }
#else
__device__ __forceinline__ void xm_cp16(xa_t* dst, const xa_t* src) { *(float4*)dst = *(const float4*)src; }
__device__ __forceinline__ void xm_commit() {}
__device__ __forceinline__ void xm_wait() {}
#endif

// ldmatrix .x4: lanes 8i..8i+7 name the 8 rows (16 bytes each) of 8x8 matrix
// i; lane l receives in r[i] row l/4, columns 2(l%4) and 2(l%4)+1 of it
// (the A, B and C fragment pattern of mma), or with trans column l/4, rows
// 2(l%4) and 2(l%4)+1. One instruction replaces 4 (A, k) or 8 (v, which
// pairs two rows into a register) scalar shared-memory loads.
#if XM_FAST && !defined(XB_EMU)
__device__ __forceinline__ void xm_ldsm4(unsigned* r, const xa_t* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(xm_saddr(p)));
}
__device__ __forceinline__ void xm_ldsm4t(unsigned* r, const xa_t* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(xm_saddr(p)));
}
#elif XM_FAST
// The emulator's stand-in: lanes post their row addresses, a shuffle is the
// warp barrier, each lane gathers its elements, a second shuffle keeps the
// table until every lane has read it.
__device__ void xm_ldsm4x(unsigned* r, const xa_t* p, bool trans) {
  static const xa_t* tab[32][32];  // [warp][lane]
  const int lane = threadIdx.x & 31;
  const xa_t** T = tab[threadIdx.x >> 5];
  T[lane] = p;
  XB_SHFL_XOR(0.f, 1);
  for (int i = 0; i < 4; ++i) {
    const xa_t* const* M = T + 8 * i;
    const int a = lane >> 2, b = 2 * (lane & 3);
    r[i] = trans ? (unsigned)M[b][a] | ((unsigned)M[b + 1][a] << 16) : (unsigned)M[a][b] | ((unsigned)M[a][b + 1] << 16);
  }
  XB_SHFL_XOR(0.f, 1);
}
__device__ __forceinline__ void xm_ldsm4(unsigned* r, const xa_t* p) { xm_ldsm4x(r, p, false); }
__device__ __forceinline__ void xm_ldsm4t(unsigned* r, const xa_t* p) { xm_ldsm4x(r, p, true); }
#endif

// Rows [r0, r0 + N) of a [len, XA_D] matrix into a [N, XM_SS] tile in the
// dtype, zero beyond len and XA_D: 16-byte copies when rows are whole
// 16-byte units (XA_D % 8 == 0, through xm_cp16), else element by element
// with plain loads.
template <int N>
__device__ __forceinline__ void xm_tile(xa_t* __restrict__ dst, const xa_t* __restrict__ src, int r0, int len) {
  if (XA_D % 8 == 0) {
    constexpr int C = XM_DP / 8;
    for (int e = threadIdx.x; e < N * C; e += XM_NT) {
      const int r = e / C, c = e % C;
      if (r0 + r < len && c * 8 < XA_D) {
        xm_cp16(dst + r * XM_SS + c * 8, src + (long)(r0 + r) * XA_D + c * 8);
      } else {
        const float4 z = {0.f, 0.f, 0.f, 0.f};  // bits only: a 16-byte carrier
        *(float4*)(dst + r * XM_SS + c * 8) = z;
      }
    }
  } else {
    for (int e = threadIdx.x; e < N * XM_DP; e += XM_NT) {
      const int r = e / XM_DP, d = e % XM_DP;
      dst[r * XM_SS + d] = (r0 + r < len && d < XA_D) ? src[(long)(r0 + r) * XA_D + d] : (xa_t)0;
    }
  }
}

#endif
