// A CPU stand-in for libcuda + libnvrtc + libcublas, exporting the symbols
// the Go runtime loads, so its whole GPU path runs on a machine without a
// GPU. "Compiling" runs g++ on the kernel source with emu.h; device memory is
// host memory with a guard zone checked at every sync; a launch runs each
// block's threads as fibers (ucontext). Test tool only: never shipped.
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "emu.h"

typedef int CUresult;
enum { OK = 0, E_VALUE = 1, E_CTX = 201, E_NOTFOUND = 500, E_ILLEGAL = 700, E_LAUNCH = 719 };
static const size_t kGuard = 256;

static pthread_t g_ctx_thread;
static bool g_ctx_set = false;
static std::map<uintptr_t, size_t> g_allocs;
static std::string g_fault;

static bool ctx_ok() { return g_ctx_set && pthread_equal(pthread_self(), g_ctx_thread); }
#define NEED_CTX() \
  if (!ctx_ok()) return E_CTX

static CUresult check_guards() {
  for (auto& a : g_allocs) {
    const unsigned char* g = (const unsigned char*)a.first + a.second;
    for (size_t i = 0; i < kGuard; ++i)
      if (g[i] != 0xAB) {
        fprintf(stderr, "xbemu: write past the end of a %zu-byte allocation\n", a.second);
        return E_ILLEGAL;
      }
  }
  return g_fault.empty() ? OK : E_LAUNCH;
}

// ---- fibers --------------------------------------------------------------
// One launch group is one cluster of g_cs blocks (1 without clusters), each of
// g_nt threads; fiber flat = block-in-cluster * g_nt + thread.
//
// A fiber starts on its own stack through makecontext/setcontext, and every
// switch after that (a barrier, a shuffle, the end) is _setjmp/_longjmp,
// which, unlike swapcontext, leaves the signal mask alone: no system call
// per switch. swapcontext's two sigprocmask calls were most of the
// emulator's time (perf, 2026-11-26), as kernels switch at every barrier.
enum { RUN, BAR, WARP, CLBAR, SPIN, DONE };
struct Fiber {
  ucontext_t ctx;  // the first entry
  jmp_buf jb;      // where it yielded
  emu_thread t;
  int state, flat, blk;
  bool started;
};
static std::vector<Fiber> g_fib;
static std::vector<char*> g_stacks;
static const size_t kStack = 256 << 10;
static jmp_buf g_sched;  // the scheduler, where a fiber yields to
static Fiber* g_cur;
static void (*g_entry)(void**);
static void** g_args;
static std::vector<std::vector<char>> g_dyn;
static size_t g_dyn_bytes;
static int g_cs = 1, g_nt = 1;
static float g_warpbuf[8192];  // one slot per fiber (8 blocks of 1024)
// Lanes that shuffle together: 32 (a CUDA warp, an RDNA wave32), or 64 (a
// CDNA wavefront) once the HIP face (xbemu_hip.cpp) says so.
static int g_warp = 32;
static bool g_hip = false;
extern "C" void xbemu_set_hip(int wave) {
  g_hip = true;
  g_warp = wave;
}

