// The linear inner model, third layout: a thread-block cluster of XB_CS CTAs
// per (batch, head), each owning FC = F/XB_CS columns of W1 (stored
// transposed, Wt[c][k]) and b1. Every CTA stages the whole mini-batch (Q and
// K rows are needed in full for Z = K W and for Q K^T); the column slices of
// Z, QW, G, Zbar and of the update stay local. Only per-row LayerNorm
// statistics cross CTAs, written into every CTA's shared memory (distributed
// shared memory). XB_CLX (inner_cluster.cuh) picks the exchange.
// XB_CLX = 1, two rounds a step:
//   (a) Z, QW of the owned columns (old W)
//   (b) partial sum/sum-of-squares of Z rows and of the previous step's Zbar
//       rows to every CTA; arrive; coefficients c[i][j] meanwhile; wait
//   (c) row statistics; previous step's output rows; partial sum(g),
//       sum(g*xh) to every CTA; arrive; wait
//   (d) G of the owned columns; block barrier
//   (e) Zbar (registers, its LayerNorm waits for the next step's exchange),
//       W and b update, next mini-batch staged; block barrier
// XB_CLX = 2 or 3, one round a step: with u = lw (lb - t), the gradient
// g = lw^2 xh + u, and xh = (z - mu) rs, the two sums of (c) are
//   sum g      = rs (A1 - mu A0) + U0
//   sum g xh   = rs^2 (A2 - 2 mu A1 + mu^2 A0) + rs (U1 - mu U0)
// over the row's F columns, where A0 = sum lw^2 (per head, a constant),
// A1 = sum lw^2 z, A2 = sum lw^2 z^2, U0 = sum u, U1 = sum u z need no row
// statistic. So (b) sends those four with sum z, sum z^2 and the previous
// Zbar sums (8 floats a row) and (c) needs no second round. (This has the
// conditioning of the mean-of-squares variance the kernel already uses.)
// The slots are double-buffered by step parity: a CTA can be one step
// ahead of another, never two (it needs their sums of the step between).
// With XB_CLX = 3 each buffer has an mbarrier that completes when the
// CS x KB x 32 bytes of its step have arrived (st.async).
// Chunks: xq, xk, xv, gate and out may point into the sequence (L stays the
// head stride) and nmb mini-batches are walked; W1/b1 are the weights or the
// state a previous chunk left in Wsave/bsave (per head, [F][F] and [F]).
// trace, when set (the training step), gets the state at the start of every
// mini-batch, [B*nh][L/KB][XB_TRS] (W1 row-major, b1, then what the inner
// backward reads instead of exchanging: row statistics and Zbar), stored
// in the same window as the global loads so no cluster barrier waits for it;
// a chunk gets trace at its first mini-batch's slot.
// Thread t owns element (i = t / FC, c = t % FC); the FC lanes of a row are
// consecutive lanes of one warp. XB_CS = 1 is the portable fallback (one
// block per head, cluster barriers become block barriers).
#ifndef XB_CS
#define XB_CS 1
#endif
#define FC (XB_F / XB_CS)
// One mini-batch's record in the training trace: W1 (row-major), b1, then
// per row 8 floats: mean and 1/s of Z, sum g and sum g*xh of the LayerNorm
// gradient, mean and 1/s of Zbar, two unused; then Zbar [K][F] (the inner
// backward reads them instead of exchanging Z's and Zbar's rows again).
#define XB_TRZ (XB_F * XB_F + XB_F + 8 * XB_KB)
#define XB_TRS (XB_TRZ + XB_KB * XB_F)
#define SWT (XB_F + 4)                       // row stride of Wt
#define AP (XB_F / XB_KB)                    // W columns updated per thread
#define CL_STAGE (2 * XB_KB * SF + R4(XB_KB))  // Q, K, gate
#define PVC ((XB_KB * XB_F + XB_NT - 1) / XB_NT)
#if XB_CLX == 1
#define CL_XFLOATS (XB_CS * XB_KB * 4 + XB_CS * XB_KB * 2)
#else
#define CL_XW 8                                         // floats a row sends each CTA a step
#define CL_XBYTES (XB_CS * XB_KB * CL_XW * 4)           // bytes a CTA receives a step
#define CL_XFLOATS (4 + 2 * XB_CS * XB_KB * CL_XW)      // 2 mbarriers, [2][CS][KB][XW] slots
#endif
#define LINCL_SMEM_FLOATS \
  (FC * SWT + R4(FC) + 2 * CL_STAGE + XB_KB * FC + R4(XB_KB * XB_KB) + R4(XB_KB) + CL_XFLOATS)

