// The two-layer MLP inner model (spec, --ttt-type mlp), one launch for all
// mini-batches, W1 [F][H] and W2 [H][F+1] resident in shared memory (H = 4F).
// Seven barriers per mini-batch:
//   P1  Z1 = K W1 + b1 -> X2 = gelu(Z1), D1 = gelu'(Z1); QW1 = Q W1 + b1; coef1
//   P2  Z2 = X2 W2 + b2
//   P3  G2 = LN-L2 gradient of Z2; EG2t = (eta_last * G2)^T
//   P4  G1 = (G2 W2^T) * D1                         (in place of D1)
//   P5  X2bar = gelu(QW1 - coef1 @ G1) (in place of QW1); W1, b1 update
//   P6  XW2 = X2bar W2 + b2 (old W2, in place of Z2); coef2 from X2bar X2^T
//   P7  Z2bar = XW2 - coef2 @ G2 (in place); W2, b2 update; next rows in
//   P8  out = Q + LN(Z2bar), overlapping the next P1
// Only Q is double buffered: the rest of a stage is dead after P6, which is
// what lets this fit in 227 KB at f = 64.
// The inputs and output of one sequence may start mid-sequence (the chunked
// forward, wavefront.go): nmb mini-batches are walked from W1/b1/W2/b2,
// which are the weights or the state the previous chunk left in the save
// slots (per head, [F][H], [H], [H][F], [F]); with W1save set the final state
// is written there for the next chunk.
#define XB_H (4 * XB_F)
#define SH (XB_H + 4)
#define SW2 (XB_F + 1)              // odd stride: P4 reads W2 down a column
#define RGH (XB_NT / XB_H)          // row groups of a [KB][H] output
#define RH (XB_KB / RGH)
#define MLP_STATE (2 * XB_F * XB_H + XB_H + XB_F)
#define MLP_SMEM_FLOATS                                                             \
  (XB_F * XB_H + R4(XB_H * SW2) + R4(XB_H) + R4(XB_F) + 2 * XB_KB * SF +          \
   2 * XB_KB * SF + XB_F * SKT + R4(XB_KB) + 3 * XB_KB * SH + 2 * XB_KB * SF +    \
   XB_F * SKT + 2 * R4(XB_KB * XB_KB) + 2 * R4(XB_KB))

// acc[r] += X[i_r] . col c of M (rows of X at stride sx, M row stride sm),
// over n; rows i_r = rg + step * r. The [KB][*] = [KB][n] @ [n][*] pattern.
template <int R>
__device__ __forceinline__ void xb_rows_x_mat(float* acc, const float* X, int sx, const float* M,
                                              int sm, int n, int c, int rg, int step) {
#pragma unroll 2
  for (int k = 0; k < n; k += 4) {
    const float w0 = M[k * sm + c], w1 = M[(k + 1) * sm + c];
    const float w2 = M[(k + 2) * sm + c], w3 = M[(k + 3) * sm + c];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const float4 x = *(const float4*)(X + (rg + step * r) * sx + k);
      acc[r] = fmaf(x.x, w0, acc[r]); acc[r] = fmaf(x.y, w1, acc[r]);
      acc[r] = fmaf(x.z, w2, acc[r]); acc[r] = fmaf(x.w, w3, acc[r]);
    }
  }
}

