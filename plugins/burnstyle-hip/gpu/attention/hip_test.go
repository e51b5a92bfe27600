package attention_test

import (
	"testing"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/attention"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/internal/emutest"
)

// TestEmuHIP runs the attention kernels' AMD path (the FMA kernel: on rocm
// the tiles never pick the tensor-core one) against the float64 reference
// on 64-wide wavefronts (CDNA), through the emulator's HIP face.
func TestEmuHIP(t *testing.T) {
	d := emutest.OpenHIP(t, 64)
	checkAttention(t, d, attnSpec(1, 2, 1, 19, 19, 40, true, "bfloat16"))
	checkAttention(t, d, attnSpec(1, 1, 1, 9, 9, 32, false, "float32"))
}

// TestHIPRTC compiles the attention program in each dtype with the real
// hipRTC for gfx90a and gfx1030 (emutest.CheckHIPRTC).
func TestHIPRTC(t *testing.T) {
	var ps []emutest.HIPProgram
	for _, dt := range []string{"float32", "bfloat16", "float16"} {
		s := attnSpec(1, 1, 1, 1, 1, 128, false, dt)
		ps = append(ps, emutest.HIPProgram{Name: "attention-" + dt,
			Compile: func(arch string) (gpu.HIPReport, error) { return attention.HIPCompile(s, arch) }})
	}
	emutest.CheckHIPRTC(t, ps, nil)
}
