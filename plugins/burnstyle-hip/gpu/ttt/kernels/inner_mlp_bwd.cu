// Backward of the two-layer MLP inner model over a whole sequence: one block
// per (batch, head) walks the mini-batches in reverse (docs/ttt-backward.md,
// "The inner loop, mlp"). At f = 64 the state (W1 [F][H], W2 [H][F], H = 4F)
// is 128 KB and so is its gradient: with the nine [K][H] tiles a step needs
// live, both cannot sit in shared memory (227 KB). So the state at each
// mini-batch start is read from the forward's trace in global memory (L2:
// 12 heads x 128 KB) and dW', db' (the gradient of the state after the
// mini-batch) accumulate in a global scratch per (batch, head), each element
// read and written by one thread only. Tiles and phases (one barrier each;
// [K][H] elements go to thread (ch = t % H, rows t / H + BRGH*r), [K][F] as
// in the linear kernel, rows of [K][F] to LG lanes):
//   P1  Z1 = X W1 + b1, A1 = gelu(Z1), QW1 = Q W1 + b1, U1 = X dW1' + db1'; M1
//   P2  Z2 = A1 W2 + b2, U2 = A1 dW2' + db2'
//   P3  rows: G2 = l(Z2, T), G2.U2
//   P4  Hm = G2 W2^T, G1 = Hm gelu'(Z1), dA1 = -e G2 dW2'^T
//   P5  Z1bar = QW1 - M1 G1, A1bar = gelu(Z1bar); V1 = G1 dW1'^T; rows: G1.U1
//   P6  Z2bar = A1bar W2 + b2; M2 = eta (A1bar A1^T + 1)
//   P7  Z2bar -= M2 G2
//   P8  rows: dZ2bar (and d(ln_w), d(ln_b)) from dO
//   P9  dM2, d(eta), P2; dG2 = -M2^T dZ2bar - e U2; dA1bar = dZ2bar W2^T (registers)
//   P10 dA1bar += P2 A1, dZ1bar = dA1bar gelu'(Z1bar); dA1 += P2^T A1bar
//   P11 dM1, d(eta), P1; dG1 = -M1^T dZ1bar - e U1; dQ = dO + dZ1bar W1^T
//   P12 dQ += P1 X, dX = P1^T Q - e V1; dH = dG1 gelu'(Z1), dZ1 = dG1 Hm gelu''(Z1)
//   P13 dG2 += dH W2
//   P14 rows: dZ2, dT from dG2; d(gate), d(tok)
//   P15 dA1 += dZ2 W2^T, dZ1 += dA1 gelu'(Z1)
//   P16 dX += dZ1 W1^T - dT; dQ, dX, dV out; dW1' += Q^T dZ1bar + X^T dZ1,
//       dW2' += A1bar^T dZ2bar + dH^T G2 + A1^T dZ2, db1', db2'
#define BRGH (XB_NTB / XB_H)  // row groups of a [K][H] tile
#define BRH (XB_KB / BRGH)
#define PVM ((XB_KB * XB_F + XB_NTB - 1) / XB_NTB)
#define XB_CHUNK16(n) ((n) % 16 == 0 ? 16 : (n))
#define WCH1 XB_CHUNK16(XB_F / BRGH)  // rows of dW1 per pass in P16
#define WCH2 XB_CHUNK16(XB_H / BRG)   // rows of dW2 per pass
#define MLPB_SMEM_FLOATS                                                                         \
  (9 * XB_KB * SH + 14 * XB_KB * SF + 7 * XB_KB * SKK + 6 * R4(XB_KB) + R4(XB_H) + R4(XB_F))

// gelu (tanh form), its first and second derivatives (docs/ttt-backward.md).
__device__ __forceinline__ float xb_gelu_d2(float x, float* d1, float* d2) {
  const float k0 = 0.7978845608028654f, k1 = 0.044715f;
  const float up = k0 * (1.f + 3.f * k1 * x * x), t = tanhf(k0 * (x + k1 * x * x * x));
  const float s = 1.f - t * t;
  if (d1) *d1 = 0.5f * (1.f + t) + 0.5f * x * s * up;
  if (d2) *d2 = s * (up - x * t * up * up + 0.5f * x * (6.f * k1 * k0 * x));
  return 0.5f * x * (1.f + t);
}

