// Shared by every kernel file. One source compiles under NVRTC (CUDA), hipRTC
// (HIP) and g++ (the test emulator, XB_EMU); only this block differs.
// The host prepends the configuration as #defines (XB_BF16, XB_F, XB_KB, ...).
#if defined(XB_EMU)
// emu.h (included first by the emulator) supplies the CUDA vocabulary.
#elif defined(__HIPCC_RTC__) || defined(__HIPCC__)
// 32-lane groups on AMD too: width 32 keeps every reduction inside a half of
// a 64-wide wavefront, so the same code is right for both warp sizes.
#define XB_SHFL_XOR(v, m) __shfl_xor((v), (m), 32)
#define XB_DYN_SMEM(name) extern __shared__ float name[]
#else
#define XB_SHFL_XOR(v, m) __shfl_xor_sync(0xffffffffu, (v), (m))
#define XB_DYN_SMEM(name) extern __shared__ __align__(16) float name[]
#endif

// XB_HIP: an AMD target (hipRTC, or the emulator standing in for it). PTX
// assembly, thread-block clusters and mma.sync have no AMD form; the files
// that use them compile out (attention_mma.cu) or refuse (inner_linear_cl.cu
// with XB_CS > 1), and the host code picks the portable kernels on rocm.
#if defined(__HIPCC_RTC__) || defined(__HIPCC__) || defined(XB_EMU_HIP)
#define XB_HIP 1
#else
#define XB_HIP 0
#endif

#define XB_KERNEL extern "C" __global__
#ifndef XB_EXPORT
#define XB_EXPORT(name)
#endif
#ifndef XB_UNROLL
#define XB_UNROLL 2
#endif
#ifndef XB_ONEPASS
#define XB_ONEPASS 0
#endif
#ifndef XB_ROWNT  // threads of the row kernels' blocks (rowThreads in forward.go)
#define XB_ROWNT 256
#endif
#ifndef XB_EPS
#define XB_EPS 1e-6f
#endif

// Activations and dense weights: float32, or bfloat16 kept as raw bits so no
// vendor header is needed. Arithmetic is always float32.
#if XB_BF16
typedef unsigned short act_t;
__device__ __forceinline__ float ldf(act_t v) { return __uint_as_float(((unsigned)v) << 16); }
__device__ __forceinline__ act_t stf(float x) {
  unsigned u = __float_as_uint(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (act_t)((u >> 16) | 0x40u);  // keep NaN a NaN
  u += 0x7fffu + ((u >> 16) & 1u);                                         // round to nearest even
  return (act_t)(u >> 16);
}
#else
typedef float act_t;
__device__ __forceinline__ float ldf(float v) { return v; }
__device__ __forceinline__ float stf(float x) { return x; }
#endif

// Sum over the whole block; every thread gets the total. red holds 32 floats.
// The leading barrier lets a caller reuse red for consecutive reductions.
__device__ __forceinline__ float xb_block_sum(float v, float* red) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += XB_SHFL_XOR(v, o);
  __syncthreads();
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  float t = 0.f;
  const int nw = blockDim.x >> 5;
  for (int i = 0; i < nw; ++i) t += red[i];
  return t;
}

// LayerNorm statistics of one act row of C entries, one block per row: the
// mean and 1/sqrt(population variance + eps), in two passes (the one-pass
// formula loses digits). Every thread gets both.
__device__ __forceinline__ void xb_ln_stats(const act_t* __restrict__ x, int C, float* red, float& mu,
                                            float& r) {
  float s = 0.f;
  for (int c = threadIdx.x; c < C; c += blockDim.x) s += ldf(x[c]);
  mu = xb_block_sum(s, red) / (float)C;
  float v = 0.f;
  for (int c = threadIdx.x; c < C; c += blockDim.x) {
    const float d = ldf(x[c]) - mu;
    v += d * d;
  }
  r = 1.f / sqrtf(xb_block_sum(v, red) / (float)C + XB_EPS);
}

// The training step's gate logits: dz = dgate g (1 - g) of token (b, t),
// gate and dgate [B, nh, L], into columns [3C, ldp) of its row of the fused
// projection's gradient (zeros in the pad past nh). Returns the calling
// thread's share of the sum for dlr_b: thread h < nh owns head h on every
// row when ldp - 3C <= blockDim (the hosts check).
__device__ __forceinline__ float xb_gate_logit_bwd(act_t* __restrict__ row, const float* __restrict__ gate,
                                                   const float* __restrict__ dgate, int C, int ldp, int nh,
                                                   int L, int b, int t) {
  float pz = 0.f;
  for (int c = 3 * C + threadIdx.x; c < ldp; c += blockDim.x) {
    const int h = c - 3 * C;
    float z = 0.f;
    if (h < nh) {
      const long o = ((long)b * nh + h) * L + t;
      const float g = gate[o];
      z = dgate[o] * g * (1.f - g);
      pz += z;
    }
    row[c] = stf(z);
  }
  return pz;
}

// gelu with the tanh approximation, and its derivative.
__device__ __forceinline__ float xb_gelu(float x, float* d) {
  const float k0 = 0.7978845608028654f, k1 = 0.044715f;
  const float t = tanhf(k0 * (x + k1 * x * x * x));
  if (d) *d = 0.5f * (1.f + t) + 0.5f * x * (1.f - t * t) * k0 * (1.f + 3.f * k1 * x * x);
  return 0.5f * x * (1.f + t);
}
