package attention

import (
	"strings"
	"testing"

	"github.com/xbench/xbench/plugins/burnstyle-hip/cpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// TestGradTiles states the backward kernels' shape assumptions for every
// head dim and which kernel each device and spec gets: the CUDA-core
// kernel's 128 threads split BN keys evenly (128 % BN, DP % (128 / BN)),
// within attnMaxSmem; the mma.sync kernel's head dim halves are whole
// 16-column pairs (DP % 32), and it runs only where a block gets its
// shared memory.
func TestGradTiles(t *testing.T) {
	for d := 1; d <= 256; d++ {
		c := gradTilesFor(d)
		if c.MMA || c.BM%16 != 0 || 128%c.BN != 0 || c.DP < d || c.DP%(128/c.BN) != 0 || c.smemBytes() > attnMaxSmem {
			t.Errorf("d=%d: CUDA-core tiles %+v, %d B shared", d, c, c.smemBytes())
		}
		if dp := mmaGradDP(d); dp < d || dp%32 != 0 {
			t.Errorf("d=%d: mma.sync head dim padded to %d", d, dp)
		}
	}
	// XG_MSMEM_BYTES at head dim 128: p^T, ds^T and ds (GradOff bit 4, the
	// older round trip) or p and ds.
	for _, tc := range []struct{ keys, off, want int }{{128, 4, 194560}, {128, 0, 175104}, {64, 31, 133120}, {64, 0, 123904}} {
		if got := (gradTiles{MMA: true, BM: 64, BN: tc.keys, DP: 128, Off: tc.off}).smemBytes(); got != tc.want {
			t.Errorf("%d keys, GradOff %d: %d bytes of shared memory, want %d", tc.keys, tc.off, got, tc.want)
		}
	}
	h100 := &gpu.Runtime{ArchOpts: []string{"--gpu-architecture=sm_90"}, MaxDynSmem: 227 << 10}
	a100 := &gpu.Runtime{ArchOpts: []string{"--gpu-architecture=sm_80"}, MaxDynSmem: 163 << 10}
	ada := &gpu.Runtime{ArchOpts: []string{"--gpu-architecture=sm_89"}, MaxDynSmem: 99 << 10}
	for _, tc := range []struct {
		r       *gpu.Runtime
		dtype   string
		d, keys int
		cores   bool
		mma     bool
		runKeys int
	}{{h100, "bfloat16", 128, 0, false, true, 128}, {h100, "bfloat16", 128, 64, false, true, 64}, {a100, "bfloat16", 128, 0, false, true, 64},
		{a100, "bfloat16", 128, 128, false, true, 64}, {h100, "float16", 20, 0, false, true, 128}, {h100, "bfloat16", 136, 0, false, false, 0},
		{h100, "float32", 128, 0, false, false, 0}, {h100, "bfloat16", 128, 0, true, false, 0}, {ada, "bfloat16", 128, 0, false, false, 0}} {
		s := Spec{AttentionShape: cpu.AttentionShape{HeadDim: tc.d}, Dtype: tc.dtype, CUDACores: tc.cores, GradKeys: tc.keys}
		got := s.gradTiles(tc.r)
		if got.MMA != tc.mma || (got.MMA && (got.smemBytes() > tc.r.MaxDynSmem || got.BN != tc.runKeys)) {
			t.Errorf("%s d=%d keys=%d CUDACores=%v sm_%d: %+v (%d B), want tensor cores %v with %d keys",
				tc.dtype, tc.d, tc.keys, tc.cores, tc.r.SM(), got, got.smemBytes(), tc.mma, tc.runKeys)
		}
	}
}

// TestGradForwardSelect states which forward the backward phases run (the
// one that saves the rows' lse): on sm_90 with tensor maps the wgmma kernel
// wherever the forward alone runs it, built with XW_LSE (the forward
// alone's build never is), in either schedule; mma.sync for the mma-sync
// variant (MMASync), other head dims, other generations and without tensor
// maps (the emulator); CUDA cores for float32. Beside the wgmma forward
// the backward's pre and dq come from gradAuxProgram: attention_bwd.cu
// alone under the wgmma backward, the whole mma.sync program under the
// mma.sync one (GradMMASync), whose kernel it holds.
func TestGradForwardSelect(t *testing.T) {
	base := Spec{AttentionShape: cpu.AttentionShape{Batch: 4, Heads: 32, KVHeads: 8, SeqLen: 4096, KVLen: 4096, HeadDim: 128, Causal: true}, Dtype: "bfloat16"}
	for _, tc := range []struct {
		name string
		edit func(*Spec)
		sm   int
		want string
	}{
		{"issue shape", func(*Spec) {}, 90, "xa_attention_wgmma"},
		{"overlap", func(s *Spec) { s.WGMMAOverlap = true }, 90, "xa_attention_wgmma"},
		{"float16 d64", func(s *Spec) { s.Dtype, s.HeadDim = "float16", 64 }, 90, "xa_attention_wgmma"},
		{"kv_len != seq_len", func(s *Spec) { s.KVLen, s.Causal = 77, false }, 90, "xa_attention_wgmma"},
		{"mma.sync backward", func(s *Spec) { s.GradMMASync = true }, 90, "xa_attention_wgmma"},
		{"mma-sync variant", func(s *Spec) { s.MMASync, s.GradMMASync = true, true }, 90, "xa_attention_mma"},
		{"d96", func(s *Spec) { s.HeadDim = 96 }, 90, "xa_attention_mma"},
		{"sm_80", func(*Spec) {}, 80, "xa_attention_mma"},
		{"float32", func(s *Spec) { s.Dtype = "float32" }, 90, "xa_attention_fwd"},
	} {
		s := base
		tc.edit(&s)
		g := gradSpec(s)
		ft := g.tiles(tc.sm)
		if got := ft.kernel(); got != tc.want {
			t.Errorf("%s (sm_%d): the backward's forward runs %s, want %s", tc.name, tc.sm, got, tc.want)
		}
		if ft.Stages == 0 {
			continue
		}
		_, defs := g.program(ft)
		_, plain := s.program(s.tiles(tc.sm))
		if !strings.Contains(strings.Join(defs, " "), "-DXW_LSE=1") || strings.Contains(strings.Join(plain, " "), "XW_LSE") {
			t.Errorf("%s: the backward's forward is built with %q, the forward alone with %q: want XW_LSE=1 in the first only", tc.name, defs, plain)
		}
		if s.WGMMAOverlap != strings.Contains(strings.Join(defs, " "), "-DXW_OVERLAP=1") {
			t.Errorf("%s: the backward's forward lost its schedule: %q", tc.name, defs)
		}
		aux, _ := g.gradAuxProgram(g.gradWGMMATiles())
		if !s.GradMMASync {
			if !strings.Contains(aux, "xa_attention_bwd_pre") || !strings.Contains(aux, "xa_attention_bwd_dq") || strings.Contains(aux, "xa_attention_bwd_mma") {
				t.Errorf("%s: the pre/dq program beside the wgmma forward and backward holds the wrong kernels", tc.name)
			}
		} else if aux, _ = g.gradAuxProgram(gradTiles{MMA: true}); !strings.Contains(aux, "xa_attention_bwd_mma") {
			t.Errorf("%s: the program beside the wgmma forward lacks the mma.sync backward", tc.name)
		}
	}
	// The emulator (sm_90 without the driver's tensor maps) keeps mma.sync.
	r := &gpu.Runtime{ArchOpts: []string{"--gpu-architecture=sm_90"}}
	if got := gradSpec(base).deviceTiles(r).kernel(); got != "xa_attention_mma" {
		t.Errorf("sm_90 without tensor maps: the backward's forward runs %s, want xa_attention_mma", got)
	}
}
