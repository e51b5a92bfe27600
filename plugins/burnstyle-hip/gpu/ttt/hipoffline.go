package ttt

import (
	"fmt"

	"github.com/xbench/xbench/harness/workload/ttt"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// HIPCompile compiles cfg's TTT program (forward; with cfg.Backward the
// training step's kernels too) as openHIP would: no thread-block clusters.
func HIPCompile(cfg ttt.Config, opt Options, arch string) (gpu.HIPReport, error) {
	if err := Supports(cfg); err != nil {
		return gpu.HIPReport{}, err
	}
	geo, _, err := geometryFor(cfg, withEnv(opt), false)
	if err != nil {
		return gpu.HIPReport{}, err
	}
	name := fmt.Sprintf("ttt %s %s %s %s (%s, %d threads)", cfg.ModelSize, cfg.TTTType, cfg.Dtype,
		map[bool]string{true: "train", false: "forward"}[cfg.Backward], geo.innerName(), geo.NT)
	return gpu.HIPCompile(name, geo.source(), geo.defines(), arch, geo.kernels()...)
}
