package ttt

import (
	"fmt"

	"github.com/xbench/xbench/harness/workload/ttt"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
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
	image, path, log, err := gpu.NVRTCCompile(geo.source(), geo.defines(), arch)
	if err != nil {
		return log, err
	}
	return fmt.Sprintf("%s: %d-byte image, inner kernel %d threads, %d B dynamic shared\n%s",
		path, len(image), geo.NT, geo.smemBytes(), log), nil
}
