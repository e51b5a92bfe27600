// The linear inner model (spec steps 3-5), all L/KB mini-batches in one
// launch. Per mini-batch, three barriers:
//   P1  Z = K W + b, QW = Q W + b (old W), causal coefficients, eta_last
//   P2  G = LN-L2 gradient of Z, per row
//   P3  Zbar = QW - coef @ G; W -= K^T (eta_last * G); b -= sum; next rows in
//   P4  out = Q + LN(Zbar), overlapping the next P1 (they touch disjoint tiles)
// Stages (Q, K, T, Kt, gate) are double buffered; the next mini-batch's global
// loads are issued at the top of the step and land in P3.
#define LIN_STAGE (3 * XB_KB * SF + XB_F * SKT + R4(XB_KB))
#define LIN_SMEM_FLOATS                                                                     \
  (XB_F * XB_F + R4(XB_F) + 2 * LIN_STAGE + 4 * XB_KB * SF + R4(XB_KB * XB_KB) + 2 * R4(XB_KB))

XB_KERNEL void __launch_bounds__(XB_NT, 1)
    xb_inner_linear(const act_t* __restrict__ xq, const act_t* __restrict__ xk,
                    const act_t* __restrict__ xv, const float* __restrict__ gate,
                    const float* __restrict__ W1, const float* __restrict__ b1,
                    const float* __restrict__ lnw, const float* __restrict__ lnb,
                    const float* __restrict__ tokd, act_t* __restrict__ out, long osb, long osh,
                    long ost, int nh, int L,
                    unsigned long long* __restrict__ prof) {
  XB_DYN_SMEM(sm);
#ifdef XB_EMU
  emu_check_smem(LIN_SMEM_FLOATS * 4);
#endif
  const int tid = threadIdx.x, bh = blockIdx.x, b = bh / nh, hd = bh % nh;
  float* W = sm;
  float* bv = W + XB_F * XB_F;
  float* st = bv + R4(XB_F);
  float* Z = st + 2 * LIN_STAGE;
  float* QW = Z + XB_KB * SF;
  float* G = QW + XB_KB * SF;
  float* Zb = G + XB_KB * SF;
  float* Cc = Zb + XB_KB * SF;
  float* tokc = Cc + R4(XB_KB * XB_KB);
  float* etl = tokc + R4(XB_KB);

  for (int e = tid; e < XB_F * XB_F; e += XB_NT) W[e] = W1[(long)hd * XB_F * XB_F + e];
  for (int e = tid; e < XB_F; e += XB_NT) bv[e] = b1[hd * XB_F + e];
  // eta[i][j] = base_lr * tok[i] * gate[j] / f; tokc carries all but the gate.
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
  const int nmb = L / XB_KB;
  XbFetch pf = {};
  xb_fetch(pf, q0, k0, v0, g0, 0);
  xb_put(pf, st, st + XB_KB * SF, st + 2 * XB_KB * SF, st + 3 * XB_KB * SF,
         st + 3 * XB_KB * SF + XB_F * SKT);
  __syncthreads();
  long long tick = prof ? clock64() : 0, ticks[8] = {};

  const int c = tid % XB_F, rg = tid / XB_F;
  for (int n = 0; n < nmb; ++n) {
    float* Q = st + (n & 1) * LIN_STAGE;
    float* K = Q + XB_KB * SF;
    float* T = K + XB_KB * SF;
    float* Kt = T + XB_KB * SF;
    float* gs = Kt + XB_F * SKT;
    float* Qn = st + ((n + 1) & 1) * LIN_STAGE;
    if (n + 1 < nmb) xb_fetch(pf, q0, k0, v0, g0, n + 1);

    {  // P1
      float z[RF], q[RF];
      const float bc = bv[c];
#pragma unroll
      for (int r = 0; r < RF; ++r) z[r] = q[r] = bc;
#pragma unroll 4
      for (int k = 0; k < XB_F; k += 4) {
        const float w0 = W[k * XB_F + c], w1 = W[(k + 1) * XB_F + c];
        const float w2 = W[(k + 2) * XB_F + c], w3 = W[(k + 3) * XB_F + c];
#pragma unroll
        for (int r = 0; r < RF; ++r) {
          const int i = rg + RGF * r;
          const float4 kk = *(const float4*)(K + i * SF + k);
          const float4 qq = *(const float4*)(Q + i * SF + k);
          z[r] = fmaf(kk.x, w0, z[r]); z[r] = fmaf(kk.y, w1, z[r]);
          z[r] = fmaf(kk.z, w2, z[r]); z[r] = fmaf(kk.w, w3, z[r]);
          q[r] = fmaf(qq.x, w0, q[r]); q[r] = fmaf(qq.y, w1, q[r]);
          q[r] = fmaf(qq.z, w2, q[r]); q[r] = fmaf(qq.w, w3, q[r]);
        }
      }
#pragma unroll
      for (int r = 0; r < RF; ++r) {
        Z[(rg + RGF * r) * SF + c] = z[r];
        QW[(rg + RGF * r) * SF + c] = q[r];
      }
      xb_coef(Q, K, XB_F, SF, tokc, gs, Cc);
      if (tid < XB_KB) etl[tid] = tokc[XB_KB - 1] * gs[tid];
    }
    __syncthreads();
    XB_TICK(0)

    for (int i0 = 0; i0 < XB_KB; i0 += NGRP) {  // P2
      const int i = i0 + grp;
      const int ii = i < XB_KB ? i : XB_KB - 1;
      xb_ln_grad_row(Z + ii * SF, T + ii * SF, G + ii * SF, 0, 0.f, ii, lw, lb, lane, i < XB_KB);
    }
    __syncthreads();
    XB_TICK(1)

    {  // P3
#pragma unroll
      for (int r = 0; r < RF; ++r) {
        const int i = rg + RGF * r;
        float acc = QW[i * SF + c];
        for (int j = 0; j <= i; ++j) acc = fmaf(-Cc[i * XB_KB + j], G[j * SF + c], acc);
        Zb[i * SF + c] = acc;
      }
      float eg[XB_KB];
      float bs = 0.f;
#pragma unroll
      for (int j = 0; j < XB_KB; ++j) {
        eg[j] = etl[j] * G[j * SF + c];
        bs += eg[j];
      }
      for (int a = rg; a < XB_F; a += RGF) {
        float d = 0.f;
#pragma unroll
        for (int j = 0; j < XB_KB; j += 4) {
          const float4 kt = *(const float4*)(Kt + a * SKT + j);
          d = fmaf(kt.x, eg[j], d); d = fmaf(kt.y, eg[j + 1], d);
          d = fmaf(kt.z, eg[j + 2], d); d = fmaf(kt.w, eg[j + 3], d);
        }
        W[a * XB_F + c] -= d;
      }
      if (rg == 0) bv[c] -= bs;
      if (n + 1 < nmb)
        xb_put(pf, Qn, Qn + XB_KB * SF, Qn + 2 * XB_KB * SF, Qn + 3 * XB_KB * SF,
               Qn + 3 * XB_KB * SF + XB_F * SKT);
    }
    __syncthreads();
    XB_TICK(2)

    for (int i0 = 0; i0 < XB_KB; i0 += NGRP) {  // P4
      const int i = i0 + grp;
      const int ii = i < XB_KB ? i : XB_KB - 1;
      xb_ln_out_row(Zb + ii * SF, Q + ii * SF, o0 + (long)(n * XB_KB + ii) * ost, lw, lb, lane,
                    i < XB_KB);
    }
  }
  if (prof && tid == 0)
#pragma unroll
    for (int k = 0; k < 8; ++k) prof[bh * 8 + k] = ticks[k];
}
XB_EXPORT(xb_inner_linear)
