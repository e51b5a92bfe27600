package attention_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/attention"
)

// TestGPUAttentionGrad runs with XBENCH_REQUIRE_GPU=1 on a real GPU
// (scripts/h100-attn-bwd.sh): the backward kernels against the float64
// reference in every dtype at the suites' head dims and odd lengths (GQA,
// causal and not, kv_len apart from seq_len), then the backward's time at
// the issue-30 shape (b4 h32/8 s4096 d128 causal) of the mma.sync
// backward, logged as TFLOP/s by the workload's count (2.5 F). On an H100
// the default checks run the wgmma backward and the GradKeys ones the
// mma.sync backward. Every check also compares the rows' lse the forward
// saved (on an H100 the wgmma forward built with XW_LSE, except for the
// mma-sync variant's MMASync) with float64.
func TestGPUAttentionGrad(t *testing.T) {
	d := cudaDevice(t, "a GPU")
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
				s := attnSpec(1, 4, 2, 300, 300, dim, causal, dt)
				build := checkGrad(t, d, s)
				// On an H100 the 16-bit checks' forward is the wgmma kernel
				// saving the lse (checked against float64 by checkGrad).
				if d.RT.SM() == 90 && dt != "float32" && !strings.Contains(build, "forward xa_attention_wgmma") {
					t.Errorf("%s on sm_90: the backward's forward is not the wgmma kernel: %s", s, build)
				}
			}
		}
		checkGrad(t, d, attnSpec(2, 4, 1, 77, 203, 40, false, dt))
	}
	checkGrad(t, d, attnSpec(1, 2, 2, 130, 130, 256, true, "bfloat16"))
	cc := attnSpec(1, 4, 2, 300, 300, 128, true, "bfloat16")
	cc.CUDACores = true
	checkGrad(t, d, cc)
	for _, s := range []attention.Spec{attnSpec(1, 4, 2, 300, 300, 64, true, "bfloat16"), attnSpec(1, 4, 2, 300, 300, 128, false, "float16")} {
		s.GradMMASync = true // the mma.sync backward where the wgmma one is the default (after the wgmma forward's lse)
		checkGrad(t, d, s)
	}
	{ // the mma-sync variant: mma.sync forward and backward everywhere
		s := attnSpec(1, 4, 2, 203, 300, 128, false, "bfloat16")
		s.MMASync, s.GradMMASync = true, true
		if build := checkGrad(t, d, s); !strings.Contains(build, "forward xa_attention_mma") || !strings.Contains(build, "backward xa_attention_bwd_mma") {
			t.Errorf("%s (the mma-sync variant): ran %s", s, build)
		}
	}
	for _, causal := range []bool{false, true} { // the wider key tile
		s := attnSpec(1, 4, 2, 300, 300, 128, causal, "bfloat16")
		s.GradKeys = 128
		checkGrad(t, d, s)
		s.GradOff = 31 // the build before the GradOff changes, timed below
		checkGrad(t, d, s)
	}
	// The mma.sync backward with its changes turned off (GradOff bits, see
	// Spec) one after another, then its default (GradMMASync: on sm_90 the
	// wgmma backward is the default, TestGPUAttentionGradWGMMA times it).
	// The older builds cost an NVRTC compile each (seconds): only with
	// XBENCH_GRAD_ABLATION=1 (their times: results/h100-attn-bwd).
	type timed struct {
		keys, off int
	}
	runs := []timed{{0, 0}}
	if os.Getenv("XBENCH_GRAD_ABLATION") == "1" {
		runs = []timed{{128, 31}, {128, 30}, {128, 28}, {128, 24}, {128, 16}, {0, 0}}
	}
	for _, tc := range runs {
		s := attnSpec(4, 32, 8, 4096, 4096, 128, true, "bfloat16")
		s.GradKeys, s.GradOff, s.GradMMASync = tc.keys, tc.off, true
		tm, err := attention.TimeGrad(context.Background(), d, s, "backward", gpu.Calls{Warmup: 2, Repeats: 5}, 1)
		if err != nil {
			t.Fatalf("%s backward: %v", s, err)
		}
		ms := slices.Sorted(slices.Values(tm.SamplesMs))[len(tm.SamplesMs)/2]
		f := 4.0 * 4 * 32 * 4096 * 4096 * 128 / 2 * 2.5
		t.Logf("TIMING %s backward: median %.3f ms, %.1f TFLOP/s, compile %.0f ms; %s", s, ms, f/ms/1e9, tm.CompileMs, tm.Kernel)
	}
	{ // every NVRTC compile costs seconds: the mma.sync default's parts only
		s := attnSpec(4, 32, 8, 4096, 4096, 128, true, "bfloat16")
		s.GradMMASync = true
		parts, err := attention.TimeGradParts(context.Background(), d, s, 5, 1)
		if err != nil {
			t.Fatalf("%s parts: %v", s, err)
		}
		for _, p := range parts {
			t.Logf("TIMING %s backward part %s: median %.3f ms (warm L2)", s, p.Kernel, p.Ms)
		}
	}
}
