// The emulator as libamdhip64 + hipRTC: the HIP names the Go runtime binds
// (hip.go, api.go's hipDrvNames and hiprtcNames, graph.go's hipGraphNames),
// each forwarding to its CUDA twin in xbemu.cpp / xbemu_rtc.cpp, so the ROCm
// path runs on the CPU too. The differences that matter are kept: hipRTC
// builds define XB_EMU_HIP (the kernels' AMD path, XB_HIP), HIP has no
// dynamic shared memory opt-in (a launch may use up to 64 KB at once), and
// XBEMU_WAVE=64 makes a shuffle wait for all 64 lanes of a wavefront (CDNA
// runs 64-lane wavefronts): stricter than the hardware for the kernels'
// width-32 shuffles, which need only their half, so a kernel that passes
// reaches every shuffle with whole wavefronts. Test tool only: never shipped.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <string>
#include <vector>

extern "C" {
// xbemu.cpp
int cuCtxSetCurrent(void* c);
int cuMemAlloc_v2(uint64_t* p, size_t n);
int cuMemFree_v2(uint64_t p);
int cuMemcpyHtoD_v2(uint64_t d, const void* s, size_t n);
int cuMemcpyDtoH_v2(void* d, uint64_t s, size_t n);
int cuMemsetD32_v2(uint64_t d, unsigned v, size_t n);
int cuModuleLoadData(void** m, const void* image);
int cuModuleGetFunction(void** f, void* m, const char* name);
int cuModuleUnload(void* m);
int cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned smem, void* stream, void** params, void** extra);
int cuEventCreate(void** e, unsigned flags);
int cuEventRecord(void* e, void* stream);
int cuEventSynchronize(void* e);
int cuEventElapsedTime(float* ms, void* a, void* b);
int cuEventDestroy_v2(void* e);
int cuCtxSynchronize(void);
int cuMemGetInfo_v2(size_t* f, size_t* t);
int cuCtxGetStreamPriorityRange(int* least, int* greatest);
int cuStreamCreateWithPriority(void** s, unsigned flags, int prio);
int cuStreamDestroy_v2(void* s);
int cuStreamWaitEvent(void* stream, void* e, unsigned flags);
int cuStreamBeginCapture_v2(void* stream, int mode);
int cuStreamEndCapture(void* stream, void** g);
int cuGraphInstantiateWithFlags(void** exec, void* g, unsigned long long flags);
int cuGraphLaunch(void* exec, void* stream);
int cuGraphExecDestroy(void* exec);
int cuGraphDestroy(void* g);
void xbemu_set_hip(int wave);  // xbemu.cpp: HIP launch rules and wavefront size
// xbemu_rtc.cpp
int nvrtcCreateProgram(void** p, const char* src, const char* name, int n, const char** h, const char** in);
int nvrtcCompileProgram(void* p, int n, const char** opts);
int nvrtcGetProgramLogSize(void* p, size_t* n);
int nvrtcGetProgramLog(void* p, char* b);
int nvrtcGetCUBINSize(void* p, size_t* n);
int nvrtcGetCUBIN(void* p, char* b);
int nvrtcDestroyProgram(void** p);
const char* nvrtcGetErrorString(int r);

