// Portable tiled matrix product, the dense engine when no vendor BLAS is
// loaded (HIP, or cuBLAS missing) and the one the emulator checks. Row-major:
//   Y[M, N] = X[M, K] @ W[K, N]          (TW = 0, W row stride ldw)
//   Y[M, N] = X[M, K] @ W[N, K]^T        (TW = 1, the tied LM head)
// ACC = 1 adds into a float32 Y (the residual stream), else Y is act_t.
// 64x64 tile, BK 16, 256 threads, 4x4 outputs per thread on a stride-16 grid
// so that shared-memory reads are conflict free.
#define GT_BM 64
#define GT_BN 64
#define GT_BK 16

template <int TW, int ACC, typename YT>
__device__ __forceinline__ void xb_gemm_body(const act_t* __restrict__ X, int ldx,
                                             const act_t* __restrict__ W, int ldw,
                                             YT* __restrict__ Y, int ldy, int M, int N, int K) {
  __shared__ float As[GT_BK][GT_BM + 4];
  __shared__ float Bs[GT_BK][GT_BN + 4];
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int m0 = blockIdx.y * GT_BM, n0 = blockIdx.x * GT_BN;
  float acc[4][4];
#pragma unroll
  for (int r = 0; r < 4; ++r)
#pragma unroll
    for (int c = 0; c < 4; ++c) acc[r][c] = 0.f;
  for (int k0 = 0; k0 < K; k0 += GT_BK) {
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int e = tid + 256 * r;
      const int row = e / GT_BK, k = e % GT_BK;
      const int gm = m0 + row, gk = k0 + k;
      As[k][row] = (gm < M && gk < K) ? ldf(X[(long)gm * ldx + gk]) : 0.f;
      if (TW) {
        const int gn = n0 + row;
        Bs[k][row] = (gn < N && gk < K) ? ldf(W[(long)gn * ldw + gk]) : 0.f;
      } else {
        const int kk = e / GT_BN, col = e % GT_BN;
        const int gn = n0 + col, gk2 = k0 + kk;
        Bs[kk][col] = (gn < N && gk2 < K) ? ldf(W[(long)gk2 * ldw + gn]) : 0.f;
      }
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < GT_BK; ++k) {
      float a[4], b[4];
#pragma unroll
      for (int r = 0; r < 4; ++r) a[r] = As[k][ty + 16 * r];
#pragma unroll
      for (int c = 0; c < 4; ++c) b[c] = Bs[k][tx + 16 * c];
#pragma unroll
      for (int r = 0; r < 4; ++r)
#pragma unroll
        for (int c = 0; c < 4; ++c) acc[r][c] = fmaf(a[r], b[c], acc[r][c]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    const int gm = m0 + ty + 16 * r;
    if (gm >= M) continue;
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const int gn = n0 + tx + 16 * c;
      if (gn >= N) continue;
      YT* y = Y + (long)gm * ldy + gn;
      if constexpr (ACC) *y += acc[r][c];
      else *y = stf(acc[r][c]);
    }
  }
}

XB_KERNEL void __launch_bounds__(256) xb_gemm_nn(const act_t* X, int ldx, const act_t* W, int ldw,
                                                 act_t* Y, int ldy, int M, int N, int K) {
  xb_gemm_body<0, 0, act_t>(X, ldx, W, ldw, Y, ldy, M, N, K);
}
XB_EXPORT(xb_gemm_nn)
XB_KERNEL void __launch_bounds__(256) xb_gemm_nt(const act_t* X, int ldx, const act_t* W, int ldw,
                                                 act_t* Y, int ldy, int M, int N, int K) {
  xb_gemm_body<1, 0, act_t>(X, ldx, W, ldw, Y, ldy, M, N, K);
}
XB_EXPORT(xb_gemm_nt)
XB_KERNEL void __launch_bounds__(256) xb_gemm_nn_acc(const act_t* X, int ldx, const act_t* W,
                                                     int ldw, float* Y, int ldy, int M, int N,
                                                     int K) {
  xb_gemm_body<0, 1, float>(X, ldx, W, ldw, Y, ldy, M, N, K);
}
XB_EXPORT(xb_gemm_nn_acc)