// XB_CL_* (cluster rank, barrier, map) and XB_CLX come from inner_cluster.cuh.

__device__ __forceinline__ float xb_csum(float v) {
#pragma unroll
  for (int o = FC / 2; o > 0; o >>= 1) v += XB_SHFL_XOR(v, o);
  return v;
}

#if XB_CLX != 1
// The exchange-2/3 schedule's arithmetic, written for latency: a step's
// time was set by one thread's chains, not by issue (H100, request 2 of
// issue 30: coefficients ~1000 cycles and the product ~900-1400 a step,
// against ~100 of waiting for the exchange).
// Z and QW of one element (row kr of K, qr of Q, column wr of W, plus b)
// in eight independent chains.
__device__ __forceinline__ void xb_cl_zq(const float* kr, const float* qr, const float* wr, float b,
                                         float& z, float& qw) {
  float z0 = b, z1 = 0.f, z2 = 0.f, z3 = 0.f, q0 = b, q1 = 0.f, q2 = 0.f, q3 = 0.f;
#pragma unroll 4
  for (int k = 0; k < XB_F; k += 8) {
    const float4 w0 = *(const float4*)(wr + k), w1 = *(const float4*)(wr + k + 4);
    const float4 a0 = *(const float4*)(kr + k), a1 = *(const float4*)(kr + k + 4);
    const float4 b0 = *(const float4*)(qr + k), b1 = *(const float4*)(qr + k + 4);
    z0 = fmaf(a0.x, w0.x, z0); z1 = fmaf(a0.y, w0.y, z1); z2 = fmaf(a0.z, w0.z, z2); z3 = fmaf(a0.w, w0.w, z3);
    q0 = fmaf(b0.x, w0.x, q0); q1 = fmaf(b0.y, w0.y, q1); q2 = fmaf(b0.z, w0.z, q2); q3 = fmaf(b0.w, w0.w, q3);
    z0 = fmaf(a1.x, w1.x, z0); z1 = fmaf(a1.y, w1.y, z1); z2 = fmaf(a1.z, w1.z, z2); z3 = fmaf(a1.w, w1.w, z3);
    q0 = fmaf(b1.x, w1.x, q0); q1 = fmaf(b1.y, w1.y, q1); q2 = fmaf(b1.z, w1.z, q2); q3 = fmaf(b1.w, w1.w, q3);
  }
  z = (z0 + z1) + (z2 + z3);
  qw = (q0 + q1) + (q2 + q3);
}

// Q_i . K_j over F columns in four chains.
__device__ __forceinline__ float xb_cl_dot(const float* x, const float* y) {
  float a0 = 0.f, a1 = 0.f, a2 = 0.f, a3 = 0.f;
#pragma unroll 4
  for (int k = 0; k < XB_F; k += 8) {
    const float4 x0 = *(const float4*)(x + k), x1 = *(const float4*)(x + k + 4);
    const float4 y0 = *(const float4*)(y + k), y1 = *(const float4*)(y + k + 4);
    a0 = fmaf(x0.x, y0.x, a0); a1 = fmaf(x0.y, y0.y, a1); a2 = fmaf(x0.z, y0.z, a2); a3 = fmaf(x0.w, y0.w, a3);
    a0 = fmaf(x1.x, y1.x, a0); a1 = fmaf(x1.y, y1.y, a1); a2 = fmaf(x1.z, y1.z, a2); a3 = fmaf(x1.w, y1.w, a3);
  }
  return (a0 + a1) + (a2 + a3);
}
// The causal coefficients c[i][j], j <= i, are KB (KB + 1) / 2 dot products:
// thread t computes number t + NT r of them (row-major), CL_CPASS at most.
#define CL_NTRI (XB_KB * (XB_KB + 1) / 2)
#define CL_CPASS ((CL_NTRI + XB_NT - 1) / XB_NT)
#endif

