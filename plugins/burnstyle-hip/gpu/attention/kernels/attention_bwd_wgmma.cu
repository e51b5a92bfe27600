// Attention backward for Hopper (sm_90a), bfloat16 and float16, head dim 64
// or 128: FlashAttention-2's backward (dk, dv per key tile, dq by float32
// atomics; xa_attention_bwd_pre before, xa_attention_bwd_dq after, as the
// mma.sync kernel) with its five products on warpgroup MMA, in the manner of
// FlashAttention-3's backward (Shah et al. 2024, section 3 and appendix B),
// written from the paper and the PTX ISA (wgmma.mma_async, the matrix
// descriptor, cp.async.bulk.tensor, mbarrier). The helpers are the
// forward's (attention_wgmma.cuh, attention_wgmma_ops.cuh, ..._steps.cuh).
//
// One block of 2 warpgroups (256 threads) per (128 keys, kv head, batch),
// heaviest first (the lowest key tiles under a causal mask), walks the
// 64-row query tiles of every query head of its GQA group (causal: from the
// first row that sees one of its keys). Warpgroup c owns keys 64c.. of the
// tile; per query tile it computes, transposed so its keys are the M of
// every product and dk, dv stay in its registers for the whole walk:
//   S^T = k_c q^T, dP^T = v_c dout^T  (SS, m64n64, k-dim the head dim)
//   P^T = exp2(S^T qmul - lse), dS^T = P^T (dP^T - D)  (float32, registers)
//   dv_c += P^T dout, dk_c += dS^T q  (RS: S^T's accumulator is the A
//                                      fragment, as P in the forward's P.v)
//   dq += dS k  (SS: dS stored to shared memory as [row][key], 128-byte
//               swizzled; head dim 128: warpgroup c the head-dim half c over
//               all 128 keys, 64: the whole head dim over its own 64 keys)
// dq goes to the float32 buffer by red.global.add.v2. q and dout arrive by
// TMA (tensor maps, 128-byte swizzle, zero past a head's rows) into an
// XW_ST-stage ring; one thread issues them. One named barrier a query tile
// (both warpgroups stored their dS) also says both finished the previous
// tile's products, so it frees that tile's stage, dS buffer and the rows'
// lse and D slot, which are double-buffered. Rows past seq_len take lse =
// +inf (p = 0); keys past kv_len and above the causal diagonal are masked
// on the tiles that cross either.
#if XA_DT != 0 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define XV_NT 256
#ifndef XV_OFF
#define XV_OFF 0  // Spec.GradWGMMAOff: 1 issues dv, dk after the barrier, 2 stores dS by 16-bit stores, 4 adds dq by red.global
#endif
#define XV_BM 64                   // query rows per tile
#define XV_BK 128                  // keys per block, 64 per warpgroup
#define XV_NH (XA_D / 64)          // 64-column halves of q, k, v, dout
#define XV_QB (XV_BM * XA_D * 2)   // bytes of a q (or dout) tile
#define XV_KB (XV_BK * XA_D * 2)   // bytes of the k (or v) tile
#define XV_DSB (XV_BM * XV_BK * 2)  // bytes of one dS buffer
#define XV_DQS (64 * 4 + 32)                        // row stride of a warpgroup's dq tile (64 float32 columns)
#define XV_BARB ((8 * (1 + XW_ST) + 15) / 16 * 16)  // the barriers' bytes, 16-byte aligned after them
// 1024 to align the base, k, v, the ring of q and dout, two dS buffers,
// two slots of 64 lse and 64 D, the kv barrier and one per stage, then the
// two warpgroups' dq tiles (without XV_OFF bit 4).
#define XV_SMEM_BYTES (1024 + 2 * XV_KB + 2 * XW_ST * XV_QB + 2 * XV_DSB + 2 * 2 * XV_BM * 4 + XV_BARB + (XV_OFF & 4 ? 0 : 2 * XV_BM * XV_DQS))

