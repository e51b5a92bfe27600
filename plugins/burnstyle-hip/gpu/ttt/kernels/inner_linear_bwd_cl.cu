// Backward of the linear inner model over a whole sequence, split over a
// thread-block cluster of XB_CS CTAs per (batch, head) as the forward's
// cluster kernel is (inner_linear_cl.cu; it must be in the same program for
// FC, SWT, AP, xb_csum and the XB_CL_* macros). CTA rk owns the FC columns
// C_rk = [rk*FC, (rk+1)*FC) of W1, b1, dW', db' and of every [K][F] tile of
// the output space (Z, G, Zbar, dZbar, dG, dZ, dV); Q and K rows are staged
// whole. Thread t owns element (i = t / FC, c = t % FC) of those tiles.
//
// The forward saved each step's row statistics and Zbar beside its state
// (XB_TRS: mean and 1/s of Z, sum g and sum g*xh of the LayerNorm
// gradient, mean and 1/s of Zbar; Zbar whole), so Z, G, Zbar and the
// output LayerNorm's backward (its row sums over Zbar and dO, loaded whole)
// need no exchange. What crosses CTAs per step (docs/ttt-backward.md for
// the formulas; FLOOR.md "The inner backward on a cluster" for the
// arithmetic), two cluster rounds:
//   R2  dM = -dZbar G^T partials over the owned columns ([K][K]), and per
//       row sum u, sum u*xh, sum u*G (the LayerNorm gradient's backward)
//       and sum G*U (the update's use of eta_last)
//   R3  per row sum dx, sum dx*xh (its second reduction)
// The products into the input space (dQ = dZbar W^T + ..., dK = dZ W^T -
// eta G dW'^T + ...) contract over the owned columns: each CTA sends the
// partial of owner s's columns to s, written before the next step's R2 and
// summed by s after its R3 (double-buffered by step parity). Global loads
// and stores run between R3 and the next R2, the longest window, since a
// cluster arrive (release) waits for them.
#define SG (FC + 4)                           // row stride of owned-column tiles [K][FC]
#define NTC (XB_KB * FC)                      // threads: one per owned element
#define PQC ((XB_KB * XB_F + NTC - 1) / NTC)  // Q, K elements prefetched per thread
#define PWC ((XB_F * FC + NTC - 1) / NTC)     // owned W elements prefetched per thread
#define PRT (XB_KB * XB_F / NTC)              // rows per thread of the partials (= XB_CS)
#define LINBC_SMEM_FLOATS                                                             \
  (2 * FC * SWT + 2 * R4(FC) + 2 * XB_KB * SF + 3 * XB_KB * SG + 4 * XB_KB * XB_KB + \
   3 * R4(XB_KB) + 8 * XB_KB + XB_CS * (XB_KB * XB_KB + 4 * XB_KB) + XB_CS * XB_KB * 2 + \
   4 * XB_CS * XB_KB * FC)

// Sum over the KB consecutive lanes of a row of a [K][K] tile (KB a power
// of two up to 32; K*K a multiple of 32, so whole warps run the loop).
__device__ __forceinline__ float xb_ksum(float v) {
#pragma unroll
  for (int o = XB_KB / 2; o > 0; o >>= 1) v += XB_SHFL_XOR(v, o);
  return v;
}

