// The mamba backbone's row-wise kernels (spec, --backbone mamba): the causal
// depthwise convolutions and the gated post norm. Rows are tokens n = b*L + t
// as in dense.cu; one block per row, a launch covering rows n0 ..
// n0+gridDim.x-1 (all rows, or one chunk of one sequence).
//
// Convolution, width 4 with bias, per channel c:
//   y[t, c] = b[c] + sum_k w[c, k] * x[t-3+k, c],   x = 0 before t = 0.
// Products and the sum are float32 whatever the act type. A chunk starting
// at position t0 > 0 does not own the 3 rows before it (the previous chunk's
// lane may already have overwritten them with a later layer), so it reads
// them from prev, [3][C] act, which that chunk saved for it; and it saves its
// own last 3 rows (positions t1-3 .. t1-1) into save. A flat launch passes
// t0 = 0 and save = 0: every tap then lies in rows it can read.

#define XB_CW 4

// The 4 taps of column c for the row at position t: v[k] = x[t-3+k, c], from
// xrow (the row itself, row stride ld) or prev, 0 before the sequence.
__device__ __forceinline__ void xb_taps(float v[XB_CW], const act_t* __restrict__ xrow, long ld, int t, int t0,
                                        const act_t* __restrict__ prev, int C, int c) {
#pragma unroll
  for (int k = 0; k < XB_CW; ++k) {
    const int tt = t - (XB_CW - 1) + k;
    v[k] = tt >= t0  ? ldf(xrow[(long)(tt - t) * ld + c])
           : tt >= 0 ? ldf(prev[(long)(tt - t0 + XB_CW - 1) * C + c])
                     : 0.f;
  }
}

// b[c] + sum_k w[c, k] v[k], w stored [C][4].
__device__ __forceinline__ float xb_conv_dot(const float v[XB_CW], const float* __restrict__ w,
                                             const float* __restrict__ b, int c) {
  float y = b[c];
#pragma unroll
  for (int k = 0; k < XB_CW; ++k) y += w[c * XB_CW + k] * v[k];
  return y;
}

// The conv block's residual: h[n, :] += conv(x)[n, :], x = RMSNorm_conv(h)
// [rows, C] in act, h the float32 residual stream.
XB_KERNEL void xb_conv_res(const act_t* __restrict__ x, const float* __restrict__ w,
                           const float* __restrict__ b, float* __restrict__ h, int C, int L, int n0,
                           int t0, int t1, const act_t* __restrict__ prev, act_t* __restrict__ save) {
  const long n = n0 + blockIdx.x;
  const int t = (int)(n % L);
  const act_t* xrow = x + n * C;
  for (int c = threadIdx.x; c < C; c += blockDim.x) {
    float v[XB_CW];
    xb_taps(v, xrow, C, t, t0, prev, C, c);
    h[n * C + c] += xb_conv_dot(v, w, b, c);
    if (save && t >= t1 - (XB_CW - 1)) save[(long)(t - t1 + XB_CW - 1) * C + c] = xrow[c];
  }
}
XB_EXPORT(xb_conv_res)

// xb_prep for mamba. P = X @ [wq | wg | wv | lr_w^T] (row stride ldp): the
// shared projection XQK in columns [0, C) goes through ConvQ and ConvK (the
// same taps, two weight sets), each result rounded to the act type as a
// stored activation would be, then RoPE at position t mod KB; v and the gate
// as in xb_prep. Columns [C, 2C) are the output gate's logits, read later by
// xb_layernorm_gate. prev/save hold QK columns only ([3][C]).
XB_KERNEL void xb_prep_mamba(const act_t* __restrict__ P, int ldp, const float* __restrict__ lr_b,
                             const float* __restrict__ rope, const float* __restrict__ qw,
                             const float* __restrict__ qb, const float* __restrict__ kw,
                             const float* __restrict__ kb, act_t* __restrict__ xq, act_t* __restrict__ xk,
                             act_t* __restrict__ xv, float* __restrict__ gate, int L, int nh, int n0, int t0,
                             int t1, const act_t* __restrict__ prev, act_t* __restrict__ save) {
  const int n = n0 + blockIdx.x, b = n / L, t = n % L, p = t % XB_KB;
  const int half = XB_F / 2, C = nh * XB_F;
  const act_t* row = P + (long)n * ldp;
  const bool saving = save && t >= t1 - (XB_CW - 1);
  for (int e = threadIdx.x; e < nh * half; e += blockDim.x) {
    const int h = e / half, i = e % half;
    const float cs = rope[(p * half + i) * 2], sn = rope[(p * half + i) * 2 + 1];
    const long o = (((long)b * nh + h) * L + t) * XB_F;
    const int c0 = h * XB_F + i, c1 = c0 + half;
    float v0[XB_CW], v1[XB_CW];
    xb_taps(v0, row, ldp, t, t0, prev, C, c0);
    xb_taps(v1, row, ldp, t, t0, prev, C, c1);
    const float q0 = ldf(stf(xb_conv_dot(v0, qw, qb, c0))), q1 = ldf(stf(xb_conv_dot(v1, qw, qb, c1)));
    const float k0 = ldf(stf(xb_conv_dot(v0, kw, kb, c0))), k1 = ldf(stf(xb_conv_dot(v1, kw, kb, c1)));
    xq[o + i] = stf(q0 * cs - q1 * sn);
    xq[o + i + half] = stf(q1 * cs + q0 * sn);
    xk[o + i] = stf(k0 * cs - k1 * sn);
    xk[o + i + half] = stf(k1 * cs + k0 * sn);
    xv[o + i] = row[2 * C + c0];
    xv[o + i + half] = row[2 * C + c1];
    if (saving) {
      act_t* s = save + (long)(t - t1 + XB_CW - 1) * C;
      s[c0] = row[c0];
      s[c1] = row[c1];
    }
  }
  for (int h = threadIdx.x; h < nh; h += blockDim.x) {
    const float z = ldf(row[3 * C + h]) + lr_b[h];
    gate[((long)b * nh + h) * L + t] = 1.f / (1.f + expf(-z));
  }
}
XB_EXPORT(xb_prep_mamba)

// y = gelu(g) * LayerNorm(x) (post_norm, then mamba's output gate), with g
// the gate logits X @ wg at row stride ldg. xb_layernorm's two passes; the
// gate multiplies in float32 and y is rounded once.
XB_KERNEL void xb_layernorm_gate(const act_t* __restrict__ x, const float* __restrict__ w,
                                 const float* __restrict__ b, const act_t* __restrict__ g, int ldg,
                                 act_t* __restrict__ y, int C) {
  __shared__ float red[32];
  const long row = (long)blockIdx.x * C;
  const act_t* grow = g + (long)blockIdx.x * ldg;
  float mu, r;
  xb_ln_stats(x + row, C, red, mu, r);
  for (int c = threadIdx.x; c < C; c += blockDim.x)
    y[row + c] = stf(xb_gelu(ldf(grow[c]), nullptr) * ((ldf(x[row + c]) - mu) * r * w[c] + b[c]));
}
XB_EXPORT(xb_layernorm_gate)