// SS m64n64k16 with B transposed (imm-trans-b 1: B is MN-major, k by rows
// as v in the forward's P.v): dq's product, B = k. The _first form
// overwrites d.
__device__ __forceinline__ void xv_sst_n64(float* d, unsigned long long da, unsigned long long db) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k16.f32." XW_T "." XW_T " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 1;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
               : "l"(da), "l"(db), "r"(1));
}
__device__ __forceinline__ void xv_sst_n64_first(float* d, unsigned long long da, unsigned long long db) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k16.f32." XW_T "." XW_T " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 1;\n}\n"
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]), "=f"(d[4]), "=f"(d[5]), "=f"(d[6]), "=f"(d[7]), "=f"(d[8]), "=f"(d[9]), "=f"(d[10]), "=f"(d[11]), "=f"(d[12]), "=f"(d[13]), "=f"(d[14]), "=f"(d[15]), "=f"(d[16]), "=f"(d[17]), "=f"(d[18]), "=f"(d[19]), "=f"(d[20]), "=f"(d[21]), "=f"(d[22]), "=f"(d[23]), "=f"(d[24]), "=f"(d[25]), "=f"(d[26]), "=f"(d[27]), "=f"(d[28]), "=f"(d[29]), "=f"(d[30]), "=f"(d[31])
               : "l"(da), "l"(db), "r"(0));
}

// acc = a_c b^T (m64n64, K-major both): a's rows 64c.. of a 128-row tile at
// sa (halves XV_BK * 128 bytes apart), b the 64-row tile at sb (halves
// XV_BM * 128 apart); 16 head-dim columns a step, 32 bytes into the atom.
__device__ __forceinline__ void xv_tn(float* acc, unsigned sa, unsigned sb) {
#pragma unroll
  for (int kk = 0; kk < XA_D / 16; ++kk) {
    const unsigned off = (kk & 3) * 32;
    const unsigned long long ad = xw_desc(sa + (kk >> 2) * XV_BK * 128 + off, 16, 1024);
    const unsigned long long bd = xw_desc(sb + (kk >> 2) * XV_BM * 128 + off, 16, 1024);
    if (kk == 0)
      xw_ss_n64_first(acc, ad, bd);
    else
      xw_ss_n64(acc, ad, bd, 1);
  }
}

// acc += A b (RS): A's 4 k-steps of 16 query rows in registers, b the
// 64-row tile at sb read MN-major (rows are the k-dim, the head dim the n),
// as the forward's P.v reads v: a step starts 16 rows (2048 bytes) on, its
// two 8-row atoms 1024 apart, the head-dim halves XV_BM * 128 apart.
__device__ __forceinline__ void xv_nn(float* acc, const unsigned (*a)[4], unsigned sb) {
#pragma unroll
  for (int j = 0; j < XV_BM / 16; ++j) {
    const unsigned long long bd = xw_desc(sb + j * 16 * 128, XV_BM * 128, 1024);
#if XA_D == 128
    xw_rs_n128(acc, a[j], bd);
#else
    xw_rs_n64(acc, a[j], bd);
#endif
  }
}

// One warpgroup's dS^T (or P^T) as the RS A fragments of 16 rows each: the
// accumulator of 8-column tiles n is the m16n8k16 A fragment per pair.
__device__ __forceinline__ void xv_pack(unsigned (*a)[4], const float* s) {
#pragma unroll
  for (int j = 0; j < XV_BM / 16; ++j) {
    a[j][0] = xa_pack2(s[8 * j], s[8 * j + 1]), a[j][1] = xa_pack2(s[8 * j + 2], s[8 * j + 3]);
    a[j][2] = xa_pack2(s[8 * j + 4], s[8 * j + 5]), a[j][3] = xa_pack2(s[8 * j + 6], s[8 * j + 7]);
  }
}

