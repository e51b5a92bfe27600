// Attention forward for Hopper (sm_90a), bfloat16 and float16, head dim 64
// or 128: the FlashAttention-3 design (Shah et al. 2024), written from the
// paper and the PTX ISA. Three warpgroups of 128 threads: warpgroup 0
// produces (one thread issues bulk tensor copies through the tensor maps:
// q once, then k and v tiles into an XW_ST-stage ring, each copy completing
// on its stage's "full" mbarrier by transaction count); warpgroups 1 and 2
// consume, each owning 64 of the block's 128 query rows: S = q.k^T by
// wgmma from shared memory, the online softmax in registers (float32, exp2
// of scores scaled by log2(e)/sqrt(D), as attention_mma.cu), O += P.v by
// wgmma with P from registers (per 16 keys, S's accumulator layout is the
// A fragment of P.v), then an arrive on the stage's "empty" barrier hands
// it back. The two consumers interleave on their own: one's softmax runs
// while the other's products hold the tensor cores. setmaxnreg moves
// registers from the producer (40) to the consumers (232).
//
// Shared memory (1024-aligned: a 128-byte swizzle atom is 8 rows of 128
// bytes): each tile is stored as XW_NH column halves of 64 elements, each
// [rows][64] with 16-byte chunks swizzled (chunk ^ row % 8), as the tensor
// map's SWIZZLE_128B writes them and wgmma's 128-byte mode reads them. q
// and k are K-major operands (head dim contiguous), v is MN-major (keys
// are its K, the head dim its N, contiguous).
//
// XW_DEBUG (TestGPUWGMMADebug): 1 writes the first tile's raw scores q.k^T
// as out[row][key] (key < D); 2 writes P.v with P[r][c] = (c == r % XW_BN),
// so out row r is v row r % XW_BN. Each checks one operand path alone.
// XW_VSWAP 1 swaps v's leading and stride byte offsets: the one layout
// question the PTX ISA's prose leaves open, answered by trying both there.
// XW_PINGPONG 1 (FA3's inter-warpgroup schedule) makes the consumers take
// turns issuing q.k^T through two named barriers, so one's softmax runs
// while the other's products do, instead of both drifting into lockstep.
#if XA_DT != 0 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
XB_KERNEL void __launch_bounds__(XW_NT, 1)
    xa_attention_wgmma(const __grid_constant__ xw_tmap mq, const __grid_constant__ xw_tmap mk,
                       const __grid_constant__ xw_tmap mv, xa_t* __restrict__ out, int H, int KH, int S, int KV,
                       int causal, float qmul) {
  XB_DYN_SMEM(smf);
  const unsigned raw = xw_saddr(smf), sQ = (raw + 1023) & ~1023u;
  const unsigned sK = sQ + XW_QB, sV = sK + XW_ST * XW_KB, bars = sV + XW_ST * XW_KB;
  const unsigned qfull = bars;
#define XW_KFULL(st) (bars + 8 + 8 * (st))
#define XW_VFULL(st) (bars + 8 + 8 * XW_ST + 8 * (st))
#define XW_EMPTY(st) (bars + 8 + 16 * XW_ST + 8 * (st))
  const int tid = threadIdx.x;
  // The warpgroup by a shuffle from lane 0: uniform across the warp as the
  // compiler sees it, so each role is a warp-uniform branch.
  const int wg = __shfl_sync(0xffffffffu, tid >> 7, 0);
  const int m0 = (gridDim.x - 1 - blockIdx.x) * XW_BM;  // the causal tiles with most keys first
  const int b = blockIdx.z, h = blockIdx.y, bh = b * H + h, kvh = b * KH + h / (H / KH);  // GQA by index
  const int shift = KV - S;  // bottom-right causal: row r sees keys <= r + shift
  const int kvEnd = causal ? min(KV, m0 + XW_BM + shift) : KV;
  int nt = kvEnd > 0 ? (kvEnd + XW_BN - 1) / XW_BN : 0;
#if XW_DEBUG
  nt = min(nt, 1);
#endif
  if (tid == 0) {
    xw_bar_init(qfull, 1);
    for (int st = 0; st < XW_ST; ++st) {
      xw_bar_init(XW_KFULL(st), 1);
      xw_bar_init(XW_VFULL(st), 1);
      xw_bar_init(XW_EMPTY(st), 256);  // every consumer thread arrives
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");  // visible to the copy engine
  }
  __syncthreads();

  if (wg == 0) {  // producer
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
    if (tid == 0) {
      xw_bar_expect(qfull, XW_QB);
#pragma unroll
      for (int hh = 0; hh < XW_NH; ++hh) xw_tma3(sQ + hh * XW_BM * 128, &mq, 64 * hh, m0, bh, qfull);
      for (int i = 0; i < nt; ++i) {
        const int st = i % XW_ST;
        xw_bar_wait(XW_EMPTY(st), ((i / XW_ST) & 1) ^ 1);  // the consumers released it (first pass: free)
        xw_bar_expect(XW_KFULL(st), XW_KB);
#pragma unroll
        for (int hh = 0; hh < XW_NH; ++hh)
          xw_tma3(sK + st * XW_KB + hh * XW_BN * 128, &mk, 64 * hh, i * XW_BN, kvh, XW_KFULL(st));
        xw_bar_expect(XW_VFULL(st), XW_KB);
#pragma unroll
        for (int hh = 0; hh < XW_NH; ++hh)
          xw_tma3(sV + st * XW_KB + hh * XW_BN * 128, &mv, 64 * hh, i * XW_BN, kvh, XW_VFULL(st));
      }
    }
  } else {  // consumers: the other branch of one if/else, so ptxas gives each role its setmaxnreg budget
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
    // Consumer c: rows 64c.. of the tile; warp w of it rows 16w..; this lane
    // rows r0 and r0 + 8. Accumulator element e (PTX ISA, wgmma D fragment):
    // row r0 + 8 ((e >> 1) & 1), column 8 (e >> 2) + 2 tq + (e & 1).
    const int c = wg - 1, t = tid & 127, w = t >> 5, lane = t & 31, gq = lane >> 2, tq = lane & 3;
    const int r0 = 64 * c + 16 * w + gq;
    const float NEG_INF = __uint_as_float(0xff800000u);
    float o[XW_DP / 2], s[XW_BN / 2];
#pragma unroll
    for (int e = 0; e < XW_DP / 2; ++e) o[e] = 0.f;
    float mrow[2] = {NEG_INF, NEG_INF}, lrow[2] = {0.f, 0.f};
    const unsigned qa = sQ + 64 * c * 128;
    xw_bar_wait(qfull, 0);
#if XW_PINGPONG
    if (c == 1 && nt > 0) xw_named_arrive(1);  // consumer 0 takes the tensor cores first
#endif
    for (int i = 0; i < nt; ++i) {
      const int st = i % XW_ST, n0 = i * XW_BN;
      const unsigned ph = (i / XW_ST) & 1, ka = sK + st * XW_KB;
      xw_bar_wait(XW_KFULL(st), ph);
#if XW_PINGPONG
      xw_named_sync(1 + c);  // my turn: the other consumer has issued its q.k^T
#endif
      xw_fence();
#pragma unroll
      for (int kk = 0; kk < XW_DP / 16; ++kk) {  // 16 head-dim columns a step: half kk/4, 32 bytes in per step
        const unsigned off = (kk & 3) * 32;
        const unsigned long long qd = xw_desc(qa + (kk >> 2) * XW_BM * 128 + off, 16, 1024);
        const unsigned long long kd = xw_desc(ka + (kk >> 2) * XW_BN * 128 + off, 16, 1024);
        if (kk == 0)
          xw_ss_n128_first(s, qd, kd);
        else
          xw_ss_n128(s, qd, kd, 1);
      }
      xw_commit();
#if XW_PINGPONG
      if (c == 0 || i + 1 < nt) xw_named_arrive(2 - c);  // the other's turn (none after its last)
#endif
      xw_wait0();
      xw_hold<XW_BN / 2>(s);
#if XW_DEBUG == 1
      xw_bar_wait(XW_VFULL(st), ph);  // no copy may still be landing when the block exits
      break;                          // s holds the raw scores of tile 0
#endif
#if XW_DEBUG == 2
#pragma unroll
      for (int e = 0; e < XW_BN / 2; ++e) {
        const int col = 8 * (e >> 2) + 2 * tq + (e & 1), row = r0 + 8 * ((e >> 1) & 1);
        s[e] = col == row % XW_BN ? 1.f : 0.f;
      }
      lrow[0] = lrow[1] = 1.f;
#else
      // Mask (only tiles that cross the causal diagonal or the end of the
      // keys), then the online softmax per row: max over the quad's lanes,
      // rescale the running sum and output by exp2(old max - new max).
      const bool edge = n0 + XW_BN > KV || (causal && n0 + XW_BN - 1 > m0 + 64 * c + shift);
#pragma unroll
      for (int e = 0; e < XW_BN / 2; ++e) {
        float x = s[e] * qmul;
        const int col = n0 + 8 * (e >> 2) + 2 * tq + (e & 1), row = m0 + r0 + 8 * ((e >> 1) & 1);
        if (edge && (col >= KV || (causal && col > row + shift))) x = NEG_INF;
        s[e] = x;
      }
#pragma unroll
      for (int hr = 0; hr < 2; ++hr) {
        float mx = NEG_INF;
#pragma unroll
        for (int n = 0; n < XW_BN / 8; ++n) mx = fmaxf(mx, fmaxf(s[4 * n + 2 * hr], s[4 * n + 2 * hr + 1]));
        mx = fmaxf(mx, XB_SHFL_XOR(mx, 1));
        mx = fmaxf(mx, XB_SHFL_XOR(mx, 2));
        const float mnew = fmaxf(mrow[hr], mx);
        const float base = mnew == NEG_INF ? 0.f : mnew;  // no visible key yet: p = 0, no inf - inf
        const float alpha = exp2f(mrow[hr] - base);
        float sum = 0.f;
#pragma unroll
        for (int n = 0; n < XW_BN / 8; ++n)
#pragma unroll
          for (int e = 4 * n + 2 * hr; e < 4 * n + 2 * hr + 2; ++e) {
            s[e] = exp2f(s[e] - base);
            sum += s[e];
          }
        sum += XB_SHFL_XOR(sum, 1);
        sum += XB_SHFL_XOR(sum, 2);
        lrow[hr] = lrow[hr] * alpha + sum;
        mrow[hr] = mnew;
#pragma unroll
        for (int n = 0; n < XW_DP / 8; ++n) o[4 * n + 2 * hr] *= alpha, o[4 * n + 2 * hr + 1] *= alpha;
      }
#endif
      // O += P.v: 16 keys a step; v's descriptor starts at key row 16j
      // (two 8-row atoms, stride 1024), its head-dim halves XW_BN * 128 apart.
      unsigned a[XW_BN / 16][4];
#pragma unroll
      for (int j = 0; j < XW_BN / 16; ++j) {
        a[j][0] = xa_pack2(s[8 * j], s[8 * j + 1]), a[j][1] = xa_pack2(s[8 * j + 2], s[8 * j + 3]);
        a[j][2] = xa_pack2(s[8 * j + 4], s[8 * j + 5]), a[j][3] = xa_pack2(s[8 * j + 6], s[8 * j + 7]);
      }
      xw_bar_wait(XW_VFULL(st), ph);
      xw_hold<XW_DP / 2>(o);
      xw_fence();
      const unsigned va = sV + st * XW_KB;
#pragma unroll
      for (int j = 0; j < XW_BN / 16; ++j) {
#if XW_VSWAP
        const unsigned long long vd = xw_desc(va + j * 16 * 128, 1024, XW_BN * 128);
#else
        const unsigned long long vd = xw_desc(va + j * 16 * 128, XW_BN * 128, 1024);
#endif
#if XW_DP == 128
        xw_rs_n128(o, a[j], vd);
#else
        xw_rs_n64(o, a[j], vd);
#endif
      }
      xw_commit();
      xw_wait0();
      xw_hold<XW_DP / 2>(o);
      xw_bar_arrive(XW_EMPTY(st));
    }

    // Out: each lane's pairs of columns as one 32-bit store per row.
    xa_t* ob = out + (long)bh * S * XA_D;
#pragma unroll
    for (int hr = 0; hr < 2; ++hr) {
      const int row = m0 + r0 + 8 * hr;
      if (row >= S) continue;
      const float inv = lrow[hr] > 0.f ? 1.f / lrow[hr] : 0.f;  // no visible key: zeros
#pragma unroll
      for (int n = 0; n < XW_DP / 8; ++n) {
#if XW_DEBUG == 1
        const float lo = s[4 * n + 2 * hr], hi = s[4 * n + 2 * hr + 1];
#else
        const float lo = o[4 * n + 2 * hr] * inv, hi = o[4 * n + 2 * hr + 1] * inv;
#endif
        *(unsigned*)(ob + (long)row * XA_D + 8 * n + 2 * tq) = xa_pack2(lo, hi);
      }
    }
  }
}
XB_EXPORT(xa_attention_wgmma)
#endif
