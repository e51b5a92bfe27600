// Geometry and row helpers shared by the fused inner-loop kernels. One block
// owns one (batch, head) and walks its L/KB mini-batches in order; the inner
// state lives in shared memory for the whole launch. The host mirrors every
// size here in smem.go; the emulator checks the two agree.
//
// Tiles [KB][F] use row stride SF = F+4: float4 aligned, and rows that lanes
// read in parallel (K[j] for j = lane) fall in different banks.
#define SF (XB_F + 4)
#define SKT (XB_KB + 4)                 // transposed tiles [F][KB]
#define LG (XB_F < 32 ? XB_F : 32)      // lanes that share one row in row phases
#define EPL (XB_F / LG)                 // row elements per lane
#define NGRP (XB_NT / LG)               // rows in flight in row phases
#define RGF (XB_NT / XB_F)              // row groups of a [KB][F] output
#define RF (XB_KB / RGF)                // rows per thread of a [KB][F] output
#define PV ((XB_KB * XB_F + XB_NT - 1) / XB_NT)  // prefetched elements per thread
#define R4(x) (((x) + 3) / 4 * 4)

// 1/sqrt in the row statistics is the hardware reciprocal square root
// (about 1 ulp, as the frameworks' LayerNorm kernels use): one instruction
// on each row's critical path instead of a sqrt and a division per element.

// Phase ticks: thread 0 adds the clock since the last tick to slot s.
#define XB_TICK(s)                                                \
  if (prof && threadIdx.x == 0) {                                 \
    const long long t_ = clock64();                               \
    ticks[s] += t_ - tick;                                        \
    tick = t_;                                                    \
  }

// Sum over the LG lanes of one row group; every lane gets the total.
__device__ __forceinline__ float xb_grp_sum(float v) {
#pragma unroll
  for (int o = LG / 2; o > 0; o >>= 1) v += XB_SHFL_XOR(v, o);
  return v;
}

// Next mini-batch's rows, loaded into registers while this one computes.
struct XbFetch {
  float q[PV], k[PV], v[PV], g;
};

__device__ __forceinline__ void xb_fetch(XbFetch& p, const act_t* q, const act_t* k,
                                         const act_t* v, const float* g, int n) {
  const long base = (long)n * XB_KB * XB_F;
#pragma unroll
  for (int r = 0; r < PV; ++r) {
    const int e = threadIdx.x + XB_NT * r;
    if (e < XB_KB * XB_F) {
      p.q[r] = ldf(q[base + e]);
      p.k[r] = ldf(k[base + e]);
      p.v[r] = ldf(v[base + e]);
    }
  }
  if (threadIdx.x < XB_KB) p.g = g[(long)n * XB_KB + threadIdx.x];
}

// Stores a fetched mini-batch: Q, K, the target T = V - K, K transposed (for
// the weight update) and the gate.
__device__ __forceinline__ void xb_put(const XbFetch& p, float* Q, float* K, float* T, float* Kt,
                                       float* G) {
#pragma unroll
  for (int r = 0; r < PV; ++r) {
    const int e = threadIdx.x + XB_NT * r;
    if (e < XB_KB * XB_F) {
      const int i = e / XB_F, c = e % XB_F;
      Q[i * SF + c] = p.q[r];
      K[i * SF + c] = p.k[r];
      T[i * SF + c] = p.v[r] - p.k[r];
      Kt[c * SKT + i] = p.k[r];
    }
  }
  if (threadIdx.x < XB_KB) G[threadIdx.x] = p.g;
}

// Loads row zr's lane columns (lane + LG*e) into z and returns the row's
// mean and 1/sqrt(population variance + eps), two passes as the spec's LN.
__device__ __forceinline__ void xb_row_stats(const float* zr, int lane, float (&z)[EPL], float& mu,
                                             float& rs) {
  float s = 0.f;
#pragma unroll
  for (int e = 0; e < EPL; ++e) {
    z[e] = zr[lane + LG * e];
    s += z[e];
  }
  mu = xb_grp_sum(s) / (float)XB_F;
  float v = 0.f;
#pragma unroll
  for (int e = 0; e < EPL; ++e) v += (z[e] - mu) * (z[e] - mu);
  rs = rsqrtf(xb_grp_sum(v) / (float)XB_F + XB_EPS);
}

// LayerNorm-fused L2 gradient of one row (spec step 5). Lane handles columns
// lane + LG*e. egt, when set, also gets scale * G transposed ([F][KB], row i).
// Rows past the tile (ok false) still run so every lane joins the shuffles.
__device__ __forceinline__ void xb_ln_grad_row(const float* zr, const float* tr, float* gr,
                                               float* egt, float scale, int i, const float* lw,
                                               const float* lb, int lane, bool ok) {
  float z[EPL], xh[EPL], g[EPL];
  float mu, rs;
  xb_row_stats(zr, lane, z, mu, rs);
  float sg = 0.f, sgx = 0.f;
#pragma unroll
  for (int e = 0; e < EPL; ++e) {
    xh[e] = (z[e] - mu) * rs;
    g[e] = (lw[e] * xh[e] + lb[e] - tr[lane + LG * e]) * lw[e];
    sg += g[e];
    sgx += g[e] * xh[e];
  }
  sg = xb_grp_sum(sg);
  sgx = xb_grp_sum(sgx);
  if (!ok) return;
#pragma unroll
  for (int e = 0; e < EPL; ++e) {
    const float G = ((float)XB_F * g[e] - sg - xh[e] * sgx) * (rs / (float)XB_F);
    gr[lane + LG * e] = G;
    if (egt) egt[(lane + LG * e) * SKT + i] = scale * G;
  }
}

// out row = Q row + LN(Zbar row).
__device__ __forceinline__ void xb_ln_out_row(const float* zr, const float* qr, act_t* orow,
                                              const float* lw, const float* lb, int lane,
                                              bool ok) {
  float z[EPL];
  float mu, rs;
  xb_row_stats(zr, lane, z, mu, rs);
  if (!ok) return;
#pragma unroll
  for (int e = 0; e < EPL; ++e) {
    const int c = lane + LG * e;
    orow[c] = stf(qr[c] + lw[e] * (z[e] - mu) * rs + lb[e]);
  }
}

// Causal coefficients c[i][j] = eta[i][j] * (A[i][j] + 1) for j <= i, where
// A = X Y^T over n columns (row stride s): the (eta*A)@G and tril(eta)@G
// terms of Zbar folded into one [KB][KB] matrix.
__device__ __forceinline__ void xb_coef(const float* X, const float* Y, int n, int s,
                                        const float* tokc, const float* g, float* cc) {
  for (int e = threadIdx.x; e < XB_KB * XB_KB; e += XB_NT) {
    const int i = e / XB_KB, j = e % XB_KB;
    float v = 0.f;
    if (j <= i) {
      float a = 0.f;
      for (int k = 0; k < n; k += 4) {
        const float4 x = *(const float4*)(X + i * s + k);
        const float4 y = *(const float4*)(Y + j * s + k);
        a = fmaf(x.x, y.x, a);
        a = fmaf(x.y, y.y, a);
        a = fmaf(x.z, y.z, a);
        a = fmaf(x.w, y.w, a);
      }
      v = tokc[i] * g[j] * (a + 1.f);
    }
    cc[e] = v;
  }
}
