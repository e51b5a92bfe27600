// Helpers of the fused inner-loop backward kernels (docs/ttt-backward.md,
// "The inner loop"). One block owns one (batch, head) and walks its
// mini-batches in reverse; XB_NTB is its thread count. Element phases give
// thread t column c = t % F of rows rg + BRG*r ([K][F] tiles); row phases give
// each row to LG lanes as the forward does (inner_common.cuh).
#define BRG (XB_NTB / XB_F)   // row groups of a [K][F] tile
#define BRF (XB_KB / BRG)     // rows per thread of a [K][F] tile
#define BNG (XB_NTB / LG)     // rows in flight in row phases
#define SKK XB_KB             // row stride of [K][K] tiles (K is a multiple of 4)

// acc[r] += sum_k A[row_r][k] * B(k, c) over n (a multiple of 4), row_r =
// r0 + rs*r, A row-major at stride sa. B(k, c) is B[k*sb + c], or B[c*sb + k]
// when BT (a product with B transposed: both operands read along k).
template <int R, bool BT>
__device__ __forceinline__ void xb_mm(float (&acc)[R], const float* A, int sa, const float* B,
                                      int sb, int n, int c, int r0, int rs) {
#pragma unroll 2
  for (int k = 0; k < n; k += 4) {
    float b0, b1, b2, b3;
    if (BT) {
      const float4 b = *(const float4*)(B + c * sb + k);
      b0 = b.x, b1 = b.y, b2 = b.z, b3 = b.w;
    } else {
      b0 = B[k * sb + c], b1 = B[(k + 1) * sb + c], b2 = B[(k + 2) * sb + c], b3 = B[(k + 3) * sb + c];
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const float4 a = *(const float4*)(A + (r0 + rs * r) * sa + k);
      acc[r] = fmaf(a.x, b0, acc[r]);
      acc[r] = fmaf(a.y, b1, acc[r]);
      acc[r] = fmaf(a.z, b2, acc[r]);
      acc[r] = fmaf(a.w, b3, acc[r]);
    }
  }
}

// acc[r] += sum_k A[k][row_r] * B[k][c] over n: the A^T B products (weight
// gradients X^T dZ, and P^T Q through a [K][K] P). With contiguous rows
// (rs 1, R and r0 multiples of 4, sa too) the rows' A values of one k come
// as float4 broadcasts: 1 + R/4 shared-memory wavefronts a k for R FMAs per
// lane, instead of 1 + R.
template <int R>
__device__ __forceinline__ void xb_mmt(float (&acc)[R], const float* A, int sa, const float* B,
                                       int sb, int n, int c, int r0, int rs) {
  if constexpr (R % 4 == 0) {
    if (rs == 1) {
#pragma unroll 2
      for (int k = 0; k < n; ++k) {
        const float b = B[k * sb + c];
#pragma unroll
        for (int r = 0; r < R; r += 4) {
          const float4 a = *(const float4*)(A + k * sa + r0 + r);
          acc[r] = fmaf(a.x, b, acc[r]);
          acc[r + 1] = fmaf(a.y, b, acc[r + 1]);
          acc[r + 2] = fmaf(a.z, b, acc[r + 2]);
          acc[r + 3] = fmaf(a.w, b, acc[r + 3]);
        }
      }
      return;
    }
  }
#pragma unroll 4
  for (int k = 0; k < n; ++k) {
    const float b = B[k * sb + c];
#pragma unroll
    for (int r = 0; r < R; ++r) acc[r] = fmaf(A[k * sa + r0 + rs * r], b, acc[r]);
  }
}

// Dot product of two rows of n floats (n a multiple of 4, 16-byte aligned).
__device__ __forceinline__ float xb_dot(const float* a, const float* b, int n) {
  float s0 = 0.f, s1 = 0.f;
  for (int k = 0; k < n; k += 4) {
    const float4 x = *(const float4*)(a + k), y = *(const float4*)(b + k);
    s0 = fmaf(x.x, y.x, s0);
    s1 = fmaf(x.y, y.y, s1);
    s0 = fmaf(x.z, y.z, s0);
    s1 = fmaf(x.w, y.w, s1);
  }
  return s0 + s1;
}

