package attention_test

import (
	"os"
	"strings"
	"testing"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/attention"
)

// TestGradWGMMANVRTC compiles the Hopper backward with the real NVRTC for
// sm_90a (no GPU; test.sh names the venv's NVRTC): the default in bfloat16
// at head dim 128 and float16 at 64, the first build (GradWGMMAOff 7), 3
// stages beside red.global (the most shared memory), dv and dk after the
// barrier (bit 1); it fails on a compile or ptxas error, a spill, ptxas
// serializing the products (C7510, C7512), or a program without the
// kernel.
func TestGradWGMMANVRTC(t *testing.T) {
	if os.Getenv("XBENCH_LIBNVRTC") == "" {
		t.Skip("set XBENCH_LIBNVRTC to a libnvrtc.so to compile the wgmma attention backward for sm_90a")
	}
	t.Parallel()
	for _, b := range []struct {
		dt          string
		dim, stages int
		off         int
	}{{"bfloat16", 128, 0, 0}, {"float16", 64, 0, 0}, {"bfloat16", 128, 0, 7}, {"bfloat16", 128, 3, 5}, {"float16", 128, 0, 1}} {
		s := attnSpec(1, 1, 1, 1, 1, b.dim, true, b.dt)
		s.GradStages, s.GradWGMMAOff = b.stages, b.off
		name := s.String()
		log, err := attention.GradCompileReport(s)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, log)
		}
		t.Logf("%s:\n%s", name, log)
		if !strings.Contains(log, "xa_attention_bwd_wgmma") {
			t.Errorf("%s: ptxas reports no xa_attention_bwd_wgmma (compiled out?):\n%s", name, log)
		}
		if strings.Contains(log, "C7510") || strings.Contains(log, "C7512") || strings.Contains(log, "serialized") {
			t.Errorf("%s: ptxas serialized the wgmma products:\n%s", name, log)
		}
		if stores, loads := ptxasSpills(t, name, log); stores > 0 || loads > 0 {
			t.Errorf("%s spills %d/%d bytes:\n%s", name, stores, loads, log)
		}
	}
}
