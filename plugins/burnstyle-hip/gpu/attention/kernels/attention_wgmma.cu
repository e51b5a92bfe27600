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
// it back. XW_OVERLAP 0 (the default, Spec.WGMMAOverlap false) keeps that
// serial inside a consumer; 1 pipelines it (see the consumer's loop), which
// ran slower on the H100 (wgmma.go). The two consumers interleave on their
// own: one's softmax runs while the other's products hold the tensor cores. setmaxnreg moves registers from the producer (40)
// to the consumers (232).
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
// XW_LSE 1 (the backward phases' forward, backward.go) adds the argument
// lse and writes each row's xa_lse there ([B, H, S] float32, the mma.sync
// kernel's layout: +inf for a row that sees no key); 0 (the forward alone)
// compiles the kernel without it.
#if XA_DT != 0 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
XB_KERNEL void __launch_bounds__(XW_NT, 1)
    xa_attention_wgmma(const __grid_constant__ xw_tmap mq, const __grid_constant__ xw_tmap mk,
                       const __grid_constant__ xw_tmap mv, xa_t* __restrict__ out, int H, int KH, int S, int KV,
                       int causal, float qmul
#if XW_LSE
                       ,
                       float* __restrict__ lse
#endif
    ) {
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
    float o[XW_DP / 2], s[XW_BN / 2], alpha[2];
    unsigned a[XW_BN / 16][4];  // P, packed: P.v's A fragments
#pragma unroll
    for (int e = 0; e < XW_DP / 2; ++e) o[e] = 0.f;
    float mrow[2] = {NEG_INF, NEG_INF}, lrow[2] = {0.f, 0.f};
    const unsigned qa = sQ + 64 * c * 128;
    // Tile i's keys cross the causal diagonal or the end of the keys: only
    // those tiles are masked.
#define XW_EDGE(n0) ((n0) + XW_BN > KV || (causal && (n0) + XW_BN - 1 > m0 + 64 * c + shift))
#if XW_PINGPONG
    // A turn is one issue of products; consumer 0 takes the tensor cores
    // first, and after its last turn consumer 1 hands nothing back.
#define XW_TURN() xw_named_sync(1 + c)
#define XW_TURN_END(last) \
  if (c == 0 || !(last)) xw_named_arrive(2 - c)
    if (c == 1 && nt > 0) xw_named_arrive(1);
#else
#define XW_TURN()
#define XW_TURN_END(last)
#endif
    // This consumer's tiles: under the causal mask its 64 rows see fewer
    // keys than the block's 128; tiles wholly past them are only handed
    // back (xw_release). Not under ping-pong, whose turns both consumers
    // count alike.
    int ntc = nt;
#if !XW_PINGPONG && !XW_DEBUG
    if (causal) {
      const int e = min(KV, m0 + 64 * (c + 1) + shift);
      ntc = e > 0 ? min(nt, (e + XW_BN - 1) / XW_BN) : 0;
    }
#endif
    xw_bar_wait(qfull, 0);
#if XW_OVERLAP
    // FA3's intra-warpgroup overlap (Shah et al. 2024): q.k^T of tile i and
    // P.v of tile i-1 are issued together, and the softmax of tile i runs
    // while the tensor cores do P.v. Entering step i, O holds the tiles
    // before i-1 at the scale of m(i-1), the max after tile i-1; P(i-1).v(i-1)
    // (P made at m(i-1)) adds to it, and once that product is done O takes
    // alpha(i) = exp2(m(i-1) - m(i)). s holds P(i) in float32 while the
    // product still reads P(i-1) from a, so one packed P suffices: a is
    // rewritten only after the wait. The prologue is tile 0's q.k^T and
    // softmax, the epilogue the last tile's P.v.
    if (ntc > 0) {
      xw_bar_wait(XW_KFULL(0), 0);
      XW_TURN();
      xw_fence();
      xw_qk(s, qa, sK);
      xw_commit();
      XW_TURN_END(XW_DEBUG == 1);
      xw_wait0();
      xw_hold<XW_BN / 2>(s);
#if XW_DEBUG == 1
      xw_bar_wait(XW_VFULL(0), 0);  // no copy may still be landing when the block exits; s: raw scores
#else
      xw_softmax(s, mrow, lrow, alpha, 0, m0 + r0, tq, XW_EDGE(0), KV, causal, shift, qmul);  // O is 0: no rescale
      xw_pack(a, s);
      for (int i = 1; i < ntc; ++i) {
        const int st = i % XW_ST, pst = (i - 1) % XW_ST, n0 = i * XW_BN;
        xw_bar_wait(XW_KFULL(st), (i / XW_ST) & 1);
        XW_TURN();
        xw_fence_oa(o, a);  // the last writes of o (rescale) and a (pack) before both products
        xw_qk(s, qa, sK + st * XW_KB);
        xw_commit();
        xw_bar_wait(XW_VFULL(pst), ((i - 1) / XW_ST) & 1);
        xw_pv(o, a, sV + pst * XW_KB);
        xw_commit();
        XW_TURN_END(false);
        xw_wait1();  // q.k^T done, P.v still running
        xw_hold<XW_BN / 2>(s);
        xw_softmax(s, mrow, lrow, alpha, n0, m0 + r0, tq, XW_EDGE(n0), KV, causal, shift, qmul);
        // The softmax stays before the wait (settled), the rescale and the
        // pack after it (o and s held after it: neither may be hoisted).
        xw_settle(lrow);
        xw_wait0();
        xw_hold<XW_DP / 2>(o);
        xw_hold<XW_BN / 2>(s);
        xw_bar_arrive(XW_EMPTY(pst));
        xw_rescale(o, alpha);
        xw_pack(a, s);
      }
      const int lst = (ntc - 1) % XW_ST;
      xw_bar_wait(XW_VFULL(lst), ((ntc - 1) / XW_ST) & 1);
      XW_TURN();
      xw_fence_oa(o, a);
      xw_pv(o, a, sV + lst * XW_KB);
      xw_commit();
      XW_TURN_END(true);
      xw_wait0();
      xw_hold<XW_DP / 2>(o);
      xw_bar_arrive(XW_EMPTY(lst));
#endif
    }
#else
    // The serial schedule: per tile q.k^T, wait, softmax, P.v, wait.
    for (int i = 0; i < ntc; ++i) {
      const int st = i % XW_ST, n0 = i * XW_BN;
      const unsigned ph = (i / XW_ST) & 1;
      xw_bar_wait(XW_KFULL(st), ph);
      XW_TURN();  // my turn: the other consumer has issued its q.k^T
      xw_fence();
      xw_qk(s, qa, sK + st * XW_KB);
      xw_commit();
      XW_TURN_END(i + 1 >= ntc);  // the other's turn (ntc = nt under ping-pong)
      xw_wait0();
      xw_hold<XW_BN / 2>(s);
#if XW_DEBUG == 1
      xw_bar_wait(XW_VFULL(st), ph);  // no copy may still be landing when the block exits
      break;                          // s holds the raw scores of tile 0
#endif
      xw_softmax(s, mrow, lrow, alpha, n0, m0 + r0, tq, XW_EDGE(n0), KV, causal, shift, qmul);
      xw_rescale(o, alpha);
      xw_pack(a, s);
      xw_bar_wait(XW_VFULL(st), ph);
      xw_fence_oa(o, a);
      xw_pv(o, a, sV + st * XW_KB);
      xw_commit();
      xw_wait0();
      xw_hold<XW_DP / 2>(o);
      xw_bar_arrive(XW_EMPTY(st));
    }
#endif
    // The block's tiles past this consumer's keys: each handed back once it
    // has landed (an arrival before that would count toward the stage's
    // previous use, which the other consumer may still be reading).
    for (int i = ntc; i < nt; ++i) {
      const int st = i % XW_ST;
      const unsigned ph = (i / XW_ST) & 1;
      xw_bar_wait(XW_KFULL(st), ph);
      xw_bar_wait(XW_VFULL(st), ph);
      xw_bar_arrive(XW_EMPTY(st));
    }
#undef XW_TURN
#undef XW_TURN_END
#undef XW_EDGE
    // Out: each lane's pairs of columns as one 32-bit store per row.
    xa_t* ob = out + (long)bh * S * XA_D;
#pragma unroll
    for (int hr = 0; hr < 2; ++hr) {
      const int row = m0 + r0 + 8 * hr;
      if (row >= S) continue;
      const float inv = lrow[hr] > 0.f ? 1.f / lrow[hr] : 0.f;  // no visible key: zeros
#if XW_LSE
      if (tq == 0) lse[(long)bh * S + row] = xa_lse(mrow[hr], lrow[hr]);  // the quad's lanes hold the same sums
#endif
#pragma unroll
      for (int n = 0; n < XW_DP / 8; ++n) {
#if XW_DEBUG == 1  // keys past the tile (XW_BN < D) read as 0
        const float lo = n < XW_BN / 8 ? s[min(4 * n, XW_BN / 2 - 4) + 2 * hr] : 0.f;
        const float hi = n < XW_BN / 8 ? s[min(4 * n, XW_BN / 2 - 4) + 2 * hr + 1] : 0.f;
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