XB_KERNEL void __launch_bounds__(NTC, 1)
    xb_inner_linear_bwd_cl(const act_t* __restrict__ xq, const act_t* __restrict__ xk,
                           const act_t* __restrict__ xv, const float* __restrict__ gate,
                           const float* __restrict__ trace, const float* __restrict__ lnw,
                           const float* __restrict__ lnb, const float* __restrict__ tokd,
                           const float* __restrict__ dout, long dsb, long dsh, long dst,
                           float* __restrict__ dxq, float* __restrict__ dxk, float* __restrict__ dxv,
                           float* __restrict__ dgate, float* gW1, float* gb1, float* glnw,
                           float* glnb, float* gtokd, int nh, int L) {
  XB_DYN_SMEM(sm);
#ifdef XB_EMU
  emu_check_smem(LINBC_SMEM_FLOATS * 4);
#endif
  const int tid = threadIdx.x, rk = XB_CL_RANK(), bh = blockIdx.x / XB_CS, b = bh / nh,
            hd = bh % nh;
  const int i = tid / FC, c = tid % FC, cg = rk * FC + c;  // element layout
  const int ap = tid % XB_F, ip0 = (tid / XB_F) * PRT;      // partials: column ap, rows ip0..
  const int aw = (tid / FC) * AP;                           // dW' update: rows aw.. of column c
  float* Wt = sm;                  // [FC][SWT]: W[:, cg] transposed
  float* dWt = Wt + FC * SWT;      // [FC][SWT]: dW'[:, cg] transposed
  float* bv = dWt + FC * SWT;
  float* dbp = bv + R4(FC);
  float* Q = dbp + R4(FC);         // [K][SF]
  float* X = Q + XB_KB * SF;       // [K][SF]
  float* G = X + XB_KB * SF;       // [K][SG]
  float* DZB = G + XB_KB * SG;
  float* DZ = DZB + XB_KB * SG;
  float* A1 = DZ + XB_KB * SG;     // [K][K]
  float* M = A1 + XB_KB * XB_KB;
  float* PM = M + XB_KB * XB_KB;
  float* DE = PM + XB_KB * XB_KB;
  float* gs = DE + XB_KB * XB_KB;
  float* tokc = gs + R4(XB_KB);
  float* dtk = tokc + R4(XB_KB);   // d(tok) before the base_lr/f factor (rank 0)
  float* sst = dtk + R4(XB_KB);    // [K][8]: the forward's row statistics
  float* r2 = sst + 8 * XB_KB;     // [CS][K*K] dM, then [CS][K] float4
  float* r2b = r2 + XB_CS * XB_KB * XB_KB;
  float* r3 = r2 + XB_CS * (XB_KB * XB_KB + 4 * XB_KB);  // [CS][K] float2
  float* rp = r3 + XB_CS * XB_KB * 2;  // [2][CS][2][K][FC]: dQ, dK partials by step parity

  const int nmb = L / XB_KB;
  for (int e = tid; e < FC * SWT; e += NTC) dWt[e] = 0.f;
  for (int e = tid; e < FC; e += NTC) dbp[e] = 0.f;
  for (int e = tid; e < XB_KB; e += NTC) {
    tokc[e] = (float)XB_BASE_LR * fmaxf(0.f, 1.f / (float)(e + 1) + tokd[e]) / (float)XB_F;
    dtk[e] = 0.f;
  }
  const float lw = lnw[hd * XB_F + cg], lb = lnb[hd * XB_F + cg];
  float lws[XB_CS];  // gamma of columns c + FC*s: the row's whole dO and Zbar come in those
#pragma unroll
  for (int s = 0; s < XB_CS; ++s) lws[s] = lnw[hd * XB_F + c + FC * s];
  float dgam = 0.f, dbet = 0.f;
  const long in0 = (long)bh * L * XB_F;
  const act_t *q0 = xq + in0, *k0 = xk + in0, *v0 = xv + in0;
  const float* g0 = gate + (long)bh * L;
  const float* do0 = dout + b * dsb + hd * dsh;
  const float* tr0 = trace + (long)bh * nmb * XB_TRS;
  // Lane c < XB_CS of each row writes this CTA's slot of that row in CTA c.
  const int peer = c < XB_CS ? c : 0;
  float* r2w = XB_CL_MAP(r2b + (rk * XB_KB + i) * 4, peer);
  float* r3w = XB_CL_MAP(r3 + (rk * XB_KB + i) * 2, peer);

  float pq[PQC], pk[PQC], pw[PWC], pz[XB_CS], pd[XB_CS], pb = 0.f, pv = 0.f, pg = 0.f;
  float4 ps;
  ps.x = ps.y = ps.z = ps.w = 0.f;
  auto fetch = [&](int n) {
    const long base = (long)n * XB_KB * XB_F;
#pragma unroll
    for (int r = 0; r < PQC; ++r) {
      const int e = tid + NTC * r;
      if (e < XB_KB * XB_F) pq[r] = ldf(q0[base + e]), pk[r] = ldf(k0[base + e]);
    }
    const float* tr = tr0 + (long)n * XB_TRS;
#pragma unroll
    for (int r = 0; r < PWC; ++r) {
      const int e = tid + NTC * r;
      if (e < XB_F * FC) pw[r] = tr[(e / FC) * XB_F + rk * FC + e % FC];
    }
    if (tid < FC) pb = tr[XB_F * XB_F + rk * FC + tid];
    if (tid < 2 * XB_KB) ps = *(const float4*)(tr + XB_F * XB_F + XB_F + 4 * tid);
    pv = ldf(v0[base + i * XB_F + cg]);
#pragma unroll
    for (int s = 0; s < XB_CS; ++s) {
      pd[s] = do0[(long)(n * XB_KB + i) * dst + c + FC * s];
      pz[s] = tr[XB_TRZ + i * XB_F + c + FC * s];
    }
    if (tid < XB_KB) pg = g0[(long)n * XB_KB + tid];
  };
  auto put = [&]() {
#pragma unroll
    for (int r = 0; r < PQC; ++r) {
      const int e = tid + NTC * r;
      if (e < XB_KB * XB_F) {
        const int o = (e / XB_F) * SF + e % XB_F;
        Q[o] = pq[r];
        X[o] = pk[r];
      }
    }
#pragma unroll
    for (int r = 0; r < PWC; ++r) {
      const int e = tid + NTC * r;
      if (e < XB_F * FC) Wt[(e % FC) * SWT + e / FC] = pw[r];
    }
    if (tid < FC) bv[tid] = pb;
    if (tid < 2 * XB_KB) *(float4*)(sst + 4 * tid) = ps;
    if (tid < XB_KB) gs[tid] = pg;
  };
  // The owner's sum of the partials of one step (parity par) into dQ, dK.
  auto finish = [&](int n, int par, float cq, float cx) {
    float sq = cq, sx = cx;
#pragma unroll
    for (int s = 0; s < XB_CS; ++s) {
      sq += rp[(((par * XB_CS + s) * 2 + 0) * XB_KB + i) * FC + c];
      sx += rp[(((par * XB_CS + s) * 2 + 1) * XB_KB + i) * FC + c];
    }
    const long o = in0 + (long)(n * XB_KB + i) * XB_F + cg;
    dxq[o] = sq;
    dxk[o] = sx;
  };

  fetch(nmb - 1);
  XB_CL_ARRIVE();  // every CTA of the cluster runs before any remote write
  XB_CL_WAIT();
  float cq = 0.f, cx = 0.f;  // the owner's local dQ, dK terms of the step after this one
  for (int n = nmb - 1; n >= 0; --n) {
    put();
    const float tv = pv;  // V now; T = V - K below, after the barrier
    float dov = 0.f, zb = 0.f;  // the owned element's (an unrolled pick: pd[rk] would go to local memory)
#pragma unroll
    for (int s = 0; s < XB_CS; ++s)
      if (s == rk) dov = pd[s], zb = pz[s];
    __syncthreads();
    const float el = tokc[XB_KB - 1];  // e_j = el * gate_j
    const float t = tv - X[i * SF + cg];
    const float mu = sst[i * 8 + 0], rs = sst[i * 8 + 1], sg = sst[i * 8 + 2], sgx = sst[i * 8 + 3];
    const float mub = sst[i * 8 + 4], rsb = sst[i * 8 + 5];
    // The output LayerNorm's row sums over the whole row: sum d, sum d*xhb
    // (d = dO*gamma) from the forward's Zbar.
    float sdp = 0.f, sdx = 0.f;
#pragma unroll
    for (int s = 0; s < XB_CS; ++s) {
      const float dd = pd[s] * lws[s];
      sdp += dd;
      sdx = fmaf(dd, pz[s] - mub, sdx);
    }
    sdp = xb_csum(sdp);
    sdx = xb_csum(sdx) * rsb;

    // P1: Z and U of the owned element; the causal coefficients; G; dZbar.
    float z, u;
    {
      float z1 = 0.f, u1 = 0.f;
      z = bv[c];
      u = dbp[c];
      const float* xr = X + i * SF;
      const float* wr = Wt + c * SWT;
      const float* dr = dWt + c * SWT;
#pragma unroll 4
      for (int k = 0; k < XB_F; k += 8) {
        const float4 w0 = *(const float4*)(wr + k), w1 = *(const float4*)(wr + k + 4);
        const float4 d0 = *(const float4*)(dr + k), d1 = *(const float4*)(dr + k + 4);
        const float4 a0 = *(const float4*)(xr + k), a1 = *(const float4*)(xr + k + 4);
        z = fmaf(a0.x, w0.x, z); z = fmaf(a0.y, w0.y, z); z = fmaf(a0.z, w0.z, z); z = fmaf(a0.w, w0.w, z);
        z1 = fmaf(a1.x, w1.x, z1); z1 = fmaf(a1.y, w1.y, z1); z1 = fmaf(a1.z, w1.z, z1); z1 = fmaf(a1.w, w1.w, z1);
        u = fmaf(a0.x, d0.x, u); u = fmaf(a0.y, d0.y, u); u = fmaf(a0.z, d0.z, u); u = fmaf(a0.w, d0.w, u);
        u1 = fmaf(a1.x, d1.x, u1); u1 = fmaf(a1.y, d1.y, u1); u1 = fmaf(a1.z, d1.z, u1); u1 = fmaf(a1.w, d1.w, u1);
      }
      z += z1;
      u += u1;
    }
    for (int e = tid; e < XB_KB * XB_KB; e += NTC) {
      const int ii = e / XB_KB, j = e % XB_KB;
      float a = 0.f;
      if (j <= ii) {
        a = 1.f + xb_dot(Q + ii * SF, X + j * SF, XB_F);
      }
      A1[e] = a;
      M[e] = tokc[ii] * gs[j] * a;
    }
    const float xh = (z - mu) * rs;
    const float rr = (lw * xh + lb - t) * lw;
    const float gv = ((float)XB_F * rr - sg - xh * sgx) * (rs * (1.f / (float)XB_F));
    G[i * SG + c] = gv;
    const float xhb = (zb - mub) * rsb;
    DZB[i * SG + c] = (dov * lw - (sdp + xhb * sdx) * (1.f / (float)XB_F)) * rsb;
    dgam = fmaf(dov, xhb, dgam);
    dbet += dov;
    __syncthreads();

    // P2: dG of the owned element, the row sums of its LayerNorm backward,
    // the dM partials.
    float dg = -el * gs[i] * u;
#pragma unroll
    for (int k = 0; k < XB_KB; ++k) dg = fmaf(-M[k * XB_KB + i], DZB[k * SG + c], dg);
    const float uu = dg * rs;
    {
      float4 s;
      s.x = xb_csum(uu);
      s.y = xb_csum(uu * xh);
      s.z = xb_csum(uu * gv);
      s.w = xb_csum(gv * u);
      if (c < XB_CS) *(float4*)r2w = s;
    }
    for (int e = tid; e < XB_KB * XB_KB; e += NTC) {
      const int ii = e / XB_KB, j = e % XB_KB;
      float v = 0.f;
      if (j <= ii) {
#pragma unroll
        for (int k = 0; k < FC; k += 4) {
          const float4 x = *(const float4*)(DZB + ii * SG + k), y = *(const float4*)(G + j * SG + k);
          v = fmaf(x.x, y.x, v); v = fmaf(x.y, y.y, v); v = fmaf(x.z, y.z, v); v = fmaf(x.w, y.w, v);
        }
      }
#pragma unroll
      for (int s = 0; s < XB_CS; ++s) XB_CL_MAP(r2 + rk * XB_KB * XB_KB + e, s)[0] = -v;
    }
    XB_CL_ARRIVE();  // R2 (also carries the previous step's dQ, dK partials)
    // Meanwhile: this CTA's partials of dQ (dZbar W^T) and of dK (-eta G dW'^T,
    // dW' before this step's update) over its columns, for every column.
    float pdq[PRT], pdx[PRT];
    {
#pragma unroll
      for (int r = 0; r < PRT; ++r) pdq[r] = pdx[r] = 0.f;
#pragma unroll
      for (int k = 0; k < FC; k += 4) {
        const float w0 = Wt[k * SWT + ap], w1 = Wt[(k + 1) * SWT + ap], w2 = Wt[(k + 2) * SWT + ap],
                    w3 = Wt[(k + 3) * SWT + ap];
        const float d0 = dWt[k * SWT + ap], d1 = dWt[(k + 1) * SWT + ap], d2 = dWt[(k + 2) * SWT + ap],
                    d3 = dWt[(k + 3) * SWT + ap];
#pragma unroll
        for (int r = 0; r < PRT; ++r) {
          const float4 x = *(const float4*)(DZB + (ip0 + r) * SG + k), y = *(const float4*)(G + (ip0 + r) * SG + k);
          pdq[r] = fmaf(x.x, w0, fmaf(x.y, w1, fmaf(x.z, w2, fmaf(x.w, w3, pdq[r]))));
          pdx[r] = fmaf(y.x, d0, fmaf(y.y, d1, fmaf(y.z, d2, fmaf(y.w, d3, pdx[r]))));
        }
      }
#pragma unroll
      for (int r = 0; r < PRT; ++r) pdx[r] *= -el * gs[ip0 + r];
    }
    XB_CL_WAIT();

    // P3: dM, dEta, P = dM*eta; the LayerNorm gradient's backward up to its
    // second reduction.
    for (int e = tid; e < XB_KB * XB_KB; e += NTC) {
      const int ii = e / XB_KB, j = e % XB_KB;
      float dm = 0.f;
#pragma unroll
      for (int s = 0; s < XB_CS; ++s) dm += r2[s * XB_KB * XB_KB + e];
      float de = dm * A1[e];
      if (ii == XB_KB - 1)  // the update's use of eta_last: sum G*U of row j
        for (int s = 0; s < XB_CS; ++s) de -= r2b[(s * XB_KB + j) * 4 + 3];
      DE[e] = de;
      PM[e] = dm * tokc[ii] * gs[j];
    }
    float su = 0.f, sux = 0.f, sug = 0.f;
#pragma unroll
    for (int s = 0; s < XB_CS; ++s) {
      const float4 v = *(const float4*)(r2b + (s * XB_KB + i) * 4);
      su += v.x, sux += v.y, sug += v.z;
    }
    su *= 1.f / (float)XB_F;
    sux *= 1.f / (float)XB_F;
    const float dr = uu - su - xh * sux;
    const float dxl = lw * lw * dr - sgx * (1.f / (float)XB_F) * uu - sux * rr;
    const float dtv = -dr * lw;
    dgam = fmaf(dr, 2.f * lw * xh + lb - t, dgam);
    dbet = fmaf(dr, lw, dbet);
    {
      float2 s;
      s.x = xb_csum(dxl);
      s.y = xb_csum(dxl * xh);
      if (c < XB_CS) *(float2*)r3w = s;
    }
    XB_CL_ARRIVE();  // R3
    __syncthreads();  // PM, DE
    // Meanwhile, the global traffic: the step after this one's dQ, dK (its
    // partials came with R1), this step's dV and d(gate), the next loads.
    if (n < nmb - 1) finish(n + 1, (n + 1) & 1, cq, cx);
    const long o = in0 + (long)(n * XB_KB + i) * XB_F + cg;
    dxv[o] = dtv;
    cq = dov;
    cx = -dtv;
#pragma unroll
    for (int j = 0; j < XB_KB; ++j) {
      cq = fmaf(PM[i * XB_KB + j], X[j * SF + cg], cq);
      cx = fmaf(PM[j * XB_KB + i], Q[j * SF + cg], cx);
    }
    if (rk == 0) {  // d(tok[i]) = sum_j dEta[i][j] gate[j], d(gate[j]) = sum_i dEta[i][j] tok[i]
      for (int e = tid; e < XB_KB * XB_KB; e += NTC) {
        const int ii = e / XB_KB, j = e % XB_KB;
        const float st = xb_ksum(DE[e] * gs[j]);
        const float sgt = xb_ksum(DE[j * XB_KB + ii] * tokc[j]);  // here ii is the gate's index
        if (j == 0) {
          dtk[ii] += st;
          dgate[(long)bh * L + n * XB_KB + ii] = sgt;
        }
      }
    }
    if (n > 0) fetch(n - 1);
    XB_CL_WAIT();

    // P4: dZ; the partials to their owners; dW', db'.
    {
      float sd = 0.f, sdx = 0.f;
#pragma unroll
      for (int s = 0; s < XB_CS; ++s) {
        const float2 v = *(const float2*)(r3 + (s * XB_KB + i) * 2);
        sd += v.x, sdx += v.y;
      }
      DZ[i * SG + c] = (dxl - (sd + xh * sdx) * (1.f / (float)XB_F)) * rs -
                       sug * xh * (1.f / (float)XB_F);
    }
    __syncthreads();
    {
#pragma unroll
      for (int k = 0; k < FC; k += 4) {
        const float w0 = Wt[k * SWT + ap], w1 = Wt[(k + 1) * SWT + ap], w2 = Wt[(k + 2) * SWT + ap],
                    w3 = Wt[(k + 3) * SWT + ap];
#pragma unroll
        for (int r = 0; r < PRT; ++r) {
          const float4 x = *(const float4*)(DZ + (ip0 + r) * SG + k);
          pdx[r] = fmaf(x.x, w0, fmaf(x.y, w1, fmaf(x.z, w2, fmaf(x.w, w3, pdx[r]))));
        }
      }
      const int par = n & 1, s = ap / FC, cl = ap % FC;
      float* dst0 = XB_CL_MAP(rp + (((par * XB_CS + rk) * 2 + 0) * XB_KB) * FC + cl, s);
      float* dst1 = XB_CL_MAP(rp + (((par * XB_CS + rk) * 2 + 1) * XB_KB) * FC + cl, s);
#pragma unroll
      for (int r = 0; r < PRT; ++r) {
        dst0[(ip0 + r) * FC] = pdq[r];
        dst1[(ip0 + r) * FC] = pdx[r];
      }
    }
    {
      float dw[AP];
#pragma unroll
      for (int r = 0; r < AP; ++r) dw[r] = 0.f;
#pragma unroll 4
      for (int j = 0; j < XB_KB; ++j) {
        const float zb1 = DZB[j * SG + c], z1 = DZ[j * SG + c];
#pragma unroll
        for (int r = 0; r < AP; ++r) dw[r] = fmaf(Q[j * SF + aw + r], zb1, fmaf(X[j * SF + aw + r], z1, dw[r]));
      }
#pragma unroll
      for (int r = 0; r < AP; ++r) dWt[c * SWT + aw + r] += dw[r];
      if (tid < FC) {
        float s = 0.f;
        for (int j = 0; j < XB_KB; ++j) s += DZB[j * SG + tid] + DZ[j * SG + tid];
        dbp[tid] += s;
      }
    }
    __syncthreads();
  }
  XB_CL_ARRIVE();  // the first step's partials
  XB_CL_WAIT();
  finish(0, 0, cq, cx);
  // Parameters shared by the batch's sequences: their gradients sum over it.
  for (int e = tid; e < XB_F * FC; e += NTC) {
    const int a = e / FC, cc = e % FC;
    atomicAdd(gW1 + (long)hd * XB_F * XB_F + (long)a * XB_F + rk * FC + cc, dWt[cc * SWT + a]);
  }
  if (tid < FC) atomicAdd(gb1 + hd * XB_F + rk * FC + tid, dbp[tid]);
  atomicAdd(glnw + hd * XB_F + cg, dgam);
  atomicAdd(glnb + hd * XB_F + cg, dbet);
  __syncthreads();  // dtk
  if (rk == 0 && tid < XB_KB && 1.f / (float)(tid + 1) + tokd[tid] > 0.f)
    atomicAdd(gtokd + tid, dtk[tid] * (float)XB_BASE_LR / (float)XB_F);
  // No CTA leaves while another may still write into its shared memory: the
  // last remote writes came before the last cluster barrier.
}
XB_EXPORT(xb_inner_linear_bwd_cl)
