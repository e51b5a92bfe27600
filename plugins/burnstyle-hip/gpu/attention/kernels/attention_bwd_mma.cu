// Attention backward on tensor cores for bfloat16 and float16: the
// algorithm of attention_bwd.cu (FlashAttention-2's backward) with the five
// products as mma.sync m16n8k16 (16-bit operands, float32 accumulation),
// fragments by ldmatrix (attention_frag.cuh's helpers). Runs after the
// mma.sync forward saved the rows' lse, and between xa_attention_bwd_pre
// and xa_attention_bwd_dq as the CUDA-core kernel does.
//
// One block of XG_MNT = 256 threads (8 warps) per (XG_BK keys, kv head,
// batch), XG_BK 64 or 128, walks the 64-row query tiles of every query head
// of its GQA group (causal: from the first row that sees one of its keys).
// Per query tile (the default build; XG_OFF bits name the older variants
// kept for timing beside it, see below):
//   1. s = q k^T and dp = dout v^T (64 x XG_BK, k-dim the head dim): warp
//      w owns rows 32 (w % 2).. and a quarter of the keys (w / 2);
//   2. p = exp2(s qmul - lse) (the mask only on tiles that cross the
//      causal diagonal or a length), ds = p (dp - D) in float32, rounded
//      to the dtype into shared memory as [row][key], two keys a 32-bit
//      word; s and p's products first, then dp's, so fewer registers live;
//   3. dv += p^T dout and dk += ds^T q (A operands by ldmatrix .trans):
//      warp w owns keys XG_BK / 4 (w % 4).. and half the head dim (w / 4),
//      2 x XG_KMT x XG_NKV accumulator tiles in registers for the walk;
//   4. dq = ds k for rows 32 (w % 2).., a quarter of the head dim (w / 2)
//      (16 rows and half of it where the quarters are not whole 16-column
//      pairs), added to the float32 dq by atomics (every kv tile adds to
//      the same rows).
// Blocks start heaviest first (the lowest key tiles under a causal mask).
// 128 keys halve the loads of q and dout and the dq atomics per product
// (FlashAttention-2's tile at head dim 128) for twice the dk, dv registers
// (ptxas sm_90 at head dim 128: bf16 252 registers, no spill; f16 255
// and 24 bytes).
// The head dim is padded to XG_DP, a multiple of 32, so each half is whole
// 16-column ldmatrix pairs; padding is zero and never stored. Shared memory
// holds k, v (resident), two stages of q and dout (the next tile's load by
// cp.async overlaps this one's products: one block of 8 warps fills an SM,
// so nothing else would hide it) and p and ds in the dtype: 123904 bytes
// at head dim 128 and 64 keys, within sm_80's and sm_90's limits (163 and
// 227 KB; the CUDA-core kernel runs where a block gets less), 175104 with
// 128 keys (sm_90 only).
#if XA_DT != 0 && !XB_HIP && XM_FAST && XG_DP <= 128  // above 128 the CUDA-core kernel runs
#define XG_MNT 256
#define XG_MB 64                    // query rows per tile
#define XG_SS (XG_DP + 8)           // row stride of k, v, q, dout: 16-byte rows, 4 banks apart
#define XG_TS (XG_MB + 8)           // row stride of p^T, ds^T
#define XG_DSS (XG_BK + 8)          // row stride of ds
// The warps' shares of s, dp (64 x XG_BK) and of dk, dv (XG_BK x XG_DP).
// XG_OFF bit 8 (the older layout): s, dp by 4 warps along the rows x 2
// along the keys (16 rows x XG_BK / 2 keys each), dk, dv by XG_BK / 16
// warps along the keys (16 keys each) x the rest along the head dim. Else
// (FlashAttention-2's split at head dim 128) 2 x 4 warps for s, dp (32
// rows x XG_BK / 4 keys) and 4 warps along the keys x 2 along the head dim
// for dk, dv (XG_BK / 4 keys x half the head dim): each warp's ldmatrix
// traffic for the same products falls by a fifth (s, dp) and a third (dk,
// dv at 128 keys), shared memory bandwidth being what these steps wait on.
#if XG_OFF & 8
#define XG_SMT 1            // 16-row m-tiles of s, dp per warp
#define XG_SWM 4            // warps along the rows of s, dp
#define XG_KW (XG_BK / 16)  // warps along the keys of dk, dv
#else
#define XG_SMT 2
#define XG_SWM 2
#define XG_KW 4
#endif
// dq (64 x XG_DP): XG_OFF bit 16, or a head dim whose quarters are not
// whole 16-column pairs (32, 96), 4 warps along the rows x 2 along the
// head dim (16 rows x half of it), else 2 x 4 (32 rows x a quarter): a
// fifth less ldmatrix traffic (ds and k) for the same product.
#if (XG_OFF & 16) || XG_DP % 64 != 0
#define XG_QMT 1  // 16-row m-tiles of dq per warp
#define XG_QW 4   // warps along its rows
#else
#define XG_QMT 2
#define XG_QW 2
#endif
#define XG_QC (XG_DP * XG_QW / 8)  // dq columns per warp
#define XG_NQ (XG_QC / 8)          // their 8-column tiles
#define XG_SK (XG_BK * XG_SWM / 8)  // keys of s, dp per warp
#define XG_NS (XG_SK / 8)           // their 8-key tiles
#define XG_KMT (XG_BK / 16 / XG_KW)  // 16-key m-tiles of dk, dv per warp
#define XG_CP (8 / XG_KW)            // parts of the head dim
#define XG_NKV (XG_DP / 8 / XG_CP)   // 8-column dk, dv tiles per warp
// k, v, two stages of q and dout, the three matrices, two stages of lse, D.
// XG_OFF bit 4 (the older round trip): p^T, ds^T and ds; else p and ds.
#if XG_OFF & 4
#define XG_MSMEM_BYTES (2 * (2 * XG_BK * XG_SS + 4 * XG_MB * XG_SS + 2 * XG_BK * XG_TS + XG_MB * XG_DSS) + 16 * XG_MB)
#else
#define XG_MSMEM_BYTES (2 * (2 * XG_BK * XG_SS + 4 * XG_MB * XG_SS + 2 * XG_MB * XG_DSS) + 16 * XG_MB)
#endif

