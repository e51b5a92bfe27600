// Row-wise parts of the forward pass. Rows are tokens (n = b*L + t); the
// residual stream h stays float32 in every dtype because it is a running sum.

// h[n, :] = embed[tok[n], :]. One block per token.
XB_KERNEL void xb_embed(const int* __restrict__ tok, const act_t* __restrict__ emb,
                        float* __restrict__ h, int C) {
  const long n = blockIdx.x;
  const long t = tok[n];
  for (int c = threadIdx.x; c < C; c += blockDim.x) h[n * C + c] = ldf(emb[t * C + c]);
}
XB_EXPORT(xb_embed)

// y = x / sqrt(mean(x^2) + eps) * w. One block per row.
XB_KERNEL void xb_rmsnorm(const float* __restrict__ x, const float* __restrict__ w,
                          act_t* __restrict__ y, int C) {
  __shared__ float red[32];
  const long row = (long)blockIdx.x * C;
  float s = 0.f;
  for (int c = threadIdx.x; c < C; c += blockDim.x) {
    const float v = x[row + c];
    s += v * v;
  }
  s = xb_block_sum(s, red);
  const float r = 1.f / sqrtf(s / (float)C + XB_EPS);
  for (int c = threadIdx.x; c < C; c += blockDim.x) y[row + c] = stf(x[row + c] * r * w[c]);
}
XB_EXPORT(xb_rmsnorm)

// y = (x - mean) / sqrt(var + eps) * w + b over a row (post_norm). Two passes
// over the row for the variance: the one-pass formula loses digits.
XB_KERNEL void xb_layernorm(const act_t* __restrict__ x, const float* __restrict__ w,
                            const float* __restrict__ b, act_t* __restrict__ y, int C) {
  __shared__ float red[32];
  const long row = (long)blockIdx.x * C;
  float mu, r;
  xb_ln_stats(x + row, C, red, mu, r);
  for (int c = threadIdx.x; c < C; c += blockDim.x)
    y[row + c] = stf((ldf(x[row + c]) - mu) * r * w[c] + b[c]);
}
XB_EXPORT(xb_layernorm)

// From the fused projection P = X @ [wq | wk | wv | lr_w^T] (row stride ldp):
// RoPE on q and k at position t mod KB, v copied, gate = sigmoid(logit + lr_b),
// all written head-major [B, nh, L, f] / [B, nh, L] for the inner kernel.
// Block i handles row n0 + i, so a launch can cover one chunk of rows.
// rope holds cos and sin of p * theta^(-2i/f), [KB][f/2][2], made on the host in
// float64.
XB_KERNEL void xb_prep(const act_t* __restrict__ P, int ldp, const float* __restrict__ lr_b,
                       const float* __restrict__ rope, act_t* __restrict__ xq,
                       act_t* __restrict__ xk, act_t* __restrict__ xv,
                       float* __restrict__ gate, int L, int nh, int n0) {
  const int n = n0 + blockIdx.x, b = n / L, t = n % L, p = t % XB_KB;
  const int half = XB_F / 2, C = nh * XB_F;
  const act_t* row = P + (long)n * ldp;
  for (int e = threadIdx.x; e < nh * half; e += blockDim.x) {
    const int h = e / half, i = e % half;
    const float cs = rope[(p * half + i) * 2], sn = rope[(p * half + i) * 2 + 1];
    const long o = (((long)b * nh + h) * L + t) * XB_F;
    const int c0 = h * XB_F + i, c1 = c0 + half;
    const float q0 = ldf(row[c0]), q1 = ldf(row[c1]);
    xq[o + i] = stf(q0 * cs - q1 * sn);
    xq[o + i + half] = stf(q1 * cs + q0 * sn);
    const float k0 = ldf(row[C + c0]), k1 = ldf(row[C + c1]);
    xk[o + i] = stf(k0 * cs - k1 * sn);
    xk[o + i + half] = stf(k1 * cs + k0 * sn);
    xv[o + i] = row[2 * C + c0];
    xv[o + i + half] = row[2 * C + c1];
  }
  for (int h = threadIdx.x; h < nh; h += blockDim.x) {
    const float z = ldf(row[3 * C + h]) + lr_b[h];
    gate[((long)b * nh + h) * L + t] = 1.f / (1.f + expf(-z));
  }
}
XB_EXPORT(xb_prep)

// a = silu(g) * u where gu rows are [g (I) | u (I)].
XB_KERNEL void xb_swiglu(const act_t* __restrict__ gu, act_t* __restrict__ a, int I, long total) {
  for (long e = (long)blockIdx.x * blockDim.x + threadIdx.x; e < total;
       e += (long)gridDim.x * blockDim.x) {
    const long n = e / I;
    const int j = (int)(e % I);
    const float g = ldf(gu[n * 2 * I + j]), u = ldf(gu[n * 2 * I + I + j]);
    a[e] = stf(g / (1.f + expf(-g)) * u);
  }
}
XB_EXPORT(xb_swiglu)
