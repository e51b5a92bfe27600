package attention

import (
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
