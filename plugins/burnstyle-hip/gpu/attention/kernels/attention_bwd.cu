// Attention backward, FlashAttention-2's algorithm (Dao 2023, section 3.1
// and algorithm 2), on CUDA cores with float32 math for every dtype (the
// 16-bit types are widened on load, as the forward's xa_attention_fwd does).
// The forward (xa_attention_fwd or xa_attention_mma with lse) saved each
// row's log2-sum-exp2 (xa_lse), so p is recomputed, never stored:
//
//   xa_attention_bwd_pre  D[row] = dout[row] . out[row]; zeroes dq32
//   xa_attention_bwd      per (kv tile, kv head, batch): dk, dv of its keys
//   xa_attention_bwd_dq   dq = dq32 rounded to the dtype
//
// The main kernel keeps its XG_BN keys' k and v in shared memory and dk, dv
// in registers, and walks the query tiles of every query head of its GQA
// group (causal: only those at or below the diagonal): for each it
// recomputes s = q k^T and p = exp2(s * qmul - lse), then dp = dout v^T,
// ds = p (dp - D), and accumulates dv += p^T dout, dk += ds^T q; dq +=
// scale ds k goes to a float32 buffer by atomicAdd, since every kv tile
// adds to the same rows. Owning all g heads of a kv head in one block sums
// dk and dv over the group without atomics and writes them once, rounded.
//
// Compile-time (beside attention.cu's): XG_BM query rows and XG_BN keys per
// tile (multiples of 16 dividing 128, XA_DP a multiple of 128 / XG_BN).
#ifndef XW_ST
#define XG_NT 128
#define XG_QS (XA_DP + 1)           // odd row stride: 32 lanes reading 32 rows hit 32 banks
#define XG_PS (XG_BN + 1)           // p and ds row stride
#define XG_TPR (XG_NT / XG_BN)      // threads per key row for dk, dv
#define XG_CD (XA_DP / XG_TPR)      // dk (and dv) columns per thread
#define XG_SMEM_FLOATS (2 * XG_BN * XG_QS + 2 * XG_BM * XG_QS + 2 * XG_BM * XG_PS + 2 * XG_BM)

// One warp per row of [rows, XA_D]: D = dout . out in float32, and the row
// of dq32 zeroed for the main kernel's atomics (in the timed call, so
// repeated calls do the same work).
XB_KERNEL void __launch_bounds__(XG_NT)
    xa_attention_bwd_pre(const xa_t* __restrict__ out, const xa_t* __restrict__ dout, float* __restrict__ dd,
                         float* __restrict__ dq32, int rows) {
  const long row = ((long)blockIdx.x * XG_NT + threadIdx.x) >> 5;
  const int lane = threadIdx.x & 31;
  if (row >= rows) return;  // whole warps: rows are warp-uniform
  float acc = 0.f;
  for (int t = lane; t < XA_D; t += 32) {
    acc = fmaf(xa_ld(dout[row * XA_D + t]), xa_ld(out[row * XA_D + t]), acc);
    dq32[row * XA_D + t] = 0.f;
  }
  acc += XB_SHFL_XOR(acc, 16);
  acc += XB_SHFL_XOR(acc, 8);
  acc += XB_SHFL_XOR(acc, 4);
  acc += XB_SHFL_XOR(acc, 2);
  acc += XB_SHFL_XOR(acc, 1);
  if (lane == 0) dd[row] = acc;
}