// ---- HIP runtime ------------------------------------------------------------
int hipInit(unsigned) {
  const char* w = getenv("XBEMU_WAVE");
  xbemu_set_hip(w && atoi(w) == 64 ? 64 : 32);
  return 0;
}
int hipSetDevice(int dev) { return dev == 0 ? cuCtxSetCurrent((void*)0x1) : 101; }  // hipErrorInvalidDevice
const char* hipGetErrorName(int r) {
  static std::string buf;
  buf = "EMU_HIP_ERROR_" + std::to_string(r);
  return buf.c_str();
}
int hipGetDeviceCount(int* n) { *n = 1; return 0; }
int hipDeviceGetName(char* b, int n, int) {
  const char* w = getenv("XBEMU_WAVE");
  strncpy(b, w && atoi(w) == 64 ? "xbemu CPU emulator (HIP, wave64)" : "xbemu CPU emulator (HIP, wave32)", n);
  b[n - 1] = 0;
  return 0;
}
int hipDriverGetVersion(int* v) { *v = 50222153; return 0; }
int hipMalloc(uint64_t* p, size_t n) { return cuMemAlloc_v2(p, n); }
int hipFree(uint64_t p) { return cuMemFree_v2(p); }
int hipMemcpyHtoD(uint64_t d, const void* s, size_t n) { return cuMemcpyHtoD_v2(d, s, n); }
int hipMemcpyDtoH(void* d, uint64_t s, size_t n) { return cuMemcpyDtoH_v2(d, s, n); }
int hipMemsetD32(uint64_t d, unsigned v, size_t n) { return cuMemsetD32_v2(d, v, n); }
int hipModuleLoadData(void** m, const void* image) { return cuModuleLoadData(m, image); }
int hipModuleGetFunction(void** f, void* m, const char* name) { return cuModuleGetFunction(f, m, name); }
int hipModuleUnload(void* m) { return cuModuleUnload(m); }
int hipModuleLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                          unsigned smem, void* stream, void** params, void** extra) {
  return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, smem, stream, params, extra);
}
int hipEventCreateWithFlags(void** e, unsigned flags) { return cuEventCreate(e, flags); }
int hipEventRecord(void* e, void* stream) { return cuEventRecord(e, stream); }
int hipEventSynchronize(void* e) { return cuEventSynchronize(e); }
int hipEventElapsedTime(float* ms, void* a, void* b) { return cuEventElapsedTime(ms, a, b); }
int hipEventDestroy(void* e) { return cuEventDestroy_v2(e); }
int hipDeviceSynchronize(void) { return cuCtxSynchronize(); }
int hipMemGetInfo(size_t* f, size_t* t) { return cuMemGetInfo_v2(f, t); }
int hipDeviceGetStreamPriorityRange(int* least, int* greatest) { return cuCtxGetStreamPriorityRange(least, greatest); }
int hipStreamCreateWithPriority(void** s, unsigned flags, int prio) { return cuStreamCreateWithPriority(s, flags, prio); }
int hipStreamDestroy(void* s) { return cuStreamDestroy_v2(s); }
int hipStreamWaitEvent(void* stream, void* e, unsigned flags) { return cuStreamWaitEvent(stream, e, flags); }
int hipStreamBeginCapture(void* stream, int mode) { return cuStreamBeginCapture_v2(stream, mode); }
int hipStreamEndCapture(void* stream, void** g) { return cuStreamEndCapture(stream, g); }
int hipGraphInstantiateWithFlags(void** exec, void* g, unsigned long long flags) {
  return cuGraphInstantiateWithFlags(exec, g, flags);
}
int hipGraphLaunch(void* exec, void* stream) { return cuGraphLaunch(exec, stream); }
int hipGraphExecDestroy(void* exec) { return cuGraphExecDestroy(exec); }
int hipGraphDestroy(void* g) { return cuGraphDestroy(g); }

// ---- hipRTC -------------------------------------------------------------------
int hiprtcVersion(int* a, int* b) { *a = 5; *b = 2; return 0; }
const char* hiprtcGetErrorString(int r) { return r ? "HIPRTC_ERROR_COMPILATION (xbemu)" : "HIPRTC_SUCCESS"; }
int hiprtcCreateProgram(void** p, const char* src, const char* name, int n, const char** h, const char** in) {
  return nvrtcCreateProgram(p, src, name, n, h, in);
}
// The kernels see an AMD target: XB_EMU_HIP selects their XB_HIP path.
int hiprtcCompileProgram(void* p, int n, const char** opts) {
  std::vector<const char*> o(opts, opts + n);
  o.push_back("-DXB_EMU_HIP=1");
  return nvrtcCompileProgram(p, (int)o.size(), o.data());
}
int hiprtcGetProgramLogSize(void* p, size_t* n) { return nvrtcGetProgramLogSize(p, n); }
int hiprtcGetProgramLog(void* p, char* b) { return nvrtcGetProgramLog(p, b); }
int hiprtcGetCodeSize(void* p, size_t* n) { return nvrtcGetCUBINSize(p, n); }
int hiprtcGetCode(void* p, char* b) { return nvrtcGetCUBIN(p, b); }
int hiprtcDestroyProgram(void** p) { return nvrtcDestroyProgram(p); }
}  // extern "C"