// q, dout: [B*H, S, D] via mq, mg (box 64 x XV_BM); k, v: [B*KH, KV, D]
// via mk, mv (box 64 x XV_BK). lse, dd [B, H, S]; dq32 [B, H, S, D]
// float32; dk, dv [B, KH, KV, D]. Grid: x = key tiles, y = kv heads, z =
// batch. qmul = log2(e)/sqrt(D), scale = 1/sqrt(D).
XB_KERNEL void __launch_bounds__(XV_NT, 1)
    xa_attention_bwd_wgmma(const __grid_constant__ xw_tmap mq, const __grid_constant__ xw_tmap mk,
                           const __grid_constant__ xw_tmap mv, const __grid_constant__ xw_tmap mg,
                           const float* __restrict__ lse, const float* __restrict__ dd, float* __restrict__ dq32,
                           xa_t* __restrict__ dk, xa_t* __restrict__ dv, int H, int KH, int S, int KV, int causal,
                           float qmul, float scale) {
  XB_DYN_SMEM(smf);
  const unsigned raw = xw_saddr(smf), sK = (raw + 1023) & ~1023u;
  const unsigned sV = sK + XV_KB, sQ = sV + XV_KB, sG = sQ + XW_ST * XV_QB, sDS = sG + XW_ST * XV_QB;
  float* lsd = (float*)((char*)smf + (sDS + 2 * XV_DSB - raw));  // [slot][lse 64, D 64]
  const unsigned bars = sDS + 2 * XV_DSB + 2 * 2 * XV_BM * 4, kvfull = bars;
  const unsigned sDQ = bars + XV_BARB;
#define XV_FULL(st) (bars + 8 + 8 * (st))
  const int tid = threadIdx.x;
  const int c = __shfl_sync(0xffffffffu, tid >> 7, 0);  // warpgroup, warp-uniform as the compiler sees it
  const int t = tid & 127, w = t >> 5, lane = t & 31, gq = lane >> 2, tq = lane & 3;
  // Heaviest first (attention_bwd_mma.cu's order): the key tile is the
  // slowest digit of the linear block index.
  const int lin = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z), nhb = gridDim.y * gridDim.z;
  const int n0 = (lin / nhb) * XV_BK, kh = lin % nhb % gridDim.y, b = lin % nhb / gridDim.y, g = H / KH;
  const int shift = KV - S;
  const int mStart = causal ? xa_max(0, n0 - shift) / XV_BM * XV_BM : 0;
  const int nt = S > mStart ? (S - mStart + XV_BM - 1) / XV_BM : 0, walk = g * nt;
  const long kvOff = (long)(b * KH + kh) * KV * XA_D;
  // This lane's keys in the accumulators of dk, dv, S^T, dP^T (rows 16w +
  // gq and + 8 of the warpgroup's 64), their columns 8 (e >> 2) + 2 tq +
  // (e & 1).
  const int key0 = n0 + 64 * c + 16 * w + gq;
  float dka[XA_D / 2], dva[XA_D / 2];