XB_KERNEL void __launch_bounds__(XB_NT, 1)
    xb_inner_mlp(const act_t* __restrict__ xq, const act_t* __restrict__ xk,
                 const act_t* __restrict__ xv, const float* __restrict__ gate,
                 const float* W1g, const float* b1g, const float* W2g, const float* b2g,
                 const float* __restrict__ lnw, const float* __restrict__ lnb,
                 const float* __restrict__ tokd, act_t* __restrict__ out, long osb, long osh,
                 long ost, int nh, int L, unsigned long long* __restrict__ prof,
                 float* W1save, float* b1save, float* W2save, float* b2save, int nmb,
                 float* __restrict__ trace) {
  XB_DYN_SMEM(sm);
#ifdef XB_EMU
  emu_check_smem(MLP_SMEM_FLOATS * 4);
#endif
  const int tid = threadIdx.x, bh = blockIdx.x, b = bh / nh, hd = bh % nh;
  float* W1 = sm;
  float* W2 = W1 + XB_F * XB_H;
  float* b1 = W2 + R4(XB_H * SW2);
  float* b2 = b1 + R4(XB_H);
  float* Qb = b2 + R4(XB_F);
  float* K = Qb + 2 * XB_KB * SF;
  float* T = K + XB_KB * SF;
  float* Kt = T + XB_KB * SF;
  float* gs = Kt + XB_F * SKT;
  float* D1 = gs + R4(XB_KB);    // gelu'(Z1), then G1
  float* X2 = D1 + XB_KB * SH;
  float* QW1 = X2 + XB_KB * SH;  // Q W1 + b1, then X2bar
  float* Z2 = QW1 + XB_KB * SH;  // Z2, then XW2, then Z2bar
  float* G2 = Z2 + XB_KB * SF;
  float* EG2t = G2 + XB_KB * SF;
  float* Cc1 = EG2t + XB_F * SKT;
  float* Cc2 = Cc1 + R4(XB_KB * XB_KB);
  float* tokc = Cc2 + R4(XB_KB * XB_KB);
  float* etl = tokc + R4(XB_KB);

  for (int e = tid; e < XB_F * XB_H; e += XB_NT) W1[e] = W1g[(long)hd * XB_F * XB_H + e];
  for (int e = tid; e < XB_H * XB_F; e += XB_NT)
    W2[(e / XB_F) * SW2 + e % XB_F] = W2g[(long)hd * XB_H * XB_F + e];
  for (int e = tid; e < XB_H; e += XB_NT) b1[e] = b1g[hd * XB_H + e];
  for (int e = tid; e < XB_F; e += XB_NT) b2[e] = b2g[hd * XB_F + e];
  for (int i = tid; i < XB_KB; i += XB_NT)
    tokc[i] = (float)XB_BASE_LR * fmaxf(0.f, 1.f / (float)(i + 1) + tokd[i]) / (float)XB_F;
  const int lane = tid % LG, grp = tid / LG;
  float lw[EPL], lb[EPL];
#pragma unroll
  for (int e = 0; e < EPL; ++e) {
    lw[e] = lnw[hd * XB_F + lane + LG * e];
    lb[e] = lnb[hd * XB_F + lane + LG * e];
  }
  const long in0 = (long)bh * L * XB_F;
  const act_t *q0 = xq + in0, *k0 = xk + in0, *v0 = xv + in0;
  const float* g0 = gate + (long)bh * L;
  act_t* o0 = out + b * osb + hd * osh;
  // trace, when set (the training step), gets the state at the start of
  // every mini-batch: [B*nh][L/KB][W1 (F*H) | b1 (H) | W2 (H*F) | b2 (F)],
  // each value stored just before the update that overwrites it; a chunk
  // gets trace at its first mini-batch's slot (the head stride is L/KB).
  float* tr = trace ? trace + (long)bh * (L / XB_KB) * MLP_STATE : 0;
  XbFetch pf = {};
  xb_fetch(pf, q0, k0, v0, g0, 0);
  xb_put(pf, Qb, K, T, Kt, gs);
  __syncthreads();
  long long tick = prof ? clock64() : 0, ticks[8] = {};

  const int ch = tid % XB_H, rh = tid / XB_H;  // [KB][H] mapping
  const int cf = tid % XB_F, rf = tid / XB_F;  // [KB][F] mapping
  for (int n = 0; n < nmb; ++n) {
    float* Q = Qb + (n & 1) * XB_KB * SF;
    float* Qn = Qb + ((n + 1) & 1) * XB_KB * SF;
    if (n + 1 < nmb) xb_fetch(pf, q0, k0, v0, g0, n + 1);

    {  // P1
      float z[RH], q[RH];
#pragma unroll
      for (int r = 0; r < RH; ++r) z[r] = q[r] = b1[ch];
      xb_rows_x_mat<RH>(z, K, SF, W1, XB_H, XB_F, ch, rh, RGH);
      xb_rows_x_mat<RH>(q, Q, SF, W1, XB_H, XB_F, ch, rh, RGH);
#pragma unroll
      for (int r = 0; r < RH; ++r) {
        const int i = rh + RGH * r;
        float d;
        X2[i * SH + ch] = xb_gelu(z[r], &d);
        D1[i * SH + ch] = d;
        QW1[i * SH + ch] = q[r];
      }
      xb_coef(Q, K, XB_F, SF, tokc, gs, Cc1);
      if (tid < XB_KB) etl[tid] = tokc[XB_KB - 1] * gs[tid];
    }
    __syncthreads();
    XB_TICK(0)

    {  // P2
      float z[RF];
#pragma unroll
      for (int r = 0; r < RF; ++r) z[r] = b2[cf];
      xb_rows_x_mat<RF>(z, X2, SH, W2, SW2, XB_H, cf, rf, RGF);
#pragma unroll
      for (int r = 0; r < RF; ++r) Z2[(rf + RGF * r) * SF + cf] = z[r];
    }
    __syncthreads();
    XB_TICK(1)

    for (int i0 = 0; i0 < XB_KB; i0 += NGRP) {  // P3
      const int i = i0 + grp;
      const int ii = i < XB_KB ? i : XB_KB - 1;
      xb_ln_grad_row(Z2 + ii * SF, T + ii * SF, G2 + ii * SF, EG2t, etl[ii], ii, lw, lb, lane,
                     i < XB_KB);
    }
    __syncthreads();
    XB_TICK(2)

    {  // P4: lanes walk h, so W2 is read down a column (odd stride, no conflicts)
      float a[RH];
#pragma unroll
      for (int r = 0; r < RH; ++r) a[r] = 0.f;
#pragma unroll 2
      for (int k = 0; k < XB_F; k += 4) {
        const float w0 = W2[ch * SW2 + k], w1 = W2[ch * SW2 + k + 1];
        const float w2 = W2[ch * SW2 + k + 2], w3 = W2[ch * SW2 + k + 3];
#pragma unroll
        for (int r = 0; r < RH; ++r) {
          const float4 g = *(const float4*)(G2 + (rh + RGH * r) * SF + k);
          a[r] = fmaf(g.x, w0, a[r]); a[r] = fmaf(g.y, w1, a[r]);
          a[r] = fmaf(g.z, w2, a[r]); a[r] = fmaf(g.w, w3, a[r]);
        }
      }
#pragma unroll
      for (int r = 0; r < RH; ++r) D1[(rh + RGH * r) * SH + ch] *= a[r];
    }
    __syncthreads();
    XB_TICK(3)

    {  // P5
#pragma unroll
      for (int r = 0; r < RH; ++r) {
        const int i = rh + RGH * r;
        float acc = QW1[i * SH + ch];
        for (int j = 0; j <= i; ++j) acc = fmaf(-Cc1[i * XB_KB + j], D1[j * SH + ch], acc);
        QW1[i * SH + ch] = xb_gelu(acc, 0);
      }
      float eg[XB_KB];
      float bs = 0.f;
#pragma unroll
      for (int j = 0; j < XB_KB; ++j) {
        eg[j] = etl[j] * D1[j * SH + ch];
        bs += eg[j];
      }
      for (int a = rh; a < XB_F; a += RGH) {
        float d = 0.f;
#pragma unroll
        for (int j = 0; j < XB_KB; j += 4) {
          const float4 kt = *(const float4*)(Kt + a * SKT + j);
          d = fmaf(kt.x, eg[j], d); d = fmaf(kt.y, eg[j + 1], d);
          d = fmaf(kt.z, eg[j + 2], d); d = fmaf(kt.w, eg[j + 3], d);
        }
        if (tr) tr[a * XB_H + ch] = W1[a * XB_H + ch];
        W1[a * XB_H + ch] -= d;
      }
      if (rh == 0) {
        if (tr) tr[XB_F * XB_H + ch] = b1[ch];
        b1[ch] -= bs;
      }
    }
    __syncthreads();
    XB_TICK(4)

    {  // P6
      float z[RF];
#pragma unroll
      for (int r = 0; r < RF; ++r) z[r] = b2[cf];
      xb_rows_x_mat<RF>(z, QW1, SH, W2, SW2, XB_H, cf, rf, RGF);
#pragma unroll
      for (int r = 0; r < RF; ++r) Z2[(rf + RGF * r) * SF + cf] = z[r];
      xb_coef(QW1, X2, XB_H, SH, tokc, gs, Cc2);
    }
    __syncthreads();
    XB_TICK(5)

    {  // P7
#pragma unroll
      for (int r = 0; r < RF; ++r) {
        const int i = rf + RGF * r;
        float acc = Z2[i * SF + cf];
        for (int j = 0; j <= i; ++j) acc = fmaf(-Cc2[i * XB_KB + j], G2[j * SF + cf], acc);
        Z2[i * SF + cf] = acc;
      }
      float x2[XB_KB];
#pragma unroll
      for (int j = 0; j < XB_KB; ++j) x2[j] = X2[j * SH + ch];
      for (int k = rh; k < XB_F; k += RGH) {
        float d = 0.f;
#pragma unroll
        for (int j = 0; j < XB_KB; j += 4) {
          const float4 e = *(const float4*)(EG2t + k * SKT + j);
          d = fmaf(x2[j], e.x, d); d = fmaf(x2[j + 1], e.y, d);
          d = fmaf(x2[j + 2], e.z, d); d = fmaf(x2[j + 3], e.w, d);
        }
        if (tr) tr[XB_F * XB_H + XB_H + ch * XB_F + k] = W2[ch * SW2 + k];
        W2[ch * SW2 + k] -= d;
      }
      if (tid < XB_F) {
        float d = 0.f;
#pragma unroll
        for (int j = 0; j < XB_KB; ++j) d += EG2t[tid * SKT + j];
        if (tr) tr[2 * XB_F * XB_H + XB_H + tid] = b2[tid];
        b2[tid] -= d;
      }
      if (tr) tr += MLP_STATE;
      if (n + 1 < nmb) xb_put(pf, Qn, K, T, Kt, gs);
    }
    __syncthreads();
    XB_TICK(6)

    for (int i0 = 0; i0 < XB_KB; i0 += NGRP) {  // P8
      const int i = i0 + grp;
      const int ii = i < XB_KB ? i : XB_KB - 1;
      xb_ln_out_row(Z2 + ii * SF, Q + ii * SF, o0 + (long)(n * XB_KB + ii) * ost, lw, lb, lane,
                    i < XB_KB);
    }
  }
  if (W1save) {  // every read of the state is behind the last barrier; a block owns its head's slots
    __syncthreads();
    for (int e = tid; e < XB_F * XB_H; e += XB_NT) W1save[(long)hd * XB_F * XB_H + e] = W1[e];
    for (int e = tid; e < XB_H * XB_F; e += XB_NT)
      W2save[(long)hd * XB_H * XB_F + e] = W2[(e / XB_F) * SW2 + e % XB_F];
    for (int e = tid; e < XB_H; e += XB_NT) b1save[hd * XB_H + e] = b1[e];
    for (int e = tid; e < XB_F; e += XB_NT) b2save[hd * XB_F + e] = b2[e];
  }
  if (prof && tid == 0)
#pragma unroll
    for (int k = 0; k < 8; ++k) prof[bh * 8 + k] = ticks[k];
}
XB_EXPORT(xb_inner_mlp)
