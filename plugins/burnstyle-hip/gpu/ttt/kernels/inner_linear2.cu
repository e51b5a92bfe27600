// The linear inner model, second layout (default): a group of LG2 lanes owns
// whole rows of the mini-batch, so each row's LayerNorm statistics are
// reduced in registers by the lanes that just computed the row. Two barriers
// per mini-batch instead of four phases:
//   S1  per owned row i: Z = K W + b and QW = Q W + b (old W, kept in
//       registers), G = LN-L2 gradient of Z, coefficients c[i][j]
//   --- barrier: every row's G and c visible
//   S2  per owned row: Zbar = QW - c @ G, out = Q + LN(Zbar) to memory;
//       W -= K^T (eta_last * G), b -= sum; next mini-batch's rows in
//   --- barrier: new W and rows visible
// Lane l of a group holds columns l*EP2 .. l*EP2+EP2-1 (contiguous).
#define LG2 XB_LG
#define EP2 (XB_F / LG2)
#define NG2 (XB_NT / LG2)                   // row groups in the block
#define RW2 ((XB_KB + NG2 - 1) / NG2)       // rows per group
#define LIN_STAGE (3 * XB_KB * SF + XB_F * SKT + R4(XB_KB))
#define LIN2_SMEM_FLOATS \
  (XB_F * XB_F + R4(XB_F) + 2 * LIN_STAGE + XB_KB * SF + R4(XB_KB * XB_KB) + 2 * R4(XB_KB))

// EP2 consecutive floats at p into v (one vector load where it fits).
__device__ __forceinline__ void xb_ldv(const float* p, float* v) {
  if constexpr (EP2 == 4) {
    const float4 t = *(const float4*)p;
    v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w;
  } else if constexpr (EP2 == 2) {
    const float2 t = *(const float2*)p;
    v[0] = t.x; v[1] = t.y;
  } else {
#pragma unroll
    for (int e = 0; e < EP2; ++e) v[e] = p[e];
  }
}

__device__ __forceinline__ float xb_g2sum(float v) {
#pragma unroll
  for (int o = LG2 / 2; o > 0; o >>= 1) v += XB_SHFL_XOR(v, o);
  return v;
}

