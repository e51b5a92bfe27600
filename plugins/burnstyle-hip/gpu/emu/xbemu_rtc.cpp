// Fake NVRTC (g++ on the kernel source) and fake cuBLAS (plain loops with
// float64 accumulation) for the CPU emulator in xbemu.cpp.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <utime.h>

#include <functional>
#include <string>
#include <vector>

extern "C" int xbemu_record(void* stream, std::function<int()> op);  // xbemu.cpp: run, or capture

extern "C" {
// ---- NVRTC -----------------------------------------------------------------
struct Prog { std::string src, log, so; };
int nvrtcVersion(int* a, int* b) { *a = 13; *b = 0; return 0; }
const char* nvrtcGetErrorString(int r) { return r ? "NVRTC_ERROR_COMPILATION (xbemu)" : "NVRTC_SUCCESS"; }
int nvrtcCreateProgram(Prog** p, const char* src, const char*, int, const char**, const char**) {
  *p = new Prog{src, "", ""};
  return 0;
}
int nvrtcDestroyProgram(Prog** p) {  // k.so stays for cuModuleLoadData, which removes it
  delete *p;
  *p = nullptr;
  return 0;
}
// fnv1a is the 64-bit FNV-1a hash: the compile cache's key.
static uint64_t fnv1a(const std::string& s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}
// copy_file copies from to to (a fresh file), returning false on any error.
static bool copy_file(const std::string& from, const std::string& to) {
  FILE* in = fopen(from.c_str(), "rb");
  if (!in) return false;
  FILE* out = fopen(to.c_str(), "wb");
  if (!out) { fclose(in); return false; }
  char buf[65536];
  size_t got;
  bool ok = true;
  while ((got = fread(buf, 1, sizeof buf, in)) > 0) ok = ok && fwrite(buf, 1, got, out) == got;
  fclose(in);
  return fclose(out) == 0 && ok;
}
// With XBEMU_CACHE set (a folder), a program is compiled once: the shared
// object of every (g++ options, emu.h's text, source) is kept there and
// copied out (keyed without emu.h's folder, so a fresh checkout elsewhere
// reuses it: CI clones into a new path every run)
// for later compiles of the same program, so tests that build one model
// many times pay g++ once. The copy keeps cuModuleLoadData's contract (it
// dlopens and removes a file of its own).
int nvrtcCompileProgram(Prog* p, int n, const char** opts) {
  const char* inc = getenv("XBEMU_INCLUDE");
  if (!inc) { p->log = "xbemu: XBEMU_INCLUDE (the folder of emu.h) is not set"; return 6; }
  char dir[] = "/tmp/xbemu-XXXXXX";
  if (!mkdtemp(dir)) { p->log = "xbemu: mkdtemp failed"; return 6; }
  std::string cu = std::string(dir) + "/k.cpp", so = std::string(dir) + "/k.so";
  // -g only on request (XBEMU_DEBUG=1, for a debugger's line numbers): it
  // costs ~16% of the tests' g++ time and no test reads it.
  const char* dbg = getenv("XBEMU_DEBUG");
  std::string opt = std::string("-std=c++17 -O1") + (dbg && strcmp(dbg, "1") == 0 ? " -g" : "") +
                    " -shared -fPIC -fno-strict-aliasing -w";
  for (int i = 0; i < n; ++i)
    if (strncmp(opts[i], "-D", 2) == 0) opt += std::string(" '") + opts[i] + "'";
  const std::string flags = "g++ " + opt + " -include " + std::string(inc) + "/emu.h";
  std::string cached;
  if (const char* cache = getenv("XBEMU_CACHE")) {
    std::string hdr;
    if (FILE* h = fopen((std::string(inc) + "/emu.h").c_str(), "rb")) {
      char buf[65536];
      size_t got;
      while ((got = fread(buf, 1, sizeof buf, h)) > 0) hdr.append(buf, got);
      fclose(h);
    }
    char key[40];
    snprintf(key, sizeof key, "%016llx%016llx", (unsigned long long)fnv1a(p->src, fnv1a(opt)),
             (unsigned long long)fnv1a(hdr, fnv1a(p->src)));
    cached = std::string(cache) + "/" + key + ".so";
    if (copy_file(cached, so)) {
      utime(cached.c_str(), nullptr);  // used: the tests' pruning keeps it
      p->so = so;
      return 0;
    }
  }
  FILE* f = fopen(cu.c_str(), "w");
  fwrite(p->src.data(), 1, p->src.size(), f);
  fclose(f);
  std::string cmd = flags + " -o " + so + " " + cu + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  char buf[4096];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, pipe)) > 0) p->log.append(buf, got);
  int rc = pclose(pipe);
  unlink(cu.c_str());
  if (rc != 0) return 6;
  p->so = so;
  if (!cached.empty()) {  // publish whole: a copy then a rename, so no reader sees half a file
    std::string tmp = cached + "." + std::to_string(getpid()) + ".tmp";
    if (copy_file(so, tmp)) rename(tmp.c_str(), cached.c_str());
    else unlink(tmp.c_str());
  }
  return 0;
}
int nvrtcGetProgramLogSize(Prog* p, size_t* n) { *n = p->log.size() + 1; return 0; }
int nvrtcGetProgramLog(Prog* p, char* b) { memcpy(b, p->log.c_str(), p->log.size() + 1); return 0; }
// The "binary" is the path of the shared object; cuModuleLoadData dlopens it.
int nvrtcGetCUBINSize(Prog* p, size_t* n) { *n = p->so.size() + 1; return 0; }
int nvrtcGetCUBIN(Prog* p, char* b) { memcpy(b, p->so.c_str(), p->so.size() + 1); return 0; }

