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

// TestGradForwardNVRTC compiles the forward the backward phases run on an
// H100 (the wgmma kernel built with XW_LSE: it also writes the rows'
// log-sum-exp) with the real NVRTC for sm_90a, in both schedules (serial,
// the default, and the overlap of the wgmma-overlap variant, the one
// nearest its registers' limit) at both head dims, and the program of the
// backward's pre and dq kernels beside it; it fails on a compile or ptxas
// error, a spill, ptxas serializing the products or ignoring setmaxnreg,
// or a program without its kernels.
func TestGradForwardNVRTC(t *testing.T) {
	if os.Getenv("XBENCH_LIBNVRTC") == "" {
		t.Skip("set XBENCH_LIBNVRTC to a libnvrtc.so to compile the wgmma attention forward for sm_90a")
	}
	t.Parallel()
	for _, b := range []struct {
		dt      string
		dim     int
		overlap bool
	}{{"bfloat16", 128, false}, {"bfloat16", 128, true}, {"float16", 64, false}, {"float16", 64, true}} {
		s := attnSpec(1, 1, 1, 1, 1, b.dim, true, b.dt)
		s.WGMMAOverlap = b.overlap
		name := s.String() + map[bool]string{false: " serial", true: " overlap"}[b.overlap]
		log, err := attention.GradForwardCompileReport(s)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, log)
		}
		t.Logf("%s:\n%s", name, log)
		for _, k := range []string{"xa_attention_wgmma", "xa_attention_bwd_pre", "xa_attention_bwd_dq"} {
			if !strings.Contains(log, k) {
				t.Errorf("%s: ptxas reports no %s (compiled out?):\n%s", name, k, log)
			}
		}
		for _, bad := range []string{"C7508", "C7510", "C7512", "serialized", "setmaxnreg ignored"} {
			if strings.Contains(log, bad) {
				t.Errorf("%s: ptxas says %q:\n%s", name, bad, log)
			}
		}
		if stores, loads := ptxasSpills(t, name, log); stores > 0 || loads > 0 {
			t.Errorf("%s spills %d/%d bytes:\n%s", name, stores, loads, log)
		}
	}
}