// q, dout [B, H, S, XA_D]; k, v, dk, dv [B, KH, KV, XA_D]; lse, dd [B, H, S];
// dq32 [B, H, S, XA_D] float32. Grid: x = kv tiles, y = kv heads, z =
// batch. qmul = log2(e)/sqrt(XA_D), scale = 1/sqrt(XA_D).
XB_KERNEL void __launch_bounds__(XG_NT, 1)
    xa_attention_bwd(const xa_t* __restrict__ q, const xa_t* __restrict__ k, const xa_t* __restrict__ v,
                     const xa_t* __restrict__ dout, const float* __restrict__ lse, const float* __restrict__ dd,
                     float* __restrict__ dq32, xa_t* __restrict__ dk, xa_t* __restrict__ dv, int H, int KH, int S,
                     int KV, int causal, float qmul, float scale) {
  XB_DYN_SMEM(sm);
#ifdef XB_EMU
  emu_check_smem(XG_SMEM_FLOATS * 4);
#endif
  float* Ks = sm;
  float* Vs = Ks + XG_BN * XG_QS;
  float* Qs = Vs + XG_BN * XG_QS;
  float* Gs = Qs + XG_BM * XG_QS;  // dout
  float* Ps = Gs + XG_BM * XG_QS;
  float* Ss = Ps + XG_BM * XG_PS;  // ds
  float* Ls = Ss + XG_BM * XG_PS;
  float* Ds = Ls + XG_BM;
  const int tid = threadIdx.x, n0 = blockIdx.x * XG_BN, kh = blockIdx.y, b = blockIdx.z, g = H / KH;
  const long kvOff = (long)(b * KH + kh) * KV * XA_D;
  const int shift = KV - S;  // bottom-right causal: key j visible to row i when j <= i + shift
  // Rows before n0 - shift see none of this tile's keys.
  const int mStart = causal ? xa_max(0, n0 - shift) / XG_BM * XG_BM : 0;
  xa_tile<XG_BN, XG_QS>(Ks, k + kvOff, n0, KV, 1.f);
  xa_tile<XG_BN, XG_QS>(Vs, v + kvOff, n0, KV, 1.f);
  const int jr = tid / XG_TPR, cc = tid % XG_TPR;  // this thread's key row and first column of dk, dv
  float dka[XG_CD], dva[XG_CD];
#pragma unroll
  for (int d = 0; d < XG_CD; ++d) dka[d] = dva[d] = 0.f;

  for (int h = kh * g; h < (kh + 1) * g; ++h) {
    const long bh = (long)b * H + h;
    for (int m0 = mStart; m0 < S; m0 += XG_BM) {
      __syncthreads();  // the last tile's readers are done
      xa_tile<XG_BM, XG_QS>(Qs, q + bh * S * XA_D, m0, S, 1.f);
      xa_tile<XG_BM, XG_QS>(Gs, dout + bh * S * XA_D, m0, S, 1.f);
      for (int r = tid; r < XG_BM; r += XG_NT) {
        const bool in = m0 + r < S;
        Ls[r] = in ? lse[bh * S + m0 + r] : 0.f;
        Ds[r] = in ? dd[bh * S + m0 + r] : 0.f;
      }
      __syncthreads();
      // p and ds, element (i, j) = e / XG_BN, e % XG_BN: a warp reads one q
      // and dout row (broadcast) against 32 k and v rows.
      for (int e = tid; e < XG_BM * XG_BN; e += XG_NT) {
        const int i = e / XG_BN, j = e % XG_BN, row = m0 + i, col = n0 + j;
        float s = 0.f, dp = 0.f;
#pragma unroll 8
        for (int t = 0; t < XA_DP; ++t) {
          s = fmaf(Qs[i * XG_QS + t], Ks[j * XG_QS + t], s);
          dp = fmaf(Gs[i * XG_QS + t], Vs[j * XG_QS + t], dp);
        }
        const bool vis = row < S && col < KV && (!causal || col <= row + shift);
        const float p = vis ? exp2f(s * qmul - Ls[i]) : 0.f;
        Ps[i * XG_PS + j] = p;
        Ss[i * XG_PS + j] = p * (dp - Ds[i]);
      }
      __syncthreads();
      // dv += p^T dout, dk += ds^T q for this thread's key row.
#pragma unroll 2
      for (int i = 0; i < XG_BM; ++i) {
        const float p = Ps[i * XG_PS + jr], ds = Ss[i * XG_PS + jr];
#pragma unroll
        for (int d = 0; d < XG_CD; ++d) {
          const int c = cc + XG_TPR * d;
          dva[d] = fmaf(p, Gs[i * XG_QS + c], dva[d]);
          dka[d] = fmaf(ds, Qs[i * XG_QS + c], dka[d]);
        }
      }
      // dq += scale ds k, element (i, c) = e / XA_DP, e % XA_DP.
      for (int e = tid; e < XG_BM * XA_DP; e += XG_NT) {
        const int i = e / XA_DP, c = e % XA_DP, row = m0 + i;
        float acc = 0.f;
#pragma unroll 8
        for (int j = 0; j < XG_BN; ++j) acc = fmaf(Ss[i * XG_PS + j], Ks[j * XG_QS + c], acc);
        if (row < S && c < XA_D) atomicAdd(dq32 + (bh * S + row) * XA_D + c, acc * scale);
      }
    }
  }
  if (n0 + jr < KV) {
#pragma unroll
    for (int d = 0; d < XG_CD; ++d) {
      const int c = cc + XG_TPR * d;
      if (XA_DP == XA_D || c < XA_D) {
        dk[kvOff + (long)(n0 + jr) * XA_D + c] = xa_st(dka[d] * scale);
        dv[kvOff + (long)(n0 + jr) * XA_D + c] = xa_st(dva[d]);
      }
    }
  }
}

// dq in the dtype from the float32 accumulator, a grid-stride loop.
XB_KERNEL void __launch_bounds__(XG_NT)
    xa_attention_bwd_dq(const float* __restrict__ dq32, xa_t* __restrict__ dq, long n) {
  for (long e = (long)blockIdx.x * XG_NT + threadIdx.x; e < n; e += (long)gridDim.x * XG_NT) dq[e] = xa_st(dq32[e]);
}
XB_EXPORT(xa_attention_bwd_pre)
XB_EXPORT(xa_attention_bwd)
XB_EXPORT(xa_attention_bwd_dq)
#endif