extern "C" emu_thread* emu_cur(void) { return &g_cur->t; }
extern "C" void* emu_dyn_smem(void) { return g_dyn[g_cur->blk].data(); }
extern "C" void emu_check_smem(long bytes) {
  if ((size_t)bytes > g_dyn_bytes && g_fault.empty())
    g_fault = "kernel needs " + std::to_string(bytes) + " bytes of dynamic shared memory, launch gave " +
              std::to_string(g_dyn_bytes);
}
static void yield_as(int st) {
  g_cur->state = st;
  if (!_setjmp(g_cur->jb)) _longjmp(g_sched, 1);
}
extern "C" void emu_syncthreads(void) { yield_as(BAR); }
extern "C" int emu_cluster_rank(int cs) {
  if (cs != g_cs && g_fault.empty())
    g_fault = "kernel built for clusters of " + std::to_string(cs) + " launched with " + std::to_string(g_cs);
  return g_cur->blk;
}
extern "C" void emu_cluster_sync(void) { yield_as(CLBAR); }
extern "C" void* emu_cluster_map(void* p, int rank) {
  const size_t off = (char*)p - g_dyn[g_cur->blk].data();
  if (rank < 0 || rank >= g_cs || off > g_dyn_bytes) {
    if (g_fault.empty()) g_fault = "cluster map outside shared memory or cluster";
    return p;
  }
  return g_dyn[rank].data() + off;
}
// An mbarrier: phase parity, expected and pending arrivals, and the
// transaction count, which st.async may take below zero before the
// arrival that expects those bytes (the phase completes at zero either way).
struct EmuMbar {
  unsigned phase : 1, expected : 15, pending : 16;
  int tx;
};
static_assert(sizeof(EmuMbar) == 8, "an mbarrier is 8 bytes of shared memory");
static unsigned long g_mb_events;  // mbarrier updates so far: a spinning wait retries only after one
static void mb_update(EmuMbar* b, int arrivals, int tx) {
  if (arrivals > (int)b->pending && g_fault.empty()) g_fault = "mbarrier: more arrivals than the phase expects";
  b->pending -= arrivals;
  b->tx += tx;
  if (b->pending == 0 && b->tx == 0) {
    b->phase ^= 1;
    b->pending = b->expected;
  }
  g_mb_events++;
}
extern "C" void emu_mb_init(void* mb, int count) {
  if ((((uintptr_t)mb) & 7) || count < 1 || count >= (1 << 15)) {
    if (g_fault.empty()) g_fault = "mbarrier init: misaligned or bad count";
    return;
  }
  *(EmuMbar*)mb = EmuMbar{0, (unsigned)count, (unsigned)count, 0};
}
extern "C" void emu_mb_expect(void* mb, int bytes) { mb_update((EmuMbar*)mb, 1, bytes); }
extern "C" void emu_st_async(void* dst, const void* src, int bytes, void* mb) {
  if (((uintptr_t)dst) % bytes && g_fault.empty()) g_fault = "st.async: misaligned address";
  memcpy(dst, src, bytes);
  mb_update((EmuMbar*)mb, 0, -bytes);
}
extern "C" void emu_mb_wait(void* mb, unsigned parity) {
  while (((EmuMbar*)mb)->phase == (parity & 1)) yield_as(SPIN);
}
extern "C" float emu_shfl_xor_f(float v, int m) {
  g_warpbuf[g_cur->flat] = v;  // m < 32 <= g_warp: the partner is in the same warp
  yield_as(WARP);
  const float r = g_warpbuf[g_cur->flat ^ m];
  yield_as(WARP);  // nobody overwrites the slots before every lane has read
  return r;
}
static void fiber_main() {
  g_entry(g_args);
  g_cur->state = DONE;
  _longjmp(g_sched, 1);  // never returns: its stack is reused by the next block
}

// resume runs f until it yields or ends: its first time from the start of
// fiber_main, later from where it yielded. This frame stays live while f
// runs, so g_sched stays valid.
static void resume(Fiber& f) {
  g_cur = &f;
  if (_setjmp(g_sched)) return;
  if (f.started) _longjmp(f.jb, 1);
  f.started = true;
  setcontext(&f.ctx);
}

static bool run_block(int n) {
  for (int i = 0; i < n; ++i) {
    Fiber& f = g_fib[i];
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = g_stacks[i];
    f.ctx.uc_stack.ss_size = kStack;
    f.ctx.uc_link = nullptr;
    makecontext(&f.ctx, fiber_main, 0);
    f.state = RUN;
    f.started = false;
  }
  unsigned long seen = g_mb_events;
  for (;;) {
    for (int i = 0; i < n; ++i)
      if (g_fib[i].state == RUN) resume(g_fib[i]);
    int done = 0, clbar = 0, released = 0;
    for (int i = 0; i < n; ++i) done += g_fib[i].state == DONE, clbar += g_fib[i].state == CLBAR;
    if (done == n) return true;
    for (int w = 0; w * g_warp < n; ++w) {  // a warp moves on when all its lanes shuffle
      int lanes = n - w * g_warp < g_warp ? n - w * g_warp : g_warp, at = 0;
      for (int l = 0; l < lanes; ++l) at += g_fib[w * g_warp + l].state == WARP;
      if (at == lanes) {
        for (int l = 0; l < lanes; ++l) g_fib[w * g_warp + l].state = RUN;
        released++;
      }
    }
    if (!released)  // a block moves on when all its live threads wait at its barrier
      for (int b = 0; b < g_cs; ++b) {
        int bar = 0, live = 0;
        for (int i = b * g_nt; i < (b + 1) * g_nt && i < n; ++i)
          live += g_fib[i].state != DONE, bar += g_fib[i].state == BAR;
        if (bar > 0 && bar == live) {
          for (int i = b * g_nt; i < (b + 1) * g_nt && i < n; ++i)
            if (g_fib[i].state == BAR) g_fib[i].state = RUN;
          released++;
        }
      }
    if (!released && clbar > 0 && clbar == n - done) {  // the cluster barrier
      for (int i = 0; i < n; ++i)
        if (g_fib[i].state == CLBAR) g_fib[i].state = RUN;
      released++;
    }
    if (!released && g_mb_events != seen) {  // mbarrier waits look again after any update
      seen = g_mb_events;
      for (int i = 0; i < n; ++i)
        if (g_fib[i].state == SPIN) g_fib[i].state = RUN, released++;
    }
    if (!released) {
      g_fault = "divergent barrier or shuffle, or an mbarrier phase nothing completes (threads wait on different barriers)";
      return false;
    }
  }
}

