// The mamba backbone's backward (docs/ttt-backward.md, "The mamba
// backbone"): the causal depthwise convolutions (the conv block's, and ConvQ
// and ConvK on the shared projection, after RoPE's inverse), and the output
// gate. Rows are tokens n = b*L + t as in mamba.cu. Gradients are float32;
// those that feed a GEMM are also written in the act type.
//
// Column sums over every row (the convolutions' dw and db, dlr_b) are
// deterministic: each block writes its partial sums into its own slot of a
// float32 scratch, and xb_colsum adds the slots in a fixed order. Float
// atomics would make the last bits of every gradient differ between runs
// of the same step.

#ifndef XB_CW  // mamba.cu's, when both are in the program
#define XB_CW 4
#endif

// The sliding window of one column at row n (position t of its sequence):
// xs[k] = x[t-3+k] (the conv's input taps) and ys[j] = dy[t+j] (the outputs
// that read row t), zero outside the sequence.
__device__ __forceinline__ void xb_conv_window(float xs[XB_CW], float ya[XB_CW], float yb[XB_CW],
                                               const act_t* __restrict__ x, int ldx,
                                               const float* __restrict__ dyA,
                                               const float* __restrict__ dyB, long n, int t, int L,
                                               int C, int c) {
#pragma unroll
  for (int k = 0; k < XB_CW; ++k) {
    const int tt = t - (XB_CW - 1) + k;
    xs[k] = tt >= 0 ? ldf(x[(n - (XB_CW - 1) + k) * ldx + c]) : 0.f;
    const bool in = t + k < L;
    ya[k] = in ? dyA[(n + k) * C + c] : 0.f;
    yb[k] = in && dyB ? dyB[(n + k) * C + c] : 0.f;
  }
}

// Backward of y_A = convA(x) and, when dyB is set, y_B = convB(x) on the
// same input (ConvQ and ConvK share XQK):
//   dx[t, c] = sum_j sum_k dy_j[t+3-k, c] w_j[c, k]   (outputs past the end dropped)
//   dw_j[c, k] = sum_t dy_j[t, c] x[t-3+k, c],  db_j[c] = sum_t dy_j[t, c]
// dx goes to dxf (float32, row stride C) and/or dxa (act, row stride lda).
// Block (i, j) owns rows i*R .. i*R+R-1 and columns j*blockDim + thread; a
// thread walks its rows with the window above (one new x and dy row a step)
// and writes its column's sums over those rows into slot i of part:
// [A: dw [C][4] | db [C]][B: the same], 5C floats a convolution.
XB_KERNEL void xb_conv_bwd(const act_t* __restrict__ x, int ldx, const float* __restrict__ dyA,
                           const float* __restrict__ wA, const float* __restrict__ dyB,
                           const float* __restrict__ wB, float* __restrict__ dxf,
                           act_t* __restrict__ dxa, int lda, float* __restrict__ part, int C, int L,
                           int N, int R) {
  const int c = blockIdx.y * blockDim.x + threadIdx.x;
  if (c >= C) return;
  const bool two = dyB != nullptr;
  long n = (long)blockIdx.x * R;
  const long n1 = n + R < N ? n + R : (long)N;
  float wa[XB_CW], wb[XB_CW], sa[XB_CW + 1] = {}, sb[XB_CW + 1] = {};
#pragma unroll
  for (int k = 0; k < XB_CW; ++k) {
    wa[k] = wA[c * XB_CW + k];
    wb[k] = two ? wB[c * XB_CW + k] : 0.f;
  }
  int t = (int)(n % L);
  float xs[XB_CW], ya[XB_CW], yb[XB_CW];
  xb_conv_window(xs, ya, yb, x, ldx, dyA, two ? dyB : nullptr, n, t, L, C, c);
  for (;;) {
    float dx = 0.f;
#pragma unroll
    for (int k = 0; k < XB_CW; ++k) dx += wa[k] * ya[XB_CW - 1 - k] + wb[k] * yb[XB_CW - 1 - k];
    if (dxf) dxf[n * C + c] = dx;
    if (dxa) dxa[n * lda + c] = stf(dx);
#pragma unroll
    for (int k = 0; k < XB_CW; ++k) {
      sa[k] += ya[0] * xs[k];
      sb[k] += yb[0] * xs[k];
    }
    sa[XB_CW] += ya[0];
    sb[XB_CW] += yb[0];
    if (++n >= n1) break;
    if (++t == L) {  // a new sequence: nothing of the old window carries over
      t = 0;
      xb_conv_window(xs, ya, yb, x, ldx, dyA, two ? dyB : nullptr, n, t, L, C, c);
      continue;
    }
#pragma unroll
    for (int k = 0; k < XB_CW - 1; ++k) {
      xs[k] = xs[k + 1];
      ya[k] = ya[k + 1];
      yb[k] = yb[k + 1];
    }
    xs[XB_CW - 1] = ldf(x[n * ldx + c]);
    const bool in = t + XB_CW - 1 < L;
    ya[XB_CW - 1] = in ? dyA[(n + XB_CW - 1) * C + c] : 0.f;
    yb[XB_CW - 1] = in && two ? dyB[(n + XB_CW - 1) * C + c] : 0.f;
  }
  float* p = part + (long)blockIdx.x * (two ? 10 : 5) * C;
#pragma unroll
  for (int k = 0; k < XB_CW; ++k) p[c * XB_CW + k] = sa[k];
  p[4 * C + c] = sa[XB_CW];
  if (two) {
#pragma unroll
    for (int k = 0; k < XB_CW; ++k) p[5 * C + c * XB_CW + k] = sb[k];
    p[9 * C + c] = sb[XB_CW];
  }
}
XB_EXPORT(xb_conv_bwd)

