package gpu

import (
	"fmt"

	"github.com/xbench/xbench/harness/workload/ttt"
)

// CompileReport compiles cfg's program with NVRTC alone — no driver, no GPU
// — for arch (e.g. "sm_90") and returns the compiler log with ptxas's
// per-kernel report (registers, spill stores and loads, shared memory).
// NVRTC is found like at run time (XBENCH_LIBNVRTC overrides). It lets a
// machine without a GPU catch compile errors and register spills.
func CompileReport(cfg ttt.Config, opt Options, arch string) (string, error) {
	if err := Supports(cfg); err != nil {
		return "", err
	}
	geo, _, err := geometryFor(cfg, withEnv(opt), arch >= "sm_90" && len(arch) == 5)
	if err != nil {
		return "", err
	}
	lib, path, err := specNVRTC.open()
	if err != nil {
		return "", err
	}
	preloadSiblings(path, "libnvrtc-builtins.so*")
	var r rtcAPI
	if err := bind(lib, path, r.table(nvrtcNames)); err != nil {
		return "", err
	}
	opts := append([]string{"--gpu-architecture=" + arch, "-std=c++17", "--ptxas-options=-v"}, geo.defines()...)
	image, log, err := r.build("nvrtc", geo.source(), opts)
	if err != nil {
		return log, err
	}
	return fmt.Sprintf("%s: %d-byte image, inner kernel %d threads, %d B dynamic shared\n%s",
		path, len(image), geo.NT, geo.smemBytes(), log), nil
}