XB_KERNEL void __launch_bounds__(XB_NT, 1)
    xb_inner_linear_cl(const act_t* __restrict__ xq, const act_t* __restrict__ xk,
                       const act_t* __restrict__ xv, const float* __restrict__ gate,
                       const float* W1, const float* b1,
                       const float* __restrict__ lnw, const float* __restrict__ lnb,
                       const float* __restrict__ tokd, act_t* __restrict__ out, long osb, long osh,
                       long ost, int nh, int L, unsigned long long* __restrict__ prof,
                       float* Wsave, float* bsave, int nmb, float* __restrict__ trace) {
  XB_DYN_SMEM(sm);
#ifdef XB_EMU
  emu_check_smem(LINCL_SMEM_FLOATS * 4);
#endif
  const int tid = threadIdx.x, rk = XB_CL_RANK(), bh = blockIdx.x / XB_CS, b = bh / nh,
            hd = bh % nh;
  const int i = tid / FC, c = tid % FC, cg = rk * FC + c;  // owned row, local and global column
  float* Wt = sm;
  float* bv = Wt + FC * SWT;
  float* st = bv + R4(FC);
  float* G = st + 2 * CL_STAGE;
  float* Cc = G + XB_KB * FC;
  float* tokc = Cc + R4(XB_KB * XB_KB);
#if XB_CLX == 1
  float* xa = tokc + R4(XB_KB);           // [CS][KB] float4: sum z, sum z^2, sum zb, sum zb^2
  float* xg = xa + XB_CS * XB_KB * 4;     // [CS][KB] float2: sum g, sum g*xh
#else
  unsigned long long* mb = (unsigned long long*)(tokc + R4(XB_KB));  // one mbarrier a slot buffer
  // [2][CS][KB][XW]: sum z, sum z^2, sum zb, sum zb^2, A1, A2, U0, U1
  float* xa = tokc + R4(XB_KB) + 4;
#endif

  for (int e = tid; e < FC * XB_F; e += XB_NT) {
    const int cc = e % FC, k = e / FC;
    Wt[cc * SWT + k] = W1[(long)hd * XB_F * XB_F + (long)k * XB_F + rk * FC + cc];
  }
  for (int e = tid; e < FC; e += XB_NT) bv[e] = b1[hd * XB_F + rk * FC + e];
  for (int e = tid; e < XB_KB; e += XB_NT)
    tokc[e] = (float)XB_BASE_LR * fmaxf(0.f, 1.f / (float)(e + 1) + tokd[e]) / (float)XB_F;
  const float lw = lnw[hd * XB_F + cg], lb = lnb[hd * XB_F + cg];
  const long in0 = (long)bh * L * XB_F;
  const act_t *q0 = xq + in0, *k0 = xk + in0, *v0 = xv + in0;
  const float* g0 = gate + (long)bh * L;
  act_t* o0 = out + b * osb + hd * osh;

#if XB_CLX == 1
  // Lane c < XB_CS of each row writes this CTA's slot in CTA c.
  float* xar = XB_CL_MAP(xa + (rk * XB_KB + i) * 4, c < XB_CS ? c : 0);
  float* xgr = XB_CL_MAP(xg + (rk * XB_KB + i) * 2, c < XB_CS ? c : 0);
#else
  float A0 = 0.f;  // sum of lw^2 over the head's F columns
  for (int k = 0; k < XB_F; ++k) A0 = fmaf(lnw[hd * XB_F + k], lnw[hd * XB_F + k], A0);
  int cii[CL_CPASS], cjj[CL_CPASS];  // this thread's coefficients; row -1: none
#pragma unroll
  for (int r = 0; r < CL_CPASS; ++r) {
    const int q = tid + r * XB_NT;
    int ii = 0;
    while ((ii + 1) * (ii + 2) / 2 <= q) ++ii;
    cii[r] = q < CL_NTRI ? ii : -1;
    cjj[r] = q < CL_NTRI ? q - ii * (ii + 1) / 2 : 0;
  }
  for (int e = tid; e < XB_KB * XB_KB; e += XB_NT) Cc[e] = 0.f;  // j > i stays 0
#if XB_CLX == 3
  if (tid == 0) {  // steps 0 and 1 armed now, step n + 2 once step n has arrived
    XB_MB_INIT(mb, 1);
    XB_MB_INIT(mb + 1, 1);
    XB_MB_FENCE_INIT();
    XB_MB_EXPECT(mb, CL_XBYTES);
    XB_MB_EXPECT(mb + 1, CL_XBYTES);
  }
#endif
#endif

  float pq[PVC], pk[PVC], pv = 0.f, pg = 0.f;
  auto fetch = [&](int n) {
    const long base = (long)n * XB_KB * XB_F;
#pragma unroll
    for (int r = 0; r < PVC; ++r) {
      const int e = tid + XB_NT * r;
      if (e < XB_KB * XB_F) {
        pq[r] = ldf(q0[base + e]);
        pk[r] = ldf(k0[base + e]);
      }
    }
    pv = ldf(v0[base + i * XB_F + cg]);
    if (tid < XB_KB) pg = g0[(long)n * XB_KB + tid];
  };
  auto put = [&](float* S) {
#pragma unroll
    for (int r = 0; r < PVC; ++r) {
      const int e = tid + XB_NT * r;
      if (e < XB_KB * XB_F) {
        const int ii = e / XB_F, cc = e % XB_F;
        S[ii * SF + cc] = pq[r];
        S[XB_KB * SF + ii * SF + cc] = pk[r];
      }
    }
    if (tid < XB_KB) S[2 * XB_KB * SF + tid] = pg;
  };
  // With cluster barriers, global loads run only between the step's last
  // exchange and the next step's first: a cluster arrive has release
  // semantics and would wait for them. So the rows of step n+2 are loaded
  // after the exchange of step n (with st.async, when step n starts) and
  // stored at the start of step n+1; the prologue stages steps 0 and 1.
  fetch(0);
  put(st);
  float tv = pv, tvn = 0.f;  // V of the owned element this step and the next
  if (nmb > 1) {
    fetch(1);
    put(st + CL_STAGE);
    tvn = pv;
  }
  // Every CTA of the cluster must be running (and its mbarriers
  // initialised) before any remote write.
  XB_CL_ARRIVE();
  XB_CL_WAIT();
  long long tick = prof ? clock64() : 0, acc1 = 0, acc2 = 0;
#if XB_CLX == 1
#define XB_FT(s)
#else
  // Finer ticks of one exchange step, seen by thread 0 (it has the most
  // coefficients to compute): put and product, sums and send, coefficients,
  // the wait, statistics to G, then G to the step's end.
  long long ft = tick, fine[6] = {0, 0, 0, 0, 0, 0};
#define XB_FT(s)                                \
  if (prof && tid == 0) {                       \
    const long long t_ = clock64();             \
    fine[s] += t_ - ft;                         \
    ft = t_;                                    \
  }
#endif

  float zbp = 0.f, qp = 0.f;  // previous step's Zbar and Q of the owned element
  for (int n = 0; n <= nmb; ++n) {
    const bool last = n == nmb;  // one more exchange for the last step's output
    const float* Q = st + (n & 1) * CL_STAGE;
    const float* K = Q + XB_KB * SF;
    const float* gs = K + XB_KB * SF;
    float z = 0.f, qw = 0.f, t = 0.f;  // t: the target V - K of the owned element
    if (!last) {
      if (n >= 1 && n + 1 < nmb) {
        put(st + ((n + 1) & 1) * CL_STAGE);
        tvn = pv;
      }
#if XB_CLX == 3
      // No cluster arrive waits for loads here: the rows of step n+2 get a
      // whole step to arrive.
      if (n + 2 < nmb) fetch(n + 2);
#endif
      // (a) Z and QW of the owned element.
#if XB_CLX != 1
      xb_cl_zq(K + i * SF, Q + i * SF, Wt + c * SWT, bv[c], z, qw);
#else
      float z1 = 0.f, q1 = 0.f;
      z = qw = bv[c];
      const float* kr = K + i * SF;
      const float* qr = Q + i * SF;
      const float* wr = Wt + c * SWT;
#pragma unroll 4
      for (int k = 0; k < XB_F; k += 8) {
        const float4 w0 = *(const float4*)(wr + k), w1 = *(const float4*)(wr + k + 4);
        const float4 a0 = *(const float4*)(kr + k), a1 = *(const float4*)(kr + k + 4);
        const float4 b0 = *(const float4*)(qr + k), b1v = *(const float4*)(qr + k + 4);
        z = fmaf(a0.x, w0.x, z); z = fmaf(a0.y, w0.y, z); z = fmaf(a0.z, w0.z, z); z = fmaf(a0.w, w0.w, z);
        z1 = fmaf(a1.x, w1.x, z1); z1 = fmaf(a1.y, w1.y, z1); z1 = fmaf(a1.z, w1.z, z1); z1 = fmaf(a1.w, w1.w, z1);
        qw = fmaf(b0.x, w0.x, qw); qw = fmaf(b0.y, w0.y, qw); qw = fmaf(b0.z, w0.z, qw); qw = fmaf(b0.w, w0.w, qw);
        q1 = fmaf(b1v.x, w1.x, q1); q1 = fmaf(b1v.y, w1.y, q1); q1 = fmaf(b1v.z, w1.z, q1); q1 = fmaf(b1v.w, w1.w, q1);
      }
      z += z1;
      qw += q1;
#endif
      t = tv - K[i * SF + cg];
    }
    XB_FT(0);
    // (b) Partial row statistics to every CTA.
#if XB_CLX == 1
    {
      float4 s;
      s.x = xb_csum(z);
      s.y = xb_csum(z * z);
      s.z = xb_csum(zbp);
      s.w = xb_csum(zbp * zbp);
      if (c < XB_CS) *(float4*)xar = s;
    }
    XB_CL_ARRIVE();
#else
    const int p = n & 1;  // slot buffer and mbarrier of this step
    {
      const float w2 = lw * lw, u = last ? 0.f : lw * (lb - t);
      float4 s0, s1;
      s0.x = xb_csum(z);
      s0.y = xb_csum(z * z);
      s0.z = xb_csum(zbp);
      s0.w = xb_csum(zbp * zbp);
      s1.x = xb_csum(w2 * z);
      s1.y = xb_csum(w2 * z * z);
      s1.z = xb_csum(u);
      s1.w = xb_csum(u * z);
      // lane e < 2 CS sends half e / CS of the row's sums to CTA e % CS
      for (int e = c; e < 2 * XB_CS; e += FC) {
        const int to = e % XB_CS;
        const float4 v = e < XB_CS ? s0 : s1;
        float* slot = xa + ((p * XB_CS + rk) * XB_KB + i) * CL_XW + (e / XB_CS) * 4;
#if XB_CLX == 3
        XB_ST_ASYNC4(XB_RADDR(slot, to), v, XB_RADDR(mb + p, to));
#else
        *(float4*)XB_CL_MAP(slot, to) = v;
#endif
      }
    }
#if XB_CLX == 2
    XB_CL_ARRIVE();
#endif
#endif
    XB_FT(1);
    if (!last) {  // coefficients of this step, read after the block barrier of (d)
#if XB_CLX == 1
      for (int e = tid; e < XB_KB * XB_KB; e += XB_NT) {
        const int ii = e / XB_KB, j = e % XB_KB;
        float v = 0.f;
        if (j <= ii) {
          float a = 0.f, a1 = 0.f;
#pragma unroll 4
          for (int k = 0; k < XB_F; k += 8) {
            const float4 x0 = *(const float4*)(Q + ii * SF + k), x1 = *(const float4*)(Q + ii * SF + k + 4);
            const float4 y0 = *(const float4*)(K + j * SF + k), y1 = *(const float4*)(K + j * SF + k + 4);
            a = fmaf(x0.x, y0.x, a); a = fmaf(x0.y, y0.y, a); a = fmaf(x0.z, y0.z, a); a = fmaf(x0.w, y0.w, a);
            a1 = fmaf(x1.x, y1.x, a1); a1 = fmaf(x1.y, y1.y, a1); a1 = fmaf(x1.z, y1.z, a1); a1 = fmaf(x1.w, y1.w, a1);
          }
          v = tokc[ii] * gs[j] * (a + a1 + 1.f);
        }
        Cc[e] = v;
      }
#else
#pragma unroll
      for (int r = 0; r < CL_CPASS; ++r)
        if (cii[r] >= 0)
          Cc[cii[r] * XB_KB + cjj[r]] =
              tokc[cii[r]] * gs[cjj[r]] * (xb_cl_dot(Q + cii[r] * SF, K + cjj[r] * SF) + 1.f);
#endif
    }
    XB_FT(2);
#if XB_CLX == 3
    XB_MB_WAIT(mb + p, (unsigned)(n >> 1) & 1u);
    if (tid == 0 && n + 2 <= nmb) XB_MB_EXPECT(mb + p, CL_XBYTES);
#else
    XB_CL_WAIT();
#endif
    XB_FT(3);
    // (c) Row statistics; the previous step's output.
#if XB_CLX == 1
    float mu = 0.f, ms = 0.f, m2 = 0.f, s2 = 0.f;
#pragma unroll
    for (int r = 0; r < XB_CS; ++r) {
      const float4 s = *(const float4*)(xa + (r * XB_KB + i) * 4);
      mu += s.x; ms += s.y; m2 += s.z; s2 += s.w;
    }
#else
    float4 sa = {0.f, 0.f, 0.f, 0.f}, sb = {0.f, 0.f, 0.f, 0.f};
    {
      float4 ta = {0.f, 0.f, 0.f, 0.f}, tb = {0.f, 0.f, 0.f, 0.f};  // odd ranks: two add chains
#pragma unroll
      for (int r = 0; r < XB_CS; ++r) {
        const float* s = xa + ((p * XB_CS + r) * XB_KB + i) * CL_XW;
        const float4 x = *(const float4*)s, y = *(const float4*)(s + 4);
        float4& a = r & 1 ? ta : sa;
        float4& b = r & 1 ? tb : sb;
        a.x += x.x; a.y += x.y; a.z += x.z; a.w += x.w;
        b.x += y.x; b.y += y.y; b.z += y.z; b.w += y.w;
      }
      sa.x += ta.x; sa.y += ta.y; sa.z += ta.z; sa.w += ta.w;
      sb.x += tb.x; sb.y += tb.y; sb.z += tb.z; sb.w += tb.w;
    }
    float mu = sa.x, ms = sa.y, m2 = sa.z, s2 = sa.w;
#endif
    if (n > 0) {
      m2 *= 1.f / (float)XB_F;
      const float r2 = rsqrtf(fmaxf(s2 * (1.f / (float)XB_F) - m2 * m2, 0.f) + XB_EPS);
      o0[(long)((n - 1) * XB_KB + i) * ost + cg] = stf(qp + lw * (zbp - m2) * r2 + lb);
      if (trace && rk == 0 && c == 0) {
        float2 t;
        t.x = m2, t.y = r2;
        *(float2*)(trace + ((long)bh * (L / XB_KB) + n - 1) * XB_TRS + XB_F * XB_F + XB_F + i * 8 + 4) = t;
      }
    }
    if (last) {
      if (trace) trace[((long)bh * (L / XB_KB) + n - 1) * XB_TRS + XB_TRZ + i * XB_F + cg] = zbp;
      break;
    }
    mu *= 1.f / (float)XB_F;
    const float rs = rsqrtf(fmaxf(ms * (1.f / (float)XB_F) - mu * mu, 0.f) + XB_EPS);
    const float xh = (z - mu) * rs;
    const float g = (lw * xh + lb - t) * lw;
#if XB_CLX == 1
    {
      float2 s;
      s.x = xb_csum(g);
      s.y = xb_csum(g * xh);
      if (c < XB_CS) *(float2*)xgr = s;
    }
    XB_CL_ARRIVE();
    qp = Q[i * SF + cg];
    tv = tvn;
    XB_CL_WAIT();
    float sg = 0.f, sgx = 0.f;
#pragma unroll
    for (int r = 0; r < XB_CS; ++r) {
      const float2 s = *(const float2*)(xg + (r * XB_KB + i) * 2);
      sg += s.x; sgx += s.y;
    }
#else
    const float sg = rs * (sb.x - mu * A0) + sb.z;
    const float sgx = rs * rs * (sb.y - mu * (2.f * sb.x - mu * A0)) + rs * (sb.w - mu * sb.z);
    qp = Q[i * SF + cg];
    tv = tvn;
#endif
#if XB_CLX != 3
    if (n + 2 < nmb) fetch(n + 2);
#endif
    // --- training trace (every exchange): the state at this step's start,
    // heads strided by the whole sequence's L / KB steps (a chunk writes
    // its own steps' slots).
    if (trace) {
      if (n > 0) trace[((long)bh * (L / XB_KB) + n - 1) * XB_TRS + XB_TRZ + i * XB_F + cg] = zbp;
      float* tr = trace + ((long)bh * (L / XB_KB) + n) * XB_TRS;
#pragma unroll
      for (int r = 0; r < AP; ++r) tr[(i * AP + r) * XB_F + cg] = Wt[c * SWT + i * AP + r];
      if (i == 0) tr[XB_F * XB_F + cg] = bv[c];
    }
    if (prof && tid == 0) { const long long tk = clock64(); acc1 += tk - tick; tick = tk; }
    XB_FT(4);
    // (d) G of the owned element.
    G[i * FC + c] = ((float)XB_F * g - sg - xh * sgx) * (rs * (1.f / (float)XB_F));
    if (trace && rk == 0 && c == 0) {
      float4 t;
      t.x = mu, t.y = rs, t.z = sg, t.w = sgx;
      *(float4*)(trace + ((long)bh * (L / XB_KB) + n) * XB_TRS + XB_F * XB_F + XB_F + i * 8) = t;
    }
    __syncthreads();
    // (e) Zbar (its LayerNorm comes with the next exchange), the update, the
    // next mini-batch staged.
    {
      float zb = qw;
#pragma unroll
      for (int j = 0; j < XB_KB; ++j) zb = fmaf(-Cc[i * XB_KB + j], G[j * FC + c], zb);
      zbp = zb;
    }
    {
      const float el = tokc[XB_KB - 1];
      float d[AP], bs = 0.f;
#pragma unroll
      for (int r = 0; r < AP; ++r) d[r] = 0.f;
#pragma unroll
      for (int j = 0; j < XB_KB; ++j) {
        const float eg = el * gs[j] * G[j * FC + c];
        bs += eg;
        if constexpr (AP % 4 == 0) {
#pragma unroll
          for (int r = 0; r < AP; r += 4) {
            const float4 kk = *(const float4*)(K + j * SF + i * AP + r);
            d[r] = fmaf(kk.x, eg, d[r]); d[r + 1] = fmaf(kk.y, eg, d[r + 1]);
            d[r + 2] = fmaf(kk.z, eg, d[r + 2]); d[r + 3] = fmaf(kk.w, eg, d[r + 3]);
          }
        } else {
#pragma unroll
          for (int r = 0; r < AP; ++r) d[r] = fmaf(K[j * SF + i * AP + r], eg, d[r]);
        }
      }
#pragma unroll
      for (int r = 0; r < AP; ++r) Wt[c * SWT + i * AP + r] -= d[r];
      if (i == 0) bv[c] -= bs;
    }
    __syncthreads();
    if (prof && tid == 0) { const long long t = clock64(); acc2 += t - tick; tick = t; }
    XB_FT(5);
  }
  // A chunked forward carries the inner state to the launch of the next
  // chunk. Each CTA reads and writes only its own columns, so Wsave may be W1.
  if (Wsave) {
    for (int e = tid; e < FC * XB_F; e += XB_NT) {
      const int cc = e % FC, k = e / FC;
      Wsave[(long)hd * XB_F * XB_F + (long)k * XB_F + rk * FC + cc] = Wt[cc * SWT + k];
    }
    for (int e = tid; e < FC; e += XB_NT) bsave[hd * XB_F + rk * FC + e] = bv[e];
  }
  // No CTA leaves while another may still write into its shared memory: the
  // last remote writes came before the last cluster barrier (XB_CLX 1, 2),
  // or before the last mbarrier phase this CTA waited for (3).
  if (prof && tid == 0 && rk == 0) {
    prof[bh * 8 + 0] = acc1;
    prof[bh * 8 + 1] = acc2;
  }
#if XB_CLX != 1
  if (prof && tid == 0 && rk == 0) {
#pragma unroll
    for (int s = 0; s < 6; ++s) prof[bh * 8 + 2 + s] = fine[s];
  }
#endif
#undef XB_FT
}
XB_EXPORT(xb_inner_linear_cl)