// The LayerNorm-fused L2 gradient of one row, keeping what its backward
// needs: xh (x-hat), r = (gamma*xh + beta - T)*gamma, G, and returns 1/s and
// c = mean(r*xh) through rs and cm. Lane handles columns lane + LG*e.
__device__ __forceinline__ void xb_ln_grad_fwd(const float* zr, const float* tr, float* xhr, float* rr,
                                               float* gr, const float* lw, const float* lb, int lane,
                                               bool ok, float& rs, float& cm) {
  float z[EPL], xh[EPL], g[EPL];
  float mu;
  xb_row_stats(zr, lane, z, mu, rs);
  float sg = 0.f, sgx = 0.f;
#pragma unroll
  for (int e = 0; e < EPL; ++e) {
    xh[e] = (z[e] - mu) * rs;
    g[e] = (lw[e] * xh[e] + lb[e] - tr[lane + LG * e]) * lw[e];
    sg += g[e];
    sgx += g[e] * xh[e];
  }
  sg = xb_grp_sum(sg) / (float)XB_F;
  cm = xb_grp_sum(sgx) / (float)XB_F;
  if (!ok) return;
#pragma unroll
  for (int e = 0; e < EPL; ++e) {
    const int c = lane + LG * e;
    xhr[c] = xh[e];
    rr[c] = g[e];
    gr[c] = (g[e] - sg - xh[e] * cm) * rs;
  }
}

// Backward of out = Q + LN(zb) for one row: accumulates d(ln_w), d(ln_b)
// into dg, db and writes dzb = LNback(xhb, sb, dO * gamma).
__device__ __forceinline__ void xb_ln_out_bwd(const float* zr, const float* dor, float* dzr,
                                              const float* lw, int lane, bool ok, float (&dg)[EPL],
                                              float (&db)[EPL]) {
  float z[EPL], d[EPL];
  float mu, rs;
  xb_row_stats(zr, lane, z, mu, rs);
  float sd = 0.f, sdx = 0.f;
#pragma unroll
  for (int e = 0; e < EPL; ++e) {
    z[e] = (z[e] - mu) * rs;  // now x-hat
    const float o = dor[lane + LG * e];
    d[e] = o * lw[e];
    sd += d[e];
    sdx += d[e] * z[e];
    if (ok) dg[e] = fmaf(o, z[e], dg[e]), db[e] += o;
  }
  sd = xb_grp_sum(sd) / (float)XB_F;
  sdx = xb_grp_sum(sdx) / (float)XB_F;
  if (!ok) return;
#pragma unroll
  for (int e = 0; e < EPL; ++e) dzr[lane + LG * e] = (d[e] - sd - z[e] * sdx) * rs;
}

// Backward of G = l(Z, T) for one row (docs/ttt-backward.md, "The backward
// of l"): from dG and the forward's xh, r, G, 1/s and c, writes dZ and
// dT (= dV; the caller subtracts it from dX) and accumulates d(ln_w), d(ln_b).
__device__ __forceinline__ void xb_ln_grad_bwd(const float* dgr, const float* xhr, const float* rr,
                                               const float* gr, const float* tr, float rs, float cm,
                                               float* dzr, float* dtr, const float* lw,
                                               const float* lb, int lane, bool ok,
                                               float (&dg)[EPL], float (&db)[EPL]) {
  float u[EPL], xh[EPL];
  float su = 0.f, sux = 0.f, sug = 0.f;
#pragma unroll
  for (int e = 0; e < EPL; ++e) {
    const int c = lane + LG * e;
    u[e] = dgr[c] * rs;
    xh[e] = xhr[c];
    su += u[e];
    sux += u[e] * xh[e];
    sug += u[e] * gr[c];
  }
  su = xb_grp_sum(su) / (float)XB_F;
  sux = xb_grp_sum(sux) / (float)XB_F;
  const float ds = -xb_grp_sum(sug);
  float dx[EPL], sd = 0.f, sdx = 0.f;
#pragma unroll
  for (int e = 0; e < EPL; ++e) {
    const int c = lane + LG * e;
    const float dr = u[e] - su - xh[e] * sux;
    dx[e] = lw[e] * lw[e] * dr - cm * u[e] - sux * rr[c];
    sd += dx[e];
    sdx += dx[e] * xh[e];
    if (ok) {
      dg[e] = fmaf(dr, 2.f * lw[e] * xh[e] + lb[e] - tr[c], dg[e]);
      db[e] = fmaf(dr, lw[e], db[e]);
      dtr[c] = -dr * lw[e];
    }
  }
  sd = xb_grp_sum(sd) / (float)XB_F;
  sdx = xb_grp_sum(sdx) / (float)XB_F;
  if (!ok) return;
#pragma unroll
  for (int e = 0; e < EPL; ++e)
    dzr[lane + LG * e] = (dx[e] - sd - xh[e] * sdx) * rs + ds * xh[e] * (1.f / (float)XB_F);
}

// Group sum of a row dot product (lanes' columns), for rows in row phases.
__device__ __forceinline__ float xb_row_dot(const float* a, const float* b, int lane) {
  float s = 0.f;
#pragma unroll
  for (int e = 0; e < EPL; ++e) s = fmaf(a[lane + LG * e], b[lane + LG * e], s);
  return xb_grp_sum(s);
}