#pragma unroll
  for (int e = 0; e < XA_D / 2; ++e) dka[e] = dva[e] = 0.f;

  if (tid == 0) {
    xw_bar_init(kvfull, 1);
    for (int st = 0; st < XW_ST; ++st) xw_bar_init(XV_FULL(st), 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  // Tile it's q and dout into stage it % XW_ST (one thread).
  auto issue = [&](int it) {
    const int st = it % XW_ST, bh = b * H + kh * g + it / nt, m0 = mStart + (it % nt) * XV_BM;
    xw_bar_expect(XV_FULL(st), 2 * XV_QB);
#pragma unroll
    for (int hh = 0; hh < XV_NH; ++hh) {
      xw_tma3(sQ + st * XV_QB + hh * XV_BM * 128, &mq, 64 * hh, m0, bh, XV_FULL(st));
      xw_tma3(sG + st * XV_QB + hh * XV_BM * 128, &mg, 64 * hh, m0, bh, XV_FULL(st));
    }
  };
  // Tile it's lse (warpgroup 0) and D (1) into slot it & 1: rows past S
  // take lse = +inf, so their p is 0.
  auto rowstats = [&](int it) -> float {
    const long bh = (long)b * H + kh * g + it / nt;
    const int row = mStart + (it % nt) * XV_BM + t;
    if (c == 0) return row < S ? lse[bh * S + row] : __int_as_float(0x7f800000);
    return row < S ? dd[bh * S + row] : 0.f;
  };
  __syncthreads();  // barriers initialised
  if (walk > 0) {
    if (tid == 0) {
      xw_bar_expect(kvfull, 2 * XV_KB);
#pragma unroll
      for (int hh = 0; hh < XV_NH; ++hh) {
        xw_tma3(sK + hh * XV_BK * 128, &mk, 64 * hh, n0, b * KH + kh, kvfull);
        xw_tma3(sV + hh * XV_BK * 128, &mv, 64 * hh, n0, b * KH + kh, kvfull);
      }
      for (int it = 0; it < XW_ST - 1 && it < walk; ++it) issue(it);
    }
    if (t < XV_BM) lsd[c * XV_BM + t] = rowstats(0);
    __syncthreads();  // slot 0 visible
    xw_bar_wait(kvfull, 0);
  }
  const unsigned ka = sK + 64 * c * 128, va = sV + 64 * c * 128;  // this warpgroup's 64 keys of k and v
  for (int it = 0; it < walk; ++it) {
    const int st = it % XW_ST, m0 = mStart + (it % nt) * XV_BM;
    const long bh = (long)b * H + kh * g + it / nt;
    const float nextStat = (it + 1 < walk && t < XV_BM) ? rowstats(it + 1) : 0.f;
    xw_bar_wait(XV_FULL(st), (it / XW_ST) & 1);
    const unsigned qa = sQ + st * XV_QB, ga = sG + st * XV_QB;
    float s[32], dp[32];
    xw_fence();
    xv_tn(s, ka, qa);
    xw_commit();
    xv_tn(dp, va, ga);
    xw_commit();
    const float* Ls = lsd + (it & 1) * 2 * XV_BM;
    xw_wait1();
    xw_hold<32>(s);
    // P^T: element e is key key0 + 8 ((e >> 1) & 1), row m0 + 8 (e >> 2) +
    // 2 tq + (e & 1).
    {
      const bool edge = n0 + 64 * c + 64 > KV || (causal && n0 + 64 * c + 63 > m0 + shift);
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const float2 l = *(const float2*)(Ls + 8 * j + 2 * tq);
#pragma unroll
        for (int e = 4 * j; e < 4 * j + 4; ++e) {
          float p = xw_exp2(fmaf(s[e], qmul, -((e & 1) ? l.y : l.x)));
          if (edge) {
            const int key = key0 + 8 * ((e >> 1) & 1), row = m0 + 8 * j + 2 * tq + (e & 1);
            if (key >= KV || (causal && key > row + shift)) p = 0.f;
          }
          s[e] = p;
        }
      }
    }
    unsigned pa[4][4], da[4][4];
    xv_pack(pa, s);
    xw_wait0();
    xw_hold<32>(dp);
    // dS^T = P^T (dP^T - D), then stored as dS [row][key], half c (this
    // warpgroup's keys) of the buffer: 16-bit stores at row r, key kl, in
    // 16-byte chunk (kl / 8) ^ (r % 8) of the row's 128 bytes (the tensor
    // map's 128-byte swizzle, which the A descriptor of dq's product reads).
    {
      const unsigned ds0 = sDS + (it & 1) * XV_DSB + c * XV_BM * 128;
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const float2 dr = *(const float2*)(Ls + XV_BM + 8 * j + 2 * tq);
#pragma unroll
        for (int e = 4 * j; e < 4 * j + 4; ++e) s[e] = s[e] * (dp[e] - ((e & 1) ? dr.y : dr.x));
      }
      xv_pack(da, s);
#if XV_OFF & 2
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          // da[j][i]: rows 16 j + 8 (i >> 1) + 2 tq (+1 in the high half), key 16 w + gq + 8 (i & 1)
          const int r = 16 * j + 8 * (i >> 1) + 2 * tq, h = i & 1;
          const unsigned w32 = da[j][i];
#pragma unroll
          for (int u = 0; u < 2; ++u) {
            const int rr = r + u;
            const unsigned addr = ds0 + rr * 128 + ((((2 * w + h) ^ (rr & 7))) << 4) + 2 * gq;
            const unsigned short v16 = (unsigned short)(u ? (w32 >> 16) : (w32 & 0xffffu));
            asm volatile("st.shared.u16 [%0], %1;" ::"r"(addr), "h"(v16) : "memory");
          }
        }
#else
      // By stmatrix .trans: da[j][i] is the m8n8 fragment of keys 16 w + 8
      // (i & 1).. by rows 16 j + 8 (i >> 1)..; transposed, each of its 8
      // rows is one query row's 8 keys, 16 bytes: lane l gives the address
      // of row l % 8 of matrix l / 8, its chunk swizzled. 4 instructions
      // for the 32 16-bit stores.
      {
        const int i = lane >> 3, h = i & 1;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const int rr = 16 * j + 8 * (i >> 1) + (lane & 7);
          const unsigned addr = ds0 + rr * 128 + (((2 * w + h) ^ (rr & 7)) << 4);
          asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(da[j][0]),
                       "r"(da[j][1]), "r"(da[j][2]), "r"(da[j][3])
                       : "memory");
        }
      }