XB_KERNEL void __launch_bounds__(XB_NTB, 1)
    xb_inner_mlp_bwd(const act_t* __restrict__ xq, const act_t* __restrict__ xk,
                     const act_t* __restrict__ xv, const float* __restrict__ gate,
                     const float* __restrict__ trace, const float* __restrict__ lnw,
                     const float* __restrict__ lnb, const float* __restrict__ tokd,
                     const float* __restrict__ dout, long dsb, long dsh, long dst,
                     float* __restrict__ dxq, float* __restrict__ dxk, float* __restrict__ dxv,
                     float* __restrict__ dgate, float* gW1, float* gb1, float* gW2, float* gb2,
                     float* glnw, float* glnb, float* gtokd, int nh, int L, float* dstate) {
  XB_DYN_SMEM(sm);
#ifdef XB_EMU
  emu_check_smem(MLPB_SMEM_FLOATS * 4);
#endif
  const int tid = threadIdx.x, bh = blockIdx.x, b = bh / nh, hd = bh % nh;
  const int KH = XB_KB * SH, KF = XB_KB * SF, KK = XB_KB * SKK;
  float* Z1 = sm;
  float* A1 = Z1 + KH;
  float* HM = A1 + KH;   // Hm, then dZ1
  float* G1 = HM + KH;
  float* Z1B = G1 + KH;  // QW1, Z1bar, then dZ1bar
  float* A1B = Z1B + KH;
  float* DG1 = A1B + KH;  // dG1, then dH
  float* DA1 = DG1 + KH;
  float* U1 = DA1 + KH;
  float* Q = U1 + KH;
  float* X = Q + KF;
  float* T = X + KF;
  float* DO = T + KF;
  float* ZX = DO + KF;  // Z2, then its x-hat
  float* RR = ZX + KF;
  float* G2 = RR + KF;
  float* Z2B = G2 + KF;
  float* DZ2B = Z2B + KF;
  float* DG2 = DZ2B + KF;
  float* U2 = DG2 + KF;
  float* V1 = U2 + KF;
  float* DZ2 = V1 + KF;
  float* DT = DZ2 + KF;
  float* A1s = DT + KF;
  float* M1 = A1s + KK;
  float* A2s = M1 + KK;
  float* M2 = A2s + KK;
  float* P1 = M2 + KK;
  float* P2 = P1 + KK;
  float* DE = P2 + KK;
  float* gs = DE + KK;
  float* tokc = gs + R4(XB_KB);
  float* rsz = tokc + R4(XB_KB);
  float* cmz = rsz + R4(XB_KB);
  float* uG1 = cmz + R4(XB_KB);
  float* uG2 = uG1 + R4(XB_KB);
  float* b1 = uG2 + R4(XB_KB);
  float* b2 = b1 + R4(XB_H);

  const int nmb = L / XB_KB;
  // dW' scratch of this (batch, head): W1 | b1 | W2 | b2, as the trace.
  float* dS = dstate + (long)bh * MLP_STATE;
  float* dW1 = dS;
  float* db1 = dW1 + XB_F * XB_H;
  float* dW2 = db1 + XB_H;
  float* db2 = dW2 + XB_H * XB_F;
  for (int e = tid; e < MLP_STATE; e += XB_NTB) dS[e] = 0.f;
  for (int e = tid; e < XB_KB; e += XB_NTB)
    tokc[e] = (float)XB_BASE_LR * fmaxf(0.f, 1.f / (float)(e + 1) + tokd[e]) / (float)XB_F;
  const int lane = tid % LG, grp = tid / LG;
  const int c = tid % XB_F, rg = tid / XB_F;   // [K][F] mapping
  const int ch = tid % XB_H, rh = tid / XB_H;  // [K][H] mapping
  float lw[EPL], lb[EPL], dgam[EPL], dbet[EPL];
#pragma unroll
  for (int e = 0; e < EPL; ++e) {
    lw[e] = lnw[hd * XB_F + lane + LG * e];
    lb[e] = lnb[hd * XB_F + lane + LG * e];
    dgam[e] = dbet[e] = 0.f;
  }
  float dtok = 0.f;
  const long in0 = (long)bh * L * XB_F;
  const act_t *q0 = xq + in0, *k0 = xk + in0, *v0 = xv + in0;
  const float* g0 = gate + (long)bh * L;
  const float* do0 = dout + b * dsb + hd * dsh;
  const float* tr0 = trace + (long)bh * nmb * MLP_STATE;

  float pq[PVM], pk[PVM], pv[PVM], pd[PVM], pb1 = 0.f, pb2 = 0.f, pg = 0.f;
  auto fetch = [&](int n) {
#pragma unroll
    for (int r = 0; r < PVM; ++r) {
      const int e = tid + XB_NTB * r;
      if (e < XB_KB * XB_F) {
        const long o = (long)n * XB_KB * XB_F + e;
        pq[r] = ldf(q0[o]);
        pk[r] = ldf(k0[o]);
        pv[r] = ldf(v0[o]);
        pd[r] = do0[(long)(n * XB_KB + e / XB_F) * dst + e % XB_F];
      }
    }
    const float* st = tr0 + (long)n * MLP_STATE;
    if (tid < XB_H) pb1 = st[XB_F * XB_H + tid];
    if (tid < XB_F) pb2 = st[2 * XB_F * XB_H + XB_H + tid];
    if (tid < XB_KB) pg = g0[(long)n * XB_KB + tid];
  };
  fetch(nmb - 1);
  __syncthreads();  // the scratch is zeroed before anyone reads it

  for (int n = nmb - 1; n >= 0; --n) {
    const float* W1 = tr0 + (long)n * MLP_STATE;  // [F][H]
    const float* W2 = W1 + XB_F * XB_H + XB_H;    // [H][F]
#pragma unroll
    for (int r = 0; r < PVM; ++r) {
      const int e = tid + XB_NTB * r;
      if (e < XB_KB * XB_F) {
        const int o = (e / XB_F) * SF + e % XB_F;
        Q[o] = pq[r];
        X[o] = pk[r];
        T[o] = pv[r] - pk[r];
        DO[o] = pd[r];
      }
    }
    if (tid < XB_H) b1[tid] = pb1;
    if (tid < XB_F) b2[tid] = pb2;
    if (tid < XB_KB) gs[tid] = pg;
    __syncthreads();
    if (n > 0) fetch(n - 1);
    const float el = tokc[XB_KB - 1];

    {  // P1 (one product at a time: 512 threads have 128 registers each)
      float z[BRH];
#pragma unroll
      for (int r = 0; r < BRH; ++r) z[r] = b1[ch];
      xb_mm<BRH, false>(z, X, SF, W1, XB_H, XB_F, ch, rh, BRGH);
#pragma unroll
      for (int r = 0; r < BRH; ++r) {
        const int i = rh + BRGH * r;
        Z1[i * SH + ch] = z[r];
        A1[i * SH + ch] = xb_gelu_d2(z[r], 0, 0);
        z[r] = b1[ch];
      }
      xb_mm<BRH, false>(z, Q, SF, W1, XB_H, XB_F, ch, rh, BRGH);
#pragma unroll
      for (int r = 0; r < BRH; ++r) {
        Z1B[(rh + BRGH * r) * SH + ch] = z[r];
        z[r] = db1[ch];
      }
      xb_mm<BRH, false>(z, X, SF, dW1, XB_H, XB_F, ch, rh, BRGH);
#pragma unroll
      for (int r = 0; r < BRH; ++r) U1[(rh + BRGH * r) * SH + ch] = z[r];
      for (int e = tid; e < XB_KB * XB_KB; e += XB_NTB) {
        const int i = e / XB_KB, j = e % XB_KB;
        const float a = j <= i ? xb_dot(Q + i * SF, X + j * SF, XB_F) + 1.f : 0.f;
        A1s[i * SKK + j] = a;
        M1[i * SKK + j] = tokc[i] * gs[j] * a;
      }
    }
    __syncthreads();

    {  // P2
      float z[BRF], u[BRF];
#pragma unroll
      for (int r = 0; r < BRF; ++r) z[r] = b2[c], u[r] = db2[c];
      xb_mm<BRF, false>(z, A1, SH, W2, XB_F, XB_H, c, rg, BRG);
      xb_mm<BRF, false>(u, A1, SH, dW2, XB_F, XB_H, c, rg, BRG);
#pragma unroll
      for (int r = 0; r < BRF; ++r) {
        const int i = rg + BRG * r;
        ZX[i * SF + c] = z[r];
        U2[i * SF + c] = u[r];
      }
    }
    __syncthreads();

    for (int i0 = 0; i0 < XB_KB; i0 += BNG) {  // P3
      const int i = i0 + grp, ii = i < XB_KB ? i : XB_KB - 1;
      float rs, cm;
      xb_ln_grad_fwd(ZX + ii * SF, T + ii * SF, ZX + ii * SF, RR + ii * SF, G2 + ii * SF, lw, lb, lane,
                     i < XB_KB, rs, cm);
      const float gu = xb_row_dot(G2 + ii * SF, U2 + ii * SF, lane);
      if (i < XB_KB && lane == 0) rsz[i] = rs, cmz[i] = cm, uG2[i] = gu;
    }
    __syncthreads();

    {  // P4
      float v[BRH];
#pragma unroll
      for (int r = 0; r < BRH; ++r) v[r] = 0.f;
      xb_mm<BRH, true>(v, G2, SF, W2, XB_F, XB_F, ch, rh, BRGH);
#pragma unroll
      for (int r = 0; r < BRH; ++r) {
        const int i = rh + BRGH * r;
        float d1;
        xb_gelu_d2(Z1[i * SH + ch], &d1, 0);
        HM[i * SH + ch] = v[r];
        G1[i * SH + ch] = v[r] * d1;
        v[r] = 0.f;
      }
      xb_mm<BRH, true>(v, G2, SF, dW2, XB_F, XB_F, ch, rh, BRGH);
#pragma unroll
      for (int r = 0; r < BRH; ++r) {
        const int i = rh + BRGH * r;
        DA1[i * SH + ch] = -el * gs[i] * v[r];
      }
    }
    __syncthreads();

    {  // P5
      float mg[BRH];
#pragma unroll
      for (int r = 0; r < BRH; ++r) mg[r] = 0.f;
      xb_mm<BRH, false>(mg, M1, SKK, G1, SH, XB_KB, ch, rh, BRGH);
#pragma unroll
      for (int r = 0; r < BRH; ++r) {
        const int i = rh + BRGH * r;
        const float zb = Z1B[i * SH + ch] - mg[r];
        Z1B[i * SH + ch] = zb;
        A1B[i * SH + ch] = xb_gelu_d2(zb, 0, 0);
      }
      float v1[BRF];
#pragma unroll
      for (int r = 0; r < BRF; ++r) v1[r] = 0.f;
      xb_mm<BRF, true>(v1, G1, SH, dW1, XB_H, XB_H, c, rg, BRG);
#pragma unroll
      for (int r = 0; r < BRF; ++r) V1[(rg + BRG * r) * SF + c] = v1[r];
      for (int i0 = 0; i0 < XB_KB; i0 += BNG) {  // G1 . U1 per row, over H
        const int i = i0 + grp, ii = i < XB_KB ? i : XB_KB - 1;
        float s = 0.f;
        for (int k = lane; k < XB_H; k += LG) s = fmaf(G1[ii * SH + k], U1[ii * SH + k], s);
        s = xb_grp_sum(s);
        if (i < XB_KB && lane == 0) uG1[i] = s;
      }
    }
    __syncthreads();

    {  // P6
      float z[BRF];
#pragma unroll
      for (int r = 0; r < BRF; ++r) z[r] = b2[c];
      xb_mm<BRF, false>(z, A1B, SH, W2, XB_F, XB_H, c, rg, BRG);
#pragma unroll
      for (int r = 0; r < BRF; ++r) Z2B[(rg + BRG * r) * SF + c] = z[r];
      for (int e = tid; e < XB_KB * XB_KB; e += XB_NTB) {
        const int i = e / XB_KB, j = e % XB_KB;
        const float a = j <= i ? xb_dot(A1B + i * SH, A1 + j * SH, XB_H) + 1.f : 0.f;
        A2s[i * SKK + j] = a;
        M2[i * SKK + j] = tokc[i] * gs[j] * a;
      }
    }
    __syncthreads();

    {  // P7
      float mg[BRF];
#pragma unroll
      for (int r = 0; r < BRF; ++r) mg[r] = 0.f;
      xb_mm<BRF, false>(mg, M2, SKK, G2, SF, XB_KB, c, rg, BRG);
#pragma unroll
      for (int r = 0; r < BRF; ++r) Z2B[(rg + BRG * r) * SF + c] -= mg[r];
    }
    __syncthreads();

    for (int i0 = 0; i0 < XB_KB; i0 += BNG) {  // P8
      const int i = i0 + grp, ii = i < XB_KB ? i : XB_KB - 1;
      xb_ln_out_bwd(Z2B + ii * SF, DO + ii * SF, DZ2B + ii * SF, lw, lane, i < XB_KB, dgam, dbet);
    }
    __syncthreads();

    float da[BRH];
    {  // P9
      for (int e = tid; e < XB_KB * XB_KB; e += XB_NTB) {
        const int i = e / XB_KB, j = e % XB_KB;
        const float dm = j <= i ? -xb_dot(DZ2B + i * SF, G2 + j * SF, XB_F) : 0.f;
        float de = dm * A2s[i * SKK + j];
        if (i == XB_KB - 1) de -= uG1[j] + uG2[j];  // the updates' use of eta_last
        DE[i * SKK + j] = de;
        P2[i * SKK + j] = dm * tokc[i] * gs[j];
      }
      float mt[BRF];
#pragma unroll
      for (int r = 0; r < BRF; ++r) mt[r] = 0.f;
      xb_mmt<BRF>(mt, M2, SKK, DZ2B, SF, XB_KB, c, rg, BRG);
#pragma unroll
      for (int r = 0; r < BRF; ++r) {
        const int i = rg + BRG * r;
        DG2[i * SF + c] = -mt[r] - el * gs[i] * U2[i * SF + c];
      }
#pragma unroll
      for (int r = 0; r < BRH; ++r) da[r] = 0.f;
      xb_mm<BRH, true>(da, DZ2B, SF, W2, XB_F, XB_F, ch, rh, BRGH);
    }
    __syncthreads();

    {  // P10
      xb_mm<BRH, false>(da, P2, SKK, A1, SH, XB_KB, ch, rh, BRGH);
      float pa[BRH];
#pragma unroll
      for (int r = 0; r < BRH; ++r) pa[r] = 0.f;
      xb_mmt<BRH>(pa, P2, SKK, A1B, SH, XB_KB, ch, rh, BRGH);
#pragma unroll
      for (int r = 0; r < BRH; ++r) {
        const int i = rh + BRGH * r;
        float d1;
        xb_gelu_d2(Z1B[i * SH + ch], &d1, 0);
        Z1B[i * SH + ch] = da[r] * d1;  // dZ1bar
        DA1[i * SH + ch] += pa[r];
      }
    }
    __syncthreads();

    float dq[BRF], dx[BRF];
    {  // P11
      for (int e = tid; e < XB_KB * XB_KB; e += XB_NTB) {
        const int i = e / XB_KB, j = e % XB_KB;
        const float dm = j <= i ? -xb_dot(Z1B + i * SH, G1 + j * SH, XB_H) : 0.f;
        DE[i * SKK + j] += dm * A1s[i * SKK + j];
        P1[i * SKK + j] = dm * tokc[i] * gs[j];
      }
      float mt[BRH];
#pragma unroll
      for (int r = 0; r < BRH; ++r) mt[r] = 0.f;
      xb_mmt<BRH>(mt, M1, SKK, Z1B, SH, XB_KB, ch, rh, BRGH);
#pragma unroll
      for (int r = 0; r < BRH; ++r) {
        const int i = rh + BRGH * r;
        DG1[i * SH + ch] = -mt[r] - el * gs[i] * U1[i * SH + ch];
      }
#pragma unroll
      for (int r = 0; r < BRF; ++r) dq[r] = DO[(rg + BRG * r) * SF + c], dx[r] = 0.f;
      xb_mm<BRF, true>(dq, Z1B, SH, W1, XB_H, XB_H, c, rg, BRG);
    }
    __syncthreads();

    {  // P12
      xb_mm<BRF, false>(dq, P1, SKK, X, SF, XB_KB, c, rg, BRG);
      xb_mmt<BRF>(dx, P1, SKK, Q, SF, XB_KB, c, rg, BRG);
#pragma unroll
      for (int r = 0; r < BRF; ++r) {
        const int j = rg + BRG * r;
        dx[r] -= el * gs[j] * V1[j * SF + c];
      }
#pragma unroll
      for (int r = 0; r < BRH; ++r) {
        const int i = rh + BRGH * r;
        float d1, d2;
        xb_gelu_d2(Z1[i * SH + ch], &d1, &d2);
        const float dg = DG1[i * SH + ch];
        DG1[i * SH + ch] = dg * d1;                // dH
        HM[i * SH + ch] = dg * HM[i * SH + ch] * d2;  // dZ1 (first part)
      }
    }
    __syncthreads();

    {  // P13
      float g[BRF];
#pragma unroll
      for (int r = 0; r < BRF; ++r) g[r] = 0.f;
      xb_mm<BRF, false>(g, DG1, SH, W2, XB_F, XB_H, c, rg, BRG);
#pragma unroll
      for (int r = 0; r < BRF; ++r) DG2[(rg + BRG * r) * SF + c] += g[r];
    }
    __syncthreads();

    {  // P14
      for (int i0 = 0; i0 < XB_KB; i0 += BNG) {
        const int i = i0 + grp, ii = i < XB_KB ? i : XB_KB - 1;
        xb_ln_grad_bwd(DG2 + ii * SF, ZX + ii * SF, RR + ii * SF, G2 + ii * SF, T + ii * SF, rsz[ii],
                       cmz[ii], DZ2 + ii * SF, DT + ii * SF, lw, lb, lane, i < XB_KB, dgam, dbet);
      }
      if (tid < XB_KB) {
        float s = 0.f;
        for (int j = 0; j <= tid; ++j) s = fmaf(DE[tid * SKK + j], gs[j], s);
        dtok += s;
      } else if (tid < 2 * XB_KB) {
        const int j = tid - XB_KB;
        float s = 0.f;
        for (int i = j; i < XB_KB; ++i) s = fmaf(DE[i * SKK + j], tokc[i], s);
        dgate[(long)bh * L + n * XB_KB + j] = s;
      }
    }
    __syncthreads();

    {  // P15
      float a[BRH];
#pragma unroll
      for (int r = 0; r < BRH; ++r) a[r] = 0.f;
      xb_mm<BRH, true>(a, DZ2, SF, W2, XB_F, XB_F, ch, rh, BRGH);
#pragma unroll
      for (int r = 0; r < BRH; ++r) {
        const int i = rh + BRGH * r;
        float d1;
        xb_gelu_d2(Z1[i * SH + ch], &d1, 0);
        const float d = DA1[i * SH + ch] + a[r];
        HM[i * SH + ch] += d * d1;  // dZ1
      }
    }
    __syncthreads();

    {  // P16
      xb_mm<BRF, true>(dx, HM, SH, W1, XB_H, XB_H, c, rg, BRG);
      const long o0 = in0 + (long)n * XB_KB * XB_F;
#pragma unroll
      for (int r = 0; r < BRF; ++r) {
        const int i = rg + BRG * r;
        const float dt = DT[i * SF + c];
        dxq[o0 + i * XB_F + c] = dq[r];
        dxk[o0 + i * XB_F + c] = dx[r] - dt;
        dxv[o0 + i * XB_F + c] = dt;
      }
      // The weight gradients in row chunks of at most 16, so the
      // accumulators do not push 512 threads past their 128 registers.
#pragma unroll 1
      for (int r0 = 0; r0 < XB_F / BRGH; r0 += WCH1) {
        float w[WCH1];
#pragma unroll
        for (int r = 0; r < WCH1; ++r) w[r] = 0.f;
        const int a0 = rh + BRGH * r0;
        xb_mmt<WCH1>(w, Q, SF, Z1B, SH, XB_KB, ch, a0, BRGH);
        xb_mmt<WCH1>(w, X, SF, HM, SH, XB_KB, ch, a0, BRGH);
#pragma unroll
        for (int r = 0; r < WCH1; ++r) dW1[(a0 + BRGH * r) * XB_H + ch] += w[r];
      }
      if (rh == 0) {
        float s = 0.f;
        for (int j = 0; j < XB_KB; ++j) s += Z1B[j * SH + ch] + HM[j * SH + ch];
        db1[ch] += s;
      }
#pragma unroll 1
      for (int r0 = 0; r0 < XB_H / BRG; r0 += WCH2) {
        float w[WCH2];
#pragma unroll
        for (int r = 0; r < WCH2; ++r) w[r] = 0.f;
        const int a0 = rg + BRG * r0;
        xb_mmt<WCH2>(w, A1B, SH, DZ2B, SF, XB_KB, c, a0, BRG);
        xb_mmt<WCH2>(w, DG1, SH, G2, SF, XB_KB, c, a0, BRG);
        xb_mmt<WCH2>(w, A1, SH, DZ2, SF, XB_KB, c, a0, BRG);
#pragma unroll
        for (int r = 0; r < WCH2; ++r) dW2[(a0 + BRG * r) * XB_F + c] += w[r];
      }
      if (rg == 0) {
        float s = 0.f;
        for (int j = 0; j < XB_KB; ++j) s += DZ2B[j * SF + c] + DZ2[j * SF + c];
        db2[c] += s;
      }
    }
    __syncthreads();
  }
  for (int e = tid; e < XB_F * XB_H; e += XB_NTB) {
    atomicAdd(gW1 + (long)hd * XB_F * XB_H + e, dW1[e]);
    atomicAdd(gW2 + (long)hd * XB_H * XB_F + e, dW2[e]);
  }
  for (int e = tid; e < XB_H; e += XB_NTB) atomicAdd(gb1 + hd * XB_H + e, db1[e]);
  for (int e = tid; e < XB_F; e += XB_NTB) atomicAdd(gb2 + hd * XB_F + e, db2[e]);
#pragma unroll
  for (int e = 0; e < EPL; ++e) {
    atomicAdd(glnw + hd * XB_F + lane + LG * e, dgam[e]);
    atomicAdd(glnb + hd * XB_F + lane + LG * e, dbet[e]);
  }
  if (tid < XB_KB && 1.f / (float)(tid + 1) + tokd[tid] > 0.f)
    atomicAdd(gtokd + tid, dtok * (float)XB_BASE_LR / (float)XB_F);
}
XB_EXPORT(xb_inner_mlp_bwd)