// ---- driver API ------------------------------------------------------------
extern "C" {
CUresult cuInit(unsigned) { return OK; }
CUresult cuDriverGetVersion(int* v) { *v = 13000; return OK; }
CUresult cuDeviceGetCount(int* n) { *n = 1; return OK; }
CUresult cuDeviceGet(int* d, int o) { if (o != 0) return E_VALUE; *d = 0; return OK; }
CUresult cuDeviceGetName(char* b, int n, int) { snprintf(b, n, "xbemu CPU emulator"); return OK; }
CUresult cuDeviceGetAttribute(int* v, int attr, int) {
  switch (attr) {
    case 75: *v = 9; break;       // compute capability major
    case 76: *v = 0; break;       // minor
    case 16: *v = 132; break;     // multiprocessors
    case 97: *v = 232448; break;  // max shared memory per block (opt-in)
    default: *v = 0;
  }
  return OK;
}
CUresult cuDevicePrimaryCtxRetain(void** c, int) { *c = (void*)0x1; return OK; }
CUresult cuDevicePrimaryCtxRelease_v2(int) { return OK; }
CUresult cuCtxSetCurrent(void* c) {
  if (c) g_fault.clear();  // a fault is sticky until a device opens again (the runtime sets a context once per open)
  g_ctx_set = c != nullptr;
  g_ctx_thread = pthread_self();
  return OK;
}
CUresult cuCtxSynchronize() { NEED_CTX(); return check_guards(); }
CUresult cuMemGetInfo_v2(size_t* f, size_t* t) { *f = *t = (size_t)80 << 30; return OK; }
CUresult cuMemAlloc_v2(uint64_t* p, size_t n) {
  NEED_CTX();
  unsigned char* m = (unsigned char*)aligned_alloc(256, (n + kGuard + 255) / 256 * 256);
  if (!m) return 2;
  memset(m + n, 0xAB, kGuard);
  g_allocs[(uintptr_t)m] = n;
  *p = (uint64_t)(uintptr_t)m;
  return OK;
}
CUresult cuMemFree_v2(uint64_t p) {
  NEED_CTX();
  CUresult r = check_guards();
  g_allocs.erase((uintptr_t)p);
  free((void*)(uintptr_t)p);
  return r;
}
CUresult cuMemcpyHtoD_v2(uint64_t d, const void* s, size_t n) { NEED_CTX(); memcpy((void*)d, s, n); return OK; }
CUresult cuMemcpyDtoH_v2(void* d, uint64_t s, size_t n) { NEED_CTX(); memcpy(d, (void*)s, n); return check_guards(); }
CUresult cuMemcpyDtoD_v2(uint64_t d, uint64_t s, size_t n) { NEED_CTX(); memmove((void*)d, (void*)s, n); return OK; }
CUresult cuMemsetD32_v2(uint64_t d, unsigned v, size_t n) {
  NEED_CTX();
  for (size_t i = 0; i < n; ++i) ((unsigned*)d)[i] = v;
  return OK;
}
CUresult cuModuleLoadData(void** m, const void* image) {
  NEED_CTX();
  std::string so = (const char*)image;
  void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) { fprintf(stderr, "xbemu: %s\n", dlerror()); return 200; }
  unlink(so.c_str());  // the mapping stays; the file and its folder go
  rmdir(so.substr(0, so.rfind('/')).c_str());
  *m = h;
  return OK;
}
CUresult cuModuleUnload(void* m) { NEED_CTX(); dlclose(m); return OK; }
struct Func { void (*entry)(void**); int maxdyn; int nargs; };
CUresult cuModuleGetFunction(Func** f, void* m, const char* name) {
  NEED_CTX();
  void* s = dlsym(m, (std::string("emu_entry_") + name).c_str());
  void* n = dlsym(m, (std::string("emu_nargs_") + name).c_str());
  if (!s || !n) return E_NOTFOUND;
  // HIP has no opt-in: a block may use the LDS (64 KB, hipSmemDefault) at once
  *f = new Func{(void (*)(void**))s, g_hip ? 64 << 10 : 48 << 10, ((int (*)(void))n)()};
  return OK;
}
CUresult cuFuncSetAttribute(Func* f, int attr, int v) {
  NEED_CTX();
  if (attr == 8) {  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    if (v > 232448) return E_VALUE;
    f->maxdyn = v;
  }
  return OK;
}
CUresult cuFuncGetAttribute(int* v, int, Func*) { *v = 0; return OK; }
// ---- stream capture (CUDA graphs) ------------------------------------------
// While a stream captures, work sent to any stream is recorded instead of run
// (a captured stream's forks join it again through events, so all of it is
// the graph's), and the legacy default stream may not be used at all, as on a
// real device in thread-local mode. A graph launch replays the record.
typedef std::vector<std::function<CUresult()>> Graph;
static Graph* g_capture;
static bool g_capture_broken;
// xbemu_record runs op now, or appends it to the capture. The fake cuBLAS
// (xbemu_rtc.cpp) uses it too.
CUresult xbemu_record(void* stream, std::function<CUresult()> op) {
  if (!g_capture) return op();
  if (!stream) {  // cudaErrorStreamCaptureImplicit: the legacy stream while capturing
    g_capture_broken = true;
    fprintf(stderr, "xbemu: the legacy default stream was used while a stream was capturing\n");
    return 906;
  }
  g_capture->push_back(op);
  return OK;
}
static CUresult launch_now(Func* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                           unsigned bz, unsigned smem, void** params, unsigned cs);
static CUresult launch(Func* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                       unsigned bz, unsigned smem, void* stream, void** params, unsigned cs) {
  NEED_CTX();
  if (!g_capture) return launch_now(f, gx, gy, gz, bx, by, bz, smem, params, cs);
  std::vector<uint64_t> vals(f->nargs);  // each argument sits in its own 8-byte slot
  for (int i = 0; i < f->nargs; ++i) memcpy(&vals[i], params[i], 8);
  return xbemu_record(stream, [=]() mutable {
    std::vector<void*> p(vals.size());
    for (size_t i = 0; i < vals.size(); ++i) p[i] = &vals[i];
    return launch_now(f, gx, gy, gz, bx, by, bz, smem, p.data(), cs);
  });
}
static CUresult launch_now(Func* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                           unsigned bz, unsigned smem, void** params, unsigned cs) {
  const int n = bx * by * bz;
  if (n <= 0 || n > 1024 || gx == 0 || gy == 0 || gz == 0 || cs == 0 || cs > 8 || gx % cs) return E_VALUE;
  if (cs > 1 && n % 32) return E_VALUE;  // the emulator's warps must not straddle blocks
  if ((int)smem > f->maxdyn) return E_VALUE;  // as CUDA: > 48 KB needs the attribute first
  if (!g_fault.empty()) return E_LAUNCH;
  const int tot = n * cs;
  while ((int)g_stacks.size() < tot) g_stacks.push_back((char*)malloc(kStack));
  g_fib.resize(tot);
  g_dyn.assign(cs, std::vector<char>(smem + 16, 0x7F));  // garbage, like real shared memory
  g_dyn_bytes = smem;
  g_cs = cs;
  g_nt = n;
  g_entry = f->entry;
  g_args = params;
  for (unsigned z = 0; z < gz; ++z)
    for (unsigned y = 0; y < gy; ++y)
      for (unsigned x = 0; x < gx; x += cs) {
        for (int i = 0; i < tot; ++i) {
          const int bi = i / n, ti = i % n;
          emu_thread& t = g_fib[i].t;
          t.tid = {(unsigned)ti % bx, ((unsigned)ti / bx) % by, (unsigned)ti / (bx * by)};
          t.bid = {x + bi, y, z};
          t.bdim = {bx, by, bz};
          t.gdim = {gx, gy, gz};
          g_fib[i].flat = i;
          g_fib[i].blk = bi;
        }
        for (auto& d : g_dyn) memset(d.data(), 0x7F, d.size());
        if (!run_block(tot) || !g_fault.empty()) {
          fprintf(stderr, "xbemu: launch failed: %s\n", g_fault.c_str());
          return E_LAUNCH;
        }
      }
  return OK;
}
CUresult cuLaunchKernel(Func* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned smem, void* stream, void** params, void** extra) {
  return launch(f, gx, gy, gz, bx, by, bz, smem, stream, params, 1);
}
// cuda.h's CUlaunchConfig and CUlaunchAttribute, as far as used here.
struct EmuLaunchAttr { unsigned id, pad; unsigned v[16]; };
struct EmuLaunchConfig {
  unsigned gx, gy, gz, bx, by, bz, smem;
  void* stream;
  EmuLaunchAttr* attrs;
  unsigned nattrs;
};
static_assert(sizeof(EmuLaunchAttr) == 72 && sizeof(EmuLaunchConfig) == 56, "cuda.h layout");
CUresult cuLaunchKernelEx(const EmuLaunchConfig* c, Func* f, void** params, void** extra) {
  unsigned cs = 1;
  for (unsigned i = 0; i < c->nattrs; ++i)
    if (c->attrs[i].id == 4) {  // CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
      if (c->attrs[i].v[1] != 1 || c->attrs[i].v[2] != 1) return E_VALUE;
      cs = c->attrs[i].v[0];
    }
  return launch(f, c->gx, c->gy, c->gz, c->bx, c->by, c->bz, c->smem, c->stream, params, cs);
}
static double now_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
CUresult cuEventCreate(double** e, unsigned) { NEED_CTX(); *e = new double(0); return OK; }
CUresult cuEventRecord(double* e, void* stream) {
  NEED_CTX();
  *e = now_ms();  // at capture too, so a wait on it in the same capture is valid
  return xbemu_record(stream, [=]() { *e = now_ms(); return OK; });
}
CUresult cuEventSynchronize(double*) { NEED_CTX(); return check_guards(); }
CUresult cuEventElapsedTime(float* ms, double* a, double* b) { *ms = (float)(*b - *a); return OK; }
CUresult cuEventDestroy_v2(double* e) { delete e; return OK; }
// Streams: every launch runs to completion when it is made, so work on any
// stream is already ordered by the host's calls. What can still be checked
// is the host's order itself: a wait for an event that was never recorded
// means a dependency would be lost on a real device.
CUresult cuCtxGetStreamPriorityRange(int* least, int* greatest) { *least = 0; *greatest = -5; return OK; }
CUresult cuStreamCreateWithPriority(void** s, unsigned, int prio) {
  NEED_CTX();
  if (prio < -5 || prio > 0) return E_VALUE;
  *s = new int(prio);
  return OK;
}
CUresult cuStreamDestroy_v2(int* s) { delete s; return OK; }
CUresult cuStreamWaitEvent(void* stream, double* e, unsigned) {
  NEED_CTX();
  if (*e == 0) return E_VALUE;
  return xbemu_record(stream, []() { return OK; });
}
CUresult cuStreamBeginCapture_v2(void* stream, int mode) {
  NEED_CTX();
  if (g_capture || !stream || mode != 1) return E_VALUE;  // thread-local mode, one capture at a time
  g_capture = new Graph();
  g_capture_broken = false;
  return OK;
}
CUresult cuStreamEndCapture(void* stream, Graph** g) {
  NEED_CTX();
  if (!g_capture || !stream) return E_VALUE;
  *g = g_capture;
  g_capture = nullptr;
  if (g_capture_broken) {  // cudaErrorStreamCaptureInvalidated
    delete *g;
    *g = nullptr;
    return 901;
  }
  return OK;
}
CUresult cuGraphInstantiateWithFlags(Graph** exec, Graph* g, unsigned long long) {
  NEED_CTX();
  *exec = new Graph(*g);
  return OK;
}
CUresult cuGraphLaunch(Graph* exec, void* stream) {
  NEED_CTX();
  if (g_capture) return E_VALUE;
  for (auto& op : *exec)
    if (CUresult r = op()) return r;
  return OK;
}
CUresult cuGraphExecDestroy(Graph* exec) { delete exec; return OK; }
CUresult cuGraphDestroy(Graph* g) { delete g; return OK; }
CUresult cuGetErrorName(int r, const char** s) {
  static std::string buf;
  buf = "EMU_ERROR_" + std::to_string(r);
  *s = buf.c_str();
  return OK;
}
}  // extern "C"
