// Stand-ins for hipBLASLt and rocBLAS on the CPU emulator, so the gemm
// workload's rocm call path (handle, descriptors, heuristic, the timed
// choice of algorithm, the product, rocBLAS's strided batched call) runs
// and is checked against the CPU with no AMD GPU. They are not AMD's
// libraries: they take the arguments with hipblaslt.h's and rocblas.h's
// values (operations 111/112, hipDataType, rocblas_datatype 150...), reject
// what the real ones would not be asked for here, and compute with the
// float64-accumulating loops of the fake cuBLAS (xbemu_gemm). Test tool only.
#include <stdint.h>
#include <string.h>

#include <functional>

extern "C" int xbemu_record(void* stream, std::function<int()> op);
extern "C" int xbemu_gemm(int ta, int tb, int m, int n, int k, float alpha, const void* A, int at, int lda,
                          const void* B, int bt, int ldb, float beta, void* C, int ct, int ldc);

namespace {
const int kInvalid = 3, kNotSupported = 7;  // HIPBLAS_STATUS_INVALID_VALUE, _NOT_SUPPORTED
// hipblasOperation_t (and rocblas_operation): 111 N, 112 T; anything else,
// cuBLAS's 0 and 1 included, is refused.
int trans(int op) { return op == 111 ? 0 : op == 112 ? 1 : -1; }
struct Desc { int compute, ta, tb; };
struct Layout { int type; uint64_t rows, cols; int64_t ld; int batch; int64_t stride; };
struct Algo { uint8_t data[16]; size_t max_ws; };
struct Heur { Algo algo; size_t ws; int state; float waves; int reserved[4]; };
static_assert(sizeof(Algo) == 24 && sizeof(Heur) == 56, "hipblaslt.h layout");
// hipDataType: HIP_R_32F 0, HIP_R_16BF 14, the codes the fake cuBLAS's
// loops take (HIP_R_16F is not emulated).
int hip_bytes(int type) { return type == 0 ? 4 : 2; }
}  // namespace

