package gpu

import (
	"fmt"
	"unsafe"
)

// drvAPI is the part of the CUDA driver API and the HIP module API that the
// two share in shape: the same arguments in the same order under different
// names. One struct, two symbol tables, so the vendors stay symmetric.
type drvAPI struct {
	memAlloc      func(p *uint64, size uint64) int32
	memFree       func(p uint64) int32
	htod          func(dst uint64, src unsafe.Pointer, n uint64) int32
	dtoh          func(dst unsafe.Pointer, src uint64, n uint64) int32
	memsetD32     func(dst uint64, v uint32, n uint64) int32
	moduleLoad    func(m *uintptr, image unsafe.Pointer) int32
	moduleFunc    func(f *uintptr, m uintptr, name *byte) int32
	ModuleUnload  func(m uintptr) int32
	launch        func(f uintptr, gx, gy, gz, bx, by, bz, smem uint32, stream uintptr, params, extra unsafe.Pointer) int32
	eventCreate   func(e *uintptr, flags uint32) int32
	EventRecord   func(e uintptr, stream uintptr) int32
	eventSync     func(e uintptr) int32
	eventElapsed  func(ms *float32, a, b uintptr) int32
	EventDestroy  func(e uintptr) int32
	sync          func() int32
	deviceCount   func(n *int32) int32
	deviceName    func(buf *byte, n int32, dev int32) int32
	driverVersion func(v *int32) int32
	memGetInfo    func(free, total *uint64) int32
	// Streams, for the chunked forward (wavefront.go).
	StreamCreate  func(s *uintptr, flags uint32, priority int32) int32
	StreamDestroy func(s uintptr) int32
	streamWait    func(s uintptr, e uintptr, flags uint32) int32
	priorities    func(least, greatest *int32) int32
}

// drvNames is one vendor's symbol for each drvAPI field, in field order.
type drvNames [23]string

var cudaDrvNames = drvNames{
	"cuMemAlloc_v2", "cuMemFree_v2", "cuMemcpyHtoD_v2", "cuMemcpyDtoH_v2", "cuMemsetD32_v2",
	"cuModuleLoadData", "cuModuleGetFunction", "cuModuleUnload", "cuLaunchKernel",
	"cuEventCreate", "cuEventRecord", "cuEventSynchronize", "cuEventElapsedTime|cuEventElapsedTime_v2", "cuEventDestroy_v2",
	"cuCtxSynchronize", "cuDeviceGetCount", "cuDeviceGetName", "cuDriverGetVersion", "cuMemGetInfo_v2",
	"cuStreamCreateWithPriority", "cuStreamDestroy_v2", "cuStreamWaitEvent", "cuCtxGetStreamPriorityRange",
}

var hipDrvNames = drvNames{
	"hipMalloc", "hipFree", "hipMemcpyHtoD", "hipMemcpyDtoH", "hipMemsetD32",
	"hipModuleLoadData", "hipModuleGetFunction", "hipModuleUnload", "hipModuleLaunchKernel",
	"hipEventCreateWithFlags", "hipEventRecord", "hipEventSynchronize", "hipEventElapsedTime", "hipEventDestroy",
	"hipDeviceSynchronize", "hipGetDeviceCount", "hipDeviceGetName", "hipDriverGetVersion", "hipMemGetInfo",
	"hipStreamCreateWithPriority", "hipStreamDestroy", "hipStreamWaitEvent", "hipDeviceGetStreamPriorityRange",
}

func (a *drvAPI) table(n drvNames) map[string]any {
	ptrs := []any{&a.memAlloc, &a.memFree, &a.htod, &a.dtoh, &a.memsetD32,
		&a.moduleLoad, &a.moduleFunc, &a.ModuleUnload, &a.launch,
		&a.eventCreate, &a.EventRecord, &a.eventSync, &a.eventElapsed, &a.EventDestroy,
		&a.sync, &a.deviceCount, &a.deviceName, &a.driverVersion, &a.memGetInfo,
		&a.StreamCreate, &a.StreamDestroy, &a.streamWait, &a.priorities}
	t := make(map[string]any, len(n))
	for i, name := range n {
		t[name] = ptrs[i]
	}
	return t
}

// rtcAPI is NVRTC or hipRTC: identical shapes, different names.
type rtcAPI struct {
	create   func(p *uintptr, src, name *byte, nHeaders int32, headers, includeNames unsafe.Pointer) int32
	compile  func(p uintptr, nOpts int32, opts unsafe.Pointer) int32
	logSize  func(p uintptr, n *uint64) int32
	log      func(p uintptr, buf *byte) int32
	codeSize func(p uintptr, n *uint64) int32
	code     func(p uintptr, buf *byte) int32
	destroy  func(p *uintptr) int32
	errStr   func(code int32) string
	version  func(major, minor *int32) int32
}

type rtcNames [9]string

var nvrtcNames = rtcNames{"nvrtcCreateProgram", "nvrtcCompileProgram", "nvrtcGetProgramLogSize",
	"nvrtcGetProgramLog", "nvrtcGetCUBINSize", "nvrtcGetCUBIN", "nvrtcDestroyProgram",
	"nvrtcGetErrorString", "nvrtcVersion"}

var hiprtcNames = rtcNames{"hiprtcCreateProgram", "hiprtcCompileProgram", "hiprtcGetProgramLogSize",
	"hiprtcGetProgramLog", "hiprtcGetCodeSize", "hiprtcGetCode", "hiprtcDestroyProgram",
	"hiprtcGetErrorString", "hiprtcVersion"}

func (r *rtcAPI) table(n rtcNames) map[string]any {
	ptrs := []any{&r.create, &r.compile, &r.logSize, &r.log, &r.codeSize, &r.code, &r.destroy,
		&r.errStr, &r.version}
	t := make(map[string]any, len(n))
	for i, name := range n {
		t[name] = ptrs[i]
	}
	return t
}

// build compiles src with opts and returns the loadable image and the
// compiler's log. The log is returned on failure too: it holds the reason.
func (r *rtcAPI) build(vendor, src string, opts []string) (image []byte, log string, err error) {
	var prog uintptr
	if c := r.create(&prog, cString(src), cString("xbench_ttt.cu"), 0, nil, nil); c != 0 {
		return nil, "", fmt.Errorf("%s create program: %s (%d)", vendor, r.errStr(c), c)
	}
	defer r.destroy(&prog)
	cs := make([]*byte, len(opts))
	for i, o := range opts {
		cs[i] = cString(o)
	}
	var optp unsafe.Pointer
	if len(cs) > 0 {
		optp = unsafe.Pointer(&cs[0])
	}
	rc := r.compile(prog, int32(len(cs)), optp)
	var n uint64
	if r.logSize(prog, &n) == 0 && n > 1 {
		b := make([]byte, n)
		r.log(prog, &b[0])
		log = string(b[:n-1])
	}
	if rc != 0 {
		return nil, log, fmt.Errorf("%s compile (options %v): %s (%d)\n%s", vendor, opts, r.errStr(rc), rc, log)
	}
	if c := r.codeSize(prog, &n); c != 0 || n == 0 {
		return nil, log, fmt.Errorf("%s code size: %s (%d)", vendor, r.errStr(c), c)
	}
	image = make([]byte, n)
	if c := r.code(prog, &image[0]); c != 0 {
		return nil, log, fmt.Errorf("%s get code: %s (%d)", vendor, r.errStr(c), c)
	}
	return image, log, nil
}
