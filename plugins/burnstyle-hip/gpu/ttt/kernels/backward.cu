// Row-wise parts of the training step's backward (docs/ttt-backward.md,
// "Loss and head", "Dense pieces", "The TTT layer around the inner loop").
// Gradients that feed a GEMM are written in the act type; the rest, and
// every reduction, are float32. Norm-weight gradients are column sums over
// all rows: each block walks rows blockIdx.x, +gridDim.x, ... keeping its
// columns' partial sums in registers (thread t owns columns t + k*blockDim,
// C <= XB_CPT*blockDim), then adds them to the gradient once with atomics,
// so a launch of a few hundred blocks costs a few hundred atomics a column.
#define XB_CPT 8

__device__ __forceinline__ void xb_flush_cols(float* dst, const float (&p)[XB_CPT], int C) {
#pragma unroll
  for (int k = 0; k < XB_CPT; ++k) {
    const int c = threadIdx.x + k * blockDim.x;
    if (c < C) atomicAdd(dst + c, p[k]);
  }
}

// Mean next-token cross-entropy over the N = B*(L-1) labelled positions
// (label tokens[n+1], none at t = L-1): loss[n] per row and
// dlogits = (softmax - onehot) * inv_n, zero rows where there is no label.
// One block per row; three passes over V (max, sum, write).
XB_KERNEL void xb_xent(const act_t* __restrict__ logits, const int* __restrict__ tok,
                       act_t* __restrict__ dlogits, float* __restrict__ loss, int V, int L,
                       float inv_n) {
  __shared__ float red[32];
  const long n = blockIdx.x;
  const act_t* lr = logits + n * V;
  act_t* dr = dlogits + n * V;
  if (n % L == L - 1) {
    for (int v = threadIdx.x; v < V; v += blockDim.x) dr[v] = stf(0.f);
    if (threadIdx.x == 0) loss[n] = 0.f;
    return;
  }
  const int y = tok[n + 1];
  float mx = __uint_as_float(0xff800000u);  // -inf
  for (int v = threadIdx.x; v < V; v += blockDim.x) mx = fmaxf(mx, ldf(lr[v]));
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) mx = fmaxf(mx, XB_SHFL_XOR(mx, o));
  __syncthreads();
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = mx;
  __syncthreads();
  for (int i = 0; i < (int)(blockDim.x >> 5); ++i) mx = fmaxf(mx, red[i]);
  float s = 0.f;
  for (int v = threadIdx.x; v < V; v += blockDim.x) s += expf(ldf(lr[v]) - mx);
  s = xb_block_sum(s, red);
  const float is = 1.f / s;
  for (int v = threadIdx.x; v < V; v += blockDim.x) {
    const float p = expf(ldf(lr[v]) - mx) * is;
    dr[v] = stf((p - (v == y ? 1.f : 0.f)) * inv_n);
  }
  if (threadIdx.x == 0) loss[n] = (logf(s) + mx - ldf(lr[y])) * inv_n;
}
XB_EXPORT(xb_xent)

// RMSNorm backward, y = x r w with r = 1/sqrt(mean(x^2) + eps):
// dx = r (dy w) - x r^3 mean(dy w x), added into dh (acc) or stored; dha,
// when set, gets the act copy of dh for the next GEMM; dw += sum dy x r.
XB_KERNEL void xb_rmsnorm_bwd(const float* __restrict__ x, const float* __restrict__ w,
                              const float* __restrict__ dy, float* __restrict__ dh,
                              act_t* __restrict__ dha, float* __restrict__ dw, int C, int N,
                              int acc) {
  __shared__ float red[32];
  float pw[XB_CPT] = {};
  for (long row = blockIdx.x; row < N; row += gridDim.x) {
    const float* xr = x + row * C;
    const float* dr = dy + row * C;
    float ss = 0.f, sd = 0.f;
#pragma unroll
    for (int k = 0; k < XB_CPT; ++k) {
      const int c = threadIdx.x + k * blockDim.x;
      if (c < C) {
        const float v = xr[c];
        ss += v * v;
        sd += dr[c] * w[c] * v;
      }
    }
    ss = xb_block_sum(ss, red);
    sd = xb_block_sum(sd, red);
    const float r = 1.f / sqrtf(ss / (float)C + XB_EPS), t = r * r * r * sd / (float)C;
#pragma unroll
    for (int k = 0; k < XB_CPT; ++k) {
      const int c = threadIdx.x + k * blockDim.x;
      if (c < C) {
        const float v = xr[c], g = dr[c];
        float d = r * g * w[c] - v * t;
        if (acc) d += dh[row * C + c];
        dh[row * C + c] = d;
        if (dha) dha[row * C + c] = stf(d);
        pw[k] = fmaf(g, v * r, pw[k]);
      }
    }
  }
  xb_flush_cols(dw, pw, C);
}
XB_EXPORT(xb_rmsnorm_bwd)