extern "C" {
// ---- hipBLASLt ------------------------------------------------------------------
int hipblasLtCreate(void** h) { *h = (void*)0x2; return 0; }
int hipblasLtDestroy(void*) { return 0; }
// 0: the stand-in is no hipBLASLt release (the record reads "hipblaslt 0.0.0",
// with the emulator library's path beside it).
int hipblasLtGetVersion(void*, int* v) { *v = 0; return 0; }
int hipblasLtMatmulDescCreate(Desc** d, int compute, int scale) {
  if (scale != 0 || (compute != 2 && compute != 6)) return kInvalid;  // HIP_R_32F scale; COMPUTE_32F or _FAST_TF32
  *d = new Desc{compute, 111, 111};
  return 0;
}
int hipblasLtMatmulDescDestroy(Desc* d) { delete d; return 0; }
int hipblasLtMatmulDescSetAttribute(Desc* d, int attr, const void* buf, size_t n) {
  int v;
  if (n != 4 || (attr != 0 && attr != 1)) return kInvalid;  // TRANSA, TRANSB: int32
  memcpy(&v, buf, 4);
  if (trans(v) < 0) return kInvalid;
  (attr == 0 ? d->ta : d->tb) = v;
  return 0;
}
int hipblasLtMatrixLayoutCreate(Layout** l, int type, uint64_t rows, uint64_t cols, int64_t ld) {
  if (type != 0 && type != 14) return kNotSupported;
  if (ld < (int64_t)rows) return kInvalid;  // column-major: ld >= rows
  *l = new Layout{type, rows, cols, ld, 1, 0};
  return 0;
}
int hipblasLtMatrixLayoutDestroy(Layout* l) { delete l; return 0; }
int hipblasLtMatrixLayoutSetAttribute(Layout* l, int attr, const void* buf, size_t n) {
  if (attr == 0 && n == 4) memcpy(&l->batch, buf, 4);        // BATCH_COUNT
  else if (attr == 1 && n == 8) memcpy(&l->stride, buf, 8);  // STRIDED_BATCH_OFFSET
  else return kInvalid;
  return 0;
}
int hipblasLtMatmulPreferenceCreate(void** p) { *p = new char[1]; return 0; }
int hipblasLtMatmulPreferenceDestroy(void* p) { delete[] (char*)p; return 0; }
int hipblasLtMatmulPreferenceSetAttribute(void*, int attr, const void*, size_t n) {
  return attr == 1 && n == 8 ? 0 : kInvalid;  // MAX_WORKSPACE_BYTES, uint64
}
int hipblasLtMatmulAlgoGetHeuristic(void*, Desc*, Layout*, Layout*, Layout*, Layout*, void*, int want, Heur* out,
                                    int* got) {
  *got = want < 2 ? want : 2;
  for (int i = 0; i < *got; ++i) {
    memset(&out[i], 0, sizeof(Heur));
    out[i].algo.data[0] = (uint8_t)(i + 1);
    out[i].waves = 1;
  }
  return 0;
}
int hipblasLtMatmul(void*, Desc* d, const void* alpha, const void* A, Layout* la, const void* B, Layout* lb,
                    const void* beta, const void* C, Layout* lc, void* D, Layout* ld, const Algo* algo, void*, size_t,
                    void* stream) {
  if (!algo || algo->data[0] < 1 || algo->data[0] > 2) return kInvalid;  // only what the heuristic offered
  if (C != D || lc != ld) return kInvalid;
  const int ta = trans(d->ta), tb = trans(d->tb);
  const int m = (int)lc->rows, n = (int)lc->cols, k = (int)(ta ? la->rows : la->cols);
  if ((tb ? lb->cols : lb->rows) != (uint64_t)k || (ta ? la->cols : la->rows) != (uint64_t)m ||
      la->batch != lc->batch || lb->batch != lc->batch)
    return kInvalid;
  const float a = *(const float*)alpha, b = *(const float*)beta;
  const Layout xa = *la, xb = *lb, xc = *lc;
  return xbemu_record(stream, [=]() {
    for (int i = 0; i < xc.batch; ++i) {
      const char* pa = (const char*)A + i * xa.stride * hip_bytes(xa.type);
      const char* pb = (const char*)B + i * xb.stride * hip_bytes(xb.type);
      char* pc = (char*)D + i * xc.stride * hip_bytes(xc.type);
      if (int r = xbemu_gemm(ta, tb, m, n, k, a, pa, xa.type, (int)xa.ld, pb, xb.type, (int)xb.ld, b, pc, xc.type,
                             (int)xc.ld))
        return r;
    }
    return 0;
  });
}

// ---- rocBLAS --------------------------------------------------------------------
struct RocHandle { void* stream; void* ws; size_t ws_bytes; };
const int kRocInvalid = 11, kRocNotImplemented = 2;  // rocblas_status_invalid_value, _not_implemented
static const char kRocVersion[] = "xbemu stand-in (not AMD's rocBLAS)";
int rocblas_create_handle(RocHandle** h) { *h = new RocHandle{nullptr, nullptr, 0}; return 0; }
int rocblas_destroy_handle(RocHandle* h) { delete h; return 0; }
int rocblas_set_stream(RocHandle* h, void* s) { h->stream = s; return 0; }
int rocblas_set_workspace(RocHandle* h, void* p, size_t n) { h->ws = p; h->ws_bytes = n; return 0; }
int rocblas_get_version_string_size(size_t* n) { *n = sizeof kRocVersion; return 0; }
int rocblas_get_version_string(char* b, size_t n) {
  if (n < sizeof kRocVersion) return kRocInvalid;
  memcpy(b, kRocVersion, sizeof kRocVersion);
  return 0;
}
// rocblas_datatype f32_r 151 and bf16_r 168 map to the loops' codes.
static int roc_type(int t) { return t == 151 ? 0 : t == 168 ? 14 : -1; }
int rocblas_gemm_strided_batched_ex(RocHandle* h, int opa, int opb, int m, int n, int k, const void* alpha,
                                    const void* A, int at, int lda, int64_t sa, const void* B, int bt, int ldb,
                                    int64_t sb, const void* beta, const void* C, int ct, int ldc, int64_t sc, void* D,
                                    int dt, int ldd, int64_t sd, int batch, int compute, int algo, int32_t solution,
                                    uint32_t flags) {
  const int ta = trans(opa), tb = trans(opb);
  if (ta < 0 || tb < 0 || compute != 151 || algo != 0 || solution != 0 || flags != 0) return kRocInvalid;
  const int xa = roc_type(at), xb = roc_type(bt), xc = roc_type(ct);
  if (xa < 0 || xb < 0 || xc < 0 || dt != ct) return kRocNotImplemented;
  if (C != D || ldc != ldd || sc != sd || batch < 1) return kRocInvalid;  // as the workload calls it: in place
  const float a = *(const float*)alpha, b = *(const float*)beta;
  return xbemu_record(h->stream, [=]() {
    for (int i = 0; i < batch; ++i) {
      const char* pa = (const char*)A + i * sa * hip_bytes(xa);
      const char* pb = (const char*)B + i * sb * hip_bytes(xb);
      char* pd = (char*)D + i * sd * hip_bytes(xc);
      if (int r = xbemu_gemm(ta, tb, m, n, k, a, pa, xa, lda, pb, xb, ldb, b, pd, xc, ldc)) return r;
    }
    return 0;
  });
}
}  // extern "C"