// Rows [r0, r0 + N) of a [len, XA_D] matrix into a [N, XG_SS] tile,
// zero beyond len and XA_D: xm_tile's rule with 256 threads and XG_DP.
template <int N>
__device__ __forceinline__ void xg_tile(xa_t* __restrict__ dst, const xa_t* __restrict__ src, int r0, int len) {
  if (XA_D % 8 == 0) {
    constexpr int C = XG_DP / 8;
    for (int e = threadIdx.x; e < N * C; e += XG_MNT) {
      const int r = e / C, c = e % C;
      if (r0 + r < len && c * 8 < XA_D) {
        xm_cp16(dst + r * XG_SS + c * 8, src + (long)(r0 + r) * XA_D + c * 8);
      } else {
        const float4 z = {0.f, 0.f, 0.f, 0.f};
        *(float4*)(dst + r * XG_SS + c * 8) = z;
      }
    }
  } else {
    for (int e = threadIdx.x; e < N * XG_DP; e += XG_MNT) {
      const int r = e / XG_DP, d = e % XG_DP;
      dst[r * XG_SS + d] = (r0 + r < len && d < XA_D) ? src[(long)(r0 + r) * XA_D + d] : (xa_t)0;
    }
  }
}

// Two adjacent float32 additions to global memory (8-byte aligned): one
// vector reduction on sm_90, half the atomic operations of one a column
// (each kv tile adds its whole dq tile, so these are the kernel's most
// frequent memory operations); two atomics elsewhere.
__device__ __forceinline__ void xg_red2(float* p, float a, float b) {
#if !defined(XB_EMU) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("red.global.add.v2.f32 [%0], {%1, %2};" ::"l"(p), "f"(a), "f"(b) : "memory");
#else
  atomicAdd(p, a);
  atomicAdd(p + 1, b);
#endif
}

