// A fake cuBLASLt for the CPU emulator: descriptors are plain structs, the
// heuristic offers two algorithms (ids 1 and 2), and cublasLtMatmul checks
// that it was given one of them, then runs the float64-accumulating loops of
// the fake cuBLAS (xbemu_gemm) on each batch entry. Test tool only.
#include <stdint.h>
#include <string.h>

#include <functional>

extern "C" int xbemu_record(void* stream, std::function<int()> op);
extern "C" int xbemu_gemm(int ta, int tb, int m, int n, int k, float alpha, const void* A, int at, int lda,
                          const void* B, int bt, int ldb, float beta, void* C, int ct, int ldc);

namespace {
struct Desc { int compute, scale, ta, tb; };
struct Layout { int type; uint64_t rows, cols; int64_t ld; int batch; int64_t stride; };
struct Algo { uint64_t data[8]; };
struct Heur { Algo algo; size_t ws; int state; float waves; int reserved[4]; };
static_assert(sizeof(Algo) == 64 && sizeof(Heur) == 96, "cublasLt.h layout");
int bytes(int type) { return type == 0 ? 4 : 2; }
}  // namespace

extern "C" {
int cublasLtCreate(void** h) { *h = (void*)0x1; return 0; }
int cublasLtDestroy(void*) { return 0; }
size_t cublasLtGetVersion(void) { return 130000; }
int cublasLtMatmulDescCreate(Desc** d, int compute, int scale) {
  if (scale != 0) return 7;  // CUDA_R_32F scale, as the runtime asks
  *d = new Desc{compute, scale, 0, 0};
  return 0;
}
int cublasLtMatmulDescDestroy(Desc* d) { delete d; return 0; }
int cublasLtMatmulDescSetAttribute(Desc* d, int attr, const void* buf, size_t n) {
  if (n != 4) return 7;
  if (attr == 3) memcpy(&d->ta, buf, 4);
  else if (attr == 4) memcpy(&d->tb, buf, 4);
  else return 7;
  return 0;
}
int cublasLtMatrixLayoutCreate(Layout** l, int type, uint64_t rows, uint64_t cols, int64_t ld) {
  if ((type != 0 && type != 14) || ld < (int64_t)rows) return 7;  // column-major: ld >= rows
  *l = new Layout{type, rows, cols, ld, 1, 0};
  return 0;
}
int cublasLtMatrixLayoutDestroy(Layout* l) { delete l; return 0; }
int cublasLtMatrixLayoutSetAttribute(Layout* l, int attr, const void* buf, size_t n) {
  if (attr == 5 && n == 4) memcpy(&l->batch, buf, 4);
  else if (attr == 6 && n == 8) memcpy(&l->stride, buf, 8);
  else return 7;
  return 0;
}
int cublasLtMatmulPreferenceCreate(void** p) { *p = new char[1]; return 0; }
int cublasLtMatmulPreferenceDestroy(void* p) { delete[] (char*)p; return 0; }
int cublasLtMatmulPreferenceSetAttribute(void*, int attr, const void*, size_t) { return attr == 1 || attr == 3 ? 0 : 7; }
int cublasLtMatmulAlgoGetHeuristic(void*, Desc*, Layout*, Layout*, Layout*, Layout*, void*, int want, Heur* out,
                                   int* got) {
  *got = want < 2 ? want : 2;
  for (int i = 0; i < *got; ++i) {
    memset(&out[i], 0, sizeof(Heur));
    out[i].algo.data[0] = i + 1;
  }
  return 0;
}
int cublasLtMatmulAlgoConfigGetAttribute(const Algo* a, int attr, void* buf, size_t n, size_t* written) {
  int v = attr == 0 ? (int)a->data[0] : 0;
  memcpy(buf, &v, n < 4 ? n : 4);
  *written = 4;
  return 0;
}
int cublasLtMatmul(void*, Desc* d, const void* alpha, const void* A, Layout* la, const void* B, Layout* lb,
                   const void* beta, const void* C, Layout* lc, void* D, Layout* ld, const Algo* algo, void*, size_t,
                   void* stream) {
  if (!algo || algo->data[0] < 1 || algo->data[0] > 2) return 7;  // only what the heuristic offered
  if (C != D || lc != ld || d->compute != 68 && d->compute != 77) return 7;
  const int m = (int)lc->rows, n = (int)lc->cols, k = (int)(d->ta ? la->rows : la->cols);
  if ((d->tb ? lb->cols : lb->rows) != (uint64_t)k || (d->ta ? la->cols : la->rows) != (uint64_t)m ||
      la->batch != lc->batch || lb->batch != lc->batch)
    return 7;
  const float a = *(const float*)alpha, b = *(const float*)beta;
  const Desc dd = *d;
  const Layout xa = *la, xb = *lb, xc = *lc;
  return xbemu_record(stream, [=]() {
    for (int i = 0; i < xc.batch; ++i) {
      const char* pa = (const char*)A + i * xa.stride * bytes(xa.type);
      const char* pb = (const char*)B + i * xb.stride * bytes(xb.type);
      char* pc = (char*)D + i * xc.stride * bytes(xc.type);
      if (int r = xbemu_gemm(dd.ta, dd.tb, m, n, k, a, pa, xa.type, (int)xa.ld, pb, xb.type, (int)xb.ld, b, pc,
                             xc.type, (int)xc.ld))
        return r;
    }
    return 0;
  });
}
}  // extern "C"
