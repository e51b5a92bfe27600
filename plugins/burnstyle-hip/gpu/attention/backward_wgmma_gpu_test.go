package attention_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/attention"
)

// TestGPUAttentionGradWGMMA runs with XBENCH_REQUIRE_GPU=1 on an H100
// (scripts/h100-attn-bwd.sh): the wgmma backward (the default there) against
// the float64 reference beyond TestGPUAttentionGrad's default checks:
// float16 at head dim 64, GQA and not, kv_len shorter and longer than
// seq_len (rows that see no key), 700 tokens, two ring depths, the older
// builds (GradWGMMAOff); then its time at the issue-30 shape (b4 h32/8
// s4096 d128 causal) beside the mma.sync backward's and its older builds',
// and its kernels' shares; "both" with the backward's forward on the
// wgmma kernel saving the lse (the default), on mma.sync (MMASync, as
// before) and in the overlapped schedule.
func TestGPUAttentionGradWGMMA(t *testing.T) {
	d := cudaDevice(t, "a GPU")
	probe := attnSpec(1, 1, 1, 64, 64, 128, false, "bfloat16")
	if tm, err := attention.TimeGrad(context.Background(), d, probe, "backward", gpu.Calls{Warmup: 0, Repeats: 1}, 1); err != nil {
		t.Fatalf("%s: %v", probe, err)
	} else if !strings.Contains(tm.Kernel, "xa_attention_bwd_wgmma") {
		if d.RT.SM() == 90 {
			t.Fatalf("%s runs %s on sm_90, not the wgmma backward", probe, tm.Kernel)
		}
		t.Skipf("%s runs %s here, not the wgmma backward (sm_90 is needed)", probe, tm.Kernel)
	}
	st3 := attnSpec(1, 4, 2, 300, 300, 128, true, "bfloat16")
	st3.GradStages, st3.GradWGMMAOff = 3, 5 // 3 stages fit beside dq by red.global only
	// The builds timed below, each once at a small shape (the default's
	// checks are TestGPUAttentionGrad's).
	var builds []attention.Spec
	for i, off := range []int{1, 2, 4, 5, 7} {
		s := attnSpec(1, 4, 2, 203, 300, []int{64, 128}[i%2], i%2 == 0, []string{"float16", "bfloat16"}[i%2])
		if s.Causal {
			s.KVLen = s.SeqLen
		}
		s.GradWGMMAOff = off
		builds = append(builds, s)
	}
	// TestGPUAttentionGrad's default checks (bfloat16 at 64 and 128,
	// float16 at 128, 300 tokens, causal and not) run this kernel too.
	for _, s := range []attention.Spec{
		attnSpec(1, 4, 2, 300, 300, 64, false, "float16"),
		attnSpec(2, 4, 1, 77, 203, 128, false, "bfloat16"), // kv_len > seq_len, GQA 4:1, partial tiles
		attnSpec(1, 4, 2, 203, 77, 64, true, "float16"),    // kv_len < seq_len: rows that see no key
		attnSpec(1, 2, 2, 150, 270, 128, true, "bfloat16"), // no GQA, causal bottom-right
		attnSpec(1, 2, 1, 700, 700, 128, true, "bfloat16"), // 6 key tiles, 11 query tiles a head
		st3,
	} {
		checkGrad(t, d, s)
	}
	for _, s := range builds {
		checkGrad(t, d, s)
	}
	// The forward's other schedule (the wgmma-overlap variant's, 96-key
	// tiles at head dim 128) saving the lse: rows that see no key, GQA.
	for _, s := range []attention.Spec{attnSpec(1, 4, 2, 203, 77, 64, true, "float16"), attnSpec(1, 4, 2, 300, 300, 128, true, "bfloat16")} {
		s.WGMMAOverlap = true
		if build := checkGrad(t, d, s); !strings.Contains(build, "overlapped") || !strings.Contains(build, "saves the rows' lse") {
			t.Errorf("%s overlap: the backward's forward is %s", s, build)
		}
	}
	// The mma.sync backward, then the wgmma builds: the default, each of
	// its changes off alone, 1 and 4 together, the first build (7), 3
	// stages beside red.global, the default again (the spread of one
	// build's times in this run), both phases.
	// "both" last: the default (the wgmma forward saving the lse), then
	// with the mma.sync forward (MMASync: what both ran before the wgmma
	// forward could save it), then the overlapped forward.
	type timed struct {
		phase, dt   string
		mmaSync     bool
		off, stages int
		fwdMMA      bool
		overlap     bool
	}
	for _, tc := range []timed{{"backward", "bfloat16", true, 0, 0, false, false}, {"backward", "bfloat16", false, 0, 0, false, false},
		{"backward", "bfloat16", false, 1, 0, false, false}, {"backward", "bfloat16", false, 2, 0, false, false}, {"backward", "bfloat16", false, 4, 0, false, false},
		{"backward", "bfloat16", false, 5, 0, false, false}, {"backward", "bfloat16", false, 7, 0, false, false}, {"backward", "bfloat16", false, 5, 3, false, false},
		{"backward", "bfloat16", false, 0, 0, false, false}, {"both", "bfloat16", false, 0, 0, false, false},
		{"both", "bfloat16", false, 0, 0, true, false}, {"both", "bfloat16", false, 0, 0, false, true}} {
		s := attnSpec(4, 32, 8, 4096, 4096, 128, true, tc.dt)
		s.GradMMASync, s.GradWGMMAOff, s.GradStages, s.MMASync, s.WGMMAOverlap = tc.mmaSync, tc.off, tc.stages, tc.fwdMMA, tc.overlap
		tm, err := attention.TimeGrad(context.Background(), d, s, tc.phase, gpu.Calls{Warmup: 3, Repeats: 15}, 1)
		if err != nil {
			t.Fatalf("%s %s: %v", s, tc.phase, err)
		}
		ms := slices.Sorted(slices.Values(tm.SamplesMs))[len(tm.SamplesMs)/2]
		f := 4.0 * 4 * 32 * 4096 * 4096 * 128 / 2 * map[string]float64{"backward": 2.5, "both": 3.5}[tc.phase]
		fwd := map[[2]bool]string{{false, false}: "", {true, false}: " fwd=mma-sync", {false, true}: " fwd=wgmma-overlap"}[[2]bool{tc.fwdMMA, tc.overlap}]
		t.Logf("TIMING %s%s %s: median %.3f ms, %.1f TFLOP/s, compile %.0f ms; %s", s, fwd, tc.phase, ms, f/ms/1e9, tm.CompileMs, tm.Kernel)
	}
	s := attnSpec(4, 32, 8, 4096, 4096, 128, true, "bfloat16")
	parts, err := attention.TimeGradParts(context.Background(), d, s, 5, 1)
	if err != nil {
		t.Fatalf("%s parts: %v", s, err)
	}
	for _, p := range parts {
		t.Logf("TIMING %s backward part %s: median %.3f ms (warm L2)", s, p.Kernel, p.Ms)
	}
}
