package ttt_test

import (
	"fmt"
	"testing"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/internal/emutest"
	gputtt "github.com/xbench/xbench/plugins/burnstyle-hip/gpu/ttt"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/internal/check"
)

// hipScratch is the per-work-item scratch a kernel may need, by
// "arch/kernel" (absent: 0). Scratch is where spills that do not fit in
// registers go; spills kept in registers (SGPRs into VGPR lanes, VGPRs into
// AGPRs on CDNA) cost no memory traffic and are only logged. The known
// ones: RDNA2 runs HIP in CU mode, so a 512-thread block leaves the mlp
// forward 128 VGPRs and a 256-thread block the mlp backward 256, where
// gfx90a keeps both in VGPRs and AGPRs (hipRTC 5.2, 2026-11-26).
var hipScratch = map[string]int{
	"gfx1030/xb_inner_mlp":     184,
	"gfx1030/xb_inner_mlp_bwd": 240,
}

func tttProgram(size, typ, dt string, train bool, opt gputtt.Options) emutest.HIPProgram {
	cfg := check.Config(size, typ, dt, false, 1, 2048)
	cfg.Backward = train
	return emutest.HIPProgram{Name: fmt.Sprintf("ttt-%s-%s-%s-train=%v-v%d", size, typ, dt, train, opt.InnerVariant),
		Compile: func(arch string) (gpu.HIPReport, error) { return gputtt.HIPCompile(cfg, opt, arch) }}
}

// hipPrograms cover every TTT kernel source once: the forward's prelude,
// dense, mamba and GEMM-fallback kernels, each inner kernel variant; the
// training step's backward, mamba backward and inner backward kernels
// (attention and the scan check theirs in their packages). The inner
// kernels compile at the timed size (125m); the linear training step runs
// the cluster kernel without clusters on AMD, which takes head dims up to
// 32, so it compiles at tiny.
func hipPrograms() []emutest.HIPProgram {
	ps := []emutest.HIPProgram{
		tttProgram("125m", "mlp", "bfloat16", true, gputtt.Options{}),
		tttProgram("125m", "linear", "float32", false, gputtt.Options{}),
		tttProgram("125m", "linear", "bfloat16", false, gputtt.Options{InnerVariant: 1}),
		tttProgram("tiny", "linear", "bfloat16", true, gputtt.Options{}),
		tttProgram("tiny", "linear", "float32", true, gputtt.Options{BwdVariant: 1}), // the one-block inner backward
	}
	return ps
}

// TestHIPRTC compiles the TTT programs with the real hipRTC for gfx90a and
// gfx1030, with no GPU (emutest.CheckHIPRTC: no compile error, no missing
// kernel, the target's wavefront size, no scratch past hipScratch).
func TestHIPRTC(t *testing.T) {
	emutest.CheckHIPRTC(t, hipPrograms(), hipScratch)
}
