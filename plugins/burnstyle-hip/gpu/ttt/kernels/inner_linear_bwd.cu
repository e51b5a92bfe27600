// Backward of the linear inner model over a whole sequence: one block per
// (batch, head) walks the mini-batches in reverse (docs/ttt-backward.md,
// "The inner loop, linear"), carrying dW' and db' (the gradient of the state
// after the mini-batch) in shared memory. The state at each mini-batch's
// start comes from the training forward's trace: storing it costs
// 128 x (64x64 + 64) floats = 2.1 MB per (batch, head) and layer at 125m
// (25 MB per layer), written in the shadow of the forward's barriers;
// re-running the chain here instead would add a whole forward inner loop
// (~0.4 ms, 12 x per step) to the backward. Each step recomputes its forward
// (Z, G, Zbar: about a third of the step's products) from that state.
// Phases, one barrier each:
//   P1  Z = X W + b, QW = Q W + b, U = X dW' + db', A1 = Q X^T + 1, M = eta*A1
//   P2  rows: G = l(Z, T) with x-hat, r, 1/s, c; G.U per row
//   P3  Zbar = QW - M G; GW = G dW'^T
//   P4  rows: dZbar, d(ln_w), d(ln_b) from dO through out = Q + LN(Zbar)
//   P5  dM, d(eta), P = dM*eta; dG = -M^T dZbar - e*U
//   P6  dQ = dO + dZbar W^T + P X; dX = P^T Q - e*GW; rows: dZ, dT from dG;
//       d(gate), d(tok)
//   P7  dX += dZ W^T - dT; dQ, dX, dV out; dW' += Q^T dZbar + X^T dZ
// The next (earlier) mini-batch's rows and state are loaded into registers
// during the step and stored at its start.
#define BSTATE (XB_F * XB_F + XB_F)
#define PVB ((XB_KB * XB_F + XB_NTB - 1) / XB_NTB)
#define PWB ((BSTATE + XB_NTB - 1) / XB_NTB)
#define LINB_SMEM_FLOATS \
  (2 * XB_F * SF + 2 * R4(XB_F) + 14 * XB_KB * SF + 4 * XB_KB * SKK + 5 * R4(XB_KB))