XB_KERNEL void __launch_bounds__(XB_NT, 1)
    xb_inner_linear2(const act_t* __restrict__ xq, const act_t* __restrict__ xk,
                     const act_t* __restrict__ xv, const float* __restrict__ gate,
                     const float* __restrict__ W1, const float* __restrict__ b1,
                     const float* __restrict__ lnw, const float* __restrict__ lnb,
                     const float* __restrict__ tokd, act_t* __restrict__ out, long osb, long osh,
                     long ost, int nh, int L, unsigned long long* __restrict__ prof) {
  XB_DYN_SMEM(sm);
#ifdef XB_EMU
  emu_check_smem(LIN2_SMEM_FLOATS * 4);
#endif
  const int tid = threadIdx.x, bh = blockIdx.x, b = bh / nh, hd = bh % nh;
  float* W = sm;
  float* bv = W + XB_F * XB_F;
  float* st = bv + R4(XB_F);
  float* G = st + 2 * LIN_STAGE;
  float* Cc = G + XB_KB * SF;
  float* tokc = Cc + R4(XB_KB * XB_KB);
  float* etl = tokc + R4(XB_KB);

  for (int e = tid; e < XB_F * XB_F; e += XB_NT) W[e] = W1[(long)hd * XB_F * XB_F + e];
  for (int e = tid; e < XB_F; e += XB_NT) bv[e] = b1[hd * XB_F + e];
  for (int i = tid; i < XB_KB; i += XB_NT)
    tokc[i] = (float)XB_BASE_LR * fmaxf(0.f, 1.f / (float)(i + 1) + tokd[i]) / (float)XB_F;
  const int l = tid % LG2, gi = tid / LG2, c0 = l * EP2;
  float lw[EP2], lb[EP2];
#pragma unroll
  for (int e = 0; e < EP2; ++e) {
    lw[e] = lnw[hd * XB_F + c0 + e];
    lb[e] = lnb[hd * XB_F + c0 + e];
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
  long long tick = prof ? clock64() : 0, acc1 = 0, acc2 = 0;

  for (int n = 0; n < nmb; ++n) {
    float* Q = st + (n & 1) * LIN_STAGE;
    float* K = Q + XB_KB * SF;
    float* T = K + XB_KB * SF;
    float* Kt = T + XB_KB * SF;
    float* gs = Kt + XB_F * SKT;
    float* Qn = st + ((n + 1) & 1) * LIN_STAGE;
    if (n + 1 < nmb) xb_fetch(pf, q0, k0, v0, g0, n + 1);

    // S1. Rows past the tile (when groups outnumber rows) compute a copy of
    // the last row and store nothing, so every lane joins every shuffle.
    int row[RW2];
    float z[RW2][EP2], q[RW2][EP2];
    {
      float bc[EP2];
      xb_ldv(bv + c0, bc);
#pragma unroll
      for (int r = 0; r < RW2; ++r) {
        const int i = gi + NG2 * r;
        row[r] = i < XB_KB ? i : XB_KB - 1;
#pragma unroll
        for (int e = 0; e < EP2; ++e) z[r][e] = q[r][e] = bc[e];
      }
#pragma unroll XB_UNROLL
      for (int k = 0; k < XB_F; k += 4) {
        float w[4][EP2];
#pragma unroll
        for (int u = 0; u < 4; ++u) xb_ldv(W + (k + u) * XB_F + c0, w[u]);
#pragma unroll
        for (int r = 0; r < RW2; ++r) {
          const float4 kk = *(const float4*)(K + row[r] * SF + k);
          const float4 qq = *(const float4*)(Q + row[r] * SF + k);
#pragma unroll
          for (int e = 0; e < EP2; ++e) {
            z[r][e] = fmaf(kk.x, w[0][e], z[r][e]); z[r][e] = fmaf(kk.y, w[1][e], z[r][e]);
            z[r][e] = fmaf(kk.z, w[2][e], z[r][e]); z[r][e] = fmaf(kk.w, w[3][e], z[r][e]);
            q[r][e] = fmaf(qq.x, w[0][e], q[r][e]); q[r][e] = fmaf(qq.y, w[1][e], q[r][e]);
            q[r][e] = fmaf(qq.z, w[2][e], q[r][e]); q[r][e] = fmaf(qq.w, w[3][e], q[r][e]);
          }
        }
      }
      // LN-L2 gradient of each owned row; the rows' reductions interleave.
      float mu[RW2], rs[RW2], sg[RW2], sgx[RW2], xh[RW2][EP2], g[RW2][EP2];
#pragma unroll
      for (int r = 0; r < RW2; ++r) {
        float s = 0.f;
#pragma unroll
        for (int e = 0; e < EP2; ++e) s += z[r][e];
        mu[r] = s;
      }
#if XB_ONEPASS  // mean and mean square in one round of shuffles (half the chain)
#pragma unroll
      for (int r = 0; r < RW2; ++r) {
        float v = 0.f;
#pragma unroll
        for (int e = 0; e < EP2; ++e) v += z[r][e] * z[r][e];
        mu[r] = xb_g2sum(mu[r]) * (1.f / (float)XB_F);
        v = xb_g2sum(v) * (1.f / (float)XB_F);
        rs[r] = rsqrtf(fmaxf(v - mu[r] * mu[r], 0.f) + XB_EPS);
      }
#else
#pragma unroll
      for (int r = 0; r < RW2; ++r) mu[r] = xb_g2sum(mu[r]) * (1.f / (float)XB_F);
#pragma unroll
      for (int r = 0; r < RW2; ++r) {
        float v = 0.f;
#pragma unroll
        for (int e = 0; e < EP2; ++e) v += (z[r][e] - mu[r]) * (z[r][e] - mu[r]);
        rs[r] = v;
      }
#pragma unroll
      for (int r = 0; r < RW2; ++r) rs[r] = rsqrtf(xb_g2sum(rs[r]) * (1.f / (float)XB_F) + XB_EPS);
#endif
#pragma unroll
      for (int r = 0; r < RW2; ++r) {
        float t[EP2];
        xb_ldv(T + row[r] * SF + c0, t);
        sg[r] = sgx[r] = 0.f;
#pragma unroll
        for (int e = 0; e < EP2; ++e) {
          xh[r][e] = (z[r][e] - mu[r]) * rs[r];
          g[r][e] = (lw[e] * xh[r][e] + lb[e] - t[e]) * lw[e];
          sg[r] += g[r][e];
          sgx[r] += g[r][e] * xh[r][e];
        }
      }
#pragma unroll
      for (int r = 0; r < RW2; ++r) {
        sg[r] = xb_g2sum(sg[r]);
        sgx[r] = xb_g2sum(sgx[r]);
      }
#pragma unroll
      for (int r = 0; r < RW2; ++r) {
        if (gi + NG2 * r >= XB_KB) continue;
        const float sc = rs[r] * (1.f / (float)XB_F);
#pragma unroll
        for (int e = 0; e < EP2; ++e)
          G[row[r] * SF + c0 + e] = ((float)XB_F * g[r][e] - sg[r] - xh[r][e] * sgx[r]) * sc;
      }
      // Coefficients of the owned rows: lanes split j (and, when the group
      // has more lanes than rows, the dot product's length).
#pragma unroll
      for (int r = 0; r < RW2; ++r) {
        const int i = row[r];
        const bool ok = gi + NG2 * r < XB_KB;
        if constexpr (LG2 >= XB_KB) {
          constexpr int span = XB_F / (LG2 >= XB_KB ? LG2 / XB_KB : 1);
          const int j = l % XB_KB, k0s = (l / XB_KB) * span;
          float a = 0.f;
#pragma unroll
          for (int kk = 0; kk < span; kk += 4) {
            const int k = k0s + kk;
            const float4 x = *(const float4*)(Q + i * SF + k);
            const float4 y = *(const float4*)(K + j * SF + k);
            a = fmaf(x.x, y.x, a); a = fmaf(x.y, y.y, a);
            a = fmaf(x.z, y.z, a); a = fmaf(x.w, y.w, a);
          }
#pragma unroll
          for (int o = XB_KB; o < LG2; o <<= 1) a += XB_SHFL_XOR(a, o);
          if (ok && l < XB_KB) Cc[i * XB_KB + j] = j <= i ? tokc[i] * gs[j] * (a + 1.f) : 0.f;
        } else {
          for (int j = l; j < XB_KB; j += LG2) {
            float a = 0.f;
            for (int k = 0; k < XB_F; k += 4) {
              const float4 x = *(const float4*)(Q + i * SF + k);
              const float4 y = *(const float4*)(K + j * SF + k);
              a = fmaf(x.x, y.x, a); a = fmaf(x.y, y.y, a);
              a = fmaf(x.z, y.z, a); a = fmaf(x.w, y.w, a);
            }
            if (ok) Cc[i * XB_KB + j] = j <= i ? tokc[i] * gs[j] * (a + 1.f) : 0.f;
          }
        }
      }
      if (tid < XB_KB) etl[tid] = tokc[XB_KB - 1] * gs[tid];
    }
    __syncthreads();
    if (prof && tid == 0) { const long long t = clock64(); acc1 += t - tick; tick = t; }

    {  // S2. The state update comes between Zbar and Zbar's LayerNorm: it
       // does not depend on them, so its FMAs fill the shuffles' latency.
      float zb[RW2][EP2], m2[RW2], r2[RW2];
#pragma unroll
      for (int r = 0; r < RW2; ++r) {
        const int i = row[r];
#pragma unroll
        for (int e = 0; e < EP2; ++e) zb[r][e] = q[r][e];
#pragma unroll
        for (int j = 0; j < XB_KB; ++j) {  // c[i][j] is stored as 0 for j > i
          const float c = Cc[i * XB_KB + j];
          float gj[EP2];
          xb_ldv(G + j * SF + c0, gj);
#pragma unroll
          for (int e = 0; e < EP2; ++e) zb[r][e] = fmaf(-c, gj[e], zb[r][e]);
        }
        float s = 0.f;
#pragma unroll
        for (int e = 0; e < EP2; ++e) s += zb[r][e];
        m2[r] = s;
      }

      float eg[XB_KB][EP2], bs[EP2];
#pragma unroll
      for (int e = 0; e < EP2; ++e) bs[e] = 0.f;
#pragma unroll
      for (int j = 0; j < XB_KB; ++j) {
        xb_ldv(G + j * SF + c0, eg[j]);
        const float s = etl[j];
#pragma unroll
        for (int e = 0; e < EP2; ++e) {
          eg[j][e] *= s;
          bs[e] += eg[j][e];
        }
      }
#pragma unroll
      for (int sa = 0; sa < (XB_F + NG2 - 1) / NG2; ++sa) {
        const int a = gi + NG2 * sa;
        if ((XB_F % NG2) != 0 && a >= XB_F) break;
        float d[EP2];
#pragma unroll
        for (int e = 0; e < EP2; ++e) d[e] = 0.f;
#pragma unroll
        for (int j = 0; j < XB_KB; j += 4) {
          const float4 kt = *(const float4*)(Kt + a * SKT + j);
#pragma unroll
          for (int e = 0; e < EP2; ++e) {
            d[e] = fmaf(kt.x, eg[j][e], d[e]); d[e] = fmaf(kt.y, eg[j + 1][e], d[e]);
            d[e] = fmaf(kt.z, eg[j + 2][e], d[e]); d[e] = fmaf(kt.w, eg[j + 3][e], d[e]);
          }
        }
#pragma unroll
        for (int e = 0; e < EP2; ++e) W[a * XB_F + c0 + e] -= d[e];
      }
      if (gi == 0)
#pragma unroll
        for (int e = 0; e < EP2; ++e) bv[c0 + e] -= bs[e];

#if XB_ONEPASS
#pragma unroll
      for (int r = 0; r < RW2; ++r) {
        float v = 0.f;
#pragma unroll
        for (int e = 0; e < EP2; ++e) v += zb[r][e] * zb[r][e];
        m2[r] = xb_g2sum(m2[r]) * (1.f / (float)XB_F);
        v = xb_g2sum(v) * (1.f / (float)XB_F);
        r2[r] = rsqrtf(fmaxf(v - m2[r] * m2[r], 0.f) + XB_EPS);
      }
#else
#pragma unroll
      for (int r = 0; r < RW2; ++r) m2[r] = xb_g2sum(m2[r]) * (1.f / (float)XB_F);
#pragma unroll
      for (int r = 0; r < RW2; ++r) {
        float v = 0.f;
#pragma unroll
        for (int e = 0; e < EP2; ++e) v += (zb[r][e] - m2[r]) * (zb[r][e] - m2[r]);
        r2[r] = v;
      }
#pragma unroll
      for (int r = 0; r < RW2; ++r) r2[r] = rsqrtf(xb_g2sum(r2[r]) * (1.f / (float)XB_F) + XB_EPS);
#endif
#pragma unroll
      for (int r = 0; r < RW2; ++r) {
        if (gi + NG2 * r >= XB_KB) continue;
        const int i = row[r];
        float qr[EP2];
        xb_ldv(Q + i * SF + c0, qr);
        act_t* orow = o0 + (long)(n * XB_KB + i) * ost + c0;
#pragma unroll
        for (int e = 0; e < EP2; ++e) orow[e] = stf(qr[e] + lw[e] * (zb[r][e] - m2[r]) * r2[r] + lb[e]);
      }
      if (n + 1 < nmb)
        xb_put(pf, Qn, Qn + XB_KB * SF, Qn + 2 * XB_KB * SF, Qn + 3 * XB_KB * SF,
               Qn + 3 * XB_KB * SF + XB_F * SKT);
    }
    __syncthreads();
    if (prof && tid == 0) { const long long t = clock64(); acc2 += t - tick; tick = t; }
  }
  if (prof && tid == 0) {
    prof[bh * 8 + 0] = acc1;
    prof[bh * 8 + 1] = acc2;
  }
}
XB_EXPORT(xb_inner_linear2)
