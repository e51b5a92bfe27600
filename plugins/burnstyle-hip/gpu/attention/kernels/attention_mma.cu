// Attention forward on tensor cores for bfloat16 and float16 (XA_DT 1, 2):
// the algorithm of attention.cu (FlashAttention-2: q tile resident, k/v
// tiles streamed, online softmax in float32) with both products as
// mma.sync m16n8k16 (16-bit inputs, float32 accumulation). Follows
// attention.cu (xa_t, xa_st, xa_min) and attention_frag.cuh (xm_mma,
// xm_pack, xm_ldsm4, xm_tile, ...) in one program.
//
// 128 threads = 4 warps; warp w owns query rows XM_MT*16*w .. of the
// XM_BM = 64*XM_MT row tile, as XM_MT m-tiles of 16 rows (XM_MT 2 is FA2's
// arrangement: every k and v fragment read from shared memory feeds two
// products). In the fragments of m16n8k16 lane = 4*gq + tq; a lane holds rows
// gq and gq + 8 of an m-tile and columns 2tq, 2tq + 1 of each 8-column accumulator tile,
// so a row's max and sum reduce over the 4 lanes of a quad (xor 1, 2). The
// scores' accumulator layout of two adjacent 8-column tiles is exactly the
// A-operand layout of the next product, so p never leaves registers: it is
// rounded to the dtype in pairs and fed to p.v directly.
//
// Shared memory holds q, k, v tiles in the dtype, rows XM_SS = XM_DP + 8
// halves apart: 16-byte aligned rows for cp.async and ldmatrix, and a
// stride of 4 banks mod 32, so the 8 rows one ldmatrix phase reads (or the
// scalar fragment loads of XM_FAST 0) fall on distinct banks. XM_DP is
// XA_D rounded up to 16 (the k step), zero filled. XM_FAST (the default)
// loads tiles by cp.async and fragments by ldmatrix; 0 uses plain loads.
#if XA_DT != 0 && !XB_HIP  // tensor cores through PTX: CUDA only
// Arguments and grid as xa_attention_fwd (lse, when not null, gets each
// row's saved state for the backward, as there); qmul = log2(e)/sqrt(XA_D) is
// applied to the float32 scores (q stays exact in the dtype). XM_MINB, the
// blocks per SM ptxas must leave registers for, is 3 for 64-row tiles up
// to D = 128 (157 registers at 128 with CUDA 13; asked for 1 block it took
// more and fit 2), 2 for 128-row tiles (240 at D = 128 with 32 kv rows;
// with 64 it spills) and 1 above D = 128 (the 128 output accumulators
// need 232); stated at all because
// CUDA 13's ptxas, left to itself, capped D = 20 at 72 registers and
// spilled.
XB_KERNEL void __launch_bounds__(XM_NT, XM_MINB)
    xa_attention_mma(const xa_t* __restrict__ q, const xa_t* __restrict__ k, const xa_t* __restrict__ v,
                     xa_t* __restrict__ out, int H, int KH, int S, int KV, int causal, float qmul,
                     float* __restrict__ lse) {
  XB_DYN_SMEM(smf);
#ifdef XB_EMU
  emu_check_smem(XM_SMEM_BYTES);
#endif
  xa_t* Qs = (xa_t*)smf;
  xa_t* Ks = Qs + XM_BM * XM_SS;
  xa_t* Vs = Ks + XM_BN * XM_SS;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, gq = lane >> 2, tq = lane & 3;
  const int m0 = (gridDim.x - 1 - blockIdx.x) * XM_BM;  // the causal tiles with most keys first
  const int b = blockIdx.z, h = blockIdx.y, bh = b * H + h, kh = h / (H / KH);
  const xa_t* kb = k + (long)(b * KH + kh) * KV * XA_D;  // GQA: an index, no copy
  const xa_t* vb = v + (long)(b * KH + kh) * KV * XA_D;
  const int shift = KV - S;
  const int kvEnd = causal ? xa_min(KV, m0 + XM_BM + shift) : KV;
  const int w0 = 16 * XM_MT * warp;  // the warp's first row in the tile; m-tile mt starts at w0 + 16 mt

  xm_tile<XM_BM>(Qs, q + (long)bh * S * XA_D, m0, S);
  const float NEG_INF = __uint_as_float(0xff800000u);
  // Per m-tile mt: this lane's rows w0 + 16 mt + gq (+ 8), their running
  // max and sum, and their output accumulators.
  float mrow[XM_MT][2], lrow[XM_MT][2], o[XM_MT][XM_NO][4];
#pragma unroll
  for (int mt = 0; mt < XM_MT; ++mt) {
    mrow[mt][0] = mrow[mt][1] = NEG_INF;
    lrow[mt][0] = lrow[mt][1] = 0.f;
#pragma unroll
    for (int n = 0; n < XM_NO; ++n) o[mt][n][0] = o[mt][n][1] = o[mt][n][2] = o[mt][n][3] = 0.f;
  }

  // Pipeline (FA2's): v of a tile loads while q.k^T and the softmax run, k
  // of the next tile while p.v runs. Each barrier follows a wait, so a
  // tile is whole and visible, and precedes an issue into a buffer, so
  // nobody still reads it.
  if (kvEnd > 0) xm_tile<XM_BN>(Ks, kb, 0, KV);
  xm_commit();
  for (int n0 = 0; n0 < kvEnd; n0 += XM_BN) {
    xm_wait();
    __syncthreads();  // q (first time) and k of this tile are in; v of the last tile is read
    xm_tile<XM_BN>(Vs, vb, n0, KV);
    xm_commit();
    float s[XM_MT][XM_NS][4];
#pragma unroll
    for (int mt = 0; mt < XM_MT; ++mt)
#pragma unroll
      for (int n = 0; n < XM_NS; ++n) s[mt][n][0] = s[mt][n][1] = s[mt][n][2] = s[mt][n][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < XM_DP; kk += 16) {
      // a: per m-tile, rows 0-7 and 8-15 of its 16 (lanes 0-15 name them),
      // columns kk and kk + 8 (lanes 16-31). Each k fragment then serves
      // every m-tile: the reuse that makes XM_MT 2 cheaper per product.
      unsigned a[XM_MT][4];
#pragma unroll
      for (int mt = 0; mt < XM_MT; ++mt) {
#if XM_FAST
        xm_ldsm4(a[mt], Qs + (w0 + 16 * mt + (lane & 15)) * XM_SS + kk + 8 * (lane >> 4));
#else
        const xa_t* qr = Qs + (w0 + 16 * mt + gq) * XM_SS + kk + 2 * tq;
        a[mt][0] = xm_ld2(qr), a[mt][1] = xm_ld2(qr + 8 * XM_SS), a[mt][2] = xm_ld2(qr + 8), a[mt][3] = xm_ld2(qr + 8 * XM_SS + 8);
#endif
      }
#if XM_FAST
      // k, two score tiles at a time: rows 8n..8n+7 (lanes 0-15) and
      // 8n+8.. (16-31), columns kk (lanes 0-7, 16-23) and kk + 8 (8-15,
      // 24-31): b0, b1 of tile n, then of n + 1.
#pragma unroll
      for (int n = 0; n < XM_NS; n += 2) {
        unsigned kb4[4];
        xm_ldsm4(kb4, Ks + (8 * n + (lane & 7) + 8 * (lane >> 4)) * XM_SS + kk + 8 * ((lane >> 3) & 1));
#pragma unroll
        for (int mt = 0; mt < XM_MT; ++mt) {
          xm_mma(s[mt][n], a[mt], kb4);
          xm_mma(s[mt][n + 1], a[mt], kb4 + 2);
        }
      }
#else
#pragma unroll
      for (int n = 0; n < XM_NS; ++n) {
        const xa_t* kr = Ks + (8 * n + gq) * XM_SS + kk + 2 * tq;  // B(k, col) = K[col][k]
        const unsigned bb[2] = {xm_ld2(kr), xm_ld2(kr + 8)};
#pragma unroll
        for (int mt = 0; mt < XM_MT; ++mt) xm_mma(s[mt][n], a[mt], bb);
      }
#endif
    }
    const bool edge = n0 + XM_BN > KV || (causal && n0 + XM_BN - 1 > m0 + shift);
#pragma unroll
    for (int mt = 0; mt < XM_MT; ++mt) {
#pragma unroll
      for (int n = 0; n < XM_NS; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          s[mt][n][e] *= qmul;
          const int col = n0 + 8 * n + 2 * tq + (e & 1), row = m0 + w0 + 16 * mt + gq + 8 * (e >> 1);
          if (edge && (col >= KV || (causal && col > row + shift))) s[mt][n][e] = NEG_INF;
        }
#pragma unroll
      for (int hr = 0; hr < 2; ++hr) {  // row gq + 8*hr of the m-tile: elements 2hr, 2hr + 1
        float mx = NEG_INF;
#pragma unroll
        for (int n = 0; n < XM_NS; ++n) mx = fmaxf(mx, fmaxf(s[mt][n][2 * hr], s[mt][n][2 * hr + 1]));
        mx = fmaxf(mx, XB_SHFL_XOR(mx, 1));
        mx = fmaxf(mx, XB_SHFL_XOR(mx, 2));
        const float mnew = fmaxf(mrow[mt][hr], mx);
        const float base = mnew == NEG_INF ? 0.f : mnew;  // no visible key yet: p = 0, no inf - inf
        const float alpha = exp2f(mrow[mt][hr] - base);
        float sum = 0.f;
#pragma unroll
        for (int n = 0; n < XM_NS; ++n)
#pragma unroll
          for (int e = 2 * hr; e < 2 * hr + 2; ++e) {
            s[mt][n][e] = exp2f(s[mt][n][e] - base);
            sum += s[mt][n][e];
          }
        sum += XB_SHFL_XOR(sum, 1);
        sum += XB_SHFL_XOR(sum, 2);
        lrow[mt][hr] = lrow[mt][hr] * alpha + sum;
        mrow[mt][hr] = mnew;
#pragma unroll
        for (int n = 0; n < XM_NO; ++n) o[mt][n][2 * hr] *= alpha, o[mt][n][2 * hr + 1] *= alpha;
      }
    }
    xm_wait();
    __syncthreads();  // v of this tile is in; k of this tile is read
    if (n0 + XM_BN < kvEnd) xm_tile<XM_BN>(Ks, kb, n0 + XM_BN, KV);
    xm_commit();
#pragma unroll
    for (int j = 0; j < XM_BN / 16; ++j) {  // keys 16j..16j+15 of the tile: score tiles 2j, 2j+1
      unsigned a[XM_MT][4];
#pragma unroll
      for (int mt = 0; mt < XM_MT; ++mt) {
        a[mt][0] = xm_pack(s[mt][2 * j][0], s[mt][2 * j][1]), a[mt][1] = xm_pack(s[mt][2 * j][2], s[mt][2 * j][3]);
        a[mt][2] = xm_pack(s[mt][2 * j + 1][0], s[mt][2 * j + 1][1]), a[mt][3] = xm_pack(s[mt][2 * j + 1][2], s[mt][2 * j + 1][3]);
      }
#if XM_FAST
      // v transposed, two output tiles at a time: keys 16j.. (lanes 0-7,
      // 16-23) and 16j+8.. (8-15, 24-31), columns 8n (lanes 0-15) and
      // 8n + 8 (16-31): b0, b1 of tile n, then of n + 1.
#pragma unroll
      for (int n = 0; n < XM_NO; n += 2) {
        unsigned vb4[4];
        xm_ldsm4t(vb4, Vs + (16 * j + (lane & 7) + 8 * ((lane >> 3) & 1)) * XM_SS + 8 * n + 8 * (lane >> 4));
#pragma unroll
        for (int mt = 0; mt < XM_MT; ++mt) {
          xm_mma(o[mt][n], a[mt], vb4);
          xm_mma(o[mt][n + 1], a[mt], vb4 + 2);
        }
      }
#else
      const xa_t* vr = Vs + (16 * j + 2 * tq) * XM_SS + gq;  // B(k, col) = V[k][col]
#pragma unroll
      for (int n = 0; n < XM_NO; ++n) {
        const xa_t* p = vr + 8 * n;
        const unsigned bb[2] = {(unsigned)p[0] | ((unsigned)p[XM_SS] << 16),
                                (unsigned)p[8 * XM_SS] | ((unsigned)p[9 * XM_SS] << 16)};
#pragma unroll
        for (int mt = 0; mt < XM_MT; ++mt) xm_mma(o[mt][n], a[mt], bb);
      }
#endif
    }
  }

  xm_wait();  // nothing in flight at exit (a block with no visible key issued q)
  xa_t* ob = out + (long)bh * S * XA_D;
#pragma unroll
  for (int mt = 0; mt < XM_MT; ++mt)
#pragma unroll
    for (int hr = 0; hr < 2; ++hr) {
      const int row = m0 + w0 + 16 * mt + gq + 8 * hr;
      if (row >= S) continue;
      const float inv = lrow[mt][hr] > 0.f ? 1.f / lrow[mt][hr] : 0.f;  // no visible key: zeros
      if (lse != 0 && tq == 0) lse[(long)bh * S + row] = xa_lse(mrow[mt][hr], lrow[mt][hr]);
#pragma unroll
      for (int n = 0; n < XM_NO; ++n)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int col = 8 * n + 2 * tq + e;
          if (col < XA_D) ob[(long)row * XA_D + col] = xa_st(o[mt][n][2 * hr + e] * inv);
        }
    }
}
XB_EXPORT(xa_attention_mma)
#endif