XB_KERNEL void __launch_bounds__(XB_NTB, 1)
    xb_inner_linear_bwd(const act_t* __restrict__ xq, const act_t* __restrict__ xk,
                        const act_t* __restrict__ xv, const float* __restrict__ gate,
                        const float* __restrict__ trace, const float* __restrict__ lnw,
                        const float* __restrict__ lnb, const float* __restrict__ tokd,
                        const float* __restrict__ dout, long dsb, long dsh, long dst,
                        float* __restrict__ dxq, float* __restrict__ dxk, float* __restrict__ dxv,
                        float* __restrict__ dgate, float* gW1, float* gb1, float* glnw, float* glnb,
                        float* gtokd, int nh, int L) {
  XB_DYN_SMEM(sm);
#ifdef XB_EMU
  emu_check_smem(LINB_SMEM_FLOATS * 4);
#endif
  const int tid = threadIdx.x, bh = blockIdx.x, b = bh / nh, hd = bh % nh;
  const int KS = XB_KB * SF;
  float* W = sm;
  float* dWp = W + XB_F * SF;
  float* bv = dWp + XB_F * SF;
  float* dbp = bv + R4(XB_F);
  float* Q = dbp + R4(XB_F);
  float* X = Q + KS;
  float* T = X + KS;
  float* DO = T + KS;
  float* ZX = DO + KS;  // Z, then x-hat of Z
  float* RR = ZX + KS;
  float* G = RR + KS;
  float* ZB = G + KS;   // QW, then Zbar
  float* U = ZB + KS;
  float* GW = U + KS;
  float* DZB = GW + KS;
  float* DG = DZB + KS;
  float* DZ = DG + KS;
  float* DT = DZ + KS;
  float* A1 = DT + KS;
  float* M = A1 + XB_KB * SKK;
  float* PM = M + XB_KB * SKK;
  float* DE = PM + XB_KB * SKK;
  float* gs = DE + XB_KB * SKK;
  float* tokc = gs + R4(XB_KB);
  float* rsz = tokc + R4(XB_KB);
  float* cmz = rsz + R4(XB_KB);
  float* uG = cmz + R4(XB_KB);

  const int nmb = L / XB_KB;
  for (int e = tid; e < XB_F * SF; e += XB_NTB) dWp[e] = 0.f;
  for (int e = tid; e < XB_F; e += XB_NTB) dbp[e] = 0.f;
  for (int e = tid; e < XB_KB; e += XB_NTB)
    tokc[e] = (float)XB_BASE_LR * fmaxf(0.f, 1.f / (float)(e + 1) + tokd[e]) / (float)XB_F;
  const int lane = tid % LG, grp = tid / LG;
  const int c = tid % XB_F, rg = tid / XB_F;
  // Thread t owns rows r0 .. r0+BRF-1 of a [K][F] tile and rows a0 .. of
  // [F][F] (contiguous, so A^T B products read them as float4).
  const int r0 = rg * BRF, a0 = rg * (XB_F / BRG);
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
  const float* tr0 = trace + (long)bh * nmb * XB_TRS;

  float pq[PVB], pk[PVB], pv[PVB], pd[PVB], pw[PWB], pg = 0.f;
  auto fetch = [&](int n) {
#pragma unroll
    for (int r = 0; r < PVB; ++r) {
      const int e = tid + XB_NTB * r;
      if (e < XB_KB * XB_F) {
        const long o = (long)n * XB_KB * XB_F + e;
        pq[r] = ldf(q0[o]);
        pk[r] = ldf(k0[o]);
        pv[r] = ldf(v0[o]);
        pd[r] = do0[(long)(n * XB_KB + e / XB_F) * dst + e % XB_F];
      }
    }
#pragma unroll
    for (int r = 0; r < PWB; ++r) {
      const int e = tid + XB_NTB * r;
      if (e < BSTATE) pw[r] = tr0[(long)n * XB_TRS + e];
    }
    if (tid < XB_KB) pg = g0[(long)n * XB_KB + tid];
  };
  auto put = [&]() {
#pragma unroll
    for (int r = 0; r < PVB; ++r) {
      const int e = tid + XB_NTB * r;
      if (e < XB_KB * XB_F) {
        const int o = (e / XB_F) * SF + e % XB_F;
        Q[o] = pq[r];
        X[o] = pk[r];
        T[o] = pv[r] - pk[r];
        DO[o] = pd[r];
      }
    }
#pragma unroll
    for (int r = 0; r < PWB; ++r) {
      const int e = tid + XB_NTB * r;
      if (e < XB_F * XB_F) W[(e / XB_F) * SF + e % XB_F] = pw[r];
      else if (e < BSTATE) bv[e - XB_F * XB_F] = pw[r];
    }
    if (tid < XB_KB) gs[tid] = pg;
  };

  fetch(nmb - 1);
  for (int n = nmb - 1; n >= 0; --n) {
    put();
    __syncthreads();
    if (n > 0) fetch(n - 1);
    const float el = tokc[XB_KB - 1];  // e_j = el * gate_j

    {  // P1: Z, QW and U in one pass, so each W, dW' and row load feeds more FMAs
      float z[BRF], qw[BRF], u[BRF];
#pragma unroll
      for (int r = 0; r < BRF; ++r) z[r] = qw[r] = bv[c], u[r] = dbp[c];
#pragma unroll 2
      for (int k = 0; k < XB_F; k += 4) {
        const float w0 = W[k * SF + c], w1 = W[(k + 1) * SF + c], w2 = W[(k + 2) * SF + c], w3 = W[(k + 3) * SF + c];
        const float d0 = dWp[k * SF + c], d1 = dWp[(k + 1) * SF + c], d2 = dWp[(k + 2) * SF + c],
                    d3 = dWp[(k + 3) * SF + c];
#pragma unroll
        for (int r = 0; r < BRF; ++r) {
          const float4 x = *(const float4*)(X + (r0 + r) * SF + k), q = *(const float4*)(Q + (r0 + r) * SF + k);
          z[r] = fmaf(x.x, w0, fmaf(x.y, w1, fmaf(x.z, w2, fmaf(x.w, w3, z[r]))));
          qw[r] = fmaf(q.x, w0, fmaf(q.y, w1, fmaf(q.z, w2, fmaf(q.w, w3, qw[r]))));
          u[r] = fmaf(x.x, d0, fmaf(x.y, d1, fmaf(x.z, d2, fmaf(x.w, d3, u[r]))));
        }
      }
#pragma unroll
      for (int r = 0; r < BRF; ++r) {
        const int i = r0 + r;
        ZX[i * SF + c] = z[r];
        ZB[i * SF + c] = qw[r];
        U[i * SF + c] = u[r];
      }
      for (int e = tid; e < XB_KB * XB_KB; e += XB_NTB) {
        const int i = e / XB_KB, j = e % XB_KB;
        const float a = j <= i ? xb_dot(Q + i * SF, X + j * SF, XB_F) + 1.f : 0.f;
        A1[i * SKK + j] = a;
        M[i * SKK + j] = tokc[i] * gs[j] * a;
      }
    }
    __syncthreads();

    for (int i0 = 0; i0 < XB_KB; i0 += BNG) {  // P2
      const int i = i0 + grp, ii = i < XB_KB ? i : XB_KB - 1;
      float rs, cm;
      xb_ln_grad_fwd(ZX + ii * SF, T + ii * SF, ZX + ii * SF, RR + ii * SF, G + ii * SF, lw, lb, lane,
                     i < XB_KB, rs, cm);
      const float gu = xb_row_dot(G + ii * SF, U + ii * SF, lane);
      if (i < XB_KB && lane == 0) rsz[i] = rs, cmz[i] = cm, uG[i] = gu;
    }
    __syncthreads();

    {  // P3
      float mg[BRF], gw[BRF];
#pragma unroll
      for (int r = 0; r < BRF; ++r) mg[r] = gw[r] = 0.f;
      xb_mm<BRF, false>(mg, M, SKK, G, SF, XB_KB, c, r0, 1);
      xb_mm<BRF, true>(gw, G, SF, dWp, SF, XB_F, c, r0, 1);
#pragma unroll
      for (int r = 0; r < BRF; ++r) {
        const int i = r0 + r;
        ZB[i * SF + c] -= mg[r];
        GW[i * SF + c] = gw[r];
      }
    }
    __syncthreads();

    for (int i0 = 0; i0 < XB_KB; i0 += BNG) {  // P4
      const int i = i0 + grp, ii = i < XB_KB ? i : XB_KB - 1;
      xb_ln_out_bwd(ZB + ii * SF, DO + ii * SF, DZB + ii * SF, lw, lane, i < XB_KB, dgam, dbet);
    }
    __syncthreads();

    {  // P5
      for (int e = tid; e < XB_KB * XB_KB; e += XB_NTB) {
        const int i = e / XB_KB, j = e % XB_KB;
        const float dm = j <= i ? -xb_dot(DZB + i * SF, G + j * SF, XB_F) : 0.f;
        float de = dm * A1[i * SKK + j];
        if (i == XB_KB - 1) de -= uG[j];  // the update's use of eta_last
        DE[i * SKK + j] = de;
        PM[i * SKK + j] = dm * tokc[i] * gs[j];
      }
      float mt[BRF];
#pragma unroll
      for (int r = 0; r < BRF; ++r) mt[r] = 0.f;
      xb_mmt<BRF>(mt, M, SKK, DZB, SF, XB_KB, c, r0, 1);
#pragma unroll
      for (int r = 0; r < BRF; ++r) {
        const int i = r0 + r;
        DG[i * SF + c] = -mt[r] - el * gs[i] * U[i * SF + c];
      }
    }
    __syncthreads();

    float dq[BRF], dx[BRF];
    {  // P6
#pragma unroll
      for (int r = 0; r < BRF; ++r) dq[r] = DO[(r0 + r) * SF + c], dx[r] = 0.f;
      xb_mm<BRF, true>(dq, DZB, SF, W, SF, XB_F, c, r0, 1);
      xb_mm<BRF, false>(dq, PM, SKK, X, SF, XB_KB, c, r0, 1);
      xb_mmt<BRF>(dx, PM, SKK, Q, SF, XB_KB, c, r0, 1);
#pragma unroll
      for (int r = 0; r < BRF; ++r) {
        const int j = r0 + r;
        dx[r] -= el * gs[j] * GW[j * SF + c];
      }
      for (int i0 = 0; i0 < XB_KB; i0 += BNG) {
        const int i = i0 + grp, ii = i < XB_KB ? i : XB_KB - 1;
        xb_ln_grad_bwd(DG + ii * SF, ZX + ii * SF, RR + ii * SF, G + ii * SF, T + ii * SF, rsz[ii],
                       cmz[ii], DZ + ii * SF, DT + ii * SF, lw, lb, lane, i < XB_KB, dgam, dbet);
      }
      if (tid < XB_KB) {  // d(tok[i]) before the base_lr/f factor
        float s = 0.f;
        for (int j = 0; j <= tid; ++j) s = fmaf(DE[tid * SKK + j], gs[j], s);
        dtok += s;
      } else if (tid < 2 * XB_KB) {  // d(gate[j])
        const int j = tid - XB_KB;
        float s = 0.f;
        for (int i = j; i < XB_KB; ++i) s = fmaf(DE[i * SKK + j], tokc[i], s);
        dgate[(long)bh * L + n * XB_KB + j] = s;
      }
    }
    __syncthreads();

    {  // P7
      xb_mm<BRF, true>(dx, DZ, SF, W, SF, XB_F, c, r0, 1);
      const long o0 = in0 + (long)n * XB_KB * XB_F;
#pragma unroll
      for (int r = 0; r < BRF; ++r) {
        const int i = r0 + r;
        const float dt = DT[i * SF + c];
        dxq[o0 + i * XB_F + c] = dq[r];
        dxk[o0 + i * XB_F + c] = dx[r] - dt;
        dxv[o0 + i * XB_F + c] = dt;
      }
      float dw[XB_F / BRG];
#pragma unroll
      for (int r = 0; r < XB_F / BRG; ++r) dw[r] = 0.f;
      xb_mmt<XB_F / BRG>(dw, Q, SF, DZB, SF, XB_KB, c, a0, 1);
      xb_mmt<XB_F / BRG>(dw, X, SF, DZ, SF, XB_KB, c, a0, 1);
#pragma unroll
      for (int r = 0; r < XB_F / BRG; ++r) dWp[(a0 + r) * SF + c] += dw[r];
      if (rg == 0) {
        float s = 0.f;
        for (int j = 0; j < XB_KB; ++j) s += DZB[j * SF + c] + DZ[j * SF + c];
        dbp[c] += s;
      }
    }
    __syncthreads();
  }
  // Parameters shared by the batch's sequences: their gradients sum over it.
  for (int e = tid; e < XB_F * XB_F; e += XB_NTB)
    atomicAdd(gW1 + (long)hd * XB_F * XB_F + e, dWp[(e / XB_F) * SF + e % XB_F]);
  for (int e = tid; e < XB_F; e += XB_NTB) atomicAdd(gb1 + hd * XB_F + e, dbp[e]);
#pragma unroll
  for (int e = 0; e < EPL; ++e) {
    atomicAdd(glnw + hd * XB_F + lane + LG * e, dgam[e]);
    atomicAdd(glnb + hd * XB_F + lane + LG * e, dbet[e]);
  }
  if (tid < XB_KB && 1.f / (float)(tid + 1) + tokd[tid] > 0.f)
    atomicAdd(gtokd + tid, dtok * (float)XB_BASE_LR / (float)XB_F);
}
XB_EXPORT(xb_inner_linear_bwd)