// ---- cuBLAS (column-major, as the real one) -------------------------------
// A handle remembers its stream, so a GEMM sent to the legacy stream while
// another stream captures is caught (xbemu_record) as on a real device.
struct Handle { void* stream; };
int cublasCreate_v2(Handle** h) { *h = new Handle{nullptr}; return 0; }
int cublasDestroy_v2(Handle* h) { delete h; return 0; }
int cublasSetMathMode(Handle*, int) { return 0; }
int cublasSetWorkspace_v2(Handle*, void*, size_t) { return 0; }
int cublasGetVersion_v2(Handle*, int* v) { *v = 130000; return 0; }
int cublasSetStream_v2(Handle* h, void* s) { h->stream = s; return 0; }

static float bf(uint16_t h) { uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f; }
static uint16_t tobf(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  u += 0x7fff + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}
static double ld(const void* p, int type, size_t i) {
  return type == 14 ? bf(((const uint16_t*)p)[i]) : ((const float*)p)[i];
}
// gemm is C = alpha op(A) op(B) + beta C, column-major, each sum in float64
// over l in order. The operands are first unpacked to float64 rows along k
// (a[i][l] = op(A)[i, l], b[j][l] = op(B)[l, j]), so the sums read memory
// contiguously: the same numbers as reading them strided, many times faster
// on the 125m model's products.
static int gemm(int ta, int tb, int m, int n, int k, float alpha, const void* A, int at, int lda,
                const void* B, int bt, int ldb, float beta, void* C, int ct, int ldc) {
  if ((at != 0 && at != 14) || (bt != 0 && bt != 14) || (ct != 0 && ct != 14)) return 7;
  std::vector<double> a((size_t)m * k), b((size_t)n * k);
  for (int i = 0; i < m; ++i)
    for (int l = 0; l < k; ++l)
      a[(size_t)i * k + l] = ta ? ld(A, at, l + (size_t)i * lda) : ld(A, at, i + (size_t)l * lda);
  for (int j = 0; j < n; ++j)
    for (int l = 0; l < k; ++l)
      b[(size_t)j * k + l] = tb ? ld(B, bt, j + (size_t)l * ldb) : ld(B, bt, l + (size_t)j * ldb);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      const double* ar = &a[(size_t)i * k];
      const double* br = &b[(size_t)j * k];
      double s = 0;
      for (int l = 0; l < k; ++l) s += ar[l] * br[l];
      const size_t o = i + (size_t)j * ldc;
      double prev = beta != 0 ? ld(C, ct, o) : 0;
      float v = (float)(alpha * s + beta * prev);
      if (ct == 14) ((uint16_t*)C)[o] = tobf(v);
      else ((float*)C)[o] = v;
    }
  return 0;
}
// xbemu_gemm is gemm for the fake cuBLASLt (xbemu_lt.cpp).
int xbemu_gemm(int ta, int tb, int m, int n, int k, float alpha, const void* A, int at, int lda, const void* B,
               int bt, int ldb, float beta, void* C, int ct, int ldc) {
  return gemm(ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc);
}
int cublasSgemm_v2(Handle* h, int ta, int tb, int m, int n, int k, const float* alpha, const float* A,
                   int lda, const float* B, int ldb, const float* beta, float* C, int ldc) {
  const float a = *alpha, b = *beta;  // host scalars are read at the call, as cuBLAS's host pointer mode does
  return xbemu_record(h->stream, [=]() { return gemm(ta, tb, m, n, k, a, A, 0, lda, B, 0, ldb, b, C, 0, ldc); });
}
int cublasGemmEx(Handle* h, int ta, int tb, int m, int n, int k, const void* alpha, const void* A,
                 int at, int lda, const void* B, int bt, int ldb, const void* beta, void* C, int ct,
                 int ldc, int compute, int algo) {
  if (compute != 68) return 7;  // the runtime asks for CUBLAS_COMPUTE_32F
  const float a = *(const float*)alpha, b = *(const float*)beta;
  return xbemu_record(h->stream, [=]() { return gemm(ta, tb, m, n, k, a, A, at, lda, B, bt, ldb, b, C, ct, ldc); });
}
}
