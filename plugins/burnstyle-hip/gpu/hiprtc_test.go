package gpu_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/internal/check"
)

// hipTargets are the AMD targets Debian 12's hipRTC (ROCm 5.2) compiles for
// without a GPU: CDNA2 (MI200, wave64) and RDNA2 (RX 6800, wave32). gfx942
// (MI300) crashes inside hipRTC 5.2, and no newer ROCm compiler for HIP
// source is installable here (README, "AMD").
var hipTargets = []struct {
	arch string
	wave int
}{{"gfx90a", 64}, {"gfx1030", 32}}

// hipProgram is one program the native backend compiles at run time.
type hipProgram struct {
	name    string
	compile func(arch string) (gpu.HIPReport, error)
}

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

func tttProgram(size, typ, dt string, train bool, opt gpu.Options) hipProgram {
	cfg := check.Config(size, typ, dt, false, 1, 2048)
	cfg.Backward = train
	return hipProgram{name: fmt.Sprintf("ttt-%s-%s-%s-train=%v-v%d", size, typ, dt, train, opt.InnerVariant),
		compile: func(arch string) (gpu.HIPReport, error) { return gpu.HIPCompileTTT(cfg, opt, arch) }}
}

// hipPrograms cover every kernel source once: the TTT programs (the
// forward's prelude, dense, mamba and GEMM-fallback kernels, each inner
// kernel variant; the training step's backward, mamba backward and inner
// backward kernels), attention in each dtype and the scan in each dtype
// and semiring. The inner kernels compile at the timed size (125m); the
// linear training step runs the cluster kernel without clusters on AMD,
// which takes head dims up to 32, so it compiles at tiny.
func hipPrograms() []hipProgram {
	ps := []hipProgram{
		tttProgram("125m", "mlp", "bfloat16", true, gpu.Options{}),
		tttProgram("125m", "linear", "float32", false, gpu.Options{}),
		tttProgram("125m", "linear", "bfloat16", false, gpu.Options{InnerVariant: 1}),
		tttProgram("tiny", "linear", "bfloat16", true, gpu.Options{}),
	}
	return ps
}

// TestHIPRTC compiles every kernel source the native backend compiles at
// run time with the real hipRTC (XBENCH_LIBHIPRTC; test.sh installs Debian's
// ROCm 5.2 and names it) for each AMD target, with no GPU, and fails on a
// compile error, a missing kernel, a wavefront size other than the target's
// or scratch memory past what the program allows. Each program compiles once
// per target; subtests run in parallel.
func TestHIPRTC(t *testing.T) {
	if os.Getenv("XBENCH_LIBHIPRTC") == "" {
		t.Skip("set XBENCH_LIBHIPRTC to ROCm's libhiprtc.so (ROCm 5: libamdhip64.so) to compile the kernels for gfx90a and gfx1030")
	}
	for _, tg := range hipTargets {
		for _, p := range hipPrograms() {
			t.Run(tg.arch+"/"+p.name, func(t *testing.T) {
				t.Parallel()
				t0 := time.Now()
				rep, err := p.compile(tg.arch)
				if err != nil {
					t.Fatalf("%v\n%s", err, rep.Log)
				}
				t.Logf("%.1fs %s", time.Since(t0).Seconds(), rep)
				if rep.Target != "amdgcn-amd-amdhsa--"+tg.arch {
					t.Errorf("code object target %q, want %s", rep.Target, tg.arch)
				}
				for _, k := range rep.Kernels {
					if k.Wavefront != tg.wave {
						t.Errorf("%s: wave%d, want wave%d on %s", k.Name, k.Wavefront, tg.wave, tg.arch)
					}
					if allowed := hipScratch[tg.arch+"/"+k.Name]; k.Scratch > allowed {
						t.Errorf("%s needs %d B of scratch a work-item (allowed %d): spills past the registers or a local array in memory",
							k, k.Scratch, allowed)
					}
				}
			})
		}
	}
}