// 2^x by one MUFU instruction (ex2.approx.ftz: 2 ulp, below the 16-bit
// dtype's rounding of p; exp2f adds a denormal fix-up around it); exp2f on
// the emulator.
__device__ __forceinline__ float xg_exp2(float x) {
#if !defined(XB_EMU) && defined(__CUDA_ARCH__)
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return exp2f(x);
#endif
}

// p = exp2(s qmul - lse) in place for one warp's XG_NS score tiles (rows
// m0 + r0 and m0 + r0 + 8, keys col0 + 8 n and + 1, lse l0 and l8): one FMA
// and one ex2 an element. With M, p is 0 where the key is past kv_len, the
// row past seq_len or the key past the causal diagonal (col > row + shift);
// the caller asks for M only on tiles that cross one of those edges, so the
// interior tiles (all but about two a block under a causal mask) skip the
// compares.
template <bool M>
__device__ __forceinline__ void xg_exp(float (&s)[XG_SMT][XG_NS][4], const float (&l)[XG_SMT][2], float qmul, int row0,
                                       int col0, int S, int KV, int causal, int shift) {
#pragma unroll
  for (int mt = 0; mt < XG_SMT; ++mt)
#pragma unroll
    for (int n = 0; n < XG_NS; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float p = xg_exp2(fmaf(s[mt][n][e], qmul, -l[mt][e >> 1]));
        if (M) {
          const int row = row0 + 16 * mt + 8 * (e >> 1), col = col0 + 8 * n + (e & 1);
          s[mt][n][e] = row < S && col < KV && (!causal || col <= row + shift) ? p : 0.f;
        } else {
          s[mt][n][e] = p;
        }
      }
}

// The two 16-bit values of a word as float32 (exact): float16 by the
// hardware's cvt (xa_ld's bit decode costs a dozen instructions and
// branches an element), bfloat16 by shifts.
__device__ __forceinline__ void xg_unpack(unsigned w, float& lo, float& hi) {
#if XA_DT == 2 && !defined(XB_EMU)
  const unsigned short l = (unsigned short)(w & 0xffffu), h = (unsigned short)(w >> 16);
  asm("cvt.f32.f16 %0, %1;" : "=f"(lo) : "h"(l));
  asm("cvt.f32.f16 %0, %1;" : "=f"(hi) : "h"(h));
#else
  lo = xa_ld((xa_t)(w & 0xffffu));
  hi = xa_ld((xa_t)(w >> 16));
#endif
}

// acc = a b^T for one warp's share of s or dp: a the 64-row tile (q or
// dout), b the XG_BK keys (k or v), both [row][XG_SS] with the head dim
// as the k-dim; rows r0.. (XG_SMT m-tiles of 16), keys c0.. (XG_NS of 8).
__device__ __forceinline__ void xg_prod(float (&acc)[XG_SMT][XG_NS][4], const xa_t* A, const xa_t* B, int r0, int c0,
                                        int lane) {
#pragma unroll
  for (int mt = 0; mt < XG_SMT; ++mt)
#pragma unroll
    for (int n = 0; n < XG_NS; ++n) acc[mt][n][0] = acc[mt][n][1] = acc[mt][n][2] = acc[mt][n][3] = 0.f;
#pragma unroll
  for (int kk = 0; kk < XG_DP; kk += 16) {
    unsigned a[XG_SMT][4];
#pragma unroll
    for (int mt = 0; mt < XG_SMT; ++mt) xm_ldsm4(a[mt], A + (r0 + 16 * mt + (lane & 15)) * XG_SS + kk + 8 * (lane >> 4));
#pragma unroll
    for (int n = 0; n < XG_NS; n += 2) {
      unsigned b4[4];
      xm_ldsm4(b4, B + (c0 + 8 * n + (lane & 7) + 8 * (lane >> 4)) * XG_SS + kk + 8 * ((lane >> 3) & 1));
#pragma unroll
      for (int mt = 0; mt < XG_SMT; ++mt) {
        xm_mma(acc[mt][n], a[mt], b4);
        xm_mma(acc[mt][n + 1], a[mt], b4 + 2);
      }
    }
  }
}

