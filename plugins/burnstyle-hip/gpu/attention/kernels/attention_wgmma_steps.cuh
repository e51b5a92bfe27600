// The consumer's steps in attention_wgmma.cu, shared by its two schedules
// (serial and overlapped, XW_OVERLAP): issue q.k^T, issue P.v, the masked
// online softmax, O's rescale and P's packing. Arrays are passed by
// pointer and every loop is unrolled, so once inlined each element is a
// register (no local memory).
#if XA_DT != 0 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ __forceinline__ void xw_wait1() { asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory"); }
// xw_hold for P's packed registers.
template <int n>
__device__ __forceinline__ void xw_hold_u(unsigned* d) {
#pragma unroll
  for (int i = 0; i < n; ++i) asm volatile("" : "+r"(d[i])::"memory");
}
// The wgmma.fence before products that read o and a: o's rescale and a's
// pack are tied before it (held), since the fence orders only the register
// accesses that precede it.
__device__ __forceinline__ void xw_fence_oa(float* o, unsigned (*a)[4]) {
  xw_hold<XW_DP / 2>(o);
  xw_hold_u<XW_BN / 4>(&a[0][0]);
  xw_fence();
}

// S = q.k^T for this consumer's 64 rows (q at qa) and one k stage (at ka):
// 16 head-dim columns a step, half kk/4, 32 bytes into the swizzle atom
// per step. The first step overwrites s. Needs a wgmma.fence before it.
__device__ __forceinline__ void xw_qk(float* s, unsigned qa, unsigned ka) {
#pragma unroll
  for (int kk = 0; kk < XW_DP / 16; ++kk) {
    const unsigned off = (kk & 3) * 32;
    const unsigned long long qd = xw_desc(qa + (kk >> 2) * XW_BM * 128 + off, 16, 1024);
    const unsigned long long kd = xw_desc(ka + (kk >> 2) * XW_BN * 128 + off, 16, 1024);
#if XW_BN == 128
    if (kk == 0)
      xw_ss_n128_first(s, qd, kd);
    else
      xw_ss_n128(s, qd, kd, 1);
#elif XW_BN == 96
    if (kk == 0)
      xw_ss_n96_first(s, qd, kd);
    else
      xw_ss_n96(s, qd, kd, 1);
#else
    if (kk == 0)
      xw_ss_n64_first(s, qd, kd);
    else
      xw_ss_n64(s, qd, kd, 1);
#endif
  }
}

// O += P.v (v stage at va): 16 keys a step; v's descriptor starts at key
// row 16j (two 8-row atoms, stride 1024), its head-dim halves XW_BN * 128
// apart. Needs a wgmma.fence after o and a were last written.
__device__ __forceinline__ void xw_pv(float* o, const unsigned (*a)[4], unsigned va) {
#pragma unroll
  for (int j = 0; j < XW_BN / 16; ++j) {
#if XW_VSWAP
    const unsigned long long vd = xw_desc(va + j * 16 * 128, 1024, XW_BN * 128);
#else
    const unsigned long long vd = xw_desc(va + j * 16 * 128, XW_BN * 128, 1024);
#endif
#if XW_DP == 128
    xw_rs_n128(o, a[j], vd);
#else
    xw_rs_n64(o, a[j], vd);
#endif
  }
}

