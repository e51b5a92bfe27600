// Attention forward, FlashAttention-2 style (Dao 2023), CUDA cores, float32
// math. One block of XA_NT = 128 threads per (XA_BM query rows, batch*head):
// the q tile is loaded once (pre-multiplied by scale*log2(e), so the softmax
// uses exp2), then k and v tiles of XA_BN rows stream through shared memory;
// each tile updates a running row max m, row sum l and the unnormalised
// output in registers (online softmax), and the output is divided by l once
// at the end. Tiles wholly above the causal diagonal are never loaded.
//
// Compile-time: XA_D (head dim), XA_DP (XA_D rounded up to 8: zero-padded
// columns keep every thread's share whole), XA_BM (a multiple of 16), XA_BN
// (a multiple of 8), XA_DT (0 float32, 1 bfloat16, 2 float16).
//
// Thread layout: 16 row groups of 8 lanes. Row group g owns rows g + 16*i
// (i < XA_BM/16) of the tile; lane c owns score columns c + 8*j and output
// columns c + 8*j. A row's statistics are reduced over its 8 lanes with xor
// shuffles 1, 2, 4 (the 8 lanes are adjacent in one warp).
#define XA_NT 128
#define XA_RM (XA_BM / 16)  // rows per thread
#define XA_CN (XA_BN / 8)   // score columns per thread
#define XA_CD (XA_DP / 8)   // output columns per thread
#define XA_QS (XA_DP + 1)   // q and k row stride: odd, so 8 lanes reading 8 rows hit 8 banks
#define XA_PS (XA_BN + 1)   // p row stride
#define XA_SMEM_FLOATS (XA_BM * XA_QS + XA_BN * XA_QS + XA_BN * XA_DP + XA_BM * XA_PS)