// Arguments and grid (x = XG_BK-key tiles) as xa_attention_bwd.
XB_KERNEL void __launch_bounds__(XG_MNT, 1)
    xa_attention_bwd_mma(const xa_t* __restrict__ q, const xa_t* __restrict__ k, const xa_t* __restrict__ v,
                         const xa_t* __restrict__ dout, const float* __restrict__ lse, const float* __restrict__ dd,
                         float* __restrict__ dq32, xa_t* __restrict__ dk, xa_t* __restrict__ dv, int H, int KH, int S,
                         int KV, int causal, float qmul, float scale) {
  XB_DYN_SMEM(smf);
#ifdef XB_EMU
  emu_check_smem(XG_MSMEM_BYTES);
#endif
  xa_t* Ks = (xa_t*)smf;
  xa_t* Vs = Ks + XG_BK * XG_SS;
  xa_t* Q2 = Vs + XG_BK * XG_SS;      // q of stage 0, then stage 1
  xa_t* G2 = Q2 + 2 * XG_MB * XG_SS;  // dout, two stages
#if XG_OFF & 4
  xa_t* Pt = G2 + 2 * XG_MB * XG_SS;  // p^T: [key][row]
  xa_t* Dt = Pt + XG_BK * XG_TS;      // ds^T
  xa_t* Ds = Dt + XG_BK * XG_TS;      // ds: [row][key]
#else
  // p and ds as [row][key], each lane's two adjacent keys one 32-bit word
  // (the C fragment's pairs): the dk, dv products read p^T and ds^T by
  // ldmatrix .trans, dq reads ds as it is. Rows 4 banks apart: the word
  // stores (banks 4 gq + tq) and the ldmatrix rows are conflict-free.
  xa_t* Ps = G2 + 2 * XG_MB * XG_SS;
  xa_t* Ds = Ps + XG_MB * XG_DSS;
#endif
  float* L2 = (float*)(Ds + XG_MB * XG_DSS);  // lse, two stages
  float* D2 = L2 + 2 * XG_MB;                 // D, two stages
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, gq = lane >> 2, tq = lane & 3;
  const int qr = 16 * XG_QMT * (warp % XG_QW), qc = XG_QC * (warp / XG_QW);  // the warp's first row and column of dq
  const int sr = 16 * XG_SMT * (warp % XG_SWM), sc = XG_SK * (warp / XG_SWM);  // its first row and key of s, dp
  const int wk = 16 * XG_KMT * (warp % XG_KW), wc = (warp / XG_KW) * (XG_DP / XG_CP);  // its dk, dv keys and first column
#if XG_OFF & 1
  const int n0 = blockIdx.x * XG_BK, kh = blockIdx.y, b = blockIdx.z, g = H / KH;
#else
  // Heaviest first: under a causal mask a block of a lower key tile walks
  // more query tiles (64 times the lightest at 4096 tokens), and blocks
  // start in the order of their linear index, x fastest, so the key tile
  // becomes its slowest digit: every (kv head, batch) of tile 0, then of
  // tile 1, ..., and the last blocks to start are the shortest, which
  // keeps the SMs' finish times close (longest job first).
  const int lin = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z), nhb = gridDim.y * gridDim.z;
  const int n0 = (lin / nhb) * XG_BK, kh = lin % nhb % gridDim.y, b = lin % nhb / gridDim.y, g = H / KH;