// LayerNorm backward (post_norm), y = w xh + b: dx = (d - mean(d) -
// xh mean(d xh)) / s with d = dy w; dw += sum dy xh, db += sum dy.
// The bound (the host's rowThreads) lets hipRTC give it registers for 256
// threads: left to assume 1024, it spilled 56 B a thread on gfx1030.
XB_KERNEL void __launch_bounds__(XB_ROWNT) xb_layernorm_bwd(const act_t* __restrict__ x, const float* __restrict__ w,
                                const float* __restrict__ dy, float* __restrict__ dx,
                                float* __restrict__ dw, float* __restrict__ db, int C, int N) {
  __shared__ float red[32];
  float pw[XB_CPT] = {}, pb[XB_CPT] = {};
  for (long row = blockIdx.x; row < N; row += gridDim.x) {
    const act_t* xr = x + row * C;
    const float* dr = dy + row * C;
    float xv[XB_CPT], s = 0.f;
#pragma unroll
    for (int k = 0; k < XB_CPT; ++k) {
      const int c = threadIdx.x + k * blockDim.x;
      xv[k] = c < C ? ldf(xr[c]) : 0.f;
      s += xv[k];
    }
    const float mu = xb_block_sum(s, red) / (float)C;
    float v = 0.f;
#pragma unroll
    for (int k = 0; k < XB_CPT; ++k) {
      const int c = threadIdx.x + k * blockDim.x;
      if (c < C) v += (xv[k] - mu) * (xv[k] - mu);
    }
    const float rs = 1.f / sqrtf(xb_block_sum(v, red) / (float)C + XB_EPS);
    float sd = 0.f, sdx = 0.f;
#pragma unroll
    for (int k = 0; k < XB_CPT; ++k) {
      const int c = threadIdx.x + k * blockDim.x;
      if (c < C) {
        xv[k] = (xv[k] - mu) * rs;
        const float d = dr[c] * w[c];
        sd += d;
        sdx += d * xv[k];
      }
    }
    sd = xb_block_sum(sd, red) / (float)C;
    sdx = xb_block_sum(sdx, red) / (float)C;
#pragma unroll
    for (int k = 0; k < XB_CPT; ++k) {
      const int c = threadIdx.x + k * blockDim.x;
      if (c < C) {
        const float g = dr[c];
        dx[row * C + c] = (g * w[c] - sd - xv[k] * sdx) * rs;
        pw[k] = fmaf(g, xv[k], pw[k]);
        pb[k] += g;
      }
    }
  }
  xb_flush_cols(dw, pw, C);
  xb_flush_cols(db, pb, C);
}
XB_EXPORT(xb_layernorm_bwd)

