package attention_test

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/attention"
)

// TestGPUAttentionGrad runs with XBENCH_REQUIRE_GPU=1 on a real GPU
// (scripts/h100-attn-bwd.sh): the backward kernels against the float64
// reference in every dtype at the suites' head dims and odd lengths (GQA,
// causal and not, kv_len apart from seq_len), then the backward's time at
// the issue-30 shape (b4 h32/8 s4096 d128 causal), logged as TFLOP/s by
// the workload's count (2.5 F).
func TestGPUAttentionGrad(t *testing.T) {
	if os.Getenv("XBENCH_REQUIRE_GPU") != "1" {
		t.Skip("needs a GPU: set XBENCH_REQUIRE_GPU=1")
	}
	d, err := gpu.Open("cuda")
	if err != nil {
		t.Fatalf("XBENCH_REQUIRE_GPU=1 but no CUDA GPU opened: %v", err)
	}
	defer d.Close()
	// 8 programs (NVRTC compiles): the suites' head dims in bfloat16 and
	// one padded dim per dtype; float32, CUDACores and head dim 256 run the
	// CUDA-core kernel.
	for _, dt := range []string{"bfloat16", "float16", "float32"} {
		dims := []int{128}
		if dt == "bfloat16" {
			dims = []int{64, 128}
		}
		for _, dim := range dims {
			for _, causal := range []bool{false, true} {
				checkGrad(t, d, attnSpec(1, 4, 2, 300, 300, dim, causal, dt))
			}
		}
		checkGrad(t, d, attnSpec(2, 4, 1, 77, 203, 40, false, dt))
	}
	checkGrad(t, d, attnSpec(1, 2, 2, 130, 130, 256, true, "bfloat16"))
	cc := attnSpec(1, 4, 2, 300, 300, 128, true, "bfloat16")
	cc.CUDACores = true
	checkGrad(t, d, cc)
	for _, causal := range []bool{false, true} { // the wider key tile
		s := attnSpec(1, 4, 2, 300, 300, 128, causal, "bfloat16")
		s.GradKeys = 128
		checkGrad(t, d, s)
		s.GradOff = 31 // the build before the GradOff changes, timed below
		checkGrad(t, d, s)
	}
	// The mma.sync backward with its changes turned off (GradOff bits, see
	// Spec) one after another, then the default, then the other builds.
	type timed struct {
		phase, dt string
		keys, off int
	}
	for _, tc := range []timed{{"backward", "bfloat16", 128, 31}, {"backward", "bfloat16", 128, 30}, {"backward", "bfloat16", 128, 28},
		{"backward", "bfloat16", 128, 24}, {"backward", "bfloat16", 128, 16},
		{"backward", "bfloat16", 0, 0}, {"backward", "float16", 0, 0}, {"both", "bfloat16", 0, 0}} {
		phase := tc.phase
		s := attnSpec(4, 32, 8, 4096, 4096, 128, true, tc.dt)
		s.GradKeys, s.GradOff = tc.keys, tc.off
		tm, err := attention.TimeGrad(context.Background(), d, s, phase, 2, 5, 1, false)
		if err != nil {
			t.Fatalf("%s %s: %v", s, phase, err)
		}
		ms := slices.Sorted(slices.Values(tm.SamplesMs))[len(tm.SamplesMs)/2]
		f := 4.0 * 4 * 32 * 4096 * 4096 * 128 / 2 * map[string]float64{"backward": 2.5, "both": 3.5}[phase]
		t.Logf("TIMING %s %s: median %.3f ms, %.1f TFLOP/s, compile %.0f ms; %s", s, phase, ms, f/ms/1e9, tm.CompileMs, tm.Kernel)
	}
	{ // every NVRTC compile costs seconds: the default's parts only
		s := attnSpec(4, 32, 8, 4096, 4096, 128, true, "bfloat16")
		parts, err := attention.TimeGradParts(context.Background(), d, s, 5, 1)
		if err != nil {
			t.Fatalf("%s parts: %v", s, err)
		}
		for _, p := range parts {
			t.Logf("TIMING %s backward part %s: median %.3f ms (warm L2)", s, p.Kernel, p.Ms)
		}
	}
}
