package scan_test

import (
	"testing"

	"github.com/xbench/xbench/plugins/burnstyle-hip/cpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/internal/emutest"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/scan"
)

// TestEmuHIP runs the scan kernel's AMD path against the float64 reference
// on 64-wide wavefronts (CDNA), through the emulator's HIP face.
func TestEmuHIP(t *testing.T) {
	d := emutest.OpenHIP(t, 64)
	for _, s := range []scan.Spec{
		{ScanShape: cpu.ScanShape{T: 12, K: 3, C: 40, Batch: 2, Semiring: "log"}, Dtype: "float32"},
		{ScanShape: cpu.ScanShape{T: 9, K: 2, C: 3, Batch: 2, Semiring: "max"}, Dtype: "float64"},
	} {
		checkScan(t, d, s)
	}
}

// TestHIPRTC compiles the scan kernel in each dtype and semiring it runs
// with the real hipRTC for gfx90a and gfx1030 (emutest.CheckHIPRTC).
func TestHIPRTC(t *testing.T) {
	var ps []emutest.HIPProgram
	for _, sc := range []struct{ dt, sr string }{{"float32", "log"}, {"float64", "max"}} {
		s := scan.Spec{ScanShape: cpu.ScanShape{T: 8, K: 4, C: 3, Batch: 1, Semiring: sc.sr}, Dtype: sc.dt}
		ps = append(ps, emutest.HIPProgram{Name: "scan-" + sc.dt + "-" + sc.sr,
			Compile: func(arch string) (gpu.HIPReport, error) { return scan.HIPCompile(s, arch) }})
	}
	emutest.CheckHIPRTC(t, ps, nil)
}