#endif
  const long kvOff = (long)(b * KH + kh) * KV * XA_D;
  const int shift = KV - S;
  const int mStart = causal ? xa_max(0, n0 - shift) / XG_MB * XG_MB : 0;
  xg_tile<XG_BK>(Ks, k + kvOff, n0, KV);
  xg_tile<XG_BK>(Vs, v + kvOff, n0, KV);
  float dka[XG_KMT][XG_NKV][4], dva[XG_KMT][XG_NKV][4];
#pragma unroll
  for (int mt = 0; mt < XG_KMT; ++mt)
#pragma unroll
    for (int n = 0; n < XG_NKV; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) dka[mt][n][e] = dva[mt][n][e] = 0.f;

  // The (head, query tile) pairs of the walk, flattened so the next one's
  // q and dout load (cp.async, into the other stage) while this one computes.
  const int nt = (S - mStart + XG_MB - 1) / XG_MB, walk = g * nt;
  auto issue = [&](int it, int st) {
    const long bh = (long)b * H + kh * g + it / nt;
    const int m0 = mStart + (it % nt) * XG_MB;
    xg_tile<XG_MB>(Q2 + st * XG_MB * XG_SS, q + bh * S * XA_D, m0, S);
    xg_tile<XG_MB>(G2 + st * XG_MB * XG_SS, dout + bh * S * XA_D, m0, S);
    if (tid < XG_MB) {
      const bool in = m0 + tid < S;
      L2[st * XG_MB + tid] = in ? lse[bh * S + m0 + tid] : 0.f;
      D2[st * XG_MB + tid] = in ? dd[bh * S + m0 + tid] : 0.f;
    }
    xm_commit();
  };
  if (walk > 0) issue(0, 0);
  for (int it = 0; it < walk; ++it) {
    const int st = it & 1;
    const long bh = (long)b * H + kh * g + it / nt;
    const int m0 = mStart + (it % nt) * XG_MB;
    xm_wait();
    __syncthreads();  // this tile is in and visible; the last one's readers are done with the other stage
    if (it + 1 < walk) issue(it + 1, st ^ 1);
    const xa_t* Qs = Q2 + st * XG_MB * XG_SS;
    const xa_t* Gs = G2 + st * XG_MB * XG_SS;
    const float* Ls = L2 + st * XG_MB;
    const float* Dd = D2 + st * XG_MB;
    // 1. s, then p = exp2(s qmul - lse) stored (p^T, or p), for rows sr..
    // (XG_SMT m-tiles), keys sc.. (XG_NS tiles of 8); 2. dp, then ds = p
    // (dp - D) stored (ds^T and ds, or ds). With 128 keys the float32 p is
    // not kept for ds (its registers would spill beside dk and dv): ds reads
    // back this lane's own p rounded to the dtype, as the p^T dout product
    // uses it.
    float s[XG_SMT][XG_NS][4];
    xg_prod(s, Qs, Ks, sr, sc, lane);
#if XG_OFF & 2
#pragma unroll
    for (int mt = 0; mt < XG_SMT; ++mt)
#pragma unroll
      for (int n = 0; n < XG_NS; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int r = sr + 16 * mt + gq + 8 * (e >> 1), c = sc + 8 * n + 2 * tq + (e & 1);
          const int row = m0 + r, col = n0 + c;
          const bool vis = row < S && col < KV && (!causal || col <= row + shift);
          s[mt][n][e] = vis ? exp2f(s[mt][n][e] * qmul - Ls[r]) : 0.f;
        }
#else
    {
      const bool edge = m0 + XG_MB > S || n0 + XG_BK > KV || (causal && n0 + XG_BK - 1 > m0 + shift);
      float l[XG_SMT][2];
#pragma unroll
      for (int mt = 0; mt < XG_SMT; ++mt) l[mt][0] = Ls[sr + 16 * mt + gq], l[mt][1] = Ls[sr + 16 * mt + gq + 8];
      const int row0 = m0 + sr + gq, col0 = n0 + sc + 2 * tq;
      if (edge) {
        xg_exp<true>(s, l, qmul, row0, col0, S, KV, causal, shift);
      } else {
        xg_exp<false>(s, l, qmul, row0, col0, S, KV, causal, shift);
      }
    }
#endif
#pragma unroll
    for (int mt = 0; mt < XG_SMT; ++mt)
#pragma unroll
      for (int n = 0; n < XG_NS; ++n)
#pragma unroll
        for (int hr = 0; hr < 2; ++hr) {
          const int r = sr + 16 * mt + gq + 8 * hr, c = sc + 8 * n + 2 * tq;
#if XG_OFF & 4
          Pt[c * XG_TS + r] = xa_st(s[mt][n][2 * hr]);
          Pt[(c + 1) * XG_TS + r] = xa_st(s[mt][n][2 * hr + 1]);
#else
          *(unsigned*)(Ps + r * XG_DSS + c) = xm_pack(s[mt][n][2 * hr], s[mt][n][2 * hr + 1]);
#endif
        }
    float dp[XG_SMT][XG_NS][4];
    xg_prod(dp, Gs, Vs, sr, sc, lane);
#pragma unroll
    for (int mt = 0; mt < XG_SMT; ++mt)
#pragma unroll
      for (int hr = 0; hr < 2; ++hr) {
        const int r = sr + 16 * mt + gq + 8 * hr;
        const float dr = Dd[r];
#pragma unroll
        for (int n = 0; n < XG_NS; ++n) {
          const int c = sc + 8 * n + 2 * tq;
#if XG_OFF & 4
          const float p0 = XG_BK == 128 ? xa_ld(Pt[c * XG_TS + r]) : s[mt][n][2 * hr];
          const float p1 = XG_BK == 128 ? xa_ld(Pt[(c + 1) * XG_TS + r]) : s[mt][n][2 * hr + 1];
          const xa_t ds0 = xa_st(p0 * (dp[mt][n][2 * hr] - dr)), ds1 = xa_st(p1 * (dp[mt][n][2 * hr + 1] - dr));
          Dt[c * XG_TS + r] = ds0;
          Dt[(c + 1) * XG_TS + r] = ds1;
          Ds[r * XG_DSS + c] = ds0;
          Ds[r * XG_DSS + c + 1] = ds1;
#else
          float p0 = s[mt][n][2 * hr], p1 = s[mt][n][2 * hr + 1];
          if (XG_BK == 128) xg_unpack(*(const unsigned*)(Ps + r * XG_DSS + c), p0, p1);
          *(unsigned*)(Ds + r * XG_DSS + c) = xm_pack(p0 * (dp[mt][n][2 * hr] - dr), p1 * (dp[mt][n][2 * hr + 1] - dr));
#endif
        }
      }
    __syncthreads();
    // 3. dv += p^T dout, dk += ds^T q: keys wk.. (XG_KMT m-tiles), columns wc...
#pragma unroll
    for (int kk = 0; kk < XG_MB; kk += 16) {
      unsigned ap[XG_KMT][4], as[XG_KMT][4];
#pragma unroll
      for (int mt = 0; mt < XG_KMT; ++mt) {
#if XG_OFF & 4
        xm_ldsm4(ap[mt], Pt + (wk + 16 * mt + (lane & 15)) * XG_TS + kk + 8 * (lane >> 4));
        xm_ldsm4(as[mt], Dt + (wk + 16 * mt + (lane & 15)) * XG_TS + kk + 8 * (lane >> 4));
#else
        // matrix j of the A fragment: keys + 8 (j & 1).., rows kk + 8 (j >> 1)..
        const int ar = (kk + (lane & 7) + 8 * (lane >> 4)) * XG_DSS + wk + 16 * mt + 8 * ((lane >> 3) & 1);
        xm_ldsm4t(ap[mt], Ps + ar);
        xm_ldsm4t(as[mt], Ds + ar);
#endif
      }
#pragma unroll
      for (int n = 0; n < XG_NKV; n += 2) {
        const int br = kk + (lane & 7) + 8 * ((lane >> 3) & 1), bc = wc + 8 * n + 8 * (lane >> 4);
        unsigned gb4[4], qb4[4];
        xm_ldsm4t(gb4, Gs + br * XG_SS + bc);
        xm_ldsm4t(qb4, Qs + br * XG_SS + bc);
#pragma unroll
        for (int mt = 0; mt < XG_KMT; ++mt) {
          xm_mma(dva[mt][n], ap[mt], gb4);
          xm_mma(dva[mt][n + 1], ap[mt], gb4 + 2);
          xm_mma(dka[mt][n], as[mt], qb4);
          xm_mma(dka[mt][n + 1], as[mt], qb4 + 2);
        }
      }
    }
    // 4. dq += scale ds k: rows qr.. (XG_QMT m-tiles), columns qc...
    float dqa[XG_QMT][XG_NQ][4];
#pragma unroll
    for (int mt = 0; mt < XG_QMT; ++mt)
#pragma unroll
      for (int n = 0; n < XG_NQ; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) dqa[mt][n][e] = 0.f;
#pragma unroll 4  // fully unrolled, ptxas spills (36 bytes at head dim 128, 128 keys; 4: 242 registers, none)
    for (int kk = 0; kk < XG_BK; kk += 16) {
      unsigned a[XG_QMT][4];
#pragma unroll
      for (int mt = 0; mt < XG_QMT; ++mt) xm_ldsm4(a[mt], Ds + (qr + 16 * mt + (lane & 15)) * XG_DSS + kk + 8 * (lane >> 4));
#pragma unroll
      for (int n = 0; n < XG_NQ; n += 2) {
        unsigned kb4[4];
        xm_ldsm4t(kb4, Ks + (kk + (lane & 7) + 8 * ((lane >> 3) & 1)) * XG_SS + qc + 8 * n + 8 * (lane >> 4));
#pragma unroll
        for (int mt = 0; mt < XG_QMT; ++mt) {
          xm_mma(dqa[mt][n], a[mt], kb4);
          xm_mma(dqa[mt][n + 1], a[mt], kb4 + 2);
        }
      }
    }
#pragma unroll
    for (int mt = 0; mt < XG_QMT; ++mt)
#pragma unroll
      for (int hr = 0; hr < 2; ++hr) {  // row gq + 8 hr: elements 2 hr and 2 hr + 1, columns c and c + 1
        const int row = m0 + qr + 16 * mt + gq + 8 * hr;
        if (row >= S) continue;
        float* dst = dq32 + (bh * S + row) * XA_D;
#pragma unroll
        for (int n = 0; n < XG_NQ; ++n) {
          const int c = qc + 8 * n + 2 * tq;
          if (XA_D % 2 == 0) {  // c even, so c + 1 < XA_D too and the pair is 8-byte aligned
            if (c < XA_D) xg_red2(dst + c, dqa[mt][n][2 * hr] * scale, dqa[mt][n][2 * hr + 1] * scale);
          } else {
            if (c < XA_D) atomicAdd(dst + c, dqa[mt][n][2 * hr] * scale);
            if (c + 1 < XA_D) atomicAdd(dst + c + 1, dqa[mt][n][2 * hr + 1] * scale);
          }
        }
      }
  }
#pragma unroll
  for (int mt = 0; mt < XG_KMT; ++mt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int key = n0 + wk + 16 * mt + gq + 8 * (e >> 1);
      if (key >= KV) continue;
#pragma unroll
      for (int n = 0; n < XG_NKV; ++n) {
        const int c = wc + 8 * n + 2 * tq + (e & 1);
        if (c < XA_D) {
          dk[kvOff + (long)key * XA_D + c] = xa_st(dka[mt][n][e] * scale);
          dv[kvOff + (long)key * XA_D + c] = xa_st(dva[mt][n][e]);
        }
      }
    }
}
XB_EXPORT(xa_attention_bwd_mma)
#endif
