package gpu

import (
	"fmt"
	"os"
	"strings"
	"unsafe"
)

// CUDA driver attributes and function attributes used here (cuda.h values).
const (
	cuAttrMultiprocessors = 16
	cuAttrCCMajor         = 75
	cuAttrCCMinor         = 76
	cuAttrMaxSmemOptin    = 97
	cuFuncNumRegs         = 4
	cuFuncLocalBytes      = 3
	cuFuncMaxDynSmem      = 8
)

// cudaExtra are the CUDA calls with no HIP twin of the same shape.
type cudaExtra struct {
	init          func(flags uint32) int32
	deviceGet     func(dev *int32, ordinal int32) int32
	primaryRetain func(ctx *uintptr, dev int32) int32
	primaryRel    func(dev int32) int32
	ctxSetCurrent func(ctx uintptr) int32
	deviceAttr    func(v *int32, attr int32, dev int32) int32
	funcSetAttr   func(fn uintptr, attr int32, v int32) int32
	funcGetAttr   func(v *int32, attr int32, fn uintptr) int32
	errName       func(code int32, s **byte) int32
}

func (c *cudaExtra) table() map[string]any {
	return map[string]any{
		"cuInit": &c.init, "cuDeviceGet": &c.deviceGet,
		"cuDevicePrimaryCtxRetain": &c.primaryRetain, "cuDevicePrimaryCtxRelease_v2": &c.primaryRel,
		"cuCtxSetCurrent": &c.ctxSetCurrent, "cuDeviceGetAttribute": &c.deviceAttr,
		"cuFuncSetAttribute": &c.funcSetAttr, "cuFuncGetAttribute": &c.funcGetAttr,
		"cuGetErrorName": &c.errName,
	}
}

// openCUDA loads libcuda and NVRTC (cuBLAS when present), makes device 0's
// primary context current on the calling thread, and reads what the
// compiler and the launches need. CUDA_VISIBLE_DEVICES is applied by the
// driver itself, so "device 0" is the first visible one. Runs on the worker.
func openCUDA() (*Runtime, error) {
	lib, path, err := specCUDA.open()
	if err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	r := &Runtime{Kind: "cuda"}
	var x cudaExtra
	if err := bind(lib, path, r.Drv.table(cudaDrvNames)); err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	if err := bind(lib, path, x.table()); err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	r.errName = func(code int32) string {
		var s *byte
		if x.errName(code, &s) != 0 || s == nil {
			return "CUDA_ERROR_UNKNOWN"
		}
		return goString(s)
	}
	if err := r.Check("cuInit", x.init(0)); err != nil {
		return nil, err
	}
	var n, dev int32
	if err := r.Check("device count", r.Drv.deviceCount(&n)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("cuda: the driver sees no device (CUDA_VISIBLE_DEVICES=%q)", os.Getenv("CUDA_VISIBLE_DEVICES"))
	}
	r.Count = int(n)
	if err := r.Check("device get 0", x.deviceGet(&dev, 0)); err != nil {
		return nil, err
	}
	var ctx uintptr
	if err := r.Check("retain primary context", x.primaryRetain(&ctx, dev)); err != nil {
		return nil, err
	}
	r.release = func() { x.primaryRel(dev) }
	if err := r.Check("set current context", x.ctxSetCurrent(ctx)); err != nil {
		r.release()
		return nil, err
	}
	attr := func(a int32) int {
		var v int32
		x.deviceAttr(&v, a, dev)
		return int(v)
	}
	major, minor := attr(cuAttrCCMajor), attr(cuAttrCCMinor)
	r.SMCount, r.MaxDynSmem = attr(cuAttrMultiprocessors), attr(cuAttrMaxSmemOptin)
	buf := make([]byte, 256)
	r.Drv.deviceName(&buf[0], int32(len(buf)), dev)
	r.Name = strings.TrimRight(string(buf), "\x00")
	var ver int32
	r.Drv.driverVersion(&ver)
	r.driver = fmt.Sprintf("CUDA %d.%d, sm_%d%d", ver/1000, ver%1000/10, major, minor)
	r.bindGraphs(lib, path, cudaGraphNames)
	r.bindHold(lib, path)
	r.Tracer, r.TracerWhy = openTracer()
	if major >= 9 { // clusters: optional, an older driver simply has none
		var ex func(cfg *cuLaunchConfig, f uintptr, params, extra unsafe.Pointer) int32
		if bind(lib, path, map[string]any{"cuLaunchKernelEx": &ex}) == nil {
			r.launchEx = ex
		}
		var enc tmapEncodeFn // bulk tensor copies: likewise optional
		if bind(lib, path, map[string]any{"cuTensorMapEncodeTiled": &enc}) == nil {
			r.tmapEncode = enc
		}
	}
	r.ArchOpts = []string{fmt.Sprintf("--gpu-architecture=sm_%d%d", major, minor), "-std=c++17"}
	r.SetDynSmem = func(fn uintptr, bytes int) error {
		return r.Check(fmt.Sprintf("allow %d bytes of shared memory", bytes), x.funcSetAttr(fn, cuFuncMaxDynSmem, int32(bytes)))
	}
	r.FuncAttrs = func(fn uintptr) (int, int) {
		var regs, local int32
		x.funcGetAttr(&regs, cuFuncNumRegs, fn)
		x.funcGetAttr(&local, cuFuncLocalBytes, fn)
		return int(regs), int(local)
	}

	rl, rpath, err := specNVRTC.open()
	if err == nil {
		preloadSiblings(rpath, "libnvrtc-builtins.so*")
		err = bind(rl, rpath, r.rtc.table(nvrtcNames))
	}
	if err != nil {
		r.release()
		return nil, fmt.Errorf("cuda: kernels need the run-time compiler: %w", err)
	}
	var vmaj, vmin int32
	r.rtc.version(&vmaj, &vmin)
	r.driver += fmt.Sprintf(", NVRTC %d.%d", vmaj, vmin)
	r.BLAS, r.BLASErr = openCUBLAS()
	return r, nil
}
