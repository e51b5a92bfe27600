package attention_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/attention"
)

// TestWGMMANVRTC compiles the Hopper kernel with the real NVRTC for sm_90a
// (no GPU needed; test.sh names the venv's NVRTC) at both head dims and
// dtypes, and the debug builds the GPU check uses, and fails on a compile
// or ptxas error, a register spill, ptxas ignoring setmaxnreg (C7508), or
// a program that lacks the kernel (a guard that compiled it out).
func TestWGMMANVRTC(t *testing.T) {
	if os.Getenv("XBENCH_LIBNVRTC") == "" {
		t.Skip("set XBENCH_LIBNVRTC to a libnvrtc.so to compile the wgmma attention kernel for sm_90a")
	}
	t.Parallel()
	type build struct {
		dt     string
		dim    int
		causal bool
		debug  int
		vswap  bool
		ping   bool
		stages int
		serial bool
		keys   int
	}
	// The overlapped default at both head dims and dtypes, its debug,
	// ping-pong and 2-stage builds; the serial schedule's own paths (its
	// 128-key tiles, debug modes, ping-pong); the other key tiles the GPU
	// test times (64 overlapped, 96 serial).
	builds := []build{{"bfloat16", 128, true, 0, false, false, 0, false, 0}, {"float16", 128, false, 0, false, false, 0, false, 0},
		{"bfloat16", 64, false, 0, false, false, 0, false, 0}, {"float16", 64, true, 0, false, false, 0, false, 0},
		{"bfloat16", 128, false, 1, false, false, 0, false, 0}, {"bfloat16", 128, false, 2, false, false, 0, false, 0},
		{"bfloat16", 128, false, 2, true, false, 0, false, 0}, {"bfloat16", 128, true, 0, false, true, 0, false, 0},
		{"bfloat16", 128, true, 0, false, false, 2, false, 0},
		{"bfloat16", 128, true, 0, false, false, 0, true, 0}, {"float16", 64, true, 0, false, false, 0, true, 0},
		{"bfloat16", 128, false, 1, false, false, 0, true, 0}, {"float16", 128, false, 2, false, false, 0, true, 0},
		{"bfloat16", 128, true, 0, false, true, 0, true, 0},
		{"bfloat16", 128, true, 0, false, false, 0, false, 64}, {"bfloat16", 128, true, 0, false, false, 0, true, 96}}
	for _, b := range builds {
		s := attnSpec(1, 1, 1, 1, 1, b.dim, b.causal, b.dt)
		s.WGMMADebug, s.WGMMAVSwap, s.WGMMAPingPong, s.WGMMAStages, s.WGMMAOverlap, s.WGMMAKeyRows = b.debug, b.vswap, b.ping, b.stages, !b.serial, b.keys
		log, err := attention.CompileReport(s, "sm_90a")
		name := fmt.Sprintf("%s debug=%d vswap=%v pingpong=%v stages=%d serial=%v keys=%d", s, b.debug, b.vswap, b.ping, b.stages, b.serial, b.keys)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, log)
		}
		t.Logf("%s:\n%s", name, log)
		if !strings.Contains(log, "xa_attention_wgmma") {
			t.Errorf("%s: ptxas reports no xa_attention_wgmma (compiled out?):\n%s", name, log)
		}
		if strings.Contains(log, "C7508") || strings.Contains(log, "setmaxnreg ignored") {
			t.Errorf("%s: ptxas ignored setmaxnreg:\n%s", name, log)
		}
		// ptxas serializes the products (waits after each) when it cannot
		// prove the registers of one in flight untouched: the overlap lost.
		if strings.Contains(log, "C7510") || strings.Contains(log, "serialized") {
			t.Errorf("%s: ptxas serialized the wgmma products:\n%s", name, log)
		}
		if stores, loads := ptxasSpills(t, name, log); stores > 0 || loads > 0 {
			t.Errorf("%s spills %d/%d bytes:\n%s", name, stores, loads, log)
		}
	}
}