// SwiGLU backward: from gu rows [g | u] and da = d(silu(g) u):
// dg = da u s (1 + g (1 - s)) with s = sigmoid(g), du = da silu(g).
XB_KERNEL void xb_swiglu_bwd(const act_t* __restrict__ gu, const float* __restrict__ da,
                             act_t* __restrict__ dgu, int I, long total) {
  for (long e = (long)blockIdx.x * blockDim.x + threadIdx.x; e < total;
       e += (long)gridDim.x * blockDim.x) {
    const long n = e / I;
    const int j = (int)(e % I);
    const float g = ldf(gu[n * 2 * I + j]), u = ldf(gu[n * 2 * I + I + j]), d = da[e];
    const float s = 1.f / (1.f + expf(-g));
    dgu[n * 2 * I + j] = stf(d * u * s * (1.f + g * (1.f - s)));
    dgu[n * 2 * I + I + j] = stf(d * g * s);
  }
}
XB_EXPORT(xb_swiglu_bwd)

// Backward of xb_prep: from the inner backward's head-major dq, dk, dv
// [B, nh, L, f] (rotated q and k) and dgate [B, nh, L], the gradient of the
// fused projection P = X [wq | wk | wv | lr_w^T] as rows of dP [N, ldp]:
// RoPE's inverse rotation at the same angle, dz = dgate g (1 - g) for the
// gate logits, zero pad columns; dlrb += sum over rows of dz.
XB_KERNEL void xb_prep_bwd(const float* __restrict__ dq, const float* __restrict__ dk,
                           const float* __restrict__ dv, const float* __restrict__ dgate,
                           const float* __restrict__ gate, const float* __restrict__ rope,
                           act_t* __restrict__ dP, int ldp, float* __restrict__ dlrb, int L, int nh,
                           int N) {
  const int half = XB_F / 2, C = nh * XB_F;
  float pz = 0.f;
  for (int n = blockIdx.x; n < N; n += gridDim.x) {
    const int b = n / L, t = n % L, p = t % XB_KB;
    act_t* row = dP + (long)n * ldp;
    for (int e = threadIdx.x; e < nh * half; e += blockDim.x) {
      const int h = e / half, i = e % half;
      const float cs = rope[(p * half + i) * 2], sn = rope[(p * half + i) * 2 + 1];
      const long o = (((long)b * nh + h) * L + t) * XB_F;
      const int c0 = h * XB_F + i, c1 = c0 + half;
      const float q0 = dq[o + i], q1 = dq[o + i + half], k0 = dk[o + i], k1 = dk[o + i + half];
      row[c0] = stf(q0 * cs + q1 * sn);
      row[c1] = stf(q1 * cs - q0 * sn);
      row[C + c0] = stf(k0 * cs + k1 * sn);
      row[C + c1] = stf(k1 * cs - k0 * sn);
      row[2 * C + c0] = stf(dv[o + i]);
      row[2 * C + c1] = stf(dv[o + i + half]);
    }
    pz += xb_gate_logit_bwd(row, gate, dgate, C, ldp, nh, L, b, t);
  }
  // ldp - 3C <= blockDim (the host checks), so thread h < nh owned column
  // 3C + h on every row.
  if ((int)threadIdx.x < nh) atomicAdd(dlrb + threadIdx.x, pz);
}
XB_EXPORT(xb_prep_bwd)

// dembed[tokens[n]] += dh[n]: a scatter-add, the same row may come many
// times. One block per token.
XB_KERNEL void xb_embed_bwd(const int* __restrict__ tok, const float* __restrict__ dh,
                            float* __restrict__ demb, int C) {
  const long n = blockIdx.x, t = tok[n];
  for (int c = threadIdx.x; c < C; c += blockDim.x) atomicAdd(demb + t * C + c, dh[n * C + c]);
}
XB_EXPORT(xb_embed_bwd)

// dst = src over n floats: the training forward's residual snapshots.
XB_KERNEL void xb_copy(const float* __restrict__ src, float* __restrict__ dst, long n) {
  for (long e = (long)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += (long)gridDim.x * blockDim.x)
    dst[e] = src[e];
}
XB_EXPORT(xb_copy)

// p[0:n) = 0: the gradients, zeroed at the start of each training step.
XB_KERNEL void xb_zero(float* __restrict__ p, long n) {
  for (long e = (long)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += (long)gridDim.x * blockDim.x)
    p[e] = 0.f;
}
XB_EXPORT(xb_zero)