#endif
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // the stores, visible to wgmma's reads
    if (it + 1 < walk && t < XV_BM) lsd[((it + 1) & 1) * 2 * XV_BM + c * XV_BM + t] = nextStat;
#if XV_OFF & 1
    xw_named_sync(1);  // both warpgroups stored dS (and finished tile it - 1: its stage is free)
    if (tid == 0 && it + XW_ST - 1 < walk) issue(it + XW_ST - 1);
#endif
    // dv += P^T dout, dk += dS^T q (issued before the barrier: the tensor
    // cores start on them while the other warpgroup finishes its dS), then
    // dq = dS k once both halves of dS are stored.
    xw_hold_u<16>(&pa[0][0]);
    xw_hold_u<16>(&da[0][0]);
    xw_fence();
    xv_nn(dva, pa, ga);
    xv_nn(dka, da, qa);
#if !(XV_OFF & 1)
    xw_commit();
    xw_named_sync(1);  // both warpgroups stored dS (and finished tile it - 1: its stage is free)
    if (tid == 0 && it + XW_ST - 1 < walk) issue(it + XW_ST - 1);
#endif
    float dqa[32];
    {
      const unsigned dsb = sDS + (it & 1) * XV_DSB;
#if XA_D == 128
      // The head-dim half c of dq over all 128 keys: dS's key halves are the
      // two warpgroups' (XV_BM * 128 bytes apart); k's rows 16 kk.., its
      // head-dim half c (XV_BK * 128 bytes on).
#pragma unroll
      for (int kk = 0; kk < 8; ++kk) {
        const unsigned long long ad = xw_desc(dsb + (kk >> 2) * XV_BM * 128 + (kk & 3) * 32, 16, 1024);
        const unsigned long long bd = xw_desc(sK + c * XV_BK * 128 + kk * 16 * 128, XV_BK * 128, 1024);
        if (kk == 0)
          xv_sst_n64_first(dqa, ad, bd);
        else
          xv_sst_n64(dqa, ad, bd);
      }
#else
      // The whole head dim over this warpgroup's 64 keys.
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        const unsigned long long ad = xw_desc(dsb + c * XV_BM * 128 + kk * 32, 16, 1024);
        const unsigned long long bd = xw_desc(sK + (64 * c + 16 * kk) * 128, XV_BK * 128, 1024);
        if (kk == 0)
          xv_sst_n64_first(dqa, ad, bd);
        else
          xv_sst_n64(dqa, ad, bd);
      }
