package ttt_test

import (
	"os"
	"strings"
	"testing"

	gputtt "github.com/xbench/xbench/plugins/burnstyle-hip/gpu/ttt"

	"github.com/xbench/xbench/plugins/burnstyle-hip/internal/check"
)

// TestTrainNVRTC compiles the training step's program (forward kernels with
// their state trace, the dense backward kernels, the inner backward kernel)
// with the real NVRTC for sm_90 when XBENCH_LIBNVRTC names it (no GPU
// needed), at the size gpucheck times, and
// fails on a compile error or a register spill in a kernel the training
// step adds (the mlp forward kernel spilled 56 bytes at 512 threads before).
func TestTrainNVRTC(t *testing.T) {
	if os.Getenv("XBENCH_LIBNVRTC") == "" {
		t.Skip("set XBENCH_LIBNVRTC to a libnvrtc.so to compile the training kernels for sm_90")
	}
	// real NVRTC compiles only: safe beside each other, after the serial emulator tests
	t.Parallel()
	for _, size := range []string{"125m"} { // the shapes that are timed; tiny compiles in the emulator tests
		for _, typ := range []string{"linear", "mlp"} {
			for _, dt := range []string{"float32", "bfloat16"} {
				cfg := check.Config(size, typ, dt, false, 1, 2048)
				cfg.Backward = true
				log, err := gputtt.CompileReport(cfg, gputtt.Options{}, "sm_90")
				if err != nil {
					t.Fatalf("%s %s %s: %v\n%s", size, typ, dt, err, log)
				}
				if !strings.Contains(log, "xb_inner_"+typ+"_bwd") {
					t.Errorf("%s %s %s: no inner backward kernel in the report:\n%s", size, typ, dt, log)
				}
				for fn, spill := range spills(log) {
					if newKernel(fn) && spill {
						t.Errorf("%s %s %s: %s spills registers:\n%s", size, typ, dt, fn, log)
					}
				}
				t.Logf("%s %s %s:\n%s", size, typ, dt, log)
			}
		}
	}
}

// spills maps each kernel of a ptxas report to whether it spills.
func spills(log string) map[string]bool {
	out := map[string]bool{}
	fn := ""
	for _, line := range strings.Split(log, "\n") {
		if i := strings.Index(line, "Function properties for "); i >= 0 {
			fn = strings.TrimSpace(line[i+len("Function properties for "):])
		}
		if strings.Contains(line, "bytes spill") && fn != "" {
			out[fn] = !strings.Contains(line, " 0 bytes spill stores, 0 bytes spill loads")
		}
	}
	return out
}

// newKernel says whether fn is one of the training step's kernels.
func newKernel(fn string) bool {
	return strings.HasSuffix(fn, "_bwd") || strings.HasSuffix(fn, "_bwd_cl") || fn == "xb_xent" || fn == "xb_copy" || fn == "xb_zero"
}