#if XA_DT == 1
typedef unsigned short xa_t;
__device__ __forceinline__ float xa_ld(xa_t v) { return __uint_as_float(((unsigned)v) << 16); }
__device__ __forceinline__ xa_t xa_st(float x) {
  unsigned u = __float_as_uint(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (xa_t)((u >> 16) | 0x40u);  // NaN stays NaN
  u += 0x7fffu + ((u >> 16) & 1u);                                         // nearest even
  return (xa_t)(u >> 16);
}
#elif XA_DT == 2
// float16 by bit manipulation: no vendor header is needed, and the emulator
// runs the very same code.
typedef unsigned short xa_t;
__device__ __forceinline__ float xa_ld(xa_t h) {
  const unsigned s = ((unsigned)h & 0x8000u) << 16, e = ((unsigned)h >> 10) & 0x1fu, m = (unsigned)h & 0x3ffu;
  if (e == 0x1fu) return __uint_as_float(s | 0x7f800000u | (m << 13));  // inf, NaN
  if (e == 0u) {                                                       // zero, subnormal: m * 2^-24
    const float f = (float)m * 5.9604644775390625e-8f;
    return s ? -f : f;
  }
  return __uint_as_float(s | ((e + 112u) << 23) | (m << 13));
}
__device__ __forceinline__ xa_t xa_st(float x) {
  unsigned u = __float_as_uint(x);
  const unsigned s = (u >> 16) & 0x8000u;
  u &= 0x7fffffffu;
  if (u > 0x7f800000u) return (xa_t)(s | 0x7e00u);   // NaN
  if (u >= 0x477ff000u) return (xa_t)(s | 0x7c00u);  // rounds past 65504: inf
  if (u >= 0x38800000u) {                            // normal: rebias 127 -> 15, nearest even
    unsigned r = u - 0x38000000u;
    r += 0xfffu + ((r >> 13) & 1u);
    return (xa_t)(s | (r >> 13));
  }
  // Subnormal (or rounding up to the smallest normal): x * 2^24 is exact,
  // and rintf rounds it to the nearest even integer count of 2^-24.
  return (xa_t)(s | (unsigned)rintf(__uint_as_float(u) * 16777216.f));
}
#else
typedef float xa_t;
__device__ __forceinline__ float xa_ld(float v) { return v; }
__device__ __forceinline__ float xa_st(float x) { return x; }
#endif

__device__ __forceinline__ int xa_min(int a, int b) { return a < b ? a : b; }
__device__ __forceinline__ int xa_max(int a, int b) { return a > b ? a : b; }

#if XA_DT != 0 && !XB_HIP && !defined(XB_EMU)
// Two floats rounded to the 16-bit dtype by the hardware, lo in the low
// half (cvt packs its first source into the upper half): the tensor-core
// kernels' P operand (attention_mma.cu, attention_wgmma.cu).
__device__ __forceinline__ unsigned xa_pack2(float lo, float hi) {
  unsigned r;
#if XA_DT == 1
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#else
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#endif
  return r;
}
#endif

// The backward's saved state of one row (attention_bwd.cu): the log2-sum-exp2
// of its scores in the kernels' log2 units (scaled by qmul), so p =
// exp2(s * qmul - lse); +inf for a row that sees no key, which makes every
// recomputed p 0.
__device__ __forceinline__ float xa_lse(float m, float l) {
  return l > 0.f ? m + log2f(l) : __uint_as_float(0x7f800000u);
}

// Loads rows [r0, r0 + n) of a [len, XA_D] matrix into a [n, stride] float
// tile, zero beyond len and beyond XA_D, times mul.
template <int N, int STRIDE>
__device__ __forceinline__ void xa_tile(float* __restrict__ dst, const xa_t* __restrict__ src, int r0,
                                        int len, float mul) {
  for (int e = threadIdx.x; e < N * XA_DP; e += XA_NT) {
    const int r = e / XA_DP, d = e % XA_DP;
    float x = 0.f;
    if (r0 + r < len && (XA_DP == XA_D || d < XA_D)) x = xa_ld(src[(long)(r0 + r) * XA_D + d]) * mul;
    dst[r * STRIDE + d] = x;
  }
}

#ifndef XW_ST  // the wgmma program (attention_wgmma.cu) takes only the helpers above
// q, out [B, H, S, XA_D]; k, v [B, KH, KV, XA_D]. Grid: x = query tiles
// (fastest, so the tiles of one head run together and share its k, v in
// L2), y = heads, z = batch. qmul = log2(e) / sqrt(XA_D); lse, when not null,
// gets each row's xa_lse for the backward phases. The explicit 1 block per SM lets
// ptxas (CUDA 13, sm_90) use the registers it needs: without it, it capped
// head dims 20 and 32 at 72 registers and spilled 48 bytes.
XB_KERNEL void __launch_bounds__(XA_NT, 1)
    xa_attention_fwd(const xa_t* __restrict__ q, const xa_t* __restrict__ k, const xa_t* __restrict__ v,
                     xa_t* __restrict__ out, int H, int KH, int S, int KV, int causal, float qmul,
                     float* __restrict__ lse) {
  XB_DYN_SMEM(sm);
#ifdef XB_EMU
  emu_check_smem(XA_SMEM_FLOATS * 4);
#endif
  float* Qs = sm;
  float* Ks = Qs + XA_BM * XA_QS;
  float* Vs = Ks + XA_BN * XA_QS;
  float* Ps = Vs + XA_BN * XA_DP;
  const int tid = threadIdx.x, c = tid & 7, g = tid >> 3;
  // Reversed so the causal tiles with the most keys start first.
  const int m0 = (gridDim.x - 1 - blockIdx.x) * XA_BM;
  const int b = blockIdx.z, h = blockIdx.y, bh = b * H + h, kh = h / (H / KH);
  const xa_t* qh = q + (long)bh * S * XA_D;
  const xa_t* kb = k + (long)(b * KH + kh) * KV * XA_D;  // GQA: an index, no copy
  const xa_t* vb = v + (long)(b * KH + kh) * KV * XA_D;
  const int shift = KV - S;  // bottom-right causal: key j visible to row i when j <= i + shift
  // Keys past the tile's last row's horizon are masked for every row.
  const int kvEnd = causal ? xa_min(KV, m0 + XA_BM + shift) : KV;

  xa_tile<XA_BM, XA_QS>(Qs, qh, m0, S, qmul);
  const float NEG_INF = __uint_as_float(0xff800000u);
  float mrow[XA_RM], lrow[XA_RM], acc[XA_RM][XA_CD];
#pragma unroll
  for (int i = 0; i < XA_RM; ++i) {
    mrow[i] = NEG_INF;
    lrow[i] = 0.f;
#pragma unroll
    for (int d = 0; d < XA_CD; ++d) acc[i][d] = 0.f;
  }

  for (int n0 = 0; n0 < kvEnd; n0 += XA_BN) {
    __syncthreads();  // the previous tile's readers are done (and Qs is written)
    xa_tile<XA_BN, XA_QS>(Ks, kb, n0, KV, 1.f);
    xa_tile<XA_BN, XA_DP>(Vs, vb, n0, KV, 1.f);
    __syncthreads();
    float s[XA_RM][XA_CN];
#pragma unroll
    for (int i = 0; i < XA_RM; ++i)
#pragma unroll
      for (int j = 0; j < XA_CN; ++j) s[i][j] = 0.f;
#pragma unroll 4
    for (int t = 0; t < XA_DP; ++t) {
      float qa[XA_RM], ka[XA_CN];
#pragma unroll
      for (int i = 0; i < XA_RM; ++i) qa[i] = Qs[(g + 16 * i) * XA_QS + t];
#pragma unroll
      for (int j = 0; j < XA_CN; ++j) ka[j] = Ks[(c + 8 * j) * XA_QS + t];
#pragma unroll
      for (int i = 0; i < XA_RM; ++i)
#pragma unroll
        for (int j = 0; j < XA_CN; ++j) s[i][j] = fmaf(qa[i], ka[j], s[i][j]);
    }
    // Masks only where the tile crosses kv_len or the diagonal.
    if (n0 + XA_BN > KV || (causal && n0 + XA_BN - 1 > m0 + shift)) {
#pragma unroll
      for (int i = 0; i < XA_RM; ++i)
#pragma unroll
        for (int j = 0; j < XA_CN; ++j) {
          const int col = n0 + c + 8 * j;
          if (col >= KV || (causal && col > m0 + g + 16 * i + shift)) s[i][j] = NEG_INF;
        }
    }
#pragma unroll
    for (int i = 0; i < XA_RM; ++i) {
      float mx = s[i][0];
#pragma unroll
      for (int j = 1; j < XA_CN; ++j) mx = fmaxf(mx, s[i][j]);
      mx = fmaxf(mx, XB_SHFL_XOR(mx, 1));
      mx = fmaxf(mx, XB_SHFL_XOR(mx, 2));
      mx = fmaxf(mx, XB_SHFL_XOR(mx, 4));
      const float mnew = fmaxf(mrow[i], mx);
      // A row with no visible key yet keeps p = 0 and must not form inf - inf.
      const float base = mnew == NEG_INF ? 0.f : mnew;
      const float alpha = exp2f(mrow[i] - base);
      float sum = 0.f;
#pragma unroll
      for (int j = 0; j < XA_CN; ++j) {
        const float p = exp2f(s[i][j] - base);
        Ps[(g + 16 * i) * XA_PS + c + 8 * j] = p;
        sum += p;
      }
      sum += XB_SHFL_XOR(sum, 1);
      sum += XB_SHFL_XOR(sum, 2);
      sum += XB_SHFL_XOR(sum, 4);
      lrow[i] = lrow[i] * alpha + sum;
      mrow[i] = mnew;
#pragma unroll
      for (int d = 0; d < XA_CD; ++d) acc[i][d] *= alpha;
    }
    __syncthreads();  // all of P is written
    // A constant trip count unrolls cleanly; past kv_len p is 0 and v rows
    // are zeros, so the extra terms add nothing.
#pragma unroll 4
    for (int j = 0; j < XA_BN; ++j) {
      float pa[XA_RM], va[XA_CD];
#pragma unroll
      for (int i = 0; i < XA_RM; ++i) pa[i] = Ps[(g + 16 * i) * XA_PS + j];
#pragma unroll
      for (int d = 0; d < XA_CD; ++d) va[d] = Vs[j * XA_DP + c + 8 * d];
#pragma unroll
      for (int i = 0; i < XA_RM; ++i)
#pragma unroll
        for (int d = 0; d < XA_CD; ++d) acc[i][d] = fmaf(pa[i], va[d], acc[i][d]);
    }
  }

#pragma unroll
  for (int i = 0; i < XA_RM; ++i) {
    const int row = m0 + g + 16 * i;
    if (row >= S) continue;
    const float inv = lrow[i] > 0.f ? 1.f / lrow[i] : 0.f;  // no visible key: zeros
    if (lse != 0 && c == 0) lse[(long)bh * S + row] = xa_lse(mrow[i], lrow[i]);
    xa_t* o = out + ((long)bh * S + row) * XA_D;
#pragma unroll
    for (int d = 0; d < XA_CD; ++d) {
      const int col = c + 8 * d;
      if (XA_DP == XA_D || col < XA_D) o[col] = xa_st(acc[i][d] * inv);
    }
  }
}
XB_EXPORT(xa_attention_fwd)
#endif
