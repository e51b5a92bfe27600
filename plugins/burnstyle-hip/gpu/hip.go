package gpu

import (
	"fmt"
	"os"
	"strings"
)

// hipExtra are the HIP calls with no CUDA twin of the same shape.
type hipExtra struct {
	init      func(flags uint32) int32
	setDevice func(dev int32) int32
	errName   func(code int32) string
}

func (h *hipExtra) table() map[string]any {
	return map[string]any{"hipInit": &h.init, "hipSetDevice": &h.setDevice, "hipGetErrorName": &h.errName}
}

// hipSmemDefault is the LDS a workgroup may use on CDNA GPUs. HIP has no
// opt-in call like CUDA's; XBENCH_HIP_SMEM overrides it for newer parts.
const hipSmemDefault = 64 << 10

// openHIP mirrors openCUDA for ROCm: libamdhip64 + hipRTC, device 0 of the
// visible ones (HIP_VISIBLE_DEVICES is applied by the runtime). The dense
// work uses the portable GEMM kernels: hipBLAS's datatype enums changed
// across ROCm releases, and a wrong enum there would be silent. Runs on the
// worker thread; not run in this repository's CI (no AMD GPU there).
func openHIP() (*Runtime, error) {
	lib, path, err := specHIP.open()
	if err != nil {
		return nil, fmt.Errorf("rocm: %w", err)
	}
	r := &Runtime{Kind: "rocm"}
	var x hipExtra
	if err := bind(lib, path, r.Drv.table(hipDrvNames)); err != nil {
		return nil, fmt.Errorf("rocm: %w", err)
	}
	if err := bind(lib, path, x.table()); err != nil {
		return nil, fmt.Errorf("rocm: %w", err)
	}
	r.errName = x.errName
	r.bindGraphs(lib, path, hipGraphNames)
	if err := r.Check("hipInit", x.init(0)); err != nil { // no GPU or no driver: name what was loaded
		return nil, fmt.Errorf("%w (HIP runtime %s; no usable AMD GPU?)", err, path)
	}
	var n int32
	if err := r.Check("device count", r.Drv.deviceCount(&n)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("rocm: the runtime sees no device (HIP_VISIBLE_DEVICES=%q)", os.Getenv("HIP_VISIBLE_DEVICES"))
	}
	r.Count = int(n)
	if err := r.Check("set device 0", x.setDevice(0)); err != nil {
		return nil, err
	}
	buf := make([]byte, 256)
	r.Drv.deviceName(&buf[0], int32(len(buf)), 0)
	r.Name = strings.TrimRight(string(buf), "\x00")
	var ver int32
	r.Drv.driverVersion(&ver)
	r.driver = fmt.Sprintf("HIP %d", ver)
	r.MaxDynSmem = hipSmemDefault
	if v := os.Getenv("XBENCH_HIP_SMEM"); v != "" {
		fmt.Sscan(v, &r.MaxDynSmem)
	}
	r.ArchOpts = []string{"-std=c++17"}
	if a := os.Getenv("XBENCH_HIP_ARCH"); a != "" { // hipRTC targets the current device otherwise
		r.ArchOpts = append(r.ArchOpts, "--offload-arch="+a)
	}
	r.FuncAttrs = func(uintptr) (int, int) { return 0, 0 }
	r.release = func() {}
	rl, rpath, err := specHIPRTC.open()
	if err == nil {
		preloadSiblings(rpath, "libhiprtc-builtins.so*")
		err = bind(rl, rpath, r.rtc.table(hiprtcNames))
	}
	if err != nil {
		return nil, fmt.Errorf("rocm: kernels need the run-time compiler: %w", err)
	}
	r.BLASErr = fmt.Errorf("rocm: the ttt engine binds no BLAS library (hipBLASLt and rocBLAS serve the gemm workload only); the forward's dense work uses the portable GEMM kernels")
	return r, nil
}