// exp2 by the special-function unit alone (ex2.approx.ftz): exp2f adds a
// rescale around it for subnormal results, two instructions an element;
// a probability below 2^-126 flushed to 0 changes no output in 16 bits.
__device__ __forceinline__ float xw_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// The raw scores s of the tile starting at key n0, for this lane's rows
// row and row + 8 (global), become P = exp2(s * qmul - new max) (one FFMA
// each: the max is taken on raw scores, qmul > 0), with keys past the end
// or above the causal diagonal masked first, only on tiles that cross
// either (edge). Max and sum over the quad's lanes; the running max m (in
// scaled units) and sum l updated. alpha is the factor O must take,
// exp2(old max - new max), per row: the caller applies it (the overlapped
// schedule only once P.v of the previous tile has finished with O).
// XW_DEBUG 2 makes P the identity instead.
__device__ __forceinline__ void xw_softmax(float* s, float* mrow, float* lrow, float* alpha, int n0, int row, int tq,
                                           bool edge, int KV, int causal, int shift, float qmul) {
  const float NEG_INF = __uint_as_float(0xff800000u);
#if XW_DEBUG == 2
#pragma unroll
  for (int e = 0; e < XW_BN / 2; ++e) {
    const int col = 8 * (e >> 2) + 2 * tq + (e & 1), r = row + 8 * ((e >> 1) & 1);
    s[e] = col == r % XW_BN ? 1.f : 0.f;
  }
  lrow[0] = lrow[1] = 1.f, alpha[0] = alpha[1] = 1.f;
#else
  if (edge) {
#pragma unroll
    for (int e = 0; e < XW_BN / 2; ++e) {
      const int col = n0 + 8 * (e >> 2) + 2 * tq + (e & 1), r = row + 8 * ((e >> 1) & 1);
      if (col >= KV || (causal && col > r + shift)) s[e] = NEG_INF;
    }
  }
#pragma unroll
  for (int hr = 0; hr < 2; ++hr) {
    float mx = NEG_INF;
#pragma unroll
    for (int n = 0; n < XW_BN / 8; ++n) mx = fmaxf(mx, fmaxf(s[4 * n + 2 * hr], s[4 * n + 2 * hr + 1]));
    mx = fmaxf(mx, XB_SHFL_XOR(mx, 1));
    mx = fmaxf(mx, XB_SHFL_XOR(mx, 2));
    const float mnew = fmaxf(mrow[hr], mx * qmul);
    const float base = mnew == NEG_INF ? 0.f : mnew;  // no visible key yet: p = 0, no inf - inf
    alpha[hr] = xw_exp2(mrow[hr] - base);
    float sum = 0.f;
#pragma unroll
    for (int n = 0; n < XW_BN / 8; ++n)
#pragma unroll
      for (int e = 4 * n + 2 * hr; e < 4 * n + 2 * hr + 2; ++e) {
        s[e] = xw_exp2(fmaf(s[e], qmul, -base));
        sum += s[e];
      }
    sum += XB_SHFL_XOR(sum, 1);
    sum += XB_SHFL_XOR(sum, 2);
    lrow[hr] = lrow[hr] * alpha[hr] + sum;
    mrow[hr] = mnew;
  }
#endif
}

// Keeps the softmax before the next wgmma wait: ptxas's scheduler sinks
// independent work past a wgmma.wait_group (in SASS the exp2s of tile i
// landed after P.v(i-1)'s wait, so nothing overlapped); a branch on the
// row sums (which need every exp2) is a line it does not move them across.
// Never taken: sums of exp2 are >= 0 (a NaN compares false).
__device__ __forceinline__ void xw_settle(const float* lrow) {
  if (fminf(lrow[0], lrow[1]) < 0.f) asm volatile("trap;");
}

// O *= alpha, per row (accumulator element e is row (e >> 1) & 1).
__device__ __forceinline__ void xw_rescale(float* o, const float* alpha) {
#pragma unroll
  for (int n = 0; n < XW_DP / 8; ++n)
#pragma unroll
    for (int hr = 0; hr < 2; ++hr) o[4 * n + 2 * hr] *= alpha[hr], o[4 * n + 2 * hr + 1] *= alpha[hr];
}

// P in the dtype, as P.v's A fragments: per 16 keys, S's accumulator
// layout is the m16n8k16 A fragment.
__device__ __forceinline__ void xw_pack(unsigned (*a)[4], const float* s) {
#pragma unroll
  for (int j = 0; j < XW_BN / 16; ++j) {
    a[j][0] = xa_pack2(s[8 * j], s[8 * j + 1]), a[j][1] = xa_pack2(s[8 * j + 2], s[8 * j + 3]);
    a[j][2] = xa_pack2(s[8 * j + 4], s[8 * j + 5]), a[j][3] = xa_pack2(s[8 * j + 6], s[8 * j + 7]);
  }
}
#endif
