package attention

import (
	"fmt"
	"testing"

	"github.com/xbench/xbench/plugins/burnstyle-hip/cpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

var (
	_ fmt.Stringer = Spec{}
	_ fmt.Stringer = cpu.AttentionShape{}
)

// TestAttentionTiles states the kernels' shape assumptions for every head
// dim the workload allows: the thread layouts need BM a multiple of 16
// (both kernels), BN a multiple of 8 (CUDA cores: 8 lanes a row) or of 16
// (tensor cores: the k step of p.v), DP covering D, and shared memory
// within attnMaxSmem.
func TestAttentionTiles(t *testing.T) {
	for d := 1; d <= 256; d++ {
		c := attnTilesFor(d)
		if c.MMA || c.BM%16 != 0 || c.BN%8 != 0 || c.DP < d || c.DP%8 != 0 || c.smemBytes() > attnMaxSmem {
			t.Errorf("d=%d: CUDA-core tiles %+v, %d B shared", d, c, c.smemBytes())
		}
		for _, rows := range []int{0, 64, 128} {
			for _, kv := range []int{0, 32, 64} {
				// The kernel's 4 warps own BM/64 m-tiles of 16 rows each.
				m := mmaTilesFor(d, rows, kv)
				if !m.MMA || (m.BM != 64 && m.BM != 128) || m.BN%16 != 0 || m.DP < d || m.DP%16 != 0 || m.smemBytes() > attnMaxSmem ||
					(m.DP > 128 && m.BM != 64) || (m.DP <= 128 && ((rows != 0 && m.BM != rows) || (kv != 0 && m.BN != kv))) {
					t.Errorf("d=%d rows=%d kv=%d: tensor-core tiles %+v, %d B shared", d, rows, kv, m, m.smemBytes())
				}
			}
		}
	}
	s := Spec{AttentionShape: cpu.AttentionShape{HeadDim: 128}, Dtype: "bfloat16"}
	for _, tc := range []struct {
		dtype string
		cores bool
		sm    int
		mma   bool
	}{{"bfloat16", false, 90, true}, {"float16", false, 80, true}, {"bfloat16", false, 75, false},
		{"float16", true, 90, false}, {"float32", false, 90, false}} {
		s.Dtype, s.CUDACores = tc.dtype, tc.cores
		if got := s.tiles(tc.sm); got.MMA != tc.mma {
			t.Errorf("%s CUDACores=%v sm_%d: tensor cores %v, want %v", tc.dtype, tc.cores, tc.sm, got.MMA, tc.mma)
		}
	}
	r := &gpu.Runtime{ArchOpts: []string{"--gpu-architecture=sm_90", "-std=c++17"}}
	if r.SM() != 90 || (&gpu.Runtime{}).SM() != 0 {
		t.Errorf("sm() = %d from %v", r.SM(), r.ArchOpts)
	}
}