#endif
    }
    xw_commit();
    xw_wait0();
    xw_hold<XA_D / 2>(dva);
    xw_hold<XA_D / 2>(dka);
    xw_hold<32>(dqa);
    xw_hold_u<16>(&pa[0][0]);
    xw_hold_u<16>(&da[0][0]);
    // dq's element e: row 16 w + gq + 8 ((e >> 1) & 1), column dc + 8 (e >>
    // 2) + 2 tq + (e & 1).
    const int dc = XA_D == 128 ? 64 * c : 0;
#if XV_OFF & 4
#pragma unroll
    for (int hr = 0; hr < 2; ++hr) {
      const int row = m0 + 16 * w + gq + 8 * hr;
      if (row >= S) continue;
      float* dst = dq32 + (bh * S + row) * XA_D + dc + 2 * tq;
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const float a0 = dqa[4 * j + 2 * hr] * scale, a1 = dqa[4 * j + 2 * hr + 1] * scale;
        asm volatile("red.global.add.v2.f32 [%0], {%1, %2};" ::"l"(dst + 8 * j), "f"(a0), "f"(a1) : "memory");
      }
    }
#else
    // Through shared memory: each warp stores its 16 rows of the 64-column
    // tile (rows XV_DQS bytes apart: 32 more than 256, so a half-warp's
    // 8-byte stores, 4 rows by 4 lanes, fill the 32 banks once), then its lanes 0-15 add one row each to dq32
    // by a bulk reduction (cp.reduce.async.bulk .add.f32): 64 operations of
    // 256 bytes where red.global would send 256 instructions' worth of
    // 32-byte sectors. Each lane's previous reduction has finished reading
    // its row (wait_group.read, long done: it was issued a tile ago) before
    // the warp writes the buffer again.
    {
      const unsigned qs = sDQ + c * XV_BM * XV_DQS;
      asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
      __syncwarp();
#pragma unroll
      for (int hr = 0; hr < 2; ++hr) {
        const unsigned ra = qs + (16 * w + gq + 8 * hr) * XV_DQS + 8 * tq;
#pragma unroll
        for (int j = 0; j < 8; ++j)
          asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(ra + 32 * j), "f"(dqa[4 * j + 2 * hr] * scale),
                       "f"(dqa[4 * j + 2 * hr + 1] * scale)
                       : "memory");
      }
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      __syncwarp();
      const int row = m0 + 16 * w + lane;
      if (lane < 16 && row < S) {
        asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], 256;" ::"l"(
                         dq32 + (bh * S + row) * XA_D + dc),
                     "r"(qs + (16 * w + lane) * XV_DQS)
                     : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
      }
    }
#endif
  }
#if !(XV_OFF & 4)
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");  // the reductions done before the block's shared memory goes
#endif
  // dk (scaled) and dv, rounded: each lane's column pairs as 32-bit stores.
#pragma unroll
  for (int hr = 0; hr < 2; ++hr) {
    const int key = key0 + 8 * hr;
    if (key >= KV) continue;
#pragma unroll
    for (int j = 0; j < XA_D / 8; ++j) {
      const long o = kvOff + (long)key * XA_D + 8 * j + 2 * tq;
      *(unsigned*)(dk + o) = xa_pack2(dka[4 * j + 2 * hr] * scale, dka[4 * j + 2 * hr + 1] * scale);
      *(unsigned*)(dv + o) = xa_pack2(dva[4 * j + 2 * hr], dva[4 * j + 2 * hr + 1]);
    }
  }
#undef XV_FULL
}
XB_EXPORT(xa_attention_bwd_wgmma)
#endif