// The second pass of the column sums: column i of the slots' concatenated
// columns is sum_s part[s*stride + i] (slots in order), added into the
// gradient that owns it: columns [0, n0) are d0's, the next n1 d1's, and so
// on (unused segments have n = 0). One launch covers a convolution pair's
// dw and db, or dlr_b.
XB_KERNEL void xb_colsum(const float* __restrict__ part, long stride, int slots,
                         float* __restrict__ d0, int n0, float* __restrict__ d1, int n1,
                         float* __restrict__ d2, int n2, float* __restrict__ d3, int n3) {
  const int n = n0 + n1 + n2 + n3;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    float s = 0.f;
    for (int k = 0; k < slots; ++k) s += part[(long)k * stride + i];
    int j = i;
    float* d = d0;
    if (j >= n0) {
      j -= n0, d = d1;
      if (j >= n1) {
        j -= n1, d = d2;
        if (j >= n2) j -= n2, d = d3;
      }
    }
    d[j] += s;
  }
}
XB_EXPORT(xb_colsum)

// Backward of xb_prep_mamba after the inner backward: from the rotated
// head-major dq, dk, dv [B, nh, L, f] and dgate [B, nh, L] (float32),
//   dxq, dxk [N, C] float32: RoPE's inverse rotation at the same angle, the
//     gradients at the convolutions' outputs (xb_conv_bwd's dyA, dyB);
//   dP columns [2C, 3C) = dv and [3C, ldp) = dz = dgate g (1 - g) (zero
//     pad), act; columns [0, 2C) are left to xb_conv_bwd (dXQK) and
//     xb_gate_bwd (the gate logits);
//   part[blockIdx.x*nh + h] = this block's sum of dz over its rows (dlr_b's
//     first pass; xb_colsum adds the gridDim.x slots).
// Block i walks rows i, i + gridDim.x, ...; ldp - 3C <= blockDim (the host
// checks), so thread h < nh owns gate column 3C + h on every row.
XB_KERNEL void xb_prep_mamba_bwd(const float* __restrict__ dq, const float* __restrict__ dk,
                                 const float* __restrict__ dv, const float* __restrict__ dgate,
                                 const float* __restrict__ gate, const float* __restrict__ rope,
                                 float* __restrict__ dxq, float* __restrict__ dxk,
                                 act_t* __restrict__ dP, int ldp, float* __restrict__ part, int L,
                                 int nh, int N) {
  const int half = XB_F / 2, C = nh * XB_F;
  float pz = 0.f;
  for (int n = blockIdx.x; n < N; n += gridDim.x) {
    const int b = n / L, t = n % L, p = t % XB_KB;
    act_t* row = dP + (long)n * ldp;
    for (int e = threadIdx.x; e < nh * half; e += blockDim.x) {
      const int h = e / half, i = e % half;
      const float cs = rope[(p * half + i) * 2], sn = rope[(p * half + i) * 2 + 1];
      const long o = (((long)b * nh + h) * L + t) * XB_F;
      const long c0 = (long)n * C + h * XB_F + i, c1 = c0 + half;
      const float q0 = dq[o + i], q1 = dq[o + i + half], k0 = dk[o + i], k1 = dk[o + i + half];
      dxq[c0] = q0 * cs + q1 * sn;
      dxq[c1] = q1 * cs - q0 * sn;
      dxk[c0] = k0 * cs + k1 * sn;
      dxk[c1] = k1 * cs - k0 * sn;
      row[2 * C + h * XB_F + i] = stf(dv[o + i]);
      row[2 * C + h * XB_F + i + half] = stf(dv[o + i + half]);
    }
    pz += xb_gate_logit_bwd(row, gate, dgate, C, ldp, nh, L, b, t);
  }
  if ((int)threadIdx.x < nh) part[(long)blockIdx.x * nh + threadIdx.x] = pz;
}
XB_EXPORT(xb_prep_mamba_bwd)

// Backward of xb_layernorm_gate's gate, y = gelu(g) * Pn with Pn =
// LayerNorm(o) (post_norm): given dy (float32, the gradient at the gated
// output), dy becomes dPn = dy gelu(g) in place, the input of
// xb_layernorm_bwd, and dg (act, row stride ldg) = dy Pn gelu'(g), the
// gradient of the gate logits (the fused projection's second block). Pn is
// recomputed from o as the forward did (two passes over the row) rather
// than kept. One block per row.
XB_KERNEL void xb_gate_bwd(const act_t* __restrict__ o, const float* __restrict__ w,
                           const float* __restrict__ b, const act_t* __restrict__ g, int ldg,
                           float* __restrict__ dy, act_t* __restrict__ dg, int C) {
  __shared__ float red[32];
  const long row = (long)blockIdx.x * C, grow = (long)blockIdx.x * ldg;
  float mu, r;
  xb_ln_stats(o + row, C, red, mu, r);
  for (int c = threadIdx.x; c < C; c += blockDim.x) {
    float gd;
    const float ge = xb_gelu(ldf(g[grow + c]), &gd);
    const float pn = (ldf(o[row + c]) - mu) * r * w[c] + b[c], d = dy[row + c];
    dy[row + c] = d * ge;
    dg[grow + c] = stf(d * pn * gd);
  }
}
XB_EXPORT(xb_gate_bwd)
